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
/// The smallest and largest samples are kept exactly beside it: the
/// histogram's own are its buckets' bounds, so one sample of 3,684 µs
/// showed as `3.68ms` min and `3.69ms` max.
///
/// [`LatencySink`]: super::LatencySink
#[derive(Debug, Clone, Default)]
pub struct Latency {
    histogram: Option<Histogram<u64>>,
    /// The exact (smallest, largest) sample, in microseconds.
    range: Option<(u64, u64)>,
}

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
        let us = u64::from(us);
        self.histogram
            .get_or_insert_with(histogram)
            .saturating_record(us);
        self.widen((us, us));
    }

    fn widen(&mut self, (min, max): (u64, u64)) {
        self.range = Some(
            self.range
                .map_or((min, max), |(lo, hi)| (lo.min(min), hi.max(max))),
        );
    }

    pub fn merge(&mut self, other: &Latency) {
        if let Some(theirs) = &other.histogram {
            // Not `add`, which would widen the range to theirs's buckets'
            // bounds; of one shape, theirs fits whole.
            let _fits = self.histogram.get_or_insert_with(histogram).add(theirs);
        }
        if let Some(range) = other.range {
            self.widen(range);
        }
    }

    /// Adds the samples of `other` (a histogram read from JSON), its
    /// smallest and largest as its buckets' bounds until
    /// [`set_range`](Latency::set_range) says them exactly; false when its
    /// values do not fit.
    pub(crate) fn add(&mut self, other: &Histogram<u64>) -> bool {
        let fits = self
            .histogram
            .get_or_insert_with(histogram)
            .add(other)
            .is_ok();
        if fits && !other.is_empty() {
            self.widen((other.min(), other.max()));
        }
        fits
    }

    /// The exact smallest and largest samples (read from JSON), taken
    /// when they fall in the histogram's buckets of its own smallest and
    /// largest, which a report not written by this program may not.
    pub(crate) fn set_range(&mut self, min: u64, max: u64) {
        let Some(h) = self.histogram.as_ref().filter(|h| !h.is_empty()) else {
            return;
        };
        if h.equivalent(min, h.min()) && h.equivalent(max, h.max()) && min <= max {
            self.range = Some((min, max));
        }
    }

    /// The histogram, empty when nothing was recorded.
    pub(crate) fn histogram(&self) -> std::borrow::Cow<'_, Histogram<u64>> {
        match &self.histogram {
            Some(h) => std::borrow::Cow::Borrowed(h),
            None => std::borrow::Cow::Owned(histogram()),
        }
    }

    pub fn count(&self) -> u64 {
        self.histogram.as_ref().map_or(0, Histogram::len)
    }

    /// The exact smallest sample in microseconds, 0 with none.
    pub fn min_micros(&self) -> u64 {
        self.range.map_or(0, |(min, _)| min)
    }

    /// The exact largest sample in microseconds, 0 with none.
    pub fn max_micros(&self) -> u64 {
        self.range.map_or(0, |(_, max)| max)
    }

    /// The mean in microseconds, within the exact smallest and largest
    /// samples: the histogram's is of its buckets' middles, which put one
    /// sample's mean above its own value.
    pub fn mean_micros(&self) -> f64 {
        let mean = self.histogram.as_ref().map_or(0.0, Histogram::mean);
        match self.range {
            Some((min, max)) => mean.clamp(min as f64, max as f64),
            None => mean,
        }
    }

    /// Percentile `q` (0–100) as a duration.
    pub fn percentile(&self, q: f64) -> Duration {
        self.histogram.as_ref().map_or(Duration::ZERO, |h| {
            Duration::from_micros(h.value_at_quantile(q / 100.0))
        })
    }

    /// Share of the samples within one sd of the mean, in percent
    /// (h2load's `+/- sd` column). Each bucket counts at its middle, the
    /// value the histogram's mean and sd are made of: at its highest, one
    /// sample (or many of one value) lay beyond a mean of its middle and
    /// an sd of 0, and showed 0.00% where h2load shows 100.00%.
    pub fn within_sd(&self) -> f64 {
        let Some(h) = self.histogram.as_ref().filter(|h| !h.is_empty()) else {
            return 0.0;
        };
        let (mean, sd) = (h.mean(), h.stdev());
        let within: u64 = h
            .iter_recorded()
            .filter(|v| (h.median_equivalent(v.value_iterated_to()) as f64 - mean).abs() <= sd)
            .map(|v| v.count_at_value())
            .sum();
        within as f64 * 100.0 / h.len() as f64
    }

    /// h2load's columns (min, max, mean, sd, +/- sd), then p50, p90, p99,
    /// p99.9, as a report row.
    pub fn row(&self) -> String {
        let Some(h) = self.histogram.as_ref().filter(|h| !h.is_empty()) else {
            return format!(" {:>10}", "-");
        };
        let d = |us: u64| super::human(Duration::from_micros(us));
        let mut row = format!(
            " {:>10}  {:>10}  {:>10}  {:>10}  {:>7.2}%",
            d(self.min_micros()),
            d(self.max_micros()),
            d(self.mean_micros() as u64),
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

    /// One sample, or many of one value, is within the mean ± sd (h2load:
    /// 100.00%), and its min, max and mean are the sample itself, though
    /// its histogram bucket spans 3,684-3,685 µs (5,000-5,003, 50,000-50,031).
    #[test]
    fn a_narrow_distribution_reads_exactly() {
        for us in [3_684, 5_000, 50_001] {
            for n in [1, 7] {
                let mut l = Latency::default();
                for _ in 0..n {
                    l.record(Duration::from_micros(us));
                }
                assert_eq!(l.within_sd(), 100.0, "{n} samples of {us}");
                assert_eq!((l.min_micros(), l.max_micros()), (us, us));
                assert_eq!(l.mean_micros(), us as f64);
                let d = super::super::human(Duration::from_micros(us));
                let row = l.row();
                assert!(
                    row.starts_with(&format!(" {d:>10}  {d:>10}  {d:>10}         0us   100.00%")),
                    "{n} samples: {row}"
                );
            }
        }
    }

    /// Merged distributions keep the exact smallest and largest samples,
    /// and a histogram read back takes them from the JSON's figures.
    #[test]
    fn merged_and_read_back_min_and_max_stay_exact() {
        let mut a = Latency::default();
        a.record(Duration::from_micros(100_001));
        let mut b = Latency::default();
        b.record(Duration::from_micros(3_683));
        a.merge(&b);
        assert_eq!((a.min_micros(), a.max_micros()), (3_683, 100_001));
        let mut read = Latency::default();
        assert!(read.add(&a.histogram()));
        assert_ne!(read.max_micros(), 100_001, "the bucket's bound");
        read.set_range(3_683, 100_001);
        assert_eq!((read.min_micros(), read.max_micros()), (3_683, 100_001));
        // Figures that do not fit the histogram's buckets are not taken.
        read.set_range(1, 100_001);
        assert_eq!(read.min_micros(), 3_683);
    }
}
