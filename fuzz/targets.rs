//! The bodies of the fuzz targets, shared by the libFuzzer binaries in
//! `fuzz_targets/` and by `h2sim-proto/tests/fuzz_corpus.rs`, which replays the
//! committed corpus under ordinary `cargo test`. Each body takes arbitrary
//! bytes; besides "nothing panics or loops", the connection targets check the
//! order of events and the pair target the invariants of a whole exchange.

use std::collections::{HashMap, HashSet};
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use arbitrary::{Arbitrary, Unstructured};
use bytes::{Bytes, BytesMut};
use h2sim_proto::frame::{
    DEFAULT_INITIAL_WINDOW_SIZE, DEFAULT_MAX_FRAME_SIZE, ErrorScope, Frame, FrameDecoder,
    HEADER_LEN, Head, MAX_FRAME_SIZE_LIMIT, MAX_WINDOW_SIZE, PREFACE, Setting, Settings,
};
use h2sim_proto::hpack::{DEFAULT_TABLE_SIZE, Decoder, Encoder, IndexingPolicy};
use h2sim_proto::pair::{Dir, Observer, Pair, Rng};
use h2sim_proto::{
    Config, Connection, ConnectionError, Event, HeaderField, Protocol, Reason, RequestHead,
    ResponseHead, Role, StreamId, Violation,
};

/// Frames: the first byte picks where the input is split in two, so partial
/// frames are exercised as well as whole ones.
pub fn frame_decoder(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let split = usize::from(split).min(rest.len());
    let mut decoder = FrameDecoder::new(16_384);
    let mut buf = BytesMut::new();
    for chunk in [&rest[..split], &rest[split..]] {
        buf.extend_from_slice(chunk);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(_))
                | Err(h2sim_proto::frame::FrameError {
                    scope: ErrorScope::Stream(_),
                    ..
                }) => {}
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
}

/// HPACK: the input is cut into header blocks at every 0xff 0x00 pair and
/// decoded in sequence with one decoder, so the dynamic table carries over.
pub fn hpack_decoder(data: &[u8]) {
    let mut decoder = Decoder::new(4096);
    decoder.set_max_header_list_size(16 * 1024);
    let data = Bytes::copy_from_slice(data);
    let mut out = Vec::new();
    let mut start = 0;
    while start <= data.len() {
        let end = data[start..]
            .windows(2)
            .position(|w| w == [0xff, 0x00])
            .map_or(data.len(), |at| start + at);
        out.clear();
        if let Err(e) = decoder.decode(&data.slice(start..end), &mut out)
            && e.is_compression_error()
        {
            return;
        }
        start = end + 2;
    }
}

/// A whole server connection, the protocol told from the first bytes:
/// arbitrary bytes (after the HTTP/2 preface when bit 0 of the first byte is
/// set, so frames are reached at once), cut into reads of arbitrary sizes,
/// with the clock jumping now and then so the head-read, SETTINGS and idle
/// timers fire. Requests are answered (bit 1: with a push first; bit 2: the
/// connection takes 3 of them, `Config::max_requests`), and the events are
/// checked for the order `Event` promises.
pub fn server_connection(data: &[u8]) {
    let Some((flags, reads)) = Reads::split(data) else {
        return;
    };
    let config = Config {
        max_requests: NonZeroU32::new(3).filter(|_| flags & 4 != 0),
        ..Config::default()
    };
    let mut conn =
        Connection::server(config, reads.now).expect("a configuration within RFC 9113 §6.5.2");
    let mut ledger = Ledger::new(Role::Server);
    let mut input = BytesMut::new();
    if flags & 1 != 0 {
        input.extend_from_slice(PREFACE);
    }
    let push = flags & 2 != 0;
    feed(
        &mut conn,
        &mut ledger,
        reads,
        input,
        |conn, ledger, event, _| {
            if let Event::Request { stream, head, .. } = event {
                answer(conn, ledger, stream, push);
                // Given back: a request block the peer repeats hands it
                // out again.
                conn.recycle_request(head);
            }
        },
    );
}

/// Server: answers `stream` with a small response, after promising a pushed
/// one when `push` (errors are the stream's or the protocol's refusal).
fn answer(conn: &mut Connection, ledger: &mut Ledger, stream: StreamId, push: bool) {
    if push
        && let Ok(promised) =
            conn.push_promise(stream, RequestHead::new("GET", "http", "fuzz", "/p"))
    {
        ledger.pushed(promised);
        let _ = conn.send_response(promised, ResponseHead::new(200), false);
        let _ = conn.send_data(promised, Bytes::from_static(b"pushed"), true);
    }
    let _ = conn.send_response(stream, ResponseHead::new(200), false);
    let _ = conn.send_data(stream, Bytes::from_static(b"ok"), true);
}

/// Feeds `reads` to `conn` after what `input` holds, firing the timers due
/// after each read; each event is checked by `ledger`, then handed to
/// `react` with the time. Then the end of stream, whose events are checked
/// too.
fn feed(
    conn: &mut Connection,
    ledger: &mut Ledger,
    reads: Reads<'_>,
    mut input: BytesMut,
    mut react: impl FnMut(&mut Connection, &mut Ledger, Event, Instant),
) {
    let mut now = reads.now;
    for (at, chunk) in reads {
        now = at;
        input.extend_from_slice(chunk);
        conn.handle_input(now, &mut input);
        if conn.poll_timeout().is_some_and(|t| t <= now) {
            conn.handle_timeout(now);
        }
        while let Some(event) = conn.poll_event() {
            ledger.event(&event);
            react(conn, ledger, event, now);
        }
        while conn.poll_transmit(now).is_some() {}
        if conn.is_closed() {
            break;
        }
    }
    conn.handle_eof(now);
    while let Some(event) = conn.poll_event() {
        ledger.event(&event);
    }
    while conn.poll_transmit(now).is_some() {}
}

