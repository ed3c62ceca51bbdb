//! The contract between a connection and what runs on top of it, written
//! once so every runtime drives it the same way.
//!
//! The simulator's server rules and client scenarios, an embedder's service,
//! or a test are all an [`Application`]: Sans-IO like the [`Connection`], it
//! reacts to events and time by giving commands, and names its own next
//! deadline (a delayed response, the next paced request). An [`Endpoint`]
//! joins the two and hands every event to the application as it arises,
//! so a runtime adapter only moves bytes, fires one timer, reports the time
//! and stops reading while the connection wants no input.

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};

use crate::close::{CloseCause, TransportFailure};
use crate::connection::Connection;
use crate::event::Event;

/// Events decoded from the input before the application hears them: few
/// enough that the heads of one batch are all given back before the next
/// (the connection keeps 128 for reuse), many enough that a batch is worth
/// its round.
pub(crate) const BATCH: usize = 64;

/// What runs on top of one connection.
pub trait Application {
    /// Once, before any input: a client sends its first requests here.
    fn start(&mut self, now: Instant, conn: &mut Connection) {
        let _ = (now, conn);
    }

    /// One event from the connection; commands go straight to `conn`.
    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection);

    /// The application's own next deadline, if any.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    /// The deadline from `poll_timeout` has passed.
    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        let _ = (now, conn);
    }

    /// Client: asked once a connection has ended (after `Event::Closed`):
    /// whether the application still has work, so its driver should open
    /// a new connection and call `start` again on this same application.
    /// An application that ends connections on purpose (a request limit
    /// per connection) or meets servers that close after a response
    /// (HTTP/1.0) answers true while requests remain. Asked only when the
    /// driver will reconnect on a true answer, so an application that
    /// shares its work with other connections may claim the next piece
    /// here: a connection is then opened only for work it has.
    fn wants_reconnect(&mut self) -> bool {
        false
    }

    /// Client: the driver replaced the connection, and the new one took
    /// `connect_time` to set up (TCP and TLS); `start` follows. The first
    /// connection's set-up is given to whatever builds the application, so
    /// this is how an application that outlives its connections times
    /// each of them.
    fn reconnected(&mut self, connect_time: Duration) {
        let _ = connect_time;
    }

    /// The connection went quiet ([`Endpoint::trim`]): give back what busy
    /// moments grew per-connection state to (a map of requests in
    /// progress, say) if nothing is in it, as the connection does with its
    /// queues.
    fn trim(&mut self) {}
}

/// A connection and its application, driven as one. The loop a runtime
/// adapter runs, until [`is_closed`] (then it closes the transport):
///
/// 1. **In**: [`handle_input`] with what was read, [`handle_eof`] at end
///    of stream, [`handle_transport_error`] when the transport fails,
///    [`handle_timeout`] at the deadline, [`go_away`] or [`abort`] to end.
///    Each of these hands the events it raised to the application at once,
///    and the application answers them with commands. Read only while
///    `connection().wants_input()` is true: an HTTP/1.1 server holding
///    back pipelined requests turns it false.
/// 2. **Out**, after every call of step 1: [`poll_transmit`] until `None`,
///    and write what it gives. It carries the answers given in step 1, and
///    more: taking an event can itself make output (a WINDOW_UPDATE), and
///    polling can raise new events (held-back HTTP/1.1 requests read once
///    responses went out), which `poll_transmit` hands to the application
///    before returning `None`, so their answers come out in the same run.
/// 3. **Sleep**: [`poll_timeout`], read once step 2 is done (the
///    application's answers may have moved it), until the deadline or
///    input.
///
/// [`is_closed`]: Endpoint::is_closed
/// [`handle_input`]: Endpoint::handle_input
/// [`handle_eof`]: Endpoint::handle_eof
/// [`handle_transport_error`]: Endpoint::handle_transport_error
/// [`handle_timeout`]: Endpoint::handle_timeout
/// [`go_away`]: Endpoint::go_away
/// [`abort`]: Endpoint::abort
/// [`poll_transmit`]: Endpoint::poll_transmit
/// [`poll_timeout`]: Endpoint::poll_timeout
#[derive(Debug)]
pub struct Endpoint<A> {
    conn: Connection,
    app: A,
}

