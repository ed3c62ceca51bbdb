//! Which scenario instance a notification belongs to, and how long after
//! that instance's latest request it came (`--listen`).
//!
//! A subscription's notification names what it is about: its subscription
//! id, the NF instance or the UE (TS 29.510 `nfInstanceUri`, TS 29.503
//! `notifyItems[].resourceId`). While listening, each scenario instance
//! registers its values (its `-R` symbols' and every value it captures)
//! with a clock that every request it sends stamps; a notification that
//! carries one of them, in a path segment or a JSON string of its body (or
//! a path segment of such a string, a URI), is timed against that clock.
//!
//! A peer may send the notification as soon as it has answered, so it can
//! reach the listener before the client has read the answer whose captured
//! value it carries. A notification that names no registered value is
//! therefore kept a while (bounded in count, size and age) and matched when
//! the value is registered, if it came after the instance's latest request:
//! it is timed as it would have been had the value been there first, and
//! counted once either way.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::report::Notifications;

/// When a scenario instance last sent a request, in nanoseconds after the
/// run's epoch (shared with the registry, stamped without a lock).
#[derive(Debug)]
pub struct Clock(AtomicU64);

/// Values registered at most; past it new values are not registered (their
/// notifications are counted, not timed), so a long run's memory is bounded.
pub const MAX_VALUES: usize = 1 << 20;

/// Unmatched notifications kept at most, waiting for their value: the race
/// lasts as long as a response takes to be read, so a few thousand cover
/// the fastest runs; past it the oldest is given up.
const MAX_WAITING: usize = 4096;

/// Bytes of the candidate strings of the waiting notifications, at most (a
/// peer's bodies cannot grow the client's memory past it).
const MAX_WAITING_BYTES: usize = 8 << 20;

/// How long an unmatched notification waits for its value: far longer than
/// a response takes to be read after its notification came.
const MAX_WAIT: Duration = Duration::from_secs(5);

/// The values of the run's scenario instances and the notifications'
/// figures, shared by every connection and the listener.
#[derive(Debug)]
pub struct Correlations {
    epoch: Instant,
    /// One lock for both: a notification that misses must be waiting
    /// before its value can be registered, or the two could pass by.
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    values: HashMap<String, Arc<Clock>>,
    waiting: Waiting,
    figures: Notifications,
}

/// Unmatched notifications, oldest first, and an index from each string
/// they carry to them.
#[derive(Debug, Default)]
struct Waiting {
    next: u64,
    queue: VecDeque<Unmatched>,
    by_value: HashMap<String, Vec<u64>>,
    bytes: usize,
}

#[derive(Debug)]
struct Unmatched {
    id: u64,
    arrived: Instant,
    candidates: Vec<String>,
}

impl Unmatched {
    fn bytes(&self) -> usize {
        self.candidates.iter().map(String::len).sum()
    }
}

impl Waiting {
    /// Keeps a notification that matched nothing, dropping the oldest ones
    /// past the bounds (they stay counted as received, not correlated).
    fn keep(&mut self, candidates: Vec<String>, arrived: Instant) {
        while self
            .queue
            .front()
            .is_some_and(|n| arrived.saturating_duration_since(n.arrived) > MAX_WAIT)
        {
            self.drop_oldest();
        }
        let id = self.next;
        self.next += 1;
        let notification = Unmatched {
            id,
            arrived,
            candidates,
        };
        let bytes = notification.bytes();
        if bytes > MAX_WAITING_BYTES {
            return;
        }
        while self.queue.len() >= MAX_WAITING || self.bytes + bytes > MAX_WAITING_BYTES {
            self.drop_oldest();
        }
        for candidate in &notification.candidates {
            self.by_value.entry(candidate.clone()).or_default().push(id);
        }
        self.bytes += bytes;
        self.queue.push_back(notification);
    }

    fn drop_oldest(&mut self) {
        if let Some(n) = self.queue.front() {
            let id = n.id;
            self.take(id);
        }
    }

