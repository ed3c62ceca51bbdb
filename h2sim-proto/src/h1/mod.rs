//! HTTP/1.1 (RFC 9112) behind the same events and commands as HTTP/2.
//!
//! An HTTP/1.1 connection carries one message at a time in each direction;
//! this layer maps each request/response exchange to a stream id (1, 3, 5,
//! … in request order, the same on both sides so that logs line up, unless
//! a client withdraws a request before writing it), so the application
//! sees the events it would see over HTTP/2:
//!
//! - `parse` turns heads into `RequestHead` / `ResponseHead` with httparse,
//!   slicing the input instead of copying it;
//! - `body` decodes bodies (Content-Length, chunked, until close);
//! - `encode` writes heads and frames bodies;
//! - `server` and `client` hold each role's exchanges: pipelining, keep-alive,
//!   `Expect: 100-continue`, error responses, and the end of the connection;
//! - `upgrade` is the server's `Upgrade: h2c` handshake (RFC 7540 §3.2).
//!
//! What HTTP/1.1 cannot express maps as follows: resetting one exchange
//! closes the connection (RFC 9112 §9.6); there are no windows, so
//! `release_capacity` only checks its bookkeeping; push and PING are
//! refused by the `Connection` before they reach this layer.

mod body;
mod client;
mod encode;
mod parse;
mod server;
mod upgrade;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};

pub use crate::error::{HeadPart, Http1Error};

use self::client::Client;
use self::encode::Output;
use self::server::Server;
use crate::close::CloseCause;
use crate::config::{Config, WindowPolicy};
use crate::error::{ConnectionError, UserError, Violation};
use crate::event::Event;
use crate::frame::{Reason, StreamId};
use crate::hpack::HeaderField;
use crate::message::{RequestHead, ResponseHead};
use crate::role::Role;
use crate::spares::Spares;
use crate::stats::Stats;
use crate::trim::Trim;

/// Server: a request that asked to continue in HTTP/2 (RFC 7540 §3.2). The
/// 101 response is already in the session's output; once it is written the
/// connection speaks HTTP/2, and the request is stream 1 of the new session,
/// half-closed from the client's side (it has no body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Upgrade {
    pub(crate) request: RequestHead,
    /// The decoded `HTTP2-Settings`: the payload of the client's SETTINGS.
    pub(crate) settings: Bytes,
}

/// The HTTP/1.1 protocol state of one connection.
#[derive(Debug)]
pub(crate) struct Session {
    io: Io,
    side: Side,
    /// Body bytes the application has taken and not released yet
    /// (`WindowPolicy::Manual` only). HTTP/1.1 has no windows: this is only
    /// bookkeeping, kept per connection rather than per exchange.
    unreleased: u64,
}

#[derive(Debug)]
enum Side {
    Client(Client),
    /// Boxed: a server's state is three times a client's.
    Server(Box<Server>),
}

/// What both roles write to: the configuration, the events, the output.
#[derive(Debug)]
struct Io {
    config: Arc<Config>,
    events: VecDeque<Event>,
    out: Output,
    /// `Event::Closed` has been queued: nothing more is read or sent.
    closed: bool,
    /// The error `Event::Closed` carried, kept for `Connection::error`.
    error: Option<ConnectionError>,
    /// What set the end in motion, as far as this layer knows (the first
    /// noted); the `Connection` refines it with what it was told.
    cause: Option<CloseCause>,
    /// Heads and bodies received and body bytes sent; HTTP/1.1 heads are
    /// not compressed, so their wire and decoded sizes are the same.
    stats: Stats,
    /// Written heads' field vectors, for the next heads.
    spares: Spares,
}

impl Io {
    fn emit(&mut self, event: Event) {
        self.events.push_back(event);
    }

    /// Body bytes for the application. An empty end of body is folded into
    /// the Data event before it when that one is still queued, so a chunked
    /// body that arrived whole ends in one event as it would over HTTP/2.
    fn data(&mut self, stream: StreamId, data: Bytes, end_stream: bool) {
        self.stats.data_bytes_received += data.len() as u64;
        if end_stream
            && data.is_empty()
            && let Some(Event::Data {
                stream: last,
                end_stream: ended,
                ..
            }) = self.events.back_mut()
            && *last == stream
            && !*ended
        {
            *ended = true;
            return;
        }
        self.emit(Event::Data {
            stream,
            data,
            end_stream,
        });
    }

