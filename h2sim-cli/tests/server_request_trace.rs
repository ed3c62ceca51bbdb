//! The server's REQUEST dump shows what the client sent, trailers included
//! (RFC 9110 §6.5): after the body, behind a `-- trailers` line, as the
//! client's RESPONSE dump shows a response's. Real processes, both
//! runtimes, HTTP/1.1 (a chunked body's trailer section, RFC 9112 §7.1.2)
//! and HTTP/2 (a final HEADERS frame, RFC 9113 §8.1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use server_support::{Server, h2_client};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// What the dump shows of a body `hello` and its trailers.
const DUMPED: &str = "  hello\n  -- trailers\n  x-checksum = abc\n";

/// A server answering POST /up, its trace on.
fn start(runtime: &str) -> Server {
    Server::with_rules(runtime, "-m POST -p /up -s 200 -t ok")
}

#[test]
fn http1_request_trailers_are_dumped() {
    for runtime in RUNTIMES {
        let server = start(runtime);
        let answer = server.exchange(
            b"POST /up HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n\
              5\r\nhello\r\n0\r\nx-checksum: abc\r\n\r\n",
        );
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200 "), "{runtime}: {answer}");
        let (code, out) = server.stop_stdout();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        assert!(out.contains(DUMPED), "{runtime}: {out}");
    }
}

#[test]
fn http2_request_trailers_are_dumped() {
    for runtime in RUNTIMES {
        let server = start(runtime);
        // One POST with body `hello` and a trailer field.
        let said = h2_client(
            server.authority(),
            "request POST /up data hello trailer x-checksum abc",
        );
        assert_eq!(said, "response 1 200\nended\n", "{runtime}");
        let (code, out) = server.stop_stdout();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        assert!(out.contains(DUMPED), "{runtime}: {out}");
    }
}
