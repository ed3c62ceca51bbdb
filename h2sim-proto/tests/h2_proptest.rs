//! Property tests of the whole connection: our client against our server,
//! driven by random sequences of application commands, deliveries of random
//! amounts of bytes and clock jumps, with an independent observer decoding
//! every byte on the wire (`support::observer`).
//!
//! After the operations the link is settled (flushed, the server answering
//! everything, held receive capacity released) and these are checked:
//!
//! - nothing panics, and commands that cannot be carried out return errors;
//! - every request (and every push the client heard of) ends exactly once:
//!   a complete response, a reset, retryable (RFC 9113 §8.7), the client's
//!   own cancel, or the connection closing while it was open — never twice,
//!   never not at all once the link has settled;
//! - events of a stream come in protocol order (head, data, trailers; §8.1);
//! - request and response heads, bodies and trailers arrive byte-exact
//!   whenever they arrive complete (so HPACK contexts stay in step, RFC 7541,
//!   RFC 9113 §4.3);
//! - between two instances of this implementation neither side accuses the
//!   other of breaking a rule, except the races the RFC allows (REFUSED_STREAM
//!   for streams above a lowered MAX_CONCURRENT_STREAMS, §5.1.2; refused
//!   pushes, §8.4.2) and our own resource limits;
//! - flow control, as the observer sees it on the wire (§5.2, §6.9): no DATA
//!   beyond either window, no frame above the peer's SETTINGS_MAX_FRAME_SIZE
//!   (§4.2), no window above 2^31-1 (§6.9.1), every DATA byte written is read,
//!   every byte read reaches the application unless its stream was reset,
//!   and once settled the connection windows are back near their targets
//!   (no credit leaks).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use h2sim_proto::frame::{Data, Frame, MAX_WINDOW_SIZE, PREFACE, Setting, Settings, WindowUpdate};
use h2sim_proto::pair::{Dir, Observer};
use h2sim_proto::{
    Config, ConnectionError, Event, HeaderField, LocalSettings, Reason, RequestHead, ResponseHead,
    StreamId, UserError, Violation, WindowPolicy,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use support::observer::{Link, WireObserver, link};
use support::{Pair, Rng};

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

/// The configuration of one endpoint.
#[derive(Debug, Clone)]
struct Side {
    initial_window_size: u32,
    connection_window_size: u32,
    max_frame_size: u32,
    max_concurrent_streams: u32,
    header_table_size: u32,
    encoder_table_size: u32,
    max_header_list_size: u32,
    enable_push: bool,
    manual: bool,
}

impl Side {
    fn config(&self) -> Config {
        Config {
            initial_window_size: self.initial_window_size,
            connection_window_size: self.connection_window_size,
            max_frame_size: self.max_frame_size,
            max_concurrent_streams: self.max_concurrent_streams,
            header_table_size: self.header_table_size,
            encoder_table_size: self.encoder_table_size,
            max_header_list_size: self.max_header_list_size,
            enable_push: self.enable_push,
            window_policy: if self.manual {
                WindowPolicy::Manual
            } else {
                WindowPolicy::Automatic
            },
            // `settle` runs the clock to the last timer: the idle timer
            // would end every connection it checks.
            idle_timeout: None,
            ..Config::default()
        }
    }

    fn settings(&self) -> LocalSettings {
        LocalSettings {
            header_table_size: self.header_table_size,
            enable_push: self.enable_push,
            max_concurrent_streams: self.max_concurrent_streams,
            initial_window_size: self.initial_window_size,
            max_frame_size: self.max_frame_size,
            max_header_list_size: self.max_header_list_size,
            enable_connect_protocol: false,
        }
    }

    /// The connection receive window it keeps (the default 65,535 unless
    /// raised, RFC 9113 §6.9.2).
    fn connection_target(&self) -> i64 {
        i64::from(self.connection_window_size.max(65_535))
    }
}

/// New SETTINGS values for `update_settings`.
#[derive(Debug, Clone)]
struct NewSettings {
    initial_window_size: u32,
    max_frame_size: u32,
    max_concurrent_streams: u32,
    header_table_size: u32,
    /// Client only: flip SETTINGS_ENABLE_PUSH.
    toggle_push: bool,
}

#[derive(Debug, Clone)]
struct RequestSpec {
    /// GET, HEAD or POST (only POST has a body).
    method: &'static str,
    body_len: usize,
    fields: Vec<(String, String)>,
    /// Body sent in this many `send_data` calls.
    chunks: u8,
    trailers: bool,
    content_length: bool,
    /// POST: the body stays open, for `Op::Upload` (and settling) to finish.
    streaming: bool,
}

#[derive(Debug, Clone)]
struct AnswerSpec {
    status: u16,
    body_len: usize,
    chunks: u8,
    trailers: bool,
    interim: bool,
    echo: bool,
    content_length: bool,
}

#[derive(Debug, Clone)]
enum Op {
    /// Client: a GET, a HEAD, or a POST with a body (maybe streamed).
    Request(RequestSpec),
    /// Client: more body on a streaming upload, maybe the end of it.
    Upload {
        pick: Index,
        len: usize,
        end: bool,
    },
    /// Client: cancels an open request or refuses a promised push.
    ClientReset {
        pick: Index,
        push: bool,
    },
    Ping {
        server: bool,
    },
    /// Server: answers up to `count` requests whose body has arrived (or
    /// any unanswered one with `early`, before the request body is complete,
    /// RFC 9113 §8.1).
    Answer {
        count: usize,
        early: bool,
        spec: AnswerSpec,
    },
    /// Server: pushes a response (promise, then response) on an open request.
    Push {
        pick: Index,
        spec: AnswerSpec,
    },
    /// Server: resets a stream it has not finished.
    ServerReset {
        pick: Index,
        reason: Reason,
    },
    Settings {
        server: bool,
        settings: NewSettings,
    },
    GoAway {
        server: bool,
    },
    Abort {
        server: bool,
        error: bool,
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
    /// Manual window policy: releases a quarter per `quarters` of the
    /// capacity the side holds.
    Release {
        server: bool,
        quarters: u8,
    },
}

#[derive(Debug, Clone)]
struct Scenario {
    client: Side,
    server: Side,
    seed: u64,
    ops: Vec<Op>,
}

/// SETTINGS_INITIAL_WINDOW_SIZE: 0 (stalls until settling reopens it),
/// small, or large. Small starts at 256 bytes: a window of a few bytes is
/// handled, but moving 200 kB through it takes as many round trips.
fn window() -> impl Strategy<Value = u32> {
    prop_oneof![
        1 => Just(0u32),
        3 => 256u32..2_000,
        3 => 2_000u32..70_000,
        3 => 70_000u32..=1 << 20,
    ]
}

fn frame_size() -> impl Strategy<Value = u32> {
    prop_oneof![2 => Just(16_384u32), 1 => 16_384u32..=1 << 20]
}

fn concurrency() -> impl Strategy<Value = u32> {
    prop_oneof![1 => 1u32..4, 2 => 4u32..300]
}

fn side() -> impl Strategy<Value = Side> {
    (
        window(),
        prop_oneof![Just(65_535u32), 65_535u32..8 << 20],
        frame_size(),
        concurrency(),
        0u32..=8192,
        0u32..=8192,
        prop_oneof![9 => Just(65_536u32), 1 => 300u32..4_000],
        prop::bool::weighted(0.8),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(iws, cws, mfs, mcs, hts, ets, mhls, push, manual)| Side {
            initial_window_size: iws,
            connection_window_size: cws,
            max_frame_size: mfs,
            max_concurrent_streams: mcs,
            header_table_size: hts,
            encoder_table_size: ets,
            max_header_list_size: mhls,
            enable_push: push,
            manual,
        })
}

fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("accept".to_owned()),
        Just("user-agent".to_owned()),
        Just("cookie".to_owned()),
        Just("authorization".to_owned()),
        Just("cache-control".to_owned()),
        Just("x-trace".to_owned()),
        "x-[a-z0-9-]{1,12}",
    ]
}

/// Valid field values (RFC 9113 §8.2.1): visible characters, inner spaces.
fn field_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[!-~]([ -~]{0,30}[!-~])?",
        2 => prop::sample::select(vec!["gzip", "no-cache", "*/*", "h2sim/1.0", "a=1; b=2"])
            .prop_map(str::to_owned),
        1 => Just(String::new()),
        1 => (b'a'..=b'z', 100usize..6_000).prop_map(|(c, n)| char::from(c).to_string().repeat(n)),
    ]
}

fn fields(max: usize) -> impl Strategy<Value = Vec<(String, String)>> {
    vec((field_name(), field_value()), 0..max)
}

fn body_len(max: usize) -> impl Strategy<Value = usize> {
    prop_oneof![
        3 => 0..1_000usize,
        2 => 0..20_000usize,
        1 => 0..max,
    ]
}

fn request() -> impl Strategy<Value = RequestSpec> {
    (
        prop::sample::select(vec!["GET", "GET", "HEAD", "POST", "POST", "POST"]),
        body_len(200_000),
        fields(6),
        1u8..4,
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.25),
    )
        .prop_map(
            |(method, body_len, fields, chunks, trailers, content_length, streaming)| RequestSpec {
                method,
                body_len,
                fields,
                chunks,
                trailers,
                content_length: content_length && !streaming,
                streaming,
            },
        )
}

