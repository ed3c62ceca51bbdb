//! A connection's one timer, fine where it matters.
//!
//! tokio's timer counts whole milliseconds: it rounds a deadline up to the
//! next tick, and its driver sleeps in `epoll_wait` for whole milliseconds.
//! A deadline therefore fires up to a millisecond and more late. For idle
//! and drain times, seconds away, that is nothing; for a client paced with
//! `-T` it is the whole story: at 1,000 requests a second each request left
//! about a millisecond late, and the report counted that (rightly, from
//! when the request was due) as the server's latency, against a server
//! that answered in 80 µs.
//!
//! So a deadline closer than [`FINE_WITHIN`] waits on a timerfd of the
//! connection's own (the kernel's high-resolution timer, through tokio's
//! reactor), made the first time one is needed. A farther one waits on
//! tokio's wheel, which costs no system call, until [`FINE_WITHIN`] before
//! it, and the rest of the way on the timerfd: left on the wheel, every
//! send of a connection paced at 50 ms or more (`-T 19`, `-S 10 -T 100`)
//! left 1 to 1.5 ms late. Where no timerfd can be made (the descriptor
//! limit reached), the wheel serves them all.

use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use rustix::time::{
    Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec, timerfd_create,
    timerfd_settime,
};
use tokio::io::unix::AsyncFd;
use tokio::time::Sleep;

/// Deadlines closer than this use the fine timer; farther ones are handed
/// to it this long before they are due (the wheel is a millisecond or two
/// late, far less than this).
const FINE_WITHIN: Duration = Duration::from_millis(50);

/// One deadline at a time, on tokio's wheel or on the fine timer.
#[derive(Debug)]
pub(crate) struct Timer {
    coarse: Pin<Box<Sleep>>,
    fine: Fine,
    holder: Holder,
}

/// Which timer holds the armed deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holder {
    /// The wheel, for the deadline itself.
    Wheel,
    /// The wheel, [`FINE_WITHIN`] before this far deadline, to hand it to
    /// the fine timer then.
    Handoff(Instant),
    /// The fine timer.
    Fine,
}

/// The timerfd, made the first time a deadline is close.
#[derive(Debug)]
enum Fine {
    NotYet,
    Made(AsyncFd<OwnedFd>),
    /// Making it failed: not tried again.
    Unavailable,
}

impl Timer {
    pub(crate) fn new() -> Self {
        Timer {
            coarse: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())),
            fine: Fine::NotYet,
            holder: Holder::Wheel,
        }
    }

    /// Arms for `deadline`, replacing what was armed.
    pub(crate) fn arm(&mut self, deadline: Instant, now: Instant) {
        let ahead = deadline.saturating_duration_since(now);
        if ahead < FINE_WITHIN || matches!(self.fine, Fine::Unavailable) {
            self.arm_near(deadline, ahead);
        } else {
            self.holder = Holder::Handoff(deadline);
            self.coarse
                .as_mut()
                .reset(tokio::time::Instant::from_std(deadline - FINE_WITHIN));
        }
    }

    /// Arms the fine timer for `deadline`, `ahead` from now; the wheel
    /// where the fine timer cannot be had.
    fn arm_near(&mut self, deadline: Instant, ahead: Duration) {
        let on_fine = self
            .fine_timer()
            .is_some_and(|fd| set(fd, ahead.max(Duration::from_nanos(1))).is_ok());
        if on_fine {
            self.holder = Holder::Fine;
        } else {
            self.holder = Holder::Wheel;
            self.coarse
                .as_mut()
                .reset(tokio::time::Instant::from_std(deadline));
        }
    }

    /// Ready once the armed deadline passed (on the wheel alone: its tick).
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.holder != Holder::Fine {
            std::task::ready!(self.coarse.as_mut().poll(cx));
            let Holder::Handoff(deadline) = self.holder else {
                return Poll::Ready(());
            };
            // The wheel's early wake-up: the rest of the wait is the fine
            // timer's, which registers this poll's waker below.
            self.arm_near(deadline, deadline.saturating_duration_since(Instant::now()));
            if self.holder == Holder::Wheel {
                return self.coarse.as_mut().poll(cx);
            }
        }
        let Fine::Made(fd) = &self.fine else {
            return Poll::Pending;
        };
        loop {
            let Poll::Ready(Ok(mut ready)) = fd.poll_read_ready(cx) else {
                // An error polling a timerfd cannot happen on a live
                // reactor; treated as not due, the wheel still fires the
                // connection's farther deadlines.
                return Poll::Pending;
            };
            // The expiration count: readable means it fired (re-arming
            // resets it, so an old expiration cannot fire a new deadline).
            let mut count = [0u8; 8];
            match rustix::io::read(fd.get_ref(), &mut count) {
                Ok(_) => return Poll::Ready(()),
                Err(_) => ready.clear_ready(),
            }
        }
    }

    /// The fine timer, made on first use.
    fn fine_timer(&mut self) -> Option<&AsyncFd<OwnedFd>> {
        if let Fine::NotYet = self.fine {
            self.fine = timerfd_create(
                TimerfdClockId::Monotonic,
                TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
            )
            .ok()
            .and_then(|fd| {
                // SAFETY: the `AsyncFd` owns `fd` from here to its drop, so
                // the descriptor it registers stays open and stays this
                // timer (what `register` asks of its caller).
                #[allow(unsafe_code)]
                let registered = unsafe { AsyncFd::register(fd) };
                registered.ok()
            })
            .map_or(Fine::Unavailable, Fine::Made);
        }
        match &self.fine {
            Fine::Made(fd) => Some(fd),
            _ => None,
        }
    }
}

