//! Rate limits on what a peer may make us do per period.

use std::time::{Duration, Instant};

/// Counts events in fixed periods; more than `max` in one period trips it.
/// Fixed periods are cruder than a sliding window but cost two fields and no
/// allocation, and the bound they give (at most 2 × max in any period) is
/// what matters against floods.
#[derive(Debug, Clone)]
pub(crate) struct RateLimit {
    max: u32,
    period: Duration,
    started: Option<Instant>,
    count: u32,
}

impl RateLimit {
    pub(crate) fn new(max: u32, period: Duration) -> Self {
        RateLimit {
            max,
            period,
            started: None,
            count: 0,
        }
    }

    /// Records one event at `now`; false when the limit is exceeded.
    pub(crate) fn hit(&mut self, now: Instant) -> bool {
        match self.started {
            Some(start) if now.saturating_duration_since(start) < self.period => {}
            _ => {
                self.started = Some(now);
                self.count = 0;
            }
        }
        self.count = self.count.saturating_add(1);
        self.count <= self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_within_period_and_recovers_after() {
        let t0 = Instant::now();
        let mut r = RateLimit::new(2, Duration::from_secs(1));
        assert!(r.hit(t0));
        assert!(r.hit(t0));
        assert!(!r.hit(t0 + Duration::from_millis(500)));
        assert!(r.hit(t0 + Duration::from_millis(1500)));
    }
}
