//! A test harness (cargo feature `pair`, off by default): a client and a
//! server joined in memory on a virtual clock, the way quinn-proto's tests
//! join two endpoints.
//!
//! Each side is a [`Connection`] (the test polls its events and gives its
//! commands) or an [`Endpoint`] (its [`Application`] does). What one side
//! writes is delivered to the other whole, or — with a seed — in pieces
//! split at random points, so every partial-frame path of the reader runs
//! and a failure replays from its seed. An [`Observer`] can watch every
//! byte each side writes and reads. Time moves only when the test says so
//! ([`Pair::advance`], [`Pair::jump`]); once a side is closed and what it
//! wrote is delivered, its transport closes and the peer reads end of
//! stream, as over a socket.
//!
//! Sans-IO like the rest of the crate: no sockets, no threads, no clock
//! beyond the one `Instant` the pair starts at.
//!
//! ```
//! use h2sim_proto::pair::Pair;
//! use h2sim_proto::{Event, RequestHead, ResponseHead};
//!
//! let mut pair = Pair::with_defaults(7);
//! pair.connect();
//! let head = RequestHead::new("GET", "http", "example.com", "/hello");
//! let stream = pair.client.send_request(head, true)?;
//! pair.drive();
//! assert!(matches!(pair.server_events()[..], [Event::Request { .. }]));
//! pair.server.send_response(stream, ResponseHead::new(204), true)?;
//! pair.drive();
//! assert!(matches!(pair.client_events()[..], [Event::Response { end_stream: true, .. }]));
//! # Ok::<(), h2sim_proto::UserError>(())
//! ```

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};

use crate::application::{Application, Endpoint};
use crate::config::Config;
use crate::connection::Connection;
use crate::error::UserError;
use crate::event::Event;

/// Rounds [`Pair::drive`] takes before it calls the pair stuck.
const DRIVE_BOUND: usize = 100_000;

/// What a [`Pair`] drives: one end of the connection, with or without an
/// application on top.
pub trait Side {
    /// The next chunk to write.
    fn poll_transmit(&mut self, now: Instant) -> Option<Bytes>;
    /// Bytes read from the peer.
    fn handle_input(&mut self, now: Instant, input: &mut BytesMut);
    /// The peer's transport closed.
    fn handle_eof(&mut self, now: Instant);
    /// Fires whatever timers are due at `now` (none may be).
    fn fire_timers(&mut self, now: Instant);
    /// The next deadline.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Over, and all output polled.
    fn is_closed(&self) -> bool;
}

impl Side for Connection {
    fn poll_transmit(&mut self, now: Instant) -> Option<Bytes> {
        Connection::poll_transmit(self, now)
    }
    fn handle_input(&mut self, now: Instant, input: &mut BytesMut) {
        Connection::handle_input(self, now, input);
    }
    fn handle_eof(&mut self, now: Instant) {
        Connection::handle_eof(self, now);
    }
    fn fire_timers(&mut self, now: Instant) {
        if Connection::poll_timeout(self).is_some_and(|t| t <= now) {
            Connection::handle_timeout(self, now);
        }
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Connection::poll_timeout(self)
    }
    fn is_closed(&self) -> bool {
        Connection::is_closed(self)
    }
}

impl<A: Application> Side for Endpoint<A> {
    fn poll_transmit(&mut self, now: Instant) -> Option<Bytes> {
        Endpoint::poll_transmit(self, now)
    }
    fn handle_input(&mut self, now: Instant, input: &mut BytesMut) {
        Endpoint::handle_input(self, now, input);
    }
    fn handle_eof(&mut self, now: Instant) {
        Endpoint::handle_eof(self, now);
    }
    fn fire_timers(&mut self, now: Instant) {
        // The endpoint fires only what is due, of both its parts.
        Endpoint::handle_timeout(self, now);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Endpoint::poll_timeout(self)
    }
    fn is_closed(&self) -> bool {
        Endpoint::is_closed(self)
    }
}

/// One direction of the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    ClientToServer,
    ServerToClient,
}

impl Dir {
    pub const BOTH: [Dir; 2] = [Dir::ClientToServer, Dir::ServerToClient];

    /// The direction toward the server if `to_server`, else toward the
    /// client.
    pub fn toward_server(to_server: bool) -> Dir {
        if to_server {
            Dir::ClientToServer
        } else {
            Dir::ServerToClient
        }
    }

    pub fn reverse(self) -> Dir {
        match self {
            Dir::ClientToServer => Dir::ServerToClient,
            Dir::ServerToClient => Dir::ClientToServer,
        }
    }

