//! How glommio connections begin and end: graceful shutdown with streams
//! open, the idle and TLS handshake timeouts, HTTP/1.1 pipelining past the
//! core's limit, a peer that does not read meeting backpressure, and when a
//! quiet connection gives back its queues.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use h2sim_glommio::{
    ClientOptions, DriverOptions, Executors, FetchRequest, HandlerApp, ListenerSpec, Reply,
    RunningServer, Server, ServerOptions, fetch,
};
use h2sim_proto::frame::{Frame, FrameDecoder};
use h2sim_proto::host::tls::{self, ClientAuth, Identity, ServerTls, TlsVersions};
use h2sim_proto::{Application, Config, Connection, Event, Reason, ResponseHead, StreamId};

fn certs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../certs")
}

fn server_tls() -> Arc<rustls::ServerConfig> {
    tls::server_config(&ServerTls {
        identity: Identity {
            chain: certs().join("server-ec.crt"),
            key: certs().join("server-ec.key"),
        },
        client_auth: ClientAuth::None,
        versions: TlsVersions::default(),
    })
    .unwrap()
}

/// Answers every request `delay` after it arrived, through the
/// application's own timer.
struct Delayed {
    delay: Duration,
    due: Vec<(Instant, StreamId)>,
}

impl Application for Delayed {
    fn on_event(&mut self, now: Instant, event: Event, _conn: &mut Connection) {
        if let Event::Request { stream, .. } = event {
            self.due.push((now + self.delay, stream));
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.due.iter().map(|(t, _)| *t).min()
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        let (ready, later) = self.due.drain(..).partition(|(t, _)| *t <= now);
        self.due = later;
        for (_, stream) in ready {
            let sent = conn.send_response(stream, ResponseHead::new(200), false);
            let _ = sent.and_then(|()| conn.send_data(stream, Bytes::from_static(b"late"), true));
        }
    }
}

fn options(config: Config, driver: DriverOptions) -> ServerOptions {
    ServerOptions {
        config,
        driver,
        handshake_timeout: Duration::from_millis(300),
        runtime: Executors::new(1),
        ..ServerOptions::default()
    }
}

/// A server on one plain loopback listener with `config`, not started.
fn bind_plain(config: Config) -> (SocketAddr, Server) {
    let spec = ListenerSpec::plain("127.0.0.1:0").unwrap();
    let server = Server::bind(vec![spec], options(config, DriverOptions::default())).unwrap();
    (server.local_addrs()[0].0, server)
}

fn start_hello(options: ServerOptions, tls: bool) -> (SocketAddr, RunningServer) {
    let spec = if tls {
        ListenerSpec::tls("127.0.0.1:0", server_tls()).unwrap()
    } else {
        ListenerSpec::plain("127.0.0.1:0").unwrap()
    };
    let server = Server::bind(vec![spec], options).unwrap();
    let addr = server.local_addrs()[0].0;
    let running = server
        .start(|_| HandlerApp::new(|req| Reply::new(200, req.head.path)))
        .unwrap();
    (addr, running)
}

/// Reads until the server closes, within `within`; returns what came.
fn read_to_close(sock: &mut TcpStream, within: Duration) -> Vec<u8> {
    sock.set_read_timeout(Some(within)).unwrap();
    let mut all = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match sock.read(&mut buf) {
            Ok(0) => return all,
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return all,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => panic!("the server did not close within {within:?}: {e}"),
        }
    }
}

