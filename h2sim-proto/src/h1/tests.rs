//! Sessions driven end to end: a client against a server in memory with
//! writes split at random points, and a server fed hand-written bytes for
//! the cases a well-behaved client never produces.

use std::sync::OnceLock;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

use super::body::{BodyDecoder, BodyLimits, Decoded};
use super::encode::{self, Framing, Output};
use super::parse;
use super::parse::BodyKind;
use super::upgrade::SWITCHING_PROTOCOLS;
use super::{HeadPart, Http1Error, Session, Upgrade};
use crate::close::CloseCause;
use crate::config::{Config, WindowPolicy};
use crate::error::{ConnectionError, UserError, Violation};
use crate::event::{Event, RefusedWith};
use crate::frame::{Reason, StreamId};
use crate::hpack::HeaderField;
use crate::message::{RequestHead, ResponseHead};
use crate::pair::{Pair, Rng, Side};
use crate::role::Role;

fn now() -> std::time::Instant {
    static NOW: OnceLock<std::time::Instant> = OnceLock::new();
    *NOW.get_or_init(std::time::Instant::now)
}

fn sid(n: u32) -> StreamId {
    StreamId::new(n)
}

/// A client that sent `GET path` (its bytes taken), and its stream.
fn asking(path: &str) -> (Session, StreamId) {
    let mut client = Session::new(Role::Client, Config::default(), now());
    let id = client.send_request(get(path), true).unwrap();
    drain_output(&mut client);
    (client, id)
}

fn drain_output(s: &mut Session) -> Vec<u8> {
    let mut wire = Vec::new();
    while let Some(chunk) = s.poll_transmit() {
        wire.extend_from_slice(&chunk);
    }
    wire
}

fn drain_events(s: &mut Session) -> Vec<Event> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

fn text(wire: &[u8]) -> String {
    String::from_utf8_lossy(wire).into_owned()
}

/// A session on a [`Pair`]. The pair offers input only as it arrives, so
/// these tests keep the server's pipeline from filling: input a full
/// pipeline holds back is the `Connection`'s to offer again, and is tested
/// there.
impl Side for Session {
    fn poll_transmit(&mut self, _now: Instant) -> Option<Bytes> {
        Session::poll_transmit(self)
    }
    fn handle_input(&mut self, now: Instant, input: &mut BytesMut) {
        Session::handle_input(self, now, input);
    }
    fn handle_eof(&mut self, _now: Instant) {
        Session::handle_eof(self);
    }
    fn fire_timers(&mut self, now: Instant) {
        if Session::poll_timeout(self).is_some_and(|t| t <= now) {
            Session::handle_timeout(self, now);
        }
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Session::poll_timeout(self)
    }
    fn is_closed(&self) -> bool {
        Session::is_closed(self)
    }
}

/// A client session and a server session joined in memory, deliveries
/// split by `seed`, both past their `Connected` event.
fn joined(seed: u64) -> Pair<Session, Session> {
    joined_with(Config::default(), Config::default(), seed)
}

fn joined_with(client: Config, server: Config, seed: u64) -> Pair<Session, Session> {
    let mut pair = Pair::join(
        Session::new(Role::Client, client, now()),
        Session::new(Role::Server, server, now()),
        now(),
    )
    .split(seed);
    assert_eq!(pair.client.poll_event(), Some(Event::Connected));
    assert_eq!(pair.server.poll_event(), Some(Event::Connected));
    pair
}

impl Pair<Session, Session> {
    fn server_events(&mut self) -> Vec<Event> {
        drain_events(&mut self.server)
    }

    fn client_events(&mut self) -> Vec<Event> {
        drain_events(&mut self.client)
    }
}

/// Merges adjacent Data events of one stream, so event lists from input
/// split differently compare equal.
fn normalize(events: Vec<Event>) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::new();
    for event in events {
        if let Event::Data {
            stream,
            data,
            end_stream,
        } = &event
            && let Some(Event::Data {
                stream: last,
                data: acc,
                end_stream: ended,
            }) = out.last_mut()
            && last == stream
            && !*ended
        {
            let mut joined = BytesMut::from(&acc[..]);
            joined.extend_from_slice(data);
            *acc = joined.freeze();
            *ended = *end_stream;
            continue;
        }
        out.push(event);
    }
    out
}

/// Body bytes and whether the body ended, per stream, from a list of events.
fn body_of(events: &[Event], id: StreamId) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    let mut ended = false;
    for event in events {
        match event {
            Event::Data {
                stream,
                data,
                end_stream,
            } if *stream == id => {
                body.extend_from_slice(data);
                ended |= end_stream;
            }
            Event::Trailers { stream, .. } if *stream == id => ended = true,
            Event::Response {
                stream,
                head,
                end_stream: true,
            } if *stream == id && !head.is_informational() => ended = true,
            _ => {}
        }
    }
    (body, ended)
}

fn closed_error(events: &[Event]) -> Option<Option<ConnectionError>> {
    let closed: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Closed { error, .. } => Some(error.clone()),
            _ => None,
        })
        .collect();
    assert!(closed.len() <= 1, "one Closed at most: {events:?}");
    closed.into_iter().next()
}

/// The client's exchange on `stream` failed for `violation`, and the
/// connection with it: a local PROTOCOL_ERROR reset, then the close.
fn assert_failed(events: &[Event], stream: StreamId, violation: Violation) {
    assert!(
        events.contains(&Event::StreamReset {
            stream,
            reason: Reason::PROTOCOL_ERROR,
            remote: false,
            violation: Some(violation.clone()),
            status: None
        }),
        "{events:?}"
    );
    assert_eq!(
        closed_error(events),
        Some(Some(ConnectionError::Local {
            reason: Reason::PROTOCOL_ERROR,
            violation
        }))
    );
}

fn get(path: &str) -> RequestHead {
    RequestHead::new("GET", "http", "example.com", path.to_owned())
}

fn post(path: &str) -> RequestHead {
    RequestHead::new("POST", "http", "example.com", path.to_owned())
}

/// Answers every complete request with 200 and "reply <path>".
fn answer_requests(server: &mut Session, events: &[Event]) {
    for event in events {
        if let Event::Request { stream, head, .. } = event {
            let body = format!("reply {}", String::from_utf8_lossy(&head.path));
            server
                .send_response(*stream, ResponseHead::new(200), false)
                .unwrap();
            server.send_data(*stream, Bytes::from(body), true).unwrap();
        }
    }
}

// ---------------------------------------------------------------------------
// Client against server

#[test]
fn keep_alive_carries_two_exchanges() {
    for seed in 1..20 {
        let mut pair = joined(seed);
        for (n, path) in ["/one", "/two"].into_iter().enumerate() {
            let id = pair.client.send_request(get(path), true).unwrap();
            assert_eq!(id, sid(2 * n as u32 + 1));
            pair.drive();
            let events = pair.server_events();
            match &events[..] {
                [
                    Event::Request {
                        stream,
                        head,
                        end_stream: true,
                    },
                ] => {
                    assert_eq!(*stream, id, "both sides number exchanges alike");
                    assert_eq!(head.method, "GET");
                    assert_eq!(head.scheme, "http");
                    assert_eq!(head.authority, "example.com");
                    assert_eq!(head.path, path);
                    assert!(head.fields.is_empty());
                }
                other => panic!("{other:?}"),
            }
            answer_requests(&mut pair.server, &events);
            pair.drive();
            let events = pair.client_events();
            assert!(matches!(
                &events[0],
                Event::Response { stream, head, end_stream: false }
                    if *stream == id && head.status == 200
            ));
            assert_eq!(body_of(&events, id), (format!("reply {path}").into(), true));
        }
        assert!(!pair.client.is_closed() && !pair.server.is_closed());
    }
}

#[test]
fn chunked_bodies_and_trailers_both_ways() {
    for seed in 1..30 {
        let mut pair = joined(seed);
        let head = post("/upload").field("content-type", "application/json");
        let id = pair.client.send_request(head, false).unwrap();
        let parts = ["{\"a\":", "1", "}"];
        for part in parts {
            pair.client
                .send_data(id, Bytes::from_static(part.as_bytes()), false)
                .unwrap();
        }
        pair.client
            .send_trailers(id, vec![HeaderField::new("checksum", "42")])
            .unwrap();
        pair.drive();
        let events = normalize(pair.server_events());
        assert!(
            matches!(&events[0], Event::Request { head, end_stream: false, .. }
            if head.get(b"content-type").is_some_and(|v| v == "application/json"))
        );
        assert_eq!(
            events[1],
            Event::Data {
                stream: id,
                data: Bytes::from_static(b"{\"a\":1}"),
                end_stream: false
            }
        );
        assert_eq!(
            events[2],
            Event::Trailers {
                stream: id,
                fields: vec![HeaderField::new("checksum", "42")]
            }
        );
        pair.server
            .send_response(id, ResponseHead::new(200), false)
            .unwrap();
        pair.server
            .send_data(id, Bytes::from_static(b"ok"), false)
            .unwrap();
        pair.server.send_data(id, Bytes::new(), true).unwrap();
        pair.drive();
        let events = normalize(pair.client_events());
        assert_eq!(
            events[1],
            Event::Data {
                stream: id,
                data: Bytes::from_static(b"ok"),
                end_stream: true
            }
        );
    }
}