    /// 0 or 1, to keep something per direction in an array.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Watches the wire: every byte as its sender writes it (when it is handed
/// out by `poll_transmit`) and as its receiver reads it (just before
/// `handle_input`), so an observer sees what each side had seen when it
/// built each frame even while bytes are in flight both ways.
pub trait Observer {
    fn written(&mut self, dir: Dir, bytes: &[u8]);
    fn read(&mut self, dir: Dir, bytes: &[u8]);
}

/// No observer.
impl Observer for () {
    fn written(&mut self, _: Dir, _: &[u8]) {}
    fn read(&mut self, _: Dir, _: &[u8]) {}
}

/// A small deterministic generator (xorshift64*), so failures replay from
/// their seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (`0` for `n == 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// A client and a server joined in memory (see the module docs).
///
/// The sides and the clock are public fields: a test gives commands to
/// `pair.client` or `pair.server` directly and reads `pair.now`.
#[derive(Debug)]
pub struct Pair<C = Connection, S = Connection, O = ()> {
    pub client: C,
    pub server: S,
    /// The virtual clock: every call the pair makes passes this time.
    pub now: Instant,
    pub observer: O,
    /// Splits deliveries at random points; `None` delivers whole.
    rng: Option<Rng>,
    /// Written, not yet delivered, per direction.
    in_flight: [BytesMut; 2],
    /// The receiver's unread input (a partial frame), per direction.
    inbox: [BytesMut; 2],
    /// End of stream delivered, per direction.
    eof: [bool; 2],
    /// Bytes written, per direction.
    written: [u64; 2],
}

impl Pair {
    /// `Connection::client` against an undecided `Connection::server`,
    /// deliveries split by `seed`.
    ///
    /// # Panics
    ///
    /// If [`Config::check`] refuses either configuration: a test harness
    /// has no one to return the error to.
    pub fn new(client: Config, server: Config, seed: u64) -> Self {
        let now = Instant::now();
        let connection =
            |made: Result<Connection, UserError>| made.unwrap_or_else(|e| panic!("Pair::new: {e}"));
        Pair::join(
            connection(Connection::client(client, now)),
            connection(Connection::server(server, now)),
            now,
        )
        .split(seed)
    }

    /// [`Pair::new`] with default configurations.
    pub fn with_defaults(seed: u64) -> Self {
        Pair::new(Config::default(), Config::default(), seed)
    }
}

impl<O> Pair<Connection, Connection, O> {
    /// Every event the client has raised since the last call.
    pub fn client_events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.client.poll_event()).collect()
    }

    /// Every event the server has raised since the last call.
    pub fn server_events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.server.poll_event()).collect()
    }
}

impl<O: Observer> Pair<Connection, Connection, O> {
    /// Brings the connection up (prefaces and SETTINGS exchanged and
    /// acknowledged) and takes both sides' events; panics unless both saw
    /// `Event::Connected`.
    pub fn connect(&mut self) {
        self.drive();
        assert!(self.client_events().contains(&Event::Connected));
        assert!(self.server_events().contains(&Event::Connected));
    }
}

impl<C: Side, S: Side> Pair<C, S> {
    /// Joins `client` and `server`, created at `now`; deliveries whole and
    /// unobserved until [`Pair::split`] and [`Pair::observed`] say
    /// otherwise.
    pub fn join(client: C, server: S, now: Instant) -> Self {
        Pair {
            client,
            server,
            now,
            observer: (),
            rng: None,
            in_flight: [BytesMut::new(), BytesMut::new()],
            inbox: [BytesMut::new(), BytesMut::new()],
            eof: [false, false],
            written: [0, 0],
        }
    }
}

impl<C: Side, S: Side, O: Observer> Pair<C, S, O> {
    /// Delivers in pieces of random size (1 to 4096 bytes), drawn from
    /// `seed`.
    pub fn split(mut self, seed: u64) -> Self {
        self.rng = Some(Rng::new(seed));
        self
    }

    /// Puts `observer` on the wire; best before any byte moved.
    pub fn observed<P: Observer>(self, observer: P) -> Pair<C, S, P> {
        Pair {
            client: self.client,
            server: self.server,
            now: self.now,
            observer,
            rng: self.rng,
            in_flight: self.in_flight,
            inbox: self.inbox,
            eof: self.eof,
            written: self.written,
        }
    }

    /// The two sides back, e.g. to read an application's results.
    pub fn into_sides(self) -> (C, S) {
        (self.client, self.server)
    }

