//! The third-runtime example (`examples/mio_server.rs`: mio around the
//! core's `host::Driver`) against real clients: curl over HTTP/2 with
//! prior knowledge (RFC 9113 §3.3) and over HTTP/1.1 (RFC 9112), the
//! server telling them apart by the first bytes, and h2load with several
//! connections and streams in flight.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../examples/mio_server.rs"]
#[allow(dead_code)]
mod mio_server;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::time::Duration;

/// Starts the example's server on a free port; its thread ends with the
/// test process.
fn start() -> SocketAddr {
    let listener = mio::net::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || mio_server::serve(listener));
    addr
}

fn curl(addr: SocketAddr, version: &str) -> (String, String) {
    let out = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "20",
            version,
            "-w",
            "%{http_version} %{http_code}",
        ])
        .arg(format!("http://{addr}/a"))
        .output()
        .expect("curl is installed");
    assert!(out.status.success(), "curl {version}: {out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let (body, status) = text.split_at(text.find("hello\n").map_or(0, |i| i + 6));
    (body.to_owned(), status.to_owned())
}

#[test]
fn curl_h2c_prior_knowledge_is_answered_over_http2() {
    let addr = start();
    assert_eq!(
        curl(addr, "--http2-prior-knowledge"),
        ("hello\n".to_owned(), "2 200".to_owned())
    );
}

#[test]
fn curl_http1_is_answered_over_http1() {
    let addr = start();
    assert_eq!(
        curl(addr, "--http1.1"),
        ("hello\n".to_owned(), "1.1 200".to_owned())
    );
}

/// Runs h2load with `args` and checks that all `n` requests got a 2xx.
fn h2load(args: &[&str], n: usize) {
    let addr = start();
    let out = Command::new("h2load")
        .args(args)
        .args(["-n", &n.to_string(), "-T", "20"])
        .arg(format!("http://{addr}/"))
        .output()
        .expect("h2load is installed");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "h2load: {text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("requests:"))
        .unwrap_or_else(|| panic!("no summary in {text}"));
    assert!(
        line.contains(&format!("{n} succeeded, 0 failed, 0 errored, 0 timeout")),
        "{line}"
    );
    let codes = text
        .lines()
        .find(|l| l.starts_with("status codes:"))
        .unwrap();
    assert!(codes.contains(&format!("{n} 2xx")), "{codes}");
}

#[test]
fn h2load_gets_every_answer() {
    h2load(&["-c", "2", "-m", "10"], 1000);
}

/// More pipelined HTTP/1.1 requests (RFC 9112 §9.3.2) than the core reads
/// ahead: the held ones are read once answers went out, within the same
/// `Driver::pump`, though no new readiness event comes for them.
#[test]
fn h2load_pipelined_http1_gets_every_answer() {
    h2load(&["--h1", "-c", "1", "-m", "40"], 40);
}

/// The types of the HTTP/2 frames in `wire` (RFC 9113 §4.1), up to the
/// first one cut short.
fn frame_types(wire: &[u8]) -> Vec<u8> {
    let mut types = Vec::new();
    let mut at = 0;
    while let Some(head) = wire.get(at..at + 9) {
        types.push(head[3]);
        at += 9 + (usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]));
    }
    types
}

/// A server whose connection ends while its peer may still send closes
/// its side first (FIN) and reads the peer's rest, as the driver's docs
/// say: dropped with input unread, the socket made the kernel answer with
/// RST (RFC 9112 §9.6), which can destroy the last bytes before the peer
/// reads them. A client whose first frame is not SETTINGS (RFC 9113 §3.4)
/// and that goes on sending gets the GOAWAY and then an orderly end of
/// stream, where it got a reset.
#[test]
fn a_connection_that_ends_with_input_coming_closes_without_a_reset() {
    let addr = start();
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut writer = tcp.try_clone().unwrap();
    // The preface, then zeros: a DATA frame on stream 0 where the SETTINGS
    // must be, and a mebibyte more behind it. Write errors are the reset.
    let sending = std::thread::spawn(move || {
        let mut wire = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        wire.resize(wire.len() + (1 << 20), 0);
        let _ = writer.write_all(&wire);
    });
    let mut got = Vec::new();
    let end = loop {
        let mut buf = [0; 4096];
        match tcp.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => break Err(e),
        }
    };
    sending.join().unwrap();
    assert!(end.is_ok(), "{end:?} after {} bytes", got.len());
    const GOAWAY: u8 = 0x7;
    assert!(frame_types(&got).contains(&GOAWAY), "{got:?}");
}
