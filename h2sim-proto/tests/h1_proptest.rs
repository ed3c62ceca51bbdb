//! Property tests of HTTP/1.1 (RFC 9112): our client against our server in
//! memory, driven by random sequences of application commands, deliveries
//! of random amounts of bytes split at random points, and clock jumps.
//!
//! After the operations the link is settled (uploads ended, every request
//! answered, everything delivered) and these are checked:
//!
//! - nothing panics, and commands that cannot be carried out return errors;
//! - every request ends exactly once: a complete response, a reset,
//!   retryable (never processed, §9.6), or the connection closing with an
//!   error while it was open; never twice, never not at all once the link
//!   has settled, and a clean close leaves no request without an outcome;
//! - nothing follows a connection's `Closed`;
//! - responses come back in request order (§9.3): each stream's response is
//!   the one the server gave that stream;
//! - request and response heads, bodies and trailers arrive byte-exact,
//!   whatever the framing (Content-Length or chunked, §6.3, §7.1), and a
//!   response to HEAD, or a 204, has no body (RFC 9110 §9.3.2, §15.3.5);
//! - with tight limits, a request head or body over them gets the server
//!   core's 431 or 413 in its place, and a response body over the client's
//!   ends that exchange; a chunked body found over the limit after its head
//!   was delivered ends in a reset that names the 413 the client got;
//! - without a reset, a shutdown or a long clock jump, every request gets
//!   its response.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2sim_proto::pair::{Dir, Pair};
use h2sim_proto::{
    Config, Connection, Event, HeaderField, Reason, RefusedWith, RequestHead, ResponseHead,
    StreamId,
};
use proptest::prelude::*;

/// What the client asks.
#[derive(Debug, Clone)]
struct RequestSpec {
    method: &'static str,
    body_len: usize,
    /// The body goes with a `content-length` (else chunked).
    content_length: bool,
    /// The body is sent later by `Upload` ops (chunked), not at once.
    streaming: bool,
    /// `connection: close` (RFC 9112 §9.6).
    close: bool,
    /// Octets of an extra field, to reach a tight head limit.
    pad: usize,
    /// `expect: 100-continue` (RFC 9110 §10.1.1); the client sends its
    /// body without waiting, which the RFC allows.
    expect: bool,
}

/// What the server answers.
#[derive(Debug, Clone)]
struct AnswerSpec {
    status: u16,
    body_len: usize,
    content_length: bool,
    /// A chunked body ends with trailers (RFC 9112 §7.1.2).
    trailers: bool,
}

#[derive(Debug, Clone)]
enum Op {
    Request(RequestSpec),
    /// More body on a streaming upload, maybe its end, maybe by trailers.
    Upload {
        pick: prop::sample::Index,
        len: usize,
        end: bool,
        trailers: bool,
    },
    /// The server answers up to `count` requests whose body has arrived
    /// (or, `early`, any unanswered one).
    Answer {
        count: usize,
        early: bool,
        spec: AnswerSpec,
    },
    ClientReset {
        pick: prop::sample::Index,
    },
    ServerReset {
        pick: prop::sample::Index,
    },
    GoAway {
        server: bool,
    },
    Advance {
        millis: u64,
    },
    /// Delivers up to `bytes` of what is in flight one way.
    Deliver {
        to_server: bool,
        bytes: usize,
    },
    Flush,
}

#[derive(Debug, Clone)]
struct Scenario {
    client_pipeline: usize,
    server_pipeline: usize,
    /// Head and body limits that some messages break (the server answers
    /// 431 or 413 itself, the client refuses a response), and idle
    /// timeouts that clock jumps reach.
    tight: bool,
    seed: u64,
    ops: Vec<Op>,
}

impl RequestSpec {
    /// The request may end the connection before the requests behind it
    /// are answered: it asks to close, its head may break a tight limit,
    /// or an early answer to its `100-continue` closes the connection
    /// (RFC 9110 §10.1.1).
    fn disrupts(&self) -> bool {
        self.close || self.pad > 0 || self.expect
    }
}