/// A client that sent requests (a GET, a POST with a body, a HEAD) and reads
/// arbitrary bytes as the server's answer, cut into reads of arbitrary sizes
/// with clock jumps. The first byte: bit 0 HTTP/1.1 (else HTTP/2), bit 1
/// push enabled, bit 2 a server preface (an empty SETTINGS) first so frames
/// are reached at once, bit 3 pushes refused as they are promised. Its
/// events must keep the order `Event` promises and end every request once.
pub fn client_connection(data: &[u8]) {
    let Some((flags, reads)) = Reads::split(data) else {
        return;
    };
    let http1 = flags & 1 != 0;
    let mut config = Config {
        enable_push: flags & 2 != 0,
        ..Config::default()
    };
    config.http1.max_pipeline = 4;
    let mut conn = if http1 {
        Connection::client_http1(config, reads.now).expect("a configuration within RFC 9113 §6.5.2")
    } else {
        Connection::client(config, reads.now).expect("a configuration within RFC 9113 §6.5.2")
    };
    let mut ledger = Ledger::new(Role::Client);
    for (method, path, body) in [
        ("GET", "/a", None),
        ("POST", "/b", Some("body")),
        ("HEAD", "/c", None),
    ] {
        let head = RequestHead::new(method, "http", "fuzz", path);
        if let Ok(stream) = conn.send_request(head, body.is_none()) {
            ledger.opened(stream);
            if let Some(body) = body {
                let _ = conn.send_data(stream, Bytes::from_static(body.as_bytes()), true);
            }
        }
    }
    let mut input = BytesMut::new();
    if flags & 4 != 0 && !http1 {
        Frame::from(Settings {
            ack: false,
            values: Vec::new(),
        })
        .encode(&mut input);
    }
    let refuse_pushes = flags & 8 != 0;
    feed(
        &mut conn,
        &mut ledger,
        reads,
        input,
        |conn, ledger, event, now| match event {
            Event::PushPromise { promised, .. }
                if refuse_pushes && conn.reset(promised, Reason::CANCEL).is_ok() =>
            {
                ledger.cancelled(promised);
            }
            Event::Connected => {
                let _ = conn.ping(now);
            }
            _ => {}
        },
    );
    ledger.assert_all_ended("client after end of stream");
}

/// The reads of a connection target: the input's first byte is the target's
/// flags, its second seeds a generator that cuts the rest into reads of 1 to
/// 2^(flags >> 4) bytes and, before one read in eight, jumps the clock by up
/// to a minute (otherwise 1 ms passes per read).
struct Reads<'a> {
    rest: &'a [u8],
    rng: Rng,
    max: usize,
    /// The clock of the next read.
    now: Instant,
}

impl<'a> Reads<'a> {
    fn split(data: &'a [u8]) -> Option<(u8, Self)> {
        let (&flags, data) = data.split_first()?;
        let (&seed, rest) = data.split_first()?;
        let reads = Reads {
            rest,
            rng: Rng::new(u64::from(seed) + 1),
            max: 1 << (flags >> 4),
            now: Instant::now(),
        };
        Some((flags, reads))
    }
}

impl<'a> Iterator for Reads<'a> {
    /// The time of the read, and its bytes.
    type Item = (Instant, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let n = 1 + self.rng.below(self.max.min(self.rest.len()));
        let (chunk, rest) = self.rest.split_at(n);
        self.rest = rest;
        let at = self.now;
        self.now += if self.rng.below(8) == 0 {
            Duration::from_millis(self.rng.below(60_000) as u64)
        } else {
            Duration::from_millis(1)
        };
        Some((at, chunk))
    }
}

/// HTTP/1.1 both ways: the first byte picks the role (even: a server that
/// detects the protocol from these bytes; odd: a client that sent a request
/// and reads these bytes as responses) and the size of each read.
pub fn http1_connection(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let now = Instant::now();
    let server = mode % 2 == 0;
    let mut conn = if server {
        Connection::server(Config::default(), now).expect("a configuration within RFC 9113 §6.5.2")
    } else {
        let mut config = Config::default();
        config.http1.max_pipeline = 4;
        let mut conn =
            Connection::client_http1(config, now).expect("a configuration within RFC 9113 §6.5.2");
        for path in ["/a", "/b", "/c"] {
            let _ = conn.send_request(RequestHead::new("GET", "http", "fuzz", path), true);
        }
        conn
    };
    let step = usize::from(mode / 2).max(1);
    let mut input = BytesMut::new();
    for chunk in rest.chunks(step) {
        input.extend_from_slice(chunk);
        conn.handle_input(now, &mut input);
        while let Some(event) = conn.poll_event() {
            if let Event::Request { stream, .. } = event {
                let _ = conn.send_response(stream, ResponseHead::new(200), false);
                let _ = conn.send_data(stream, Bytes::from_static(b"ok"), true);
            }
        }
        while conn.poll_transmit(now).is_some() {}
        if conn.is_closed() {
            return;
        }
    }
    conn.handle_eof(now);
    while conn.poll_event().is_some() {}
    while conn.poll_transmit(now).is_some() {}
}

/// How a stream ended, as its application saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The incoming message arrived whole.
    Complete,
    /// `Event::StreamReset`.
    Reset,
    /// `Event::Retryable`.
    Retryable,
    /// `Event::Closed` while the stream was open.
    Closed,
    /// The application reset it itself.
    Cancelled,
}

