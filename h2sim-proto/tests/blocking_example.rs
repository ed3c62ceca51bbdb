//! The `blocking` example's server loop against more pipelined HTTP/1.1
//! requests (RFC 9112 §9.3.2) than the core reads ahead (16): the held
//! ones are released as earlier answers go out, and the loop must handle
//! them before it blocks in `read`, or client and server wait for each
//! other. And the example's orderly close on both sides (FIN, then read to
//! the peer's end): neither sees a reset.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../examples/blocking.rs"]
#[allow(dead_code)]
mod blocking;

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

#[test]
fn serves_40_pipelined_http1_requests_and_closes_cleanly() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        blocking::serve(sock)
    });
    let mut sock = TcpStream::connect(addr).unwrap();
    let mut requests = String::new();
    for i in 0..40 {
        requests.push_str(&format!("GET /r{i} HTTP/1.1\r\nhost: a\r\n\r\n"));
    }
    requests.push_str("GET /last HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n");
    sock.write_all(requests.as_bytes()).unwrap();
    // Not a timing check: a deadlocked loop fails here instead of hanging.
    sock.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => panic!(
                "after {} responses: {e}",
                String::from_utf8_lossy(&received)
                    .matches("HTTP/1.1 200")
                    .count()
            ),
        }
    }
    let received = String::from_utf8(received).unwrap();
    assert_eq!(received.matches("HTTP/1.1 200").count(), 41, "{received}");
    assert!(received.contains("you asked for /last"), "{received}");
    drop(sock);
    server.join().unwrap().unwrap();
}

/// The example as `cargo run --example blocking` runs it, repeated: the
/// server side used to see "Connection reset by peer" in about half the
/// runs, as the client closed with the server's last frames unread.
#[test]
fn the_example_ends_without_a_reset() {
    for _ in 0..20 {
        let summary = blocking::run(1_000).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            summary.starts_with("1000 of 1000 requests answered"),
            "{summary}"
        );
    }
}
