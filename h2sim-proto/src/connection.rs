//! The public face of the protocol core: one `Connection` for both roles and
//! both protocols.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};

use crate::close::{CauseSlot, CloseCause, TransportFailure};
use crate::config::Config;
use crate::error::{ConnectionError, UserError};
use crate::event::Event;
use crate::frame::{PREFACE, Reason, StreamId};
use crate::h2::LocalSettings;
use crate::hpack::HeaderField;
use crate::message::{RequestHead, ResponseHead, check_fields, check_request};
use crate::role::{Protocol, Role};
use crate::stats::Stats;
use crate::timers::{ConnectionTimer, ConnectionTimers};
use crate::trim::Trim;
use crate::{h1, h2};

/// One connection, client or server, HTTP/2 or HTTP/1.1, with no I/O of
/// its own. The application sees the same events and gives the same
/// commands whichever protocol runs underneath; HTTP/1.1 exchanges get
/// stream ids of their own (1, 3, 5, …).
///
/// The driver (an event loop, a test, a fuzzer) runs this loop:
///
/// 1. **Input**: bytes read from the transport go to [`handle_input`],
///    end of stream to [`handle_eof`], an expired deadline to
///    [`handle_timeout`]. Read only while [`wants_input`] is true.
/// 2. **Events and output, until both are quiet**: [`poll_event`] until
///    `None`, the application giving its commands ([`send_request`],
///    [`send_response`], [`send_data`], [`send_trailers`],
///    [`push_promise`], [`reset`], [`ping`], [`go_away`]) as the events ask;
///    then [`poll_transmit`] until `None` (write the chunks, ideally in one
///    vectored write). Go round again while `poll_event` has more: each
///    step can feed the other. Commands make output; taking an event can
///    make output by itself (the WINDOW_UPDATE that returns the bytes of a
///    `Data` event, with `WindowPolicy::Automatic`); and polling output can
///    raise events (an HTTP/1.1 server reading the pipelined requests it
///    held back while its pipeline was full, an HTTP/2 session reading the
///    frames it held back while its refusals waited, a push refused
///    because its parent ended, with `Config::trace_frames` the frames
///    just written). A driver that writes and then blocks in a read with
///    events still queued can wait for ever.
/// 3. **Deadline**: [`poll_timeout`] once both are quiet; sleep until then,
///    or until input comes.
///
/// The application may also give commands at any other time (its own
/// timers); step 2 then follows.
///
/// Time is always passed in; the connection never reads a clock, so a test
/// can run it on a virtual one. Nothing the peer sends makes it panic: a
/// broken rule becomes RST_STREAM or GOAWAY with the RFC's code (or an
/// HTTP/1.1 error response), queued for sending, and an event that names
/// the rule.
///
/// [`handle_input`]: Connection::handle_input
/// [`handle_eof`]: Connection::handle_eof
/// [`handle_timeout`]: Connection::handle_timeout
/// [`wants_input`]: Connection::wants_input
/// [`send_request`]: Connection::send_request
/// [`send_response`]: Connection::send_response
/// [`send_data`]: Connection::send_data
/// [`send_trailers`]: Connection::send_trailers
/// [`push_promise`]: Connection::push_promise
/// [`reset`]: Connection::reset
/// [`ping`]: Connection::ping
/// [`go_away`]: Connection::go_away
/// [`poll_transmit`]: Connection::poll_transmit
/// [`poll_timeout`]: Connection::poll_timeout
/// [`poll_event`]: Connection::poll_event
#[derive(Debug)]
pub struct Connection {
    inner: Inner,
    role: Role,
    /// Kept for a server that may still switch protocol (detection, h2c).
    /// Shared: a host's connections have one configuration, not a copy each.
    config: Arc<Config>,
    /// What an HTTP/1.1 session left behind when it handed over to HTTP/2
    /// (the 101 response, its events): delivered before the new session's.
    /// Boxed: only a connection upgraded with h2c has it, until trimmed.
    handover: Option<Box<Handover>>,
    /// Bytes taken from and given to the transport.
    bytes_received: u64,
    bytes_sent: u64,
    /// Input has arrived (taken or not): a server's head-read timer then
    /// runs from the first byte, not from the start.
    heard: bool,
    /// Input the session left unread while it could not take more (see
    /// [`Connection::input_blocked`]); offered to it again on every poll,
    /// ahead of newer input.
    held: BytesMut,
    /// What the driver and the application said ends the connection, and
    /// the peer's GOAWAY: refines the cause of `Event::Closed`.
    cause: CauseSlot,
    /// Idle, head-read and drain deadlines: one way out for both
    /// protocols, and for a server still detecting the protocol.
    timers: ConnectionTimers,
}

/// The output and events of an HTTP/1.1 session that handed over to
/// HTTP/2 (see [`Connection::upgrade`]).
#[derive(Debug, Default)]
struct Handover {
    out: VecDeque<Bytes>,
    events: VecDeque<Event>,
}

