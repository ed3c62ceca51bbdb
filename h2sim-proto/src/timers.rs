//! Timers as a fixed table of deadlines (the shape quinn-proto keeps): one
//! slot per kind, `earliest` is what `poll_timeout` reports, and `expired`
//! is what `handle_timeout` acts on. Two tables use it: the connection's,
//! for its way out (the same for both protocols and for a server still
//! detecting the protocol), and the HTTP/2 session's, for the timers of
//! its own frames (SETTINGS acknowledgement, the shutdown PING,
//! keep-alive).

use std::time::Instant;

/// What a deadline in a table is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timer {
    /// No bytes moved either way for `Config::idle_timeout`: go away.
    Idle,
    /// A server has read part of a request head (or of the bytes that
    /// tell the protocol) for `Config::head_read_timeout`: cut it
    /// (slowloris).
    HeadRead,
    /// Our GOAWAY (or `connection: close`) went out
    /// `Config::drain_timeout` ago and streams are still open: cut them.
    Drain,
    /// HTTP/2: our oldest SETTINGS in flight is unacknowledged after
    /// `Config::settings_timeout` (RFC 9113 §6.5.3): SETTINGS_TIMEOUT.
    SettingsAck,
    /// HTTP/2 server: the PING after our first GOAWAY is unanswered; the
    /// second GOAWAY, naming the last stream taken, goes out anyway.
    ShutdownPing,
    /// HTTP/2 client, going away: the end of the wait for the answer to
    /// our GOAWAY's PING.
    ReplyWait,
    /// HTTP/2 with `Config::keepalive`: nothing came in for that long (a
    /// PING goes out), or the keep-alive PING went unanswered (the
    /// connection ends).
    KeepAlive,
}

impl Timer {
    /// The connection's timers, in the order `handle_timeout` acts on them
    /// when several are due: a cut before a graceful end it would replace
    /// anyway.
    pub(crate) const CONNECTION: [Timer; 3] = [Timer::HeadRead, Timer::Drain, Timer::Idle];

    const COUNT: usize = 7;

    fn slot(self) -> usize {
        match self {
            Timer::Idle => 0,
            Timer::HeadRead => 1,
            Timer::Drain => 2,
            Timer::SettingsAck => 3,
            Timer::ShutdownPing => 4,
            Timer::ReplyWait => 5,
            Timer::KeepAlive => 6,
        }
    }
}

/// One optional deadline per [`Timer`].
#[derive(Debug, Clone, Default)]
pub(crate) struct TimerTable([Option<Instant>; Timer::COUNT]);

impl TimerTable {
    pub(crate) fn set(&mut self, timer: Timer, at: Instant) {
        self.0[timer.slot()] = Some(at);
    }

    pub(crate) fn stop(&mut self, timer: Timer) {
        self.0[timer.slot()] = None;
    }

    /// Sets `timer` to `at`, or stops it if `at` is `None`.
    pub(crate) fn set_or_stop(&mut self, timer: Timer, at: Option<Instant>) {
        self.0[timer.slot()] = at;
    }

    pub(crate) fn get(&self, timer: Timer) -> Option<Instant> {
        self.0[timer.slot()]
    }

    pub(crate) fn is_set(&self, timer: Timer) -> bool {
        self.get(timer).is_some()
    }

    /// The first deadline in the table.
    pub(crate) fn earliest(&self) -> Option<Instant> {
        self.0.iter().flatten().min().copied()
    }

    /// Whether `timer` is set and due at `now`; a due timer is stopped, so
    /// it fires once.
    pub(crate) fn expired(&mut self, timer: Timer, now: Instant) -> bool {
        let due = self.get(timer).is_some_and(|t| t <= now);
        if due {
            self.stop(timer);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn earliest_is_the_first_set_deadline_and_a_due_timer_fires_once() {
        let now = Instant::now();
        let mut table = TimerTable::default();
        assert_eq!(table.earliest(), None);
        table.set(Timer::Idle, now + Duration::from_secs(5));
        table.set(Timer::Drain, now + Duration::from_secs(2));
        assert_eq!(table.earliest(), Some(now + Duration::from_secs(2)));
        assert!(!table.expired(Timer::Drain, now));
        assert!(table.expired(Timer::Drain, now + Duration::from_secs(2)));
        assert!(!table.expired(Timer::Drain, now + Duration::from_secs(3)));
        assert_eq!(table.earliest(), Some(now + Duration::from_secs(5)));
        table.stop(Timer::Idle);
        assert_eq!(table.earliest(), None);
    }
}