fn answer() -> impl Strategy<Value = AnswerSpec> {
    (
        prop::sample::select(vec![200u16, 200, 201, 203, 204, 304, 404, 500, 503]),
        body_len(100_000),
        1u8..4,
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.7),
        prop::bool::weighted(0.3),
    )
        .prop_map(
            |(status, body_len, chunks, trailers, interim, echo, content_length)| AnswerSpec {
                status,
                body_len,
                chunks,
                trailers,
                interim,
                echo,
                content_length,
            },
        )
}

fn new_settings() -> impl Strategy<Value = NewSettings> {
    (
        prop_oneof![1 => Just(0u32), 6 => 256u32..=1 << 20, 2 => Just(65_535u32)],
        frame_size(),
        concurrency(),
        0u32..=8192,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(iws, mfs, mcs, hts, toggle_push)| NewSettings {
            initial_window_size: iws,
            max_frame_size: mfs,
            max_concurrent_streams: mcs,
            header_table_size: hts,
            toggle_push,
        })
}

fn reason() -> impl Strategy<Value = Reason> {
    prop::sample::select(vec![
        Reason::CANCEL,
        Reason::INTERNAL_ERROR,
        Reason::REFUSED_STREAM,
        Reason::NO_ERROR,
    ])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        24 => request().prop_map(Op::Request),
        6 => (any::<Index>(), body_len(50_000), prop::bool::weighted(0.4))
            .prop_map(|(pick, len, end)| Op::Upload { pick, len, end }),
        6 => (any::<Index>(), prop::bool::weighted(0.3))
            .prop_map(|(pick, push)| Op::ClientReset { pick, push }),
        4 => any::<bool>().prop_map(|server| Op::Ping { server }),
        20 => (1usize..4, prop::bool::weighted(0.15), answer())
            .prop_map(|(count, early, spec)| Op::Answer { count, early, spec }),
        6 => (any::<Index>(), answer()).prop_map(|(pick, spec)| Op::Push { pick, spec }),
        4 => (any::<Index>(), reason()).prop_map(|(pick, reason)| Op::ServerReset { pick, reason }),
        8 => (any::<bool>(), new_settings())
            .prop_map(|(server, settings)| Op::Settings { server, settings }),
        2 => any::<bool>().prop_map(|server| Op::GoAway { server }),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(server, error)| Op::Abort { server, error }),
        6 => (0u64..4_000).prop_map(|millis| Op::Advance { millis }),
        24 => (any::<bool>(), 1usize..100_000)
            .prop_map(|(to_server, bytes)| Op::Deliver { to_server, bytes }),
        12 => Just(Op::Flush),
        6 => (any::<bool>(), 0u8..=4).prop_map(|(server, quarters)| Op::Release { server, quarters }),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (side(), side(), any::<u64>(), vec(op(), 1..60)).prop_map(|(client, server, seed, ops)| {
        Scenario {
            client,
            server,
            seed,
            ops,
        }
    })
}

// ---------------------------------------------------------------------------
// The two applications
// ---------------------------------------------------------------------------

/// How a stream ended, as the client application saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A final response, and its end (END_STREAM on a head, DATA or trailers).
    Complete,
    /// `Event::StreamReset`.
    Reset(Reason),
    /// `Event::Retryable`.
    Retryable,
    /// `Event::Closed` while the stream was open.
    Closed,
    /// The client application reset it itself.
    Cancelled,
}

/// A response as the client received it (or the server sent it).
#[derive(Debug, Default, Clone)]
struct Message {
    interim: Vec<u16>,
    head: Option<ResponseHead>,
    body: BytesMut,
    trailers: Option<Vec<HeaderField>>,
}

/// A client stream: one of our requests or a push we were promised.
#[derive(Debug)]
struct ClientStream {
    /// Some(parent) for a push.
    parent: Option<StreamId>,
    request: RequestHead,
    body: BytesMut,
    trailers: Option<Vec<HeaderField>>,
    /// A streaming upload whose end has not been sent.
    upload_open: bool,
    response: Message,
    outcome: Option<Outcome>,
}

#[derive(Debug, Default)]
struct ClientApp {
    manual: bool,
    streams: BTreeMap<StreamId, ClientStream>,
    connected: usize,
    closed: Option<Option<ConnectionError>>,
    goaways: Vec<(StreamId, Reason)>,
    went_away: bool,
    pings: usize,
    pongs: usize,
    held: Vec<(StreamId, u32)>,
    /// Resets, retryables or errors happened.
    disturbed: bool,
    /// The application aborted the connection.
    aborted: bool,
    enable_push: bool,
}

/// A server stream: a request we received or a push we made.
#[derive(Debug, Default)]
struct ServerStream {
    /// Some(parent) for a push.
    parent: Option<StreamId>,
    request: Option<RequestHead>,
    body: BytesMut,
    trailers: Option<Vec<HeaderField>>,
    /// The request is complete.
    request_done: bool,
    /// A final response head was queued.
    answered: bool,
    /// Our side was ended (END_STREAM queued).
    ended: bool,
    reset: bool,
    retryable: bool,
    sent: Message,
}

#[derive(Debug, Default)]
struct ServerApp {
    manual: bool,
    streams: BTreeMap<StreamId, ServerStream>,
    connected: usize,
    closed: Option<Option<ConnectionError>>,
    goaways: Vec<(StreamId, Reason)>,
    went_away: bool,
    pings: usize,
    pongs: usize,
    held: Vec<(StreamId, u32)>,
    pushes: usize,
    /// Requests the core turned down before the application saw them.
    refused: Vec<StreamId>,
}

/// What made a rule break excusable in this run.
#[derive(Debug, Clone, Copy)]
struct Excuses {
    /// A side advertised a SETTINGS_MAX_HEADER_LIST_SIZE below what the
    /// requests may carry (the limit is advisory for the sender, §6.5.2).
    small_header_lists: bool,
    /// The virtual clock passed the SETTINGS timeout (§6.5.3).
    settings_timeout_passed: bool,
}

impl Excuses {
    /// Rules a correct peer can be caught by through no fault of its own:
    /// races the RFC allows (a stream opened before a lowered
    /// MAX_CONCURRENT_STREAMS arrived, §5.1.2; a promise crossing the reset
    /// of its parent, §8.4.2), and limits of ours the operations can reach.
    fn allow(self, v: &Violation) -> bool {
        match v {
            Violation::ConcurrencyExceeded
            | Violation::PushRefused
            | Violation::AckFlood
            | Violation::ResetFlood
            | Violation::StreamErrorFlood => true,
            Violation::HeaderListTooLarge { .. } => self.small_header_lists,
            Violation::SettingsTimeout => self.settings_timeout_passed,
            _ => false,
        }
    }

    fn check_close(self, side: &str, error: &Option<ConnectionError>) {
        if let Some(ConnectionError::Local { reason, violation }) = error {
            assert!(
                self.allow(violation),
                "{side} ended the connection with {reason:?}: {violation}"
            );
        }
    }
}

fn pairs(fields: &[HeaderField]) -> Vec<(Bytes, Bytes)> {
    fields
        .iter()
        .map(|f| (f.name.clone(), f.value.clone()))
        .collect()
}