#[derive(Debug)]
enum Inner {
    /// A server that has not yet seen enough bytes to tell HTTP/2 prior
    /// knowledge (the preface) from HTTP/1.1.
    Undecided {
        since: Instant,
    },
    /// Both sessions are boxed: they are large, and the enum moves when a
    /// server settles its protocol.
    Http1(Box<h1::Session>),
    Http2(Box<h2::Session>),
}

#[cfg(test)]
impl Connection {
    /// The HTTP/2 session, for the core's own tests of its internals.
    pub(crate) fn h2_session(&self) -> Option<&h2::Session> {
        match &self.inner {
            Inner::Http2(s) => Some(s),
            _ => None,
        }
    }
}

/// `config`, shared, once [`Config::check`] passed.
fn checked(config: impl Into<Arc<Config>>) -> Result<Arc<Config>, UserError> {
    let config = config.into();
    config.check()?;
    Ok(config)
}

/// Held-back input beyond which `wants_input` turns false.
const HELD_INPUT_LIMIT: usize = 256 * 1024;

/// Calls the same method on whichever session runs, or gives `$undecided`.
macro_rules! dispatch {
    ($self:expr, $s:ident => $call:expr, undecided => $undecided:expr) => {
        match &mut $self.inner {
            Inner::Http1($s) => $call,
            Inner::Http2($s) => $call,
            Inner::Undecided { .. } => $undecided,
        }
    };
}

impl Connection {
    fn with(role: Role, inner: Inner, config: Arc<Config>, now: Instant) -> Self {
        let mut timers = ConnectionTimers::default();
        if let Some(idle) = config.idle_timeout {
            timers.set(ConnectionTimer::Idle, now + idle);
        }
        // A server's first head is awaited from the start: a connection
        // that never sends a byte ends at the head-read timeout too.
        if role == Role::Server
            && let Some(limit) = config.head_read_timeout
        {
            timers.set(ConnectionTimer::HeadRead, now + limit);
        }
        Connection {
            timers,
            inner,
            role,
            config,
            handover: None,
            bytes_received: 0,
            bytes_sent: 0,
            heard: false,
            held: BytesMut::new(),
            cause: CauseSlot::default(),
        }
    }

    /// Bytes moved (either way) at `now`: the idle timer starts over,
    /// unless the connection is already on its way out.
    fn activity(&mut self, now: Instant) {
        if let Some(idle) = self.config.idle_timeout
            && self.timers.is_set(ConnectionTimer::Idle)
        {
            self.timers.set(ConnectionTimer::Idle, now + idle);
        }
    }

    /// Keeps the head-read timer: on a server it runs from the start until
    /// the first byte, then from the first byte of a request head (or of
    /// what tells the protocol) until the head is read. A connection that
    /// never sent a byte held its descriptor for good without an idle
    /// timeout (nginx's `client_header_timeout` counts from the accept
    /// too). `consumed`: input was taken, so any head in progress is a new
    /// one; `unread`: bytes left waiting for more.
    fn watch_head(&mut self, now: Instant, consumed: bool, unread: usize) {
        let Some(limit) = self.config.head_read_timeout else {
            return;
        };
        let silent = self.role == Role::Server && !self.heard;
        let in_head = silent
            || unread > 0
                && match &self.inner {
                    Inner::Undecided { .. } => true,
                    Inner::Http1(s) => s.reading_head(),
                    Inner::Http2(_) => false,
                };
        if !in_head {
            self.timers.stop(ConnectionTimer::HeadRead);
        } else if consumed || !self.timers.is_set(ConnectionTimer::HeadRead) {
            self.timers.set(ConnectionTimer::HeadRead, now + limit);
        }
    }

    /// The session is over (its `Closed` event raised), though its last
    /// output may still wait to be taken ([`Connection::is_closed`] once it
    /// is): no timer of the way out applies any more, and a driver gives
    /// that output a last while to leave.
    pub fn ended(&self) -> bool {
        match &self.inner {
            Inner::Http1(s) => s.ended(),
            Inner::Http2(s) => s.ended(),
            Inner::Undecided { .. } => false,
        }
    }

    /// An HTTP/2 client (prior knowledge, or `h2` chosen by ALPN): its
    /// preface and SETTINGS are the first output. Every constructor checks
    /// `config` ([`Config::check`]): a setting no peer accepts is refused
    /// with `UserError::InvalidSetting` here, not met as the peer's GOAWAY.
    pub fn client(config: impl Into<Arc<Config>>, now: Instant) -> Result<Self, UserError> {
        let config = checked(config)?;
        let session = h2::Session::new(Role::Client, Arc::clone(&config), now);
        Ok(Connection::with(
            Role::Client,
            Inner::Http2(Box::new(session)),
            config,
            now,
        ))
    }

