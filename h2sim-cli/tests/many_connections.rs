//! One `h2sim server` holds and serves 10,000 concurrent HTTP/1.1
//! keep-alive connections, or 10,000 idle HTTP/2 connections, on each
//! runtime (a fresh server for each). The connections come from this
//! process (a small tokio client, one request on each, every connection
//! kept open until all are answered), so a connection that is never
//! accepted or never answered fails the test, which a load tool's summary
//! would hide. The server side is checked too: it holds a descriptor per
//! connection at the peak, and its final report counts every connection
//! and every response. Printed: the server's RSS per connection (VmRSS
//! from /proc) and the kernel's `ListenOverflows` (/proc/net/netstat)
//! before and after each burst.
//!
//! The open-file limit: this process raises its soft limit to the hard one
//! (setrlimit), and `h2sim` raises its own at start, as a user running it
//! needs. Each phase is bounded in time (a hang fails, nothing is timed).
//! `.config/nextest.toml` runs these tests one at a time (about 1 GB each).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::net::SocketAddr;
use std::time::Duration;

use server_support::{Server, client, text};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CONNECTIONS: usize = 10_000;
/// Bounds a phase (connect, ask, answer every connection); only a hang
/// reaches it.
const PHASE_BOUND: Duration = Duration::from_secs(30);
/// Connects in progress at once: a burst far above the listen queue's
/// old 1024, below what the loopback handles without SYN retries.
const CONNECT_BURST: usize = 2_000;

#[derive(Debug, Clone, Copy)]
enum Protocol {
    Http1,
    Http2,
}

/// Sets this process's soft open-file limit (`None`: to the hard one);
/// children inherit it. Returns the hard limit.
fn set_open_files(soft: Option<u64>) -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let hard = getrlimit(Resource::Nofile).maximum;
    let current = soft.or(hard);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current,
            maximum: hard,
        },
    )
    .expect("set RLIMIT_NOFILE");
    hard
}

/// Raises this process's soft open-file limit to the hard one and checks
/// it holds the connections (plus the test's own descriptors).
fn raise_open_files() {
    let hard = set_open_files(None).unwrap_or(u64::MAX);
    assert!(
        hard >= CONNECTIONS as u64 + 256,
        "the hard open-file limit ({hard}) is below {CONNECTIONS} connections: raise it (ulimit -Hn)"
    );
}

/// A field of `/proc/<pid>/status`, in kB.
fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/<pid>/status")
}

/// Descriptors the process holds.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// The kernel's TcpExt ListenOverflows counter (machine-wide): SYNs
/// dropped because a listen queue was full.
fn listen_overflows() -> u64 {
    let netstat = std::fs::read_to_string("/proc/net/netstat").unwrap();
    let mut tcp_ext = netstat.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (tcp_ext.next().unwrap(), tcp_ext.next().unwrap());
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(name, _)| *name == "ListenOverflows")
        .and_then(|(_, v)| v.parse().ok())
        .expect("ListenOverflows in /proc/net/netstat")
}

/// One request on each protocol: HTTP/1.1 keep-alive, or HTTP/2 prior
/// knowledge (preface, empty SETTINGS, the ACK of the server's SETTINGS,
/// and `GET /` on stream 1 as HEADERS with END_STREAM: `:method GET`,
/// `:scheme http`, `:path /` indexed, `:authority localhost` a literal).
fn request(protocol: Protocol) -> Vec<u8> {
    match protocol {
        Protocol::Http1 => b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec(),
        Protocol::Http2 => {
            let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
            out.extend_from_slice(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&[0, 0, 0, 0x4, 0x1, 0, 0, 0, 0]);
            let block: &[u8] = b"\x82\x86\x84\x01\x09localhost";
            out.extend_from_slice(&[0, 0, block.len() as u8, 0x1, 0x5, 0, 0, 0, 1]);
            out.extend_from_slice(block);
            out
        }
    }
}