impl<A: Application> Endpoint<A> {
    /// Joins `conn` and `app` and lets the application start.
    pub fn new(mut conn: Connection, mut app: A, now: Instant) -> Self {
        app.start(now, &mut conn);
        let mut endpoint = Endpoint { conn, app };
        endpoint.dispatch(now);
        endpoint
    }

    /// Bytes from the transport (see [`Connection::handle_input`]), taken
    /// in batches of at most 64 events (`BATCH`), each handed to the
    /// application before the next is decoded; returns how many events
    /// the application was handed.
    pub fn handle_input(&mut self, now: Instant, input: &mut BytesMut) -> usize {
        let mut events = 0;
        loop {
            let before = input.len();
            self.conn.handle_input_until(now, input, BATCH);
            events += self.dispatch(now);
            if input.is_empty() || input.len() == before {
                return events;
            }
        }
    }

    /// The transport's read side ended.
    pub fn handle_eof(&mut self, now: Instant) {
        self.conn.handle_eof(now);
        self.dispatch(now);
    }

    /// The deadline from [`Endpoint::poll_timeout`] has passed: fires the
    /// connection's and the application's timers that are due.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.conn.poll_timeout().is_some_and(|t| t <= now) {
            self.conn.handle_timeout(now);
        }
        if self.app.poll_timeout().is_some_and(|t| t <= now) {
            self.app.on_timeout(now, &mut self.conn);
        }
        self.dispatch(now);
    }

    /// Begins a graceful shutdown (see [`Connection::go_away`]) and hands
    /// the application what it caused.
    pub fn go_away(&mut self, now: Instant) {
        self.conn.go_away(now);
        self.dispatch(now);
    }

    /// [`Connection::go_away_because`]: a graceful shutdown for a reason
    /// the driver knows (an idle timeout).
    pub fn go_away_because(&mut self, now: Instant, cause: CloseCause) {
        self.conn.go_away_because(now, cause);
        self.dispatch(now);
    }

    /// Ends the connection at once (see [`Connection::abort`]) and hands the
    /// application what it caused (its `Closed` event).
    pub fn abort(&mut self, now: Instant, reason: crate::frame::Reason) {
        self.conn.abort(reason);
        self.dispatch(now);
    }

    /// [`Connection::abort_because`]: ends the connection at once for a
    /// reason the driver knows (the drain time ran out).
    pub fn abort_because(&mut self, now: Instant, reason: crate::frame::Reason, cause: CloseCause) {
        self.conn.abort_because(reason, cause);
        self.dispatch(now);
    }

    /// [`Connection::handle_transport_error`]: the transport failed.
    pub fn handle_transport_error(&mut self, now: Instant, failure: impl Into<TransportFailure>) {
        self.conn.handle_transport_error(now, failure);
        self.dispatch(now);
    }

    /// The next chunk to write. Polling can itself produce events (an
    /// HTTP/1.1 server reading requests it held back while its pipeline was
    /// full); they reach the application here, and what it answers is
    /// written in the same turn.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Bytes> {
        loop {
            if let Some(chunk) = self.conn.poll_transmit(now) {
                return Some(chunk);
            }
            if self.dispatch(now) == 0 {
                return None;
            }
        }
    }

    /// The earlier of the connection's and the application's deadlines.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.conn.poll_timeout(), self.app.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Over, and all output polled: close the transport.
    pub fn is_closed(&self) -> bool {
        self.conn.is_closed()
    }

    /// The connection went quiet (a read found nothing): the connection
    /// ([`Connection::trim`]) and the application ([`Application::trim`])
    /// give back what their busy moments grew.
    pub fn trim(&mut self) {
        self.conn.trim();
        self.app.trim();
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    pub fn application(&self) -> &A {
        &self.app
    }

    pub fn application_mut(&mut self) -> &mut A {
        &mut self.app
    }

    /// Gives the application back, e.g. to read its statistics at the end.
    pub fn into_parts(self) -> (Connection, A) {
        (self.conn, self.app)
    }

    /// Hands every pending event to the application and returns how many.
    /// Its commands may cause more events (a reset it gives can end the
    /// connection), so this runs until the queue stays empty.
    fn dispatch(&mut self, now: Instant) -> usize {
        let mut events = 0;
        while let Some(event) = self.conn.poll_event() {
            self.app.on_event(now, event, &mut self.conn);
            events += 1;
        }
        events
    }
}