    /// An HTTP/1.1 client.
    pub fn client_http1(config: impl Into<Arc<Config>>, now: Instant) -> Result<Self, UserError> {
        let config = checked(config)?;
        let session = h1::Session::new(Role::Client, Arc::clone(&config), now);
        Ok(Connection::with(
            Role::Client,
            Inner::Http1(Box::new(session)),
            config,
            now,
        ))
    }

    /// A server that tells the protocol from the first bytes: the HTTP/2
    /// preface selects HTTP/2 (prior knowledge, as 3GPP TS 29.500 uses it),
    /// anything else HTTP/1.1, which may still upgrade to HTTP/2 by
    /// `Upgrade: h2c`.
    pub fn server(config: impl Into<Arc<Config>>, now: Instant) -> Result<Self, UserError> {
        Ok(Connection::server_checked(None, checked(config)?, now))
    }

    /// A server for a protocol already chosen, by TLS ALPN or configuration.
    pub fn server_for(
        protocol: Protocol,
        config: impl Into<Arc<Config>>,
        now: Instant,
    ) -> Result<Self, UserError> {
        Ok(Connection::server_checked(
            Some(protocol),
            checked(config)?,
            now,
        ))
    }

    /// A server for `protocol`, or one that tells it from the first bytes,
    /// with a configuration already checked: a host's shared one
    /// ([`host::ServerConfigs`](crate::host::ServerConfigs)), checked once
    /// at its start rather than at every connection.
    pub(crate) fn server_checked(
        protocol: Option<Protocol>,
        config: Arc<Config>,
        now: Instant,
    ) -> Self {
        let inner = match protocol {
            None => Inner::Undecided { since: now },
            Some(Protocol::Http1) => Inner::Http1(Box::new(h1::Session::new(
                Role::Server,
                Arc::clone(&config),
                now,
            ))),
            Some(Protocol::Http2) => Inner::Http2(Box::new(h2::Session::new(
                Role::Server,
                Arc::clone(&config),
                now,
            ))),
        };
        Connection::with(Role::Server, inner, config, now)
    }

    pub fn role(&self) -> Role {
        self.role
    }

    /// The protocol in use; `None` while a server is still listening for it.
    pub fn protocol(&self) -> Option<Protocol> {
        match self.inner {
            Inner::Undecided { .. } => None,
            Inner::Http1(_) => Some(Protocol::Http1),
            Inner::Http2(_) => Some(Protocol::Http2),
        }
    }

    /// Takes bytes read from the transport. Whole frames (or heads and body
    /// chunks) are taken off the front of `input`, their payloads becoming
    /// the `Bytes` of events without a copy; a partial one stays in `input`
    /// for the next read to extend.
    pub fn handle_input(&mut self, now: Instant, input: &mut BytesMut) {
        self.handle_input_until(now, input, usize::MAX);
    }

    /// [`Connection::handle_input`] that stops taking HTTP/2 frames once
    /// `max_events` events wait to be polled: the rest of `input`, whole
    /// frames among it, is for the next call. An [`Endpoint`] hands the
    /// events of each batch to its application before it takes the next,
    /// so a read of a thousand requests does not hold a thousand request
    /// heads at once: the application gives each back before the next
    /// batch is decoded, and the heads are reused instead of allocated.
    ///
    /// [`Endpoint`]: crate::Endpoint
    pub(crate) fn handle_input_until(
        &mut self,
        now: Instant,
        input: &mut BytesMut,
        max_events: usize,
    ) {
        let before = input.len();
        if self.held.is_empty() {
            self.take_input(now, input, max_events);
        } else {
            // Older input first: the new bytes join what is held.
            self.held.unsplit(input.split());
            let mut held = std::mem::take(&mut self.held);
            self.take_input(now, &mut held, max_events);
            self.held = held;
        }
        if self.input_blocked() && !input.is_empty() {
            self.held.unsplit(input.split());
        }
        let taken = before - input.len();
        self.bytes_received += taken as u64;
        let first = before > 0 && !self.heard;
        if before > 0 {
            self.heard = true;
            self.activity(now);
        }
        self.watch_head(now, taken > 0 || first, input.len() + self.held.len());
    }

    /// False while an HTTP/1.1 server holds back more than a read's worth of
    /// pipelined requests it cannot answer yet: a driver should stop reading
    /// until it turns true, so a client that pipelines without reading the
    /// responses cannot make us buffer without bound. False for good once
    /// the session is over (its `Closed` event raised) while its last
    /// output waits: it would only throw the input away (after an error
    /// GOAWAY, RFC 9113 §6.8), and a peer that sends without reading would
    /// keep a driver that reads on busy for nothing.
    pub fn wants_input(&self) -> bool {
        self.held.len() < HELD_INPUT_LIMIT && !self.ended()
    }

