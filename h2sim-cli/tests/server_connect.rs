//! CONNECT against `h2sim server`: an extended CONNECT (RFC 8441, WebSocket
//! over HTTP/2) from Python's `h2`, a plain HTTP/2 CONNECT (RFC 9113
//! §8.5), and HTTP/1.1's (RFC 9110 §9.3.6) from a raw socket and curl's
//! proxy tunnel, on both runtimes: each is answered on its head, and a
//! 2xx makes a tunnel that echoes what the client sends.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::Command;
use std::time::Duration;

use server_support::{Server, text};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// `h2_connect.py` (Python's h2) against `authority` in `mode`
/// (`websocket` or `plain`): what it printed.
fn h2_connect(authority: &str, mode: &str) -> String {
    let out = Command::new("python3")
        .args(["-c", include_str!("python/h2_connect.py"), authority, mode])
        .output()
        .expect("python3 with h2 is needed (scripts/test.sh installs it)");
    assert!(out.status.success(), "h2_connect.py {mode}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// RFC 8441 §3-§5: with `-H enable_connect_protocol=1` the server says
/// ENABLE_CONNECT_PROTOCOL = 1, takes a WebSocket's extended CONNECT to
/// /chat by the `-m CONNECT -p /chat` rule, answers 200 without ending the
/// stream, and echoes the client's DATA until it ends its side; the
/// trace shows the :protocol. It was reset as malformed (an unknown
/// pseudo-header), and once taken, left unanswered until END_STREAM.
#[test]
fn a_websocket_over_http2_is_answered_and_echoed() {
    for runtime in RUNTIMES {
        let server = Server::with_rules(
            runtime,
            "-H enable_connect_protocol=1 -m CONNECT -p /chat -s 200",
        );
        let said = h2_connect(server.authority(), "websocket");
        assert_eq!(
            said, "settings enable_connect_protocol 1\nstatus 200\necho hello tunnel\nended\n",
            "{runtime}"
        );
        let (code, log) = server.stop();
        assert_eq!(code, Some(0), "{log}");
        assert!(log.contains("REQUEST["), "{log}");
        assert!(log.contains(":protocol = websocket"), "{runtime}: {log}");
        assert!(
            log.contains("rule 1: CONNECT /chat -> 200: 1 hits"),
            "{log}"
        );
    }
}

/// RFC 9113 §8.5: a plain CONNECT (`:authority` only) is matched by `-m
/// CONNECT` without a path and tunnels as the extended one does; one no
/// rule matches is answered 404 on its head, not left waiting for an
/// END_STREAM that a tunnel client never sends.
#[test]
fn a_plain_http2_connect_is_answered_on_its_head() {
    for runtime in RUNTIMES {
        let server = Server::with_rules(runtime, "-q -m CONNECT -s 200");
        let said = h2_connect(server.authority(), "plain");
        assert_eq!(
            said, "settings enable_connect_protocol 0\nstatus 200\necho hello tunnel\nended\n",
            "{runtime}"
        );
        drop(server);
        let server = Server::with_rules(runtime, "-q -m CONNECT -p /chat -s 200");
        let said = h2_connect(server.authority(), "plain");
        assert_eq!(
            said, "settings enable_connect_protocol 0\nstatus 404\n",
            "{runtime}"
        );
    }
}

/// Reads from `tcp` until `want` bytes came or it closed.
fn read_some(tcp: &mut TcpStream, want: usize) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < want {
        match tcp.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => panic!("reading the tunnel: {e} (after {got:?})"),
        }
    }
    got
}

/// RFC 9110 §9.3.6: an HTTP/1.1 CONNECT's 2xx says no Content-Length or
/// Transfer-Encoding (it said `content-length: 0`), and the connection is
/// then the tunnel: bytes, HTTP-looking or not, come back as sent, and the
/// client's close ends it.
#[test]
fn an_http1_connect_becomes_an_echo_tunnel() {
    const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\n\r\n";
    for runtime in RUNTIMES {
        let server = Server::with_rules(runtime, "-q -m CONNECT -s 200");
        let mut tcp = TcpStream::connect(server.authority()).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        tcp.write_all(b"CONNECT upstream:443 HTTP/1.1\r\nHost: upstream:443\r\n\r\n")
            .unwrap();
        assert_eq!(read_some(&mut tcp, HEAD.len()), HEAD, "{runtime}");
        let sent = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n\x00\xff";
        tcp.write_all(sent).unwrap();
        assert_eq!(read_some(&mut tcp, sent.len()), sent, "{runtime}");
        tcp.shutdown(Shutdown::Write).unwrap();
        // The end of the stream, not a reset or the read timeout.
        assert_eq!(
            tcp.read(&mut [0u8; 1]).unwrap(),
            0,
            "closed after {runtime}'s echo"
        );
    }
}

/// curl's proxy tunnel (`-p -x`) to the server as a proxy: the CONNECT's
/// 200 has no length to ignore (curl said "Ignoring Content-Length in
/// CONNECT 200 response"), the tunnel is established, and what curl sends
/// through it, its own GET, comes back, which curl takes for an HTTP/0.9
/// answer and refuses.
#[test]
fn curl_tunnels_through_an_http1_connect() {
    for runtime in RUNTIMES {
        let server = Server::with_rules(runtime, "-q -m CONNECT -s 200");
        let out = Command::new("curl")
            .args(["-sv", "--max-time", "20", "-p", "-x"])
            .arg(format!("http://{}", server.authority()))
            .arg("http://upstream.example/hello")
            .output()
            .expect("curl is needed (scripts/test.sh installs it)");
        let said = text(&out);
        assert!(
            said.contains("CONNECT tunnel established, response 200"),
            "{runtime}: {said}"
        );
        assert!(
            !said.contains("Ignoring Content-Length"),
            "{runtime}: {said}"
        );
        assert!(said.contains("Received HTTP/0.9"), "{runtime}: {said}");
    }
}

/// A tunnel client that sends and never reads (its receive window 0, never
/// opened): the echo waiting for it is bounded (1 MiB) and the stream is
/// reset with CANCEL (0x8), where it grew without bound.
#[test]
fn a_tunnel_client_that_never_reads_is_cut_off() {
    for runtime in RUNTIMES {
        let server = Server::with_rules(runtime, "-q -m CONNECT -s 200");
        let said = h2_connect(server.authority(), "deaf");
        assert_eq!(
            said, "settings enable_connect_protocol 0\nstatus 200\nreset 8\n",
            "{runtime}"
        );
        drop(server);
    }
}

/// What CONNECTs send before their answer (a rule's delay) is held for the
/// connection's tunnels together, at most 1 MiB: of three tunnels sent
/// 600 KiB each, the first is held and answered, the second and the third
/// would pass the bound and are reset (CANCEL). Each tunnel had 1 MiB of
/// its own, so all three were held, and 256 tunnels could hold 256 MiB.
#[test]
fn what_tunnels_hold_before_their_answers_is_bounded_per_connection() {
    for runtime in RUNTIMES {
        let server = Server::with_rules(runtime, "-q -m CONNECT -s 200 --delay 1000");
        let said = h2_connect(server.authority(), "early");
        assert_eq!(
            said, "settings enable_connect_protocol 0\nreset 3 8\nreset 5 8\nanswered 1\n",
            "{runtime}"
        );
        drop(server);
    }
}
