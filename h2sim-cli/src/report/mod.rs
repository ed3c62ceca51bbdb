//! The client's statistics and the report printed at the end, in the shape
//! h2load users know, plus a JSON form whose histograms can be merged
//! across runs and machines.

mod json;
mod latency;

pub use json::{from_json, to_json};
pub use latency::Latency;

use std::fmt::Write as _;
use std::time::Duration;

use h2sim_proto::Stats as Traffic;

/// Counts and latencies of a client run (one connection's, or merged).
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Requests the run was asked for (`-C` times steps), when known.
    pub total: Option<u64>,
    pub started: u64,
    pub done: u64,
    /// Completed with a status below 400.
    pub succeeded: u64,
    /// Completed with 4xx/5xx, plus errored and timed out.
    pub failed: u64,
    /// Reset, refused, or lost with the connection.
    pub errored: u64,
    pub timed_out: u64,
    pub retried: u64,
    /// Responses by status class: 1xx … 5xx.
    pub status_classes: [u64; 5],
    pub pushes: u64,
    pub connections: u64,
    pub traffic: Traffic,
    pub request_time: Latency,
    pub connect_time: Latency,
    pub first_byte: Latency,
    pub elapsed: Duration,
}

impl Report {
    pub fn merge(&mut self, other: &Report) {
        self.started += other.started;
        self.done += other.done;
        self.succeeded += other.succeeded;
        self.failed += other.failed;
        self.errored += other.errored;
        self.timed_out += other.timed_out;
        self.retried += other.retried;
        for (a, b) in self.status_classes.iter_mut().zip(other.status_classes) {
            *a += b;
        }
        self.pushes += other.pushes;
        self.connections += other.connections;
        self.traffic.merge(&other.traffic);
        self.request_time.merge(&other.request_time);
        self.connect_time.merge(&other.connect_time);
        self.first_byte.merge(&other.first_byte);
        self.elapsed = self.elapsed.max(other.elapsed);
    }

    /// Requests that never got an answer: asked for but not done.
    pub fn lost(&self) -> u64 {
        self.total.map_or(0, |t| {
            t.saturating_sub(self.done + self.errored + self.timed_out)
        })
    }

    /// The run went wrong if any request failed or was lost.
    pub fn is_success(&self) -> bool {
        self.failed == 0 && self.errored == 0 && self.timed_out == 0 && self.lost() == 0
    }

    pub fn requests_per_second(&self) -> f64 {
        per_second(self.done, self.elapsed)
    }

    /// The text report.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let secs = self.elapsed.as_secs_f64();
        let t = &self.traffic;
        let total_bytes = t.bytes_received + t.bytes_sent;
        let _ = writeln!(
            out,
            "finished in {secs:.2}s, {:.2} req/s, {}/s",
            self.requests_per_second(),
            megabytes(per_second(t.bytes_received, self.elapsed))
        );
        let _ = writeln!(
            out,
            "requests: {} total, {} started, {} done, {} succeeded, {} failed, {} errored, {} timeout",
            self.total.unwrap_or(self.started),
            self.started,
            self.done,
            self.succeeded,
            self.failed,
            self.errored,
            self.timed_out
        );
        let [c1, c2, c3, c4, c5] = self.status_classes;
        let _ = writeln!(
            out,
            "status codes: {c1} 1xx, {c2} 2xx, {c3} 3xx, {c4} 4xx, {c5} 5xx"
        );
        let savings = if t.header_bytes_received > 0 {
            100.0 * (1.0 - t.header_wire_bytes_received as f64 / t.header_bytes_received as f64)
        } else {
            0.0
        };
        let _ = writeln!(
            out,
            "traffic: {} ({total_bytes}) total, {} ({}) headers (space savings {savings:.2}%), {} ({}) data",
            megabytes(total_bytes as f64),
            megabytes(t.header_wire_bytes_received as f64),
            t.header_wire_bytes_received,
            megabytes(t.data_bytes_received as f64),
            t.data_bytes_received
        );
        let _ = writeln!(out, "pushes: {} received", self.pushes);
        if self.retried > 0 {
            let _ = writeln!(out, "retries: {}", self.retried);
        }
        let _ = writeln!(
            out,
            "{:<18}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}",
            "", "min", "max", "mean", "sd", "p50", "p90", "p99", "p99.9"
        );
        for (name, latency) in [
            ("time for request:", &self.request_time),
            ("time for connect:", &self.connect_time),
            ("time to 1st byte:", &self.first_byte),
        ] {
            let _ = writeln!(out, "{name:<18}{}", latency.row());
        }
        out
    }
}

fn per_second(n: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

/// Bytes as h2load prints them: B, KB, MB, GB with two decimals.
fn megabytes(bytes: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2}{}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_merge() {
        let mut a = Report {
            total: Some(10),
            started: 6,
            done: 5,
            succeeded: 4,
            failed: 1,
            ..Report::default()
        };
        a.status_classes[1] = 4;
        a.status_classes[3] = 1;
        a.elapsed = Duration::from_secs(2);
        a.request_time.record(Duration::from_millis(3));
        let mut b = Report {
            started: 4,
            done: 4,
            succeeded: 4,
            ..Report::default()
        };
        b.status_classes[1] = 4;
        b.elapsed = Duration::from_secs(1);
        b.request_time.record(Duration::from_millis(5));
        a.merge(&b);
        assert_eq!((a.started, a.done, a.succeeded, a.failed), (10, 9, 8, 1));
        assert_eq!(a.status_classes, [0, 8, 0, 1, 0]);
        assert_eq!(a.elapsed, Duration::from_secs(2));
        assert_eq!(a.request_time.count(), 2);
        assert_eq!(a.lost(), 1);
        assert!(!a.is_success());
        assert!((a.requests_per_second() - 4.5).abs() < 1e-9);
        let text = a.render();
        assert!(text.contains("requests: 10 total, 10 started, 9 done, 8 succeeded, 1 failed, 0 errored, 0 timeout"), "{text}");
        assert!(
            text.contains("status codes: 0 1xx, 8 2xx, 0 3xx, 1 4xx, 0 5xx"),
            "{text}"
        );
    }

    #[test]
    fn units() {
        assert_eq!(megabytes(512.0), "512.00B");
        assert_eq!(megabytes(1536.0), "1.50KB");
        assert_eq!(megabytes(3.0 * 1024.0 * 1024.0), "3.00MB");
    }
}