    /// An exchange that ends without completing.
    fn reset(
        &mut self,
        stream: StreamId,
        reason: Reason,
        remote: bool,
        violation: Option<Violation>,
    ) {
        self.emit(Event::StreamReset {
            stream,
            reason,
            remote,
            violation,
            status: None,
        });
    }

    /// Notes what will end the connection, unless something came first.
    fn hint(&mut self, cause: CloseCause) {
        self.cause.get_or_insert(cause);
    }

    /// Marks the connection over and tells the application, once.
    fn close(&mut self, error: Option<ConnectionError>) {
        if !self.closed {
            self.closed = true;
            self.error.clone_from(&error);
            let cause = self.cause.take().unwrap_or(CloseCause::LocalGoAway);
            self.emit(Event::Closed { error, cause });
        }
    }
}

/// Exchange ids: the odd numbers, as client-initiated HTTP/2 streams.
#[derive(Debug)]
struct Ids {
    next: Option<StreamId>,
}

impl Ids {
    fn new() -> Self {
        Ids {
            next: Some(StreamId::new(1)),
        }
    }

    /// Whether `id` has been given to an exchange.
    fn issued(&self, id: StreamId) -> bool {
        let below_next = self.next.is_none_or(|next| id < next);
        id.value() % 2 == 1 && below_next
    }

    /// The next id, or None once 2^31-1 has been used.
    fn allocate(&mut self) -> Option<StreamId> {
        let id = self.next?;
        self.next = id
            .value()
            .checked_add(2)
            .filter(|&n| n <= StreamId::MAX.value())
            .map(StreamId::new);
        Some(id)
    }
}

/// What the application queued on one exchange, written in order when the
/// exchange's turn on the wire comes.
#[derive(Debug)]
enum Outgoing<H> {
    Head { head: H, end_stream: bool },
    Data { data: Bytes, end_stream: bool },
    Trailers(Vec<HeaderField>),
}

impl Session {
    /// A session for a connection whose protocol is already decided: it is
    /// up at once, so `Event::Connected` is the first event.
    pub(crate) fn new(role: Role, config: impl Into<Arc<Config>>, _now: Instant) -> Self {
        let config = config.into();
        let mut io = Io {
            config,
            events: VecDeque::new(),
            out: Output::default(),
            closed: false,
            error: None,
            cause: None,
            stats: Stats::default(),
            spares: Spares::default(),
        };
        io.emit(Event::Connected);
        let side = match role {
            Role::Client => Side::Client(Client::new()),
            Role::Server => Side::Server(Box::new(Server::new())),
        };
        Session {
            io,
            side,
            unreleased: 0,
        }
    }

    /// Consumes what it can from the front of `input`; a partial head or
    /// chunk line stays there for the next read to complete. Input is also
    /// left there on purpose: by a server with as many requests waiting for
    /// their responses as `Http1Config::server_max_pipeline` allows (call
    /// again with it once responses went out), and after an accepted h2c
    /// upgrade (it is HTTP/2).
    pub(crate) fn handle_input(&mut self, _now: Instant, input: &mut BytesMut) {
        if self.io.closed {
            return;
        }
        match &mut self.side {
            Side::Client(c) => c.handle_input(&mut self.io, input),
            Side::Server(s) => s.handle_input(&mut self.io, input),
        }
    }

    /// The peer closed its side: a body delimited by the close ends here; a
    /// server still answers the complete requests it has (a client may
    /// half-close after its last request).
    pub(crate) fn handle_eof(&mut self) {
        if self.io.closed {
            return;
        }
        self.io.hint(CloseCause::PeerClosed);
        match &mut self.side {
            Side::Client(c) => c.handle_eof(&mut self.io),
            Side::Server(s) => s.handle_eof(&mut self.io),
        }
    }

    /// HTTP/1.1 has no timers of its own: idle, head-read and drain are
    /// the `Connection`'s, the same for both protocols.
    pub(crate) fn handle_timeout(&mut self, _now: Instant) {}

    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    /// Over (its `Closed` event raised), whether or not output is left.
    pub(crate) fn ended(&self) -> bool {
        self.io.closed
    }

    /// What will end the session, noted before it ends: the peer's
    /// `connection: close`, its end of stream, an abort.
    pub(crate) fn pending_cause(&self) -> Option<&CloseCause> {
        self.io.cause.as_ref()
    }