fn body(salt: u64, len: usize) -> Bytes {
    let mut rng = Rng::new(salt.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        out.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    out.truncate(len);
    out.into()
}

/// Splits `body` into up to `chunks` non-empty pieces.
fn pieces(body: &Bytes, chunks: u8) -> Vec<Bytes> {
    let n = usize::from(chunks.max(1)).min(body.len());
    if n == 0 {
        return Vec::new();
    }
    let step = body.len().div_ceil(n);
    (0..body.len())
        .step_by(step)
        .map(|at| body.slice(at..(at + step).min(body.len())))
        .collect()
}

/// The whole simulated world: the link and both applications.
struct World {
    link: Link,
    start: Instant,
    client: ClientApp,
    server: ServerApp,
    client_side: Side,
    server_side: Side,
    /// The last SETTINGS each side sent (to heal a zero window at the end).
    client_settings: LocalSettings,
    server_settings: LocalSettings,
    requests: usize,
    /// Operations that reset or ended something were applied.
    disruptive_ops: bool,
}

impl World {
    fn new(client: &Side, server: &Side, seed: u64) -> Self {
        let link = link(client.config(), server.config(), seed);
        World {
            start: link.now,
            link,
            client: ClientApp {
                manual: client.manual,
                enable_push: client.enable_push,
                ..ClientApp::default()
            },
            server: ServerApp {
                manual: server.manual,
                ..ServerApp::default()
            },
            client_settings: client.settings(),
            server_settings: server.settings(),
            client_side: client.clone(),
            server_side: server.clone(),
            requests: 0,
            disruptive_ops: false,
        }
    }

    fn excuses(&self) -> Excuses {
        let small = |s: &Side| s.max_header_list_size < 65_536;
        let timeout = Config::default().settings_timeout;
        Excuses {
            small_header_lists: small(&self.client_side) || small(&self.server_side),
            settings_timeout_passed: self.link.now >= self.start + timeout,
        }
    }

    // --- client ----------------------------------------------------------

    fn client_going_away(&self) -> bool {
        self.client.closed.is_some() || self.client.went_away || !self.client.goaways.is_empty()
    }

    fn send_request(&mut self, spec: &RequestSpec) {
        self.requests += 1;
        let post = spec.method == "POST";
        let body_len = if post { spec.body_len } else { 0 };
        let mut head = RequestHead::new(
            spec.method,
            "https",
            "example.com",
            format!("/r/{}", self.requests),
        );
        for (name, value) in &spec.fields {
            head = head.field(name.clone(), value.clone());
        }
        if post && spec.content_length {
            head = head.field("content-length", body_len.to_string());
        }
        let going = self.client_going_away();
        let id = match self.link.client.send_request(head.clone(), !post) {
            Ok(id) => {
                assert!(!going, "send_request accepted while going away");
                id
            }
            // The server's MAX_HEADER_LIST_SIZE is honoured (§6.5.2): a
            // request above it is refused here, never sent.
            Err(UserError::HeaderListTooLarge { .. }) if self.excuses().small_header_lists => {
                return;
            }
            Err(e) => {
                assert!(going, "send_request failed on a live connection: {e:?}");
                assert_eq!(e, UserError::GoingAway);
                return;
            }
        };
        let body = body(u64::from(id.value()) * 2 + 1, body_len);
        let trailers = (post && spec.trailers).then(|| {
            vec![HeaderField::new(
                "x-request-trailer",
                format!("t{}", id.value()),
            )]
        });
        let streaming = post && spec.streaming;
        let trailers = trailers.filter(|_| !streaming);
        if post {
            let parts = pieces(&body, spec.chunks);
            let n = parts.len();
            for (i, part) in parts.into_iter().enumerate() {
                let last = i + 1 == n && trailers.is_none() && !streaming;
                self.link.client.send_data(id, part, last).unwrap();
            }
            if let Some(t) = &trailers {
                self.link.client.send_trailers(id, t.clone()).unwrap();
            } else if n == 0 && !streaming {
                self.link.client.send_data(id, Bytes::new(), true).unwrap();
            }
        }
        let previous = self.client.streams.insert(
            id,
            ClientStream {
                parent: None,
                request: head,
                body: BytesMut::from(&body[..]),
                trailers,
                upload_open: streaming,
                response: Message::default(),
                outcome: None,
            },
        );
        assert!(previous.is_none(), "stream id {id:?} handed out twice");
    }

    fn set_outcome(&mut self, id: StreamId, outcome: Outcome) {
        let s = self
            .client
            .streams
            .get_mut(&id)
            .unwrap_or_else(|| panic!("outcome {outcome:?} for unknown stream {id:?}"));
        if let Some(previous) = s.outcome {
            panic!("stream {id:?} ended twice: {previous:?}, then {outcome:?}");
        }
        s.outcome = Some(outcome);
    }

    /// The server's core answered the client's `id` with 431 (RFC 9113
    /// §10.5.1): its request was above the server's MAX_HEADER_LIST_SIZE.
    fn answered_431(&self, id: StreamId) -> bool {
        self.excuses().small_header_lists
            && self
                .client
                .streams
                .get(&id)
                .and_then(|c| c.response.head.as_ref())
                .is_some_and(|h| h.status == 431)
    }

    /// The server's core took `id` out of its application's hands: the
    /// client has its 431, or the application never saw the request while
    /// heads can be too large for the server (the client may reset the
    /// stream before the 431 reaches it).
    fn refused_by_server_core(&self, id: StreamId) -> bool {
        self.answered_431(id)
            || (self.excuses().small_header_lists
                && self.client.streams.contains_key(&id)
                && !self.server.streams.contains_key(&id))
    }

    /// A stream that may still get events.
    fn live_client_stream(&mut self, id: StreamId, what: &str) -> &mut ClientStream {
        let s = self
            .client
            .streams
            .get_mut(&id)
            .unwrap_or_else(|| panic!("client: {what} on unknown stream {id:?}"));
        if let Some(outcome) = s.outcome {
            panic!("client: {what} on stream {id:?} after it ended ({outcome:?})");
        }
        s
    }

    fn client_event(&mut self, event: Event) {
        // `Closed` is the last word on a connection; only the frames the
        // final flush writes may be traced after it.
        assert!(
            self.client.closed.is_none() || matches!(event, Event::Frame { .. }),
            "client: {event:?} after Closed"
        );
        match event {
            Event::Frame { .. } => {}
            Event::Connected => self.client.connected += 1,
            Event::Response {
                stream,
                head,
                end_stream,
            } => {
                let s = self.live_client_stream(stream, "response head");
                assert!(s.response.head.is_none(), "head after the final head");
                if head.is_informational() {
                    assert!(!end_stream, "interim head with END_STREAM");
                    s.response.interim.push(head.status);
                } else {
                    s.response.head = Some(head);
                    if end_stream {
                        self.set_outcome(stream, Outcome::Complete);
                    }
                }
            }
            Event::Data {
                stream,
                data,
                end_stream,
            } => {
                let manual = self.client.manual;
                let n = u32::try_from(data.len()).unwrap();
                if manual {
                    self.client.held.push((stream, n));
                }
                let s = self.live_client_stream(stream, "DATA");
                assert!(s.response.head.is_some(), "DATA before the final head");
                assert!(s.response.trailers.is_none());
                s.response.body.extend_from_slice(&data);
                if end_stream {
                    self.set_outcome(stream, Outcome::Complete);
                }
            }
            Event::Trailers { stream, fields } => {
                let s = self.live_client_stream(stream, "trailers");
                assert!(s.response.head.is_some(), "trailers before the final head");
                s.response.trailers = Some(fields);
                self.set_outcome(stream, Outcome::Complete);
            }
            Event::PushPromise {
                parent,
                promised,
                request,
            } => {
                assert!(promised.is_server_initiated());
                let p = self.live_client_stream(parent, "PUSH_PROMISE");
                assert!(p.parent.is_none(), "promise on a pushed stream");
                assert!(
                    p.response.head.is_none(),
                    "promise after the parent's final head"
                );
                let previous = self.client.streams.insert(
                    promised,
                    ClientStream {
                        parent: Some(parent),
                        request: *request,
                        body: BytesMut::new(),
                        trailers: None,
                        upload_open: false,
                        response: Message::default(),
                        outcome: None,
                    },
                );
                assert!(previous.is_none(), "stream {promised:?} promised twice");
            }
            Event::StreamReset {
                stream,
                reason,
                violation,
                ..
            } => {
                if let Some(v) = &violation {
                    assert!(self.excuses().allow(v), "client reset {stream:?} for {v}");
                }
                if reason == Reason::NO_ERROR && self.answered_431(stream) {
                    // §8.1: after a complete response (the core's 431) the
                    // server may stop the request body with NO_ERROR; the
                    // response stands.
                    return;
                }
                self.client.disturbed = true;
                self.live_client_stream(stream, "reset");
                self.set_outcome(stream, Outcome::Reset(reason));
            }
            Event::Retryable { stream } => {
                assert!(stream.is_client_initiated(), "retryable push {stream:?}");
                self.client.disturbed = true;
                self.live_client_stream(stream, "retryable");
                self.set_outcome(stream, Outcome::Retryable);
            }
            Event::Pong { .. } => self.client.pongs += 1,
            Event::GoAway {
                last_stream_id,
                reason,
                ..
            } => self.client.goaways.push((last_stream_id, reason)),
            Event::Closed { error, .. } => {
                assert!(self.client.closed.is_none(), "client closed twice");
                self.excuses().check_close("client", &error);
                let pending = self.client.streams.values().any(|c| c.outcome.is_none());
                assert!(
                    error.is_some() || !pending || self.client.aborted,
                    "clean close with streams pending: they vanished"
                );
                if error.is_some() {
                    self.client.disturbed = true;
                }
                self.client.closed = Some(error);
                let open: Vec<StreamId> = self
                    .client
                    .streams
                    .iter()
                    .filter(|(_, s)| s.outcome.is_none())
                    .map(|(&id, _)| id)
                    .collect();
                for id in open {
                    self.set_outcome(id, Outcome::Closed);
                }
            }
            Event::Refused {
                stream, violation, ..
            } => {
                // A promise the core turned down: never the application's.
                assert!(
                    self.excuses().allow(&violation),
                    "client refused {stream:?} for {violation}"
                );
                assert!(
                    !self.client.streams.contains_key(&stream),
                    "client: {stream:?} refused while the application holds it"
                );
            }
            Event::Request { .. } => panic!("client got a request"),
        }
    }

    /// Streaming uploads the client may still add to: open, and not ended
    /// for it (a complete early response leaves the upload going, §8.1).
    fn open_uploads(&self) -> Vec<StreamId> {
        self.client
            .streams
            .iter()
            .filter(|(_, c)| c.upload_open && c.outcome.is_none_or(|o| o == Outcome::Complete))
            .map(|(&id, _)| id)
            .collect()
    }

    fn upload(&mut self, id: StreamId, len: usize, end: bool) {
        let c = &self.client.streams[&id];
        let salt = (u64::from(id.value()) << 32) ^ c.body.len() as u64;
        let more = body(salt, len);
        let result = self.link.client.send_data(id, more.clone(), end);
        if self.client.closed.is_some() {
            // Over: whatever the answer, nothing more will leave.
            self.client.streams.get_mut(&id).unwrap().upload_open = false;
            return;
        }
        if let Err(e) = result {
            if self.answered_431(id) {
                // The 431's RST_STREAM(NO_ERROR) ended the upload (§8.1).
                self.client.streams.get_mut(&id).unwrap().upload_open = false;
                return;
            }
            panic!("client: upload on {id:?} failed ({e:?}): the stream vanished");
        }
        let c = self.client.streams.get_mut(&id).unwrap();
        c.body.extend_from_slice(&more);
        c.upload_open = !end;
    }

    fn client_reset(&mut self, pick: &Index, push: bool) {
        let open: Vec<StreamId> = self
            .client
            .streams
            .iter()
            .filter(|(_, s)| s.outcome.is_none() && s.parent.is_some() == push)
            .map(|(&id, _)| id)
            .collect();
        if open.is_empty() {
            return;
        }
        let id = *pick.get(&open);
        let reason = if push {
            Reason::REFUSED_STREAM
        } else {
            Reason::CANCEL
        };
        if let Err(e) = self.link.client.reset(id, reason) {
            panic!("client: open stream {id:?} cannot be reset ({e:?}): it vanished");
        }
        self.disruptive_ops = true;
        self.set_outcome(id, Outcome::Cancelled);
    }

    // --- server ----------------------------------------------------------

    fn live_server_stream(&mut self, id: StreamId, what: &str) -> &mut ServerStream {
        let s = self
            .server
            .streams
            .get_mut(&id)
            .unwrap_or_else(|| panic!("server: {what} on unknown stream {id:?}"));
        assert!(
            !s.reset && !s.retryable,
            "server: {what} on stream {id:?} after its reset"
        );
        s
    }

    fn server_event(&mut self, event: Event) {
        assert!(
            self.server.closed.is_none() || matches!(event, Event::Frame { .. }),
            "server: {event:?} after Closed"
        );
        match event {
            Event::Frame { .. } => {}
            Event::Connected => self.server.connected += 1,
            Event::Request {
                stream,
                head,
                end_stream,
            } => {
                assert!(stream.is_client_initiated());
                let previous = self.server.streams.insert(
                    stream,
                    ServerStream {
                        request: Some(*head),
                        request_done: end_stream,
                        ..ServerStream::default()
                    },
                );
                assert!(previous.is_none(), "request {stream:?} twice");
            }
            Event::Data {
                stream,
                data,
                end_stream,
            } => {
                let n = u32::try_from(data.len()).unwrap();
                if self.server.manual {
                    self.server.held.push((stream, n));
                }
                let s = self.live_server_stream(stream, "DATA");
                assert!(!s.request_done, "DATA after the end of the request");
                assert!(s.parent.is_none(), "DATA from the client on a push");
                s.body.extend_from_slice(&data);
                s.request_done = end_stream;
            }
            Event::Trailers { stream, fields } => {
                let s = self.live_server_stream(stream, "trailers");
                assert!(!s.request_done, "trailers after the end of the request");
                s.trailers = Some(fields);
                s.request_done = true;
            }
            Event::StreamReset {
                stream, violation, ..
            } => {
                if let Some(v) = &violation {
                    assert!(self.excuses().allow(v), "server reset {stream:?} for {v}");
                }
                self.live_server_stream(stream, "reset").reset = true;
            }
            Event::Refused {
                stream, violation, ..
            } => {
                assert!(
                    self.excuses().allow(&violation),
                    "server refused {stream:?} for {violation}"
                );
                assert!(
                    !self.server.streams.contains_key(&stream),
                    "server: {stream:?} refused while the application holds it"
                );
                assert!(
                    !self.server.refused.contains(&stream),
                    "server: {stream:?} refused twice"
                );
                self.server.refused.push(stream);
            }
            Event::Retryable { stream } => {
                let s = self.live_server_stream(stream, "retryable");
                assert!(
                    s.parent.is_some(),
                    "retryable request {stream:?} on a server"
                );
                s.retryable = true;
            }
            Event::Pong { .. } => self.server.pongs += 1,
            Event::GoAway {
                last_stream_id,
                reason,
                ..
            } => self.server.goaways.push((last_stream_id, reason)),
            Event::Closed { error, .. } => {
                assert!(self.server.closed.is_none(), "server closed twice");
                self.excuses().check_close("server", &error);
                self.server.closed = Some(error);
            }
            Event::Response { .. } | Event::PushPromise { .. } => {
                panic!("server got a client event: {event:?}")
            }
        }
    }

    /// Queues a response to `request` (a pushed GET when None) on `id`:
    /// HEAD, 204 and 304 responses have no body (RFC 9110 §9.3.2, §15.3.5,
    /// §15.4.5; RFC 9113 §8.1.1).
    fn respond(&mut self, id: StreamId, spec: &AnswerSpec, request: Option<&RequestHead>) {
        let closed = self.server.closed.is_some();
        let head_request = request.is_some_and(|r| r.method == "HEAD");
        let bodyless = head_request || matches!(spec.status, 204 | 304);
        let mut sent = Message::default();
        if spec.interim {
            let hint = ResponseHead::new(103).field("link", "</style.css>; rel=preload");
            match self.link.server.send_response(id, hint, false) {
                Ok(()) => sent.interim.push(103),
                Err(e) => {
                    assert!(closed, "server: interim head on {id:?} failed: {e:?}");
                    self.abandon(id);
                    return;
                }
            }
        }
        let mut head = ResponseHead::new(spec.status).field("x-stream", id.value().to_string());
        if let Some(req) = request.filter(|_| spec.echo) {
            for f in req.fields.iter().filter(|f| f.name != "content-length") {
                head.fields
                    .push(HeaderField::new(f.name.clone(), f.value.clone()));
            }
        }
        if spec.content_length && spec.status != 204 {
            // For HEAD and 304, the length the body would have had.
            head = head.field("content-length", spec.body_len.to_string());
        }
        let body = body(
            u64::from(id.value()) * 2,
            if bodyless { 0 } else { spec.body_len },
        );
        // Trailers on a response to HEAD, or on a 204 or 304, are given and
        // dropped by the core (RFC 9110 §6.5: they follow content, and
        // there is none; HTTP/1.1 has no trailer section there either).
        let trailers = spec
            .trailers
            .then(|| vec![HeaderField::new("x-checksum", format!("{}", body.len()))]);
        let end_at_head = body.is_empty() && trailers.is_none();
        if let Err(e) = self
            .link
            .server
            .send_response(id, head.clone(), end_at_head)
        {
            if matches!(e, UserError::HeaderListTooLarge { .. })
                && self.excuses().small_header_lists
            {
                // The client's MAX_HEADER_LIST_SIZE is honoured (§6.5.2):
                // the echoed head is not sent, and the stream is given up.
                self.link.server.reset(id, Reason::INTERNAL_ERROR).unwrap();
                self.disruptive_ops = true;
                self.server.streams.get_mut(&id).unwrap().reset = true;
                return;
            }
            assert!(closed, "server: response on {id:?} failed: {e:?}");
            self.abandon(id);
            return;
        }
        let parts = pieces(&body, spec.chunks);
        let n = parts.len();
        for (i, part) in parts.into_iter().enumerate() {
            let last = i + 1 == n && trailers.is_none();
            self.link.server.send_data(id, part, last).unwrap();
        }
        if let Some(t) = &trailers {
            self.link.server.send_trailers(id, t.clone()).unwrap();
        }
        sent.head = Some(head);
        sent.body.extend_from_slice(&body);
        sent.trailers = trailers.filter(|_| !bodyless);
        let s = self.server.streams.get_mut(&id).unwrap();
        s.answered = true;
        s.ended = true;
        s.sent = sent;
    }

    /// The connection closed under a response: nothing more will be sent.
    fn abandon(&mut self, id: StreamId) {
        let s = self.server.streams.get_mut(&id).unwrap();
        s.answered = true;
        s.ended = true;
    }

    /// Requests the server may answer now.
    fn answerable(&self, early: bool) -> Vec<StreamId> {
        self.server
            .streams
            .iter()
            .filter(|(_, s)| {
                s.parent.is_none()
                    && !s.answered
                    && !s.reset
                    && !s.retryable
                    && (s.request_done || early)
            })
            .map(|(&id, _)| id)
            .collect()
    }

    fn answer(&mut self, count: usize, early: bool, spec: &AnswerSpec) {
        for id in self.answerable(early).into_iter().take(count) {
            let request = self.server.streams[&id].request.clone();
            self.respond(id, spec, request.as_ref());
        }
    }

    fn push(&mut self, pick: &Index, spec: &AnswerSpec) {
        let open = self.answerable(true);
        if open.is_empty() {
            return;
        }
        let parent = *pick.get(&open);
        self.server.pushes += 1;
        let request = RequestHead::new(
            "GET",
            "https",
            "example.com",
            format!("/pushed/{}", self.server.pushes),
        )
        .field("x-pushed-by", parent.value().to_string());
        let promised = match self.link.server.push_promise(parent, request.clone()) {
            Ok(id) => id,
            Err(UserError::PushDisabled | UserError::GoingAway) => return,
            Err(e) => panic!("server: push on {parent:?} failed: {e:?}"),
        };
        self.server.streams.insert(
            promised,
            ServerStream {
                parent: Some(parent),
                request: Some(request),
                request_done: true,
                ..ServerStream::default()
            },
        );
        self.respond(promised, spec, None);
    }

    fn server_reset(&mut self, pick: &Index, reason: Reason) {
        let open: Vec<StreamId> = self
            .server
            .streams
            .iter()
            .filter(|(_, s)| !s.ended && !s.reset && !s.retryable)
            .map(|(&id, _)| id)
            .collect();
        if open.is_empty() {
            return;
        }
        let id = *pick.get(&open);
        match self.link.server.reset(id, reason) {
            Ok(()) => {}
            Err(e) => {
                assert!(
                    self.server.closed.is_some(),
                    "server: open stream {id:?} cannot be reset ({e:?})"
                );
            }
        }
        self.disruptive_ops = true;
        self.server.streams.get_mut(&id).unwrap().reset = true;
    }

    // --- both ------------------------------------------------------------

    fn settings(&mut self, server: bool, new: &NewSettings) {
        let now = self.link.now;
        if server {
            let s = LocalSettings {
                header_table_size: new.header_table_size,
                max_concurrent_streams: new.max_concurrent_streams,
                initial_window_size: new.initial_window_size,
                max_frame_size: new.max_frame_size,
                ..self.server_settings
            };
            self.server_settings = s;
            let _ = self.link.server.update_settings(now, s);
        } else {
            if new.toggle_push {
                self.client.enable_push = !self.client.enable_push;
            }
            let s = LocalSettings {
                header_table_size: new.header_table_size,
                max_concurrent_streams: new.max_concurrent_streams,
                initial_window_size: new.initial_window_size,
                max_frame_size: new.max_frame_size,
                enable_push: self.client.enable_push,
                ..self.client_settings
            };
            self.client_settings = s;
            let _ = self.link.client.update_settings(now, s);
        }
    }

    fn release(&mut self, server: bool, quarters: u8) -> bool {
        let (conn, held) = if server {
            (&mut self.link.server, &mut self.server.held)
        } else {
            (&mut self.link.client, &mut self.client.held)
        };
        let n = held.len() * usize::from(quarters) / 4;
        for (id, len) in held.drain(..n) {
            conn.release_capacity(id, len)
                .unwrap_or_else(|e| panic!("releasing {len} on {id:?}: {e:?}"));
        }
        n > 0
    }

    /// Hands every pending event to the applications; with `answer`, the
    /// server answers every complete request. True if anything happened.
    fn drain(&mut self, answer: bool) -> bool {
        let mut any = false;
        loop {
            let mut progress = false;
            while let Some(event) = self.link.client.poll_event() {
                self.client_event(event);
                progress = true;
            }
            while let Some(event) = self.link.server.poll_event() {
                self.server_event(event);
                progress = true;
            }
            if answer && self.server.closed.is_none() && !self.answerable(false).is_empty() {
                let spec = AnswerSpec {
                    status: 200,
                    body_len: 1_500,
                    chunks: 2,
                    trailers: false,
                    interim: false,
                    echo: true,
                    content_length: true,
                };
                self.answer(usize::MAX, false, &spec);
                progress = true;
            }
            if !progress {
                return any;
            }
            any = true;
        }
    }

    fn apply(&mut self, op: &Op) {
        let now = self.link.now;
        match op {
            Op::Request(spec) => self.send_request(spec),
            Op::Upload { pick, len, end } => {
                let open = self.open_uploads();
                if !open.is_empty() {
                    self.upload(*pick.get(&open), *len, *end);
                }
            }
            Op::ClientReset { pick, push } => self.client_reset(pick, *push),
            // A server still telling HTTP/2 from HTTP/1.1 cannot ping yet.
            Op::Ping { server: false } => {
                if self.link.client.ping(now).is_ok() {
                    self.client.pings += 1;
                }
            }
            Op::Ping { server: true } => {
                if self.link.server.ping(now).is_ok() {
                    self.server.pings += 1;
                }
            }
            Op::Answer { count, early, spec } => self.answer(*count, *early, spec),
            Op::Push { pick, spec } => self.push(pick, spec),
            Op::ServerReset { pick, reason } => self.server_reset(pick, *reason),
            Op::Settings { server, settings } => self.settings(*server, settings),
            Op::GoAway { server } => {
                self.disruptive_ops = true;
                if *server {
                    self.server.went_away = true;
                    self.link.server.go_away(now);
                } else {
                    self.client.went_away = true;
                    self.link.client.go_away(now);
                }
            }
            Op::Abort { server, error } => {
                self.disruptive_ops = true;
                let reason = if *error {
                    Reason::INTERNAL_ERROR
                } else {
                    Reason::NO_ERROR
                };
                if *server {
                    self.link.server.abort(reason);
                } else {
                    self.client.aborted = true;
                    self.link.client.abort(reason);
                }
            }
            Op::Advance { millis } => self.link.advance(Duration::from_millis(*millis)),
            Op::Deliver { to_server, bytes } => {
                let dir = Dir::toward_server(*to_server);
                self.link.collect(dir);
                self.link.deliver(dir, *bytes);
            }
            Op::Flush => {
                self.link.drive();
            }
            Op::Release { server, quarters } => {
                self.release(*server, *quarters);
            }
        }
        self.drain(false);
    }

    /// Brings the link to rest: zero stream windows reopened (a receiver
    /// advertising 0 can only open them with SETTINGS here), bytes flushed,
    /// the server answering, capacity released, timers fired.
    fn settle(&mut self) {
        for id in self.open_uploads() {
            self.upload(id, 100, true);
        }
        let now = self.link.now;
        if self.client_settings.initial_window_size == 0 {
            self.client_settings.initial_window_size = 65_535;
            self.link
                .client
                .update_settings(now, self.client_settings)
                .unwrap();
        }
        if self.server_settings.initial_window_size == 0 {
            self.server_settings.initial_window_size = 65_535;
            self.link
                .server
                .update_settings(now, self.server_settings)
                .unwrap();
        }
        for _ in 0..10_000 {
            let moved = self.link.drive();
            let acted = self.drain(true);
            let released = self.release(false, 4) | self.release(true, 4);
            if moved || acted || released {
                continue;
            }
            match self.link.next_timeout() {
                Some(at) => {
                    let by = at.saturating_duration_since(self.link.now);
                    self.link.advance(by);
                }
                None => return,
            }
        }
        panic!("the link did not settle");
    }

    // --- checks ----------------------------------------------------------

    fn check(&self) {
        let observer = &self.link.observer;
        assert!(
            observer.violations.is_empty(),
            "wire: {:#?}",
            observer.violations
        );
        assert!(self.client.connected <= 1 && self.server.connected <= 1);
        assert!(self.client.pongs <= self.client.pings);
        assert!(self.server.pongs <= self.server.pings);
        if self.client.closed.is_none() && self.server.closed.is_none() {
            // A live link: the handshake happened and every PING came back
            // (§6.7).
            assert_eq!((self.client.connected, self.server.connected), (1, 1));
            assert_eq!(self.client.pongs, self.client.pings, "client PINGs");
            assert_eq!(self.server.pongs, self.server.pings, "server PINGs");
        }

        for (id, c) in &self.client.streams {
            let outcome = c.outcome.unwrap_or_else(|| {
                panic!(
                    "stream {id:?} never ended: {} {} ({} body bytes), response {:?}",
                    String::from_utf8_lossy(&c.request.method),
                    String::from_utf8_lossy(&c.request.path),
                    c.body.len(),
                    c.response.head.as_ref().map(|h| h.status)
                )
            });
            let s = self.server.streams.get(id);
            if let Some(parent) = c.parent {
                // §8.4: the promise names what the server promised.
                let s = s.unwrap_or_else(|| panic!("push {id:?} the server never made"));
                assert_eq!(s.parent, Some(parent), "push {id:?} on another parent");
                let promised = s.request.as_ref().unwrap();
                assert_eq!(c.request.method, promised.method);
                assert_eq!(c.request.path, promised.path);
                assert_eq!(pairs(&c.request.fields), pairs(&promised.fields));
            }
            if outcome == Outcome::Complete && s.is_none() && self.answered_431(*id) {
                // §10.5.1: a request above the server's MAX_HEADER_LIST_SIZE
                // (sent before its SETTINGS came) is answered by its core.
                continue;
            }
            if outcome == Outcome::Complete {
                let s = s.unwrap_or_else(|| panic!("{id:?} complete, never received"));
                let (got, sent) = (&c.response, &s.sent);
                assert_eq!(got.interim, sent.interim, "{id:?} interim heads");
                let (got_head, sent_head) = (got.head.as_ref().unwrap(), sent.head.as_ref());
                let sent_head = sent_head.unwrap_or_else(|| panic!("{id:?}: no response sent"));
                assert_eq!(got_head.status, sent_head.status, "{id:?} status");
                assert_eq!(
                    pairs(&got_head.fields),
                    pairs(&sent_head.fields),
                    "{id:?} response fields"
                );
                assert!(got.body == sent.body, "{id:?}: response body differs");
                assert_eq!(
                    got.trailers.as_deref().map(pairs),
                    sent.trailers.as_deref().map(pairs),
                    "{id:?} response trailers"
                );
            }
        }
        for (id, s) in &self.server.streams {
            if s.parent.is_some() || !s.request_done {
                continue;
            }
            let c = &self.client.streams[id];
            let got = s.request.as_ref().unwrap();
            assert_eq!(got.method, c.request.method, "{id:?} method");
            assert_eq!(got.path, c.request.path, "{id:?} path");
            assert_eq!(got.authority, c.request.authority, "{id:?} authority");
            assert_eq!(
                pairs(&got.fields),
                pairs(&c.request.fields),
                "{id:?} request fields"
            );
            assert!(s.body == c.body, "{id:?}: request body differs");
            assert_eq!(
                s.trailers.as_deref().map(pairs),
                c.trailers.as_deref().map(pairs),
                "{id:?} request trailers"
            );
        }
        self.check_flow();
        self.check_clean();
    }

    /// Flow-control credit is conserved (RFC 9113 §5.2, §6.9).
    fn check_flow(&self) {
        let observer = &self.link.observer;
        let both_open = self.client.closed.is_none() && self.server.closed.is_none();
        for dir in [Dir::ClientToServer, Dir::ServerToClient] {
            let d = observer.dir(dir);
            assert_eq!(
                d.bytes_written, d.bytes_read,
                "{dir:?}: bytes left in flight"
            );
            assert_eq!(d.data_written, d.data_read, "{dir:?}: DATA left in flight");
            // What the receiving application got, per stream.
            let got: BTreeMap<StreamId, u64> = match dir {
                Dir::ClientToServer => self
                    .server
                    .streams
                    .iter()
                    .map(|(&id, s)| (id, s.body.len() as u64))
                    .collect(),
                Dir::ServerToClient => self
                    .client
                    .streams
                    .iter()
                    .map(|(&id, c)| (id, c.response.body.len() as u64))
                    .collect(),
            };
            let receiver_reset = &observer.dir(dir.reverse()).resets_written;
            let receiver_open = match dir {
                Dir::ClientToServer => self.server.closed.is_none(),
                Dir::ServerToClient => self.client.closed.is_none(),
            };
            for (&id, &n) in &d.data_read_by_stream {
                let events = got.get(&id).copied().unwrap_or(0);
                assert!(
                    events <= n,
                    "{dir:?} {id:?}: {events} bytes of Data events from {n} bytes of DATA"
                );
                // The body of a request the server's core answered with
                // 431 goes nowhere (§10.5.1).
                let answered = dir == Dir::ClientToServer && self.refused_by_server_core(id);
                if receiver_open && !receiver_reset.contains(&id) && !answered {
                    assert_eq!(events, n, "{dir:?} {id:?}: DATA read but not delivered");
                }
            }
            for (&id, &n) in &got {
                assert!(
                    n <= d.read_on(id),
                    "{dir:?} {id:?}: Data events without DATA"
                );
            }
            let any_431 = dir == Dir::ClientToServer
                && self
                    .client
                    .streams
                    .keys()
                    .any(|&id| self.refused_by_server_core(id));
            if receiver_open && receiver_reset.is_empty() && !any_431 {
                // Our senders do not pad, so the flow-controlled total is
                // exactly the bytes handed to the application.
                let total: u64 = got.values().sum();
                assert_eq!(total, d.data_written, "{dir:?}: DATA written vs delivered");
            }
            if both_open {
                // Everything read was released, so the receiver owes less
                // than half its window (it batches WINDOW_UPDATEs that way)
                // and the sender's view of the connection window is back
                // above half the target, and never above it.
                let target = match dir {
                    Dir::ClientToServer => self.server_side.connection_target(),
                    Dir::ServerToClient => self.client_side.connection_target(),
                };
                let w = d.conn_window;
                assert!(
                    w * 2 > target && w <= target,
                    "{dir:?}: connection window {w} at rest, target {target}: credit leaked"
                );
            }
        }
    }

    /// Nothing reset, refused or ended early: every request completed.
    fn check_clean(&self) {
        let server_disturbed = self.server.streams.values().any(|s| s.reset || s.retryable)
            || matches!(self.server.closed, Some(Some(_)));
        if self.disruptive_ops || self.client.disturbed || server_disturbed {
            return;
        }
        for (id, c) in &self.client.streams {
            assert_eq!(c.outcome, Some(Outcome::Complete), "{id:?} in a clean run");
        }
        for (id, s) in &self.server.streams {
            assert!(s.request_done && s.answered, "server {id:?} in a clean run");
        }
    }
}

fn run(scenario: &Scenario) -> World {
    let mut world = World::new(&scenario.client, &scenario.server, scenario.seed);
    for op in &scenario.ops {
        world.apply(op);
    }
    world.settle();
    world.check();
    world
}

// ---------------------------------------------------------------------------
// HPACK-heavy traffic
// ---------------------------------------------------------------------------

/// Field names that recur, so the dynamic tables fill and entries are reused.
fn hpack_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "accept", "accept-language", "cookie", "authorization", "user-agent", "x-a", "x-b",
            "x-request-id", "referer", "if-none-match",
        ])
        .prop_map(str::to_owned),
        1 => "x-[a-z]{1,20}",
    ]
}