/// Where a stream's incoming message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Awaiting the (final) head.
    Head,
    /// The head came; body or trailers may follow.
    Body,
    Over(End),
}

/// One side's events, checked against what `Event` promises: per stream
/// head, data, trailers or end, or a reset, and one ending only (RFC 9113
/// §8.1); `Connected` at most once; nothing after `Closed`.
#[derive(Debug)]
struct Ledger {
    role: Role,
    streams: HashMap<StreamId, Phase>,
    connected: bool,
    closed: Option<Option<ConnectionError>>,
}

impl Ledger {
    fn new(role: Role) -> Self {
        Ledger {
            role,
            streams: HashMap::new(),
            connected: false,
            closed: None,
        }
    }

    /// Client: `send_request` handed out `stream`.
    fn opened(&mut self, stream: StreamId) {
        let previous = self.streams.insert(stream, Phase::Head);
        assert!(previous.is_none(), "stream {stream:?} handed out twice");
    }

    /// Server: `push_promise` handed out `stream`.
    fn pushed(&mut self, stream: StreamId) {
        let previous = self.streams.insert(stream, Phase::Over(End::Complete));
        assert!(previous.is_none(), "stream {stream:?} handed out twice");
    }

    /// The application reset `stream` itself.
    fn cancelled(&mut self, stream: StreamId) {
        if let Some(phase) = self.streams.get_mut(&stream)
            && matches!(
                phase,
                Phase::Head | Phase::Body | Phase::Over(End::Complete)
            )
        {
            *phase = Phase::Over(End::Cancelled);
        }
    }

    /// The phase of a stream that may still get events.
    fn live(&mut self, stream: StreamId, what: &str) -> &mut Phase {
        let role = self.role;
        let phase = self
            .streams
            .get_mut(&stream)
            .unwrap_or_else(|| panic!("{role:?}: {what} on unknown stream {stream:?}"));
        assert!(
            !matches!(phase, Phase::Over(_)),
            "{role:?}: {what} on {stream:?} after it ended ({phase:?})"
        );
        phase
    }

    /// The phase of a stream a reset or a refusal may end: a live one, or
    /// one whose incoming message arrived whole when `after_complete`, as
    /// the other half may still be open.
    fn ending(&mut self, stream: StreamId, what: &str, after_complete: bool) -> &mut Phase {
        let complete = self.streams.get(&stream) == Some(&Phase::Over(End::Complete));
        if after_complete && complete {
            return self.streams.get_mut(&stream).expect("looked up above");
        }
        self.live(stream, what)
    }

    fn event(&mut self, event: &Event) {
        let role = self.role;
        assert!(self.closed.is_none(), "{role:?}: {event:?} after Closed");
        let complete_if = |end: bool| {
            if end {
                Phase::Over(End::Complete)
            } else {
                Phase::Body
            }
        };
        match event {
            Event::Connected => {
                assert!(!self.connected, "{role:?}: Connected twice");
                self.connected = true;
            }
            Event::Request {
                stream, end_stream, ..
            } => {
                assert_eq!(role, Role::Server, "a client got a request");
                let previous = self.streams.insert(*stream, complete_if(*end_stream));
                assert!(previous.is_none(), "a second request on {stream:?}");
            }
            Event::Response {
                stream,
                head,
                end_stream,
            } => {
                let phase = self.live(*stream, "response head");
                assert_eq!(
                    *phase,
                    Phase::Head,
                    "a head on {stream:?} after the final one"
                );
                if head.is_informational() {
                    assert!(!end_stream, "interim head with END_STREAM on {stream:?}");
                } else {
                    *phase = complete_if(*end_stream);
                }
            }
            Event::Data {
                stream, end_stream, ..
            } => {
                let phase = self.live(*stream, "DATA");
                assert_eq!(*phase, Phase::Body, "DATA on {stream:?} before its head");
                *phase = complete_if(*end_stream);
            }
            Event::Trailers { stream, .. } => {
                let phase = self.live(*stream, "trailers");
                assert_eq!(
                    *phase,
                    Phase::Body,
                    "trailers on {stream:?} before its head"
                );
                *phase = Phase::Over(End::Complete);
            }
            Event::PushPromise {
                parent, promised, ..
            } => {
                assert!(promised.is_server_initiated() && parent.is_client_initiated());
                self.live(*parent, "PUSH_PROMISE");
                let previous = self.streams.insert(*promised, Phase::Head);
                assert!(previous.is_none(), "{promised:?} promised twice");
            }
            Event::StreamReset {
                stream,
                violation,
                status,
                ..
            } => {
                // A status the core answered in the application's place is
                // an HTTP/1.1 server's, for a request body that broke a rule
                // (RFC 9112 §7.1, 400; over the limit, 413).
                if let Some(status) = status {
                    assert!(
                        role == Role::Server
                            && matches!(status, 400 | 413)
                            && matches!(violation, Some(Violation::Http1(_))),
                        "{role:?}: {stream:?} reset with status {status} for {violation:?}"
                    );
                }
                // A reset may end a stream whose incoming message is whole:
                // a server's response may still be under way, and a client
                // may still be uploading after an early response (RFC 9113
                // §8.1), which the server can then stop.
                *self.ending(*stream, "reset", true) = Phase::Over(End::Reset);
            }
            Event::Refused { stream, .. } => {
                // Turned down before the application had it, or after it
                // ended: never a stream still open for it.
                let open = self
                    .streams
                    .get(stream)
                    .is_some_and(|p| !matches!(p, Phase::Over(_)));
                assert!(!open, "{role:?}: {stream:?} refused while open");
            }
            Event::Retryable { stream } => {
                let ours = match role {
                    Role::Client => stream.is_client_initiated(),
                    Role::Server => stream.is_server_initiated(),
                };
                assert!(ours, "{role:?}: {stream:?} retryable, opened by the peer");
                // On a server, of a push (whose request is the promise).
                let push = role == Role::Server;
                *self.ending(*stream, "retryable", push) = Phase::Over(End::Retryable);
            }
            Event::Closed { error, .. } => {
                for phase in self.streams.values_mut() {
                    if matches!(phase, Phase::Head | Phase::Body) {
                        *phase = Phase::Over(End::Closed);
                    }
                }
                self.closed = Some(error.clone());
            }
            Event::Pong { .. } | Event::GoAway { .. } | Event::Frame { .. } => {}
        }
    }

