//! The per-connection loop every runtime would otherwise write again,
//! without the runtime: an [`Endpoint`] with its read buffer, its outbox,
//! its one deadline and its shutdown. A runtime supplies the socket calls
//! and one timer, and runs:
//!
//! 1. [`Driver::poll_output`]: takes the core's output (up to the bound).
//! 2. [`Driver::state`]: at [`State::Closed`], close the transport (FIN,
//!    then read until the peer closes too, briefly: closing with unread
//!    input makes the kernel send RST, which can destroy our last bytes).
//! 3. Write [`Driver::write_slices`] (one vectored write) and report it
//!    with [`Driver::did_write`]; read into [`Driver::read_buf`] while
//!    [`Driver::wants_read`] and report it with [`Driver::did_read`] (0 is
//!    end of stream), or [`Driver::read_pending`] when the read would
//!    block (the buffer goes back to its pool). A readiness runtime (mio, smol's `Async`) can call
//!    [`Driver::write_to`] and [`Driver::read_from`] instead.
//! 4. Sleep until the socket is ready or [`Driver::deadline`], then
//!    [`Driver::handle_timeout`]; on a shutdown signal, [`Driver::shutdown`].
//!
//! Reading goes on while a write is pending, so two endpoints that both
//! write at once cannot deadlock on full socket buffers; it pauses while
//! the output backlog is over its bound, or while the core holds back
//! pipelined HTTP/1.1 input, so a peer that does not read our answers meets
//! TCP backpressure instead of growing our memory. A backlog whose writes
//! stand still for a while no longer pauses it (see [`WriteStall`]): a
//! peer that reads only once its own write is through would wait on us
//! for ever.

use std::borrow::BorrowMut;
use std::io::{self, IoSlice, Read, Write};
use std::marker::PhantomData;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use bytes::buf::Limit;

use super::stall::WriteStall;
use super::{DriverOptions, Ending, FinalFlush, Outbox, ReadBuf};
use crate::{Application, Endpoint, TransportFailure};

/// How long a connection that has been busy stays idle before its queues
/// give back their capacity. A busy connection is idle for a moment
/// between every two bursts of a load generator; giving back then would
/// grow the same maps and queues again on the next burst, and lose the
/// HPACK memos with them.
const TRIM_DELAY: Duration = Duration::from_millis(100);

/// Until a connection has read and written this many bytes since it
/// opened or last stayed idle for [`TRIM_DELAY`], it gives back at once
/// whenever it goes idle: it did too little for regrowing to cost much,
/// and a burst of new connections (a handshake each, or one request) then
/// reuses the memory each gives back instead of all of them holding it for
/// [`TRIM_DELAY`]. The count is not restarted by such a quick trim: a
/// keep-alive connection with one request at a time (`wrk`, `h2load -m1`)
/// is idle after every answer, and would give back and regrow its queues
/// and write buffer for each request.
const QUICK_TRIM_BYTES: usize = 16 * 1024;

/// Where a driven connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Serving.
    Running,
    /// [`Driver::shutdown`] was called: the core is going away gracefully.
    Draining,
    /// The core is closed; its last bytes are still being written.
    Flushing,
    /// Over: close the transport.
    Closed(Ending),
}

/// An [`Endpoint`] with the buffers and the deadline its loop needs. It
/// owns the endpoint ([`Driver::new`]) or borrows it ([`Driver::borrowing`],
/// for a caller that reads the application afterwards).
#[derive(Debug)]
pub struct Driver<A, E = Endpoint<A>> {
    endpoint: E,
    options: DriverOptions,
    input: ReadBuf,
    out: Outbox,
    flush: FinalFlush,
    /// Output the transport holds beyond the outbox (TLS records, a
    /// staging buffer), counted against the bound.
    held: usize,
    /// The core had no more output when last asked: the bound held none
    /// back (see [`Driver::settled`]).
    core_dry: bool,
    stall: WriteStall,
    peer_closed: bool,
    shutdown: bool,
    flush_expired: bool,
    /// Idle since a read found nothing: when the endpoint and the outbox
    /// give back what they grew to ([`TRIM_DELAY`] later).
    trim_at: Option<Instant>,
    /// Bytes read and written since the connection opened or was last
    /// idle for [`TRIM_DELAY`].
    moved: usize,
    /// The endpoint and the outbox gave back their capacity, and no byte
    /// moved since.
    trimmed: bool,
    app: PhantomData<fn(A)>,
}