#[test]
fn application_content_length_is_used() {
    let mut pair = joined(7);
    let head = post("/p").field("content-length", "5");
    let id = pair.client.send_request(head, false).unwrap();
    pair.client
        .send_data(id, Bytes::from_static(b"hello"), true)
        .unwrap();
    let wire = text(&drain_output(&mut pair.client));
    assert_eq!(
        wire,
        "POST /p HTTP/1.1\r\nhost: example.com\r\ncontent-length: 5\r\n\r\nhello"
    );
    let mut input = BytesMut::from(wire.as_bytes());
    pair.server.handle_input(now(), &mut input);
    let events = pair.server_events();
    assert_eq!(body_of(&events, id), (b"hello".to_vec(), true));
    pair.server
        .send_response(
            id,
            ResponseHead::new(201).field("content-length", "2"),
            false,
        )
        .unwrap();
    pair.server
        .send_data(id, Bytes::from_static(b"ok"), true)
        .unwrap();
    assert_eq!(
        text(&drain_output(&mut pair.server)),
        "HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok"
    );
}

#[test]
fn request_without_body_says_so_when_the_method_expects_one() {
    let mut client = Session::new(Role::Client, Config::default(), now());
    client.send_request(get("/"), true).unwrap();
    client.send_request(post("/"), true).unwrap();
    let mut config = Config::default();
    config.http1.max_pipeline = 2;
    let mut client2 = Session::new(Role::Client, config, now());
    client2
        .send_request(RequestHead::new("GET", "http", "h", "/a"), true)
        .unwrap();
    client2
        .send_request(RequestHead::new("PUT", "http", "h", "/b"), true)
        .unwrap();
    assert_eq!(
        text(&drain_output(&mut client2)),
        "GET /a HTTP/1.1\r\nhost: h\r\n\r\nPUT /b HTTP/1.1\r\nhost: h\r\ncontent-length: 0\r\n\r\n"
    );
    // Pipelining depth 1: the second request waits for the first response.
    assert_eq!(
        text(&drain_output(&mut client)),
        "GET / HTTP/1.1\r\nhost: example.com\r\n\r\n"
    );
}

#[test]
fn client_go_away_sends_connection_close() {
    let mut pair = joined(3);
    let id = pair.client.send_request(get("/last"), true).unwrap();
    pair.client.go_away(now());
    assert_eq!(
        pair.client.send_request(get("/more"), true),
        Err(UserError::GoingAway)
    );
    pair.drive();
    let events = pair.server_events();
    answer_requests(&mut pair.server, &events);
    pair.drive();
    let server_events = pair.server_events();
    assert_eq!(closed_error(&server_events), Some(None));
    assert!(pair.server.is_closed());
    let client_events = pair.client_events();
    assert!(body_of(&client_events, id).1);
    assert_eq!(closed_error(&client_events), Some(None));
    assert!(pair.client.is_closed());
}

#[test]
fn server_go_away_closes_after_the_exchange_in_progress() {
    let mut config = Config::default();
    config.http1.max_pipeline = 1;
    let mut pair = joined_with(config, Config::default(), 5);
    let first = pair.client.send_request(get("/a"), true).unwrap();
    let second = pair.client.send_request(get("/b"), true).unwrap();
    pair.drive();
    let events = pair.server_events();
    assert_eq!(events.len(), 1);
    pair.server.go_away(now());
    answer_requests(&mut pair.server, &events);
    let wire = text(&drain_output(&mut pair.server));
    assert!(wire.contains("connection: close\r\n"), "{wire}");
    assert!(pair.server.is_closed());
    assert_eq!(closed_error(&pair.server_events()), Some(None));
    let mut input = BytesMut::from(wire.as_bytes());
    pair.client.handle_input(now(), &mut input);
    let events = pair.client_events();
    assert_eq!(body_of(&events, first), (b"reply /a".to_vec(), true));
    assert!(events.contains(&Event::Retryable { stream: second }));
    assert_eq!(closed_error(&events), Some(None));
    assert!(pair.client.is_closed());
}

#[test]
fn pipelining_answers_in_request_order() {
    for depth in [1usize, 16] {
        for seed in 1..6 {
            let mut config = Config::default();
            config.http1.max_pipeline = depth;
            let mut pair = joined_with(config, Config::default(), seed);
            let ids: Vec<StreamId> = (0..16)
                .map(|n| {
                    let head = post(&format!("/{n}"));
                    let id = pair.client.send_request(head, false).unwrap();
                    pair.client
                        .send_data(id, Bytes::from(format!("body {n}")), true)
                        .unwrap();
                    id
                })
                .collect();
            let mut seen = Vec::new();
            let mut answered = std::collections::HashSet::new();
            for _ in 0..40 {
                pair.drive();
                let events = pair.server_events();
                let mut complete: Vec<StreamId> = events
                    .iter()
                    .filter_map(|e| match e {
                        Event::Data {
                            stream,
                            end_stream: true,
                            ..
                        } => Some(*stream),
                        _ => None,
                    })
                    .collect();
                if depth == 16 && seen.is_empty() {
                    assert_eq!(complete.len(), 16, "all requests written ahead");
                }
                // The application answers the latest request first.
                complete.reverse();
                for id in complete {
                    answered.insert(id);
                    pair.server
                        .send_response(id, ResponseHead::new(200), false)
                        .unwrap();
                    pair.server
                        .send_data(id, Bytes::from(format!("answer {}", id.value())), true)
                        .unwrap();
                }
                pair.drive();
                seen.extend(pair.client_events());
                if answered.len() == 16 {
                    break;
                }
            }
            pair.drive();
            seen.extend(pair.client_events());
            let order: Vec<StreamId> = seen
                .iter()
                .filter_map(|e| match e {
                    Event::Response { stream, .. } => Some(*stream),
                    _ => None,
                })
                .collect();
            assert_eq!(order, ids);
            for id in &ids {
                assert_eq!(
                    body_of(&seen, *id),
                    (format!("answer {}", id.value()).into_bytes(), true)
                );
            }
        }
    }
}

#[test]
fn no_body_responses() {
    let mut pair = joined(11);
    let head_id = pair
        .client
        .send_request(RequestHead::new("HEAD", "http", "h", "/"), true)
        .unwrap();
    pair.drive();
    pair.server_events();
    pair.server
        .send_response(
            head_id,
            ResponseHead::new(200).field("content-length", "5"),
            false,
        )
        .unwrap();
    pair.server
        .send_data(head_id, Bytes::from_static(b"never"), true)
        .unwrap();
    pair.drive();
    let events = pair.client_events();
    assert!(
        matches!(&events[..], [Event::Response { head, end_stream: true, .. }]
        if head.get(b"content-length").is_some_and(|v| v == "5"))
    );

    for status in [204, 304] {
        let id = pair.client.send_request(get("/"), true).unwrap();
        pair.drive();
        pair.server_events();
        pair.server
            .send_response(id, ResponseHead::new(status), true)
            .unwrap();
        let wire = drain_output(&mut pair.server);
        assert!(!text(&wire).contains("content-length"), "{}", text(&wire));
        let mut input = BytesMut::from(&wire[..]);
        pair.client.handle_input(now(), &mut input);
        let events = pair.client_events();
        assert!(
            matches!(&events[..], [Event::Response { head, end_stream: true, .. }]
            if head.status == status)
        );
    }

    let id = pair.client.send_request(get("/"), true).unwrap();
    pair.drive();
    pair.server_events();
    pair.server
        .send_response(id, ResponseHead::new(103).field("link", "</s.css>"), false)
        .unwrap();
    pair.server
        .send_response(id, ResponseHead::new(200), true)
        .unwrap();
    pair.drive();
    let events = pair.client_events();
    match &events[..] {
        [
            Event::Response {
                head: early,
                end_stream: false,
                ..
            },
            Event::Response {
                head: last,
                end_stream: true,
                ..
            },
        ] => {
            assert_eq!(early.status, 103);
            assert_eq!(early.fields, [HeaderField::new("link", "</s.css>")]);
            assert_eq!(last.status, 200);
        }
        other => panic!("{other:?}"),
    }
    assert!(!pair.client.is_closed());
}

#[test]
fn reset_closes_after_what_is_complete() {
    let mut config = Config::default();
    config.http1.max_pipeline = 3;
    let mut pair = joined_with(config, Config::default(), 13);
    let ids: Vec<_> = (0..3)
        .map(|n| {
            pair.client
                .send_request(get(&format!("/{n}")), true)
                .unwrap()
        })
        .collect();
    pair.drive();
    assert_eq!(pair.server_events().len(), 3);
    pair.server
        .send_response(ids[0], ResponseHead::new(200), true)
        .unwrap();
    pair.server.reset(ids[1], Reason::CANCEL).unwrap();
    let events = pair.server_events();
    assert_eq!(
        events,
        [
            Event::StreamReset {
                stream: ids[2],
                reason: Reason::CANCEL,
                remote: false,
                violation: None,
                status: None
            },
            Event::Closed {
                error: None,
                cause: CloseCause::Aborted {
                    reason: Reason::CANCEL
                }
            }
        ]
    );
    pair.drive();
    assert!(pair.server.is_closed());
    pair.client.handle_eof();
    let events = pair.client_events();
    assert!(
        matches!(&events[0], Event::Response { stream, end_stream: true, .. } if *stream == ids[0])
    );
    for id in &ids[1..] {
        assert!(events.contains(&Event::StreamReset {
            stream: *id,
            reason: Reason::CANCEL,
            remote: true,
            violation: None,
            status: None
        }));
    }
    assert_eq!(
        closed_error(&events),
        Some(Some(ConnectionError::TransportClosed))
    );
}

#[test]
fn client_reset_drops_or_closes() {
    let mut client = Session::new(Role::Client, Config::default(), now());
    let a = client.send_request(get("/a"), true).unwrap();
    let b = client.send_request(get("/b"), true).unwrap();
    let c = client.send_request(get("/c"), true).unwrap();
    // b is not on the wire yet: it simply goes.
    client.reset(b, Reason::CANCEL).unwrap();
    assert_eq!(
        client.reset(b, Reason::CANCEL),
        Err(UserError::UnknownStream(b))
    );
    assert!(!client.is_closed());
    drain_output(&mut client);
    // a is: the connection has to close.
    client.reset(a, Reason::CANCEL).unwrap();
    let events = drain_events(&mut client);
    assert_eq!(
        events,
        [
            Event::Connected,
            Event::Retryable { stream: c },
            Event::Closed {
                error: None,
                cause: CloseCause::Aborted {
                    reason: Reason::CANCEL
                }
            }
        ]
    );
    assert!(client.is_closed());
}