fn hpack_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["1", "2", "same-value", "text/html,*/*", "en-US,en;q=0.5"])
            .prop_map(str::to_owned),
        3 => "[!-~]([ -~]{0,60}[!-~])?",
        1 => (b'a'..=b'z', 500usize..5_000).prop_map(|(c, n)| char::from(c).to_string().repeat(n)),
    ]
}

fn hpack_op() -> impl Strategy<Value = Op> {
    let request = (
        vec((hpack_name(), hpack_value()), 0..16),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(fields, post)| {
            Op::Request(RequestSpec {
                method: if post { "POST" } else { "GET" },
                body_len: 10,
                fields,
                chunks: 1,
                trailers: post,
                content_length: false,
                streaming: false,
            })
        });
    let answer = (1usize..5, prop::bool::weighted(0.3)).prop_map(|(count, trailers)| Op::Answer {
        count,
        early: false,
        spec: AnswerSpec {
            status: 200,
            body_len: 5,
            chunks: 1,
            trailers,
            interim: trailers,
            echo: true,
            content_length: false,
        },
    });
    let table = (any::<bool>(), 0u32..=8192).prop_map(|(server, size)| Op::Settings {
        server,
        settings: NewSettings {
            initial_window_size: 65_535,
            max_frame_size: 16_384,
            max_concurrent_streams: 100,
            header_table_size: size,
            toggle_push: false,
        },
    });
    prop_oneof![
        8 => request,
        5 => answer,
        5 => table,
        6 => (any::<bool>(), 1usize..20_000)
            .prop_map(|(to_server, bytes)| Op::Deliver { to_server, bytes }),
        3 => Just(Op::Flush),
    ]
}

