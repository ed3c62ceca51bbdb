//! Latency distributions, kept as HDR histograms in microseconds so that
//! percentiles stay accurate (3 significant digits) and histograms from
//! several connections, threads or machines merge exactly.

use std::time::Duration;

use hdrhistogram::Histogram;

/// One latency distribution. Its histogram (three significant digits up
/// to an hour: about 190 KB) is made at the first sample, so a report that
/// holds none, such as a connection slot's (see [`LatencySink`]), costs
/// nothing for it.
///
/// [`LatencySink`]: super::LatencySink
#[derive(Debug, Clone, Default)]
pub struct Latency(Option<Histogram<u64>>);

/// Highest latency tracked: one hour, in microseconds.
const MAX_MICROS: u64 = 3_600_000_000;

fn histogram() -> Histogram<u64> {
    // Bounds are constants known to be valid for hdrhistogram.
    match Histogram::new_with_bounds(1, MAX_MICROS, 3) {
        Ok(h) => h,
        Err(_) => Histogram::new(3).unwrap_or_else(|_| unreachable!("3 digits is valid")),
    }
}

/// `d` in whole microseconds, within the tracked range.
pub(crate) fn micros(d: Duration) -> u32 {
    let us = u64::try_from(d.as_micros())
        .unwrap_or(u64::MAX)
        .clamp(1, MAX_MICROS);
    // An hour of microseconds fits in 32 bits.
    u32::try_from(us).unwrap_or(u32::MAX)
}

impl Latency {
    pub fn record(&mut self, d: Duration) {
        self.record_micros(micros(d));
    }

    /// Records a sample already in microseconds (see [`micros`]).
    pub(crate) fn record_micros(&mut self, us: u32) {
        self.0
            .get_or_insert_with(histogram)
            .saturating_record(u64::from(us));
    }

    pub fn merge(&mut self, other: &Latency) {
        if let Some(theirs) = &other.0 {
            self.add(theirs);
        }
    }

    /// Adds the samples of `other` (a histogram read from JSON); false when
    /// its values do not fit.
    pub(crate) fn add(&mut self, other: &Histogram<u64>) -> bool {
        self.0.get_or_insert_with(histogram).add(other).is_ok()
    }

    /// The histogram, empty when nothing was recorded.
    pub(crate) fn histogram(&self) -> std::borrow::Cow<'_, Histogram<u64>> {
        match &self.0 {
            Some(h) => std::borrow::Cow::Borrowed(h),
            None => std::borrow::Cow::Owned(histogram()),
        }
    }

    pub fn count(&self) -> u64 {
        self.0.as_ref().map_or(0, Histogram::len)
    }

    /// Percentile `q` (0–100) as a duration.
    pub fn percentile(&self, q: f64) -> Duration {
        self.0.as_ref().map_or(Duration::ZERO, |h| {
            Duration::from_micros(h.value_at_quantile(q / 100.0))
        })
    }

    /// Share of the samples within one sd of the mean, in percent
    /// (h2load's `+/- sd` column).
    pub fn within_sd(&self) -> f64 {
        let Some(h) = self.0.as_ref().filter(|h| !h.is_empty()) else {
            return 0.0;
        };
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
        let Some(h) = self.0.as_ref().filter(|h| !h.is_empty()) else {
            return format!(" {:>10}", "-");
        };
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
