//! The loop that runs one connection over a tokio byte stream, plain or
//! TLS: the core's [`Driver`] keeps the buffers, the bound, the deadline and
//! the state, the core's [`TlsSession`] the encryption; this file adds
//! tokio's socket calls and its timer.
//!
//! Each turn fires the deadline if it is due (→ `handle_timeout`) and the
//! shutdown if it was triggered (→ `shutdown`), takes the core's output (up
//! to the bound), then waits for the socket to accept bytes (one vectored
//! write of everything queued, or over TLS of the turn's records) or give
//! bytes (→ `did_read`); only when it has neither does the turn wait for
//! the shutdown signal or the timer as well. The timer is re-armed only
//! when the deadline moves earlier: a deadline that moved later (a
//! keep-alive connection pushes its idle and trim deadlines on with every
//! request) lets the armed timer fire early, once, and be armed again then;
//! the core fires only what is due.
//!
//! Plain reads go into the read buffer's spare capacity (the kernel writes
//! the bytes, so nothing is zero-filled). Over TLS the core's session reads
//! and writes the socket through a small adapter (`Socket`) and moves the
//! plaintext into the read buffer.

use std::future::{Future, poll_fn};
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use h2sim_proto::Application;
use h2sim_proto::Endpoint;
use h2sim_proto::host::{
    Driver, DriverOptions, Ending, LINGER, LINGER_BYTES, ReadBuf, State, TlsSession,
};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::shutdown::Shutdown;
use crate::timer::Timer;

/// Slices handed to one `write_vectored` call (Linux takes up to 1024).
const MAX_IOV: usize = 64;

/// A connection's byte stream, with its TLS session when it has one.
#[derive(Debug)]
pub(crate) struct Transport<S> {
    io: S,
    /// Boxed: a rustls session is over a KiB, and a plain connection's
    /// task should not carry its size.
    tls: Option<Box<TlsSession>>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Transport<S> {
    pub(crate) fn plain(io: S) -> Self {
        Transport { io, tls: None }
    }

    /// Over TLS, once [`handshake`] is done (application data that came
    /// behind it stays in `tls` for the first read).
    pub(crate) fn tls(io: S, tls: Box<TlsSession>) -> Self {
        Transport { io, tls: Some(tls) }
    }

    /// Records staged and not yet written.
    fn backlog(&self) -> usize {
        self.tls.as_deref().map_or(0, TlsSession::backlog)
    }
}

/// Runs the TLS handshake over `io` to its end (see
/// [`TlsSession::handshake`]).
pub(crate) async fn handshake<S>(io: &mut S, tls: &mut TlsSession) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    std::future::poll_fn(|cx| ready(tls.handshake(&mut Socket { io, cx }))).await
}

/// Runs `endpoint` over `transport` until the connection is over, then
/// closes the transport. A transport error is also handed to the core as
/// end of stream, so the application always hears how its connection ended.
///
/// Not an `async fn`: one would keep `transport` twice (its argument and
/// its binding) in the connection's task.
#[allow(clippy::manual_async_fn, reason = "an async fn doubles the task")]
pub(crate) fn run<'a, S, A>(
    mut transport: Transport<S>,
    endpoint: &'a mut Endpoint<A>,
    shutdown: &'a Shutdown,
    options: &'a DriverOptions,
) -> impl Future<Output = io::Result<Ending>> + 'a
where
    S: AsyncRead + AsyncWrite + Unpin + 'a,
    A: Application,
{
    async move {
        // The caller keeps its endpoint; the driver borrows it for the run.
        let mut driver = Driver::borrowing(endpoint, options.clone());
        let result = drive(&mut transport, &mut driver, shutdown).await;
        match result {
            Ok(ending) => {
                let linger = driver.finish(transport.tls.is_some());
                close(&mut transport, linger).await;
                Ok(ending)
            }
            Err(e) => {
                driver.transport_error(Instant::now(), &e);
                Err(e)
            }
        }
    }
}