    /// The session takes no more input until output goes out: an HTTP/1.1
    /// server with its pipeline full, an HTTP/2 session with its queue of
    /// refusals full. What it left is held and offered again on each poll.
    fn input_blocked(&self) -> bool {
        match &self.inner {
            Inner::Http1(s) => s.input_blocked(),
            Inner::Http2(s) => s.input_blocked(),
            Inner::Undecided { .. } => false,
        }
    }

    fn take_input(&mut self, now: Instant, input: &mut BytesMut, max_events: usize) {
        if let Inner::Undecided { since } = self.inner {
            let n = input.len().min(PREFACE.len());
            if input[..n] == PREFACE[..n] {
                if n < PREFACE.len() {
                    return;
                }
                self.inner = Inner::Http2(Box::new(h2::Session::new(
                    Role::Server,
                    Arc::clone(&self.config),
                    since,
                )));
            } else {
                self.inner = Inner::Http1(Box::new(h1::Session::new(
                    Role::Server,
                    Arc::clone(&self.config),
                    since,
                )));
            }
        }
        match &mut self.inner {
            Inner::Http2(s) => s.handle_input_until(now, input, max_events),
            Inner::Http1(s) => {
                s.handle_input(now, input);
                if let Some(upgrade) = s.take_upgrade() {
                    self.upgrade(now, upgrade, input);
                }
            }
            Inner::Undecided { .. } => {}
        }
    }

    /// Switches from HTTP/1.1 to HTTP/2 after the server accepted
    /// `Upgrade: h2c`: the 101 goes out first, then HTTP/2 takes the rest.
    fn upgrade(&mut self, now: Instant, upgrade: h1::Upgrade, input: &mut BytesMut) {
        if let Inner::Http1(old) = &mut self.inner {
            let handover = self.handover.get_or_insert_with(Box::default);
            handover
                .out
                .extend(std::iter::from_fn(|| old.poll_transmit()));
            // The HTTP/2 session reports Connected itself, once the client's
            // SETTINGS arrive; the application hears it once.
            let events = std::iter::from_fn(|| old.poll_event());
            handover
                .events
                .extend(events.filter(|e| !matches!(e, Event::Connected)));
        }
        let session = h2::Session::upgraded(
            Arc::clone(&self.config),
            now,
            &upgrade.settings,
            upgrade.request,
        );
        self.inner = Inner::Http2(Box::new(session));
        if !input.is_empty() {
            self.take_input(now, input, usize::MAX);
        }
    }

    /// A server that never learned the protocol ends as an HTTP/1.1 server
    /// with no request would. The peer said nothing, so it never connected:
    /// the session's `Connected` is not reported.
    fn settle_undecided(&mut self) {
        if let Inner::Undecided { since } = self.inner {
            let mut session = h1::Session::new(Role::Server, Arc::clone(&self.config), since);
            let _connected = session.poll_event();
            self.inner = Inner::Http1(Box::new(session));
        }
    }

    /// The peer closed its side of the transport.
    pub fn handle_eof(&mut self, now: Instant) {
        if !self.held.is_empty() {
            let mut held = std::mem::take(&mut self.held);
            self.take_input(now, &mut held, usize::MAX);
            self.held = held;
        }
        self.settle_undecided();
        dispatch!(self, s => s.handle_eof(), undecided => ())
    }

    /// The transport failed (reset, broken pipe, TLS alert): the connection
    /// ends as at end of stream, with `CloseCause::TransportError(failure)`
    /// (its words alone convert into one).
    pub fn handle_transport_error(&mut self, now: Instant, failure: impl Into<TransportFailure>) {
        self.cause.note(CloseCause::TransportError(failure.into()));
        self.handle_eof(now);
    }

    /// The deadline from [`Connection::poll_timeout`] has passed: the
    /// protocol's own timers run, then the way out moves on. A request
    /// head not read in time, or streams still open when the drain time
    /// after our GOAWAY ran out, cut the connection (GOAWAY first, in
    /// HTTP/2); a connection idle for `Config::idle_timeout` goes away
    /// gracefully, and its drain time starts.
    pub fn handle_timeout(&mut self, now: Instant) {
        dispatch!(self, s => s.handle_timeout(now), undecided => ());
        if self.ended() {
            return;
        }
        for timer in ConnectionTimer::ALL {
            if !self.timers.expired(timer, now) {
                continue;
            }
            match timer {
                ConnectionTimer::HeadRead => {
                    self.abort_because(Reason::NO_ERROR, CloseCause::HeadReadTimeout);
                }
                ConnectionTimer::Drain => self.expire_drain(),
                ConnectionTimer::Idle => self.go_away_because(now, CloseCause::IdleTimeout),
            }
            if self.ended() {
                return;
            }
        }
    }

