//! The Application contract: a client application and a server application,
//! each joined to its connection by an Endpoint, in memory on a virtual clock
//! (`h2sim_proto::pair`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use h2sim_proto::pair::Pair;
use h2sim_proto::{
    Application, Config, Connection, Endpoint, Event, RequestHead, ResponseHead, StreamId,
};

/// Answers each request after a delay, using its own timer.
#[derive(Default)]
struct SlowServer {
    due: Vec<(Instant, StreamId)>,
}

impl Application for SlowServer {
    fn on_event(&mut self, now: Instant, event: Event, _conn: &mut Connection) {
        if let Event::Request { stream, .. } = event {
            self.due.push((now + Duration::from_millis(50), stream));
        }
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.due.iter().map(|(t, _)| *t).min()
    }
    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        for (_, stream) in self.due.iter().filter(|(t, _)| *t <= now) {
            conn.send_response(*stream, ResponseHead::new(200), false)
                .unwrap();
            conn.send_data(*stream, Bytes::from_static(b"late"), true)
                .unwrap();
        }
        self.due.retain(|(t, _)| *t > now);
    }
}

/// Sends three requests at start and records when each completes.
#[derive(Default)]
struct Client {
    done: Vec<(StreamId, Instant)>,
}

impl Application for Client {
    fn start(&mut self, _now: Instant, conn: &mut Connection) {
        for i in 0..3 {
            let head = RequestHead::new("GET", "http", "sim", format!("/{i}"));
            conn.send_request(head, true).unwrap();
        }
    }
    fn on_event(&mut self, now: Instant, event: Event, _conn: &mut Connection) {
        if let Event::Data {
            stream,
            end_stream: true,
            ..
        } = event
        {
            self.done.push((stream, now));
        }
    }
}

#[test]
fn application_timers_drive_delayed_responses() {
    let start = Instant::now();
    let client = Endpoint::new(
        Connection::client(Config::default(), start).unwrap(),
        Client::default(),
        start,
    );
    let server = Endpoint::new(
        Connection::server(Config::default(), start).unwrap(),
        SlowServer::default(),
        start,
    );
    let mut pair = Pair::join(client, server, start);
    for _ in 0..100 {
        pair.drive();
        if pair.client.application().done.len() == 3 || pair.jump().is_none() {
            break;
        }
    }
    let done = &pair.client.application().done;
    assert_eq!(done.len(), 3);
    assert!(
        done.iter()
            .all(|(_, at)| *at == start + Duration::from_millis(50)),
        "{done:?}"
    );
}

/// Answers every request at once with 204.
struct Immediate;

impl Application for Immediate {
    fn on_event(&mut self, _now: Instant, event: Event, conn: &mut Connection) {
        if let Event::Request { stream, .. } = event {
            conn.send_response(stream, ResponseHead::new(204), true)
                .unwrap();
        }
    }
}

/// A client pipelining more HTTP/1.1 requests than the server reads ahead
/// and then waiting: the held requests reach the application through
/// `poll_transmit` alone, with no further input.
#[test]
fn held_pipelined_requests_reach_the_application_without_more_input() {
    let now = Instant::now();
    let mut server = Endpoint::new(
        Connection::server(Config::default(), now).unwrap(),
        Immediate,
        now,
    );
    let mut input = BytesMut::new();
    for i in 0..40 {
        input.extend_from_slice(format!("GET /{i} HTTP/1.1\r\nHost: sim\r\n\r\n").as_bytes());
    }
    server.handle_input(now, &mut input);
    let mut out = Vec::new();
    while let Some(chunk) = server.poll_transmit(now) {
        out.extend_from_slice(&chunk);
    }
    let answered = out.windows(12).filter(|w| w == b"HTTP/1.1 204").count();
    assert_eq!(answered, 40);
}

/// Answers each request at once and gives its head back, noting the
/// address of every head it was handed.
#[derive(Default)]
struct Recycler {
    heads: std::collections::HashSet<usize>,
    answered: usize,
}

impl Application for Recycler {
    fn on_event(&mut self, _now: Instant, event: Event, conn: &mut Connection) {
        if let Event::Request { stream, head, .. } = event {
            self.heads.insert(&*head as *const RequestHead as usize);
            conn.send_response(stream, ResponseHead::new(204), true)
                .unwrap();
            conn.recycle_request(head);
            self.answered += 1;
        }
    }
}

/// A read that brings a thousand requests is handed to the application in
/// batches, each answered and its heads given back before the next is
/// decoded: the thousand requests pass through a batch's worth of heads,
/// not a thousand held at once.
#[test]
fn a_read_of_a_thousand_requests_reuses_a_batch_of_heads() {
    let now = Instant::now();
    let config = Config {
        max_concurrent_streams: 1000,
        ..Config::default()
    };
    let mut server = Endpoint::new(
        Connection::server(config, now).unwrap(),
        Recycler::default(),
        now,
    );
    let mut client = Connection::client(Config::default(), now).unwrap();
    // SETTINGS both ways first, so the client may open 1,000 streams.
    let mut wire = BytesMut::new();
    while let Some(chunk) = client.poll_transmit(now) {
        wire.extend_from_slice(&chunk);
    }
    server.handle_input(now, &mut wire);
    while let Some(chunk) = server.poll_transmit(now) {
        wire.extend_from_slice(&chunk);
    }
    client.handle_input(now, &mut wire);
    for i in 0..1000 {
        let head = RequestHead::new("GET", "http", "sim", format!("/{}", i % 7));
        client.send_request(head, true).unwrap();
    }
    while let Some(chunk) = client.poll_transmit(now) {
        wire.extend_from_slice(&chunk);
    }
    server.handle_input(now, &mut wire);
    assert!(wire.is_empty(), "{} bytes left unread", wire.len());
    let app = server.application();
    assert_eq!(app.answered, 1000);
    assert!(app.heads.len() <= 128, "{} heads at once", app.heads.len());
}