    /// No exchange is under way.
    pub(crate) fn is_idle(&self) -> bool {
        match &self.side {
            Side::Server(s) => s.is_idle(),
            Side::Client(c) => c.is_idle(),
        }
    }

    /// Between exchanges, gives back what busy moments grew its queues to
    /// (see `trim`); what still holds something stays.
    pub(crate) fn trim(&mut self) {
        if !self.is_idle() {
            return;
        }
        match &mut self.side {
            Side::Server(s) => s.trim(),
            Side::Client(c) => c.trim(),
        }
        self.io.events.trim();
        self.io.out.trim();
        self.io.spares.trim();
    }

    pub(crate) fn spares(&mut self) -> &mut Spares {
        &mut self.io.spares
    }

    pub(crate) fn recycle_request(&mut self, head: Box<RequestHead>) {
        self.io.spares.give_head(head);
    }

    pub(crate) fn recycle_fields(&mut self, fields: Vec<HeaderField>) {
        self.io.spares.give_fields(fields);
    }

    /// Server: waiting for the next request head, with room to read it
    /// (not with its pipeline full). Bytes left unread now are a head in
    /// progress, which `Config::head_read_timeout` bounds.
    pub(crate) fn reading_head(&self) -> bool {
        match &self.side {
            Side::Server(s) => !self.io.closed && s.reading_head(&self.io),
            Side::Client(_) => false,
        }
    }

    pub(crate) fn error(&self) -> Option<&ConnectionError> {
        self.io.error.as_ref()
    }

    /// What crossed the connection; the Connection adds the transport bytes.
    pub(crate) fn stats(&self) -> Stats {
        let mut stats = self.io.stats;
        stats.data_bytes_sent = self.io.out.body_bytes();
        stats
    }

    /// The session holds back input until responses go out: a server
    /// with its pipeline full. The Connection keeps that input and offers
    /// it again each turn.
    pub(crate) fn input_blocked(&self) -> bool {
        match &self.side {
            Side::Server(s) => s.pipeline_full(&self.io),
            Side::Client(_) => false,
        }
    }

    pub(crate) fn poll_event(&mut self) -> Option<Event> {
        let event = self.io.events.pop_front()?;
        match (&event, &mut self.side) {
            (Event::Request { stream, .. }, Side::Server(s)) => s.request_taken(*stream),
            (Event::Data { data, .. }, _)
                if self.io.config.window_policy == WindowPolicy::Manual =>
            {
                self.unreleased = self.unreleased.saturating_add(data.len() as u64);
            }
            _ => {}
        }
        Some(event)
    }

    /// The next piece of output. Body `Bytes` come out as the application
    /// gave them; heads and chunk lines between them share one buffer.
    pub(crate) fn poll_transmit(&mut self) -> Option<Bytes> {
        if !self.io.closed {
            match &mut self.side {
                Side::Client(c) => c.flush(&mut self.io),
                Side::Server(s) => s.before_transmit(&mut self.io),
            }
        }
        self.io.out.pop()
    }

    /// Client: queues a request; it is written once the requests before it
    /// are, with at most `Http1Config::max_pipeline` awaiting responses.
    pub(crate) fn send_request(
        &mut self,
        head: RequestHead,
        end_stream: bool,
    ) -> Result<StreamId, UserError> {
        match &mut self.side {
            Side::Client(c) => c.send_request(&mut self.io, head, end_stream),
            Side::Server(_) => Err(UserError::WrongRole),
        }
    }

    /// Server: queues a response head (1xx any number of times, then the
    /// final one); it is written after the responses to earlier requests.
    pub(crate) fn send_response(
        &mut self,
        id: StreamId,
        head: ResponseHead,
        end_stream: bool,
    ) -> Result<(), UserError> {
        match &mut self.side {
            Side::Server(s) => s.send_response(&mut self.io, id, head, end_stream),
            Side::Client(_) => Err(UserError::WrongRole),
        }
    }

    /// Server: a final head with its whole body (`Connection::send_reply`):
    /// the head says the body's length and the body is framed by it (RFC
    /// 9112 §6.2), where it would be chunked, unless the head has a
    /// `content-length` of its own.
    pub(crate) fn send_reply(
        &mut self,
        id: StreamId,
        head: ResponseHead,
        body: Bytes,
    ) -> Result<(), UserError> {
        match &mut self.side {
            Side::Server(s) => s.send_reply(&mut self.io, id, head, body),
            Side::Client(_) => Err(UserError::WrongRole),
        }
    }