#[test]
fn eof_fails_unanswered_requests() {
    let mut client = Session::new(Role::Client, Config::default(), now());
    let a = client.send_request(post("/a"), false).unwrap();
    client.send_data(a, Bytes::from_static(b"x"), true).unwrap();
    let b = client.send_request(get("/b"), true).unwrap();
    drain_output(&mut client);
    client.handle_eof();
    let events = drain_events(&mut client);
    assert_eq!(
        &events[1..],
        [
            Event::StreamReset {
                stream: a,
                reason: Reason::CANCEL,
                remote: true,
                violation: None,
                status: None
            },
            Event::Retryable { stream: b },
            Event::Closed {
                error: Some(ConnectionError::TransportClosed),
                cause: CloseCause::PeerClosed,
            }
        ]
    );
    assert_eq!(
        client.send_data(a, Bytes::new(), true),
        Err(UserError::UnknownStream(a))
    );
}

/// A body whose framing says more is to come, ended by the close, is an
/// incomplete message (RFC 9112 §8): the exchange fails with that rule, not
/// as a request left unanswered.
#[test]
fn body_cut_by_the_close_is_an_incomplete_message() {
    for (wire, missing, received) in [
        (
            &b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab"[..],
            Some(8),
            &b"ab"[..],
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n4\r\nab",
            None,
            b"helloab",
        ),
    ] {
        let (mut client, id) = asking("/");
        let mut input = BytesMut::from(wire);
        client.handle_input(now(), &mut input);
        client.handle_eof();
        let events = drain_events(&mut client);
        assert_eq!(body_of(&events, id), (received.to_vec(), false));
        let violation = Violation::Http1(Http1Error::IncompleteMessage { missing });
        assert_failed(&events, id, violation);
    }
}

/// RFC 9113 §3.4: a server that takes HTTP/2 with prior knowledge only
/// starts with its SETTINGS whatever it got; an HTTP/1.1 request meets
/// that frame, not a status line. Told at once, even fed a byte at a time
/// and before the server's close, as is any answer that cannot begin with
/// `HTTP/` (RFC 9112 §4).
#[test]
fn an_answer_that_is_not_http1_is_named_at_once() {
    let settings = b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64";
    for (wire, error) in [
        (&settings[..], Http1Error::Http2Answer),
        (b"SSH-2.0-OpenSSH_9.2\r\n", Http1Error::NotHttp),
        (b"\r\n\x00\x00\x12\x07\x00\x00", Http1Error::NotHttp),
    ] {
        let (mut client, id) = asking("/");
        let mut input = BytesMut::new();
        for &byte in wire {
            input.extend_from_slice(&[byte]);
            client.handle_input(now(), &mut input);
        }
        assert_failed(&drain_events(&mut client), id, Violation::Http1(error));
    }
    // Every prefix of a status line, and of an empty line, stays undecided.
    let (mut client, id) = asking("/");
    let mut input = BytesMut::new();
    for &byte in b"\r\nHTTP/1.1 204 No Content\r\n\r\n" {
        input.extend_from_slice(&[byte]);
        client.handle_input(now(), &mut input);
    }
    let events = drain_events(&mut client);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Response { stream, .. } if *stream == id)),
        "{events:?}"
    );
    assert_eq!(closed_error(&events), None, "{events:?}");
}

/// RFC 9112 §7: chunked defines no parameters, and "their presence SHOULD
/// be treated as an error": a response framed by `chunked;q=1` fails as a
/// request so framed gets 400, rather than being read as chunked.
#[test]
fn a_response_chunked_with_parameters_fails() {
    let (mut client, id) = asking("/");
    let mut input = BytesMut::from(
        &b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked;q=1\r\n\r\n2\r\nhi\r\n0\r\n\r\n"[..],
    );
    client.handle_input(now(), &mut input);
    let violation = Violation::Http1(Http1Error::ChunkedWithParameters);
    assert_failed(&drain_events(&mut client), id, violation);
}

#[test]
fn close_delimited_response_ends_at_eof() {
    let (mut client, id) = asking("/");
    let mut input = BytesMut::from(&b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhel"[..]);
    client.handle_input(now(), &mut input);
    input.extend_from_slice(b"lo");
    client.handle_input(now(), &mut input);
    assert!(
        client.send_request(get("/next"), true).is_err(),
        "the connection ends with this response"
    );
    client.handle_eof();
    let events = normalize(drain_events(&mut client));
    match &events[..] {
        [
            Event::Connected,
            Event::Response { head, .. },
            Event::Data {
                data,
                end_stream: true,
                ..
            },
            // The response did not announce the close (RFC 9112 §9.6):
            // the end is the server's close, not its `connection: close`.
            Event::Closed {
                error: None,
                cause: CloseCause::PeerClosed,
            },
        ] => {
            assert_eq!(
                head.fields,
                [HeaderField::new("content-type", "text/plain")]
            );
            assert_eq!(data, "hello");
        }
        other => panic!("{other:?}"),
    }
    assert!(client.is_closed());
    assert!(matches!(&events[1], Event::Response { stream, .. } if *stream == id));
}

#[test]
fn server_connection_close_ends_the_pipeline() {
    let mut config = Config::default();
    config.http1.max_pipeline = 4;
    let mut client = Session::new(Role::Client, config, now());
    let ids: Vec<_> = (0..3)
        .map(|_| client.send_request(get("/"), true).unwrap())
        .collect();
    drain_output(&mut client);
    let mut input = BytesMut::from(
        &b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nokGARBAGE"[..],
    );
    client.handle_input(now(), &mut input);
    let events = drain_events(&mut client);
    assert_eq!(body_of(&events, ids[0]), (b"ok".to_vec(), true));
    // A server that says close processes no later request (RFC 9112
    // §9.6): the pipelined ones can be sent again elsewhere, and the
    // connection ended in order.
    for id in &ids[1..] {
        assert!(
            events.contains(&Event::Retryable { stream: *id }),
            "{events:?}"
        );
    }
    assert_eq!(closed_error(&events), Some(None));
    assert_eq!(&input[..], b"GARBAGE", "nothing read after the end");
}

/// A response whose body only the close ends, without `connection: close`,
/// does not say the server left the requests behind it unprocessed: RFC
/// 9112 §9.3.1 forbids sending a non-idempotent one again automatically,
/// so the POSTs written behind it are lost with the connection; the GET
/// (idempotent, RFC 9110 §9.2.2) and the request never written are
/// retryable.
#[test]
fn close_delimited_response_loses_pipelined_posts() {
    let mut config = Config::default();
    config.http1.max_pipeline = 4;
    let mut client = Session::new(Role::Client, config, now());
    let first = client.send_request(post("/1"), true).unwrap();
    let post2 = client.send_request(post("/2"), true).unwrap();
    let get3 = client.send_request(get("/3"), true).unwrap();
    let post4 = client.send_request(post("/4"), true).unwrap();
    let unsent = client.send_request(post("/5"), true).unwrap();
    let wire = text(&drain_output(&mut client));
    assert_eq!(wire.matches("HTTP/1.1\r\n").count(), 4, "{wire}");
    let mut input = BytesMut::from(&b"HTTP/1.1 200 OK\r\n\r\nprocessed-all"[..]);
    client.handle_input(now(), &mut input);
    client.handle_eof();
    let events = drain_events(&mut client);
    assert_eq!(body_of(&events, first), (b"processed-all".to_vec(), true));
    for lost in [post2, post4] {
        assert!(
            events.contains(&Event::StreamReset {
                stream: lost,
                reason: Reason::CANCEL,
                remote: true,
                violation: None,
                status: None
            }),
            "{lost:?} lost: {events:?}"
        );
        assert!(!events.contains(&Event::Retryable { stream: lost }));
    }
    for again in [get3, unsent] {
        assert!(
            events.contains(&Event::Retryable { stream: again }),
            "{again:?} retryable: {events:?}"
        );
    }
    assert_eq!(
        closed_error(&events),
        Some(Some(ConnectionError::TransportClosed))
    );
}

/// An HTTP/1.0 response without keep-alive announces the close (RFC 9112
/// §9.3): the server reads no request after it, so the POSTs pipelined
/// behind it are retryable, as after `connection: close` (RFC 9112 §9.6).
#[test]
fn http10_close_leaves_pipelined_posts_retryable() {
    let mut config = Config::default();
    config.http1.max_pipeline = 4;
    let mut client = Session::new(Role::Client, config, now());
    let first = client.send_request(post("/1"), true).unwrap();
    let rest: Vec<_> = (2..4)
        .map(|n| client.send_request(post(&format!("/{n}")), true).unwrap())
        .collect();
    drain_output(&mut client);
    let mut input = BytesMut::from(&b"HTTP/1.0 200 OK\r\n\r\ndone"[..]);
    client.handle_input(now(), &mut input);
    client.handle_eof();
    let events = drain_events(&mut client);
    assert_eq!(body_of(&events, first), (b"done".to_vec(), true));
    for id in rest {
        assert!(
            events.contains(&Event::Retryable { stream: id }),
            "{events:?}"
        );
    }
    assert_eq!(closed_error(&events), Some(None));
}

#[test]
fn malformed_response_resets_and_closes() {
    for (wire, violation) in [
        (
            &b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"[..],
            Violation::Http1(Http1Error::InvalidContentLength),
        ),
        (
            b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
            Violation::Http1(Http1Error::Syntax(HeadPart::FieldName)),
        ),
        (
            // A switch to a protocol we did not offer in Upgrade (RFC 9110
            // §7.8, §15.2.2).
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n",
            Violation::Http1(Http1Error::UnrequestedSwitch),
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            Violation::Http1(Http1Error::InvalidChunk),
        ),
    ] {
        let (mut client, id) = asking("/");
        let mut input = BytesMut::from(wire);
        client.handle_input(now(), &mut input);
        let events = drain_events(&mut client);
        assert_failed(&events, id, violation);
        assert!(client.is_closed());
    }
}

#[test]
fn unsolicited_response_closes() {
    let mut client = Session::new(Role::Client, Config::default(), now());
    let mut input = BytesMut::from(&b"\r\nHTTP/1.1 200 OK\r\n\r\n"[..]);
    client.handle_input(now(), &mut input);
    let events = drain_events(&mut client);
    assert_eq!(
        closed_error(&events),
        Some(Some(ConnectionError::Local {
            reason: Reason::PROTOCOL_ERROR,
            violation: Violation::Http1(Http1Error::UnexpectedResponse)
        }))
    );
}

/// A 408 with no request outstanding is the server closing an idle
/// connection (RFC 9110 §15.5.9), not a response out of turn: the
/// connection ends in order, the 408 and its body discarded, and a request
/// not written yet is retryable.
#[test]
fn unsolicited_408_is_an_orderly_close() {
    let (mut client, first) = asking("/");
    let mut input = BytesMut::from(&b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"[..]);
    client.handle_input(now(), &mut input);
    let next = client.send_request(get("/next"), true).unwrap();
    input.extend_from_slice(
        b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 7\r\n\r\nidle...",
    );
    client.handle_input(now(), &mut input);
    let events = drain_events(&mut client);
    assert_eq!(body_of(&events, first), (b"ok".to_vec(), true));
    assert!(
        events.contains(&Event::Retryable { stream: next }),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Response { stream, .. } if *stream == next)),
        "{events:?}"
    );
    assert_eq!(closed_error(&events), Some(None));
    assert!(client.is_closed());
}

