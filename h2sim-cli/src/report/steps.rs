//! Per-step counts and latencies of a scenario run, and the notifications
//! a `--listen` client received: the parts of the report a flow of
//! dependent steps needs beyond h2load's overall lines.

use std::fmt::Write as _;

use super::Latency;

/// One step's figures, over every scenario instance.
#[derive(Debug, Clone, Default)]
pub struct StepStats {
    /// `METHOD path`, symbols unreplaced.
    pub label: String,
    /// Requests of this step sent (retries not counted again).
    pub started: u64,
    /// Ended: with a response, or without one (errored, timed out).
    pub done: u64,
    pub succeeded: u64,
    /// Done without success: the three below.
    pub failed: u64,
    /// A status the step does not take: other than its `--expect`, or
    /// outside 2xx/3xx without one (h2load's rule), so that the three
    /// below add up to `failed`.
    pub unexpected: u64,
    /// A `--capture` found nothing in the response.
    pub uncaptured: u64,
    /// Reset, lost with its connection, or timed out.
    pub errored: u64,
    /// Never sent: an earlier step of its scenario failed.
    pub skipped: u64,
    /// From the step's send time (its intended one under `-T` for a
    /// scenario's first) to its complete response.
    pub latency: Latency,
}

impl StepStats {
    pub fn new(label: String) -> StepStats {
        StepStats {
            label,
            ..StepStats::default()
        }
    }

    pub fn merge(&mut self, other: &StepStats) {
        if self.label.is_empty() {
            self.label.clone_from(&other.label);
        }
        self.started += other.started;
        self.done += other.done;
        self.succeeded += other.succeeded;
        self.failed += other.failed;
        self.unexpected += other.unexpected;
        self.uncaptured += other.uncaptured;
        self.errored += other.errored;
        self.skipped += other.skipped;
        self.latency.merge(&other.latency);
    }
}

/// Merges per-step figures index by index (the steps of the same scenario).
pub fn merge_steps(into: &mut Vec<StepStats>, other: &[StepStats]) {
    if into.len() < other.len() {
        into.resize_with(other.len(), StepStats::default);
    }
    for (a, b) in into.iter_mut().zip(other) {
        a.merge(b);
    }
}

/// Notifications a `--listen` client received.
#[derive(Debug, Clone, Default)]
pub struct Notifications {
    pub received: u64,
    /// Carried a value the run captured (or a `-R` value of a scenario
    /// that captured something), so their delay is known.
    pub correlated: u64,
    /// From the latest request sent by the scenario instance the value
    /// belongs to, to the notification's complete arrival.
    pub delay: Latency,
}

impl Notifications {
    pub fn merge(&mut self, other: &Notifications) {
        self.received += other.received;
        self.correlated += other.correlated;
        self.delay.merge(&other.delay);
    }
}

/// The per-step section of the text report.
pub fn render_steps(out: &mut String, steps: &[StepStats]) {
    let _ = writeln!(out, "steps:");
    for (i, s) in steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {} {}: {} started, {} done, {} succeeded, {} failed ({} unexpected status, {} capture failed, {} errored), {} skipped",
            i + 1,
            s.label,
            s.started,
            s.done,
            s.succeeded,
            s.failed,
            s.unexpected,
            s.uncaptured,
            s.errored,
            s.skipped
        );
        let _ = writeln!(out, "    time for request:{}", s.latency.row());
    }
}

/// The notifications section of the text report.
pub fn render_notifications(out: &mut String, n: &Notifications) {
    let _ = writeln!(
        out,
        "notifications: {} received, {} correlated with a scenario",
        n.received, n.correlated
    );
    let _ = writeln!(out, "notification delay:{}", n.delay.row());
}