/// Whether `input` holds the whole answer to [`request`]: an HTTP/1.1 200
/// head and its `content-length` body, or an HTTP/2 frame ending stream 1
/// (panics on a RST_STREAM or GOAWAY instead).
fn answered(protocol: Protocol, input: &[u8]) -> bool {
    match protocol {
        Protocol::Http1 => {
            let Some(end) = input.windows(4).position(|w| w == b"\r\n\r\n") else {
                return false;
            };
            let head = String::from_utf8_lossy(&input[..end]).to_ascii_lowercase();
            assert!(head.starts_with("http/1.1 200"), "{head}");
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .expect("content-length");
            input.len() >= end + 4 + len
        }
        Protocol::Http2 => {
            let mut rest = input;
            while rest.len() >= 9 {
                let len = u32::from_be_bytes([0, rest[0], rest[1], rest[2]]) as usize;
                if rest.len() < 9 + len {
                    return false;
                }
                let (kind, flags) = (rest[3], rest[4]);
                let stream = u32::from_be_bytes(rest[5..9].try_into().unwrap()) & 0x7fff_ffff;
                assert!(
                    kind != 0x3 && kind != 0x7,
                    "RST_STREAM or GOAWAY: {rest:02x?}"
                );
                if stream == 1 && (kind == 0x0 || kind == 0x1) && flags & 0x1 != 0 {
                    return true;
                }
                rest = &rest[9 + len..];
            }
            false
        }
    }
}

/// Opens one connection, asks once, reads the whole answer and returns
/// the connection, still open.
async fn ask(addr: SocketAddr, protocol: Protocol) -> TcpStream {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.set_nodelay(true).unwrap();
    tcp.write_all(&request(protocol)).await.unwrap();
    let mut input = Vec::new();
    let mut buf = [0u8; 4096];
    while !answered(protocol, &input) {
        let n = tcp.read(&mut buf).await.unwrap();
        assert!(n > 0, "the server closed before answering");
        input.extend_from_slice(&buf[..n]);
    }
    tcp
}

/// [`CONNECTIONS`] connections to `addr`, each asked once and answered,
/// all open together; at most [`CONNECT_BURST`] connecting at a time.
fn hold(runtime: &tokio::runtime::Runtime, addr: SocketAddr, protocol: Protocol) -> Vec<TcpStream> {
    runtime.block_on(async move {
        let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(CONNECT_BURST));
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..CONNECTIONS {
            let gate = gate.clone();
            tasks.spawn(async move {
                let _permit = gate.acquire().await.unwrap();
                ask(addr, protocol).await
            });
        }
        tokio::time::timeout(PHASE_BOUND, async {
            let mut held = Vec::with_capacity(CONNECTIONS);
            while let Some(tcp) = tasks.join_next().await {
                held.push(tcp.expect("a connection task failed"));
            }
            held
        })
        .await
        .unwrap_or_else(|_| {
            panic!("{protocol:?}: not every connection was answered in {PHASE_BOUND:?}")
        })
    })
}

/// The counts in the server's final report line: (connections, responses).
fn reported(output: &str) -> (u64, u64) {
    let line = server_support::server_report(output);
    let words: Vec<&str> = line.split_whitespace().collect();
    let number = |name: &str| -> u64 {
        words
            .windows(2)
            .find(|w| w[1].trim_end_matches(',') == name)
            .and_then(|w| w[0].parse().ok())
            .unwrap_or_else(|| panic!("no `{name}` count in {line:?}"))
    };
    (number("connections"), number("responses"))
}

/// A fresh server per protocol, so each RSS figure is that protocol's
/// alone (memory freed by the other's connections would hide its cost).
fn many_connections(runtime_name: &str, protocol: Protocol) {
    raise_open_files();
    let server = Server::answering_hi(runtime_name, &["--threads", "2"]);
    let addr: SocketAddr = server
        .url("http")
        .strip_prefix("http://")
        .unwrap()
        .parse()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (rss_before, overflows_before) = (vm_rss_kib(server.pid()), listen_overflows());
    let held = hold(&runtime, addr, protocol);
    let fds = open_fds(server.pid());
    let rss = vm_rss_kib(server.pid());
    let overflows = listen_overflows();
    assert_eq!(held.len(), CONNECTIONS);
    assert!(
        fds >= CONNECTIONS,
        "{runtime_name} {protocol:?}: the server holds {fds} descriptors for {CONNECTIONS} connections"
    );
    println!(
        "{runtime_name} {protocol:?}: {CONNECTIONS} connections held and answered; server RSS \
         {rss_before} -> {rss} KiB ({:.1} KiB per connection); ListenOverflows {overflows_before} -> {overflows}",
        rss.saturating_sub(rss_before) as f64 / CONNECTIONS as f64
    );
    drop(held);
    drop(runtime);
    let (_, output) = server.stop();
    let (connections, responses) = reported(&output);
    assert_eq!(
        (connections, responses),
        (CONNECTIONS as u64, CONNECTIONS as u64),
        "{runtime_name} {protocol:?}: every connection accepted and answered, by the server's count:\n{output}"
    );
}