#[test]
fn response_head_over_the_limit_closes() {
    let mut config = Config::default();
    config.http1.max_head_size = 32;
    let mut client = Session::new(Role::Client, config, now());
    let id = client.send_request(get("/"), true).unwrap();
    drain_output(&mut client);
    let mut input = BytesMut::from(&b"HTTP/1.1 200 OK\r\nX-Long: 0123456789abcdef"[..]);
    client.handle_input(now(), &mut input);
    let events = drain_events(&mut client);
    assert!(
        matches!(&events[1], Event::StreamReset { stream, violation: Some(Violation::Http1(Http1Error::HeadTooLarge { .. })), .. } if *stream == id)
    );
    assert!(client.is_closed());
}

#[test]
fn abort_ends_everything_at_once() {
    let mut pair = joined(17);
    let a = pair.client.send_request(get("/a"), true).unwrap();
    let b = pair.client.send_request(get("/b"), true).unwrap();
    pair.drive();
    pair.server_events();
    pair.server
        .send_response(a, ResponseHead::new(200), false)
        .unwrap();
    pair.server.abort(Reason::INTERNAL_ERROR);
    assert!(pair.server.poll_transmit().is_none());
    assert!(pair.server.is_closed());
    assert_eq!(
        pair.server_events(),
        [
            Event::StreamReset {
                stream: a,
                reason: Reason::INTERNAL_ERROR,
                remote: false,
                violation: None,
                status: None
            },
            Event::Closed {
                error: None,
                cause: CloseCause::Aborted {
                    reason: Reason::INTERNAL_ERROR
                }
            }
        ]
    );
    pair.client.abort(Reason::CANCEL);
    assert_eq!(
        pair.client_events(),
        [
            Event::StreamReset {
                stream: a,
                reason: Reason::CANCEL,
                remote: false,
                violation: None,
                status: None
            },
            Event::Retryable { stream: b },
            Event::Closed {
                error: None,
                cause: CloseCause::Aborted {
                    reason: Reason::CANCEL
                }
            }
        ]
    );
    pair.client.abort(Reason::CANCEL);
    pair.client.go_away(now());
    pair.client.handle_eof();
    assert!(pair.client_events().is_empty(), "closed once");
}

#[test]
fn commands_checked() {
    let mut pair = joined(19);
    let id = pair.client.send_request(get("/"), true).unwrap();
    assert_eq!(
        pair.client.send_data(id, Bytes::new(), true),
        Err(UserError::InvalidState(id))
    );
    assert_eq!(
        pair.client.send_response(id, ResponseHead::new(200), true),
        Err(UserError::WrongRole)
    );
    assert_eq!(
        pair.server.send_request(get("/"), true),
        Err(UserError::WrongRole)
    );
    assert_eq!(
        pair.server.send_response(id, ResponseHead::new(200), true),
        Err(UserError::UnknownStream(id))
    );
    pair.drive();
    pair.server_events();
    assert_eq!(
        pair.server.send_data(id, Bytes::new(), true),
        Err(UserError::InvalidState(id)),
        "data before the head"
    );
    // RFC 9110 §15: 100-599; 101 is the h2c upgrade's own.
    for bad in [101, 99, 600, 999, 1000] {
        assert_eq!(
            pair.server.send_response(id, ResponseHead::new(bad), false),
            Err(UserError::InvalidStatus(bad))
        );
    }
    assert_eq!(
        pair.server.send_response(id, ResponseHead::new(100), true),
        Err(UserError::InvalidState(id))
    );
    pair.server
        .send_response(id, ResponseHead::new(200), true)
        .unwrap();
    assert_eq!(
        pair.server.send_response(id, ResponseHead::new(200), true),
        Err(UserError::UnknownStream(id)),
        "the exchange is over"
    );
    assert_eq!(pair.server.poll_timeout(), None);
    pair.server.handle_timeout(now());
    assert!(pair.server.take_upgrade().is_none());
    assert!(pair.client.take_upgrade().is_none());
}

#[test]
fn release_capacity_is_bookkeeping() {
    let config = Config {
        window_policy: WindowPolicy::Manual,
        ..Config::default()
    };
    let mut pair = joined_with(config, Config::default(), 23);
    let id = pair.client.send_request(get("/"), true).unwrap();
    pair.drive();
    let events = pair.server_events();
    answer_requests(&mut pair.server, &events);
    pair.drive();
    let (body, _) = body_of(&pair.client_events(), id);
    let n = body.len() as u32;
    assert_eq!(pair.client.release_capacity(id, n - 1), Ok(()));
    assert_eq!(
        pair.client.release_capacity(id, 2),
        Err(UserError::ReleaseTooLarge)
    );
    assert_eq!(pair.client.release_capacity(id, 1), Ok(()));
    // An id no request had received nothing.
    let never = sid(id.value() + 2);
    assert_eq!(
        pair.client.release_capacity(never, 0),
        Err(UserError::UnknownStream(never))
    );
    // Automatic: bytes are released as they are taken.
    assert_eq!(
        pair.server.release_capacity(id, 1),
        Err(UserError::ReleaseTooLarge)
    );
}

// ---------------------------------------------------------------------------
// Server fed hand-written bytes

fn server(config: Config) -> Session {
    let mut s = Session::new(Role::Server, config, now());
    assert_eq!(s.poll_event(), Some(Event::Connected));
    s
}

/// A server that has read `wire`: its events, and the input it left.
fn serve(config: Config, wire: &[u8]) -> (Session, Vec<Event>, BytesMut) {
    let mut s = server(config);
    let mut input = BytesMut::from(wire);
    s.handle_input(now(), &mut input);
    let events = drain_events(&mut s);
    (s, events, input)
}

/// Checks that `wire` is answered with `status_line` and a closed connection.
fn assert_rejected(config: Config, wire: &[u8], status_line: &str) -> Vec<Event> {
    let (mut s, events, _) = serve(config, wire);
    let out = text(&drain_output(&mut s));
    assert!(
        out.starts_with(&format!("{status_line}\r\n")),
        "{:?} answered {out:?}",
        text(wire)
    );
    assert!(out.contains("\r\nconnection: close\r\n"), "{out}");
    assert!(out.contains("\r\ncontent-type: text/plain\r\n"), "{out}");
    assert!(s.is_closed(), "{}", text(wire));
    match closed_error(&events) {
        Some(Some(ConnectionError::Local { reason, .. })) => {
            assert_eq!(reason, Reason::PROTOCOL_ERROR)
        }
        other => panic!("{:?}: {other:?}", text(wire)),
    }
    events
}

#[test]
fn malformed_requests_get_400() {
    for wire in [
        &b"GET / HTTP/1.1\r\nBad Name: x\r\nHost: h\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost : h\r\n\r\n",
        b"GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n",
        b"G(T / HTTP/1.1\r\nHost: h\r\n\r\n",
        b"GET / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
        b"GET nowhere HTTP/1.1\r\nHost: h\r\n\r\n",
        b"GET / FOO/1.1\r\nHost: h\r\n\r\n",
        b"GET / HTTP/1.1\rHost: h\r\n\r\n",
    ] {
        let events = assert_rejected(Config::default(), wire, "HTTP/1.1 400 Bad Request");
        assert!(
            !events.iter().any(|e| matches!(e, Event::Request { .. })),
            "the application never sees it"
        );
    }
}