async fn drive<S, A>(
    transport: &mut Transport<S>,
    driver: &mut Driver<A, &mut Endpoint<A>>,
    shutdown: &Shutdown,
) -> io::Result<Ending>
where
    S: AsyncRead + AsyncWrite + Unpin,
    A: Application,
{
    let mut timer = Timer::new();
    // When the timer fires, if it is armed, and whether it has: tokio's
    // wheel is coarser than the clock, so a fired deadline counts as due.
    let mut armed: Option<Instant> = None;
    let mut fired = false;
    // The deadline the last turn saw: one that passes while the loop never
    // sleeps (so never arms the timer) is still handled.
    let mut due: Option<Instant> = None;
    // Made once, not every turn: registering a fresh waiter with the
    // cancellation token and dropping it again cost ~2% of an HTTP/1.1
    // request (perf, h2load --h1 -c 100).
    let mut signal = std::pin::pin!(shutdown.triggered());
    // The waker the signal last registered: it stays registered, so the
    // signal is polled again only for another waker (its poll takes two
    // locks, ~2% of an HTTP/1.1 request that sleeps once).
    let mut watching: Option<Waker> = None;
    let mut clock = Clock::default();
    loop {
        let now = clock.now();
        if fired || [armed, due].into_iter().flatten().any(|t| now >= t) {
            armed = None;
            fired = false;
            driver.handle_timeout(now);
        }
        if driver.state() == State::Running && shutdown.is_triggered() {
            driver.shutdown(now);
        }
        driver.poll_output_holding(now, transport.backlog());
        if let State::Closed(ending) = driver.state()
            && (ending == Ending::FlushExpired || is_flushed(transport, driver))
        {
            return Ok(ending);
        }
        // Armed only by a poll about to sleep: a connection that runs to
        // its end without waiting (a connection per request) then touches
        // no timer, and tokio wakes its driver with an eventfd write for
        // every timer set earlier than the one it last slept for (with
        // none, for any), two writes and a spare wake-up a connection.
        due = driver.deadline(now);
        let mut arm = due.filter(|&t| armed.is_none_or(|a| t < a));
        let shutdown_seen = driver.state() != State::Running;
        let read_now = driver.wants_read();
        poll_fn(|cx| {
            // A poll may follow a sleep: the clock is read again.
            clock = Clock::default();
            if let Poll::Ready(progress) =
                poll_io(cx, transport, driver, read_now, armed, &mut clock)
            {
                return Poll::Ready(progress);
            }
            // Only a loop about to sleep registers for the signal and the
            // timer: a busy one sees both at the top of its next turn. A
            // registered signal is not polled again, so the wake-up it
            // causes is told by the trigger's flag, set before it wakes.
            if !shutdown_seen {
                if shutdown.is_triggered() {
                    return Poll::Ready(Ok(()));
                }
                if watching.as_ref().is_none_or(|w| !w.will_wake(cx.waker())) {
                    if signal.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(Ok(()));
                    }
                    watching = Some(cx.waker().clone());
                }
            }
            if let Some(t) = arm.take() {
                timer.arm(t, clock.now());
                armed = Some(t);
            }
            if armed.is_some() && timer.poll(cx).is_ready() {
                fired = true;
                return Poll::Ready(Ok(()));
            }
            Poll::Pending
        })
        .await?;
    }
}

/// The clock, read at most once a poll: a turn's write, read and output
/// all take the reading of the poll that woke it (microseconds apart, in
/// system calls that do not wait), where each read the clock before.
#[derive(Debug, Default)]
struct Clock(Option<Instant>);

impl Clock {
    fn now(&mut self) -> Instant {
        *self.0.get_or_insert_with(Instant::now)
    }
}

/// Nothing waits to be written: not in the outbox, nor as TLS records.
fn is_flushed<S, A: Application>(
    transport: &Transport<S>,
    driver: &mut Driver<A, &mut Endpoint<A>>,
) -> bool {
    match transport.tls.as_deref() {
        Some(tls) => tls.is_flushed(driver.outbox_mut()),
        None => !driver.wants_write(),
    }
}

