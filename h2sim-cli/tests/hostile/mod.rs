//! Attacking peers over real sockets, and what the attacks are measured by:
//! the server's resident memory and a well-behaved client's latency.
// Each test crate uses a part of it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod peer;
pub mod rogue;
pub mod wire;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use peer::{HANG, Peer};

/// Resident memory of process `pid` in KiB (`VmRSS` of `/proc/PID/status`).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// A well-behaved HTTP/2 client on a connection of its own: one GET of
/// `path`, answered with 200 and ended. Panics if it is not; returns how
/// long the request took from connect to the response's end.
pub fn good_get(addr: SocketAddr, path: &str) -> Duration {
    let start = Instant::now();
    let mut peer = Peer::h2(addr, &[], true);
    peer.send(&wire::request(1, "GET", path, true)).unwrap();
    let seen = peer.wait(|s| s.ended(1));
    assert!(
        seen.ended(1),
        "the good client was not served: {seen:?} ({})",
        seen.end
    );
    assert_eq!(
        seen.statuses(),
        [(1, "200".to_owned())],
        "good client: {}",
        seen.outcome()
    );
    start.elapsed()
}

/// A plain TCP connection writing HTTP/1.1 (or nothing) by hand.
pub struct Raw {
    pub tcp: TcpStream,
}

impl Raw {
    pub fn connect(addr: SocketAddr) -> Raw {
        let tcp = TcpStream::connect(addr).expect("connect");
        tcp.set_nodelay(true).unwrap();
        tcp.set_read_timeout(Some(HANG)).unwrap();
        Raw { tcp }
    }

    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.tcp.write_all(bytes)
    }

    /// Everything the server writes until it closes (or [`HANG`] passes:
    /// then `closed` is false), as text.
    pub fn read_to_close(&mut self) -> (String, bool) {
        let (bytes, closed) = self.read_bytes_to_close();
        (String::from_utf8_lossy(&bytes).into_owned(), closed)
    }

    /// Everything the server writes until it closes, as is.
    pub fn read_bytes_to_close(&mut self) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        let closed = loop {
            match self.tcp.read(&mut chunk) {
                Ok(0) => break true,
                Ok(n) => out.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => break false,
                // A reset is a close too (the server dropped unread input).
                Err(_) => break true,
            }
        };
        (out, closed)
    }
}

/// One line of the closing table.
pub struct Row {
    pub attack: &'static str,
    pub outcome: String,
    pub rss_before_kib: u64,
    pub rss_after_kib: u64,
    pub good_latency: Option<Duration>,
}

/// The most an attack may grow the server by.
pub const RSS_BOUND_KIB: u64 = 64 * 1024;

impl Row {
    pub fn print(&self, runtime: &str) {
        let grown = self.rss_after_kib as i64 - self.rss_before_kib as i64;
        println!(
            "| {runtime} | {} | {} | {} -> {} KiB ({grown:+} KiB) | {} |",
            self.attack,
            self.outcome,
            self.rss_before_kib,
            self.rss_after_kib,
            self.good_latency
                .map(|l| format!("{:.1} ms", l.as_secs_f64() * 1000.0))
                .unwrap_or_else(|| "-".to_owned())
        );
    }
}
