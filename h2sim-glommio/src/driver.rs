//! The loop that runs one connection on its executor, plain or TLS: the
//! core's [`Driver`] keeps the buffers, the bound, the deadline and the
//! state; this file adds glommio's socket calls and its timer.
//!
//! Each turn takes the core's output into an outbox (up to a bound), then
//! waits for whichever comes first: the shutdown signal (→ `go_away`), the
//! socket (one write of everything staged, and a read → `did_fill`),
//! or the one timer (→ `handle_timeout`), armed for the earliest of the
//! core's deadlines (idle, drain, head read, its protocol timers), the
//! application's, and the final flush once the core is closed.
//!
//! Reading goes on while a write is pending, so two endpoints that both
//! write at once cannot deadlock on full socket buffers. It pauses while the
//! output backlog is over its bound (until the writes stand still, see
//! `Driver::wants_read`): a peer that sends requests but does not read the
//! answers then meets TCP backpressure instead of growing our memory.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use glommio::timer::Timer;
use h2sim_proto::host::{Driver, DriverOptions, Ending, LINGER, LINGER_BYTES, State};
use h2sim_proto::{Application, Endpoint};

use crate::shutdown::LocalSignal;
use crate::transport::{Progress, Transport};

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
    let mut driver = Driver::borrowing(endpoint, options.clone());
    match drive(transport, &mut driver, signal).await {
        Ok(ending) => {
            let linger = driver.finish(transport.is_secure());
            close(transport, linger).await;
            Ok(ending)
        }
        Err(e) => {
            driver.transport_error(Instant::now(), &e);
            Err(e)
        }
    }
}

async fn drive<A: Application>(
    transport: &mut Transport,
    driver: &mut Driver<A, &mut Endpoint<A>>,
    signal: &LocalSignal,
) -> io::Result<Ending> {
    let mut timer = Deadline::default();
    let mut shutdown = signal.subscribe();
    // Read once a turn, after the wake: what woke the loop and the output
    // it makes take the same reading.
    let mut now = Instant::now();
    loop {
        driver.poll_output_holding(now, transport.backlog());
        if let State::Closed(ending) = driver.state()
            && (ending == Ending::FlushExpired || transport.is_flushed(driver.outbox_mut()))
        {
            return Ok(ending);
        }
        let mut deadline = driver.deadline(now);
        let shutdown_seen = driver.state() != State::Running;
        let read_now = driver.wants_read();
        let wake = poll_fn(|cx| {
            if !shutdown_seen && shutdown.poll(cx).is_ready() {
                return Poll::Ready(Wake::Shutdown);
            }
            let (out, input) = driver.buffers_mut();
            match transport.poll_io(cx, out, input, read_now) {
                // A write that left nothing behind, with the read
                // registered, needs no turn of its own (see
                // `Driver::settled`).
                Poll::Ready(Ok(Progress { wrote, read: None }))
                    if read_now
                        && driver.settled()
                        && transport.is_flushed(driver.outbox_mut()) =>
                {
                    driver.did_send(now, wrote);
                }
                Poll::Ready(r) => return Poll::Ready(Wake::Io(r)),
                Poll::Pending => {}
            }
            // Quiet: the read buffer goes back, and what the queues grew
            // to now or at a new deadline.
            if read_now && driver.read_pending(now).is_some() {
                deadline = driver.deadline(now);
            }
            match timer.poll(cx, deadline) {
                Poll::Ready(()) => Poll::Ready(Wake::Timer),
                Poll::Pending => Poll::Pending,
            }
        })
        .await;
        now = Instant::now();
        match wake {
            Wake::Shutdown => driver.shutdown(now),
            Wake::Io(progress) => {
                let Progress { wrote, read } = progress?;
                // The transport moved the outbox on itself.
                if wrote > 0 {
                    driver.did_send(now, wrote);
                }
                match read {
                    Some(0) => driver.handle_eof(now),
                    Some(n) => driver.did_fill(now, n),
                    None => {}
                }
            }
            Wake::Timer => driver.handle_timeout(now),
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

/// Closes our side (TLS close_notify, TCP FIN), then, if the peer may
/// still send (see [`Driver::peer_may_send`]), reads until the peer closes
/// too, for a short while. Closing a socket with unread input makes the
/// kernel send RST, which can destroy our last bytes (the GOAWAY or the
/// last response) before the peer reads them. Otherwise dropping the
/// socket sends the FIN behind what is still queued.
async fn close(transport: &mut Transport, linger: bool) {
    let closing = async {
        if !linger {
            let _ = transport.close_notify().await;
        } else if transport.close_write().await.is_ok() {
            transport.discard_input(LINGER_BYTES).await;
        }
    };
    // Whatever the peer does, the connection is over after `LINGER`.
    futures_lite::future::or(closing, async {
        Timer::new(LINGER).await;
    })
    .await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::{Read, Write};

    use glommio::LocalExecutor;
    use glommio::net::TcpListener;

    /// Closing reads what the peer still sends until the peer closes, past
    /// any amount a peer has in flight (32 MiB here, more than the socket
    /// buffers hold), rather than letting the socket go with input unread:
    /// the kernel would answer with RST, and a peer still reading our last
    /// answer would lose its tail. The peer gets our FIN, not a reset.
    #[test]
    fn closing_reads_what_the_peer_still_sends_until_it_closes() {
        LocalExecutor::default().run(async {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap();
            let peer = std::thread::spawn(move || {
                let mut tcp = std::net::TcpStream::connect(addr).unwrap();
                tcp.set_read_timeout(Some(std::time::Duration::from_secs(10)))
                    .unwrap();
                let wrote = tcp.write_all(&vec![b'u'; 32 << 20]);
                let mut rest = Vec::new();
                let read = tcp.read_to_end(&mut rest);
                (wrote, read)
            });
            let tcp = listener.accept().await.unwrap();
            let mut transport = Transport::plain(tcp);
            close(&mut transport, true).await;
            drop(transport);
            let (wrote, read) = peer.join().unwrap();
            assert!(wrote.is_ok(), "the peer's upload was cut: {wrote:?}");
            assert_eq!(read.ok(), Some(0), "our FIN, not a reset");
        });
    }
}