impl<A: Application> Driver<A> {
    pub fn new(endpoint: Endpoint<A>, options: DriverOptions) -> Self {
        Driver::wrapping(endpoint, options)
    }
}

impl<'a, A: Application> Driver<A, &'a mut Endpoint<A>> {
    pub fn borrowing(endpoint: &'a mut Endpoint<A>, options: DriverOptions) -> Self {
        Driver::wrapping(endpoint, options)
    }
}

impl<A: Application, E: BorrowMut<Endpoint<A>>> Driver<A, E> {
    fn wrapping(endpoint: E, options: DriverOptions) -> Self {
        Driver {
            endpoint,
            options,
            input: ReadBuf::default(),
            out: Outbox::default(),
            flush: FinalFlush::default(),
            held: 0,
            core_dry: false,
            stall: WriteStall::default(),
            peer_closed: false,
            shutdown: false,
            flush_expired: false,
            trim_at: None,
            moved: 0,
            trimmed: false,
            app: PhantomData,
        }
    }

    /// Takes the core's output into the outbox until it has none or the
    /// bound is reached.
    pub fn poll_output(&mut self, now: Instant) {
        self.poll_output_holding(now, 0);
    }

    /// [`Driver::poll_output`] for a transport that holds `held` bytes of
    /// earlier output itself (encrypted records not yet sent).
    pub fn poll_output_holding(&mut self, now: Instant, held: usize) {
        self.held = held;
        let limit = self.options.max_output_backlog.saturating_sub(held);
        self.core_dry = self.out.fill(self.endpoint.borrow_mut(), now, limit);
        let full = self.backlog_full();
        self.stall.backlog(now, full);
    }

    /// The output taken from the core and not yet written is at its bound.
    fn backlog_full(&self) -> bool {
        self.out.len() + self.held >= self.options.max_output_backlog
    }

    /// Whether a loop that has written everything may wait without another
    /// turn first: the core had no more output when last asked (the bound
    /// held none back) and the connection runs, so no flush or close waits
    /// on the write. A write takes nothing from the core and moves none of
    /// its timers, so that turn would only find nothing to do; an HTTP/1.1
    /// connection saves one of its three turns a request.
    pub fn settled(&self) -> bool {
        self.core_dry && self.state() == State::Running
    }

    pub fn state(&self) -> State {
        if self.flush_expired {
            State::Closed(Ending::FlushExpired)
        } else if !self.endpoint().is_closed() {
            if self.shutdown {
                State::Draining
            } else {
                State::Running
            }
        } else if !self.out.is_empty() {
            State::Flushing
        } else if self.peer_closed {
            State::Closed(Ending::PeerClosed)
        } else {
            State::Closed(Ending::Finished)
        }
    }

    /// Whether the peer may still send once the core is closed: the host
    /// then half-closes the transport and reads until the peer closes too,
    /// for a while (closing with input still arriving makes the kernel
    /// send a reset, which can destroy the last bytes before the peer
    /// reads them: RFC 9112 §9.6). Not so once the peer closed its side, or
    /// said it would send nothing more
    /// ([`Connection::peer_done_sending`](crate::Connection::peer_done_sending))
    /// and left nothing unread here: the transport then closes at once, as
    /// a connection per request wants (the half-close and the wait cost
    /// it 9% of the server's CPU on tokio, 16% on glommio). Over TLS
    /// (`secure`) only the peer's end of stream counts: below HTTP its
    /// side still sends records, its close_notify answering ours first.
    pub fn peer_may_send(&self, secure: bool) -> bool {
        !self.peer_closed
            && (secure
                || self.input.pending() > 0
                || !self.endpoint().connection().peer_done_sending())
    }

    /// The drive loop ended (the core is closed and its output left):
    /// says whether to linger for the peer's end ([`Driver::peer_may_send`])
    /// and gives the read buffer back to the thread's pool, dropping any
    /// input the core will never take. A connection lingering for its
    /// peer's close holds no buffer: 2,000 client connections closing at
    /// once held 64 KiB each on glommio, whose reads use initialized room.
    pub fn finish(&mut self, secure: bool) -> bool {
        let linger = self.peer_may_send(secure);
        // Dropped, the buffer goes back with its room still initialized
        // (cleared, the next connection's first read would zero 64 KiB).
        drop(std::mem::take(&mut self.input));
        linger
    }

