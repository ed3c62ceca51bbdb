//! A connection's way out, as every driver runs it: idle → GOAWAY, a
//! shutdown → GOAWAY, GOAWAY → the drain deadline → abort, abort → a last
//! chance for the final bytes to leave. Runtime-free: the driver reports
//! activity and the time, and sleeps until [`Lifecycle::deadline`].

use std::time::{Duration, Instant};

use crate::{Application, CloseCause, Endpoint, Reason};

/// After an abort, how long the last bytes (the GOAWAY) may take to leave.
const FINAL_FLUSH: Duration = Duration::from_secs(1);

/// Timing and memory bounds of a driver's loop.
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
pub enum Ending {
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

/// One connection's idle timer and drain phases.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    options: DriverOptions,
    phase: Phase,
    last_activity: Instant,
    shutdown_seen: bool,
}

impl Lifecycle {
    pub fn new(options: &DriverOptions, now: Instant) -> Self {
        Lifecycle {
            options: options.clone(),
            phase: Phase::Running,
            last_activity: now,
            shutdown_seen: false,
        }
    }

    /// Bytes moved (either way) at `now`: the idle timer starts over.
    pub fn activity(&mut self, now: Instant) {
        self.last_activity = now;
    }

    /// Whether the shutdown signal was already heard (a driver then stops
    /// waiting for it).
    pub fn shutdown_seen(&self) -> bool {
        self.shutdown_seen
    }

    /// The earliest of the core's deadline and this lifecycle's own.
    pub fn deadline<A: Application>(&self, endpoint: &Endpoint<A>) -> Option<Instant> {
        let own = match self.phase {
            Phase::Running => self.options.idle_timeout.map(|t| self.last_activity + t),
            Phase::Draining { abort_at } => Some(abort_at),
            Phase::Aborted { give_up_at } => Some(give_up_at),
        };
        [endpoint.poll_timeout(), own].into_iter().flatten().min()
    }

    /// The shutdown signal fired: a running connection goes away gracefully.
    pub fn shutdown<A: Application>(&mut self, endpoint: &mut Endpoint<A>, now: Instant) {
        self.shutdown_seen = true;
        if let Phase::Running = self.phase {
            self.begin_drain(endpoint, now, CloseCause::LocalGoAway);
        }
    }

    /// The deadline came: hands the time to the core, then moves on the
    /// way out if its own deadline passed. `Some` when the loop is over.
    pub fn timeout<A: Application>(
        &mut self,
        endpoint: &mut Endpoint<A>,
        now: Instant,
    ) -> Option<Ending> {
        endpoint.handle_timeout(now);
        match self.phase {
            Phase::Running
                if self
                    .options
                    .idle_timeout
                    .is_some_and(|t| self.last_activity + t <= now) =>
            {
                self.begin_drain(endpoint, now, CloseCause::IdleTimeout);
            }
            Phase::Draining { abort_at } if abort_at <= now => {
                endpoint.abort_because(now, Reason::NO_ERROR, CloseCause::DrainExpired);
                self.phase = Phase::Aborted {
                    give_up_at: now + FINAL_FLUSH,
                };
            }
            Phase::Aborted { give_up_at } if give_up_at <= now => {
                return Some(Ending::DrainExpired);
            }
            _ => {}
        }
        None
    }

    /// Asks the connection to go away gracefully, for `cause`, and sets when
    /// to stop waiting.
    fn begin_drain<A: Application>(
        &mut self,
        endpoint: &mut Endpoint<A>,
        now: Instant,
        cause: CloseCause,
    ) {
        endpoint.go_away_because(now, cause);
        self.phase = Phase::Draining {
            abort_at: now + self.options.drain_timeout,
        };
    }
}
