//! The server's REQUEST dump shows what the client sent, trailers included
//! (RFC 9110 §6.5): after the body, behind a `-- trailers` line, as the
//! client's RESPONSE dump shows a response's. Real processes, both
//! runtimes, HTTP/1.1 (a chunked body's trailer section, RFC 9112 §7.1.2)
//! and HTTP/2 (a final HEADERS frame, RFC 9113 §8.1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use server_support::{Server, text};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// What the dump shows of a body `hello` and its trailers.
const DUMPED: &str = "  hello\n  -- trailers\n  x-checksum = abc\n";

/// Python's h2 client: one POST with body `hello` and a trailer field,
/// reading until its stream ends.
const TRAILERS_CLIENT: &str = r#"
import socket, sys
import h2.config, h2.connection, h2.events

host, port = sys.argv[1].rsplit(":", 1)
sock = socket.create_connection((host, int(port)))
sock.settimeout(20)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
conn.initiate_connection()
conn.send_headers(1, [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
                      (":path", "/up")])
conn.send_data(1, b"hello")
conn.send_headers(1, [("x-checksum", "abc")], end_stream=True)
sock.sendall(conn.data_to_send())
ended = False
while not ended:
    data = sock.recv(65536)
    if not data:
        break
    for event in conn.receive_data(data):
        if isinstance(event, h2.events.StreamEnded):
            ended = True
    sock.sendall(conn.data_to_send())
print("ended" if ended else "cut")
sock.close()
"#;

fn start(runtime: &str) -> (Server, String) {
    let flags = [
        "-S",
        "http://127.0.0.1:0",
        "-m",
        "POST",
        "-p",
        "/up",
        "-s",
        "200",
        "-t",
        "ok",
    ];
    let server = Server::on_runtime(runtime, &std::env::temp_dir(), &flags, 1);
    let authority = server.url("http").trim_start_matches("http://").to_owned();
    (server, authority)
}

#[test]
fn http1_request_trailers_are_dumped() {
    for runtime in RUNTIMES {
        let (server, authority) = start(runtime);
        let mut tcp = TcpStream::connect(&authority).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        tcp.write_all(
            b"POST /up HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n\
              5\r\nhello\r\n0\r\nx-checksum: abc\r\n\r\n",
        )
        .unwrap();
        let mut answer = Vec::new();
        let _ = tcp.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200 "), "{runtime}: {answer}");
        let (code, out) = server.stop();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        assert!(out.contains(DUMPED), "{runtime}: {out}");
    }
}

#[test]
fn http2_request_trailers_are_dumped() {
    for runtime in RUNTIMES {
        let (server, authority) = start(runtime);
        let out = Command::new("python3")
            .args(["-c", TRAILERS_CLIENT, &authority])
            .output()
            .expect("python3 is needed (scripts/test.sh installs it)");
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success() && said.trim() == "ended",
            "{runtime}: {said}{}",
            text(&out)
        );
        let (code, out) = server.stop();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        assert!(out.contains(DUMPED), "{runtime}: {out}");
    }
}
