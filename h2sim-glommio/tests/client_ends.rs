//! How client connections end and are replaced: a server that closes after
//! every response (HTTP/1.0, or GOAWAY after each answer) is a planned end
//! followed by a new connection while work remains; a client's own GOAWAY
//! names no stream the server did not push (RFC 9113 §6.8), so nghttpd
//! answers it without error; a shutdown triggered from another thread
//! lets the requests in flight finish.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(unused_macros)]
mod matrix;

use std::sync::{Arc, mpsc};
use std::time::Instant;

use h2sim_glommio::{
    ClientOptions, ClientOutcome, ClientProtocol, Executors, FetchRequest, ListenerSpec, Server,
    ServerOptions, connect,
};
use h2sim_proto::fetch::{FetchApp, Outcome, Shared};
use h2sim_proto::{
    Application, CloseCause, Connection, ConnectionError, Event, Reason, ResponseHead,
};

/// A fetch application that also keeps the GOAWAY codes it heard and
/// how its connection ended.
struct Recorder {
    fetch: FetchApp,
    goaways: Vec<Reason>,
    closed: Option<(Option<ConnectionError>, CloseCause)>,
}

impl Application for Recorder {
    fn start(&mut self, now: Instant, conn: &mut Connection) {
        self.fetch.start(now, conn);
    }

    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        match &event {
            Event::GoAway { reason, .. } => self.goaways.push(*reason),
            Event::Closed { error, cause } => self.closed = Some((error.clone(), cause.clone())),
            _ => {}
        }
        self.fetch.on_event(now, event, conn);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.fetch.poll_timeout()
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        self.fetch.on_timeout(now, conn);
    }

    fn wants_reconnect(&mut self) -> bool {
        self.fetch.wants_reconnect()
    }
}

/// Runs `requests` over one connection slot with `options`, one at a time;
/// the results and the slot's outcome.
fn run(
    target: &str,
    options: ClientOptions,
    requests: Vec<FetchRequest>,
) -> (Vec<Outcome>, ClientOutcome<Recorder>) {
    run_in_flight(target, options, requests, 1)
}

/// [`run`] with up to `in_flight` requests outstanding at once.
fn run_in_flight(
    target: &str,
    options: ClientOptions,
    requests: Vec<FetchRequest>,
    in_flight: usize,
) -> (Vec<Outcome>, ClientOutcome<Recorder>) {
    let shared = Arc::new(Shared::new(requests));
    let for_apps = shared.clone();
    let mut outcomes = connect(target, options, move |_| Recorder {
        fetch: for_apps.app(in_flight),
        goaways: Vec::new(),
        closed: None,
    })
    .unwrap();
    (shared.results("not sent"), outcomes.remove(0))
}

/// `python3 -m http.server` closes after each response (HTTP/1.0): each
/// end is orderly, the pipelined requests are not lost, and the slot
/// reconnects for the rest without any reconnect policy.
#[test]
fn reconnects_to_an_http10_server_that_closes_after_each_response() {
    let peer = matrix::python_http10_server();
    let authority = format!("127.0.0.1:{}", peer.port);
    let requests: Vec<FetchRequest> = (0..5)
        .map(|_| FetchRequest::get("http", &authority, "/a.txt"))
        .collect();
    let mut options = ClientOptions {
        protocol: ClientProtocol::Http1,
        runtime: Executors::new(1).into(),
        ..ClientOptions::default()
    };
    options.config.http1.max_pipeline = 3;
    let (results, outcome) = run(&authority, options, requests);
    for r in &results {
        let r = r.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.head.status, 200);
        assert_eq!(r.body, "hello\n");
    }
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert!(
        outcome.reconnects >= 1,
        "one connection per response at most"
    );
    assert!(outcome.reconnects <= 4, "{}", outcome.reconnects);
}

/// Answers each request, then goes away (HTTP/2 GOAWAY NO_ERROR, HTTP/1.1
/// `connection: close`): a request limit per connection on the server.
struct OnePerConnection;

impl Application for OnePerConnection {
    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        if let Event::Request { stream, .. } = event {
            conn.go_away(now);
            let _ = conn.send_response(stream, ResponseHead::new(200), true);
        }
    }
}

