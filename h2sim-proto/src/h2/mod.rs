//! The HTTP/2 side of a connection (RFC 9113): settings, streams, flow
//! control, push, shutdown and the limits that keep a hostile peer bounded.
//!
//! `Session` is split by direction: `recv` handles the peer's frames, `send`
//! the application's commands and the building of output.

mod control;
mod echo;
mod fields;
mod flow;
mod limits;
mod recv;
mod send;
mod settings;
mod store;
mod stream;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};

use self::control::Control;
use self::echo::Echoes;
pub use self::fields::connection_specific;
use self::flow::RecvWindow;
use self::limits::{Rate, RateLimit};
use self::settings::Local;
pub use self::settings::LocalSettings;
use self::store::Store;
use self::stream::{Outgoing, State, Stream};
use crate::close::CloseCause;
use crate::config::Config;
use crate::error::{ConnectionError, UserError, Violation};
use crate::event::{Event, RefusedWith};
use crate::frame::{
    DEFAULT_INITIAL_WINDOW_SIZE, DEFAULT_MAX_FRAME_SIZE, FrameDecoder, Reason, Settings, StreamId,
};
use crate::hpack;
use crate::message::RequestHead;
use crate::role::Role;
use crate::spares::Spares;
use crate::timers::{SessionTimer, SessionTimers};
use crate::trim::Trim;

/// What the peer has told us in SETTINGS (RFC 9113 §6.5.2), with the
/// defaults that hold until it does.
#[derive(Debug, Clone, Copy)]
struct PeerSettings {
    enable_push: bool,
    max_concurrent_streams: u32,
    initial_window_size: u32,
    max_frame_size: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE: advisory (§6.5.2, §10.5.1), but a
    /// peer that states a limit is likely to refuse what passes it, so no
    /// head of ours above it is sent (`UserError::HeaderListTooLarge`).
    max_header_list_size: u32,
    /// The server advertised SETTINGS_ENABLE_CONNECT_PROTOCOL = 1: our
    /// requests may carry `:protocol` (RFC 8441 §3).
    enable_connect_protocol: bool,
}

impl Default for PeerSettings {
    fn default() -> Self {
        PeerSettings {
            enable_push: true,
            // The RFC's initial value is unlimited, but a client that opens
            // more than the server will allow before its SETTINGS arrive
            // only earns REFUSED_STREAM; 100 is the floor §6.5.2 recommends.
            max_concurrent_streams: 100,
            initial_window_size: DEFAULT_INITIAL_WINDOW_SIZE,
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            // Unlimited until the peer says otherwise (§6.5.2).
            max_header_list_size: u32::MAX,
            // Absent means 0 (RFC 8441 §3).
            enable_connect_protocol: false,
        }
    }
}

/// A field block arriving in HEADERS or PUSH_PROMISE plus CONTINUATIONs.
#[derive(Debug)]
struct PartialBlock {
    stream: StreamId,
    kind: BlockKind,
    fragments: BytesMut,
    continuations: usize,
}

#[derive(Debug, Clone, Copy)]
enum BlockKind {
    Headers {
        end_stream: bool,
        /// The HEADERS depended on its own stream (§5.3.1).
        self_dependent: bool,
    },
    PushPromise {
        promised: StreamId,
    },
}

/// Where a graceful shutdown stands (RFC 9113 §6.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shutdown {
    Running,
    /// Client: going away, its streams not all done. Its PING and GOAWAY
    /// wait for them (see `Session::client_goaway_when_done`).
    Closing,
    /// GOAWAY with the maximum id sent, then a PING to time one round trip
    /// (bounded by `SessionTimer::ShutdownPing`).
    Draining,
    /// The final GOAWAY names the last stream we will process.
    Final {
        last: StreamId,
    },
}

/// Payload of the PING that times the first step of a graceful shutdown.
const SHUTDOWN_PING: [u8; 8] = *b"h2s-shut";
/// Payload of the keep-alive PING.
const KEEPALIVE_PING: [u8; 8] = *b"h2s-keep";

