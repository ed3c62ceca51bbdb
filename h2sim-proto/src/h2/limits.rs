//! Rate limits on what a peer may make us do per period.

use std::time::{Duration, Instant};

use crate::config::Limits;

/// At most `max` events in one `period`: a limit of the shared [`Limits`],
/// read from them at each event, so a connection keeps only its counts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rate {
    max: u32,
    period: Duration,
}

impl Rate {
    /// RST_STREAM frames from the peer (rapid reset, CVE-2023-44487).
    pub(crate) fn peer_resets(limits: &Limits) -> Rate {
        Rate {
            max: limits.max_resets_per_period,
            period: limits.reset_period,
        }
    }

    /// Streams we reset because of the peer's errors.
    pub(crate) fn local_resets(limits: &Limits) -> Rate {
        Rate {
            max: limits.max_local_resets_per_period,
            period: limits.reset_period,
        }
    }

    /// Empty DATA frames and CONTINUATIONs.
    pub(crate) fn empty_frames(limits: &Limits) -> Rate {
        Rate {
            max: limits.max_empty_frames_per_period,
            period: limits.empty_frame_period,
        }
    }
}

/// Counts events in fixed periods; more than a [`Rate`]'s `max` in one of
/// its periods trips it. Fixed periods are cruder than a sliding window but
/// cost two fields and no allocation, and the bound they give (at most
/// 2 × max in any period) is what matters against floods.
#[derive(Debug, Clone, Default)]
pub(crate) struct RateLimit {
    started: Option<Instant>,
    count: u32,
}

impl RateLimit {
    /// Records one event at `now`; false when `rate` is exceeded.
    pub(crate) fn hit(&mut self, now: Instant, rate: Rate) -> bool {
        match self.started {
            Some(start) if now.saturating_duration_since(start) < rate.period => {}
            _ => {
                self.started = Some(now);
                self.count = 0;
            }
        }
        self.count = self.count.saturating_add(1);
        self.count <= rate.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trips_within_period_and_recovers_after() {
        let t0 = Instant::now();
        let rate = Rate {
            max: 2,
            period: Duration::from_secs(1),
        };
        let mut r = RateLimit::default();
        assert!(r.hit(t0, rate));
        assert!(r.hit(t0, rate));
        assert!(!r.hit(t0 + Duration::from_millis(500), rate));
        assert!(r.hit(t0 + Duration::from_millis(1500), rate));
    }
}