    /// Streams not ended yet.
    fn pending(&self) -> usize {
        self.streams
            .values()
            .filter(|p| !matches!(p, Phase::Over(_)))
            .count()
    }

    /// Every stream ended, once (the `event` checks saw to the once).
    fn assert_all_ended(&self, when: &str) {
        let open: Vec<_> = self
            .streams
            .iter()
            .filter(|(_, p)| !matches!(p, Phase::Over(_)))
            .collect();
        assert!(
            open.is_empty(),
            "{:?} {when}: streams never ended: {open:?}",
            self.role
        );
    }
}

/// HPACK differential: header lists the fuzzer chooses, encoded by our
/// encoder and decoded by our decoder block after block, so the dynamic
/// tables carry over, with table size changes (SETTINGS_HEADER_TABLE_SIZE
/// acknowledged, several between two blocks at times) in between. Each block
/// must decode to the fields encoded (sensitive ones still never-indexed,
/// RFC 7541 §6.2.3) and leave both tables equal (§2.3.2, §4.2).
pub fn hpack_roundtrip(data: &[u8]) {
    let Ok(script) = HpackScript::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut encoder = Encoder::new();
    encoder.set_huffman(script.huffman);
    encoder.set_indexing_policy(if script.index_all {
        IndexingPolicy::All
    } else {
        IndexingPolicy::Selective
    });
    let mut decoder = Decoder::new(DEFAULT_TABLE_SIZE);
    decoder.set_max_header_list_size(usize::MAX);
    for block in &script.blocks {
        for &size in &block.table_sizes {
            encoder.set_max_table_size(usize::from(size));
            decoder.set_max_table_size(usize::from(size));
        }
        let fields: Vec<HeaderField> = block
            .fields
            .iter()
            .map(|(name, value, sensitive)| HeaderField {
                name: Bytes::copy_from_slice(name),
                value: Bytes::copy_from_slice(value),
                sensitive: *sensitive,
            })
            .collect();
        let mut wire = BytesMut::new();
        encoder.encode(&fields, &mut wire);
        let mut decoded = Vec::new();
        if let Err(e) = decoder.decode(&wire.freeze(), &mut decoded) {
            panic!("our decoder rejected our encoder's block: {e:?}");
        }
        assert_eq!(decoded.len(), fields.len(), "field count");
        for (got, sent) in decoded.iter().zip(&fields) {
            assert_eq!((&got.name, &got.value), (&sent.name, &sent.value));
            assert!(
                got.sensitive || !sent.sensitive,
                "{sent:?} lost never-indexed"
            );
        }
        assert!(
            decoder.table_entries().eq(encoder.table_entries()),
            "dynamic tables differ"
        );
        assert_eq!(decoder.table_capacity(), encoder.table_capacity());
    }
}

/// The input of [`hpack_roundtrip`].
#[derive(Debug, Arbitrary)]
struct HpackScript {
    huffman: bool,
    index_all: bool,
    blocks: Vec<HpackBlock>,
}

#[derive(Debug, Arbitrary)]
struct HpackBlock {
    /// SETTINGS_HEADER_TABLE_SIZE values taking effect before the block.
    table_sizes: Vec<u16>,
    /// Name, value, sensitive.
    fields: Vec<(Vec<u8>, Vec<u8>, bool)>,
}

/// Our client against our server, joined by `pair::Pair` (deliveries split
/// at points the input's seed picks), driven by an arbitrary sequence of
/// application operations: requests and uploads, answers and pushes, resets
/// from both sides, PINGs, SETTINGS changes, GOAWAY, aborts, clock jumps and
/// partial deliveries. The link is then settled (everything answered, both
/// sides going away, timers run out) and checked: each side's events keep
/// the order `Event` promises and every request and push ends exactly once;
/// neither side blames the other for a rule only a broken peer breaks; and
/// on the wire (`FlowWitness`) no DATA exceeds a window, no window exceeds
/// 2^31-1, no frame exceeds the peer's SETTINGS_MAX_FRAME_SIZE, and every
/// DATA byte read reaches the application unless its stream was reset.
pub fn pair_operations(data: &[u8]) {
    let Ok(script) = PairScript::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let mut world = World::new(&script);
    for op in &script.ops {
        world.apply(op);
        world.drain();
    }
    world.settle();
    world.check();
}

/// The input of [`pair_operations`].
#[derive(Debug, Arbitrary)]
struct PairScript {
    client: SideSetup,
    server: SideSetup,
    seed: u64,
    ops: Vec<PairOp>,
}

/// One side's configuration, from small sets of telling values.
#[derive(Debug, Arbitrary)]
struct SideSetup {
    initial_window: Window,
    connection_window: Window,
    large_frames: bool,
    max_concurrent_streams: u8,
    header_table_size: u16,
    encoder_table_size: u16,
    enable_push: bool,
    keepalive: bool,
    /// 1 to 7: the server's `max_requests`; others leave it unlimited.
    request_limit: u8,
}