/// Arms `fd` to expire once, `after` from now.
fn set(fd: &AsyncFd<OwnedFd>, after: Duration) -> io::Result<()> {
    let value = Itimerspec {
        it_interval: Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: Timespec::try_from(after).map_err(|_| io::ErrorKind::InvalidInput)?,
    };
    timerfd_settime(fd.get_ref(), TimerfdTimerFlags::empty(), &value)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Polls once, with a waker that does nothing.
    fn poll_once(timer: &mut Timer) -> Poll<()> {
        timer.poll(&mut Context::from_waker(std::task::Waker::noop()))
    }

    #[test]
    fn near_deadlines_wait_on_the_kernel_timer_and_far_ones_on_the_wheel() {
        runtime().block_on(async {
            let mut timer = Timer::new();
            let now = Instant::now();
            let deadline = now + Duration::from_millis(2);
            timer.arm(deadline, now);
            assert_eq!(timer.holder, Holder::Fine);
            std::future::poll_fn(|cx| timer.poll(cx)).await;
            assert!(Instant::now() >= deadline, "fired before its deadline");
            let now = Instant::now();
            timer.arm(now + Duration::from_secs(10), now);
            assert_ne!(timer.holder, Holder::Fine);
            assert!(poll_once(&mut timer).is_pending());
        });
    }

    /// A deadline farther than [`FINE_WITHIN`] waits on the wheel, which
    /// wakes up early and hands it to the fine timer: left on the wheel,
    /// it fired a millisecond or more late, every time.
    #[test]
    fn a_far_deadline_moves_to_the_kernel_timer_as_it_comes_close() {
        runtime().block_on(async {
            let mut timer = Timer::new();
            let now = Instant::now();
            let deadline = now + FINE_WITHIN * 2;
            timer.arm(deadline, now);
            assert_ne!(timer.holder, Holder::Fine);
            assert!(poll_once(&mut timer).is_pending());
            // Past the wheel's early wake-up, before the deadline (on a
            // busy machine the sleep may end after it: then only its
            // firing on time is checked).
            tokio::time::sleep_until((now + FINE_WITHIN * 3 / 2).into()).await;
            if poll_once(&mut timer).is_pending() {
                assert_eq!(timer.holder, Holder::Fine, "still on the wheel");
                std::future::poll_fn(|cx| timer.poll(cx)).await;
            }
            assert!(Instant::now() >= deadline, "fired before its deadline");
        });
    }

    #[test]
    fn a_rearmed_fine_timer_fires_for_its_new_deadline_only() {
        runtime().block_on(async {
            let mut timer = Timer::new();
            let now = Instant::now();
            timer.arm(now + Duration::from_millis(1), now);
            let later = now + Duration::from_millis(40);
            timer.arm(later, now);
            tokio::time::sleep(Duration::from_millis(5)).await;
            if poll_once(&mut timer).is_ready() {
                assert!(Instant::now() >= later, "fired for the old deadline");
            }
            std::future::poll_fn(|cx| timer.poll(cx)).await;
            assert!(Instant::now() >= later);
        });
    }
}
