//! The loop that runs one connection on its executor, plain or TLS.
//!
//! Each turn takes the core's output into an outbox (up to a bound), then
//! waits for whichever comes first: the shutdown signal, the socket (one
//! write of everything staged, and a read), or the one timer armed for the
//! earliest of the core's, the application's and the loop's own deadlines.
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
use h2sim_proto::{Application, CloseCause, Endpoint, Reason};

use crate::shutdown::LocalSignal;
use crate::transport::{Outbox, Progress, ReadBuf, Transport};

/// After an abort, how long the last bytes (the GOAWAY) may take to leave.
const FINAL_FLUSH: Duration = Duration::from_secs(1);
/// How long closing waits for the peer to close too (see `close`).
const LINGER: Duration = Duration::from_millis(500);
/// Bytes read and dropped while lingering, at most.
const LINGER_BYTES: usize = 1 << 20;

/// Timing and memory bounds of the loop.
#[derive(Debug, Clone)]
pub struct DriverOptions {
    /// A connection with no bytes moving either way for this long is asked
    /// to go away (GOAWAY, then the drain time). `None` keeps it forever.
    pub idle_timeout: Option<Duration>,
    /// How long open streams may take to finish after a shutdown or idle
    /// GOAWAY before the connection is cut.
    pub drain_timeout: Duration,
    /// Output bytes taken from the core but not yet written, beyond which
    /// the loop stops reading (and stops taking more output).
    pub max_output_backlog: usize,
}

impl Default for DriverOptions {
    fn default() -> Self {
        DriverOptions {
            idle_timeout: Some(Duration::from_secs(120)),
            drain_timeout: Duration::from_secs(5),
            max_output_backlog: 512 * 1024,
        }
    }
}

/// How a connection's loop ended, when the transport did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The core finished the connection and all its output was written.
    Finished,
    /// The peer closed the transport; whatever the core had left to say
    /// was written.
    PeerClosed,
    /// Streams were still open when the drain time ran out; the connection
    /// was cut.
    DrainExpired,
}

/// Where a connection stands on its way out.
#[derive(Debug, Clone, Copy)]
enum Phase {
    Running,
    /// GOAWAY given; cut the connection at `abort_at`.
    Draining {
        abort_at: Instant,
    },
    /// Cut; stop waiting for the final flush at `give_up_at`.
    Aborted {
        give_up_at: Instant,
    },
}

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
    let mut shutdown_seen = false;
    let mut reading = true;
    let mut peer_closed = false;
    let mut last_activity = Instant::now();
    let mut phase = Phase::Running;
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
        let phase_deadline = match phase {
            Phase::Running => options.idle_timeout.map(|t| last_activity + t),
            Phase::Draining { abort_at } => Some(abort_at),
            Phase::Aborted { give_up_at } => Some(give_up_at),
        };
        let deadline = [endpoint.poll_timeout(), phase_deadline]
            .into_iter()
            .flatten()
            .min();
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
                if let Phase::Running = phase {
                    phase = begin_drain(endpoint, now, options, CloseCause::LocalGoAway);
                }
            }
            Wake::Io(progress) => {
                last_activity = now;
                match progress? {
                    Progress::Read => input.take_input(|bytes| endpoint.handle_input(now, bytes)),
                    Progress::Eof => {
                        reading = false;
                        peer_closed = true;
                        endpoint.handle_eof(now);
                    }
                    Progress::Wrote => {}
                }
            }
            Wake::Timer => {
                endpoint.handle_timeout(now);
                phase = match phase {
                    Phase::Running if phase_deadline.is_some_and(|t| t <= now) => {
                        begin_drain(endpoint, now, options, CloseCause::IdleTimeout)
                    }
                    Phase::Draining { abort_at } if abort_at <= now => {
                        endpoint.abort_because(now, Reason::NO_ERROR, CloseCause::DrainExpired);
                        Phase::Aborted {
                            give_up_at: now + FINAL_FLUSH,
                        }
                    }
                    Phase::Aborted { give_up_at } if give_up_at <= now => {
                        return Ok(Ending::DrainExpired);
                    }
                    phase => phase,
                };
            }
        }
    }
}

/// Asks the connection to go away gracefully, for `cause`, and sets when
/// to stop waiting.
fn begin_drain<A: Application>(
    endpoint: &mut Endpoint<A>,
    now: Instant,
    options: &DriverOptions,
    cause: CloseCause,
) -> Phase {
    endpoint.go_away_because(now, cause);
    Phase::Draining {
        abort_at: now + options.drain_timeout,
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