#[test]
fn smuggling_attempts_get_400() {
    for wire in [
        &b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"[..],
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 4\r\n\r\nabcd",
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -3\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x3\r\n\r\n",
        b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ] {
        let events = assert_rejected(Config::default(), wire, "HTTP/1.1 400 Bad Request");
        assert!(
            matches!(
                closed_error(&events),
                Some(Some(ConnectionError::Local {
                    reason: Reason::PROTOCOL_ERROR,
                    violation: Violation::Http1(
                        Http1Error::InvalidContentLength
                            | Http1Error::ContentLengthWithTransferEncoding
                            | Http1Error::ChunkedNotFinal
                            | Http1Error::TransferEncodingInHttp10
                    )
                }))
            ),
            "{:?}",
            closed_error(&events)
        );
    }
    assert_rejected(
        Config::default(),
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "HTTP/1.1 501 Not Implemented",
    );
    // The chunked coding defines no parameters, and their presence is an
    // error (RFC 9112 §7): 400, as for chunked out of place.
    for te in ["chunked;q=1", "gzip, Chunked ; x=y"] {
        let wire = format!("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: {te}\r\n\r\n");
        let events = assert_rejected(
            Config::default(),
            wire.as_bytes(),
            "HTTP/1.1 400 Bad Request",
        );
        assert!(
            matches!(
                closed_error(&events),
                Some(Some(ConnectionError::Local {
                    violation: Violation::Http1(Http1Error::ChunkedWithParameters),
                    ..
                }))
            ),
            "{te}: {:?}",
            closed_error(&events)
        );
    }
    // Identical repeated lengths are one length (RFC 9110 §8.6).
    let (_, events, _) = serve(
        Config::default(),
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
    );
    assert_eq!(body_of(&events, sid(1)), (b"abc".to_vec(), true));
}

#[test]
fn bad_chunk_in_a_request_body() {
    let events = assert_rejected(
        Config::default(),
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n",
        "HTTP/1.1 400 Bad Request",
    );
    assert!(matches!(&events[0], Event::Request { .. }));
    assert!(events.iter().any(|e| matches!(e,
        Event::StreamReset { stream, reason: Reason::PROTOCOL_ERROR, remote: false, violation: Some(_), status: Some(400) }
            if *stream == sid(1))));
}

/// A request body that breaks a rule after the application has its head
/// ends the exchange with `StreamReset` (the application holds it, so not
/// `Refused`), and the event says what the client got in its place: the
/// 400 for a chunk that breaks RFC 9112 §7.1, the 413 for a body past the
/// limit (RFC 9110 §15.5.14), or no status when the application's response
/// had already started and is cut instead.
#[test]
fn a_body_error_names_the_status_the_client_got() {
    let config = Config {
        max_request_body: 10,
        ..Config::default()
    };
    let chunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (body, status, violation) in [
        ("3\r\nabcX\r\n", 400, Http1Error::InvalidChunk),
        ("zz\r\n", 400, Http1Error::InvalidChunk),
        (
            "6\r\nabcdef\r\n6\r\n",
            413,
            Http1Error::BodyTooLarge { size: 12, max: 10 },
        ),
    ] {
        let (mut s, events, _) = serve(config.clone(), format!("{chunked}{body}").as_bytes());
        let out = text(&drain_output(&mut s));
        assert!(
            out.starts_with(&format!("HTTP/1.1 {status} ")),
            "{body:?}: {out}"
        );
        let reset = Event::StreamReset {
            stream: sid(1),
            reason: Reason::PROTOCOL_ERROR,
            remote: false,
            violation: Some(Violation::Http1(violation)),
            status: Some(status),
        };
        assert!(events.contains(&reset), "{body:?}: {events:?}");
        assert!(
            !events.iter().any(|e| matches!(e, Event::Refused { .. })),
            "{body:?}: {events:?}"
        );
    }
    // The response started: the client gets it cut short, no status.
    let mut s = server(Config::default());
    let mut input = BytesMut::from(format!("{chunked}3\r\nabc\r\n").as_bytes());
    s.handle_input(now(), &mut input);
    drain_events(&mut s);
    s.send_response(sid(1), ResponseHead::new(200), false)
        .unwrap();
    drain_output(&mut s);
    input.extend_from_slice(b"zz\r\n");
    s.handle_input(now(), &mut input);
    let events = drain_events(&mut s);
    assert!(
        events.contains(&Event::StreamReset {
            stream: sid(1),
            reason: Reason::PROTOCOL_ERROR,
            remote: false,
            violation: Some(Violation::Http1(Http1Error::InvalidChunk)),
            status: None,
        }),
        "{events:?}"
    );
}

/// RFC 9110 §4.2.1: an http URI with an empty host MUST be rejected as
/// invalid; RFC 9112 §3.2: 400 for an invalid Host.
#[test]
fn empty_host_gets_400() {
    for wire in [
        &b"GET / HTTP/1.1\r\nHost: :80\r\n\r\n"[..],
        b"GET http://:80/ HTTP/1.1\r\nHost: h\r\n\r\n",
    ] {
        assert_rejected(Config::default(), wire, "HTTP/1.1 400 Bad Request");
    }
}

#[test]
fn head_over_the_size_limit_gets_431() {
    let mut config = Config::default();
    config.http1.max_head_size = 64;
    let long = format!(
        "GET / HTTP/1.1\r\nHost: h\r\nX-Long: {}\r\n\r\n",
        "a".repeat(60)
    );
    assert_rejected(
        config.clone(),
        long.as_bytes(),
        "HTTP/1.1 431 Request Header Fields Too Large",
    );
    // Also while the head is still incomplete.
    let partial = format!("GET / HTTP/1.1\r\nHost: h\r\nX-Long: {}", "a".repeat(60));
    let events = assert_rejected(
        config,
        partial.as_bytes(),
        "HTTP/1.1 431 Request Header Fields Too Large",
    );
    assert!(matches!(
        closed_error(&events),
        Some(Some(ConnectionError::Local {
            violation: Violation::Http1(Http1Error::HeadTooLarge { .. }),
            ..
        }))
    ));
}

/// RFC 9112 §3: a request-target longer than the server will parse gets
/// 414 (RFC 9110 §15.5.15), whether the request-line has ended or not;
/// fields that carry a head over the limit still get 431.
#[test]
fn request_line_over_the_size_limit_gets_414() {
    let mut config = Config::default();
    config.http1.max_head_size = 64;
    let target = format!("/{}", "a".repeat(70));
    let whole = format!("GET {target} HTTP/1.1\r\nHost: h\r\n\r\n");
    let partial = format!("GET {target}");
    for wire in [whole, partial] {
        let events = assert_rejected(config.clone(), wire.as_bytes(), "HTTP/1.1 414 URI Too Long");
        assert!(
            matches!(
                closed_error(&events),
                Some(Some(ConnectionError::Local {
                    violation: Violation::Http1(Http1Error::RequestLineTooLong { max: 64, .. }),
                    ..
                }))
            ),
            "{wire:?}: {:?}",
            closed_error(&events)
        );
    }
    // Empty lines in front count toward the head, the line with them.
    let wire = format!("{}GET /{} HTTP/1.1\r\n", "\r\n".repeat(20), "a".repeat(20));
    assert_rejected(config.clone(), wire.as_bytes(), "HTTP/1.1 414 URI Too Long");
    // A request-line that fits, fields that do not: 431.
    let wire = format!(
        "GET /{} HTTP/1.1\r\nHost: h\r\nX: {}\r\n\r\n",
        "a".repeat(40),
        "b".repeat(20)
    );
    assert_rejected(
        config,
        wire.as_bytes(),
        "HTTP/1.1 431 Request Header Fields Too Large",
    );
}

#[test]
fn too_many_fields_get_431() {
    let mut config = Config::default();
    config.http1.max_headers = 3;
    let wire = b"GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    let events = assert_rejected(
        config.clone(),
        wire,
        "HTTP/1.1 431 Request Header Fields Too Large",
    );
    assert!(matches!(
        closed_error(&events),
        Some(Some(ConnectionError::Local {
            violation: Violation::Http1(Http1Error::TooManyHeaders { max: 3 }),
            ..
        }))
    ));
    let (_, events, _) = serve(config, b"GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n");
    assert!(matches!(&events[0], Event::Request { .. }));
}

#[test]
fn body_over_the_limit_gets_413() {
    let config = Config {
        max_request_body: 10,
        ..Config::default()
    };
    let events = assert_rejected(
        config.clone(),
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n",
        "HTTP/1.1 413 Content Too Large",
    );
    assert!(!events.iter().any(|e| matches!(e, Event::Request { .. })));
    let (_, events, _) = serve(
        config.clone(),
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789",
    );
    assert_eq!(body_of(&events, sid(1)), (b"0123456789".to_vec(), true));

    // Chunked: found out while reading, after the application saw the request.
    let events = assert_rejected(
        config,
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\n",
        "HTTP/1.1 413 Content Too Large",
    );
    assert!(matches!(
        &events[0],
        Event::Request {
            end_stream: false,
            ..
        }
    ));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::StreamReset {
            violation: Some(Violation::Http1(Http1Error::BodyTooLarge { .. })),
            ..
        }
    )));
}

/// The core's own error answer is written as a body like any other, and
/// counted apart as its own: the application never gave it.
#[test]
fn the_cores_own_answer_counts_as_its_own() {
    let config = Config {
        max_request_body: 10,
        ..Config::default()
    };
    let (mut s, _, _) = serve(
        config,
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n",
    );
    let out = text(&drain_output(&mut s));
    let (_, body) = out.split_once("\r\n\r\n").unwrap();
    let stats = s.stats();
    assert!(!body.is_empty(), "{out}");
    assert_eq!(stats.own_data_bytes_sent, body.len() as u64, "{out}");
    assert_eq!(stats.data_bytes_sent, stats.own_data_bytes_sent);
}