/// Reads from `sock` until what came satisfies `done` (the server may not
/// close first), for at most `within`. A read a signal interrupts is
/// tried again: the executors' threads share the process's signals.
fn read_until(sock: &mut TcpStream, within: Duration, done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    sock.set_read_timeout(Some(within)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    while !done(&got) {
        match sock.read(&mut buf) {
            Ok(0) => panic!("the server closed early: {got:?}"),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => panic!("reading the answer: {e}"),
        }
    }
    got
}

/// The frames in `bytes`, which our server wrote; a frame that does not
/// decode, or output that ends inside one, fails the test, so a check for
/// a frame cannot pass on garbled output.
fn frames(bytes: &[u8]) -> Vec<Frame> {
    let mut rest = BytesMut::from(bytes);
    let mut decoder = FrameDecoder::default();
    let mut frames = Vec::new();
    loop {
        match decoder.decode(&mut rest) {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => break,
            Err(e) => panic!("undecodable frame after {frames:?}: {e}; output {bytes:02x?}"),
        }
    }
    assert!(rest.is_empty(), "output ends inside a frame: {bytes:02x?}");
    frames
}

#[test]
fn shutdown_lets_open_streams_finish() {
    let (addr, server) = bind_plain(Config::default());
    let shutdown = server.shutdown();
    let running = server
        .start(|_| Delayed {
            delay: Duration::from_millis(400),
            due: Vec::new(),
        })
        .unwrap();
    let client = std::thread::spawn(move || {
        let target = addr.to_string();
        let request = FetchRequest::get("http", &target, "/slow");
        let options = ClientOptions {
            runtime: Executors::new(1).into(),
            ..ClientOptions::default()
        };
        fetch(&target, options, 1, vec![request]).unwrap()
    });
    std::thread::sleep(Duration::from_millis(150));
    let stopping = Instant::now();
    shutdown.trigger();
    let stats = running.join();
    let results = client.join().unwrap();
    let record = results[0].as_ref().expect("the open stream was answered");
    assert_eq!(record.body, "late");
    assert_eq!(stats.accepted(), 1);
    assert!(stopping.elapsed() < Duration::from_secs(3));
}

#[test]
fn idle_connections_get_goaway_and_close() {
    let config = Config {
        idle_timeout: Some(Duration::from_millis(200)),
        ..Config::default()
    };
    let (addr, running) = start_hello(options(config, DriverOptions::default()), false);
    let mut sock = TcpStream::connect(addr).unwrap();
    sock.write_all(h2sim_proto::frame::PREFACE).unwrap();
    sock.write_all(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0]).unwrap();
    let started = Instant::now();
    let received = read_to_close(&mut sock, Duration::from_secs(3));
    assert!(started.elapsed() < Duration::from_secs(2));
    // After the SETTINGS: GOAWAY(NO_ERROR) (RFC 9113 §6.8), found among
    // decoded frames, not as bytes that might sit inside another frame.
    let frames = frames(&received);
    let goaway = frames
        .iter()
        .any(|f| matches!(f, Frame::GoAway(g) if g.reason == Reason::NO_ERROR));
    assert!(goaway, "no GOAWAY(NO_ERROR) in {frames:?}");
    running.shutdown().trigger();
    running.join();
}

#[test]
fn a_stalled_tls_handshake_times_out() {
    let (addr, running) = start_hello(options(Config::default(), DriverOptions::default()), true);
    let mut sock = TcpStream::connect(addr).unwrap();
    let started = Instant::now();
    read_to_close(&mut sock, Duration::from_secs(3));
    assert!(started.elapsed() < Duration::from_secs(2));
    running.shutdown().trigger();
    let stats = running.join();
    assert_eq!(stats.tls_failures(), 1);
    assert!(
        stats
            .last_tls_error()
            .is_some_and(|e| e.contains("timeout")),
        "{:?}",
        stats.last_tls_error()
    );
}