    /// Client: sends a request; `end_stream` when it has no body. Returns the
    /// stream id at once, even when the request waits for a free stream
    /// (HTTP/2 MAX_CONCURRENT_STREAMS) or its turn (HTTP/1.1).
    pub fn send_request(
        &mut self,
        head: RequestHead,
        end_stream: bool,
    ) -> Result<StreamId, UserError> {
        if self.writes_lines() {
            check_request(&head)?;
        }
        dispatch!(self, s => s.send_request(head, end_stream), undecided => Err(UserError::WrongRole))
    }

    /// HTTP/1.1 writes fields as lines, which a CR or LF in a value could
    /// add to ([`crate::message::check_fields`]).
    fn writes_lines(&self) -> bool {
        matches!(self.inner, Inner::Http1(_))
    }

    /// Server: sends a response head: interim 1xx heads, any number,
    /// without `end_stream`, then one final head (200-599), which may end
    /// the stream. A status no client could take, outside RFC 9110 §15's
    /// 100-599 or 101 (RFC 9113 §8.6; HTTP/1.1's h2c upgrade sends its
    /// own), is refused with `UserError::InvalidStatus` and nothing is
    /// sent. A whole final response in one call is
    /// [`Connection::send_reply`].
    pub fn send_response(
        &mut self,
        stream: StreamId,
        head: ResponseHead,
        end_stream: bool,
    ) -> Result<(), UserError> {
        if self.writes_lines() {
            check_fields(&head.fields)?;
        }
        dispatch!(self, s => s.send_response(stream, head, end_stream), undecided => Err(UserError::UnknownStream(stream)))
    }