/// The HTTP/2 protocol state of one connection.
#[derive(Debug)]
pub(crate) struct Session {
    role: Role,
    config: Arc<Config>,
    /// Server: the client preface has been checked.
    preface_received: bool,
    /// The peer's first frame (its SETTINGS) has arrived.
    settings_received: bool,
    decoder: FrameDecoder,
    hpack_decoder: hpack::Decoder,
    hpack_encoder: hpack::Encoder,
    peer: PeerSettings,
    store: Store,
    /// Connection-level windows (§6.9.1).
    send_window: flow::Window,
    recv_window: RecvWindow,
    /// Our settings: in flight, and in force.
    local: Local,
    partial: Option<Box<PartialBlock>>,
    /// Acknowledgements owed to the peer.
    settings_acks_owed: usize,
    ping_counter: u64,
    window_updates: VecDeque<(StreamId, u32)>,
    /// SETTINGS, PINGs, their acknowledgements, RST_STREAMs, GOAWAYs and
    /// PUSH_PROMISEs to write.
    control: Control,
    /// Locally initiated streams waiting for a concurrency slot.
    waiting_to_open: VecDeque<StreamId>,
    /// Streams with frames to send, served round-robin.
    ready: VecDeque<StreamId>,
    /// Streams with DATA held back by the connection window.
    conn_blocked: VecDeque<StreamId>,
    shutdown: Shutdown,
    /// The session's deadlines: `SettingsAck` (our oldest SETTINGS in
    /// flight), `ShutdownPing` (while `Draining`), `ReplyWait` and
    /// `KeepAlive`. `poll_timeout` is the earliest.
    ///
    /// `ReplyWait` is set while a client going away has the PING sent with
    /// its GOAWAY unanswered: the connection stays until the answer (or the
    /// peer's GOAWAY, or its close), at most until then, so an error GOAWAY
    /// the peer sends about our last frames reaches the application instead
    /// of a closed socket.
    timers: SessionTimers,
    /// Keep-alive (`Config::keepalive`): our keep-alive PING is out and
    /// unanswered, so `SessionTimer::KeepAlive` is the end of its wait rather
    /// than a quiet spell's, and input does not move it.
    keepalive_awaited: bool,
    /// The peer's GOAWAY: last stream id it will process.
    peer_goaway: Option<StreamId>,
    /// Server: requests taken, against `Config::max_requests`.
    requests_taken: u32,
    /// The error the connection ended with, kept once `closed` is set:
    /// later input is discarded and this stays what `Connection::error`
    /// reports (sticky, as rustls keeps its error).
    error: Option<Box<ConnectionError>>,
    closed: bool,
    /// The connection preface and first SETTINGS are written on first poll.
    preface_owed: bool,
    events: VecDeque<Event>,
    out: VecDeque<Bytes>,
    /// Frames are written here and split off as output chunks. Held only
    /// while a turn's output is built: `poll_transmit` lets it go with the
    /// turn's last chunk.
    wbuf: BytesMut,
    peer_resets: RateLimit,
    local_resets: RateLimit,
    empty_frames: RateLimit,
    pub(crate) stats: crate::stats::Stats,
    /// With `Config::trace_frames`: a decoder reading our output back, its
    /// buffer, and whether the client preface is still to be skipped.
    sent_trace: Option<Box<(FrameDecoder, BytesMut, bool)>>,
    /// Field sections decoded here, reused between blocks.
    field_scratch: Vec<hpack::HeaderField>,
    /// Written heads' vectors and boxes, for the next heads.
    spares: Spares,
    /// Received heads given back unchanged, for the next repeat of their
    /// block.
    echoes: Echoes,
    /// The ordinary fields of the last block decoded passed
    /// `fields::check_field`, and the block being handled repeats that one
    /// ([`hpack::Decoder::repeated`]): a load generator's requests and a
    /// server's answers repeat their heads, which need checking once.
    fields_checked: bool,
    repeat_checked: bool,
}