    /// One round: each side's output, client first, taken and delivered to
    /// the other; a transport closed under a side that is over; the timers
    /// due at `now` fired. True if anything moved.
    pub fn step(&mut self) -> bool {
        let mut moved = false;
        for dir in Dir::BOTH {
            moved |= self.collect(dir);
            moved |= self.deliver(dir, usize::MAX);
        }
        moved |= self.close_transports();
        let now = self.now;
        self.client.fire_timers(now);
        self.server.fire_timers(now);
        moved
    }

    /// Steps until a round moves nothing; true if anything moved. Panics
    /// after a bound of rounds: a pair that never settles is a bug (two
    /// sides answering each other forever).
    pub fn drive(&mut self) -> bool {
        let mut moved = false;
        for _ in 0..DRIVE_BOUND {
            if !self.step() {
                return moved;
            }
            moved = true;
        }
        panic!("the pair did not settle in {DRIVE_BOUND} rounds");
    }

    /// Advances the clock by `by` and fires the timers now due.
    pub fn advance(&mut self, by: Duration) {
        self.now += by;
        self.fire_timers();
    }

    /// Moves the clock to the earliest deadline of either side (never
    /// back) and fires what is due; `None`, with the clock unmoved, when
    /// neither side has a deadline.
    pub fn jump(&mut self) -> Option<Instant> {
        let next = self.next_timeout()?;
        self.now = self.now.max(next);
        self.fire_timers();
        Some(next)
    }

    /// The earliest deadline of either side.
    pub fn next_timeout(&self) -> Option<Instant> {
        match (self.client.poll_timeout(), self.server.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Takes everything the sender of `dir` has to write and puts it in
    /// flight; true if there was any.
    pub fn collect(&mut self, dir: Dir) -> bool {
        let i = dir.index();
        let now = self.now;
        let mut moved = false;
        loop {
            let chunk = match dir {
                Dir::ClientToServer => self.client.poll_transmit(now),
                Dir::ServerToClient => self.server.poll_transmit(now),
            };
            let Some(chunk) = chunk else { break };
            self.observer.written(dir, &chunk);
            self.written[i] += chunk.len() as u64;
            self.in_flight[i].extend_from_slice(&chunk);
            moved = true;
        }
        moved
    }

    /// Delivers up to `limit` of the bytes in flight on `dir` to its
    /// receiver (in random pieces if split); true if any moved.
    pub fn deliver(&mut self, dir: Dir, limit: usize) -> bool {
        let i = dir.index();
        let mut left = limit.min(self.in_flight[i].len());
        if left == 0 {
            return false;
        }
        while left > 0 {
            let n = match &mut self.rng {
                Some(rng) => 1 + rng.below(left.min(4096)),
                None => left,
            };
            left -= n;
            if self.inbox[i].is_empty() && self.in_flight[i].len() == n {
                // All of it, and nothing unread before it: hand the buffer
                // over instead of copying it.
                std::mem::swap(&mut self.inbox[i], &mut self.in_flight[i]);
            } else {
                let piece = self.in_flight[i].split_to(n);
                self.inbox[i].extend_from_slice(&piece);
            }
            let (inbox, now) = (&mut self.inbox[i], self.now);
            let start = inbox.len() - n;
            self.observer.read(dir, &inbox[start..]);
            match dir {
                Dir::ClientToServer => self.server.handle_input(now, inbox),
                Dir::ServerToClient => self.client.handle_input(now, inbox),
            }
        }
        true
    }

    /// Bytes written on `dir` and not yet delivered.
    pub fn in_flight(&self, dir: Dir) -> usize {
        self.in_flight[dir.index()].len()
    }

    /// Bytes the sender of `dir` has written in all.
    pub fn written(&self, dir: Dir) -> u64 {
        self.written[dir.index()]
    }

    /// Closes the transport of a side that is over and whose output is all
    /// delivered: its peer reads end of stream. True if that happened now.
    fn close_transports(&mut self) -> bool {
        let now = self.now;
        let mut moved = false;
        for dir in Dir::BOTH {
            let i = dir.index();
            if self.eof[i] || !self.in_flight[i].is_empty() {
                continue;
            }
            let over = match dir {
                Dir::ClientToServer => self.client.is_closed(),
                Dir::ServerToClient => self.server.is_closed(),
            };
            if over {
                self.eof[i] = true;
                match dir {
                    Dir::ClientToServer => self.server.handle_eof(now),
                    Dir::ServerToClient => self.client.handle_eof(now),
                }
                moved = true;
            }
        }
        moved
    }

    fn fire_timers(&mut self) {
        let now = self.now;
        self.client.fire_timers(now);
        self.server.fire_timers(now);
    }
}