    /// Server: sends a whole response, its final head and `body` (none if
    /// empty). An interim (1xx) head is refused (`InterimReply`): it would
    /// leave the client waiting for the final one; send interim heads with
    /// [`Connection::send_response`]. Over HTTP/1.1 the body's size is
    /// known, so the head says it in `content-length` (RFC 9110 §8.6) and
    /// the body goes by that length, not in the chunked coding (RFC 9112
    /// §6.1-§6.3), unless `head` has a `content-length` of its own; an
    /// answer to HEAD given the GET's body says that body's size and sends
    /// none of it (§9.3.2); a 204 or 304 says no size. HTTP/2 frames the
    /// body by itself (END_STREAM) and sends `head` as given: a length
    /// field would cost every response a value to allocate. A 204 or 304
    /// has no content (RFC 9110 §6.4.1): its head ends the stream and
    /// `body` is dropped, on HTTP/2 as the HTTP/1.1 framing does, so no
    /// client sees DATA on a response that cannot have any (RFC 9113
    /// §8.1.1). A head above the client's SETTINGS_MAX_HEADER_LIST_SIZE
    /// never leaves (RFC 9113 §10.5.1): the stream is reset with
    /// INTERNAL_ERROR instead of leaving the client waiting for an answer,
    /// and the error says so. Over HTTP/1.1 a field that cannot go out as
    /// a line (`InvalidField`: CR, LF or NUL in a value, a name with space,
    /// controls or `:`) sends nothing and leaves the stream open for
    /// another answer. Any other error means nobody is waiting (the stream
    /// or the connection is gone).
    pub fn send_reply(
        &mut self,
        stream: StreamId,
        head: ResponseHead,
        body: Bytes,
    ) -> Result<(), UserError> {
        if head.is_informational() {
            return Err(UserError::InterimReply(head.status));
        }
        if let Inner::Http1(s) = &mut self.inner {
            check_fields(&head.fields)?;
            return s.send_reply(stream, head, body);
        }
        let empty = body.is_empty() || !head.may_have_content();
        match self.send_response(stream, head, empty) {
            Ok(()) if empty => Ok(()),
            Ok(()) => self.send_data(stream, body, true),
            Err(e @ UserError::HeaderListTooLarge { .. }) => {
                let _ = self.reset(stream, Reason::INTERNAL_ERROR);
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// Sends body bytes, without copying them, as flow control allows.
    pub fn send_data(
        &mut self,
        stream: StreamId,
        data: Bytes,
        end_stream: bool,
    ) -> Result<(), UserError> {
        dispatch!(self, s => s.send_data(stream, data, end_stream), undecided => Err(UserError::UnknownStream(stream)))
    }

    /// Sends trailers, ending the stream.
    pub fn send_trailers(
        &mut self,
        stream: StreamId,
        fields: Vec<HeaderField>,
    ) -> Result<(), UserError> {
        if self.writes_lines() {
            check_fields(&fields)?;
        }
        dispatch!(self, s => s.send_trailers(stream, fields), undecided => Err(UserError::UnknownStream(stream)))
    }

    /// Server, HTTP/2: promises a pushed response to `request`, associated
    /// with the client's stream `parent`; answer the returned stream with
    /// [`Connection::send_response`]. Call before the parent's own response
    /// so the client learns of the push first.
    pub fn push_promise(
        &mut self,
        parent: StreamId,
        request: RequestHead,
    ) -> Result<StreamId, UserError> {
        match &mut self.inner {
            Inner::Http2(s) => s.push_promise(parent, request),
            _ => Err(UserError::Unsupported("server push over HTTP/1.1")),
        }
    }

    /// Resets a stream. A client refuses a pushed stream this way
    /// (`Reason::CANCEL` or `Reason::REFUSED_STREAM`). HTTP/1.1 cannot end
    /// one exchange alone, so there the connection closes.
    pub fn reset(&mut self, stream: StreamId, reason: Reason) -> Result<(), UserError> {
        dispatch!(self, s => s.reset(stream, reason), undecided => Err(UserError::UnknownStream(stream)))
    }

    /// HTTP/2: sends a PING; `Event::Pong` reports the round-trip time.
    pub fn ping(&mut self, now: Instant) -> Result<(), UserError> {
        match &mut self.inner {
            Inner::Http2(s) => {
                s.ping(now);
                Ok(())
            }
            _ => Err(UserError::Unsupported("PING over HTTP/1.1")),
        }
    }

    /// Begins a graceful shutdown: no new streams, open ones finish, then
    /// `Event::Closed` (RFC 9113 §6.8; `connection: close` in HTTP/1.1),
    /// whose cause is `CloseCause::LocalGoAway`.
    pub fn go_away(&mut self, now: Instant) {
        self.go_away_because(now, CloseCause::LocalGoAway);
    }

    /// [`Connection::go_away`] for a reason the driver knows, such as
    /// `CloseCause::IdleTimeout`: `Event::Closed` will name it, unless the
    /// end was already under way for another reason or is cut short.
    /// The drain time (`Config::drain_timeout`) starts with the first
    /// GOAWAY; the idle timer stops.
    pub fn go_away_because(&mut self, now: Instant, cause: CloseCause) {
        // A session that has ended keeps the cause it ended with, and an
        // HTTP/1.1 session keeps what the peer said first (its `connection:
        // close`) until it ends: either came before this.
        if self.ended() {
            return;
        }
        if let Inner::Http1(session) = &self.inner
            && let Some(first) = session.pending_cause()
        {
            self.cause.note(first.clone());
        }
        self.cause.note(cause);
        self.timers.stop(ConnectionTimer::Idle);
        if !self.timers.is_set(ConnectionTimer::Drain) {
            self.timers
                .set(ConnectionTimer::Drain, now + self.config.drain_timeout);
        }
        self.settle_undecided();
        dispatch!(self, s => s.go_away(now), undecided => ())
    }

    /// Ends the connection at once (HTTP/2: GOAWAY with `reason`); the
    /// cause is `CloseCause::Aborted`.
    pub fn abort(&mut self, reason: Reason) {
        self.abort_because(reason, CloseCause::Aborted { reason });
    }

    /// [`Connection::abort`] for a reason the driver knows, such as
    /// `CloseCause::DrainExpired`, which `Event::Closed` names.
    pub fn abort_because(&mut self, reason: Reason, cause: CloseCause) {
        self.cause.note(cause);
        self.settle_undecided();
        dispatch!(self, s => s.abort(reason), undecided => ())
    }

    /// The drain time after our GOAWAY ran out: what is still open is cut.
    /// HTTP/2 reports the loss as `ConnectionError::DrainExpired`; HTTP/1.1
    /// ends each unfinished exchange with `StreamReset`, as an abort does.
    fn expire_drain(&mut self) {
        self.cause.note(CloseCause::DrainExpired);
        match &mut self.inner {
            Inner::Http2(s) => s.expire_drain(),
            Inner::Http1(s) => s.abort(Reason::NO_ERROR),
            // A GOAWAY settles the protocol: never undecided here.
            Inner::Undecided { .. } => {}
        }
    }

    /// HTTP/2: advertises new settings mid-connection (SETTINGS). Larger
    /// sizes apply at once; smaller ones once the peer acknowledges them
    /// (RFC 9113 §6.5.3). Values the RFC bounds (§6.5.2: the initial
    /// window, the frame size) are checked first: `InvalidSetting`, and
    /// nothing is sent, rather than a SETTINGS the peer ends the
    /// connection over.
    pub fn update_settings(
        &mut self,
        now: Instant,
        settings: LocalSettings,
    ) -> Result<(), UserError> {
        match &mut self.inner {
            Inner::Http2(s) => {
                settings.check()?;
                s.update_settings(now, settings);
                Ok(())
            }
            _ => Err(UserError::Unsupported("SETTINGS over HTTP/1.1")),
        }
    }

    /// HTTP/2: the settings in force on our side now.
    pub fn local_settings(&self) -> Option<LocalSettings> {
        match &self.inner {
            Inner::Http2(s) => Some(s.local_settings()),
            _ => None,
        }
    }

    /// With `WindowPolicy::Manual`: the application is done with `n` bytes
    /// received on `stream`, so the peer may send that many more. Bytes of
    /// a stream that has closed since are released too: they still hold
    /// the connection's window (RFC 9113 §6.9.1), which nothing else gives
    /// back. An error releases nothing, and says what was wrong:
    ///
    /// - `UnknownStream`: `stream` never named a stream of this connection
    ///   (an id not opened yet, 0, or any id on a server that has not told
    ///   the protocol yet), so nothing was ever received on it.
    /// - `ReleaseTooLarge`: `n` is more than was received and not released:
    ///   on a live HTTP/2 stream, more than that stream holds; on a closed
    ///   one, whose own count ended with it, more than the connection
    ///   holds. With `WindowPolicy::Automatic` bytes are released as their
    ///   `Data` events are taken, so any `n` above 0 is too large.
    ///
    /// HTTP/1.1 has no windows: there this only keeps the count, for the
    /// connection as a whole rather than per exchange.
    pub fn release_capacity(&mut self, stream: StreamId, n: u32) -> Result<(), UserError> {
        dispatch!(self, s => s.release_capacity(stream, n), undecided => Err(UserError::UnknownStream(stream)))
    }

    /// The next chunk of bytes to write to the transport.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Bytes> {
        if !self.held.is_empty() && !self.input_blocked() {
            // Output went out since: the held input can be read now.
            let mut held = std::mem::take(&mut self.held);
            let before = held.len();
            self.take_input(now, &mut held, usize::MAX);
            self.held = held;
            let held = self.held.len();
            self.watch_head(now, held < before, held);
        }
        let chunk = match self.handover.as_mut().and_then(|h| h.out.pop_front()) {
            Some(chunk) => Some(chunk),
            None => match &mut self.inner {
                Inner::Http1(s) => s.poll_transmit(),
                Inner::Http2(s) => s.poll_transmit(now),
                Inner::Undecided { .. } => None,
            },
        };
        if let Some(chunk) = &chunk {
            self.bytes_sent += chunk.len() as u64;
            self.activity(now);
        }
        chunk
    }

    /// What crossed this connection so far.
    pub fn stats(&self) -> Stats {
        let mut stats = match &self.inner {
            Inner::Http2(s) => s.stats,
            Inner::Http1(s) => s.stats(),
            Inner::Undecided { .. } => Stats::default(),
        };
        stats.bytes_received = self.bytes_received;
        stats.bytes_sent = self.bytes_sent;
        if let Inner::Http1(_) = self.inner {
            // HTTP/1.1 heads travel as they are: what is not body is head
            // (and chunk framing).
            let head = self.bytes_sent.saturating_sub(stats.data_bytes_sent);
            stats.header_wire_bytes_sent = head;
            stats.header_bytes_sent = head;
        }
        stats
    }

    /// When [`Connection::handle_timeout`] must be called next, if ever:
    /// the earliest of the protocol's timers and the way out's (idle,
    /// head read, drain).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let session = match &self.inner {
            Inner::Http1(s) => s.poll_timeout(),
            Inner::Http2(s) => s.poll_timeout(),
            Inner::Undecided { .. } => None,
        };
        let own = if self.ended() {
            None
        } else {
            self.timers.earliest()
        };
        [session, own].into_iter().flatten().min()
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(event) = self.handover.as_mut().and_then(|h| h.events.pop_front()) {
            return Some(event);
        }
        // The event stays in the `Option` it came in, so it is not moved
        // out and back in on its way to the caller.
        let mut event = dispatch!(self, s => s.poll_event(), undecided => None);
        match &mut event {
            Some(Event::GoAway { reason, .. }) => {
                self.cause
                    .note(CloseCause::GoAwayReceived { reason: *reason });
            }
            Some(Event::Closed { error, cause }) => {
                *cause = self.cause.resolve(error.as_ref(), cause.clone());
            }
            _ => {}
        }
        event
    }