/// A flow-control window size.
#[derive(Debug, Clone, Copy, Arbitrary)]
enum Window {
    Zero,
    Small,
    Default,
    Large,
}

impl Window {
    fn size(self) -> u32 {
        match self {
            Window::Zero => 0,
            Window::Small => 1_000,
            Window::Default => 65_535,
            Window::Large => 1 << 20,
        }
    }
}

impl SideSetup {
    fn config(&self, role: Role) -> Config {
        Config {
            initial_window_size: self.initial_window.size(),
            connection_window_size: self.connection_window.size(),
            max_frame_size: if self.large_frames { 1 << 20 } else { 16_384 },
            max_concurrent_streams: u32::from(self.max_concurrent_streams % 9),
            header_table_size: u32::from(self.header_table_size),
            encoder_table_size: u32::from(self.encoder_table_size),
            // A server that enables push breaks §6.5.2.
            enable_push: self.enable_push && role == Role::Client,
            keepalive: self.keepalive.then_some(Duration::from_secs(20)),
            max_requests: NonZeroU32::new(u32::from(self.request_limit))
                .filter(|_| self.request_limit < 8),
            ..Config::default()
        }
    }
}

#[derive(Debug, Arbitrary)]
enum PairOp {
    /// Client: a request, with a body of `body` bytes unless 0, left open
    /// for uploads with `open`.
    Request {
        body: u16,
        open: bool,
    },
    /// Client: more of an open upload's body, maybe its end.
    Upload {
        pick: u8,
        len: u16,
        end: bool,
    },
    /// Server: answers a request, with an interim head first, a body and
    /// trailers as chosen.
    Answer {
        pick: u8,
        interim: bool,
        body: u16,
        trailers: bool,
    },
    /// Server: promises a push on a request it has not answered.
    Push {
        pick: u8,
    },
    /// Either side resets one of its streams.
    Reset {
        server: bool,
        pick: u8,
        reason: u8,
    },
    Ping {
        server: bool,
    },
    Settings {
        server: bool,
        initial_window: Window,
        large_frames: bool,
        max_concurrent_streams: u8,
        header_table_size: u16,
        enable_push: bool,
    },
    GoAway {
        server: bool,
    },
    Abort {
        server: bool,
        reason: u8,
    },
    /// The clock moves by `millis` × 16 ms, timers due fire.
    Advance {
        millis: u16,
    },
    /// The clock moves to the next deadline.
    Jump,
    /// Up to `bytes` of what one side wrote reach the other.
    Deliver {
        to_server: bool,
        bytes: u16,
    },
    /// Bytes move until the link rests.
    Drive,
}

const REASONS: [Reason; 4] = [
    Reason::NO_ERROR,
    Reason::CANCEL,
    Reason::REFUSED_STREAM,
    Reason::INTERNAL_ERROR,
];

/// Body bytes of a length the operations choose, kept small.
fn body(len: u16) -> Bytes {
    Bytes::from(vec![b'x'; usize::from(len % 4_096)])
}

/// What one application did and heard.
#[derive(Debug)]
struct App {
    ledger: Ledger,
    /// Data event bytes per stream.
    received: HashMap<StreamId, u64>,
    pings: usize,
    pongs: usize,
    aborted: bool,
    went_away: bool,
    /// Client: streams whose body is still open. Server: streams not
    /// answered yet.
    todo: Vec<StreamId>,
}

impl App {
    fn new(role: Role) -> Self {
        App {
            ledger: Ledger::new(role),
            received: HashMap::new(),
            pings: 0,
            pongs: 0,
            aborted: false,
            went_away: false,
            todo: Vec::new(),
        }
    }

    /// Takes `pick` out of the streams still to do.
    fn take(&mut self, pick: u8) -> Option<StreamId> {
        let n = self.todo.len();
        (n > 0).then(|| self.todo.swap_remove(usize::from(pick) % n))
    }
}

/// The pair and both applications.
struct World {
    pair: Pair<Connection, Connection, FlowWitness>,
    client: App,
    server: App,
    /// The clock moved with output not driven across: a SETTINGS may go
    /// unacknowledged past its timeout through no fault of the peer
    /// (§6.5.3).
    clock_outran: bool,
}

impl World {
    fn new(script: &PairScript) -> Self {
        let client = script.client.config(Role::Client);
        let server = script.server.config(Role::Server);
        let now = Instant::now();
        World {
            // A server that knows it speaks HTTP/2: one still listening for
            // the protocol would take a GOAWAY before the preface as HTTP/1.1.
            pair: Pair::join(
                Connection::client(client, now).expect("a configuration within RFC 9113 §6.5.2"),
                Connection::server_for(Protocol::Http2, server, now)
                    .expect("a configuration within RFC 9113 §6.5.2"),
                now,
            )
            .split(script.seed)
            .observed(FlowWitness::new()),
            client: App::new(Role::Client),
            server: App::new(Role::Server),
            clock_outran: false,
        }
    }

    fn side(&mut self, server: bool) -> (&mut Connection, &mut App) {
        if server {
            (&mut self.pair.server, &mut self.server)
        } else {
            (&mut self.pair.client, &mut self.client)
        }
    }