fn hpack_side() -> impl Strategy<Value = Side> {
    (0u32..=8192, 0u32..=8192).prop_map(|(hts, ets)| Side {
        initial_window_size: 65_535,
        connection_window_size: 1 << 20,
        max_frame_size: 16_384,
        max_concurrent_streams: 100,
        header_table_size: hts,
        encoder_table_size: ets,
        max_header_list_size: 1 << 20,
        enable_push: true,
        manual: false,
    })
}

fn hpack_scenario() -> impl Strategy<Value = Scenario> {
    (
        hpack_side(),
        hpack_side(),
        any::<u64>(),
        vec(hpack_op(), 1..60),
    )
        .prop_map(|(client, server, seed, ops)| Scenario {
            client,
            server,
            seed,
            ops,
        })
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

/// `cases`, or `PROPTEST_CASES` from the environment for a deeper search.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Random operations never panic, every request ends exactly once, what
    /// arrives complete arrives byte-exact, and flow control holds on the
    /// wire (RFC 9113 §5.1, §5.2, §6.9, §8.1, §8.4, §8.7).
    #[test]
    fn random_operations_keep_the_invariants(scenario in scenario()) {
        run(&scenario);
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// Header-heavy traffic with SETTINGS_HEADER_TABLE_SIZE changing on both
    /// sides while blocks are in flight (RFC 7541 §4.2, §6.3; RFC 9113 §4.3,
    /// §6.5.3): every field section decodes to exactly what was sent, the
    /// echoed fields come back, and nothing is reset or closed.
    #[test]
    fn hpack_survives_table_size_changes(scenario in hpack_scenario()) {
        let world = run(&scenario);
        prop_assert!(!world.client.disturbed, "client saw a reset or an error");
        prop_assert!(world.client.closed.is_none() && world.server.closed.is_none());
        for (id, c) in &world.client.streams {
            prop_assert_eq!(c.outcome, Some(Outcome::Complete), "{:?}", id);
            // The server echoed the request's fields after its own.
            let mut echoed = pairs(&c.response.head.as_ref().unwrap().fields[1..]);
            echoed.retain(|(name, _)| name != "content-length");
            prop_assert_eq!(echoed, pairs(&c.request.fields));
        }
    }
}

// ---------------------------------------------------------------------------
// The observer itself
// ---------------------------------------------------------------------------

fn wire(frames: &[Frame]) -> BytesMut {
    let mut buf = BytesMut::new();
    for frame in frames {
        frame.encode(&mut buf);
    }
    buf
}

fn data(stream: u32, len: usize) -> Frame {
    Frame::Data(Data {
        stream_id: StreamId::new(stream),
        payload: Bytes::from(vec![0u8; len]),
        end_stream: false,
        padding: None,
    })
}

/// The observer flags what it is there to catch (RFC 9113 §4.2, §6.9.1,
/// §6.9.2), and applies the peer's SETTINGS and WINDOW_UPDATEs only once the
/// sender has read them.
#[test]
fn observer_flags_flow_control_breaches() {
    let c2s = Dir::ClientToServer;
    let s2c = Dir::ServerToClient;

    // The connection window: 65,535 bytes, 16,384 per frame.
    let mut obs = WireObserver::new();
    obs.written(c2s, PREFACE);
    obs.written(
        c2s,
        &wire(&[data(1, 16_384), data(3, 16_384), data(5, 16_384)]),
    );
    obs.written(c2s, &wire(&[data(7, 16_383)]));
    assert!(obs.violations.is_empty(), "{:?}", obs.violations);
    obs.written(c2s, &wire(&[data(9, 1)]));
    assert_eq!(obs.violations.len(), 1, "{:?}", obs.violations);
    assert_eq!(obs.dir(c2s).conn_window, -1);

    // SETTINGS_MAX_FRAME_SIZE.
    let mut obs = WireObserver::new();
    obs.written(s2c, &wire(&[data(2, 16_385)]));
    assert_eq!(obs.violations.len(), 1, "{:?}", obs.violations);

    // A smaller SETTINGS_INITIAL_WINDOW_SIZE binds the sender once it has
    // read it, not before; WINDOW_UPDATE credit likewise.
    let mut obs = WireObserver::new();
    obs.written(c2s, PREFACE);
    let settings = wire(&[Frame::Settings(Settings {
        ack: false,
        values: vec![Setting::InitialWindowSize(100)],
    })]);
    obs.written(s2c, &settings);
    obs.written(c2s, &wire(&[data(1, 1_000)]));
    assert!(obs.violations.is_empty(), "{:?}", obs.violations);
    obs.read(s2c, &settings);
    assert_eq!(obs.dir(c2s).stream_window(StreamId::new(1)), 100 - 1_000);
    obs.written(c2s, &wire(&[data(3, 100)]));
    assert!(obs.violations.is_empty(), "{:?}", obs.violations);
    obs.written(c2s, &wire(&[data(1, 1)]));
    assert_eq!(
        obs.violations.len(),
        1,
        "negative window: {:?}",
        obs.violations
    );
    let update = wire(&[Frame::WindowUpdate(WindowUpdate {
        stream_id: StreamId::new(5),
        increment: 50,
    })]);
    obs.written(s2c, &update);
    obs.read(s2c, &update);
    obs.written(c2s, &wire(&[data(5, 150)]));
    assert_eq!(obs.violations.len(), 1, "{:?}", obs.violations);

    // No window above 2^31-1.
    let mut obs = WireObserver::new();
    let update = wire(&[Frame::WindowUpdate(WindowUpdate {
        stream_id: StreamId::ZERO,
        increment: MAX_WINDOW_SIZE,
    })]);
    obs.written(s2c, &update);
    obs.read(s2c, &update);
    assert_eq!(obs.violations.len(), 1, "{:?}", obs.violations);
}

// ---------------------------------------------------------------------------
// Bugs found by the properties, minimised
// ---------------------------------------------------------------------------

fn get(path: &str) -> RequestHead {
    RequestHead::new("GET", "https", "example.com", path.to_owned())
}

/// Found by `random_operations_keep_the_invariants` (a request, then a
/// client reset before any output was polled; likewise a push the server
/// resets before its PUSH_PROMISE left). A stream whose HEADERS (or
/// PUSH_PROMISE) has not been written yet is still idle for the peer, so
/// RST_STREAM on it is a connection error there (RFC 9113 §5.1: "Receiving
/// any frame other than HEADERS or PRIORITY on a stream in this state MUST
/// be treated as a connection error of type PROTOCOL_ERROR"). `reset`
/// (src/h2/send.rs) queues RST_STREAM for every state but `Idle`, including
/// `Open` streams whose HEADERS is still queued and `ReservedLocal` streams
/// whose promise is still queued on the parent (which is then written
/// after the RST_STREAM). Such streams must be dropped silently (and a
/// queued promise withdrawn), as `reset` already does for queued requests.
#[test]
fn reset_before_headers_are_written_keeps_the_connection() {
    // A request.
    let mut pair = Pair::with_defaults(1);
    pair.connect();
    let id = pair.client.send_request(get("/a"), true).unwrap();
    pair.client.reset(id, Reason::CANCEL).unwrap();
    pair.drive();
    let events = pair.server_events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::Closed { .. })),
        "server: {events:?}"
    );
    let next = pair.client.send_request(get("/b"), true).unwrap();
    pair.drive();
    assert!(
        pair.server_events()
            .iter()
            .any(|e| matches!(e, Event::Request { stream, .. } if *stream == next))
    );

    // A push.
    let mut pair = Pair::with_defaults(2);
    pair.connect();
    let parent = pair.client.send_request(get("/"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    let promised = pair.server.push_promise(parent, get("/pushed")).unwrap();
    pair.server.reset(promised, Reason::CANCEL).unwrap();
    pair.drive();
    let events = pair.client_events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::Closed { .. })),
        "client: {events:?}"
    );
}

