//! A shutdown signal that any thread can trigger and every executor hears.
//!
//! The process-wide [`Shutdown`] is a flag and a list of wakers behind a
//! mutex: only one task per executor waits on it (and a client's slots),
//! so the lock is taken a handful of times, never per request. Within an
//! executor the signal fans out through a [`LocalSignal`], which each
//! connection joins once, so a connection's loop only reads a `Cell`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::poll_fn;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// Asks every connection that holds a clone to wind down gracefully: HTTP/2
/// sends GOAWAY, HTTP/1.1 answers with `connection: close`, open streams get
/// the configured drain time to finish.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    triggered: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

impl Shutdown {
    pub fn new() -> Self {
        Shutdown::default()
    }

    /// Starts the shutdown; later calls do nothing.
    pub fn trigger(&self) {
        if self.inner.triggered.swap(true, Ordering::AcqRel) {
            return;
        }
        let wakers = match self.inner.wakers.lock() {
            Ok(mut w) => std::mem::take(&mut *w),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        for waker in wakers {
            waker.wake();
        }
    }

    /// Triggers this shutdown on the first SIGINT (Ctrl-C) or SIGTERM (what
    /// `kill` and CI send). Both handlers are installed before this
    /// returns, so a signal that comes right after it is not lost; a small
    /// thread waits for them. An error means the handlers could not be
    /// installed, and the process keeps the default (it dies on the signal).
    pub fn trigger_on_signals(&self) -> std::io::Result<()> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
        let shutdown = self.clone();
        std::thread::Builder::new()
            .name("h2sim-glommio-signals".into())
            .spawn(move || {
                if signals.forever().next().is_some() {
                    shutdown.trigger();
                }
            })?;
        Ok(())
    }

    pub fn is_triggered(&self) -> bool {
        self.inner.triggered.load(Ordering::Acquire)
    }

    /// Completes once the shutdown has been triggered. Works from any
    /// executor (glommio wakes a task from a foreign thread through its
    /// executor's notifier).
    pub async fn triggered(&self) {
        poll_fn(|cx| self.poll_triggered(cx)).await;
    }

    fn poll_triggered(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.is_triggered() {
            return Poll::Ready(());
        }
        let mut wakers = match self.inner.wakers.lock() {
            Ok(w) => w,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Checked again under the lock: a trigger in between has already
        // taken the list and would not see this waker.
        if self.is_triggered() {
            return Poll::Ready(());
        }
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// One executor's view of a [`Shutdown`]: connections on this executor
/// register here, and one task relays the process-wide signal.
#[derive(Debug, Clone, Default)]
pub(crate) struct LocalSignal {
    inner: Rc<LocalInner>,
}

#[derive(Debug, Default)]
struct LocalInner {
    triggered: Cell<bool>,
    next_id: Cell<u64>,
    wakers: RefCell<HashMap<u64, Waker>>,
}

impl LocalSignal {
    /// A signal that fires when `shutdown` does; the relay task runs on the
    /// current executor until then.
    pub(crate) fn relay(shutdown: &Shutdown) -> Self {
        let local = LocalSignal::default();
        let (relay, shutdown) = (local.clone(), shutdown.clone());
        glommio::spawn_local(async move {
            shutdown.triggered().await;
            relay.fire();
        })
        .detach();
        local
    }

    pub(crate) fn fire(&self) {
        self.inner.triggered.set(true);
        let wakers = std::mem::take(&mut *self.inner.wakers.borrow_mut());
        for (_, waker) in wakers {
            waker.wake();
        }
    }

    pub(crate) fn is_fired(&self) -> bool {
        self.inner.triggered.get()
    }

    /// A registration for one task, which stays valid for the task's life
    /// (a glommio task keeps its waker), and is removed when dropped.
    pub(crate) fn subscribe(&self) -> Subscription {
        let id = self.inner.next_id.get();
        self.inner.next_id.set(id + 1);
        Subscription {
            signal: self.clone(),
            id,
            registered: false,
        }
    }

    /// Completes once fired.
    pub(crate) async fn fired(&self) {
        let mut sub = self.subscribe();
        poll_fn(|cx| sub.poll(cx)).await;
    }
}

/// One task's registration with a [`LocalSignal`].
#[derive(Debug)]
pub(crate) struct Subscription {
    signal: LocalSignal,
    id: u64,
    registered: bool,
}

impl Subscription {
    /// Ready once the signal fired; otherwise registers the task's waker,
    /// once: later polls cost one `Cell` read.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.is_fired() {
            return Poll::Ready(());
        }
        if !self.registered {
            self.signal
                .inner
                .wakers
                .borrow_mut()
                .insert(self.id, cx.waker().clone());
            self.registered = true;
        }
        Poll::Pending
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if self.registered {
            self.signal.inner.wakers.borrow_mut().remove(&self.id);
        }
    }
}
