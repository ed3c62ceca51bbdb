//! h2simple's per-connection line on the server (`ADDR DISCONNECTED by
//! CAUSE: N tps (S secs for …)`): the real cause, and the connection's
//! lifetime from accept to close.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use server_support::{Server, client, run, text};

fn start(extra: &[&str]) -> Server {
    let mut args = vec![
        "server",
        "-S",
        "http://127.0.0.1:0",
        "-m",
        "GET",
        "-t",
        "ok",
    ];
    args.extend_from_slice(extra);
    Server::start(std::env::temp_dir().as_path(), &args, 1)
}

/// The seconds the line reports.
fn secs(line: &str) -> f64 {
    let (_, after) = line.split_once(" tps (").expect(line);
    after.split(' ').next().unwrap().parse().expect(line)
}

/// A connection that idles before its one request and after it lives that
/// long; the line counts from accept to close, not first to last request
/// (which gave "0.000 secs"), and says the peer closed it.
#[test]
fn lifetime_counts_from_accept_to_close() {
    let server = start(&[]);
    let addr = server.url("http").trim_start_matches("http://").to_owned();
    let mut tcp = TcpStream::connect(&addr).unwrap();
    let local = tcp.local_addr().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    tcp.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let mut buf = [0u8; 256];
    let n = tcp.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    // The server accepted before it answered, and sees the close after we
    // close: its lifetime is at least the time from here to the close.
    let answered = Instant::now();
    std::thread::sleep(Duration::from_millis(100));
    let held = answered.elapsed();
    drop(tcp);
    let line = server.wait_for(&format!("{local} DISCONNECTED"));
    assert!(line.contains("DISCONNECTED by peer close: "), "{line}");
    assert!(line.ends_with("for 1 reqs 1 rsps 0 unanswered)"), "{line}");
    // (The line rounds to milliseconds.)
    assert!(
        secs(&line) >= held.as_secs_f64() - 0.0005,
        "{line} vs {held:?}"
    );
    server.stop();
}

/// nghttp ends with GOAWAY (RFC 9113 §6.8): the line says so.
#[test]
fn a_goaway_from_the_client_is_the_cause() {
    let server = start(&[]);
    let (code, out) = run("nghttp", &[&format!("{}/x", server.url("http"))]);
    assert_eq!(code, Some(0), "{out}");
    let line = server.wait_for(" DISCONNECTED");
    assert!(line.contains("DISCONNECTED by GOAWAY received: "), "{line}");
    server.stop();
}

/// Sends `request` to the plain listener on a connection of its own and
/// reads until the server closes it: what the server answered, and the
/// connection's `DISCONNECTED` line.
fn closing_exchange(server: &Server, request: &[u8]) -> (Vec<u8>, String) {
    let mut tcp = TcpStream::connect(server.authority()).unwrap();
    let local = tcp.local_addr().unwrap();
    tcp.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer);
    (answer, server.wait_for(&format!("{local} DISCONNECTED")))
}

/// An HTTP/1.1 client that sends `connection: close` (RFC 9112 §9.6), and
/// an HTTP/1.0 one without keep-alive (§9.3), ask the server to close after
/// its answer: the line says what the client sent, not a GOAWAY, which
/// HTTP/1.1 does not have.
#[test]
fn an_http1_close_request_is_the_cause() {
    for runtime in ["tokio", "glommio"] {
        let server = Server::with_rules(runtime, "-m GET -t ok");
        for request in [
            &b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"[..],
            b"GET / HTTP/1.0\r\n\r\n",
        ] {
            let (answer, line) = closing_exchange(&server, request);
            assert!(answer.starts_with(b"HTTP/1.1 200"), "{runtime}");
            assert!(
                line.contains("DISCONNECTED by connection: close received: "),
                "{runtime}: {line}"
            );
            assert!(
                line.ends_with("for 1 reqs 1 rsps 0 unanswered)"),
                "{runtime}: {line}"
            );
        }
        server.stop();
    }
}