/// Writes what is queued and reads if allowed, both in the same poll so
/// each registers its wake-up; ready when either made progress (reported
/// to the driver already).
fn poll_io<S, A>(
    cx: &mut Context<'_>,
    transport: &mut Transport<S>,
    driver: &mut Driver<A, &mut Endpoint<A>>,
    read: bool,
    armed: Option<Instant>,
    clock: &mut Clock,
) -> Poll<io::Result<()>>
where
    S: AsyncRead + AsyncWrite + Unpin,
    A: Application,
{
    let wrote = match poll_write(cx, transport, driver, clock) {
        Poll::Ready(Ok(wrote)) => wrote,
        Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
        Poll::Pending => false,
    };
    // Going quiet may set the deadline to give buffers back: the loop
    // takes it before it sleeps, unless the timer is armed for earlier
    // (it then fires early, once, and is armed again).
    let mut rearm = false;
    if read {
        let polled = match transport.tls.as_deref_mut() {
            None => poll_read_plain(cx, &mut transport.io, driver, clock),
            Some(tls) => poll_read_tls(cx, &mut transport.io, tls, driver, clock),
        };
        match polled {
            Poll::Ready(Ok(())) => return Poll::Ready(Ok(())),
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            // Quiet: the buffer goes back to the pool until data comes.
            Poll::Pending => {
                rearm = driver
                    .read_pending(clock.now())
                    .is_some_and(|t| armed.is_none_or(|a| t < a));
            }
        }
    }
    // A write that left nothing behind, with the read registered, needs
    // no turn of its own (see `Driver::settled`).
    let settled = wrote && read && driver.settled() && is_flushed(transport, driver);
    if (wrote && !settled) || rearm {
        Poll::Ready(Ok(()))
    } else {
        Poll::Pending
    }
}

/// One write of what is queued: the outbox's chunks in one vectored write,
/// or over TLS the turn's records. `Ready(Ok(false))`: nothing to write.
fn poll_write<S, A>(
    cx: &mut Context<'_>,
    transport: &mut Transport<S>,
    driver: &mut Driver<A, &mut Endpoint<A>>,
    clock: &mut Clock,
) -> Poll<io::Result<bool>>
where
    S: AsyncRead + AsyncWrite + Unpin,
    A: Application,
{
    let io = Pin::new(&mut transport.io);
    let written = match transport.tls.as_deref_mut() {
        None => {
            if !driver.wants_write() {
                return Poll::Ready(Ok(false));
            }
            let mut iov = [IoSlice::new(&[]); MAX_IOV];
            let count = driver.write_slices(&mut iov);
            let n = std::task::ready!(io.poll_write_vectored(cx, &iov[..count]))?;
            driver.did_write(clock.now(), n);
            n
        }
        Some(tls) => {
            tls.encrypt(driver.outbox_mut())?;
            if !tls.wants_write() {
                return Poll::Ready(Ok(false));
            }
            let socket = &mut Socket {
                io: io.get_mut(),
                cx,
            };
            let n = std::task::ready!(ready(tls.write_to(socket)))?;
            driver.did_send(clock.now(), n);
            n
        }
    };
    if written == 0 {
        return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
    }
    Poll::Ready(Ok(true))
}

/// One read into the read buffer's spare capacity.
fn poll_read_plain<S, A>(
    cx: &mut Context<'_>,
    io: &mut S,
    driver: &mut Driver<A, &mut Endpoint<A>>,
    clock: &mut Clock,
) -> Poll<io::Result<()>>
where
    S: AsyncRead + Unpin,
    A: Application,
{
    let n = std::task::ready!(tokio_util::io::poll_read_buf(
        Pin::new(io),
        cx,
        &mut driver.read_spare()
    ))?;
    driver.did_read(clock.now(), n);
    Poll::Ready(Ok(()))
}

/// One TLS read (see [`TlsSession::read_from`]).
fn poll_read_tls<S, A>(
    cx: &mut Context<'_>,
    io: &mut S,
    tls: &mut TlsSession,
    driver: &mut Driver<A, &mut Endpoint<A>>,
    clock: &mut Clock,
) -> Poll<io::Result<()>>
where
    S: AsyncRead + AsyncWrite + Unpin,
    A: Application,
{
    let input = driver.buffers_mut().1;
    let moved = std::task::ready!(ready(tls.read_from(&mut Socket { io, cx }, input)))?;
    let now = clock.now();
    if moved == 0 {
        driver.did_read(now, 0);
    } else {
        driver.did_fill(now, moved);
    }
    Poll::Ready(Ok(()))
}

/// A result of the TLS session's socket calls as a poll: `WouldBlock`
/// means the wake-up is registered.
fn ready<T>(result: io::Result<T>) -> Poll<io::Result<T>> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Poll::Pending,
        done => Poll::Ready(done),
    }
}