    /// Removes the notification `id`, and its index entries.
    fn take(&mut self, id: u64) -> Option<Unmatched> {
        let at = self.queue.iter().position(|n| n.id == id)?;
        let n = self.queue.remove(at)?;
        for candidate in &n.candidates {
            if let Some(ids) = self.by_value.get_mut(candidate) {
                ids.retain(|&i| i != id);
                if ids.is_empty() {
                    self.by_value.remove(candidate);
                }
            }
        }
        self.bytes -= n.bytes();
        Some(n)
    }

    /// The waiting notifications that carry `value` and came at or after
    /// `sent` (the instance's latest request: one that came before it
    /// cannot be its answer's), removed.
    fn matching(&mut self, value: &str, sent: Instant) -> Vec<Instant> {
        let ids = self.by_value.get(value).cloned().unwrap_or_default();
        let mut found = Vec::new();
        for id in ids {
            if self.queue.iter().any(|n| n.id == id && n.arrived >= sent)
                && let Some(n) = self.take(id)
            {
                found.push(n.arrived);
            }
        }
        found
    }
}

impl Correlations {
    pub fn new(epoch: Instant) -> Correlations {
        Correlations {
            epoch,
            state: Mutex::new(State::default()),
        }
    }

    /// A new instance's clock, stamped `now`.
    pub fn clock(&self, now: Instant) -> Arc<Clock> {
        let clock = Arc::new(Clock(AtomicU64::new(0)));
        self.stamp(&clock, now);
        clock
    }

    /// The instance sent a request at `now`.
    pub fn stamp(&self, clock: &Clock, now: Instant) {
        let nanos = now.saturating_duration_since(self.epoch).as_nanos();
        clock
            .0
            .store(u64::try_from(nanos).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// When the instance owning `clock` sent its latest request.
    fn sent(&self, clock: &Clock) -> Instant {
        self.epoch + Duration::from_nanos(clock.0.load(Ordering::Relaxed))
    }

    /// Registers values of the instance owning `clock` (empty ones, which
    /// would match anything, are left out), and times the waiting
    /// notifications that carry them.
    pub fn register<'a>(&self, values: impl IntoIterator<Item = &'a str>, clock: &Arc<Clock>) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let state = &mut *state;
        let sent = self.sent(clock);
        for value in values.into_iter().filter(|v| !v.is_empty()) {
            for arrived in state.waiting.matching(value, sent) {
                state.figures.correlated += 1;
                state
                    .figures
                    .delay
                    .record(arrived.saturating_duration_since(sent));
            }
            if state.values.len() >= MAX_VALUES && !state.values.contains_key(value) {
                break;
            }
            state.values.insert(value.to_owned(), clock.clone());
        }
    }

    /// A notification with `path` and `body` arrived complete at `now`:
    /// counted, and timed from its instance's latest request if it names
    /// one; kept for the values still to come if it does not.
    pub fn arrived(&self, path: &str, body: &[u8], now: Instant) {
        // Parsed before the lock: the run's connections register under it.
        let json = serde_json::from_slice::<Value>(body).ok();
        let mut strings = Vec::new();
        if let Some(json) = &json {
            collect_strings(json, &mut strings, 0);
        }
        let candidates = || {
            std::iter::once(path)
                .chain(strings.iter().copied())
                .flat_map(|s| std::iter::once(s).chain(segments(s)))
        };
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let state = &mut *state;
        state.figures.received += 1;
        match candidates().find_map(|c| state.values.get(c)) {
            Some(clock) => {
                let delay = now.saturating_duration_since(self.sent(clock));
                state.figures.correlated += 1;
                state.figures.delay.record(delay);
            }
            None => state
                .waiting
                .keep(candidates().map(str::to_owned).collect(), now),
        }
    }

    /// The notifications' figures so far.
    pub fn notifications(&self) -> Notifications {
        self.state
            .lock()
            .map(|s| s.figures.clone())
            .unwrap_or_default()
    }
}

