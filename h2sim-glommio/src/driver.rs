//! The loop that runs one connection on its executor, plain or TLS.
//!
//! Each turn takes the core's output into an outbox (up to a bound), then
//! waits for whichever comes first: the shutdown signal (→ `go_away`), the
//! socket (one write of everything staged, and a read → `handle_input`),
//! or the one timer (→ `handle_timeout`), armed for the earliest of the
//! core's deadlines (idle, drain, head read, its protocol timers), the
//! application's, and the final flush once the core is closed.
//!
//! Reading goes on while a write is pending, so two endpoints that both
//! write at once cannot deadlock on full socket buffers. It pauses while the
//! output backlog is over its bound: a peer that sends requests but does
//! not read the answers then meets TCP backpressure instead of growing our
//! memory.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use glommio::timer::Timer;
use h2sim_proto::host::{DriverOptions, Ending, FinalFlush, Outbox};
use h2sim_proto::{Application, Endpoint};

use crate::shutdown::LocalSignal;
use crate::transport::{Progress, ReadBuf, Transport};

/// How long closing waits for the peer to close too (see `close`).
const LINGER: Duration = Duration::from_millis(500);
/// Bytes read and dropped while lingering, at most.
const LINGER_BYTES: usize = 1 << 20;

/// What woke the loop.
enum Wake {
    Shutdown,
    Io(io::Result<Progress>),
    Timer,
}

/// Runs `endpoint` over `transport` until the connection is over, then
/// closes the transport. A transport error is also handed to the core as
/// end of stream, so the application always hears how its connection ended.
pub(crate) async fn run<A: Application>(
    transport: &mut Transport,
    endpoint: &mut Endpoint<A>,
    signal: &LocalSignal,
    options: &DriverOptions,
) -> io::Result<Ending> {
    match drive(transport, endpoint, signal, options).await {
        Ok(ending) => {
            close(transport).await;
            Ok(ending)
        }
        Err(e) => {
            endpoint.handle_transport_error(Instant::now(), e.to_string());
            Err(e)
        }
    }
}

async fn drive<A: Application>(
    transport: &mut Transport,
    endpoint: &mut Endpoint<A>,
    signal: &LocalSignal,
    options: &DriverOptions,
) -> io::Result<Ending> {
    let mut input = ReadBuf::default();
    let mut out = Outbox::default();
    let mut timer = Deadline::default();
    let mut shutdown = signal.subscribe();
    let mut reading = true;
    let mut peer_closed = false;
    let mut shutdown_seen = false;
    let mut flush = FinalFlush::default();
    let limit = options.max_output_backlog;
    loop {
        let now = Instant::now();
        out.fill(endpoint, now, limit.saturating_sub(transport.backlog()));
        if endpoint.is_closed() && transport.is_flushed(&out) {
            return Ok(if peer_closed {
                Ending::PeerClosed
            } else {
                Ending::Finished
            });
        }
        let deadline = flush.deadline(endpoint, now);
        let backlog = out.len() + transport.backlog();
        // The core says when it holds back enough pipelined HTTP/1.1
        // input; reading on would buffer a peer that does not read.
        let read_now = reading
            && !endpoint.is_closed()
            && backlog < limit
            && endpoint.connection().wants_input();
        let wake = poll_fn(|cx| {
            if !shutdown_seen && shutdown.poll(cx).is_ready() {
                return Poll::Ready(Wake::Shutdown);
            }
            if let Poll::Ready(r) = transport.poll_io(cx, &mut out, &mut input, read_now) {
                return Poll::Ready(Wake::Io(r));
            }
            match timer.poll(cx, deadline) {
                Poll::Ready(()) => Poll::Ready(Wake::Timer),
                Poll::Pending => Poll::Pending,
            }
        })
        .await;
        let now = Instant::now();
        match wake {
            Wake::Shutdown => {
                shutdown_seen = true;
                endpoint.go_away(now);
            }
            Wake::Io(progress) => match progress? {
                Progress::Read => input.take_input(|bytes| endpoint.handle_input(now, bytes)),
                Progress::Eof => {
                    reading = false;
                    peer_closed = true;
                    endpoint.handle_eof(now);
                }
                Progress::Wrote => flush.wrote(now),
            },
            Wake::Timer => {
                if flush.expired(now) {
                    return Ok(Ending::FlushExpired);
                }
                endpoint.handle_timeout(now);
            }
        }
    }
}

/// One glommio timer per connection, re-armed only when the deadline moves
/// earlier than the one it is armed for, or after it fired. A timer that
/// fires early (the idle deadline moved on since) costs one spare turn;
/// re-arming on every turn would cost a timer-table update per request.
#[derive(Debug, Default)]
struct Deadline {
    timer: Option<Timer>,
    armed_for: Option<Instant>,
}

impl Deadline {
    fn poll(&mut self, cx: &mut Context<'_>, deadline: Option<Instant>) -> Poll<()> {
        let Some(deadline) = deadline else {
            return Poll::Pending;
        };
        let now = Instant::now();
        if deadline <= now {
            return Poll::Ready(());
        }
        if self
            .armed_for
            .is_some_and(|armed| armed > now && armed <= deadline)
        {
            return Poll::Pending;
        }
        let mut timer = Timer::new(deadline - now);
        // The first poll registers the task's waker with the reactor; the
        // registration lasts until the timer fires or is dropped.
        if Pin::new(&mut timer).poll(cx).is_ready() {
            return Poll::Ready(());
        }
        self.timer = Some(timer);
        self.armed_for = Some(deadline);
        Poll::Pending
    }
}

/// Closes our side (TLS close_notify, TCP FIN), then reads until the peer
/// closes too, for a short while. Closing a socket with unread input makes
/// the kernel send RST, which can destroy our last bytes (the GOAWAY or the
/// last response) before the peer reads them.
async fn close(transport: &mut Transport) {
    let linger = async {
        if transport.close_write().await.is_ok() {
            transport.discard_input(LINGER_BYTES).await;
        }
    };
    // Whatever the peer does, the connection is over after `LINGER`.
    futures_lite::future::or(linger, async {
        Timer::new(LINGER).await;
    })
    .await;
}