    fn apply(&mut self, op: &PairOp) {
        let now = self.pair.now;
        match *op {
            PairOp::Request { body: len, open } => {
                let method = if len > 0 || open { "POST" } else { "GET" };
                let head = RequestHead::new(method, "http", "fuzz", "/");
                let end = len == 0 && !open;
                if let Ok(stream) = self.pair.client.send_request(head, end) {
                    self.client.ledger.opened(stream);
                    if len > 0 {
                        let _ = self.pair.client.send_data(stream, body(len), !open);
                    }
                    if open {
                        self.client.todo.push(stream);
                    }
                }
            }
            PairOp::Upload { pick, len, end } => {
                if let Some(stream) = self.client.take(pick) {
                    let sent = self.pair.client.send_data(stream, body(len), end);
                    if sent.is_ok() && !end {
                        self.client.todo.push(stream);
                    }
                }
            }
            PairOp::Answer {
                pick,
                interim,
                body: len,
                trailers,
            } => {
                if let Some(stream) = self.server.take(pick) {
                    self.respond(stream, interim, len, trailers);
                }
            }
            PairOp::Push { pick } => {
                let n = self.server.todo.len();
                if n > 0 {
                    let parent = self.server.todo[usize::from(pick) % n];
                    let request = RequestHead::new("GET", "http", "fuzz", "/pushed");
                    if let Ok(promised) = self.pair.server.push_promise(parent, request) {
                        self.server.ledger.pushed(promised);
                        self.respond(promised, false, 100, false);
                    }
                }
            }
            PairOp::Reset {
                server,
                pick,
                reason,
            } => {
                let (conn, app) = self.side(server);
                let mut live: Vec<StreamId> = app
                    .ledger
                    .streams
                    .iter()
                    .filter(|(_, p)| !matches!(p, Phase::Over(_)))
                    .map(|(&id, _)| id)
                    .chain(app.todo.iter().copied())
                    .collect();
                live.sort_unstable();
                if !live.is_empty() {
                    let stream = live[usize::from(pick) % live.len()];
                    let reason = REASONS[usize::from(reason) % REASONS.len()];
                    if conn.reset(stream, reason).is_ok() {
                        app.ledger.cancelled(stream);
                        app.todo.retain(|&s| s != stream);
                    }
                }
            }
            PairOp::Ping { server } => {
                let (conn, app) = self.side(server);
                if conn.ping(now).is_ok() {
                    app.pings += 1;
                }
            }
            PairOp::Settings {
                server,
                initial_window,
                large_frames,
                max_concurrent_streams,
                header_table_size,
                enable_push,
            } => {
                let (conn, _) = self.side(server);
                if let Some(mut settings) = conn.local_settings() {
                    settings.initial_window_size = initial_window.size();
                    settings.max_frame_size = if large_frames { 1 << 20 } else { 16_384 };
                    settings.max_concurrent_streams = u32::from(max_concurrent_streams % 9);
                    settings.header_table_size = u32::from(header_table_size);
                    settings.enable_push = enable_push && !server;
                    let _ = conn.update_settings(now, settings);
                }
            }
            PairOp::GoAway { server } => {
                let (conn, app) = self.side(server);
                conn.go_away(now);
                app.went_away = true;
            }
            PairOp::Abort { server, reason } => {
                let (conn, app) = self.side(server);
                conn.abort(REASONS[usize::from(reason) % REASONS.len()]);
                app.aborted = true;
            }
            PairOp::Advance { millis } => {
                self.clock_outran = true;
                self.pair
                    .advance(Duration::from_millis(u64::from(millis) * 16));
            }
            PairOp::Jump => {
                self.clock_outran = true;
                self.pair.jump();
            }
            PairOp::Deliver { to_server, bytes } => {
                let dir = if to_server {
                    Dir::ClientToServer
                } else {
                    Dir::ServerToClient
                };
                self.pair.collect(dir);
                self.pair.deliver(dir, usize::from(bytes));
            }
            PairOp::Drive => {
                self.pair.drive();
            }
        }
    }

    /// Server: answers `stream` (errors mean the stream or the connection
    /// is gone, which the ledgers account for).
    fn respond(&mut self, stream: StreamId, interim: bool, len: u16, trailers: bool) {
        let conn = &mut self.pair.server;
        if interim {
            let _ = conn.send_response(stream, ResponseHead::new(100), false);
        }
        let no_body = len == 0 && !trailers;
        let _ = conn.send_response(stream, ResponseHead::new(200), no_body);
        if len > 0 {
            let _ = conn.send_data(stream, body(len), !trailers);
        }
        if trailers {
            let _ = conn.send_trailers(stream, vec![HeaderField::new("x-trailer", "1")]);
        }
    }

    /// Both sides' events into their applications.
    fn drain(&mut self) {
        let excuses = self.excuses();
        // Heads go back once heard, as the simulator's client and server
        // give them: a block that repeats hands them out again.
        while let Some(event) = self.pair.client.poll_event() {
            self.client.heard(&event, excuses);
            if let Event::Response { head, .. } = event {
                self.pair.client.recycle_fields(head.fields);
            }
        }
        while let Some(event) = self.pair.server.poll_event() {
            self.server.heard(&event, excuses);
            if let Event::Request { stream, head, .. } = event {
                self.server.todo.push(stream);
                self.pair.server.recycle_request(head);
            }
        }
    }

    fn excuses(&self) -> Excuses {
        Excuses {
            settings_timeout: self.clock_outran,
        }
    }