    /// Whether to read now: the peer has not closed, the core takes input,
    /// and our output backlog is under its bound, or its writes stood
    /// still for 10 ms (a peer that reads only once its own write is
    /// through would otherwise wait on us for ever).
    pub fn wants_read(&self) -> bool {
        !self.peer_closed
            && !self.endpoint().is_closed()
            && (!self.backlog_full() || self.stall.reading_on())
            && self.endpoint().connection().wants_input()
    }

    /// Room to read into; only what [`Driver::did_read`] reports counts,
    /// so a cancelled or short read leaves nothing behind.
    pub fn read_buf(&mut self) -> &mut [u8] {
        self.input.room()
    }

    /// Room to read into as spare capacity, for a runtime that reads into
    /// uninitialized memory (see [`ReadBuf::spare`]); [`Driver::did_read`]
    /// reports the bytes the read appended.
    pub fn read_spare(&mut self) -> Limit<&mut BytesMut> {
        self.input.spare()
    }

    /// `n` bytes were read into [`Driver::read_buf`]; 0 is end of stream.
    pub fn did_read(&mut self, now: Instant, n: usize) {
        if n == 0 {
            self.trim_at = None;
            self.handle_eof(now);
        } else {
            self.input.commit(n);
            self.did_fill(now, n);
        }
    }

    /// `n` bytes went into the read buffer another way than
    /// [`Driver::read_buf`] (a transport that reads into
    /// [`Driver::buffers_mut`] itself, or plaintext out of a TLS session):
    /// hands what it holds to the core. Like a read, the bytes count
    /// towards the delayed trim (see [`Driver::read_pending`]).
    pub fn did_fill(&mut self, now: Instant, n: usize) {
        self.trim_at = None;
        self.count_moved(n);
        let endpoint: &mut Endpoint<A> = self.endpoint.borrow_mut();
        let mut events = 0;
        self.input
            .take_input(|bytes| events = endpoint.handle_input(now, bytes));
        self.input.pace(events);
    }

    /// A read found nothing to read (it would block, or is pending): the
    /// connection is quiet, so its read buffer goes back to the thread's
    /// pool unless it holds partial input; with nothing under way, the
    /// endpoint and the outbox give back what their queues grew to
    /// ([`Endpoint::trim`]): at once after a little traffic (under 16 KiB
    /// moved since it opened or was last idle for 100 ms), else if it
    /// stays idle for 100 ms (the [`Driver::deadline`] includes it). An
    /// idle connection then costs its state, not its buffers. Returns the
    /// deadline this set, if it set a new one: a loop whose timer is armed
    /// for later (or not at all) must take it.
    pub fn read_pending(&mut self, now: Instant) -> Option<Instant> {
        self.input.release();
        if !self.is_idle() {
            self.trim_at = None;
            return None;
        }
        if self.moved < QUICK_TRIM_BYTES {
            self.trim();
            return None;
        }
        if self.trim_at.is_some() {
            return None;
        }
        let at = now + TRIM_DELAY;
        self.trim_at = Some(at);
        Some(at)
    }

    /// `n` bytes went in or out: they count towards the busy rule, and
    /// what was given back may be in use again.
    fn count_moved(&mut self, n: usize) {
        self.moved = self.moved.saturating_add(n);
        self.trimmed &= n == 0;
    }

    /// Gives back what the queues grew to, if the connection is still idle;
    /// returns whether it did.
    fn trim(&mut self) -> bool {
        self.trim_at = None;
        if !self.is_idle() {
            return false;
        }
        self.out.trim();
        let endpoint: &mut Endpoint<A> = self.endpoint.borrow_mut();
        endpoint.trim();
        self.trimmed = true;
        true
    }

    /// Nothing is under way on the connection
    /// ([`Connection::is_idle`](crate::Connection::is_idle)).
    pub fn is_idle(&self) -> bool {
        self.endpoint.borrow().connection().is_idle()
    }

    /// The endpoint and the outbox gave back their capacity (see
    /// [`Driver::read_pending`]) and the connection is still idle: when a
    /// transport may give back buffers of its own as well.
    pub fn is_trimmed(&self) -> bool {
        self.trimmed && self.is_idle()
    }

    /// The peer closed its side.
    pub fn handle_eof(&mut self, now: Instant) {
        if !self.peer_closed {
            self.peer_closed = true;
            self.endpoint_mut().handle_eof(now);
        }
    }