/// Found by `random_operations_keep_the_invariants` (requests queued behind
/// the server's MAX_CONCURRENT_STREAMS, then the server's GOAWAY). A request
/// that never left is retryable (RFC 9113 §8.7), and the application must
/// hear so once. `recv_goaway` reports every stream still queued
/// (`waiting_to_open`) as retryable but leaves it in the store, so the next
/// GOAWAY (the second step of a graceful shutdown, §6.8) reports it again;
/// with a single GOAWAY it is reported twice at once, first among the
/// streams above the last id and then among the queued ones.
#[test]
fn queued_request_is_retryable_once() {
    for graceful in [true, false] {
        let server = Config {
            max_concurrent_streams: 1,
            ..Config::default()
        };
        let mut pair = Pair::new(Config::default(), server, 3);
        pair.connect();
        let first = pair.client.send_request(get("/a"), true).unwrap();
        let queued = pair.client.send_request(get("/b"), true).unwrap();
        pair.drive();
        let _ = pair.server_events();
        if graceful {
            pair.server.go_away(pair.now);
        } else {
            pair.server.abort(Reason::NO_ERROR);
        }
        pair.drive();
        let mut events = pair.client_events();
        if graceful {
            pair.server
                .send_response(first, ResponseHead::new(200), true)
                .unwrap();
            pair.drive();
            events.extend(pair.client_events());
        }
        let retryable = events
            .iter()
            .filter(|e| matches!(e, Event::Retryable { stream } if *stream == queued))
            .count();
        assert_eq!(retryable, 1, "graceful: {graceful}, {events:?}");
    }
}

