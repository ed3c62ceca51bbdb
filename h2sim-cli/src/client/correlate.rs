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

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// When a scenario instance last sent a request, in nanoseconds after the
/// run's epoch (shared with the registry, stamped without a lock).
#[derive(Debug)]
pub struct Clock(AtomicU64);

/// Values registered at most; past it new values are not registered (their
/// notifications are counted, not timed), so a long run's memory is bounded.
pub const MAX_VALUES: usize = 1 << 20;

/// The values of the run's scenario instances, shared by every connection
/// and the listener.
#[derive(Debug)]
pub struct Correlations {
    epoch: Instant,
    values: Mutex<HashMap<String, Arc<Clock>>>,
}

impl Correlations {
    pub fn new(epoch: Instant) -> Correlations {
        Correlations {
            epoch,
            values: Mutex::new(HashMap::new()),
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

    /// Registers values of the instance owning `clock` (empty ones, which
    /// would match anything, are left out).
    pub fn register<'a>(&self, values: impl IntoIterator<Item = &'a str>, clock: &Arc<Clock>) {
        let Ok(mut map) = self.values.lock() else {
            return;
        };
        for value in values.into_iter().filter(|v| !v.is_empty()) {
            if map.len() >= MAX_VALUES && !map.contains_key(value) {
                break;
            }
            map.insert(value.to_owned(), clock.clone());
        }
    }

    /// A notification with `path` and `body` arrived complete at `now`:
    /// how long after its instance's latest request, if it names one.
    pub fn delay(&self, path: &str, body: &[u8], now: Instant) -> Option<Duration> {
        // Parsed before the lock: the run's connections register under it.
        let json = serde_json::from_slice::<Value>(body).ok();
        let mut strings = Vec::new();
        if let Some(json) = &json {
            collect_strings(json, &mut strings, 0);
        }
        let map = self.values.lock().ok()?;
        let found = std::iter::once(path)
            .chain(strings)
            .flat_map(|s| std::iter::once(s).chain(segments(s)))
            .find_map(|candidate| map.get(candidate))?;
        let nanos = found.0.load(Ordering::Relaxed);
        let sent = self.epoch + Duration::from_nanos(nanos);
        Some(now.saturating_duration_since(sent))
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

    /// A notification naming a captured id, in its body (as a URI's
    /// segment) or its path, is timed from its instance's latest request.
    #[test]
    fn notifications_find_their_instance() {
        let epoch = Instant::now();
        let c = Correlations::new(epoch);
        let a = c.clock(epoch + Duration::from_millis(5));
        c.register(["sub-1", ""], &a);
        let b = c.clock(epoch + Duration::from_millis(7));
        c.register(["imsi-001010000000002"], &b);
        c.stamp(&a, epoch + Duration::from_millis(10));
        let at = epoch + Duration::from_millis(25);
        let body = br#"{"event":"NF_REGISTERED","nfInstanceUri":"http://nrf/nnrf-nfm/v1/subscriptions/sub-1"}"#;
        assert_eq!(
            c.delay("/notify", body, at),
            Some(Duration::from_millis(15))
        );
        assert_eq!(
            c.delay("/cb/imsi-001010000000002/sdm", b"not json", at),
            Some(Duration::from_millis(18))
        );
        assert_eq!(c.delay("/notify", br#"{"x":["sub-9"]}"#, at), None);
        assert_eq!(
            c.delay("/", b"", at),
            None,
            "the empty value is not registered"
        );
    }
}