    /// Whether output waits in the outbox.
    pub fn wants_write(&self) -> bool {
        !self.out.is_empty()
    }

    /// Points `iov` at the output, as many chunks as fit; returns how many.
    pub fn write_slices<'a>(&'a self, iov: &mut [IoSlice<'a>]) -> usize {
        self.out.slices(iov)
    }

    /// The outbox itself, for a transport that stages or encrypts the
    /// output; report what it moved on with [`Driver::did_send`].
    pub fn outbox_mut(&mut self) -> &mut Outbox {
        &mut self.out
    }

    /// The outbox and the read buffer at once, for a transport whose one
    /// poll both writes and reads.
    pub fn buffers_mut(&mut self) -> (&mut Outbox, &mut ReadBuf) {
        (&mut self.out, &mut self.input)
    }

    /// `n` bytes of [`Driver::write_slices`] were written.
    pub fn did_write(&mut self, now: Instant, n: usize) {
        self.out.advance(n);
        self.did_send(now, n);
    }

    /// A transport that takes its output from [`Driver::outbox_mut`] (or
    /// [`Driver::buffers_mut`]) itself wrote `n` bytes of it (staged or
    /// encrypted) to the socket: they count towards the delayed trim, and a
    /// final flush that moves is not given up on.
    pub fn did_send(&mut self, now: Instant, n: usize) {
        self.count_moved(n);
        self.flush.wrote(now);
        if n > 0 {
            self.stall.wrote();
        }
    }

