//! Latency distributions, kept as HDR histograms in microseconds so that
//! percentiles stay accurate (3 significant digits) and histograms from
//! several connections, threads or machines merge exactly.

use std::time::Duration;

use hdrhistogram::Histogram;

/// One latency distribution.
#[derive(Debug, Clone)]
pub struct Latency(pub(crate) Histogram<u64>);

/// Highest latency tracked: one hour, in microseconds.
const MAX_MICROS: u64 = 3_600_000_000;

impl Default for Latency {
    fn default() -> Self {
        // Bounds are constants known to be valid for hdrhistogram.
        match Histogram::new_with_bounds(1, MAX_MICROS, 3) {
            Ok(h) => Latency(h),
            Err(_) => {
                Latency(Histogram::new(3).unwrap_or_else(|_| unreachable!("3 digits is valid")))
            }
        }
    }
}

impl Latency {
    pub fn record(&mut self, d: Duration) {
        let micros = u64::try_from(d.as_micros())
            .unwrap_or(u64::MAX)
            .clamp(1, MAX_MICROS);
        self.0.saturating_record(micros);
    }

    pub fn merge(&mut self, other: &Latency) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.0.add(&other.0);
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// Percentile `q` (0–100) as a duration.
    pub fn percentile(&self, q: f64) -> Duration {
        Duration::from_micros(self.0.value_at_quantile(q / 100.0))
    }

    /// Share of the samples within one sd of the mean, in percent
    /// (h2load's `+/- sd` column).
    pub fn within_sd(&self) -> f64 {
        let h = &self.0;
        if h.is_empty() {
            return 0.0;
        }
        let (mean, sd) = (h.mean(), h.stdev());
        let within: u64 = h
            .iter_recorded()
            .filter(|v| (v.value_iterated_to() as f64 - mean).abs() <= sd)
            .map(|v| v.count_at_value())
            .sum();
        within as f64 * 100.0 / h.len() as f64
    }

    /// h2load's columns (min, max, mean, sd, +/- sd), then p50, p90, p99,
    /// p99.9, as a report row.
    pub fn row(&self) -> String {
        if self.count() == 0 {
            return format!(" {:>10}", "-");
        }
        let h = &self.0;
        let d = |us: u64| super::human(Duration::from_micros(us));
        let mut row = format!(
            " {:>10}  {:>10}  {:>10}  {:>10}  {:>7.2}%",
            d(h.min()),
            d(h.max()),
            d(h.mean() as u64),
            d(h.stdev() as u64),
            self.within_sd()
        );
        for q in [50.0, 90.0, 99.0, 99.9] {
            row.push_str(&format!("  {:>10}", super::human(self.percentile(q))));
        }
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let mut l = Latency::default();
        for ms in 1..=100 {
            l.record(Duration::from_millis(ms));
        }
        let p50 = l.percentile(50.0).as_millis();
        assert!((49..=51).contains(&p50), "{p50}");
        let p99 = l.percentile(99.0).as_millis();
        assert!((98..=100).contains(&p99), "{p99}");
        assert!(l.row().contains("ms"));
    }
}