impl Session {
    pub(crate) fn new(role: Role, config: impl Into<Arc<Config>>, now: Instant) -> Self {
        let config = config.into();
        let limits = &config.limits;
        // The decoders start at the RFC's defaults; `update_settings` below
        // moves them to what we advertise.
        let hpack_decoder = hpack::Decoder::new(4096);
        let mut recv_window =
            RecvWindow::new(DEFAULT_INITIAL_WINDOW_SIZE, DEFAULT_INITIAL_WINDOW_SIZE);
        let grow = recv_window.grow(config.connection_window_size);
        let mut session = Session {
            role,
            preface_received: role == Role::Client,
            settings_received: false,
            decoder: FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE),
            hpack_decoder,
            hpack_encoder: hpack::Encoder::new(),
            peer: PeerSettings::default(),
            store: Store::new(role == Role::Client, limits.max_reset_streams_remembered),
            send_window: flow::Window::new(DEFAULT_INITIAL_WINDOW_SIZE),
            recv_window,
            local: Local::new(),
            partial: None,
            settings_acks_owed: 0,
            ping_counter: 0,
            window_updates: VecDeque::new(),
            control: Control::default(),
            waiting_to_open: VecDeque::new(),
            ready: VecDeque::new(),
            conn_blocked: VecDeque::new(),
            shutdown: Shutdown::Running,
            timers: SessionTimers::default(),
            keepalive_awaited: false,
            peer_goaway: None,
            requests_taken: 0,
            error: None,
            closed: false,
            preface_owed: true,
            events: VecDeque::new(),
            out: VecDeque::new(),
            wbuf: BytesMut::new(),
            peer_resets: RateLimit::default(),
            local_resets: RateLimit::default(),
            empty_frames: RateLimit::default(),
            field_scratch: Vec::new(),
            spares: Spares::default(),
            echoes: Echoes::default(),
            fields_checked: false,
            repeat_checked: false,
            stats: crate::stats::Stats::default(),
            sent_trace: None,
            config,
        };
        if let Some(every) = session.config.keepalive {
            session.timers.set(SessionTimer::KeepAlive, now + every);
        }
        if grow > 0 {
            session.window_updates.push_back((StreamId::ZERO, grow));
        }
        let first = LocalSettings::from_config(&session.config);
        session.update_settings(now, first);
        session
    }

    /// A server session taking over from HTTP/1.1 after `Upgrade: h2c`
    /// (RFC 7540 §3.2): the client's HTTP2-Settings count as its first
    /// SETTINGS (acknowledged by the 101, so no ACK is sent), and the
    /// upgrading request is stream 1, half-closed (remote), awaiting the
    /// application's response. The client preface is still expected.
    pub(crate) fn upgraded(
        config: impl Into<Arc<Config>>,
        now: Instant,
        settings: &Bytes,
        request: RequestHead,
    ) -> Self {
        let mut session = Session::new(Role::Server, config, now);
        // HTTP/1.1 took only settings that decode (`h1::upgrade`); checked
        // again here all the same, as a SETTINGS frame is.
        let applied = match Settings::decode_values(settings) {
            Ok(values) => session.apply_peer_settings(values),
            Err(e) => Err((e.reason, Violation::Frame(e.kind))),
        };
        if let Err((reason, violation)) = applied {
            session.connection_error(reason, violation);
            return session;
        }
        let id = StreamId::new(1);
        session.store.last_peer = id;
        let initial = session.stream_recv_initial();
        let mut stream = Stream::new(
            id,
            State::HalfClosedRemote,
            session.peer.initial_window_size,
            RecvWindow::new(initial, initial),
        );
        stream.known = true;
        stream.announced = true;
        stream.final_head_received = true;
        session.store.insert(stream);
        session.store.active_peer += 1;
        session.events.push_back(Event::Request {
            stream: id,
            head: Box::new(request),
            end_stream: true,
        });
        session.request_taken();
        session
    }

    /// A server took a request: the one that reaches `Config::max_requests`
    /// ends the connection with one GOAWAY naming its stream, so newer
    /// streams are ignored and left for the client to send again (§6.8).
    fn request_taken(&mut self) {
        self.requests_taken = self.requests_taken.saturating_add(1);
        if self.reached_request_limit() && !matches!(self.shutdown, Shutdown::Final { .. }) {
            self.finish_shutdown();
        }
    }

    fn reached_request_limit(&self) -> bool {
        let limit = self.config.max_requests;
        limit.is_some_and(|max| self.requests_taken >= max.get())
    }

    /// Advertises new settings. Values that let the peer send more apply at
    /// once; values that restrict it apply when it acknowledges them.
    pub(crate) fn update_settings(&mut self, now: Instant, next: LocalSettings) {
        let before = self.local.effective;
        self.local.send(next, now + self.config.settings_timeout);
        self.arm_settings_ack();
        self.control.queues().settings.push_back(next);
        self.apply_local(before);
    }

    /// `SessionTimer::SettingsAck` follows our oldest SETTINGS in flight.
    fn arm_settings_ack(&mut self) {
        self.timers
            .set_or_stop(SessionTimer::SettingsAck, self.local.deadline());
    }

    /// Brings the decoders and stream windows in line with the settings in
    /// force, after they changed from `before`.
    fn apply_local(&mut self, before: LocalSettings) {
        let now = self.local.effective;
        self.decoder.set_max_frame_size(now.max_frame_size);
        self.hpack_decoder
            .set_max_header_list_size(now.max_header_list_size as usize);
        if now.header_table_size != before.header_table_size {
            self.hpack_decoder
                .set_max_table_size(now.header_table_size as usize);
        }
        if now.initial_window_size != before.initial_window_size {
            // In id order: the WINDOW_UPDATEs leave in the order queued.
            for id in self.store.ids() {
                let Some(stream) = self.store.get_mut(id) else {
                    continue;
                };
                stream.recv.retarget(now.initial_window_size);
                // Released bytes may now be owed under the new target.
                if stream.can_recv_body()
                    && let Some(inc) = stream.recv.take_update()
                {
                    self.window_updates.push_back((stream.id, inc));
                }
            }
        }
    }

    pub(crate) fn local_settings(&self) -> LocalSettings {
        self.local.effective
    }

    /// The peer's MAX_CONCURRENT_STREAMS: how many streams of ours may be
    /// open at once (RFC 9113 §5.1.2).
    pub(crate) fn peer_stream_limit(&self) -> u32 {
        self.peer.max_concurrent_streams
    }

    /// The receive window a new stream starts with.
    fn stream_recv_initial(&self) -> u32 {
        self.local.effective.initial_window_size
    }

    /// See `Connection::unsent`.
    pub(crate) fn unsent(&self, id: StreamId) -> u64 {
        self.store.get(id).map_or(0, |stream| {
            stream
                .queue
                .iter()
                .map(|item| match item {
                    Outgoing::Data { data, .. } => data.len() as u64,
                    _ => 0,
                })
                .sum()
        })
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed && self.out.is_empty()
    }

    /// The queue of our unsent RST_STREAMs is full: no more frames are
    /// taken until it is written. A peer may open any number of streams
    /// before it acknowledged our SETTINGS (§5.1.2), all in one write, and
    /// a whole read was decoded before anything could be written, so
    /// refusing such a burst overflowed the queue and ended the connection
    /// (ENHANCE_YOUR_CALM), the answers owed to the streams admitted with
    /// it. Now it is refused a queue at a time, each written before more of
    /// it is read; a peer that never reads them is simply not read from.
    pub(crate) fn input_blocked(&self) -> bool {
        self.control
            .get()
            .is_some_and(|q| q.resets.len() >= self.config.limits.max_pending_resets)
    }

    /// Over (its `Closed` event raised), whether or not output is left.
    pub(crate) fn ended(&self) -> bool {
        self.closed
    }

    /// No stream is open and no field block is half read.
    pub(crate) fn is_idle(&self) -> bool {
        self.store.is_empty() && self.partial.is_none()
    }

    /// With no stream open, gives back what busy moments grew its queues
    /// to (see `trim`); what still holds something stays.
    pub(crate) fn trim(&mut self) {
        if !self.is_idle() {
            return;
        }
        self.store.trim();
        self.local.trim();
        self.control.trim();
        self.window_updates.trim();
        self.waiting_to_open.trim();
        self.ready.trim();
        self.conn_blocked.trim();
        self.events.trim();
        self.out.trim();
        self.wbuf.trim();
        self.field_scratch.trim();
        self.spares.trim();
        self.echoes.trim();
        self.hpack_decoder.trim();
        self.hpack_encoder.trim();
    }

    pub(crate) fn error(&self) -> Option<&ConnectionError> {
        self.error.as_deref()
    }

    pub(crate) fn spares(&mut self) -> &mut Spares {
        &mut self.spares
    }

    /// Takes back a received request head: kept whole for the next repeat
    /// of its block if it is still exactly what that block builds (a
    /// server's), or its storage becomes spares.
    pub(crate) fn recycle_request(&mut self, head: Box<RequestHead>) {
        if self.role == Role::Server {
            let memo = self.hpack_decoder.remembered();
            self.echoes.keep_request(memo, head, &mut self.spares);
        } else {
            self.spares.give_head(head);
        }
    }

    /// Takes back the fields of a received head: kept for the next repeat
    /// of a response block if they are still exactly its fields (a
    /// client's), or the vector becomes a spare.
    pub(crate) fn recycle_fields(&mut self, fields: Vec<hpack::HeaderField>) {
        if self.role == Role::Client {
            let memo = self.hpack_decoder.remembered();
            self.echoes.keep_response(memo, fields, &mut self.spares);
        } else {
            self.spares.give_fields(fields);
        }
    }

    pub(crate) fn poll_event(&mut self) -> Option<Event> {
        let event = self.events.pop_front();
        if let Some(Event::Data { stream, data, .. }) = &event
            && self.config.window_policy == crate::config::WindowPolicy::Automatic
        {
            // Released as handed over: the application has the bytes now.
            let n = u32::try_from(data.len()).unwrap_or(u32::MAX);
            self.release(*stream, n);
        }
        event
    }

    /// Returns `n` bytes of receive window on `stream` and the connection.
    fn release(&mut self, stream: StreamId, n: u32) -> bool {
        if !self.recv_window.release(n) {
            return false;
        }
        if let Some(s) = self.store.get_mut(stream) {
            // A stream that ended no longer needs window; only the connection does.
            if s.recv.release(n)
                && s.can_recv_body()
                && let Some(inc) = s.recv.take_update()
            {
                self.window_updates.push_back((stream, inc));
            }
        }
        if let Some(inc) = self.recv_window.take_update() {
            self.window_updates.push_back((StreamId::ZERO, inc));
        }
        true
    }

    /// The application is done with `n` bytes received on `stream` (see
    /// `Connection::release_capacity`). A live stream is held to what it
    /// received; a closed one only to what the connection holds, its own
    /// count gone with it. Nothing is released on an error.
    pub(crate) fn release_capacity(&mut self, stream: StreamId, n: u32) -> Result<(), UserError> {
        let held = match self.store.get(stream) {
            Some(s) => s.recv.unreleased.min(self.recv_window.unreleased),
            // Stream 0 is the connection's own; an idle id never carried
            // anything.
            None if stream == StreamId::ZERO || !self.used(stream) => {
                return Err(UserError::UnknownStream(stream));
            }
            None => self.recv_window.unreleased,
        };
        if n > held {
            return Err(UserError::ReleaseTooLarge);
        }
        self.release(stream, n);
        Ok(())
    }

    /// The earliest deadline the driver must call `handle_timeout` at.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        if self.closed {
            return None;
        }
        self.timers.earliest()
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        if self.closed {
            return;
        }
        if self.timers.expired(SessionTimer::SettingsAck, now) {
            self.connection_error(Reason::SETTINGS_TIMEOUT, Violation::SettingsTimeout);
            return;
        }
        if self.timers.expired(SessionTimer::ShutdownPing, now) {
            self.finish_shutdown();
        }
        if self.timers.expired(SessionTimer::ReplyWait, now) {
            self.maybe_finish();
        }
        if self.timers.expired(SessionTimer::KeepAlive, now) {
            self.keepalive_due(now);
        }
    }

    /// Bytes came in: the keep-alive's quiet spell starts again, unless
    /// its PING is out (then only the answer counts).
    fn keepalive_input(&mut self, now: Instant) {
        if let Some(every) = self.config.keepalive
            && !self.keepalive_awaited
        {
            self.timers.set(SessionTimer::KeepAlive, now + every);
        }
    }

    /// The keep-alive PING was answered: the next quiet spell starts now.
    fn keepalive_answered(&mut self, now: Instant) {
        self.keepalive_awaited = false;
        self.keepalive_input(now);
    }

    /// Nothing came for the keep-alive time: ask with a PING, or, if the
    /// PING asked already went unanswered, end the connection.
    fn keepalive_due(&mut self, now: Instant) {
        // A client's GOAWAY is the last frame it sends (see
        // `client_goaway_when_done`); `ReplyWait` bounds what is left.
        if self.role == Role::Client && matches!(self.shutdown, Shutdown::Final { .. }) {
            return;
        }
        if !self.keepalive_awaited {
            self.keepalive_awaited = true;
            if let Some(every) = self.config.keepalive {
                self.timers.set(SessionTimer::KeepAlive, now + every);
            }
            self.control.ping(KEEPALIVE_PING, now);
            return;
        }
        let debug = Bytes::from_static(b"keep-alive PING unanswered");
        self.control
            .go_away(self.store.last_peer, Reason::NO_ERROR, debug);
        self.close(
            Some(ConnectionError::KeepaliveTimeout),
            CloseCause::KeepaliveTimeout,
        );
    }

    /// The peer closed the transport.
    pub(crate) fn handle_eof(&mut self) {
        if self.closed {
            return;
        }
        let error = (!self.store.is_empty() || !self.waiting_to_open.is_empty())
            .then_some(ConnectionError::TransportClosed);
        self.close(error, CloseCause::PeerClosed);
    }

    /// Ends the connection for a rule the peer broke: GOAWAY with the last
    /// stream we processed, then nothing more is read (§5.4.1).
    fn connection_error(&mut self, reason: Reason, violation: Violation) {
        if self.closed {
            return;
        }
        let debug = Bytes::from(violation.to_string());
        self.control.go_away(self.store.last_peer, reason, debug);
        let error = ConnectionError::Local { reason, violation };
        self.close(Some(error.clone()), CloseCause::Error(error));
    }

    /// Marks the connection over and tells the application once.
    fn close(&mut self, error: Option<ConnectionError>, cause: CloseCause) {
        if self.closed {
            return;
        }
        self.closed = true;
        self.error = error.clone().map(Box::new);
        self.events.push_back(Event::Closed { error, cause });
    }

    /// Once shutting down (either side's GOAWAY) and no stream is left, the
    /// connection is done.
    fn maybe_finish(&mut self) {
        // A server's GOAWAY ends what a client may start, so an idle client
        // is done; a client's GOAWAY only refuses pushes, and the client may
        // still send requests, so the server stays (§6.8).
        let peer_done = self.peer_goaway.is_some() && self.role == Role::Client;
        let going_away = peer_done || matches!(self.shutdown, Shutdown::Final { .. });
        // Our GOAWAY's round trip is still out: the peer may yet answer it.
        let awaiting_reply = !peer_done && self.timers.is_set(SessionTimer::ReplyWait);
        if going_away && !awaiting_reply && self.store.is_empty() && self.waiting_to_open.is_empty()
        {
            let cause = if self.reached_request_limit() {
                CloseCause::RequestLimit
            } else if matches!(self.shutdown, Shutdown::Final { .. }) {
                CloseCause::LocalGoAway
            } else {
                CloseCause::GoAwayReceived {
                    reason: Reason::NO_ERROR,
                }
            };
            self.close(None, cause);
        }
    }

    /// Second step of a graceful shutdown: name the last stream we took.
    fn finish_shutdown(&mut self) {
        let last = self.store.last_peer;
        self.timers.stop(SessionTimer::ShutdownPing);
        self.shutdown = Shutdown::Final { last };
        self.control.go_away(last, Reason::NO_ERROR, Bytes::new());
        self.maybe_finish();
    }

    /// Shutdown has reached the point where new peer streams are ignored.
    fn refusing_new_streams(&self, id: StreamId) -> bool {
        matches!(self.shutdown, Shutdown::Final { last } if id > last)
    }

    /// Begins a graceful shutdown (§6.8).
    ///
    /// A server sends GOAWAY naming 2^31-1 so the client stops opening
    /// streams, then after a round trip (or a deadline) a second GOAWAY
    /// with the real last stream: requests in flight are not lost.
    ///
    /// A client opens no more streams, and once those it has are done it
    /// sends a PING and its GOAWAY (see `client_goaway_when_done`).
    pub(crate) fn go_away(&mut self, now: Instant) {
        if self.closed || self.shutdown != Shutdown::Running {
            return;
        }
        if self.role == Role::Client {
            self.shutdown = Shutdown::Closing;
            return;
        }
        let wait = self.config.settings_timeout.min(Duration::from_secs(1));
        self.control
            .go_away(StreamId::new(u32::MAX), Reason::NO_ERROR, Bytes::new());
        self.control.ping(SHUTDOWN_PING, now);
        self.timers.set(SessionTimer::ShutdownPing, now + wait);
        self.shutdown = Shutdown::Draining;
    }

    /// A client going away whose streams are all done writes its last
    /// frames: a PING, then one GOAWAY.
    ///
    /// The GOAWAY waits for the streams, and nothing follows it (see
    /// `build_control`): Python's `h2` (hypercorn, most Python mocks) and
    /// Ruby's `http-2` close their side on a GOAWAY they receive and take
    /// any later frame for a PROTOCOL_ERROR, so the answers still owed to
    /// us would be lost and a PING behind it answered with an error.
    ///
    /// The GOAWAY names server-initiated streams, so it carries the last
    /// pushed stream we accepted, or 0 (nghttp2 answers 2^31-1 from a
    /// client with GOAWAY(PROTOCOL_ERROR), "invalid last_stream_id"). The
    /// PING's answer comes after whatever the server said about our frames
    /// before it, so the connection waits for it (bounded) before it
    /// reports `Closed`, and an error GOAWAY in reply is not missed. A
    /// server that has not sent its SETTINGS has said nothing yet, about
    /// our frames or anything else: its answer is not waited for (a
    /// Ctrl-C against a server that accepts and never speaks waited the
    /// whole second).
    pub(crate) fn client_goaway_when_done(&mut self, now: Instant) {
        if self.shutdown == Shutdown::Closing
            && self.store.is_empty()
            && self.waiting_to_open.is_empty()
        {
            if self.settings_received {
                let wait = self.config.settings_timeout.min(Duration::from_secs(1));
                self.control.ping(SHUTDOWN_PING, now);
                self.timers.set(SessionTimer::ReplyWait, now + wait);
            }
            self.finish_shutdown();
        }
    }

    /// The drain time after our GOAWAY ran out: the streams still open are
    /// cut (GOAWAY naming the last stream we took), and the loss is
    /// the connection's error, as a transport closed under open streams is.
    pub(crate) fn expire_drain(&mut self) {
        if self.closed {
            return;
        }
        let cut = !self.store.is_empty() || !self.waiting_to_open.is_empty();
        let debug = Bytes::from_static(b"drain time ran out");
        self.control
            .go_away(self.store.last_peer, Reason::NO_ERROR, debug);
        for id in self.store.ids() {
            self.store.remove(id, self.is_local(id));
        }
        self.waiting_to_open.clear();
        let error = cut.then_some(ConnectionError::DrainExpired);
        self.close(error, CloseCause::DrainExpired);
    }

    /// Ends the connection at once with `reason` (GOAWAY, then close).
    pub(crate) fn abort(&mut self, reason: Reason) {
        if self.closed {
            return;
        }
        self.control
            .go_away(self.store.last_peer, reason, Bytes::new());
        for id in self.store.ids() {
            self.store.remove(id, self.is_local(id));
        }
        self.waiting_to_open.clear();
        self.close(None, CloseCause::Aborted { reason });
    }

    /// Whether `id` has named a stream: one we opened or promised, or one
    /// up to the highest the peer opened or promised. Others are idle
    /// (RFC 9113 §5.1).
    fn used(&self, id: StreamId) -> bool {
        if self.is_local(id) {
            id.value() < self.store.next_local
        } else {
            id <= self.store.last_peer
        }
    }

    /// True for stream ids of our own initiative.
    fn is_local(&self, id: StreamId) -> bool {
        match self.role {
            Role::Client => id.is_client_initiated(),
            Role::Server => id.is_server_initiated(),
        }
    }

    /// Counts a stream error we raised against the rate limit; too many
    /// and the peer is only making us work, so the connection ends. (The
    /// queue of resets waiting to be written is bounded apart: no frame is
    /// taken while it is full, see [`Session::input_blocked`].)
    fn note_local_reset(&mut self, now: Instant, reason: Reason) -> bool {
        // Streams refused before the peer acknowledged our limit are not
        // its fault: it may open as many as it likes until then (§5.1.2).
        if reason == Reason::REFUSED_STREAM && self.local.awaiting_first_ack()
            || self
                .local_resets
                .hit(now, Rate::local_resets(&self.config.limits))
        {
            return true;
        }
        self.connection_error(Reason::ENHANCE_YOUR_CALM, Violation::StreamErrorFlood);
        false
    }

    /// Counts an empty DATA frame or CONTINUATION from the peer; false
    /// past the limit.
    fn empty_frame(&mut self, now: Instant) -> bool {
        self.empty_frames
            .hit(now, Rate::empty_frames(&self.config.limits))
    }

    /// Resets a stream because of the peer (§5.4.2): RST_STREAM out, the
    /// stream forgotten, and the application told once: `StreamReset` for
    /// a stream it holds, `Refused` for one it does not (a request refused
    /// before delivery, a stream already closed), unless it was told
    /// already: of a request the core answered itself (its 431 or 413), of a
    /// stream reset before.
    fn stream_error(&mut self, now: Instant, id: StreamId, reason: Reason, violation: Violation) {
        if !self.note_local_reset(now, reason) {
            return;
        }
        self.control.queues().resets.push_back((id, reason));
        let reset_before = self.store.reset_locally.contains(id);
        self.store.reset_locally.insert(id);
        // Bytes already received stay owed to the connection window until the
        // application releases them (its queued Data events do, automatically).
        let removed = self.store.remove(id, self.is_local(id));
        let event = match &removed {
            Some(stream) if stream.known => Some(Event::StreamReset {
                stream: id,
                reason,
                remote: false,
                violation: Some(violation),
                status: None,
            }),
            Some(stream) if stream.answered => None,
            None if reset_before => None,
            _ => Some(Event::Refused {
                stream: id,
                answer: RefusedWith::Reset(reason),
                violation,
            }),
        };
        self.events.extend(event);
        if removed.is_some() {
            self.open_waiting();
        }
        self.maybe_finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame head and payload, for the peer's side of the wire.
    fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
        let len = u32::try_from(payload.len())
            .unwrap_or(u32::MAX)
            .to_be_bytes();
        let mut f = vec![len[1], len[2], len[3], kind, flags, 0, 0, 0, 0];
        f.extend_from_slice(payload);
        f
    }

    /// A HEADERS frame ending its stream and its block, `block`, on `id`.
    fn headers(id: u32, block: &[u8]) -> Vec<u8> {
        let mut f = frame(0x1, 0x5, block);
        f[5..9].copy_from_slice(&id.to_be_bytes());
        f
    }

    /// The first pending event `pick` takes (those before it are dropped).
    fn first<T>(session: &mut Session, pick: impl FnMut(Event) -> Option<T>) -> Option<T> {
        std::iter::from_fn(|| session.poll_event()).find_map(pick)
    }

    /// Five repeats of one block, each given back: the first two decoded
    /// (the second is when the decoder starts remembering), the last three
    /// taken as repeats, and the fourth and fifth given the storage (at
    /// `seen`'s address) the third was given back in.
    fn handed_out_again(seen: Vec<(usize, bool)>) {
        let (storage, repeated): (Vec<_>, Vec<_>) = seen.into_iter().unzip();
        assert_eq!(repeated, [false, false, true, true, true]);
        assert_eq!(storage[3], storage[2]);
        assert_eq!(storage[4], storage[2]);
    }

    fn feed(session: &mut Session, now: Instant, bytes: &[u8]) {
        let mut input = BytesMut::from(bytes);
        session.handle_input_until(now, &mut input, usize::MAX);
        assert!(input.is_empty(), "whole frames fed");
    }

    /// `poll_timeout` is the table's earliest entry: first the SETTINGS
    /// acknowledgement (RFC 9113 §6.5.3), then, once it is acknowledged,
    /// the keep-alive, re-armed by input, held by an unanswered PING and
    /// re-armed by its answer.
    #[test]
    fn poll_timeout_is_the_earliest_entry_across_a_settings_ack_and_a_keepalive_rearm() {
        let t0 = Instant::now();
        let secs = Duration::from_secs;
        let config = Config {
            settings_timeout: secs(5),
            keepalive: Some(secs(10)),
            ..Config::default()
        };
        let mut s = Session::new(Role::Client, config, t0);
        assert_eq!(s.timers.get(SessionTimer::SettingsAck), Some(t0 + secs(5)));
        assert_eq!(s.timers.get(SessionTimer::KeepAlive), Some(t0 + secs(10)));
        assert_eq!(s.poll_timeout(), s.timers.earliest());
        assert_eq!(s.poll_timeout(), Some(t0 + secs(5)));

        // The server's SETTINGS, and its ACK of ours.
        let t1 = t0 + secs(2);
        let mut bytes = frame(0x4, 0, &[]);
        bytes.extend(frame(0x4, 0x1, &[]));
        feed(&mut s, t1, &bytes);
        assert_eq!(s.timers.get(SessionTimer::SettingsAck), None);
        assert_eq!(s.poll_timeout(), s.timers.earliest());
        assert_eq!(s.poll_timeout(), Some(t1 + secs(10)));

        // Quiet for the keep-alive time: the PING goes out and its wait
        // is the deadline; input does not move it.
        s.handle_timeout(t1 + secs(10));
        assert!(
            s.control
                .get()
                .is_some_and(|q| q.pings.contains(&KEEPALIVE_PING))
        );
        assert_eq!(s.poll_timeout(), Some(t1 + secs(20)));
        feed(&mut s, t1 + secs(12), &frame(0x6, 0, b"abcdefgh"));
        assert_eq!(s.poll_timeout(), s.timers.earliest());
        assert_eq!(s.poll_timeout(), Some(t1 + secs(20)));

        // The answer re-arms the quiet spell from its arrival.
        let t2 = t1 + secs(15);
        feed(&mut s, t2, &frame(0x6, 0x1, &KEEPALIVE_PING));
        assert_eq!(s.poll_timeout(), s.timers.earliest());
        assert_eq!(s.poll_timeout(), Some(t2 + secs(10)));
        assert!(!s.ended());
    }

    /// A request block that repeats the last one, once the head the last
    /// repeat built came back unchanged, is that head again: the decoder
    /// takes the block without producing fields (RFC 7541 §2.3: the table
    /// is untouched either way) and the head is checked, by identity, to be
    /// built of the strings the decoder remembers, not merely equal to
    /// them.
    #[test]
    fn a_repeated_request_block_is_answered_with_the_head_given_back() {
        let t0 = Instant::now();
        let mut s = Session::new(Role::Server, Config::default(), t0);
        let mut bytes = crate::frame::PREFACE.to_vec();
        bytes.extend(frame(0x4, 0, &[]));
        feed(&mut s, t0, &bytes);
        // :method GET, :scheme http, :path / (static), :authority "a" as a
        // raw literal without indexing: a slice of the input when decoded.
        let block = [0x82, 0x86, 0x84, 0x01, 0x01, b'a'];
        let mut seen = Vec::new();
        for id in [1u32, 3, 5, 7, 9] {
            feed(&mut s, t0, &headers(id, &block));
            let head = first(&mut s, |e| match e {
                Event::Request { head, .. } => Some(head),
                _ => None,
            })
            .expect("a request");
            assert_eq!(head.authority.as_ref(), b"a");
            assert_eq!(head.path.as_ref(), b"/");
            seen.push((
                &*head as *const RequestHead as usize,
                s.hpack_decoder.repeated(),
            ));
            s.recycle_request(head);
        }
        // Stream 3's head holds the input's "a", not the remembered copy:
        // not kept. Stream 5's is the remembered strings' clone: kept, and
        // stream 7 gets it; stream 7's comes back for stream 9, and only
        // stream 9's is left (had 7 and 9 been decoded, all three would).
        handed_out_again(seen);
        let memo = s.hpack_decoder.remembered().expect("remembered").id;
        assert!(s.echoes.request(memo).is_some(), "stream 9's head kept");
        assert!(s.echoes.request(memo).is_none(), "no other head kept");
    }

    /// The client's side of the same: a response block that repeats the
    /// last one, once the fields the last repeat built came back unchanged,
    /// is answered with those fields and the remembered status.
    #[test]
    fn a_repeated_response_block_is_answered_with_the_fields_given_back() {
        let t0 = Instant::now();
        let mut s = Session::new(Role::Client, Config::default(), t0);
        feed(&mut s, t0, &frame(0x4, 0, &[]));
        // :status 200 (static), `server: s` as a raw literal without
        // indexing (name index 54): a slice of the input when decoded.
        let block = [0x88, 0x0f, 0x27, 0x01, b's'];
        let mut seen = Vec::new();
        for _ in 0..5 {
            let head = RequestHead::new("GET", "http", "a", "/");
            let id = s.send_request(head, true).expect("request queued");
            while s.poll_transmit(t0).is_some() {}
            feed(&mut s, t0, &headers(id.value(), &block));
            let head = first(&mut s, |e| match e {
                Event::Response { head, .. } => Some(head),
                _ => None,
            })
            .expect("a response");
            assert_eq!(head.status, 200);
            assert_eq!(head.fields, vec![hpack::HeaderField::new("server", "s")]);
            seen.push((head.fields.as_ptr() as usize, s.hpack_decoder.repeated()));
            s.recycle_fields(head.fields);
        }
        // As for requests: the third response's fields are kept, handed
        // out for the fourth, whose come back for the fifth; one is left.
        handed_out_again(seen);
        let memo = s.hpack_decoder.remembered().expect("remembered").id;
        assert!(s.echoes.response(memo).is_some(), "the fifth's fields kept");
        assert!(s.echoes.response(memo).is_none(), "no other fields kept");
    }
}