#[test]
fn body_error_after_the_response_started_truncates_it() {
    let mut s = server(Config::default());
    let mut input = BytesMut::from(
        &b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n"[..],
    );
    s.handle_input(now(), &mut input);
    drain_events(&mut s);
    s.send_response(sid(1), ResponseHead::new(200), false)
        .unwrap();
    s.send_data(sid(1), Bytes::from_static(b"part"), false)
        .unwrap();
    input.extend_from_slice(b"zz\r\n");
    s.handle_input(now(), &mut input);
    let out = text(&drain_output(&mut s));
    assert_eq!(
        out,
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\npart\r\n"
    );
    assert!(s.is_closed());
    assert_eq!(
        s.send_data(sid(1), Bytes::new(), true),
        Err(UserError::UnknownStream(sid(1)))
    );
}

#[test]
fn unknown_version_gets_505() {
    for wire in [
        &b"GET / HTTP/2.0\r\nHost: h\r\n\r\n"[..],
        b"GET / HTTP/1.2\r\nHost: h\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    ] {
        assert_rejected(
            Config::default(),
            wire,
            "HTTP/1.1 505 HTTP Version Not Supported",
        );
    }
}

/// RFC 9112 §3: "Recipients of an invalid request-line SHOULD respond with
/// ... 400"; a raw space in the request-target is one (§3.2 allows none),
/// though it leaves a well-formed version at the line's end. Only a
/// well-formed version in its place is 505 (§2.3).
#[test]
fn a_space_in_the_target_gets_400_not_505() {
    for wire in [
        &b"GET /a b HTTP/1.1\r\nHost: h\r\n\r\n"[..],
        b"GET /a b HTTP/2.0\r\nHost: h\r\n\r\n",
    ] {
        let events = assert_rejected(Config::default(), wire, "HTTP/1.1 400 Bad Request");
        assert!(
            matches!(
                &events[..],
                [
                    Event::Refused {
                        answer: RefusedWith::Status(400),
                        violation: Violation::Http1(Http1Error::InvalidTarget),
                        ..
                    },
                    ..
                ]
            ),
            "{events:?}"
        );
    }
}

/// RFC 9112 §3: a request-line begins with a method, a token (RFC 9110
/// §5.6.2), after the empty lines §2.2 lets a server ignore. A first byte
/// that cannot begin one is answered 400 at once, fed a byte at a time,
/// not once a head end that may never come arrives; a TLS record (RFC 8446
/// §5.1) is named.
#[test]
fn a_request_that_cannot_begin_is_refused_at_once() {
    let hello = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
    for (wire, error) in [
        (&hello[..], Http1Error::TlsHandshake),
        (b"\r\n\x16\x03\x01", Http1Error::TlsHandshake),
        (
            b"\r\n\r\n\x00\x00\x12",
            Http1Error::Syntax(HeadPart::Method),
        ),
        (b" GET / HTTP/1.1", Http1Error::Syntax(HeadPart::Method)),
        (b"\rX", Http1Error::Syntax(HeadPart::LineEnding)),
    ] {
        let mut s = server(Config::default());
        let mut input = BytesMut::new();
        for &byte in wire {
            input.extend_from_slice(&[byte]);
            s.handle_input(now(), &mut input);
            if s.is_closed() {
                break;
            }
        }
        let out = text(&drain_output(&mut s));
        assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{out}");
        assert!(out.contains(&format!("\r\n\r\n{error}\n")), "{out}");
        assert!(s.is_closed(), "{:?}", text(wire));
        let events = drain_events(&mut s);
        assert!(
            matches!(
                &events[..],
                [Event::Refused { violation: Violation::Http1(e), .. }, ..] if *e == error
            ),
            "{:?}: {events:?}",
            text(wire)
        );
    }
    // Every prefix of empty lines and a request stays undecided.
    let mut s = server(Config::default());
    let mut input = BytesMut::new();
    for &byte in b"\r\n\nGET / HTTP/1.1\r\nHost: h\r\n\r\n" {
        input.extend_from_slice(&[byte]);
        s.handle_input(now(), &mut input);
    }
    assert!(
        matches!(&drain_events(&mut s)[..], [Event::Request { .. }]),
        "a request after empty lines is read"
    );
}

#[test]
fn rejection_waits_for_earlier_responses() {
    let (mut s, events, _) = serve(
        Config::default(),
        b"GET /ok HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\n\r\n",
    );
    // The application hears of the bad request (no Host, RFC 9112 §3.2)
    // as refused with the 400 the core answers.
    assert!(
        matches!(
            &events[..],
            [
                Event::Request { .. },
                Event::Refused {
                    stream,
                    answer: RefusedWith::Status(400),
                    violation: Violation::Http1(Http1Error::MissingHost),
                },
            ] if *stream == sid(3)
        ),
        "{events:?}"
    );
    assert!(s.poll_transmit().is_none());
    s.send_response(sid(1), ResponseHead::new(200), true)
        .unwrap();
    let out = text(&drain_output(&mut s));
    let bad = out.find("HTTP/1.1 400").unwrap();
    assert!(out.starts_with("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"));
    assert!(bad > 0);
    assert!(s.is_closed());
    assert!(matches!(
        closed_error(&drain_events(&mut s)),
        Some(Some(ConnectionError::Local { .. }))
    ));
}

