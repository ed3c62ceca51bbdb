//! How connections end: graceful shutdown with streams in flight, the
//! drain deadline, the idle timeout, and a client that loses its
//! connection (reporting the lost request, reconnecting when asked), and
//! when a quiet connection gives back its queues.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use h2sim_proto::{Application, Config, Connection, Event, Reason, ResponseHead, StreamId};
use h2sim_tokio::{
    ClientOptions, FetchRequest, ListenerSpec, Reconnect, RequestError, Server, ServerOptions,
    connect, fetch,
};

/// Answers every request after `delay` (the application's own timer), and
/// aborts the connection on `/die`.
struct Delayed {
    delay: Duration,
    due: Vec<(Instant, StreamId)>,
}

impl Application for Delayed {
    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        if let Event::Request { stream, head, .. } = event {
            if head.path == "/die" {
                conn.abort(Reason::INTERNAL_ERROR);
            } else {
                self.due.push((now + self.delay, stream));
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.due.iter().map(|(t, _)| *t).min()
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        self.due.retain(|&(t, stream)| {
            if t > now {
                return true;
            }
            if conn
                .send_response(stream, ResponseHead::new(200), false)
                .is_ok()
            {
                let _ = conn.send_data(stream, Bytes::from_static(b"late"), true);
            }
            false
        });
    }
}

struct Running {
    addr: std::net::SocketAddr,
    shutdown: h2sim_tokio::Shutdown,
    stats: std::sync::Arc<h2sim_tokio::ServerCounters>,
    task: tokio::task::JoinHandle<()>,
}

/// A server on a loopback port of its own with `config`.
async fn plain_server(config: Config) -> Server {
    let options = ServerOptions {
        config,
        ..ServerOptions::default()
    };
    Server::bind(vec![ListenerSpec::plain("127.0.0.1:0").unwrap()], options)
        .await
        .unwrap()
}

async fn delayed_server(delay: Duration, config: Config) -> Running {
    let server = plain_server(config).await;
    Running {
        addr: server.local_addrs()[0].0,
        shutdown: server.shutdown(),
        stats: server.stats(),
        task: tokio::spawn(server.run(move |_| Delayed {
            delay,
            due: Vec::new(),
        })),
    }
}

fn get(addr: std::net::SocketAddr, path: &str) -> FetchRequest {
    FetchRequest::get("http", &addr.to_string(), path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_lets_open_streams_finish() {
    let server = delayed_server(Duration::from_millis(400), Config::default()).await;
    let addr = server.addr;
    let client = tokio::spawn(async move {
        fetch(
            &addr.to_string(),
            ClientOptions::default(),
            1,
            vec![get(addr, "/")],
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let asked = Instant::now();
    server.shutdown.trigger();
    let results = client.await.unwrap().unwrap();
    let record = results[0].as_ref().expect("the open stream finished");
    assert_eq!(record.body, "late");
    tokio::time::timeout(Duration::from_secs(5), server.task)
        .await
        .expect("the server stopped after its last stream")
        .unwrap();
    assert!(asked.elapsed() < Duration::from_secs(3));
    // The listeners are gone.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_deadline_cuts_what_is_left() {
    let config = Config {
        drain_timeout: Duration::from_millis(300),
        ..Config::default()
    };
    let server = delayed_server(Duration::from_secs(30), config).await;
    let addr = server.addr;
    let client = tokio::spawn(async move {
        fetch(
            &addr.to_string(),
            ClientOptions::default(),
            1,
            vec![get(addr, "/")],
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.shutdown.trigger();
    tokio::time::timeout(Duration::from_secs(5), server.task)
        .await
        .expect("the server gave up on the stream at the deadline")
        .unwrap();
    let results = client.await.unwrap().unwrap();
    assert!(
        matches!(results[0], Err(RequestError::ConnectionLost(_))),
        "{:?}",
        results[0]
    );
}

/// Records what its connection tells it, and sends nothing.
#[derive(Default)]
struct Quiet {
    events: Vec<Event>,
}

impl Application for Quiet {
    fn on_event(&mut self, _now: Instant, event: Event, _conn: &mut Connection) {
        self.events.push(event);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connection_is_closed() {
    let config = Config {
        idle_timeout: Some(Duration::from_millis(300)),
        ..Config::default()
    };
    let server = delayed_server(Duration::ZERO, config).await;
    let started = Instant::now();
    let outcomes = tokio::time::timeout(
        Duration::from_secs(5),
        connect(&server.addr.to_string(), ClientOptions::default(), |_| {
            Quiet::default()
        }),
    )
    .await
    .expect("the idle connection was closed")
    .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    let outcome = &outcomes[0];
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let events = &outcome.app.as_ref().unwrap().events;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::GoAway { reason, .. } if *reason == Reason::NO_ERROR)),
        "{events:?}"
    );
    server.shutdown.trigger();
    server.task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_request_is_reported_and_the_connection_replaced() {
    let server = delayed_server(Duration::ZERO, Config::default()).await;
    let addr = server.addr;
    let requests = vec![
        get(addr, "/a"),
        get(addr, "/die"),
        get(addr, "/b"),
        get(addr, "/c"),
    ];
    let options = ClientOptions {
        reconnect: Some(Reconnect {
            max_attempts: 3,
            delay: Duration::from_millis(50),
        }),
        ..ClientOptions::default()
    };
    let results = fetch(&addr.to_string(), options, 1, requests)
        .await
        .unwrap();
    assert!(results[0].is_ok(), "{:?}", results[0]);
    assert!(
        matches!(results[1], Err(RequestError::ConnectionLost(_))),
        "{:?}",
        results[1]
    );
    assert!(results[2].is_ok(), "{:?}", results[2]);
    assert!(results[3].is_ok(), "{:?}", results[3]);
    assert_eq!(server.stats.accepted(), 2, "one replacement connection");
    server.shutdown.trigger();
    server.task.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_reconnect_every_request_still_gets_a_result() {
    let server = delayed_server(Duration::ZERO, Config::default()).await;
    let addr = server.addr;
    let requests = vec![get(addr, "/a"), get(addr, "/die"), get(addr, "/b")];
    let results = fetch(&addr.to_string(), ClientOptions::default(), 1, requests)
        .await
        .unwrap();
    assert!(results[0].is_ok(), "{:?}", results[0]);
    assert!(
        matches!(results[1], Err(RequestError::ConnectionLost(_))),
        "{:?}",
        results[1]
    );
    match &results[2] {
        Err(RequestError::NotSent { why }) => assert!(why.contains("GOAWAY"), "{why}"),
        other => panic!("{other:?}"),
    }
    server.shutdown.trigger();
    server.task.await.unwrap();
}

/// Records the cause of every connection's end.
struct CauseLog(std::sync::Arc<std::sync::Mutex<Vec<h2sim_proto::CloseCause>>>);

impl Application for CauseLog {
    fn on_event(&mut self, _now: Instant, event: Event, _conn: &mut Connection) {
        if let Event::Closed { cause, .. } = event {
            self.0.lock().unwrap().push(cause);
        }
    }
}

/// `Event::Closed` names the idle timeout on a server still detecting the
/// protocol, and the peer's close on an HTTP/2 one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_event_names_idle_timeout_and_peer_close() {
    use h2sim_proto::CloseCause;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = plain_server(Config {
        idle_timeout: Some(Duration::from_millis(200)),
        ..Config::default()
    })
    .await;
    let addr = server.local_addrs()[0].0;
    let shutdown = server.shutdown();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let shared = log.clone();
    let task = tokio::spawn(server.run(move |_| CauseLog(shared.clone())));

    let mut sink = Vec::new();
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::timeout(Duration::from_secs(3), idle.read_to_end(&mut sink))
        .await
        .expect("the idle connection was closed")
        .unwrap();
    let mut closing = tokio::net::TcpStream::connect(addr).await.unwrap();
    closing
        .write_all(h2sim_proto::frame::PREFACE)
        .await
        .unwrap();
    closing
        .write_all(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0])
        .await
        .unwrap();
    closing.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(3), closing.read_to_end(&mut sink))
        .await
        .expect("the server closed after the client")
        .unwrap();
    shutdown.trigger();
    task.await.unwrap();
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
struct TrimLog(std::sync::Arc<std::sync::Mutex<Times>>);

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
/// queues through a short quiet spell and gives them back after the
/// driver's delay (100 ms), not at once and not only at the idle timeout:
/// the loop must arm the trim deadline although its timer is armed for
/// the later idle deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_connection_trims_only_after_a_quiet_spell() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = plain_server(Config {
        idle_timeout: Some(Duration::from_secs(30)),
        ..Config::default()
    })
    .await;
    let addr = server.local_addrs()[0].0;
    let shutdown = server.shutdown();
    let times = std::sync::Arc::new(std::sync::Mutex::new(Times::default()));
    let shared = times.clone();
    let task = tokio::spawn(server.run(move |_| TrimLog(shared.clone())));

    let mut sock = tokio::net::TcpStream::connect(addr).await.unwrap();
    sock.write_all(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    while !got.ends_with(&[b'x'; 64]) || got.len() < 32 * 1024 {
        let n = tokio::time::timeout(Duration::from_secs(3), sock.read(&mut buf))
            .await
            .expect("the answer came")
            .unwrap();
        assert!(n > 0, "the server closed early");
        got.extend_from_slice(&buf[..n]);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let times = std::mem::take(&mut *times.lock().unwrap());
    drop(sock);
    shutdown.trigger();
    task.await.unwrap();

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

/// Sends `request` on a new connection and reads until the server closes
/// its side; the socket stays open (the client sends no FIN).
async fn exchange_to_eof(addr: std::net::SocketAddr, request: &[u8]) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer))
        .await
        .expect("the server closed its side")
        .unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    tcp
}

/// RFC 9112 §9.6: a client that asked to close sends nothing after that
/// request, so once it is answered the server closes at once, without
/// half-closing and waiting for the client's FIN (the linger, 500 ms at
/// most): the connection is over while the client still holds its
/// socket. A keep-alive client the server closes on (here by shutdown)
/// may still send, so that connection still waits for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closing_request_ends_the_connection_at_once() {
    let server = delayed_server(Duration::ZERO, Config::default()).await;
    let _held = exchange_to_eof(
        server.addr,
        b"GET / HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n",
    )
    .await;
    let closing = Instant::now();
    while server.stats.active() > 0 {
        assert!(
            closing.elapsed() < Duration::from_millis(400),
            "the connection waited for the client's FIN"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    let server = delayed_server(Duration::ZERO, Config::default()).await;
    let request = b"GET / HTTP/1.1\r\nhost: a\r\n\r\n";
    let mut tcp = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        tcp.write_all(request).await.unwrap();
        // The answer is chunked: it ends with the last chunk.
        let mut answer = Vec::new();
        while !answer.ends_with(b"0\r\n\r\n") {
            let mut buf = [0; 256];
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed early: {answer:?}");
            answer.extend_from_slice(&buf[..n]);
        }
    }
    let stopping = Instant::now();
    server.shutdown.trigger();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.stats.active(), 1, "it waits for the client");
    drop(tcp);
    server.task.await.unwrap();
    assert!(stopping.elapsed() < Duration::from_secs(2));
}
