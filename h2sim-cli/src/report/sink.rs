//! The run's latency histograms, shared by every connection slot of a
//! client run. A histogram (three significant digits up to an hour) takes
//! about 190 KB: when each slot kept its own five, a run of 1,000
//! connections held 950 MB (h2load: 35 MB) and spread its recording over
//! that much memory. A slot gathers its samples in a small batch instead
//! and hands the batch over under the sink's lock, once per [`BATCH`]
//! samples and when it ends.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::latency::micros;
use super::{Latency, Report};

/// Samples a slot gathers before it takes the lock: a lock per 32
/// responses, 768 bytes a slot.
const BATCH: usize = 32;

/// What a sample measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    /// A connection's set-up (TCP, and TLS).
    ConnectTime,
    /// From the start of connecting to a connection's first response byte.
    FirstByte,
    /// From sending a request to the first byte of its response.
    RequestFirstByte,
    /// A request of this step (its index in the scenario), to its
    /// complete response.
    Step(usize),
}

/// The run's histograms.
#[derive(Debug, Default)]
pub struct Latencies {
    connect_time: Latency,
    first_byte: Latency,
    request_first_byte: Latency,
    steps: Vec<Latency>,
}

impl Latencies {
    fn of(&mut self, figure: Figure) -> &mut Latency {
        match figure {
            Figure::ConnectTime => &mut self.connect_time,
            Figure::FirstByte => &mut self.first_byte,
            Figure::RequestFirstByte => &mut self.request_first_byte,
            Figure::Step(step) => {
                if self.steps.len() <= step {
                    self.steps.resize_with(step + 1, Latency::default);
                }
                &mut self.steps[step]
            }
        }
    }
}

impl Report {
    /// Adds the run's histograms; the time for a request overall is the
    /// sum of its steps' (every completed request counts in its step's).
    pub fn add_latencies(&mut self, latencies: &Latencies) {
        self.connect_time.merge(&latencies.connect_time);
        self.first_byte.merge(&latencies.first_byte);
        self.request_first_byte.merge(&latencies.request_first_byte);
        if self.steps.len() < latencies.steps.len() {
            self.steps
                .resize_with(latencies.steps.len(), Default::default);
        }
        for (stats, latency) in self.steps.iter_mut().zip(&latencies.steps) {
            stats.latency.merge(latency);
            self.request_time.merge(latency);
        }
    }
}

/// Where the slots of a run record their latencies.
#[derive(Debug, Default)]
pub struct LatencySink(Mutex<Latencies>);

impl LatencySink {
    /// The histograms recorded so far, leaving the sink empty.
    pub fn take(&self) -> Latencies {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// One slot's samples not yet in the sink.
#[derive(Debug, Default)]
pub struct Samples(Vec<(Figure, u32)>);

impl Samples {
    pub fn record(&mut self, figure: Figure, d: Duration, sink: &LatencySink) {
        if self.0.capacity() == 0 {
            self.0.reserve_exact(BATCH);
        }
        self.0.push((figure, micros(d)));
        if self.0.len() >= BATCH {
            self.flush(sink);
        }
    }

    /// Hands the samples to `sink`.
    pub fn flush(&mut self, sink: &LatencySink) {
        if self.0.is_empty() {
            return;
        }
        let mut latencies = sink.0.lock().unwrap_or_else(PoisonError::into_inner);
        for (figure, us) in self.0.drain(..) {
            latencies.of(figure).record_micros(us);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_share_the_histograms_and_each_sample_counts_once() {
        let sink = LatencySink::default();
        let (mut a, mut b) = (Samples::default(), Samples::default());
        for i in 0..100 {
            a.record(Figure::Step(1), Duration::from_millis(i % 10 + 1), &sink);
            b.record(Figure::RequestFirstByte, Duration::from_micros(80), &sink);
        }
        a.record(Figure::ConnectTime, Duration::from_micros(120), &sink);
        b.record(Figure::FirstByte, Duration::from_micros(300), &sink);
        // Whole batches went over; the rest waits for the slot's end.
        let mut report = Report::default();
        report.add_latencies(&sink.take());
        assert_eq!(report.steps[1].latency.count(), 96);
        a.flush(&sink);
        b.flush(&sink);
        report.add_latencies(&sink.take());
        assert_eq!(report.steps.len(), 2);
        assert_eq!(report.steps[0].latency.count(), 0);
        assert_eq!(report.steps[1].latency.count(), 100);
        assert_eq!(report.request_time.count(), 100);
        assert_eq!(report.request_first_byte.count(), 100);
        assert_eq!(report.connect_time.count(), 1);
        assert_eq!(report.first_byte.count(), 1);
        assert_eq!(
            report.request_first_byte.percentile(50.0),
            Duration::from_micros(80)
        );
        assert!(sink.take().steps.is_empty(), "taken");
    }
}