    /// The one deadline to sleep to: the core's, the application's, the
    /// delayed trim's (see [`Driver::read_pending`]), a full backlog's
    /// check for writes that stand still (see [`Driver::wants_read`]), and
    /// once the core's session is over, the final flush's.
    pub fn deadline(&mut self, now: Instant) -> Option<Instant> {
        let deadline = self.flush.deadline(self.endpoint.borrow(), now);
        [deadline, self.trim_at, self.stall.deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// The deadline came: fires what is due, or gives up on a final flush
    /// that stopped moving ([`Ending::FlushExpired`]).
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.trim_at.is_some_and(|t| now >= t) && self.trim() {
            // Idle for the whole delay: it starts over as a new connection.
            self.moved = 0;
        }
        let full = self.backlog_full();
        self.stall.handle_timeout(now, full);
        if self.flush.expired(now) {
            self.flush_expired = true;
        } else {
            self.endpoint_mut().handle_timeout(now);
        }
    }

    /// Begins a graceful shutdown (once; later calls do nothing).
    pub fn shutdown(&mut self, now: Instant) {
        if !self.shutdown {
            self.shutdown = true;
            self.endpoint_mut().go_away(now);
        }
    }

    /// The transport failed: the core and its application hear it as the
    /// end of the connection, with the TLS alert the peer sent if that is
    /// what it was.
    pub fn transport_error(&mut self, now: Instant, error: &io::Error) {
        let failure = TransportFailure {
            detail: error.to_string(),
            alert: received_alert(error),
        };
        self.endpoint_mut().handle_transport_error(now, failure);
    }

    /// Writes from the outbox to a non-blocking `w` until it is empty or
    /// `w` would block, taking more of the core's output as room frees.
    pub fn write_to(&mut self, now: Instant, w: &mut impl Write) -> io::Result<()> {
        const MAX_IOV: usize = 64;
        loop {
            self.poll_output(now);
            if self.out.is_empty() {
                return Ok(());
            }
            let mut iov = [IoSlice::new(&[]); MAX_IOV];
            let count = self.out.slices(&mut iov);
            match w.write_vectored(&iov[..count]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.did_write(now, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads from a non-blocking `r` while [`Driver::wants_read`], until it
    /// would block or ends; whether anything (or the end) was read.
    pub fn read_from(&mut self, now: Instant, r: &mut impl Read) -> io::Result<bool> {
        let mut progress = false;
        while self.wants_read() {
            match r.read(self.input.room()) {
                Ok(n) => {
                    self.did_read(now, n);
                    progress = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.read_pending(now);
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(progress)
    }

    /// One turn for a readiness runtime (mio, smol's `Async`): fires the
    /// deadline if it is due, then writes and reads a non-blocking `io`
    /// until it would block both ways or the core waits for time. Writing
    /// can free the core to take input it held back (HTTP/1.1 pipelining)
    /// and reading makes answers, so it goes round until a read finds
    /// nothing; an edge-triggered poller then wakes it again. A transport
    /// error is handed to the core too. Gives the state after the turn:
    /// on [`State::Closed`] (or an error) the caller closes `io`.
    pub fn pump<S: Read + Write>(&mut self, now: Instant, io: &mut S) -> io::Result<State> {
        if self.deadline(now).is_some_and(|due| due <= now) {
            self.handle_timeout(now);
        }
        let turn = loop {
            if let Err(e) = self.write_to(now, io) {
                break Err(e);
            }
            match self.read_from(now, io) {
                Ok(true) => {}
                Ok(false) => break self.write_to(now, io),
                Err(e) => break Err(e),
            }
        };
        if let Err(e) = &turn {
            self.transport_error(now, e);
        }
        turn.map(|()| self.state())
    }

    pub fn endpoint(&self) -> &Endpoint<A> {
        self.endpoint.borrow()
    }

    pub fn endpoint_mut(&mut self) -> &mut Endpoint<A> {
        self.endpoint.borrow_mut()
    }
}

/// The code of the TLS alert the peer sent, when `error` is one: the TLS
/// session hands rustls's error on inside the I/O error it returns.
#[cfg(feature = "tls")]
fn received_alert(error: &io::Error) -> Option<u8> {
    match error.get_ref()?.downcast_ref::<rustls::Error>()? {
        rustls::Error::AlertReceived(alert) => Some(u8::from(*alert)),
        _ => None,
    }
}

#[cfg(not(feature = "tls"))]
fn received_alert(_: &io::Error) -> Option<u8> {
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The alert the peer sent is told by rustls's error inside the I/O
    /// error, not by its words; any other failure has none.
    #[cfg(feature = "tls")]
    #[test]
    fn a_received_alert_is_told_apart() {
        use rustls::AlertDescription as A;
        for alert in [A::CertificateRequired, A::BadCertificate, A::from(200)] {
            let error = io::Error::new(
                io::ErrorKind::InvalidData,
                rustls::Error::AlertReceived(alert),
            );
            assert_eq!(received_alert(&error), Some(u8::from(alert)));
        }
        let sent = io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::Expired),
        );
        assert_eq!(received_alert(&sent), None);
        assert_eq!(received_alert(&io::ErrorKind::ConnectionReset.into()), None);
    }
    use crate::handler::{HandlerApp, Reply, Request};
    use crate::{Config, Connection, Protocol};
    use std::time::Duration;

    type Hello = HandlerApp<fn(Request) -> Reply>;

    fn driver(now: Instant) -> Driver<Hello> {
        let conn = Connection::server_for(Protocol::Http1, Config::default(), now).unwrap();
        let app: Hello = HandlerApp::new(|_| Reply::new(200, "hi"));
        Driver::new(Endpoint::new(conn, app, now), DriverOptions::default())
    }

    /// A driver that has answered one request and written the answer.
    fn answered_once(now: Instant) -> Driver<Hello> {
        let mut d = driver(now);
        read(&mut d, now, b"GET / HTTP/1.1\r\nhost: a\r\n\r\n");
        let _ = written(&mut d, now);
        d
    }

    fn read(d: &mut Driver<Hello>, now: Instant, bytes: &[u8]) {
        d.read_buf()[..bytes.len()].copy_from_slice(bytes);
        d.did_read(now, bytes.len());
    }

    fn written(d: &mut Driver<Hello>, now: Instant) -> Vec<u8> {
        d.poll_output(now);
        let mut iov = [IoSlice::new(&[]); 8];
        let n = d.write_slices(&mut iov);
        let bytes: Vec<u8> = iov[..n].iter().flat_map(|s| s.iter().copied()).collect();
        d.did_write(now, bytes.len());
        bytes
    }

    /// A read that brings more than a batch of events narrows the reads
    /// after it to 32 KiB (see `ReadBuf::pace`); one that brings a few
    /// widens them again.
    #[test]
    fn reads_narrow_after_a_read_of_many_requests() {
        let now = Instant::now();
        let conn = Connection::server(Config::default(), now).unwrap();
        let app: Hello = HandlerApp::new(|_| Reply::new(200, "hi"));
        let mut d = Driver::new(Endpoint::new(conn, app, now), DriverOptions::default());
        let mut client = Connection::client(Config::default(), now).unwrap();
        let mut requests = |d: &mut Driver<Hello>, n: usize| {
            for _ in 0..n {
                let head = crate::RequestHead::new("GET", "http", "sim", "/");
                client.send_request(head, true).unwrap();
            }
            let mut wire = Vec::new();
            while let Some(chunk) = client.poll_transmit(now) {
                wire.extend_from_slice(&chunk);
            }
            read(d, now, &wire);
            let _ = written(d, now);
        };
        assert!(d.read_buf().len() > 32 * 1024);
        requests(&mut d, 80);
        assert_eq!(d.read_buf().len(), 32 * 1024);
        requests(&mut d, 10);
        assert!(d.read_buf().len() > 32 * 1024);
    }

    /// A read buffer handed out and then not used (a cancelled read), and a
    /// request split over two reads: the core sees exactly the bytes read.
    #[test]
    fn only_committed_bytes_reach_the_core() {
        let now = Instant::now();
        let mut d = driver(now);
        let _ = d.read_buf();
        read(&mut d, now, b"GET / HTTP/1.1\r\nho");
        read(&mut d, now, b"st: a\r\n\r\n");
        let out = written(&mut d, now);
        assert!(out.starts_with(b"HTTP/1.1 200"), "{out:?}");
        assert_eq!(d.state(), State::Running);
    }

    /// Once a request is answered and the next read would block, the
    /// connection holds no read buffer (an idle connection costs its
    /// state, not 64 KiB); the next request reads as before.
    #[test]
    fn a_quiet_connection_gives_its_read_buffer_back() {
        let now = Instant::now();
        let mut d = answered_once(now);
        d.read_pending(now);
        assert!(!d.input.holds_buffer());
        // A request cut short keeps its buffer through a quiet spell.
        read(&mut d, now, b"GET / HTTP/1.1\r\nho");
        d.read_pending(now);
        assert!(d.input.holds_buffer());
        read(&mut d, now, b"st: a\r\n\r\n");
        assert!(written(&mut d, now).starts_with(b"HTTP/1.1 200"));
    }

    /// An idle connection gives its queues back once it has stayed idle
    /// for `TRIM_DELAY` (the deadline says when); input before then calls
    /// it off, so a busy connection does not regrow them every burst.
    #[test]
    fn an_idle_connection_trims_after_a_delay() {
        let now = Instant::now();
        let mut d = answered_once(now);
        // After a little traffic, at once.
        assert!(d.read_pending(now).is_none());
        assert_eq!(d.trim_at, None);
        assert!(d.is_trimmed());
        // After a busy spell, later.
        d.moved = QUICK_TRIM_BYTES;
        assert!(d.read_pending(now).is_some(), "a new deadline");
        assert!(d.read_pending(now).is_none(), "the same one");
        let at = now + TRIM_DELAY;
        assert!(d.deadline(now).is_some_and(|t| t <= at));
        // More input: the trim is called off until the next quiet spell.
        read(&mut d, now, b"GET / HTTP/1.1\r\nhost: a\r\n\r\n");
        assert_eq!(d.trim_at, None);
        let _ = written(&mut d, now);
        assert!(d.read_pending(now).is_some());
        assert!(d.moved >= QUICK_TRIM_BYTES);
        d.handle_timeout(at);
        assert_eq!((d.trim_at, d.moved), (None, 0), "trimmed at the deadline");
        assert!(d.deadline(at).is_none_or(|t| t > at));
    }

    /// A keep-alive connection answering one request at a time is idle
    /// after every answer: it gives back at once only while it has moved
    /// little in all, then waits for a quiet spell like any busy one, so
    /// it does not regrow its queues for every request.
    #[test]
    fn a_steady_keep_alive_connection_stops_trimming_at_once() {
        let now = Instant::now();
        let mut d = driver(now);
        let mut quick = 0;
        while quick < 1000 {
            read(&mut d, now, b"GET / HTTP/1.1\r\nhost: a\r\n\r\n");
            assert!(written(&mut d, now).starts_with(b"HTTP/1.1 200"));
            if d.moved >= QUICK_TRIM_BYTES {
                break;
            }
            assert!(d.read_pending(now).is_none(), "gives back at once");
            assert!(d.is_trimmed());
            quick += 1;
        }
        assert!((100..1000).contains(&quick), "{quick} quick trims");
        assert!(d.read_pending(now).is_some(), "a delayed trim instead");
        assert!(!d.is_trimmed());
        // A whole delay idle: trimmed, and counted as new again.
        d.handle_timeout(now + TRIM_DELAY);
        assert!(d.is_trimmed());
        assert_eq!(d.moved, 0);
    }

    /// A written answer settles the connection only when the core had
    /// nothing more: output the bound held back, or a close under way,
    /// still needs a turn after the write.
    #[test]
    fn settled_only_when_the_core_ran_dry_and_the_connection_runs() {
        let now = Instant::now();
        let mut d = driver(now);
        assert!(!d.settled(), "the core was not asked yet");
        read(&mut d, now, b"GET / HTTP/1.1\r\nhost: a\r\n\r\n");
        assert!(written(&mut d, now).starts_with(b"HTTP/1.1 200"));
        assert!(d.settled());

        // Two answers behind a bound that takes one chunk at a time.
        let conn = Connection::server_for(Protocol::Http1, Config::default(), now).unwrap();
        let app: Hello = HandlerApp::new(|_| Reply::new(200, "hi"));
        let options = DriverOptions {
            max_output_backlog: 1,
        };
        let mut d = Driver::new(Endpoint::new(conn, app, now), options);
        read(
            &mut d,
            now,
            b"GET / HTTP/1.1\r\nhost: a\r\n\r\nGET / HTTP/1.1\r\nhost: a\r\n\r\n",
        );
        let _ = written(&mut d, now);
        assert!(!d.settled(), "the bound held output back");
        let mut rest = Vec::new();
        for _ in 0..100 {
            if d.settled() {
                break;
            }
            rest.extend(written(&mut d, now));
        }
        assert!(d.settled());
        assert!(
            rest.windows(12).any(|w| w == b"HTTP/1.1 200"),
            "the second answer"
        );

        let mut d = answered_once(now);
        assert!(d.settled());
        d.shutdown(now);
        let _ = written(&mut d, now);
        assert!(!d.settled(), "closing");
    }

    /// A full backlog stops the reads; writes that stand still for
    /// [`STALL`] start them again (a peer that reads only once its own
    /// write is through), until the backlog is under its bound; a backlog
    /// that moves keeps them stopped.
    #[test]
    fn reads_go_on_once_writes_stand_still_on_a_full_backlog() {
        use super::super::stall::STALL;
        let now = Instant::now();
        let conn = Connection::server_for(Protocol::Http1, Config::default(), now).unwrap();
        let app: Hello = HandlerApp::new(|_| Reply::new(200, vec![b'z'; 4096]));
        let options = DriverOptions {
            max_output_backlog: 1024,
        };
        let mut d = Driver::new(Endpoint::new(conn, app, now), options);
        read(&mut d, now, b"GET / HTTP/1.1\r\nhost: a\r\n\r\n");
        d.poll_output(now);
        assert!(!d.wants_read(), "the backlog is full");
        let check = d.deadline(now).unwrap();
        assert_eq!(check, now + STALL);

        // A write moved: the backlog is still full, and watched again.
        d.did_write(now, 100);
        d.poll_output(now);
        d.handle_timeout(check);
        assert!(!d.wants_read());
        let check = d.deadline(check).unwrap();
        assert_eq!(check, now + 2 * STALL);

        // Nothing written for a whole STALL: reads go on.
        d.poll_output(check);
        d.handle_timeout(check);
        assert!(d.wants_read(), "writes stood still");
        d.poll_output(check);
        assert!(d.wants_read(), "until the backlog drains");

        // Once under its bound, a full backlog stops the reads again.
        while !written(&mut d, check).is_empty() {}
        assert!(d.wants_read());
        read(&mut d, check, b"GET / HTTP/1.1\r\nhost: a\r\n\r\n");
        d.poll_output(check);
        assert!(!d.wants_read());
    }

    /// A partial write leaves the rest at the front of the next slices.
    #[test]
    fn a_partial_write_resumes_where_it_stopped() {
        let now = Instant::now();
        let mut d = driver(now);
        read(&mut d, now, b"GET / HTTP/1.1\r\nhost: a\r\n\r\n");
        d.poll_output(now);
        let mut iov = [IoSlice::new(&[]); 8];
        let n = d.write_slices(&mut iov);
        let all: Vec<u8> = iov[..n].iter().flat_map(|s| s.iter().copied()).collect();
        d.did_write(now, 5);
        let rest = written(&mut d, now);
        assert_eq!(&all[5..], &rest[..]);
        assert!(!d.wants_write());
    }

    /// shutdown → Draining (HTTP/2: GOAWAY, then a round trip the peer
    /// never completes), the core's timers close it → Flushing, its last
    /// bytes written → Closed(Finished); end of stream → Closed(PeerClosed).
    #[test]
    fn shutdown_and_end_of_stream_walk_the_states() {
        let mut now = Instant::now();
        let conn = Connection::server_for(Protocol::Http2, Config::default(), now).unwrap();
        let app: Hello = HandlerApp::new(|_| Reply::new(200, "hi"));
        let mut d = Driver::new(Endpoint::new(conn, app, now), DriverOptions::default());
        read(&mut d, now, crate::frame::PREFACE);
        read(&mut d, now, &[0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
        d.shutdown(now);
        assert_eq!(d.state(), State::Draining);
        let mut turns = 0;
        while d.state() == State::Draining {
            let _ = written(&mut d, now);
            now = d.deadline(now).unwrap();
            d.handle_timeout(now);
            turns += 1;
            assert!(turns < 10, "the core never closed");
        }
        d.poll_output(now);
        assert_eq!(d.state(), State::Flushing);
        let _ = written(&mut d, now);
        assert_eq!(d.state(), State::Closed(Ending::Finished));

        let mut d = driver(now);
        d.did_read(now, 0);
        d.poll_output(now);
        assert_eq!(d.state(), State::Closed(Ending::PeerClosed));
    }

    /// The transport closes at once only when the peer can send nothing
    /// more: it asked to close and that request was read whole with
    /// nothing after it (not over TLS, whose records go on below HTTP),
    /// or it closed its side. A keep-alive connection we end, or bytes the
    /// peer sent past its last request, keep the half-close and the wait
    /// (RFC 9112 §9.6).
    #[test]
    fn the_transport_closes_at_once_only_when_the_peer_is_done() {
        let now = Instant::now();
        let closing = b"GET / HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n";
        let mut d = driver(now);
        read(&mut d, now, closing);
        let _ = written(&mut d, now);
        assert_eq!(d.state(), State::Closed(Ending::Finished));
        assert!(!d.peer_may_send(false));
        assert!(d.peer_may_send(true), "over TLS its close_notify may come");

        let mut d = driver(now);
        read(&mut d, now, &[&closing[..], b"GET /more"].concat());
        let _ = written(&mut d, now);
        assert_eq!(d.state(), State::Closed(Ending::Finished));
        assert!(d.peer_may_send(false), "bytes past the last request");

        let mut d = answered_once(now);
        d.shutdown(now);
        let _ = written(&mut d, now);
        assert_eq!(d.state(), State::Closed(Ending::Finished));
        assert!(d.peer_may_send(false), "a keep-alive client may send");

        let mut d = answered_once(now);
        d.did_read(now, 0);
        d.poll_output(now);
        assert_eq!(d.state(), State::Closed(Ending::PeerClosed));
        assert!(!d.peer_may_send(false) && !d.peer_may_send(true));
    }

    /// A connection that ends gives its read buffer back before it
    /// lingers for the peer's close, bytes past the last request and all:
    /// the core takes no more input, and the linger drops what comes.
    #[test]
    fn a_finished_connection_lingers_without_its_read_buffer() {
        let now = Instant::now();
        let closing = b"GET / HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n";
        let mut d = driver(now);
        read(&mut d, now, &[&closing[..], b"GET /more"].concat());
        let _ = written(&mut d, now);
        assert_eq!(d.state(), State::Closed(Ending::Finished));
        assert!(d.input.holds_buffer());
        assert!(d.finish(false), "bytes past the last request: it lingers");
        assert!(!d.input.holds_buffer());
        assert_eq!(d.input.pending(), 0);
    }

    /// Once the core is closed, output that stops leaving is given up at
    /// the one deadline (virtual clock).
    #[test]
    fn a_stalled_final_flush_ends_at_the_deadline() {
        let now = Instant::now();
        let mut d = driver(now);
        read(
            &mut d,
            now,
            b"GET / HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n",
        );
        d.poll_output(now);
        assert_eq!(d.state(), State::Flushing);
        let deadline = d.deadline(now).unwrap();
        assert!(deadline > now && deadline <= now + Duration::from_secs(1));
        d.handle_timeout(deadline);
        assert_eq!(d.state(), State::Closed(Ending::FlushExpired));
    }
}