/// HTTP/1.1 has neither resets nor streams: its line counts the requests
/// left without their response, as the client's does, where HTTP/2's
/// counts its resets and streams. A request whose body the client cut
/// short by closing is one (RFC 9112 §8: incomplete).
#[test]
fn an_http1_line_counts_the_requests_left_unanswered() {
    for runtime in ["tokio", "glommio"] {
        let server = Server::with_rules(runtime, "-m POST -t ok");
        let mut tcp = TcpStream::connect(server.authority()).unwrap();
        let local = tcp.local_addr().unwrap();
        tcp.write_all(b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\npart")
            .unwrap();
        // The close comes after the bytes, which the server reads first.
        drop(tcp);
        let line = server.wait_for(&format!("{local} DISCONNECTED"));
        assert!(
            line.contains(" DISCONNECTED by peer close: ")
                && line.ends_with("for 1 reqs 0 rsps 1 unanswered)"),
            "{runtime}: {line}"
        );
        server.stop();
    }
}

/// The closing summary counts as the lines do: a server that served both
/// protocols says HTTP/2's resets (`rsts`) and HTTP/1.1's requests left
/// unanswered apart. Both were summed as resets (`2 resets`).
#[test]
fn the_summary_counts_resets_and_unanswered_requests_apart() {
    for runtime in ["tokio", "glommio"] {
        let server = Server::with_rules(runtime, "-m POST -t ok -m GET -p /slow/ --delay 5000");
        // HTTP/1.1: a body cut short by the client's close.
        let mut tcp = TcpStream::connect(server.authority()).unwrap();
        let local = tcp.local_addr().unwrap();
        tcp.write_all(b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\npart")
            .unwrap();
        drop(tcp);
        let line = server.wait_for(&format!("{local} DISCONNECTED"));
        assert!(line.ends_with(" 1 unanswered)"), "{runtime}: {line}");
        // HTTP/2: a request our client resets at its --timeout (CANCEL).
        let url = format!("{}/slow/x", server.url("http"));
        let out = client(&["-q", "-C", "1", "--timeout", "200ms", &url]);
        assert!(
            text(&out).contains("1 timeout"),
            "{runtime}: {}",
            text(&out)
        );
        server.wait_for(" 1 rsts 1 streams)");
        let report = server.stop_report();
        assert!(
            report.contains(" 1 resets, 1 unanswered, 0 refused, "),
            "{runtime}: {report}"
        );
    }
}

/// An HTTP/2 client that closes its connection while a request waits for
/// a rule's delay (curl's `--max-time`) loses that request: no reset ends
/// its stream, the connection's end does. The line and the summary count
/// it as unanswered, where they said `1 reqs 0 rsps 0 rsts` and
/// accounted for it nowhere.
#[test]
fn an_http2_request_cut_off_by_the_close_is_unanswered() {
    for runtime in ["tokio", "glommio"] {
        let server = Server::with_rules(runtime, "-m GET -p /slow/ --delay 5000 -t late");
        let url = format!("{}/slow/x", server.url("http"));
        let (code, out) = run(
            "curl",
            &["-s", "--http2-prior-knowledge", "--max-time", "0.3", &url],
        );
        assert_eq!(code, Some(28), "{runtime}: curl timed out: {out}");
        let line = server.wait_for(" DISCONNECTED");
        assert!(
            line.contains(" DISCONNECTED by peer close: ")
                && line.ends_with("for 1 reqs 0 rsps 0 rsts 1 streams) 1 unanswered"),
            "{runtime}: {line}"
        );
        let report = server.stop_report();
        assert!(
            report.contains(" 1 requests, 0 responses ")
                && report.contains(" 0 resets, 1 unanswered, 0 refused, "),
            "{runtime}: {report}"
        );
    }
}

/// An HTTP/1.1 request body that breaks a rule (a chunk size that is not
/// hex, RFC 9112 §7.1) is answered with 400 by the core, which then closes:
/// the line names the status the client got, as the REFUSED line does,
/// not the PROTOCOL_ERROR no HTTP/1.1 client sees.
#[test]
fn an_http1_body_error_is_named_by_its_status() {
    for runtime in ["tokio", "glommio"] {
        let server = Server::with_rules(runtime, "-m POST -t ok");
        let (answer, line) = closing_exchange(
            &server,
            b"POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n",
        );
        assert!(answer.starts_with(b"HTTP/1.1 400 "), "{runtime}");
        assert!(
            line.contains(" DISCONNECTED by error (400: invalid chunk (RFC 9112 §7.1)): "),
            "{runtime}: {line}"
        );
        server.stop();
    }
}

/// `--idle-timeout`: a connection that never sends a byte is closed by the
/// server, and the line says why.
#[test]
fn an_idle_connection_ends_by_idle_timeout() {
    for runtime in ["tokio", "glommio"] {
        let server = start(&[
            "--runtime",
            runtime,
            "--threads",
            "1",
            "--idle-timeout",
            "200ms",
        ]);
        let addr = server.url("http").trim_start_matches("http://").to_owned();
        let tcp = TcpStream::connect(&addr).unwrap();
        let local = tcp.local_addr().unwrap();
        let line = server.wait_for(&format!("{local} DISCONNECTED"));
        assert!(
            line.contains("DISCONNECTED by idle timeout: "),
            "{runtime}: {line}"
        );
        assert!(line.contains("0 reqs 0 rsps"), "{runtime}: {line}");
        drop(tcp);
        server.stop();
    }
}

/// SIGTERM: connections still open are closed by the server's shutdown,
/// each with its line.
#[test]
fn open_connections_end_by_server_shutdown() {
    for runtime in ["tokio", "glommio"] {
        let server = start(&["--runtime", runtime, "--threads", "1"]);
        let addr = server.url("http").trim_start_matches("http://").to_owned();
        let mut tcp = TcpStream::connect(&addr).unwrap();
        let local = tcp.local_addr().unwrap();
        tcp.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        let mut buf = [0u8; 256];
        let n = tcp.read(&mut buf).unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{runtime}");
        let (code, out) = server.stop();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{local} DISCONNECTED")))
            .unwrap_or_else(|| panic!("{runtime}: no line for {local}: {out}"));
        assert!(
            line.contains("DISCONNECTED by server shutdown: "),
            "{runtime}: {line}"
        );
    }
}

/// Runs `script` as a client of Python's h2 connected to `addr`, with
/// `path` for its request and its stream window set to `window`: the
/// script goes on from an initiated connection, `conn` on `sock`, and
/// the client then prints its own address and closes.
fn python_h2_client(window: u32, script: &str, addr: &str, path: &str) -> (Option<i32>, String) {
    let program = format!(
        r#"
import socket, sys
import h2.config, h2.connection, h2.events, h2.settings
host, port = sys.argv[1].rsplit(":", 1)
sock = socket.create_connection((host, int(port)))
sock.settimeout(20)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
conn.local_settings = h2.settings.Settings(
    client=True, initial_values={{h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: {window}}})
conn.initiate_connection()
{script}
print("%s:%d" % sock.getsockname())
sock.close()
"#
    );
    run("python3", &["-c", &program, addr, path])
}

/// Python's h2 as a client that asks for PATH with a stream window of 0,
/// so that no byte of the body may come, and closes once the response's
/// head is in; it prints its own address.
const STALLED_CLIENT: &str = r#"
conn.send_headers(1, [(":method", "GET"), (":scheme", "http"), (":authority", "x"),
                      (":path", sys.argv[2])], end_stream=True)
sock.sendall(conn.data_to_send())
answered = False
while not answered:
    data = sock.recv(65536)
    if not data:
        sys.exit("closed before the response")
    for event in conn.receive_data(data):
        answered = answered or isinstance(event, h2.events.ResponseReceived)
    sock.sendall(conn.data_to_send())
"#;

/// A response the client never let out (its window stayed 0) is counted
/// as given to the connection, and the line says that none of its body
/// left: the core tells the application when a response is queued, not
/// when its last frame went, so the bytes are what shows it. A response
/// read to its end says nothing more.
#[test]
fn a_body_the_client_never_let_out_is_said_unsent() {
    let server = Server::start(
        std::env::temp_dir().as_path(),
        &[
            "server",
            "-S",
            "http://127.0.0.1:0",
            "-m",
            "GET",
            "-p",
            "/big",
            "-e",
            "100k",
        ],
        1,
    );
    let addr = server.url("http").trim_start_matches("http://").to_owned();
    let (code, local) = python_h2_client(0, STALLED_CLIENT, &addr, "/big");
    assert_eq!(code, Some(0), "{local}");
    let line = server.wait_for(&format!("{} DISCONNECTED", local.trim()));
    assert!(
        line.contains("DISCONNECTED by peer close: ")
            && line.ends_with(
                "for 1 reqs 1 rsps 0 rsts 1 streams) 102400 of 102400 body bytes unsent"
            ),
        "{line}"
    );
    let (code, out) = run(
        "curl",
        &[
            "-sv",
            "-o",
            "/dev/null",
            "--http2-prior-knowledge",
            &format!("http://{addr}/big"),
        ],
    );
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = server.stop();
    assert_eq!(code, Some(0), "{out}");
    let lines: Vec<_> = out
        .lines()
        .filter(|l| l.contains(" DISCONNECTED "))
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[1].ends_with("for 1 reqs 1 rsps 0 rsts 1 streams)"),
        "{out}"
    );
    let report = server_support::server_report(&out);
    assert!(
        report.ends_with(" 0 unmatched, 102400 of 204800 body bytes unsent"),
        "{report}"
    );
}

/// Python's h2 as a client with a stream window of 100: it asks for PATH
/// (whose body stays held back past its first 100 bytes) and POSTs a
/// `content-length` of 2000, which `--request-body-limit 1k` refuses with
/// the core's own 413; it closes once that answer has ended and prints
/// its own address.
const WINDOW_100_CLIENT: &str = r#"
head = [(":scheme", "http"), (":authority", "x"), (":path", sys.argv[2])]
conn.send_headers(1, [(":method", "GET")] + head, end_stream=True)
conn.send_headers(3, [(":method", "POST")] + head + [("content-length", "2000")])
sock.sendall(conn.data_to_send())
done = set()
while done != {1, 3}:
    data = sock.recv(65536)
    if not data:
        sys.exit("closed before the answers")
    for event in conn.receive_data(data):
        if isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
            done.add(event.stream_id)
        elif isinstance(event, h2.events.DataReceived) and event.stream_id == 1:
            done.add(1)
    sock.sendall(conn.data_to_send())
"#;

/// The core's own 413 is written beside the bodies the rules gave, and
/// is not one of them: of a 100k body of which the window let 100 bytes
/// out, 102300 are unsent. The 413's 43 bytes were taken for the rule's
/// (102257 unsent).
#[test]
fn the_cores_own_answer_hides_no_unsent_bytes() {
    let server = Server::start(
        std::env::temp_dir().as_path(),
        &[
            "server",
            "-S",
            "http://127.0.0.1:0",
            "--request-body-limit",
            "1k",
            "-m",
            "GET",
            "-p",
            "/big",
            "-e",
            "100k",
        ],
        1,
    );
    let addr = server.url("http").trim_start_matches("http://").to_owned();
    let (code, local) = python_h2_client(100, WINDOW_100_CLIENT, &addr, "/big");
    assert_eq!(code, Some(0), "{local}");
    let line = server.wait_for(&format!("{} DISCONNECTED", local.trim()));
    assert!(
        line.ends_with(" 1 refused 102300 of 102400 body bytes unsent"),
        "{line}"
    );
    let report = server.stop_report();
    assert!(
        report.ends_with(", 102300 of 102400 body bytes unsent"),
        "{report}"
    );
}