/// More pipelined requests than the HTTP/1.1 session reads ahead (16): the
/// held ones are answered without the client sending anything more.
#[test]
fn http1_pipelining_past_the_read_ahead() {
    let (addr, running) = start_hello(options(Config::default(), DriverOptions::default()), false);
    let mut sock = TcpStream::connect(addr).unwrap();
    let mut requests = Vec::new();
    for i in 0..40 {
        requests.extend_from_slice(format!("GET /r{i} HTTP/1.1\r\nhost: a\r\n\r\n").as_bytes());
    }
    requests.extend_from_slice(b"GET /last HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n");
    sock.write_all(&requests).unwrap();
    let received = String::from_utf8(read_to_close(&mut sock, Duration::from_secs(5))).unwrap();
    assert_eq!(received.matches("HTTP/1.1 200").count(), 41, "{received}");
    // The last response (its size known, so with content-length) closes
    // the connection.
    let last = received.rsplit("HTTP/1.1 200").next().unwrap();
    assert!(
        last.contains("connection: close\r\n") && last.ends_with("\r\n\r\n/last"),
        "{received}"
    );
    running.shutdown().trigger();
    running.join();
}

/// A client that pipelines requests for large bodies and never reads:
/// the server stops reading once its output backlog is full, and when its
/// writes stood still and it reads on, its core reads no further request
/// once 256 KiB of answers wait, so the client's writes stall long before
/// it has sent everything.
#[test]
fn a_peer_that_does_not_read_is_throttled() {
    let driver = DriverOptions {
        max_output_backlog: 64 * 1024,
    };
    let (addr, running) = start_hello(options(Config::default(), driver), false);
    let mut sock = TcpStream::connect(addr).unwrap();
    sock.set_write_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    // Each request asks for 64 KiB of path echoed back: long paths make
    // the answers large without a special service.
    let path = "/".to_owned() + &"p".repeat(60 * 1024);
    let request = format!("GET {path} HTTP/1.1\r\nhost: a\r\n\r\n");
    let mut written = 0usize;
    let limit = 256 << 20;
    // A write may take part of a request: the next one goes on from there.
    let mut rest: &[u8] = &[];
    while written < limit {
        if rest.is_empty() {
            rest = request.as_bytes();
        }
        match sock.write(rest) {
            Ok(n) => {
                written += n;
                rest = &rest[n..];
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break,
            Err(e) => panic!("write failed: {e}"),
        }
    }
    assert!(
        written < limit,
        "the server kept reading {written} bytes of requests"
    );
    drop(sock);
    running.shutdown().trigger();
    running.join();
}

/// Records the cause of every connection's end.
struct CauseLog(Arc<std::sync::Mutex<Vec<h2sim_proto::CloseCause>>>);

impl Application for CauseLog {
    fn on_event(&mut self, _now: Instant, event: Event, _conn: &mut Connection) {
        if let Event::Closed { cause, .. } = event {
            self.0.lock().unwrap().push(cause);
        }
    }
}

/// `Event::Closed` names the idle timeout on a server still detecting the
/// protocol, and the peer's close on an HTTP/2 one.
#[test]
fn closed_event_names_idle_timeout_and_peer_close() {
    use h2sim_proto::CloseCause;
    let config = Config {
        idle_timeout: Some(Duration::from_millis(200)),
        ..Config::default()
    };
    let (addr, server) = bind_plain(config);
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let shared = log.clone();
    let running = server.start(move |_| CauseLog(shared.clone())).unwrap();

    let mut idle = TcpStream::connect(addr).unwrap();
    read_to_close(&mut idle, Duration::from_secs(3));
    let mut closing = TcpStream::connect(addr).unwrap();
    closing.write_all(h2sim_proto::frame::PREFACE).unwrap();
    closing.write_all(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0]).unwrap();
    closing.shutdown(std::net::Shutdown::Write).unwrap();
    read_to_close(&mut closing, Duration::from_secs(3));
    running.shutdown().trigger();
    running.join();
    let causes = log.lock().unwrap().clone();
    assert_eq!(causes, [CloseCause::IdleTimeout, CloseCause::PeerClosed]);
}

/// When the application was told to trim, and when it answered.
#[derive(Default)]
struct Times {
    answered: Option<Instant>,
    trims: Vec<Instant>,
}