/// A server that goes away after every answer is a planned end: the slot
/// reconnects once per request, whatever `Reconnect::max_attempts` says.
#[test]
fn go_away_after_each_response_is_followed_by_new_connections() {
    let server = Server::bind(
        vec![ListenerSpec::plain("127.0.0.1:0").unwrap()],
        ServerOptions {
            runtime: Executors::new(1),
            ..ServerOptions::default()
        },
    )
    .unwrap();
    let addr = server.local_addrs()[0].0;
    let running = server.start(|_| OnePerConnection).unwrap();
    for protocol in [ClientProtocol::Http2, ClientProtocol::Http1] {
        let requests: Vec<FetchRequest> = (0..4)
            .map(|_| FetchRequest::get("http", &addr.to_string(), "/"))
            .collect();
        let options = ClientOptions {
            protocol,
            runtime: Executors::new(1).into(),
            reconnect: Some(h2sim_glommio::Reconnect {
                max_attempts: 1,
                delay: std::time::Duration::from_millis(10),
            }),
            ..ClientOptions::default()
        };
        let (results, outcome) = run(&addr.to_string(), options, requests);
        for r in &results {
            assert_eq!(r.as_ref().unwrap().head.status, 200, "{protocol:?}");
        }
        assert!(outcome.error.is_none(), "{protocol:?}: {:?}", outcome.error);
        assert_eq!(outcome.reconnects, 3, "{protocol:?}");
    }
    running.shutdown().trigger();
    running.join();
}

/// RFC 9113 §6.8 against nghttp2: our client's closing GOAWAY names the
/// last stream nghttpd pushed (it pushes `/style.css` with `/index.html`),
/// so nghttpd does not answer GOAWAY(PROTOCOL_ERROR, "invalid
/// last_stream_id") — which the client waits for and would report.
#[test]
fn our_client_ends_without_a_goaway_error_from_nghttpd() {
    let peer = matrix::nghttpd(false);
    let authority = format!("localhost:{}", peer.port);
    let target = format!("127.0.0.1:{}", peer.port);
    let requests: Vec<FetchRequest> = (0..3)
        .map(|_| FetchRequest::get("http", &authority, "/index.html"))
        .collect();
    let options = ClientOptions {
        runtime: Executors::new(1).into(),
        ..ClientOptions::default()
    };
    let (results, outcome) = run(&target, options, requests);
    for r in &results {
        let r = r.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.head.status, 200);
        assert_eq!(r.pushes.len(), 1, "nghttpd pushed /style.css");
    }
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let app = outcome.app.expect("the connection was made");
    assert!(
        app.goaways.iter().all(|r| *r == Reason::NO_ERROR),
        "nghttpd answered with GOAWAY {:?}",
        app.goaways
    );
}

/// `Shutdown::trigger` from a thread of its own (a signal handler's, say)
/// while requests are in flight: the client's executor hears it, opens no more streams, those
/// it opened are still answered and received, its GOAWAY follows them
/// (RFC 9113 §6.8), and the connection ends by it, not cut by the drain
/// deadline.
#[test]
fn shutdown_triggered_from_another_thread_lets_in_flight_requests_finish() {
    const REQUESTS: usize = 4;
    let server = Server::bind(
        vec![ListenerSpec::plain("127.0.0.1:0").unwrap()],
        ServerOptions {
            runtime: Executors::new(1),
            ..ServerOptions::default()
        },
    )
    .unwrap();
    let addr = server.local_addrs()[0].0;
    let (arrived, all_held) = mpsc::channel();
    let running = server
        .start(move |_| matrix::AnswerLate::new(REQUESTS, arrived.clone()))
        .unwrap();
    let options = ClientOptions {
        runtime: Executors::new(1).into(),
        ..ClientOptions::default()
    };
    let client_shutdown = options.runtime.shutdown.clone();
    let signal_thread = std::thread::spawn(move || {
        all_held.recv().unwrap();
        client_shutdown.trigger();
    });
    let requests: Vec<FetchRequest> = (0..REQUESTS)
        .map(|_| FetchRequest::get("http", &addr.to_string(), "/"))
        .collect();
    let (results, outcome) = run_in_flight(&addr.to_string(), options, requests, REQUESTS);
    signal_thread.join().unwrap();
    for r in &results {
        let r = r.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((r.head.status, &r.body[..]), (200, &b"late"[..]));
    }
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let app = outcome.app.expect("the connection was made");
    assert_eq!(app.closed, Some((None, CloseCause::LocalGoAway)));
    running.shutdown().trigger();
    running.join();
}