/// A client that is not pushed to anymore, after a server that pushed.
fn push_then_disable() -> (Link, StreamId) {
    let mut link = link(Config::default(), Config::default(), 5);
    link.drive();
    let parent = link.client.send_request(get("/"), true).unwrap();
    link.drive();
    while link.server.poll_event().is_some() {}
    while link.client.poll_event().is_some() {}
    link.server.push_promise(parent, get("/pushed")).unwrap();
    link.server
        .send_response(parent, ResponseHead::new(200), true)
        .unwrap();
    let mut settings = link.client.local_settings().unwrap();
    settings.enable_push = false;
    let now = link.now;
    link.client.update_settings(now, settings).unwrap();
    (link, parent)
}

fn closed_with_error(conn: &mut h2sim_proto::Connection) -> Option<ConnectionError> {
    std::iter::from_fn(|| conn.poll_event()).find_map(|e| match e {
        Event::Closed { error, .. } => error,
        _ => None,
    })
}

/// Found by `random_operations_keep_the_invariants` (a client turning
/// SETTINGS_ENABLE_PUSH off while a push is on its way). RFC 9113 §6.5.2:
/// "An endpoint that has both set this parameter to 0 and had it
/// acknowledged MUST treat the receipt of a PUSH_PROMISE frame as a
/// connection error" — until the acknowledgement, a promise the server sent
/// earlier is legitimate. `LocalSettings::widen` (src/h2/settings.rs) takes
/// `enable_push` from the new settings at once, and `recv_push_promise`
/// (src/h2/recv.rs) checks the effective value, so the client kills the
/// connection with PROTOCOL_ERROR.
#[test]
fn push_promise_before_enable_push_0_is_acknowledged_is_accepted() {
    let (mut link, _) = push_then_disable();
    // The server's output (the promise) reaches the client before the
    // client's SETTINGS reaches the server.
    link.collect(Dir::ClientToServer);
    link.collect(Dir::ServerToClient);
    link.deliver(Dir::ServerToClient, usize::MAX);
    assert_eq!(closed_with_error(&mut link.client), None);
}

