//! How connections end: graceful shutdown with streams in flight, the
//! drain deadline, the idle timeout, and a client that loses its
//! connection (reporting the lost request, reconnecting when asked).

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

async fn delayed_server(delay: Duration, config: Config) -> Running {
    let options = ServerOptions {
        config,
        ..ServerOptions::default()
    };
    let server = Server::bind(vec![ListenerSpec::plain("127.0.0.1:0").unwrap()], options)
        .await
        .unwrap();
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
    let options = ServerOptions {
        config: Config {
            idle_timeout: Some(Duration::from_millis(200)),
            ..Config::default()
        },
        ..ServerOptions::default()
    };
    let server = Server::bind(vec![ListenerSpec::plain("127.0.0.1:0").unwrap()], options)
        .await
        .unwrap();
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
