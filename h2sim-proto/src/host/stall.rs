//! When a full output backlog stops holding back the driver's reads.
//!
//! A driver stops reading while its output backlog is over its bound, so
//! that a peer sending requests without reading the answers meets TCP
//! backpressure. A peer that finishes a write before it reads again (Go's
//! HTTP/2 client writes a request body under the lock its reader needs to
//! answer frames) then waits on us while we wait on it: neither side reads,
//! both are blocked writing. Reading on whenever the backlog is full breaks
//! that, but costs a busy pair of endpoints a turn for every trickle of
//! requests while its answers wait (`h2sim bench`'s 4k and 10k cells fell
//! to half in some runs), where stopping gathers them into one batch.
//!
//! So reads stop on a full backlog as before, and start again only when the
//! writes have stood still for [`STALL`] with the backlog full: a peer that
//! reads, however slowly, never meets it. While reading on, what the peer
//! can make us queue is bounded by the protocol, not by the backlog: its
//! concurrent streams and flow-control windows over HTTP/2 (a refused
//! stream beyond the limit counts towards the reset-flood limit), and the
//! core's own bound on queued answers over HTTP/1.1, which stops the core
//! wanting input.

use std::time::{Duration, Instant};

/// How long writes may stand still with the backlog full before reads go
/// on: long enough that a peer which reads at all has read within it (a
/// loaded peer takes well under a millisecond for a turn), short enough
/// that a peer which can only read once it has written waits little.
pub(crate) const STALL: Duration = Duration::from_millis(10);

/// Watches a full backlog for writes that stopped.
#[derive(Debug, Default)]
pub(crate) struct WriteStall {
    /// When to look again, set when the backlog is found full. It stays set
    /// when the backlog drains, and is only dropped when it comes: a
    /// connection whose backlog fills and drains every turn then arms a
    /// timer once per [`STALL`], not once a turn.
    check_at: Option<Instant>,
    /// Bytes were written since the check was set.
    wrote: bool,
    /// Writes stood still with the backlog full for a whole [`STALL`]: read
    /// on until the backlog is under its bound again.
    reading_on: bool,
}

impl WriteStall {
    /// The backlog was measured at `now`: starts the watch if it is full,
    /// ends a read-on once it is not.
    pub(crate) fn backlog(&mut self, now: Instant, full: bool) {
        if !full {
            self.reading_on = false;
        } else if self.check_at.is_none() && !self.reading_on {
            self.check_at = Some(now + STALL);
            self.wrote = false;
        }
    }

    /// Bytes were written.
    pub(crate) fn wrote(&mut self) {
        self.wrote = true;
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.check_at
    }

    /// The deadline may have come, with the backlog `full` or not: reads go
    /// on if nothing was written since the watch began; a backlog that is
    /// still full but moved is watched again.
    pub(crate) fn handle_timeout(&mut self, now: Instant, full: bool) {
        if self.check_at.is_none_or(|t| now < t) {
            return;
        }
        self.check_at = None;
        if full {
            if self.wrote {
                self.backlog(now, true);
            } else {
                self.reading_on = true;
            }
        }
    }

    /// Whether to read although the backlog is full.
    pub(crate) fn reading_on(&self) -> bool {
        self.reading_on
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_that_stand_still_on_a_full_backlog_let_reads_go_on() {
        let now = Instant::now();
        let mut stall = WriteStall::default();
        stall.backlog(now, true);
        assert_eq!(stall.deadline(), Some(now + STALL));
        stall.handle_timeout(now + STALL / 2, true);
        assert!(!stall.reading_on(), "not yet due");
        stall.handle_timeout(now + STALL, true);
        assert!(stall.reading_on());
        assert_eq!(stall.deadline(), None);
        // Reading on lasts until the backlog is under its bound.
        stall.backlog(now + STALL, true);
        assert!(stall.reading_on());
        assert_eq!(stall.deadline(), None);
        stall.backlog(now + STALL * 2, false);
        assert!(!stall.reading_on());
    }

    #[test]
    fn a_full_backlog_that_moves_is_watched_again() {
        let now = Instant::now();
        let mut stall = WriteStall::default();
        stall.backlog(now, true);
        stall.wrote();
        stall.handle_timeout(now + STALL, true);
        assert!(!stall.reading_on());
        assert_eq!(stall.deadline(), Some(now + STALL * 2));
        stall.handle_timeout(now + STALL * 2, true);
        assert!(stall.reading_on());
    }

    #[test]
    fn a_backlog_that_drained_ends_the_watch_when_it_comes() {
        let now = Instant::now();
        let mut stall = WriteStall::default();
        stall.backlog(now, true);
        stall.backlog(now, false);
        // The watch stays set (no timer re-armed per turn) ...
        assert_eq!(stall.deadline(), Some(now + STALL));
        stall.backlog(now, true);
        assert_eq!(stall.deadline(), Some(now + STALL));
        // ... and ends without reading on when the backlog is no longer full.
        stall.handle_timeout(now + STALL, false);
        assert!(!stall.reading_on());
        assert_eq!(stall.deadline(), None);
    }
}