    /// The error the connection ended with, once it has ended: the one its
    /// `Event::Closed` carries, still there after that event was polled.
    /// Errors are sticky, as rustls keeps its own: the first one ends the
    /// connection, later input is not read, and nothing replaces it.
    /// `None` while the connection runs and after an end without error.
    pub fn error(&self) -> Option<&ConnectionError> {
        match &self.inner {
            Inner::Http1(s) => s.error(),
            Inner::Http2(s) => s.error(),
            Inner::Undecided { .. } => None,
        }
    }

    /// An empty vector for the fields of a head the application builds:
    /// one a written head or a recycled one left behind (with room), or a
    /// new one. With [`recycle_fields`](Connection::recycle_fields) a load
    /// of requests (or responses) reuses the same few vectors instead of
    /// allocating one per head.
    pub fn spare_fields(&mut self) -> Vec<HeaderField> {
        dispatch!(self, s => s.spares().fields(), undecided => Vec::new())
    }

    /// Takes back the fields of a head the application is done with (a
    /// received response's or request's): their vector serves the next
    /// head decoded here or [`spare_fields`](Connection::spare_fields).
    /// Over HTTP/2 a client's response fields given back as they came are
    /// handed out whole for the next response whose head block repeats
    /// theirs, so a load generator's identical responses are neither
    /// decoded nor checked again. What is kept is bounded and given back
    /// by [`trim`](Connection::trim).
    pub fn recycle_fields(&mut self, fields: Vec<HeaderField>) {
        dispatch!(self, s => s.recycle_fields(fields), undecided => ())
    }