/// Found with the previous one. RFC 9113 §6.5.2: "An endpoint MUST NOT send
/// a PUSH_PROMISE frame if it receives this parameter set to a value of 0."
/// A promise the application queued before the server read ENABLE_PUSH=0 is
/// still written after it (and after the SETTINGS ACK), so a correct client
/// must end the connection with PROTOCOL_ERROR. Unwritten promises (and
/// their pushed streams) should be dropped when the setting arrives; see
/// `Outgoing::Promise` in `write_stream_turn` (src/h2/send.rs), which never
/// checks `peer.enable_push`.
#[test]
fn no_push_promise_written_after_enable_push_0() {
    let (mut link, _) = push_then_disable();
    // The client's SETTINGS reaches the server before the promise leaves.
    link.collect(Dir::ClientToServer);
    link.deliver(Dir::ClientToServer, usize::MAX);
    link.drive();
    assert_eq!(closed_with_error(&mut link.client), None);
    assert_eq!(closed_with_error(&mut link.server), None);
}

/// Found by `random_operations_keep_the_invariants` (a server raising then
/// lowering SETTINGS_INITIAL_WINDOW_SIZE while a large upload starts). Once
/// the lower value is acknowledged, `apply_local` (src/h2/mod.rs) retargets
/// every stream's receive window, but nothing then checks whether the bytes
/// already released (`owed`) now call for a WINDOW_UPDATE: they were below
/// half the old, larger target when released, and `take_update` only runs on
/// release or on padded DATA. The sender, whose window is exhausted, waits
/// forever (RFC 9113 §6.9: the receiver must keep the window open for data
/// it is willing to take).
#[test]
fn lowered_initial_window_does_not_stall_an_upload() {
    let server = Config {
        initial_window_size: 65_535,
        ..Config::default()
    };
    let mut link = link(Config::default(), server, 9);
    link.drive();
    while link.client.poll_event().is_some() {}
    while link.server.poll_event().is_some() {}
    let now = link.now;
    let mut settings = link.server.local_settings().unwrap();
    settings.initial_window_size = 1 << 20;
    link.server.update_settings(now, settings).unwrap();
    settings.initial_window_size = 65_535;
    link.server.update_settings(now, settings).unwrap();
    let id = link.client.send_request(get("/up"), false).unwrap();
    let body = Bytes::from(vec![7u8; 200_000]);
    link.client.send_data(id, body.clone(), true).unwrap();
    // The first window's worth (65,535 bytes, all the client may send) is
    // read and released while the server's SETTINGS are still in flight:
    // 65,535 is below half the target then in force (2^20).
    link.collect(Dir::ClientToServer);
    link.deliver(Dir::ClientToServer, usize::MAX);
    let mut received = 0;
    while let Some(event) = link.server.poll_event() {
        if let Event::Data { data, .. } = event {
            received += data.len();
        }
    }
    assert_eq!(received, 65_535);
    for _ in 0..20 {
        link.drive();
        while link.client.poll_event().is_some() {}
        while let Some(event) = link.server.poll_event() {
            if let Event::Data { data, .. } = event {
                received += data.len();
            }
        }
    }
    assert_eq!(received, body.len(), "the upload stalled");
}

/// Found by `random_operations_keep_the_invariants` (a graceful shutdown
/// whose PING went unanswered, so the server's final GOAWAY went out on its
/// deadline while the client, not yet aware, sent a new POST). RFC 9113 §6.8:
/// after GOAWAY the sender "will ignore frames sent on streams initiated by
/// the receiver if the stream has an identifier higher than the included
/// last stream identifier". The HEADERS is ignored (`refusing_new_streams`
/// in `recv_new_stream`, src/h2/recv.rs), but the DATA that follows finds no
/// stream, is classified `Gone::Idle` (the id is above `last_peer`) and ends
/// the connection with PROTOCOL_ERROR.
#[test]
fn data_on_a_stream_ignored_after_goaway_is_ignored() {
    let mut pair = Pair::with_defaults(11);
    pair.connect();
    // A request the server is still working on keeps the connection open.
    let first = pair.client.send_request(get("/slow"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    pair.server.go_away(pair.now);
    // The client does not read: the server's shutdown PING goes unanswered
    // and the drain deadline sends the final GOAWAY (last stream 0).
    pair.advance(Duration::from_secs(2));
    let id = pair.client.send_request(get("/late"), false).unwrap();
    pair.client
        .send_data(id, Bytes::from_static(b"body"), true)
        .unwrap();
    pair.drive();
    let server = pair.server_events();
    assert!(
        !server
            .iter()
            .any(|e| matches!(e, Event::Closed { error: Some(_), .. })),
        "server: {server:?}"
    );
    let client = pair.client_events();
    assert!(
        client
            .iter()
            .any(|e| matches!(e, Event::Retryable { stream } if *stream == id)),
        "client: {client:?}"
    );
    // The stream opened before the GOAWAY still completes.
    pair.server
        .send_response(first, ResponseHead::new(200), true)
        .unwrap();
    pair.drive();
    assert!(pair.client_events().iter().any(
        |e| matches!(e, Event::Response { stream, end_stream: true, .. } if *stream == first)
    ));
}

/// Found by `random_operations_keep_the_invariants` (pushes on two requests,
/// alternating). `push_promise` allocates the promised id at once but
/// queues the PUSH_PROMISE on the parent stream, and streams are written in
/// turn, each writing all its queued header frames: promises 2 and 6 on
/// stream 1 leave before promise 4 on stream 3. RFC 9113 §5.1.1: a new
/// stream id must exceed every id the sender opened or reserved, so the
/// client ends the connection (PROTOCOL_ERROR, "new stream 4 not above last
/// stream 6"). Promised ids must be allocated when the PUSH_PROMISE is
/// written (src/h2/send.rs, `push_promise` and `write_stream_turn`), or
/// promises written in id order.
#[test]
fn promises_on_different_parents_keep_id_order() {
    let mut pair = Pair::with_defaults(4);
    pair.connect();
    let a = pair.client.send_request(get("/a"), true).unwrap();
    let b = pair.client.send_request(get("/b"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    for parent in [a, b, a] {
        let promised = pair.server.push_promise(parent, get("/pushed")).unwrap();
        pair.server
            .send_response(promised, ResponseHead::new(200), true)
            .unwrap();
    }
    pair.drive();
    let events = pair.client_events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::Closed { .. })),
        "client: {events:?}"
    );
    let promised: Vec<StreamId> = events
        .iter()
        .filter_map(|e| match e {
            Event::PushPromise { promised, .. } => Some(*promised),
            _ => None,
        })
        .collect();
    assert_eq!(promised.len(), 3);
    assert!(promised.is_sorted(), "{promised:?}");
}

/// Found by `random_operations_keep_the_invariants` (a client limiting
/// pushes to one at a time, a second push waiting for that slot, then the
/// client's graceful GOAWAY). The second half of the bug behind
/// `queued_request_is_retryable_once`: on GOAWAY, `recv_goaway`
/// (src/h2/recv.rs) empties `waiting_to_open` into `Event::Retryable` but
/// leaves those streams in the store. A promised stream the client already
/// knows about (its id is at most the GOAWAY's last stream id, so per
/// RFC 9113 §6.8 it "might still complete") is then neither opened nor
/// reset: the client waits forever for its response, and neither side's
/// store ever empties, so the graceful shutdown never ends either.
#[test]
fn push_queued_at_goaway_still_ends() {
    let client = Config {
        max_concurrent_streams: 1,
        ..Config::default()
    };
    let mut pair = Pair::new(client, Config::default(), 6);
    pair.connect();
    let parent = pair.client.send_request(get("/"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    // The first push takes the client's only slot; the second waits.
    let first = pair.server.push_promise(parent, get("/1")).unwrap();
    pair.server
        .send_response(first, ResponseHead::new(200), false)
        .unwrap();
    let second = pair.server.push_promise(parent, get("/2")).unwrap();
    pair.server
        .send_response(second, ResponseHead::new(200), true)
        .unwrap();
    pair.drive();
    let mut events = pair.client_events();
    pair.client.go_away(pair.now);
    pair.drive();
    let _ = pair.server_events();
    pair.server
        .send_data(first, Bytes::from_static(b"done"), true)
        .unwrap();
    pair.server
        .send_response(parent, ResponseHead::new(200), true)
        .unwrap();
    for _ in 0..4 {
        pair.drive();
        events.extend(pair.client_events());
        let _ = pair.server_events();
    }
    let ended = events.iter().any(|e| match e {
        Event::Response {
            stream,
            end_stream: true,
            ..
        }
        | Event::StreamReset { stream, .. } => *stream == second,
        _ => false,
    });
    assert!(ended, "promised stream {second:?} never ended: {events:?}");
    assert!(
        events.iter().any(|e| matches!(e, Event::Closed { .. })),
        "the graceful shutdown never finished: {events:?}"
    );
}