#[test]
fn tokio_holds_and_serves_10k_http1_keepalive_connections() {
    many_connections("tokio", Protocol::Http1);
}

#[test]
fn tokio_holds_and_serves_10k_idle_http2_connections() {
    many_connections("tokio", Protocol::Http2);
}

#[test]
fn glommio_holds_and_serves_10k_http1_keepalive_connections() {
    many_connections("glommio", Protocol::Http1);
}

#[test]
fn glommio_holds_and_serves_10k_idle_http2_connections() {
    many_connections("glommio", Protocol::Http2);
}

/// Connections a client run holds open at once in
/// [`a_client_holds_each_connection_for_the_cost_of_its_state`].
const CLIENT_CONNECTIONS: usize = 2_000;

/// The largest resident set of a child this process has waited for, in
/// KiB (`getrusage(RUSAGE_CHILDREN)`).
fn children_peak_rss_kib() -> u64 {
    // SAFETY: `getrusage` fills the zeroed `rusage` it is given.
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage
    };
    u64::try_from(usage.ru_maxrss).unwrap()
}

/// One client playing 2,000 clients at once (`-S 2000`, a request in
/// flight on each) holds each connection for what its state costs: a
/// connection slot used to keep five latency histograms of its own, about
/// 950 KB, so this run peaked near 1.9 GB (h2load's `-c 2000`: about 60
/// MB). Budget: 64 KiB a connection, the run's peak resident set over all
/// of them (about 25 KiB on tokio and glommio when written). The server
/// is the only other child and is waited for after the reading.
#[test]
fn a_client_holds_each_connection_for_the_cost_of_its_state() {
    raise_open_files();
    let server = Server::answering_hi("tokio", &[]);
    let url = format!("{}/x", server.url("http"));
    for runtime in ["tokio", "glommio"] {
        let connections = CLIENT_CONNECTIONS.to_string();
        let requests = (2 * CLIENT_CONNECTIONS).to_string();
        let args = ["-q", "--runtime", runtime, "--threads", "1"];
        let args = [
            &args[..],
            &["-S", &connections, "-P", "1", "-C", &requests, &url],
        ]
        .concat();
        let out = client(&args);
        let t = text(&out);
        assert!(out.status.success(), "{runtime}: {t}");
        assert!(
            t.contains(&format!("connections: {connections} made")),
            "{runtime}: {t}"
        );
        // The largest of the runs so far: each must stay in the budget.
        let peak = children_peak_rss_kib();
        println!(
            "{runtime}: {connections} client connections, peak RSS at most {peak} KiB ({:.1} KiB a connection)",
            peak as f64 / CLIENT_CONNECTIONS as f64
        );
        assert!(
            peak < 64 * CLIENT_CONNECTIONS as u64,
            "{runtime}: peak RSS {peak} KiB for {connections} connections"
        );
    }
    server.stop();
}

/// `h2sim` raises its soft open-file limit to the hard one at start: a
/// server started with the common soft limit of 1024 (inherited from this
/// process, lowered for the purpose) may still hold 10,000 connections.
#[test]
fn the_server_raises_its_open_file_limit_to_the_hard_limit() {
    let hard = set_open_files(Some(1024));
    let server = Server::answering_hi("tokio", &[]);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.pid())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let soft = line.split_whitespace().nth(3).unwrap();
    let hard_shown = hard.map_or("unlimited".to_owned(), |h| h.to_string());
    assert_eq!(soft, hard_shown, "{line}");
    server.stop();
}