    /// Takes back a received request head ([`Event::Request`]) the
    /// application is done with: its box and its field vector serve the
    /// next request decoded here, as
    /// [`recycle_fields`](Connection::recycle_fields) does for the fields
    /// alone. Over HTTP/2 a head given back as it came is handed out whole
    /// for the next request whose head block repeats its block. What is
    /// kept is bounded and given back by [`trim`](Connection::trim).
    pub fn recycle_request(&mut self, head: Box<RequestHead>) {
        dispatch!(self, s => s.recycle_request(head), undecided => ())
    }

    /// HTTP/2: how many streams of ours the peer lets be open at once
    /// (its MAX_CONCURRENT_STREAMS, unbounded until its SETTINGS come);
    /// `None` for HTTP/1.1, where only the application bounds pipelining.
    /// Requests sent past it wait in the core for a stream to close: a
    /// client that times them from `send_request` counts that wait, which
    /// a timer started at the HEADERS frame (h2load's) does not, so a
    /// client that wants the server's latency keeps within it.
    pub fn peer_stream_limit(&self) -> Option<u32> {
        match &self.inner {
            Inner::Http2(s) => Some(s.peer_stream_limit()),
            Inner::Http1(_) | Inner::Undecided { .. } => None,
        }
    }

    /// Body bytes `stream` holds that have not gone out: over HTTP/2, its
    /// DATA waiting for flow control or its turn, which an application
    /// that answers as it receives (an echo) bounds by it; 0 for a stream
    /// that holds none or is gone. HTTP/1.1 writes what it is given into
    /// the connection's output at once, whose driver stops reading while
    /// it is full, so it says 0.
    pub fn unsent(&self, stream: StreamId) -> u64 {
        match &self.inner {
            Inner::Http2(s) => s.unsent(stream),
            Inner::Http1(_) | Inner::Undecided { .. } => 0,
        }
    }

    /// Nothing is under way: no HTTP/2 stream is open, no HTTP/1.1
    /// exchange is in progress (or the protocol is not known yet).
    pub fn is_idle(&self) -> bool {
        match &self.inner {
            Inner::Http1(s) => s.is_idle(),
            Inner::Http2(s) => s.is_idle(),
            Inner::Undecided { .. } => true,
        }
    }

    /// Gives back the capacity that busy moments grew the connection's
    /// queues and write buffer to, if it [`is_idle`](Connection::is_idle):
    /// a connection waiting for its next request then costs its state, not
    /// its buffers. A host calls it when the connection goes quiet (a read
    /// finds nothing), as [`host::Driver`](crate::host::Driver) does; it is cheap when there
    /// is nothing to give back, and calling it at any other time only
    /// costs the next burst a few allocations.
    pub fn trim(&mut self) {
        if self
            .handover
            .as_ref()
            .is_some_and(|h| h.out.is_empty() && h.events.is_empty())
        {
            self.handover = None;
        }
        self.held.trim();
        dispatch!(self, s => s.trim(), undecided => ())
    }

    /// Whether the peer has said it will send nothing more: an HTTP/1.1
    /// client whose request asking to close (RFC 9112 §9.6: no request may
    /// follow it) was read whole, or that closed its side. A host may then
    /// close a plain transport at once (over TLS the peer's records go on
    /// below HTTP: see [`host::Driver::peer_may_send`](crate::host::Driver::peer_may_send));
    /// otherwise it half-closes and reads
    /// until the peer closes too, since data arriving at a closed socket
    /// makes the kernel send a reset that can destroy the last response
    /// before the peer reads it. HTTP/2 never says so: its peer may send
    /// frames until it sees the transport close.
    pub fn peer_done_sending(&self) -> bool {
        match &self.inner {
            Inner::Http1(s) => s.peer_done_sending(),
            Inner::Http2(_) | Inner::Undecided { .. } => false,
        }
    }

    /// Over, and everything it had to say has been polled: close the transport.
    pub fn is_closed(&self) -> bool {
        self.handover.as_ref().is_none_or(|h| h.out.is_empty())
            && match &self.inner {
                Inner::Http1(s) => s.is_closed(),
                Inner::Http2(s) => s.is_closed(),
                Inner::Undecided { .. } => false,
            }
    }
}
