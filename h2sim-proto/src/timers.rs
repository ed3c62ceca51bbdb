//! Timers as a fixed table of deadlines (the shape quinn-proto keeps): one
//! slot per kind, `earliest` is what `poll_timeout` reports, and `expired`
//! is what `handle_timeout` acts on. Two tables use it: the connection's,
//! for its way out (the same for both protocols and for a server still
//! detecting the protocol), and the HTTP/2 session's, for the timers of
//! its own frames (SETTINGS acknowledgement, the shutdown PING,
//! keep-alive).

use std::marker::PhantomData;
use std::time::Instant;

/// The connection's deadlines, the same for both protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnectionTimer {
    /// No bytes moved either way for `Config::idle_timeout`: go away.
    Idle,
    /// A server has read part of a request head (or of the bytes that
    /// tell the protocol) for `Config::head_read_timeout`: cut it
    /// (slowloris).
    HeadRead,
    /// Our GOAWAY (or `connection: close`) went out
    /// `Config::drain_timeout` ago and streams are still open: cut them.
    Drain,
}

impl ConnectionTimer {
    /// Every one, in the order `handle_timeout` acts on them when several
    /// are due: a cut before a graceful end it would replace anyway.
    pub(crate) const ALL: [ConnectionTimer; 3] = [
        ConnectionTimer::HeadRead,
        ConnectionTimer::Drain,
        ConnectionTimer::Idle,
    ];
}

/// The HTTP/2 session's deadlines, for the timers of its own frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionTimer {
    /// Our oldest SETTINGS in flight is unacknowledged after
    /// `Config::settings_timeout` (RFC 9113 §6.5.3): SETTINGS_TIMEOUT.
    SettingsAck,
    /// Server: the PING after our first GOAWAY is unanswered; the second
    /// GOAWAY, naming the last stream taken, goes out anyway.
    ShutdownPing,
    /// Client, going away: the end of the wait for the answer to the PING
    /// sent with our GOAWAY.
    ReplyWait,
    /// With `Config::keepalive`: nothing came in for that long (a PING
    /// goes out), or the keep-alive PING went unanswered (the connection
    /// ends).
    KeepAlive,
}

/// A kind of deadline: its slot in a table of `N`.
pub(crate) trait Slot: Copy {
    fn slot(self) -> usize;
}

impl Slot for ConnectionTimer {
    fn slot(self) -> usize {
        self as usize
    }
}

impl Slot for SessionTimer {
    fn slot(self) -> usize {
        self as usize
    }
}

/// The connection's table: one slot per [`ConnectionTimer`].
pub(crate) type ConnectionTimers = TimerTable<ConnectionTimer, 3>;
/// The HTTP/2 session's table: one slot per [`SessionTimer`].
pub(crate) type SessionTimers = TimerTable<SessionTimer, 4>;

/// One optional deadline per timer of kind `T`: a table holds only its
/// own kind, and each connection keeps a slot for each of its timers and
/// no more (every slot is 16 octets of every connection's memory).
#[derive(Debug, Clone)]
pub(crate) struct TimerTable<T, const N: usize> {
    at: [Option<Instant>; N],
    kind: PhantomData<T>,
}

impl<T, const N: usize> Default for TimerTable<T, N> {
    fn default() -> Self {
        TimerTable {
            at: [None; N],
            kind: PhantomData,
        }
    }
}

impl<T: Slot, const N: usize> TimerTable<T, N> {
    pub(crate) fn set(&mut self, timer: T, at: Instant) {
        self.at[timer.slot()] = Some(at);
    }

    pub(crate) fn stop(&mut self, timer: T) {
        self.at[timer.slot()] = None;
    }

    /// Sets `timer` to `at`, or stops it if `at` is `None`.
    pub(crate) fn set_or_stop(&mut self, timer: T, at: Option<Instant>) {
        self.at[timer.slot()] = at;
    }

    pub(crate) fn get(&self, timer: T) -> Option<Instant> {
        self.at[timer.slot()]
    }

    pub(crate) fn is_set(&self, timer: T) -> bool {
        self.get(timer).is_some()
    }

    /// The first deadline in the table.
    pub(crate) fn earliest(&self) -> Option<Instant> {
        self.at.iter().flatten().min().copied()
    }

    /// Whether `timer` is set and due at `now`; a due timer is stopped, so
    /// it fires once.
    pub(crate) fn expired(&mut self, timer: T, now: Instant) -> bool {
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
        let mut table = ConnectionTimers::default();
        assert_eq!(table.earliest(), None);
        table.set(ConnectionTimer::Idle, now + Duration::from_secs(5));
        table.set(ConnectionTimer::Drain, now + Duration::from_secs(2));
        assert_eq!(table.earliest(), Some(now + Duration::from_secs(2)));
        assert!(!table.expired(ConnectionTimer::Drain, now));
        assert!(table.expired(ConnectionTimer::Drain, now + Duration::from_secs(2)));
        assert!(!table.expired(ConnectionTimer::Drain, now + Duration::from_secs(3)));
        assert_eq!(table.earliest(), Some(now + Duration::from_secs(5)));
        table.stop(ConnectionTimer::Idle);
        assert_eq!(table.earliest(), None);
    }

    /// A table has a slot for each timer of its kind: the last is in range.
    #[test]
    fn each_kind_fits_its_table() {
        let now = Instant::now();
        let mut connection = ConnectionTimers::default();
        for timer in ConnectionTimer::ALL {
            connection.set(timer, now);
        }
        let mut session = SessionTimers::default();
        session.set(SessionTimer::KeepAlive, now);
        assert_eq!(session.earliest(), Some(now));
    }
}