/// The socket as the TLS session reads and writes it: a read or write
/// that would wait is `WouldBlock`, with its wake-up registered.
struct Socket<'a, 'b, S> {
    io: &'a mut S,
    cx: &'a mut Context<'b>,
}

impl<S: AsyncRead + Unpin> std::io::Read for Socket<'_, '_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut buf = tokio::io::ReadBuf::new(buf);
        match Pin::new(&mut *self.io).poll_read(self.cx, &mut buf) {
            Poll::Ready(done) => done.map(|()| buf.filled().len()),
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl<S: AsyncWrite + Unpin> std::io::Write for Socket<'_, '_, S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match Pin::new(&mut *self.io).poll_write(self.cx, buf) {
            Poll::Ready(done) => done,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match Pin::new(&mut *self.io).poll_write_vectored(self.cx, bufs) {
            Poll::Ready(done) => done,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Closes our side (TLS close_notify, TCP FIN), then, if the peer may
/// still send (see [`Driver::peer_may_send`]), reads until the peer closes
/// too, for a short while. Closing a socket with unread input makes the
/// kernel send RST, which can destroy our last bytes (the GOAWAY or the
/// last response) before the peer reads them. Otherwise dropping the
/// socket sends the FIN behind what is still queued.
async fn close<S>(transport: &mut Transport<S>, linger: bool)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let closing = async {
        let io = &mut transport.io;
        if let Some(tls) = transport.tls.as_deref_mut() {
            tls.close();
            while tls.wants_write() {
                if poll_fn(|cx| ready(tls.write_to(&mut Socket { io, cx })))
                    .await
                    .is_err()
                {
                    return;
                }
            }
        }
        if !linger || io.shutdown().await.is_err() {
            return;
        }
        // Into a pooled buffer's spare capacity: a slice would zero 64 KiB
        // at every close.
        let mut total = 0;
        while total < LINGER_BYTES {
            let read = poll_fn(|cx| {
                ReadBuf::discard(|sink| {
                    tokio_util::io::poll_read_buf(Pin::new(&mut *io), cx, &mut sink.spare())
                })
            });
            match read.await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    };
    // Whatever the peer does, the connection is over after `LINGER`.
    let _ = tokio::time::timeout(LINGER, closing).await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bytes::{Bytes, BytesMut};
    use h2sim_proto::frame::{
        DEFAULT_MAX_FRAME_SIZE, Data, Frame, FrameDecoder, Headers, StreamId,
    };
    use h2sim_proto::handler::{HandlerApp, Reply};
    use h2sim_proto::{Config, Connection, Protocol};
    use std::time::Duration;
    use tokio::io::AsyncReadExt;

    /// HEADERS frames for GET requests (END_STREAM) on streams `first,
    /// first+2, …`: HPACK from the static table, a literal `:authority`,
    /// and a 1000-byte `x-pad` field so a read holds only a few requests.
    fn requests(first: u32, count: u32) -> Vec<u8> {
        let mut block = vec![0x82, 0x86, 0x84, 0x01, 0x01, b'a'];
        // Literal without indexing, new name; 1000 = 127 + 873 (RFC 7541 §5.1).
        block.extend_from_slice(&[0x00, 0x05]);
        block.extend_from_slice(b"x-pad");
        block.extend_from_slice(&[0x7f, 0xe9, 0x06]);
        block.extend_from_slice(&[b'p'; 1000]);
        let len = u32::try_from(block.len()).unwrap().to_be_bytes();
        let mut out = Vec::new();
        for i in 0..count {
            out.extend_from_slice(&[len[1], len[2], len[3], 0x1, 0x5]);
            out.extend_from_slice(&(first + 2 * i).to_be_bytes());
            out.extend_from_slice(&block);
        }
        out
    }

    /// Write system calls made by this thread so far (`/proc/thread-self/io`).
    fn writes_by_this_thread() -> u64 {
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        io.lines()
            .find_map(|line| line.strip_prefix("syscw: "))
            .unwrap()
            .parse()
            .unwrap()
    }

    /// A connection that runs to its end without waiting (its request was
    /// there, it asked to close) arms no timer: setting one earlier than
    /// what tokio's driver last slept for (with none, any) makes tokio wake
    /// the driver through its eventfd, a write system call. Over an
    /// in-memory transport, on this test's one thread, the whole connection
    /// then makes none.
    #[tokio::test]
    async fn a_connection_that_never_waits_arms_no_timer() {
        let (ours, mut theirs) = tokio::io::duplex(64 * 1024);
        theirs
            .write_all(b"GET / HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let now = Instant::now();
        // Deadlines from the first turn on: the idle time.
        let config = Config {
            idle_timeout: Some(Duration::from_secs(60)),
            ..Config::default()
        };
        let conn = Connection::server_for(Protocol::Http1, config, now).unwrap();
        let app = HandlerApp::new(|_| Reply::new(200, b"ok".to_vec()));
        let mut endpoint = Endpoint::new(conn, app, now);
        let shutdown = Shutdown::new();
        let options = DriverOptions::default();
        let before = writes_by_this_thread();
        let ending = run(Transport::plain(ours), &mut endpoint, &shutdown, &options).await;
        assert_eq!(writes_by_this_thread(), before, "a system write");
        assert_eq!(ending.unwrap(), Ending::Finished);
        let mut answer = Vec::new();
        theirs.read_to_end(&mut answer).await.unwrap();
        assert!(answer.starts_with(b"HTTP/1.1 200") && answer.ends_with(b"ok"));
    }

    /// A shutdown triggered from another thread while the connection
    /// sleeps, its signal registered by an earlier poll: the wake-up it
    /// causes must end the sleep, though that poll of the signal is skipped
    /// (it stays registered), so the loop reads the trigger's flag. An idle
    /// HTTP/1.1 connection then closes at once; it used to sleep on until
    /// something else woke it (here nothing would).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_shutdown_from_another_thread_wakes_a_sleeping_connection() {
        let (ours, mut theirs) = tokio::io::duplex(64 * 1024);
        let now = Instant::now();
        let conn = Connection::server_for(Protocol::Http1, Config::default(), now).unwrap();
        let app = HandlerApp::new(|_| Reply::new(200, b"ok".to_vec()));
        let shutdown = Shutdown::new();
        let server = tokio::spawn({
            let shutdown = shutdown.clone();
            async move {
                let mut endpoint = Endpoint::new(conn, app, now);
                let options = DriverOptions::default();
                run(Transport::plain(ours), &mut endpoint, &shutdown, &options).await
            }
        });
        theirs
            .write_all(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n")
            .await
            .unwrap();
        let mut answer = [0u8; 256];
        let n = theirs.read(&mut answer).await.unwrap();
        assert!(answer[..n].ends_with(b"ok"));
        // The connection sleeps, the signal registered, several times over.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let trigger = shutdown.clone();
        std::thread::spawn(move || trigger.trigger())
            .join()
            .unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("the shutdown ended the sleeping connection");
        assert_eq!(ended.unwrap().unwrap(), Ending::Finished);
    }

    /// A connection whose socket never runs dry (pipelined requests
    /// queued ahead) still sees the shutdown: it finishes the answer under
    /// way and closes, long before the queue is through (RFC 9112 §9.6).
    #[tokio::test]
    async fn a_busy_connection_sees_the_shutdown() {
        const QUEUED: usize = 20_000;
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let now = Instant::now();
        let conn = Connection::server_for(Protocol::Http1, Config::default(), now).unwrap();
        let app = HandlerApp::new(|_| Reply::new(200, b"ok".to_vec()));
        let mut endpoint = Endpoint::new(conn, app, now);
        let shutdown = Shutdown::new();
        let server = tokio::spawn({
            let shutdown = shutdown.clone();
            async move {
                let options = DriverOptions::default();
                run(Transport::plain(ours), &mut endpoint, &shutdown, &options).await
            }
        });
        let (mut their_read, mut their_write) = tokio::io::split(theirs);
        let writer = tokio::spawn(async move {
            let request = b"GET / HTTP/1.1\r\nhost: a\r\n\r\n";
            for _ in 0..QUEUED {
                if their_write.write_all(request).await.is_err() {
                    break;
                }
            }
            their_write
        });
        let mut seen = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        let mut triggered = false;
        loop {
            let n = tokio::time::timeout(Duration::from_secs(5), their_read.read(&mut chunk))
                .await
                .expect("the server ended the connection")
                .unwrap();
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&chunk[..n]);
            if !triggered && seen.len() > 100 * 40 {
                shutdown.trigger();
                triggered = true;
            }
        }
        let text = String::from_utf8(seen).unwrap();
        let answers = text.matches("HTTP/1.1 200").count();
        assert!(
            answers < QUEUED,
            "all {answers} answered: the shutdown was not seen"
        );
        assert!(text.ends_with("ok"), "the last answer is whole");
        assert!(server.await.unwrap().is_ok());
        drop(writer.await.unwrap());
    }

    /// An HTTP/2 server that answers every request with 16 KiB, behind a
    /// 64 KiB output backlog and a 16 KiB pipe each way, and the peer's
    /// halves of the pipe, its preface and SETTINGS written: every window
    /// raised to 2^31-1, so flow control never holds the answers back.
    async fn wide_open_server() -> (
        tokio::task::JoinHandle<io::Result<Ending>>,
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) {
        let (ours, theirs) = tokio::io::duplex(16 * 1024);
        let now = Instant::now();
        let conn = Connection::server_for(Protocol::Http2, Config::default(), now).unwrap();
        let app = HandlerApp::new(|_| Reply::new(200, vec![b'z'; 16 * 1024]));
        let mut endpoint = Endpoint::new(conn, app, now);
        let options = DriverOptions {
            max_output_backlog: 64 * 1024,
        };
        let server = tokio::spawn(async move {
            run(
                Transport::plain(ours),
                &mut endpoint,
                &Shutdown::new(),
                &options,
            )
            .await
        });
        let (their_read, mut their_write) = tokio::io::split(theirs);
        let mut hello = h2sim_proto::frame::PREFACE.to_vec();
        hello.extend_from_slice(&[0, 0, 6, 0x4, 0, 0, 0, 0, 0, 0, 0x4, 0x7f, 0xff, 0xff, 0xff]);
        hello.extend_from_slice(&[0, 0, 4, 0x8, 0, 0, 0, 0, 0, 0x7f, 0xff, 0, 0]);
        their_write.write_all(&hello).await.unwrap();
        (server, their_read, their_write)
    }

    /// A peer that opens the windows wide, sends requests and never reads:
    /// the server answers until its output backlog is full and stops
    /// reading; once its writes stood still it reads on, but only as far as
    /// the protocol lets a peer go: 256 concurrent streams, then refusals
    /// until 1,024 wait unsent, then the read input is held until 256 KiB
    /// wait and the server stops reading. The peer's writes then block;
    /// the connection holds what it holds, bounded, until the peer goes.
    #[tokio::test]
    async fn a_peer_that_does_not_read_is_throttled() {
        let (mut server, their_read, mut their_write) = wide_open_server().await;

        let mut next = 1;
        let mut written = 0;
        loop {
            let batch = requests(next, 2);
            let write =
                tokio::time::timeout(Duration::from_millis(300), their_write.write_all(&batch));
            match write.await {
                Ok(Ok(())) => {}
                // Blocked, or the connection is gone.
                Ok(Err(_)) | Err(_) => break,
            }
            next += 4;
            written += batch.len();
            // An unbounded server would let us write for ever.
            assert!(written < 2 * 1024 * 1024, "the server kept reading");
        }
        // 256 streams and 1,024 refusals of about 1 KiB each, the 256 KiB
        // held, and what the pipe and the read buffer hold.
        let requests_taken = written / requests(1, 1).len();
        assert!(
            (256 + 1024 + 200..256 + 1024 + 256 + 200).contains(&requests_taken),
            "{requests_taken} requests taken"
        );
        let held = tokio::time::timeout(Duration::from_secs(1), &mut server).await;
        assert!(held.is_err(), "the connection ended: {held:?}");
        drop((their_read, their_write));
        let ending = tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("the connection ended with its peer")
            .unwrap();
        assert!(ending.is_err(), "{ending:?}");
    }

    /// The frames `got` holds whole, decoded by the core's decoder; a frame
    /// cut short stays in `got` for the next read.
    fn frames(decoder: &mut FrameDecoder, got: &mut BytesMut) -> Vec<Frame> {
        std::iter::from_fn(|| decoder.decode(got).unwrap()).collect()
    }

    /// POST on `stream` (HEADERS without END_STREAM), then `len` bytes of
    /// body in DATA frames of at most 16 KiB, the last with END_STREAM.
    fn upload(stream: u32, len: usize) -> BytesMut {
        let stream_id = StreamId::new(stream);
        let mut out = BytesMut::new();
        Frame::Headers(Headers {
            stream_id,
            // :method POST, :scheme http, :path /, :authority a (RFC 7541 App. A).
            fragment: Bytes::from_static(&[0x83, 0x86, 0x84, 0x01, 0x01, b'a']),
            end_stream: false,
            end_headers: true,
            priority: None,
            padding: None,
        })
        .encode(&mut out);
        let mut left = len;
        while left > 0 {
            let n = left.min(16 * 1024);
            left -= n;
            Frame::Data(Data {
                stream_id,
                payload: Bytes::from(vec![b'u'; n]),
                end_stream: left == 0,
                padding: None,
            })
            .encode(&mut out);
        }
        out
    }

    /// A peer that writes a request's body before it reads again, as Go's
    /// HTTP/2 client does (one lock for its writes and for answering what
    /// its reader got): with answers filling the output backlog and the
    /// pipe, the server still reads the bodies, within the windows it
    /// gave, so both sides move on. A server that stopped reading on a
    /// full backlog waited for the peer to read while the peer waited for
    /// its write, for ever.
    #[tokio::test]
    async fn a_peer_that_writes_before_it_reads_is_still_read() {
        let (server, mut their_read, mut their_write) = wide_open_server().await;
        // The server's SETTINGS, acknowledged, and its connection window.
        let mut decoder = FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE);
        let mut got = BytesMut::new();
        let mut chunk = vec![0u8; 64 * 1024];
        let mut seen = Vec::new();
        while !(seen
            .iter()
            .any(|f| matches!(f, Frame::Settings(s) if !s.ack))
            && seen
                .iter()
                .any(|f| matches!(f, Frame::WindowUpdate(w) if w.stream_id == StreamId::ZERO)))
        {
            let n = their_read.read(&mut chunk).await.unwrap();
            got.extend_from_slice(&chunk[..n]);
            seen.extend(frames(&mut decoder, &mut got));
        }
        their_write
            .write_all(&[0, 0, 0, 0x4, 0x1, 0, 0, 0, 0])
            .await
            .unwrap();

        // 20 answers of 16 KiB: more than the backlog and the pipes hold.
        their_write.write_all(&requests(1, 20)).await.unwrap();
        // Then 8 bodies of 60 KiB, written whole before reading on.
        let mut bodies = Vec::new();
        for i in 0..8 {
            bodies.extend(upload(41 + 2 * i, 60 * 1024));
        }
        tokio::time::timeout(Duration::from_secs(5), their_write.write_all(&bodies))
            .await
            .expect("the server read the bodies while its answers waited")
            .unwrap();

        // Every request is answered.
        let mut ended = 0;
        while ended < 28 {
            let n = tokio::time::timeout(Duration::from_secs(5), their_read.read(&mut chunk))
                .await
                .expect("the answers came")
                .unwrap();
            assert!(n > 0, "the server closed with {ended} answers of 28");
            got.extend_from_slice(&chunk[..n]);
            ended += frames(&mut decoder, &mut got)
                .iter()
                .filter(|f| matches!(f, Frame::Data(d) if d.end_stream))
                .count();
        }
        drop(their_write);
        server.abort();
    }

    /// Closing reads what the peer still sends until the peer closes, past
    /// any amount a peer has in flight (32 MiB here, more than the socket
    /// buffers hold), rather than letting the socket go with input unread:
    /// the kernel would answer with RST, and a peer still reading our last
    /// answer would lose its tail. The peer gets our FIN, not a reset.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn closing_reads_what_the_peer_still_sends_until_it_closes() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let peer = tokio::spawn(async move {
            let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            let junk = vec![b'u'; 32 << 20];
            let wrote = tcp.write_all(&junk).await;
            let mut rest = Vec::new();
            let read = tcp.read_to_end(&mut rest).await;
            (wrote, read)
        });
        let (tcp, _) = listener.accept().await.unwrap();
        let mut transport = Transport::plain(tcp);
        close(&mut transport, true).await;
        drop(transport);
        let (wrote, read) = tokio::time::timeout(Duration::from_secs(10), peer)
            .await
            .expect("the peer finished")
            .unwrap();
        assert!(wrote.is_ok(), "the peer's upload was cut: {wrote:?}");
        assert_eq!(read.ok(), Some(0), "our FIN, not a reset");
    }
}