fn request_spec() -> impl Strategy<Value = RequestSpec> {
    (
        prop_oneof![3 => Just("GET"), 1 => Just("HEAD"), 4 => Just("POST")],
        prop_oneof![Just(0usize), 1usize..64, 64usize..5000],
        any::<bool>(),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.05),
        prop_oneof![3 => Just(0usize), 1 => 1usize..400],
        prop::bool::weighted(0.25),
    )
        .prop_map(
            |(method, body_len, content_length, streaming, close, pad, expect)| {
                let body = method == "POST";
                RequestSpec {
                    method,
                    body_len: if body { body_len } else { 0 },
                    content_length: body && content_length && !streaming,
                    streaming: body && streaming,
                    close,
                    pad,
                    expect: body && expect,
                }
            },
        )
}

fn answer_spec() -> impl Strategy<Value = AnswerSpec> {
    (
        prop_oneof![4 => Just(200u16), 1 => Just(204), 1 => Just(404), 1 => Just(500)],
        prop_oneof![Just(0usize), 1usize..64, 64usize..6000],
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(status, body_len, content_length, trailers)| {
            let body_len = if status == 204 { 0 } else { body_len };
            AnswerSpec {
                status,
                body_len,
                content_length,
                trailers: trailers && !content_length && body_len > 0,
            }
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => request_spec().prop_map(Op::Request),
        2 => (
            any::<prop::sample::Index>(),
            0usize..3000,
            any::<bool>(),
            prop::bool::weighted(0.3),
        )
            .prop_map(|(pick, len, end, trailers)| Op::Upload {
                pick,
                len,
                end,
                trailers,
            }),
        5 => (1usize..4, prop::bool::weighted(0.2), answer_spec())
            .prop_map(|(count, early, spec)| Op::Answer { count, early, spec }),
        1 => any::<prop::sample::Index>().prop_map(|pick| Op::ClientReset { pick }),
        1 => any::<prop::sample::Index>().prop_map(|pick| Op::ServerReset { pick }),
        1 => any::<bool>().prop_map(|server| Op::GoAway { server }),
        1 => prop_oneof![9 => 0u64..2000, 1 => Just(40_000u64)]
            .prop_map(|millis| Op::Advance { millis }),
        5 => (any::<bool>(), 1usize..8000)
            .prop_map(|(to_server, bytes)| Op::Deliver { to_server, bytes }),
        2 => Just(Op::Flush),
    ]
}

/// Whether `op` may end requests without their responses.
fn disrupts(op: &Op) -> bool {
    match op {
        Op::Request(spec) => spec.disrupts(),
        Op::Advance { millis } => *millis >= 30_000,
        Op::ClientReset { .. } | Op::ServerReset { .. } | Op::GoAway { .. } => true,
        Op::Upload { .. } | Op::Answer { .. } | Op::Deliver { .. } | Op::Flush => false,
    }
}

/// Half the scenarios are calm (nothing in them disrupts), so that the
/// check that every request gets its response runs often.
fn scenario() -> impl Strategy<Value = Scenario> {
    (
        1usize..5,
        1usize..5,
        any::<u64>(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(op(), 1..40),
    )
        .prop_map(
            |(client_pipeline, server_pipeline, seed, calm, tight, mut ops)| {
                if calm {
                    ops.retain(|op| !disrupts(op));
                }
                Scenario {
                    client_pipeline,
                    server_pipeline,
                    tight: tight && !calm,
                    seed,
                    ops,
                }
            },
        )
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Complete,
    Reset,
    Retryable,
    /// The connection closed (with an error) while it was open.
    Closed,
}

#[derive(Debug)]
struct ClientStream {
    path: String,
    method: &'static str,
    body: Vec<u8>,
    /// The body is all queued.
    upload_done: bool,
    status: Option<u16>,
    response: Vec<u8>,
    /// The server's core answered (431, 413), not its application.
    core_answer: bool,
    outcome: Option<Outcome>,
}

#[derive(Debug)]
struct ServerStream {
    /// The client's id of this exchange: the same as the server's unless
    /// the client withdrew a request before writing it.
    client_id: StreamId,
    body: Vec<u8>,
    body_done: bool,
    /// What the server answered: status and body.
    answer: Option<(u16, Vec<u8>)>,
    reset: bool,
    /// The status the server's core answered in place of the application
    /// when it reset the exchange (`Event::StreamReset`'s `status`).
    core_status: Option<u16>,
}

/// The client, the server and what each has seen.
struct World {
    pair: Pair,
    client: BTreeMap<StreamId, ClientStream>,
    server: BTreeMap<StreamId, ServerStream>,
    /// The server's id of each exchange it read, by the client's id.
    server_id: BTreeMap<StreamId, StreamId>,
    client_closed: Option<bool>,
    server_closed: Option<bool>,
    /// A reset, a shutdown, `connection: close` or a long clock jump
    /// happened: requests may end without a response.
    disruptive: bool,
    requests: usize,
}

/// One of the streams that `keep` holds for, chosen by `pick`.
fn pick_where<S>(
    streams: &BTreeMap<StreamId, S>,
    pick: &prop::sample::Index,
    keep: impl Fn(&S) -> bool,
) -> Option<StreamId> {
    let ids: Vec<StreamId> = streams
        .iter()
        .filter(|(_, s)| keep(s))
        .map(|(&id, _)| id)
        .collect();
    (!ids.is_empty()).then(|| ids[pick.index(ids.len())])
}

/// The trailer section of the client's exchange `id`, either way.
fn trailer_fields(id: StreamId) -> Vec<HeaderField> {
    vec![HeaderField::new("x-checksum", format!("c{}", id.value()))]
}

fn body_of(len: usize, salt: usize) -> Vec<u8> {
    (0..len).map(|i| b'a' + ((i + salt) % 26) as u8).collect()
}

impl World {
    fn new(s: &Scenario) -> Self {
        let now = Instant::now();
        let mut client = Config::default();
        client.http1.max_pipeline = s.client_pipeline;
        let mut server = Config::default();
        server.http1.server_max_pipeline = s.server_pipeline;
        if s.tight {
            server.http1.max_head_size = 300;
            server.max_request_body = 3000;
            // Clock jumps of up to 2 s make either side go idle.
            client.idle_timeout = Some(Duration::from_secs(1));
            server.idle_timeout = Some(Duration::from_millis(1500));
        }
        let pair = Pair::join(
            Connection::client_http1(client, now).unwrap(),
            Connection::server(server, now).unwrap(),
            now,
        )
        .split(s.seed);
        World {
            pair,
            client: BTreeMap::new(),
            server: BTreeMap::new(),
            server_id: BTreeMap::new(),
            client_closed: None,
            server_closed: None,
            disruptive: s.tight,
            requests: 0,
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Request(spec) => self.request(spec),
            Op::Upload {
                pick,
                len,
                end,
                trailers,
            } => {
                if let Some(id) = pick_where(&self.client, pick, |s| !s.upload_done) {
                    self.upload(id, *len, *end, *trailers);
                }
            }
            Op::Answer { count, early, spec } => {
                for id in self.answerable(*early).into_iter().take(*count) {
                    self.answer(id, spec);
                }
            }
            Op::ClientReset { pick } => {
                let open = pick_where(&self.client, pick, |s| s.outcome.is_none());
                if let Some(id) = open
                    && self.pair.client.reset(id, Reason::CANCEL).is_ok()
                {
                    self.disruptive = true;
                    self.client.get_mut(&id).unwrap().outcome = Some(Outcome::Reset);
                }
            }
            Op::ServerReset { pick } => {
                let open = pick_where(&self.server, pick, |s| !s.reset);
                if let Some(id) = open
                    && self.pair.server.reset(id, Reason::INTERNAL_ERROR).is_ok()
                {
                    self.disruptive = true;
                    self.server.get_mut(&id).unwrap().reset = true;
                }
            }
            Op::GoAway { server } => {
                self.disruptive = true;
                let now = self.pair.now;
                if *server {
                    self.pair.server.go_away(now);
                } else {
                    self.pair.client.go_away(now);
                }
            }
            Op::Advance { millis } => {
                if *millis >= 30_000 {
                    self.disruptive = true;
                }
                self.pair.advance(Duration::from_millis(*millis));
            }
            Op::Deliver { to_server, bytes } => {
                let dir = Dir::toward_server(*to_server);
                self.pair.collect(dir);
                self.pair.deliver(dir, *bytes);
            }
            Op::Flush => {
                self.pair.drive();
            }
        }
        self.take_events();
    }

    fn request(&mut self, spec: &RequestSpec) {
        let n = self.requests;
        self.requests += 1;
        let path = format!("/r/{n}");
        let mut head = RequestHead::new(spec.method, "http", "example.com", path.clone());
        head.fields.push(HeaderField::new("x-n", n.to_string()));
        if spec.content_length {
            head.fields.push(HeaderField::new(
                "content-length",
                spec.body_len.to_string(),
            ));
        }
        if spec.close {
            head.fields.push(HeaderField::new("connection", "close"));
        }
        if spec.pad > 0 {
            head.fields
                .push(HeaderField::new("x-pad", "p".repeat(spec.pad)));
        }
        if spec.expect {
            head.fields.push(HeaderField::new("expect", "100-continue"));
        }
        let body = body_of(spec.body_len, n);
        let no_body = spec.method != "POST" || (body.is_empty() && !spec.streaming);
        let Ok(id) = self.pair.client.send_request(head, no_body) else {
            return;
        };
        if spec.disrupts() {
            self.disruptive = true;
        }
        let mut stream = ClientStream {
            path,
            method: spec.method,
            body: Vec::new(),
            upload_done: no_body,
            status: None,
            response: Vec::new(),
            core_answer: false,
            outcome: None,
        };
        if !no_body && !spec.streaming {
            self.pair
                .client
                .send_data(id, Bytes::from(body.clone()), true)
                .unwrap();
            stream.body = body;
            stream.upload_done = true;
        }
        assert!(self.client.insert(id, stream).is_none(), "{id:?} reused");
    }

    /// More of `id`'s body; with `end`, its end, by trailers if asked.
    fn upload(&mut self, id: StreamId, len: usize, end: bool, trailers: bool) {
        let s = self.client.get_mut(&id).unwrap();
        let piece = body_of(len, s.body.len());
        let client = &mut self.pair.client;
        let sent = if end && trailers {
            client
                .send_data(id, Bytes::from(piece.clone()), false)
                .and_then(|()| client.send_trailers(id, trailer_fields(id)))
        } else {
            client.send_data(id, Bytes::from(piece.clone()), end)
        };
        if sent.is_ok() {
            s.body.extend_from_slice(&piece);
            s.upload_done = end;
        }
    }

    /// Server streams not yet answered: those whose request body is in,
    /// or any with `early`.
    fn answerable(&self, early: bool) -> Vec<StreamId> {
        self.server
            .iter()
            .filter(|(_, s)| s.answer.is_none() && !s.reset && (early || s.body_done))
            .map(|(&id, _)| id)
            .collect()
    }

    fn answer(&mut self, id: StreamId, spec: &AnswerSpec) {
        let client_id = self.server[&id].client_id;
        let head_request = self.client[&client_id].method == "HEAD";
        let body = if head_request {
            Vec::new()
        } else {
            body_of(spec.body_len, id.value() as usize)
        };
        let mut head = ResponseHead::new(spec.status);
        if spec.content_length && !head_request {
            head.fields
                .push(HeaderField::new("content-length", body.len().to_string()));
        }
        let server = &mut self.pair.server;
        let sent = if body.is_empty() {
            server.send_response(id, head, true)
        } else if spec.trailers {
            let client_id = self.server[&id].client_id;
            server
                .send_response(id, head, false)
                .and_then(|()| server.send_data(id, Bytes::from(body.clone()), false))
                .and_then(|()| server.send_trailers(id, trailer_fields(client_id)))
        } else {
            server
                .send_response(id, head, false)
                .and_then(|()| server.send_data(id, Bytes::from(body.clone()), true))
        };
        if sent.is_ok() {
            self.server.get_mut(&id).unwrap().answer = Some((spec.status, body));
        }
    }

    fn take_events(&mut self) {
        while let Some(event) = self.pair.server.poll_event() {
            self.server_event(event);
        }
        while let Some(event) = self.pair.client.poll_event() {
            self.client_event(event);
        }
    }

    fn server_event(&mut self, event: Event) {
        assert!(
            self.server_closed.is_none(),
            "server: {event:?} after Closed"
        );
        match event {
            Event::Request {
                stream,
                head,
                end_stream,
            } => {
                let (&client_id, sent) = self
                    .client
                    .iter()
                    .find(|(_, c)| c.path.as_bytes() == head.path)
                    .unwrap_or_else(|| panic!("server: request {head:?} nobody sent"));
                assert_eq!(head.method, sent.method.as_bytes(), "{stream:?}");
                // Requests are read in the order they were sent (§9.3).
                if let Some((_, &last)) = self.server_id.last_key_value() {
                    assert!(last < stream, "server: {stream:?} after {last:?}");
                }
                assert!(
                    self.server_id.range(client_id..).next().is_none(),
                    "server: {client_id:?} read out of order"
                );
                self.server_id.insert(client_id, stream);
                let previous = self.server.insert(
                    stream,
                    ServerStream {
                        client_id,
                        body: Vec::new(),
                        body_done: end_stream,
                        answer: None,
                        reset: false,
                        core_status: None,
                    },
                );
                assert!(previous.is_none(), "server: {stream:?} twice");
                self.pair.server.recycle_request(head);
            }
            Event::Data {
                stream,
                data,
                end_stream,
            } => {
                let s = self
                    .server
                    .get_mut(&stream)
                    .unwrap_or_else(|| panic!("server: data on unknown {stream:?}"));
                assert!(!s.body_done, "server: data on {stream:?} after its end");
                s.body.extend_from_slice(&data);
                let sent = &self.client[&s.client_id].body;
                assert!(
                    sent.starts_with(&s.body),
                    "server: {stream:?} body is not what was sent"
                );
                if end_stream {
                    assert_eq!(s.body.len(), sent.len(), "server: {stream:?} body cut");
                    s.body_done = true;
                }
            }
            Event::Trailers { stream, fields } => {
                let s = self
                    .server
                    .get_mut(&stream)
                    .unwrap_or_else(|| panic!("server: trailers on unknown {stream:?}"));
                assert!(!s.body_done, "server: trailers on {stream:?} after its end");
                assert_eq!(fields, trailer_fields(s.client_id), "server: {stream:?}");
                assert_eq!(
                    s.body, self.client[&s.client_id].body,
                    "server: {stream:?} body cut"
                );
                s.body_done = true;
            }
            Event::StreamReset {
                stream,
                violation,
                status,
                ..
            } => {
                // The client's bodies are well-formed: the only body error
                // is one past the limit, answered with 413 unless the
                // response had started (RFC 9110 §15.5.14).
                assert!(
                    status.is_none() || (status == Some(413) && violation.is_some()),
                    "server: {stream:?} reset with {status:?} for {violation:?}"
                );
                if let Some(s) = self.server.get_mut(&stream) {
                    s.reset = true;
                    s.core_status = status;
                }
            }
            Event::Refused {
                stream,
                answer,
                violation,
            } => {
                // The core's 413 or 431 in place of a request the
                // application never gets.
                assert!(
                    !self.server.contains_key(&stream),
                    "server: {stream:?} refused after its request"
                );
                assert!(
                    matches!(answer, RefusedWith::Status(413 | 431)),
                    "server: {stream:?} refused with {answer} for {violation}"
                );
            }
            Event::Closed { error, .. } => self.server_closed = Some(error.is_some()),
            Event::Connected | Event::Frame { .. } => {}
            other => panic!("server: unexpected {other:?}"),
        }
    }

    fn live_client_stream(&mut self, id: StreamId, what: &str) -> &mut ClientStream {
        let s = self
            .client
            .get_mut(&id)
            .unwrap_or_else(|| panic!("client: {what} on unknown {id:?}"));
        if let Some(outcome) = s.outcome {
            panic!("client: {what} on {id:?} after it ended ({outcome:?})");
        }
        s
    }

    fn client_event(&mut self, event: Event) {
        assert!(
            self.client_closed.is_none(),
            "client: {event:?} after Closed"
        );
        match event {
            Event::Response {
                stream,
                head,
                end_stream,
            } => {
                let answer = self.answer_to(stream);
                let s = self.live_client_stream(stream, "response");
                assert!(s.status.is_none(), "client: second response on {stream:?}");
                if head.status == 100 {
                    assert!(!end_stream, "client: {stream:?} ended by 100");
                    return;
                }
                s.status = Some(head.status);
                // The application's statuses are never 413 or 431: those
                // are the server's core refusing a request (RFC 9110
                // §15.5.14, RFC 6585 §5), in place of any answer.
                let answer = answer.filter(|a| a.0 == head.status);
                if answer.is_none() {
                    assert!(
                        matches!(head.status, 413 | 431),
                        "client: {stream:?} got {}, not what was answered",
                        head.status
                    );
                    s.core_answer = true;
                }
                if end_stream {
                    Self::complete(stream, s, answer.map(|a| a.1).as_deref());
                }
            }
            Event::Data {
                stream,
                data,
                end_stream,
            } => {
                let answer = self
                    .answer_to(stream)
                    .filter(|_| !self.client[&stream].core_answer);
                let s = self.live_client_stream(stream, "data");
                assert!(
                    s.status.is_some(),
                    "client: data on {stream:?} before its head"
                );
                s.response.extend_from_slice(&data);
                if let Some(answer) = &answer {
                    assert!(
                        answer.1.starts_with(&s.response),
                        "client: {stream:?} body is not what was answered"
                    );
                }
                if end_stream {
                    Self::complete(stream, s, answer.map(|a| a.1).as_deref());
                }
            }
            Event::Trailers { stream, fields } => {
                let answer = self.answer_to(stream);
                let s = self.live_client_stream(stream, "trailers");
                assert!(
                    s.status.is_some(),
                    "client: trailers on {stream:?} before its head"
                );
                assert!(
                    !s.core_answer,
                    "client: trailers on the core's answer {stream:?}"
                );
                assert_eq!(fields, trailer_fields(stream), "client: {stream:?}");
                Self::complete(stream, s, answer.map(|a| a.1).as_deref());
            }
            Event::StreamReset { stream, .. } => {
                self.live_client_stream(stream, "reset").outcome = Some(Outcome::Reset);
            }
            Event::Retryable { stream } => {
                let s = self.live_client_stream(stream, "retryable");
                assert!(
                    s.status.is_none(),
                    "client: {stream:?} retryable after its response"
                );
                s.outcome = Some(Outcome::Retryable);
            }
            Event::Closed { error, .. } => {
                let pending: Vec<StreamId> = self
                    .client
                    .iter()
                    .filter(|(_, s)| s.outcome.is_none())
                    .map(|(&id, _)| id)
                    .collect();
                assert!(
                    error.is_some() || pending.is_empty(),
                    "client: clean close with {pending:?} pending: they vanished"
                );
                for id in pending {
                    self.client.get_mut(&id).unwrap().outcome = Some(Outcome::Closed);
                }
                self.client_closed = Some(error.is_some());
            }
            Event::Connected | Event::Frame { .. } => {}
            other => panic!("client: unexpected {other:?}"),
        }
    }

    /// What the server's application answered to the client's `id`.
    fn answer_to(&self, id: StreamId) -> Option<(u16, Vec<u8>)> {
        self.server[self.server_id.get(&id)?].answer.clone()
    }

    /// The response to `id` is complete: its body is `answered`, unless
    /// the core answered (`None`), or nothing for HEAD.
    fn complete(id: StreamId, s: &mut ClientStream, answered: Option<&[u8]>) {
        if let Some(answered) = answered {
            let expected: &[u8] = if s.method == "HEAD" { &[] } else { answered };
            assert_eq!(s.response, expected, "client: {id:?} response body");
        }
        s.outcome = Some(Outcome::Complete);
    }

    /// Ends the uploads, answers every request, and delivers everything,
    /// until nothing moves.
    fn settle(&mut self) {
        // An upload answered early still has to end: the requests behind
        // it wait for the wire (messages do not interleave, §9.3).
        let uploads: Vec<StreamId> = self
            .client
            .iter()
            .filter(|(_, s)| !s.upload_done)
            .map(|(&id, _)| id)
            .collect();
        for id in uploads {
            self.upload(id, 10, true, false);
        }
        let spec = AnswerSpec {
            status: 200,
            body_len: 100,
            content_length: true,
            trailers: false,
        };
        for _ in 0..50 {
            self.pair.drive();
            self.take_events();
            let waiting = self.answerable(false);
            if waiting.is_empty() {
                break;
            }
            for id in waiting {
                self.answer(id, &spec);
            }
        }
        self.pair.drive();
        self.take_events();
    }

    fn check(&self) {
        for (id, s) in &self.client {
            if !self.disruptive {
                assert_eq!(
                    s.outcome,
                    Some(Outcome::Complete),
                    "{id:?} did not complete: {s:?}"
                );
            } else {
                assert!(s.outcome.is_some(), "{id:?} never ended: {s:?}");
            }
        }
        for (id, s) in &self.server {
            let got = self.client.get(&s.client_id).and_then(|c| c.status);
            if let Some(status) = s.core_status.filter(|_| got.is_some()) {
                assert_eq!(got, Some(status), "{id:?}: not the status the reset named");
            }
        }
    }
}

fn run(s: &Scenario) {
    let mut world = World::new(s);
    for op in &s.ops {
        world.apply(op);
    }
    world.settle();
    world.check();
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random operations keep the invariants of the file's head.
    #[test]
    fn random_operations_keep_the_invariants(scenario in scenario()) {
        run(&scenario);
    }
}