#[test]
fn http10_requests() {
    // No keep-alive: the body ends with the connection.
    let (mut s, events, _) = serve(Config::default(), b"GET /old HTTP/1.0\r\n\r\n");
    match &events[..] {
        [Event::Request { head, .. }] => {
            assert_eq!(head.authority, "");
            assert_eq!(head.path, "/old");
        }
        other => panic!("{other:?}"),
    }
    s.send_response(sid(1), ResponseHead::new(200), false)
        .unwrap();
    s.send_data(sid(1), Bytes::from_static(b"page"), true)
        .unwrap();
    assert_eq!(
        text(&drain_output(&mut s)),
        "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\npage"
    );
    assert!(s.is_closed());
    assert_eq!(closed_error(&drain_events(&mut s)), Some(None));

    // With a length and no keep-alive: still closed.
    let (mut s, _, _) = serve(Config::default(), b"GET / HTTP/1.0\r\n\r\n");
    s.send_response(sid(1), ResponseHead::new(200), true)
        .unwrap();
    assert_eq!(
        text(&drain_output(&mut s)),
        "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
    assert!(s.is_closed());

    // Keep-alive with a length: the connection stays for the next request.
    let (mut s, events, _) = serve(
        Config::default(),
        b"GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.0\r\n\r\n",
    );
    s.send_response(
        sid(1),
        ResponseHead::new(200).field("content-length", "1"),
        false,
    )
    .unwrap();
    s.send_data(sid(1), Bytes::from_static(b"1"), true).unwrap();
    assert_eq!(
        text(&drain_output(&mut s)),
        "HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: keep-alive\r\n\r\n1"
    );
    assert!(!s.is_closed());
    assert!(matches!(&events[1], Event::Request { stream, head, .. }
        if *stream == sid(3) && head.path == "/2"));
    // Keep-alive but no length: close-delimited after all.
    s.send_response(sid(3), ResponseHead::new(200), false)
        .unwrap();
    s.send_data(sid(3), Bytes::from_static(b"2"), true).unwrap();
    assert_eq!(
        text(&drain_output(&mut s)),
        "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n2"
    );
    assert!(s.is_closed());
}

#[test]
fn connection_close_request_is_the_last() {
    let (mut s, events, input) = serve(
        Config::default(),
        b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET /ignored HTTP/1.1\r\nHost: h\r\n\r\n",
    );
    assert_eq!(events.len(), 1);
    assert!(input.starts_with(b"GET /ignored"));
    s.send_response(sid(1), ResponseHead::new(200), true)
        .unwrap();
    assert_eq!(
        text(&drain_output(&mut s)),
        "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
    assert!(s.is_closed());
    assert_eq!(closed_error(&drain_events(&mut s)), Some(None));
}

#[test]
fn server_answers_after_client_half_close() {
    let (mut s, _, _) = serve(
        Config::default(),
        b"GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n",
    );
    s.handle_eof();
    assert!(!s.is_closed());
    s.send_response(sid(3), ResponseHead::new(200), true)
        .unwrap();
    assert!(s.poll_transmit().is_none(), "the first response goes first");
    s.send_response(sid(1), ResponseHead::new(204), true)
        .unwrap();
    let out = text(&drain_output(&mut s));
    assert!(
        out.starts_with("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n"),
        "{out}"
    );
    assert!(s.is_closed());
    assert_eq!(closed_error(&drain_events(&mut s)), Some(None));

    // A request body cut short is lost.
    let (mut s, _, _) = serve(
        Config::default(),
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nab",
    );
    s.handle_eof();
    let events = drain_events(&mut s);
    assert!(events.contains(&Event::StreamReset {
        stream: sid(1),
        reason: Reason::CANCEL,
        remote: true,
        violation: None,
        status: None
    }));
    assert_eq!(
        closed_error(&events),
        Some(Some(ConnectionError::TransportClosed))
    );
    assert!(s.is_closed());
}

#[test]
fn pipelined_requests_beyond_the_cap_stay_in_the_input() {
    let one = b"GET / HTTP/1.1\r\nHost: h\r\n\r\n";
    let wire: Vec<u8> = one.repeat(20);
    let (mut s, events, mut input) = serve(Config::default(), &wire);
    assert_eq!(events.len(), 16);
    assert_eq!(input.len(), 4 * one.len());
    for n in 0..16 {
        s.send_response(sid(2 * n + 1), ResponseHead::new(200), true)
            .unwrap();
    }
    s.handle_input(now(), &mut input);
    assert!(input.is_empty());
    assert_eq!(drain_events(&mut s).len(), 4);
}

#[test]
fn body_data_is_sliced_from_the_input() {
    let mut s = server(Config::default());
    let mut input = BytesMut::with_capacity(256);
    input.extend_from_slice(
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nbody\
          POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nmore\r\n0\r\n\r\n",
    );
    let memory = input.as_ptr_range();
    s.handle_input(now(), &mut input);
    let events = drain_events(&mut s);
    let mut slices = 0;
    for event in &events {
        if let Event::Data { data, .. } = event {
            assert!(memory.contains(&data.as_ptr()), "copied: {data:?}");
            slices += 1;
        }
        if let Event::Request { head, .. } = event {
            assert!(memory.contains(&head.path.as_ptr()));
        }
    }
    assert_eq!(slices, 2);
}

#[test]
fn idle_connections_close_cleanly() {
    let mut s = server(Config::default());
    s.go_away(now());
    assert_eq!(
        drain_events(&mut s),
        [Event::Closed {
            error: None,
            cause: CloseCause::LocalGoAway
        }]
    );
    assert!(s.is_closed());
    let mut s = server(Config::default());
    s.handle_eof();
    assert_eq!(
        drain_events(&mut s),
        [Event::Closed {
            error: None,
            cause: CloseCause::PeerClosed
        }]
    );
    let mut c = Session::new(Role::Client, Config::default(), now());
    c.handle_eof();
    assert_eq!(
        drain_events(&mut c),
        [
            Event::Connected,
            Event::Closed {
                error: None,
                cause: CloseCause::PeerClosed
            }
        ]
    );
    let mut c = Session::new(Role::Client, Config::default(), now());
    c.go_away(now());
    assert!(c.is_closed());
}

#[test]
fn no_interim_responses_to_http10() {
    let (mut s, _, _) = serve(Config::default(), b"GET / HTTP/1.0\r\n\r\n");
    s.send_response(sid(1), ResponseHead::new(103), false)
        .unwrap();
    s.send_response(sid(1), ResponseHead::new(200), true)
        .unwrap();
    assert!(text(&drain_output(&mut s)).starts_with("HTTP/1.1 200 OK\r\n"));
}

#[test]
fn chunk_extensions_are_ignored() {
    let (_, events, input) = serve(
        Config::default(),
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\
          4;name=\"quoted;value\"\r\nWiki\r\n5 ;a=b;c\r\npedia\r\n0;last\r\n\r\n",
    );
    assert_eq!(body_of(&events, sid(1)), (b"Wikipedia".to_vec(), true));
    assert!(input.is_empty());
}

#[test]
fn expect_continue_sends_100_when_the_body_is_wanted() {
    let (mut s, events, mut input) = serve(
        Config::default(),
        b"PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n",
    );
    assert!(matches!(&events[..], [Event::Request { head, .. }]
        if head.get(b"expect").is_some()));
    assert_eq!(text(&drain_output(&mut s)), "HTTP/1.1 100 Continue\r\n\r\n");
    assert!(s.poll_transmit().is_none(), "once");
    input.extend_from_slice(b"abc");
    s.handle_input(now(), &mut input);
    assert_eq!(
        body_of(&drain_events(&mut s), sid(1)),
        (b"abc".to_vec(), true)
    );
    s.send_response(sid(1), ResponseHead::new(201), true)
        .unwrap();
    let out = text(&drain_output(&mut s));
    assert!(!out.contains("connection: close"), "{out}");
    assert!(!s.is_closed());
}

#[test]
fn expect_continue_answered_at_once_closes() {
    let mut s = server(Config::default());
    let mut input = BytesMut::from(
        &b"PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nab"[..],
    );
    s.handle_input(now(), &mut input);
    drain_events(&mut s);
    s.send_response(sid(1), ResponseHead::new(417), true)
        .unwrap();
    assert_eq!(
        text(&drain_output(&mut s)),
        "HTTP/1.1 417 Expectation Failed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
    assert!(s.is_closed());

    // No 100 before the application has seen the request.
    let mut s = server(Config::default());
    let mut input = BytesMut::from(
        &b"PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n"[..],
    );
    s.handle_input(now(), &mut input);
    assert!(s.poll_transmit().is_none());
    drain_events(&mut s);
    assert_eq!(text(&drain_output(&mut s)), "HTTP/1.1 100 Continue\r\n\r\n");
}

const UPGRADE: &[u8] = b"GET /up HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n\
    Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\nAccept: */*\r\n\r\n";

#[test]
fn h2c_upgrade() {
    let preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";
    let mut wire = UPGRADE.to_vec();
    wire.extend_from_slice(preface);
    let (mut s, events, input) = serve(Config::default(), &wire);
    assert!(events.is_empty(), "the HTTP/2 session reports the request");
    assert_eq!(&input[..], preface);
    assert_eq!(drain_output(&mut s), SWITCHING_PROTOCOLS);
    assert_eq!(
        SWITCHING_PROTOCOLS,
        b"HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: h2c\r\n\r\n"
    );
    let Upgrade { request, settings } = s.take_upgrade().unwrap();
    assert_eq!(request.method, "GET");
    assert_eq!(request.authority, "h");
    assert_eq!(request.path, "/up");
    assert_eq!(request.fields, [HeaderField::new("accept", "*/*")]);
    assert_eq!(
        &settings[..],
        [0, 3, 0, 0, 0, 100, 0, 4, 0, 0xa0, 0, 0, 0, 2, 0, 0, 0, 0]
    );
    assert!(s.take_upgrade().is_none());
    assert!(!s.is_closed());
    s.go_away(now());
    s.handle_eof();
    assert!(
        drain_events(&mut s).is_empty(),
        "no Closed: the transport goes on"
    );
}

#[test]
fn h2c_upgrade_ignored_when_not_acceptable() {
    let text_of = |w: &[u8]| String::from_utf8_lossy(w).into_owned();
    let upgrade = text_of(UPGRADE);
    let mut disabled = Config::default();
    disabled.http1.allow_h2c_upgrade = false;
    let mut secure = Config::default();
    secure.http1.secure = true;
    for (config, wire) in [
        (disabled, upgrade.clone()),
        (secure, upgrade.clone()),
        (
            Config::default(),
            upgrade.replace("Upgrade: h2c", "Upgrade: websocket"),
        ),
        (
            Config::default(),
            upgrade.replace("Upgrade, HTTP2-Settings", "Upgrade"),
        ),
        (
            Config::default(),
            upgrade.replace("AAMAAABkAAQAoAAAAAIAAAAA", "AAMAAABkAAQAoAAAAAIAAA"),
        ),
        (
            Config::default(),
            upgrade.replace("AAMAAABkAAQAoAAAAAIAAAAA", "not*base64"),
        ),
        // Settings out of their range (RFC 9113 §6.5.2): ENABLE_PUSH 2, an
        // initial window of 2^31: declined before any 101 (they were
        // answered 101, then a GOAWAY), the request served as HTTP/1.1.
        (
            Config::default(),
            upgrade.replace("AAMAAABkAAQAoAAAAAIAAAAA", "AAIAAAAC"),
        ),
        (
            Config::default(),
            upgrade.replace("AAMAAABkAAQAoAAAAAIAAAAA", "AASAAAAA"),
        ),
        (
            Config::default(),
            upgrade.replace("Accept: */*", "HTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA"),
        ),
        (
            Config::default(),
            upgrade
                .replace("GET /up HTTP/1.1", "POST /up HTTP/1.1")
                .replace("Accept: */*", "Content-Length: 1")
                + "x",
        ),
        (
            Config::default(),
            upgrade.replace("HTTP/1.1\r\nHost: h", "HTTP/1.0\r\nHost: h"),
        ),
    ] {
        let (mut s, events, _) = serve(config.clone(), wire.as_bytes());
        assert!(s.take_upgrade().is_none(), "{wire}");
        match &events[0] {
            Event::Request { head, .. } => {
                assert!(head.get(b"upgrade").is_none() && head.get(b"http2-settings").is_none());
                assert_eq!(
                    head.scheme,
                    if config.http1.secure { "https" } else { "http" }
                );
            }
            other => panic!("{other:?}"),
        }
        s.send_response(sid(1), ResponseHead::new(200), true)
            .unwrap();
        assert!(text(&drain_output(&mut s)).starts_with("HTTP/1.1 200 OK\r\n"));
    }
}

// ---------------------------------------------------------------------------
// Properties

fn token() -> impl Strategy<Value = String> {
    "[A-Z]{1,10}".prop_filter("CONNECT has no path", |m| m != "CONNECT")
}

fn field_value() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[!-~]([ -~]{0,20}[!-~])?"]
}

fn fields() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(("[a-z][a-z0-9-]{0,12}", field_value()), 0..8).prop_map(|fields| {
        fields
            .into_iter()
            .filter(|(name, _)| {
                !parse::is_connection_specific(name.as_bytes())
                    && !matches!(name.as_str(), "host" | "content-length")
            })
            .collect()
    })
}

fn header_fields(fields: &[(String, String)]) -> Vec<HeaderField> {
    fields
        .iter()
        .map(|(n, v)| HeaderField::new(n.clone(), v.clone()))
        .collect()
}

/// One request as bytes, and how its body looks on the wire.
#[derive(Debug, Clone)]
struct WireRequest {
    path: String,
    body: Vec<u8>,
    chunked: bool,
}

impl WireRequest {
    fn bytes(&self) -> Vec<u8> {
        let mut out = format!("POST {} HTTP/1.1\r\nHost: h\r\n", self.path).into_bytes();
        if self.chunked {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            for piece in self.body.chunks(7) {
                out.extend_from_slice(format!("{:X};x=y\r\n", piece.len()).as_bytes());
                out.extend_from_slice(piece);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\nT: 1\r\n\r\n");
        } else {
            out.extend_from_slice(
                format!("Content-Length: {}\r\n\r\n", self.body.len()).as_bytes(),
            );
            out.extend_from_slice(&self.body);
        }
        out
    }
}

fn wire_request() -> impl Strategy<Value = WireRequest> {
    (
        "/[a-z0-9]{0,8}",
        prop::collection::vec(any::<u8>(), 0..30),
        any::<bool>(),
    )
        .prop_map(|(path, body, chunked)| WireRequest {
            path,
            body,
            chunked,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn request_heads_round_trip(
        method in token(),
        path in "/[a-zA-Z0-9/._~%-]{0,30}",
        authority in "[a-z][a-z0-9.-]{0,15}(:[0-9]{1,5})?",
        fields in fields(),
    ) {
        let head = RequestHead {
            fields: header_fields(&fields),
            ..RequestHead::new(method, "http", authority, path)
        };
        let mut buf = BytesMut::new();
        encode::put_request_line(&mut buf, &head);
        encode::put_fields(&mut buf, &head.fields, true);
        buf.extend_from_slice(b"\r\n");
        let wire = buf.freeze();
        let mut scanned = 0;
        prop_assert_eq!(parse::find_head_end(&wire, &mut scanned), Some(wire.len()));
        let parsed = parse::parse_request(&wire, 100, false, Vec::new()).unwrap();
        prop_assert_eq!(parsed.head, head);
    }

    #[test]
    fn response_heads_round_trip(status in 100u16..1000, fields in fields()) {
        let head = ResponseHead { status, fields: header_fields(&fields) };
        let mut buf = BytesMut::new();
        encode::put_status_line(&mut buf, status);
        encode::put_fields(&mut buf, &head.fields, false);
        buf.extend_from_slice(b"\r\n");
        let parsed = parse::parse_response(&buf.freeze(), 100, Vec::new()).unwrap();
        prop_assert_eq!(parsed.head, head);
    }

    #[test]
    fn chunked_bodies_round_trip(
        chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..8),
        trailers in fields(),
        seed in any::<u64>(),
    ) {
        let mut out = Output::default();
        for chunk in &chunks {
            out.data(Framing::Chunked, Bytes::from(chunk.clone()), false);
        }
        let trailers = header_fields(&trailers);
        if trailers.is_empty() {
            out.data(Framing::Chunked, Bytes::new(), true);
        } else {
            out.trailers(Framing::Chunked, &trailers);
        }
        let wire: Vec<u8> = std::iter::from_fn(|| out.pop()).flat_map(|b| b.to_vec()).collect();

        let limits = BodyLimits { max_body: u64::MAX, max_head_size: 4096, max_headers: 100 };
        let mut decoder = BodyDecoder::new(BodyKind::Chunked).unwrap();
        let mut rng = Rng::new(seed);
        let mut input = BytesMut::new();
        let mut rest = &wire[..];
        let mut body = Vec::new();
        let mut ended = None;
        while ended.is_none() {
            let n = rng.below(rest.len().min(16) + 1);
            let (piece, tail) = rest.split_at(n);
            input.extend_from_slice(piece);
            rest = tail;
            loop {
                match decoder.decode(&mut input, &limits).unwrap() {
                    Decoded::Data { data, .. } => body.extend_from_slice(&data),
                    Decoded::End(fields) => { ended = Some(fields); break; }
                    Decoded::Incomplete => break,
                }
            }
            if rest.is_empty() && ended.is_none() {
                prop_assert!(false, "incomplete after all the input");
            }
        }
        prop_assert_eq!(body, chunks.concat());
        prop_assert_eq!(ended.unwrap(), trailers);
        prop_assert!(input.is_empty());
    }

    #[test]
    fn pipelined_requests_split_anywhere(requests in prop::collection::vec(wire_request(), 1..4)) {
        let wire: Vec<u8> = requests.iter().flat_map(WireRequest::bytes).collect();
        let whole = {
            let (_, events, input) = serve(Config::default(), &wire);
            prop_assert!(input.is_empty());
            normalize(events)
        };
        prop_assert_eq!(
            whole.iter().filter(|e| matches!(e, Event::Request { .. })).count(),
            requests.len()
        );
        for (n, r) in requests.iter().enumerate() {
            let (body, ended) = body_of(&whole, sid(2 * n as u32 + 1));
            prop_assert_eq!(&body, &r.body);
            prop_assert!(ended || (r.body.is_empty() && !r.chunked));
        }
        for split in 0..=wire.len() {
            let mut s = server(Config::default());
            let mut input = BytesMut::from(&wire[..split]);
            s.handle_input(now(), &mut input);
            input.extend_from_slice(&wire[split..]);
            s.handle_input(now(), &mut input);
            prop_assert!(input.is_empty());
            prop_assert_eq!(&normalize(drain_events(&mut s)), &whole, "split at {}", split);
        }
    }
}

/// Pieces that make peer input interesting: valid lines, framing fields,
/// chunk lines, and garbage.
fn peer_input() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"GET / HTTP/1.1\r\n".to_vec()),
        Just(b"POST /p HTTP/1.0\r\n".to_vec()),
        Just(b"HTTP/1.1 200 OK\r\n".to_vec()),
        Just(b"HTTP/1.1 100 Continue\r\n".to_vec()),
        Just(b"HTTP/1.0 204 No Content\r\n".to_vec()),
        Just(b"Host: h\r\n".to_vec()),
        Just(b"Content-Length: 5\r\n".to_vec()),
        Just(b"Content-Length: 99999999999999999999\r\n".to_vec()),
        Just(b"Transfer-Encoding: chunked\r\n".to_vec()),
        Just(b"Connection: close\r\n".to_vec()),
        Just(b"Connection: keep-alive, Upgrade, HTTP2-Settings\r\n".to_vec()),
        Just(b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABk\r\n".to_vec()),
        Just(b"Expect: 100-continue\r\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"5\r\nhello\r\n".to_vec()),
        Just(b"0\r\n\r\n".to_vec()),
        Just(b"ffffffffffffffff\r\n".to_vec()),
        prop::collection::vec(any::<u8>(), 0..12),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

/// Runs a session on `wire` split at random points, answering whatever it
/// can like an application would; returns its events.
fn run_hostile(role: Role, wire: &[u8], seed: u64) -> Vec<Event> {
    let mut config = Config::default();
    config.http1.max_head_size = 256;
    config.http1.max_headers = 6;
    config.max_request_body = 64;
    config.http1.max_pipeline = 3;
    let mut s = Session::new(role, config, now());
    if role == Role::Client {
        for n in 0..4 {
            let id = s.send_request(post(&format!("/{n}")), false).unwrap();
            s.send_data(id, Bytes::from_static(b"body"), true).unwrap();
        }
    }
    let mut rng = Rng::new(seed);
    let mut input = BytesMut::new();
    let mut events = Vec::new();
    let mut rest = wire;
    loop {
        let n = rng.below(rest.len().min(30) + 1);
        let (piece, tail) = rest.split_at(n);
        input.extend_from_slice(piece);
        rest = tail;
        s.handle_input(now(), &mut input);
        while let Some(event) = s.poll_event() {
            if let Event::Request { stream, .. } = &event {
                let _ = s.send_response(*stream, ResponseHead::new(200), false);
                let _ = s.send_data(*stream, Bytes::from_static(b"ok"), true);
            }
            events.push(event);
        }
        drain_output(&mut s);
        if rest.is_empty() {
            break;
        }
    }
    s.handle_eof();
    drain_output(&mut s);
    events.extend(drain_events(&mut s));
    events
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the peer sends, nothing panics and the connection ends at
    /// most once, with nothing after its end; each exchange ends once at
    /// most.
    #[test]
    fn hostile_input_is_survived(wire in peer_input(), seed in any::<u64>()) {
        for role in [Role::Server, Role::Client] {
            let events = run_hostile(role, &wire, seed);
            closed_error(&events);
            let closed = events.iter().position(|e| matches!(e, Event::Closed { .. }));
            prop_assert!(
                closed.is_none_or(|at| at + 1 == events.len()),
                "events after Closed: {:?}",
                events
            );
            let mut ended = std::collections::HashSet::new();
            for event in &events {
                let id = match event {
                    Event::StreamReset { stream, .. } | Event::Retryable { stream } => *stream,
                    _ => continue,
                };
                prop_assert!(ended.insert(id), "{:?} ended twice: {:?}", id, events);
            }
        }
    }
}

/// RFC 9112 §9.6: a client that asks to close sends no request after that
/// one, so once it is read whole, body and all, the client is done
/// sending and the server may close at once; a keep-alive request, or a
/// closing one whose body is still coming, leaves the client free to send.
#[test]
fn a_client_is_done_sending_once_its_closing_request_is_read() {
    let mut server = Session::new(Role::Server, Config::default(), now());
    let mut input = BytesMut::from(&b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"[..]);
    server.handle_input(now(), &mut input);
    assert!(!server.peer_done_sending(), "a keep-alive request");
    let mut input = BytesMut::from(
        &b"POST /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 4\r\n\r\nab"[..],
    );
    server.handle_input(now(), &mut input);
    assert!(!server.peer_done_sending(), "its body is still coming");
    let mut input = BytesMut::from(&b"cd"[..]);
    server.handle_input(now(), &mut input);
    assert!(server.peer_done_sending(), "read whole");

    let mut http10 = Session::new(Role::Server, Config::default(), now());
    let mut input = BytesMut::from(&b"GET / HTTP/1.0\r\n\r\n"[..]);
    http10.handle_input(now(), &mut input);
    assert!(http10.peer_done_sending(), "HTTP/1.0 without keep-alive");

    let mut closed = Session::new(Role::Server, Config::default(), now());
    closed.handle_eof();
    assert!(closed.peer_done_sending(), "it closed its side");

    let mut client = Session::new(Role::Client, Config::default(), now());
    client.handle_eof();
    assert!(!client.peer_done_sending(), "only a server says so");
}