    /// Brings the link to rest: uploads ended, requests answered, then both
    /// sides going away and the clock run to the last timer.
    fn settle(&mut self) {
        for _ in 0..1_000 {
            let moved = self.pair.drive();
            self.drain();
            let mut acted = false;
            while let Some(stream) = self.client.todo.pop() {
                let _ = self.pair.client.send_data(stream, Bytes::new(), true);
                acted = true;
            }
            while let Some(stream) = self.server.todo.pop() {
                self.respond(stream, false, 10, false);
                acted = true;
            }
            if moved || acted {
                continue;
            }
            if !(self.client.went_away && self.server.went_away) {
                let now = self.pair.now;
                for server in [false, true] {
                    let (conn, app) = self.side(server);
                    conn.go_away(now);
                    app.went_away = true;
                }
                continue;
            }
            let closed = self.pair.client.is_closed() && self.pair.server.is_closed();
            if closed || self.pair.jump().is_none() {
                break;
            }
        }
        let (client, server) = (&self.pair.client, &self.pair.server);
        assert!(
            client.is_closed() && server.is_closed(),
            "the link did not end: client closed {}, server closed {}",
            client.is_closed(),
            server.is_closed()
        );
    }

    fn check(&self) {
        for (app, name) in [(&self.client, "client"), (&self.server, "server")] {
            app.ledger.assert_all_ended("once the link ended");
            assert!(app.pongs <= app.pings, "{name}: more PONGs than PINGs");
        }
        let witness = &self.pair.observer;
        for dir in Dir::BOTH {
            let flow = &witness.dirs[dir.index()];
            assert_eq!(self.pair.in_flight(dir), 0, "{dir:?}: bytes left in flight");
            assert_eq!(
                flow.read_bytes,
                self.pair.written(dir),
                "{dir:?}: bytes never read"
            );
            let receiver = match dir {
                Dir::ClientToServer => &self.server,
                Dir::ServerToClient => &self.client,
            };
            for (stream, &read) in &flow.data_read {
                let got = receiver.received.get(stream).copied().unwrap_or(0);
                assert!(
                    got <= read,
                    "{dir:?} {stream:?}: {got} bytes of Data events from {read} of DATA"
                );
                // A message that arrived whole got every byte read on its
                // stream, unless the stream was reset (by either side) or
                // ignored above a GOAWAY (§6.8). Bytes read on a stream the
                // receiver never took (a promise crossing a reset parent) or
                // after it closed are dropped, rightly.
                let complete =
                    receiver.ledger.streams.get(stream) == Some(&Phase::Over(End::Complete));
                if complete && !witness.ignored(dir, *stream) && !witness.reset.contains(stream) {
                    assert_eq!(got, read, "{dir:?} {stream:?}: DATA read, not delivered");
                }
            }
            for (stream, &got) in &receiver.received {
                assert!(
                    flow.data_read.contains_key(stream) || got == 0,
                    "{dir:?} {stream:?}: Data events without DATA"
                );
            }
        }
    }
}

/// What a broken peer would be blamed for, that a correct one can be caught
/// by here: the races the RFC allows and our own limits, which arbitrary
/// operations can reach.
#[derive(Debug, Clone, Copy)]
struct Excuses {
    /// The clock outran the deliveries (§6.5.3).
    settings_timeout: bool,
}

impl Excuses {
    fn allow(self, violation: &Violation) -> bool {
        match violation {
            // A stream opened before a lowered MAX_CONCURRENT_STREAMS arrived
            // (§5.1.2); a push crossing its refusal or its parent's reset
            // (§8.4.2); floods of our own operations.
            Violation::ConcurrencyExceeded
            | Violation::PushRefused
            | Violation::AckFlood
            | Violation::ResetFlood
            | Violation::StreamErrorFlood
            | Violation::EmptyFrameFlood => true,
            Violation::SettingsTimeout => self.settings_timeout,
            _ => false,
        }
    }
}

impl App {
    fn heard(&mut self, event: &Event, excuses: Excuses) {
        let role = self.ledger.role;
        match event {
            Event::Data { stream, data, .. } => {
                *self.received.entry(*stream).or_default() += data.len() as u64;
            }
            Event::Pong { .. } => self.pongs += 1,
            Event::StreamReset {
                stream,
                violation: Some(v),
                ..
            }
            | Event::Refused {
                stream,
                violation: v,
                ..
            } => {
                assert!(
                    excuses.allow(v),
                    "{role:?} reset {stream:?} blaming the peer: {v}"
                );
            }
            Event::Closed { error, .. } => {
                if let Some(ConnectionError::Local { violation, .. }) = error {
                    assert!(
                        excuses.allow(violation),
                        "{role:?} closed blaming the peer: {violation}"
                    );
                }
                let pending = self.ledger.pending();
                assert!(
                    error.is_some() || pending == 0 || self.aborted,
                    "{role:?}: clean close with {pending} streams open: they vanished"
                );
            }
            _ => {}
        }
        self.ledger.event(event);
    }
}

/// Flow control as the wire shows it (RFC 9113 §5.2, §6.9), kept from the
/// frames alone. For each direction S→R: S's connection window (65,535
/// plus the WINDOW_UPDATEs on stream 0 S has read, minus the DATA S has
/// written), each stream's credit on top of R's SETTINGS_INITIAL_WINDOW_SIZE
/// as S knows it (S applies each change to every stream, §6.9.2, so the
/// window is that value plus the credit), and R's SETTINGS_MAX_FRAME_SIZE
/// as S knows it (§4.2). Frames count as written when S hands them out and
/// as read just before R takes them, so each check sees what S had seen.
struct FlowWitness {
    dirs: [Flow; 2],
    /// Streams a RST_STREAM was written on, either way.
    reset: HashSet<StreamId>,
    /// The lowest last stream id of the GOAWAYs each direction's sender
    /// wrote.
    goaway_last: [Option<StreamId>; 2],
}