/// Answers every request with 32 KiB and notes when it trims.
struct TrimLog(Arc<std::sync::Mutex<Times>>);

impl Application for TrimLog {
    fn on_event(&mut self, _now: Instant, event: Event, conn: &mut Connection) {
        if let Event::Request { stream, .. } = event {
            conn.send_response(stream, ResponseHead::new(200), false)
                .unwrap();
            conn.send_data(stream, Bytes::from(vec![b'x'; 32 * 1024]), true)
                .unwrap();
            self.0.lock().unwrap().answered = Some(Instant::now());
        }
    }

    fn trim(&mut self) {
        self.0.lock().unwrap().trims.push(Instant::now());
    }
}

/// A connection that moved more than a little (here 32 KiB out) keeps its
/// queues through a short quiet spell and gives them back only after the
/// driver's delay (100 ms), so the next burst does not grow them again: the
/// bytes the transport moves itself count as traffic.
#[test]
fn a_busy_connection_trims_only_after_a_quiet_spell() {
    let (addr, server) = bind_plain(Config::default());
    let times = Arc::new(std::sync::Mutex::new(Times::default()));
    let shared = times.clone();
    let running = server.start(move |_| TrimLog(shared.clone())).unwrap();

    let mut sock = TcpStream::connect(addr).unwrap();
    sock.write_all(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        .unwrap();
    read_until(&mut sock, Duration::from_secs(3), |got| {
        got.ends_with(&[b'x'; 64]) && got.len() >= 32 * 1024
    });
    std::thread::sleep(Duration::from_millis(500));
    let times = std::mem::take(&mut *times.lock().unwrap());
    drop(sock);
    running.shutdown().trigger();
    running.join();

    let answered = times.answered.expect("the request was answered");
    let after: Vec<Duration> = times
        .trims
        .iter()
        .filter_map(|t| t.checked_duration_since(answered))
        .collect();
    assert!(
        !after.is_empty(),
        "no trim in the quiet spell after the answer"
    );
    assert!(
        after[0] >= Duration::from_millis(90),
        "trimmed {:?} after answering 32 KiB: at once, not after the delay",
        after[0]
    );
}

/// RFC 9112 §9.6: a client that asked to close sends nothing after that
/// request, so once it is answered the server closes at once, without
/// half-closing and waiting for the client's FIN (the linger, 500 ms at
/// most): a shutdown then finds nothing to wait for although the client
/// still holds its socket. A keep-alive client the server closes on (here
/// by the shutdown) may still send, so that connection still waits for it.
#[test]
fn a_closing_request_ends_the_connection_at_once() {
    let (addr, running) = start_hello(options(Config::default(), DriverOptions::default()), false);
    let mut held = TcpStream::connect(addr).unwrap();
    held.write_all(b"GET /bye HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n")
        .unwrap();
    let answer = read_to_close(&mut held, Duration::from_secs(5));
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    let stopping = Instant::now();
    running.shutdown().trigger();
    running.join();
    assert!(
        stopping.elapsed() < Duration::from_millis(400),
        "the connection waited for the client's FIN"
    );

    let (addr, running) = start_hello(options(Config::default(), DriverOptions::default()), false);
    let mut kept = TcpStream::connect(addr).unwrap();
    kept.write_all(b"GET /stay HTTP/1.1\r\nhost: a\r\n\r\n")
        .unwrap();
    read_until(&mut kept, Duration::from_secs(5), |got| {
        got.ends_with(b"/stay")
    });
    let stopping = Instant::now();
    running.shutdown().trigger();
    let waited = read_to_close(&mut kept, Duration::from_secs(5));
    assert!(waited.is_empty(), "{waited:?}");
    let joining = std::thread::spawn(move || running.join());
    std::thread::sleep(Duration::from_millis(300));
    assert!(!joining.is_finished(), "it waits for the client");
    drop(kept);
    joining.join().unwrap();
    assert!(stopping.elapsed() < Duration::from_secs(2));
}