    /// Queues body bytes; they are written without a copy.
    pub(crate) fn send_data(
        &mut self,
        id: StreamId,
        data: Bytes,
        end_stream: bool,
    ) -> Result<(), UserError> {
        match &mut self.side {
            Side::Client(c) => c.send_data(id, Outgoing::Data { data, end_stream }),
            Side::Server(s) => s.send_body(&mut self.io, id, Outgoing::Data { data, end_stream }),
        }
    }

    /// Queues trailers, ending the message. Only a chunked body carries
    /// them; with a Content-Length (or no body) they are dropped.
    pub(crate) fn send_trailers(
        &mut self,
        id: StreamId,
        fields: Vec<HeaderField>,
    ) -> Result<(), UserError> {
        match &mut self.side {
            Side::Client(c) => c.send_data(id, Outgoing::Trailers(fields)),
            Side::Server(s) => s.send_body(&mut self.io, id, Outgoing::Trailers(fields)),
        }
    }

    /// HTTP/1.1 cannot reset one exchange: the connection closes after what
    /// is already complete, and the other unfinished exchanges end with
    /// `StreamReset` (or `Retryable` for requests never written). A client
    /// request not yet written is simply dropped.
    pub(crate) fn reset(&mut self, id: StreamId, reason: Reason) -> Result<(), UserError> {
        match &mut self.side {
            Side::Client(c) => c.reset(&mut self.io, id),
            Side::Server(s) => s.reset(&mut self.io, id, reason),
        }
    }

    /// Graceful close: exchanges in progress finish, the last message
    /// carries `connection: close` (RFC 9112 §9.6), then `Event::Closed`.
    pub(crate) fn go_away(&mut self, _now: Instant) {
        if self.io.closed {
            return;
        }
        match &mut self.side {
            Side::Client(c) => c.go_away(&mut self.io),
            Side::Server(s) => s.go_away(&mut self.io),
        }
    }

    /// Ends the connection at once: unsent output is dropped, unfinished
    /// exchanges end with `StreamReset(reason)` (or `Retryable`).
    pub(crate) fn abort(&mut self, reason: Reason) {
        if self.io.closed {
            return;
        }
        self.io.out.clear();
        self.io.hint(CloseCause::Aborted { reason });
        match &mut self.side {
            Side::Client(c) => c.abort(&mut self.io, reason),
            Side::Server(s) => s.abort(&mut self.io, reason),
        }
    }

    /// No windows to return in HTTP/1.1; the bytes are only checked against
    /// what was delivered and not yet released.
    /// The application is done with `n` body bytes (see
    /// `Connection::release_capacity`): only bookkeeping, for the
    /// connection as a whole, as HTTP/1.1 has no windows; `id` must name
    /// an exchange this connection has had.
    pub(crate) fn release_capacity(&mut self, id: StreamId, n: u32) -> Result<(), UserError> {
        let issued = match &self.side {
            Side::Client(c) => c.issued(id),
            Side::Server(s) => s.issued(id),
        };
        if !issued {
            return Err(UserError::UnknownStream(id));
        }
        self.unreleased = self
            .unreleased
            .checked_sub(u64::from(n))
            .ok_or(UserError::ReleaseTooLarge)?;
        Ok(())
    }

    /// Over, and all output polled. After an h2c upgrade the session is
    /// never closed: the transport goes on in HTTP/2.
    pub(crate) fn is_closed(&self) -> bool {
        self.io.closed && self.io.out.is_empty()
    }

    /// Server: the client will send nothing more (see
    /// [`Connection::peer_done_sending`](crate::Connection::peer_done_sending)).
    pub(crate) fn peer_done_sending(&self) -> bool {
        match &self.side {
            Side::Server(s) => s.peer_done(),
            Side::Client(_) => false,
        }
    }

    /// Server: the accepted `Upgrade: h2c` request, once.
    pub(crate) fn take_upgrade(&mut self) -> Option<Upgrade> {
        match &mut self.side {
            Side::Server(s) => s.take_upgrade(),
            Side::Client(_) => None,
        }
    }
}