struct Flow {
    written: FrameReader,
    read: FrameReader,
    conn_window: i64,
    credit: HashMap<StreamId, i64>,
    initial_window: i64,
    max_frame: u32,
    /// Flow-controlled DATA bytes R read, per stream.
    data_read: HashMap<StreamId, u64>,
    read_bytes: u64,
}

impl FlowWitness {
    fn new() -> Self {
        let flow = |preface| Flow {
            written: FrameReader::new(preface),
            read: FrameReader::new(preface),
            conn_window: i64::from(DEFAULT_INITIAL_WINDOW_SIZE),
            credit: HashMap::new(),
            initial_window: i64::from(DEFAULT_INITIAL_WINDOW_SIZE),
            max_frame: DEFAULT_MAX_FRAME_SIZE,
            data_read: HashMap::new(),
            read_bytes: 0,
        };
        FlowWitness {
            dirs: [flow(true), flow(false)],
            reset: HashSet::new(),
            goaway_last: [None, None],
        }
    }

    /// Whether the receiver of `dir` may have ignored `stream`: opened by
    /// the sender above the last stream id of a GOAWAY the receiver wrote
    /// (RFC 9113 §6.8).
    fn ignored(&self, dir: Dir, stream: StreamId) -> bool {
        let by_sender = match dir {
            Dir::ClientToServer => stream.is_client_initiated(),
            Dir::ServerToClient => stream.is_server_initiated(),
        };
        by_sender && self.goaway_last[dir.reverse().index()].is_some_and(|last| stream > last)
    }
}

impl Observer for FlowWitness {
    fn written(&mut self, dir: Dir, bytes: &[u8]) {
        let flow = &mut self.dirs[dir.index()];
        for (len, frame) in flow.written.push(bytes, dir, "wrote") {
            assert!(
                len <= flow.max_frame,
                "{dir:?}: a frame of {len} bytes above the peer's SETTINGS_MAX_FRAME_SIZE {}",
                flow.max_frame
            );
            match frame {
                Frame::Data(data) => {
                    let n = i64::from(data.flow_controlled_len());
                    let stream = flow.credit.entry(data.stream_id).or_default();
                    let window = flow.conn_window.min(flow.initial_window + *stream);
                    assert!(
                        n == 0 || n <= window,
                        "{dir:?}: DATA of {n} on {:?} with {window} of window (§6.9.1)",
                        data.stream_id
                    );
                    *stream -= n;
                    flow.conn_window -= n;
                }
                Frame::RstStream(rst) => {
                    self.reset.insert(rst.stream_id);
                }
                Frame::GoAway(goaway) => {
                    let last = &mut self.goaway_last[dir.index()];
                    *last =
                        Some(last.map_or(goaway.last_stream_id, |l| l.min(goaway.last_stream_id)));
                }
                _ => {}
            }
        }
    }

    fn read(&mut self, dir: Dir, bytes: &[u8]) {
        let flow = &mut self.dirs[dir.index()];
        flow.read_bytes += bytes.len() as u64;
        let frames = flow.read.push(bytes, dir, "read");
        for (_, frame) in frames {
            // WINDOW_UPDATE and SETTINGS from S govern what R may send.
            let back = &mut self.dirs[dir.reverse().index()];
            match frame {
                Frame::Data(data) => {
                    let flow = &mut self.dirs[dir.index()];
                    let n = u64::from(data.flow_controlled_len());
                    *flow.data_read.entry(data.stream_id).or_default() += n;
                }
                Frame::WindowUpdate(update) => {
                    let n = i64::from(update.increment);
                    let window = if update.stream_id.is_zero() {
                        back.conn_window += n;
                        back.conn_window
                    } else {
                        let credit = back.credit.entry(update.stream_id).or_default();
                        *credit += n;
                        back.initial_window + *credit
                    };
                    assert!(
                        window <= i64::from(MAX_WINDOW_SIZE),
                        "{dir:?}: WINDOW_UPDATE took {:?} to {window} (§6.9.1)",
                        update.stream_id
                    );
                }
                Frame::Settings(settings) if !settings.ack => {
                    for setting in settings.values {
                        match setting {
                            Setting::InitialWindowSize(size) => {
                                back.initial_window = i64::from(size);
                            }
                            Setting::MaxFrameSize(size) => back.max_frame = size,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Frames from one direction's bytes, after the client preface (§3.4) on
/// the client's.
struct FrameReader {
    buf: BytesMut,
    decoder: FrameDecoder,
    preface_left: usize,
}

impl FrameReader {
    fn new(preface: bool) -> Self {
        FrameReader {
            buf: BytesMut::new(),
            decoder: FrameDecoder::new(MAX_FRAME_SIZE_LIMIT),
            preface_left: if preface { PREFACE.len() } else { 0 },
        }
    }

    /// Takes `bytes`; returns each frame now whole, with its length field.
    /// Our sides write only valid frames: anything else fails the run.
    fn push(&mut self, bytes: &[u8], dir: Dir, how: &str) -> Vec<(u32, Frame)> {
        let skip = self.preface_left.min(bytes.len());
        let start = PREFACE.len() - self.preface_left;
        assert_eq!(
            &bytes[..skip],
            &PREFACE[start..start + skip],
            "{dir:?}: bad preface"
        );
        self.preface_left -= skip;
        self.buf.extend_from_slice(&bytes[skip..]);
        let mut frames = Vec::new();
        while let Some(head) = self.buf.first_chunk::<HEADER_LEN>().map(Head::parse) {
            match self.decoder.decode(&mut self.buf) {
                Ok(Some(frame)) => frames.push((head.len, frame)),
                Ok(None) => break,
                Err(e) => panic!("{dir:?}: {how} an undecodable frame {head:?}: {e}"),
            }
        }
        frames
    }
}