/// Path segments and query values of a URI or path.
fn segments(s: &str) -> impl Iterator<Item = &str> {
    s.split(['/', '?', '&', '=', '#']).filter(|p| !p.is_empty())
}

/// Depth of a body's JSON searched for values; deeper strings are not
/// looked at (a peer's body cannot make the search unbounded).
const MAX_DEPTH: usize = 16;

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items
            .iter()
            .for_each(|v| collect_strings(v, out, depth + 1)),
        Value::Object(fields) => fields
            .values()
            .for_each(|v| collect_strings(v, out, depth + 1)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A notification naming a captured id, in its body (as a URI's
    /// segment) or its path, is timed from its instance's latest request.
    #[test]
    fn notifications_find_their_instance() {
        let epoch = Instant::now();
        let c = Correlations::new(epoch);
        let a = c.clock(epoch + ms(5));
        c.register(["sub-1", ""], &a);
        let b = c.clock(epoch + ms(7));
        c.register(["imsi-001010000000002"], &b);
        c.stamp(&a, epoch + ms(10));
        let at = epoch + ms(25);
        let body = br#"{"event":"NF_REGISTERED","nfInstanceUri":"http://nrf/nnrf-nfm/v1/subscriptions/sub-1"}"#;
        c.arrived("/notify", body, at);
        c.arrived("/cb/imsi-001010000000002/sdm", b"not json", at);
        c.arrived("/notify", br#"{"x":["sub-9"]}"#, at);
        c.arrived("/", b"", at);
        let n = c.notifications();
        assert_eq!((n.received, n.correlated), (4, 2));
        assert_eq!(n.delay.count(), 2);
        assert_eq!(n.delay.percentile(0.0).as_millis(), 15);
        assert_eq!(n.delay.percentile(100.0).as_millis(), 18);
    }

    /// The peer notifies as it answers: the notification carrying the id
    /// of a subscription comes before the client has read the 201 that
    /// captures it. It is timed when the id is registered, from the
    /// subscribing request, and counted once.
    #[test]
    fn a_notification_before_its_value_is_matched_when_the_value_comes() {
        let epoch = Instant::now();
        let c = Correlations::new(epoch);
        let instance = c.clock(epoch + ms(10));
        c.arrived("/x", br#"{"subscriptionId":"sub-7"}"#, epoch + ms(13));
        let n = c.notifications();
        assert_eq!((n.received, n.correlated), (1, 0));
        c.register(["sub-7"], &instance);
        c.register(["sub-7"], &instance);
        let n = c.notifications();
        assert_eq!((n.received, n.correlated), (1, 1));
        assert_eq!(n.delay.percentile(100.0).as_millis(), 3);
        // Once registered, the value is found at arrival as before.
        c.arrived("/x/sub-7", b"", epoch + ms(20));
        assert_eq!(c.notifications().correlated, 2);
    }

    /// A waiting notification that came before the instance's latest
    /// request is not its answer; one that waited past the bounds is given
    /// up (counted, never timed).
    #[test]
    fn waiting_notifications_are_bounded() {
        let epoch = Instant::now();
        let c = Correlations::new(epoch);
        c.arrived("/x/early", b"", epoch + ms(1));
        c.register(["early"], &c.clock(epoch + ms(2)));
        assert_eq!(c.notifications().correlated, 0);

        c.arrived("/x/stale", b"", epoch + ms(10));
        c.arrived("/x/other", b"", epoch + ms(10) + MAX_WAIT + ms(1));
        c.register(["stale", "other"], &c.clock(epoch + ms(5)));
        assert_eq!(c.notifications().correlated, 1, "only the fresh one");

        for i in 0..MAX_WAITING + 1 {
            c.arrived(&format!("/x/n{i}"), b"", epoch + ms(20));
        }
        let state = c.state.lock().unwrap();
        assert_eq!(state.waiting.queue.len(), MAX_WAITING);
        assert!(!state.waiting.by_value.contains_key("n0"));
        assert!(state.waiting.by_value.contains_key("n1"));
    }
}
