//! The client's statistics and the report printed at the end, in the shape
//! h2load users know (every line h2load also prints keeps its label and its
//! meaning), plus a JSON form whose histograms can be merged across runs
//! and machines.

mod json;
mod latency;
mod sink;
mod steps;
mod tls;

pub use json::{from_json, to_json};
pub use latency::Latency;
pub use sink::{Figure, LatencySink, Samples};
pub use steps::{Notifications, StepStats};
pub use tls::Tls;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use h2sim_proto::Stats as Traffic;

/// Counts and latencies of a client run: a connection slot's counts, or a
/// run's, merged, with the run's latencies (see [`LatencySink`]).
///
/// The request counters have h2load's meanings: `done` counts the
/// requests that ended, with a response or without one (reset, refused,
/// lost with the connection, timed out), `failed` those that ended without
/// success and those that never ended (`lost`), so that, as h2load's,
/// `done` + `lost` = `succeeded` + `failed`; `errored` (the failed without
/// a response) is part of `failed`, and `timed_out` and `lost` are parts of
/// `errored` (once [`settle`](Report::settle)d). Warm-up requests are
/// counted in none of them (nor in `total`), only in `warmup`.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Once [`settle`](Report::settle)d: the requests the run was asked
    /// for (`-C` times steps, less warm-up) when it ran to its end; of a
    /// `--duration` run or one cut short by Ctrl-C, which asked for no
    /// count they must reach, the requests they got to: `done`, `lost`
    /// and `skipped`, as h2load's total under `-D` is its done.
    pub total: u64,
    pub started: u64,
    /// Ended, with a response or without (h2load's "done", which leaves
    /// out the requests never sent: not the `lost`).
    pub done: u64,
    /// Completed with a 2xx or 3xx status (h2load's "succeeded").
    pub succeeded: u64,
    /// Done without success: 1xx/4xx/5xx, errored and timed out.
    pub failed: u64,
    /// Reset, refused, lost with the connection, or timed out.
    pub errored: u64,
    /// Reset by `--timeout` (also in `errored`, as h2load counts them).
    pub timed_out: u64,
    /// Sent again under `-r` (not counted in `started` again).
    pub retried: u64,
    /// Sent again because the server did not process them: above the last
    /// stream of its GOAWAY, pipelined behind its `connection: close`, or
    /// refused (REFUSED_STREAM); not counted in `started` again.
    pub resent: u64,
    /// Sent during `--warmup`: counted nowhere else.
    pub warmup: u64,
    /// `-T`: send times the run did not keep: of a `--duration` run, the
    /// intended sends that never happened before it ended; of a `-C` run,
    /// the sends that left well after its last send time (`Plan::schedule_end`)
    /// (every slot busy, the window at its bound, the server's stream
    /// limit reached, the client itself too slow, or the connection lost
    /// for good).
    pub missed: u64,
    /// Requests owed when their connection slot ended for good (its server
    /// gone, reconnects spent): sent once and to be sent again under `-r`,
    /// or a running scenario's next step. Lost; a `-C` run counts them in
    /// its `total` less what was done instead. Only [`Report::settle`]
    /// reads it, so the JSON (settled) carries `lost`, not this.
    pub abandoned: u64,
    /// Requests that never ended, once the run is settled: of a `-C` run,
    /// those asked for and not done (never sent, as a server could not be
    /// reached, or owed when their connection ended for good); of any
    /// other, the abandoned. Counted in `failed` and `errored` too, not in
    /// `done`, as h2load counts the requests a client never got to.
    pub lost: u64,
    /// Ctrl-C (or SIGTERM) cut the run short: it fails, as it did not run
    /// what it was asked.
    pub interrupted: bool,
    /// Final responses by status code.
    pub status_codes: BTreeMap<u16, u64>,
    pub pushes: u64,
    /// Connections made (reconnections included).
    pub connections: u64,
    /// Connections made after a loss or a `--requests-per-connection` turn.
    pub reconnects: u64,
    /// Connection slots whose last connection never came up: the server
    /// was unreachable at the start, or again after a loss.
    pub unreachable: u64,
    /// `-T`: the largest in-flight window a connection grew to because
    /// a send fell due with `-P` requests in flight; 0 when no window grew.
    pub window_grown_to: u64,
    /// `-T`: the server's MAX_CONCURRENT_STREAMS that held a grown window
    /// (past `-P`) from growing further; 0 when none did. The verdict on a
    /// rate not kept names it, or the window's own bound, as what stopped
    /// the growth.
    pub window_held_at: u64,
    /// A server's MAX_CONCURRENT_STREAMS below `-P` held requests back:
    /// the run had fewer in flight than asked, which went unsaid.
    pub stream_cap: Option<StreamCap>,
    /// The application protocol negotiated: `h2c`, `h2`, `http/1.1`.
    pub protocol: Option<String>,
    /// What the first TLS connection's handshake agreed on.
    pub tls: Option<Tls>,
    pub traffic: Traffic,
    pub request_time: Latency,
    /// Per connection: TCP (and TLS) set-up.
    pub connect_time: Latency,
    /// Per connection, as h2load: from the start of connecting to the
    /// connection's first received byte of a response.
    pub first_byte: Latency,
    /// Per request: from sending it to the first byte of its response.
    pub request_first_byte: Latency,
    /// Per connection: requests done over its lifetime, per second
    /// (h2load's `req/s` row).
    pub connection_rps: Vec<f64>,
    pub elapsed: Duration,
    /// When the last request ended (the run's clock stops there); not in JSON.
    pub last_done: Option<Instant>,
    /// Requests never sent because an earlier step of their scenario
    /// failed (`--expect`, `--capture`): not done, not lost.
    pub skipped: u64,
    /// Per step, in scenario order; shown (and in JSON) when the scenario
    /// has several steps or a step expects or captures.
    pub steps: Vec<StepStats>,
    pub show_steps: bool,
    /// `--listen`: the notifications received.
    pub notifications: Option<Notifications>,
}

/// In-flight requests a server's stream limit held below `-P`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamCap {
    /// The smallest limit that held a request back.
    pub limit: u64,
    /// `-P`, the in-flight requests asked per connection.
    pub asked: u64,
}

impl StreamCap {
    /// Of two runs (or connections): the tighter limit, the larger ask.
    fn merge(self, other: StreamCap) -> StreamCap {
        StreamCap {
            limit: self.limit.min(other.limit),
            asked: self.asked.max(other.asked),
        }
    }
}

impl Report {
    /// Notes that a server's stream limit `limit` held a request back
    /// while `-P` (`asked`) had room for it.
    pub fn capped(&mut self, limit: u64, asked: u64) {
        let cap = StreamCap { limit, asked };
        self.stream_cap = Some(self.stream_cap.map_or(cap, |c| c.merge(cap)));
    }

    pub fn merge(&mut self, other: &Report) {
        self.total += other.total;
        self.started += other.started;
        self.done += other.done;
        self.succeeded += other.succeeded;
        self.failed += other.failed;
        self.errored += other.errored;
        self.timed_out += other.timed_out;
        self.retried += other.retried;
        self.resent += other.resent;
        self.warmup += other.warmup;
        self.missed += other.missed;
        self.abandoned += other.abandoned;
        self.lost += other.lost;
        self.interrupted |= other.interrupted;
        for (code, n) in &other.status_codes {
            *self.status_codes.entry(*code).or_default() += n;
        }
        self.pushes += other.pushes;
        self.connections += other.connections;
        self.reconnects += other.reconnects;
        self.unreachable += other.unreachable;
        self.window_grown_to = self.window_grown_to.max(other.window_grown_to);
        self.window_held_at = self.window_held_at.max(other.window_held_at);
        if let Some(theirs) = other.stream_cap {
            self.capped(theirs.limit, theirs.asked);
        }
        if self.protocol.is_none() {
            self.protocol.clone_from(&other.protocol);
        }
        if self.tls.is_none() {
            self.tls.clone_from(&other.tls);
        }
        self.traffic.merge(&other.traffic);
        self.request_time.merge(&other.request_time);
        self.connect_time.merge(&other.connect_time);
        self.first_byte.merge(&other.first_byte);
        self.request_first_byte.merge(&other.request_first_byte);
        self.connection_rps.extend_from_slice(&other.connection_rps);
        self.elapsed = self.elapsed.max(other.elapsed);
        self.last_done = self.last_done.max(other.last_done);
        self.skipped += other.skipped;
        steps::merge_steps(&mut self.steps, &other.steps);
        self.show_steps |= other.show_steps;
        if let Some(theirs) = &other.notifications {
            self.notifications
                .get_or_insert_with(Notifications::default)
                .merge(theirs);
        }
    }

    /// Counts one final response (a success if 2xx or 3xx, as h2load).
    #[cfg(test)]
    pub fn record_status(&mut self, status: u16) {
        self.record_response(status, (200..400).contains(&status));
    }

    /// Counts one final response that was (`ok`) or was not a success.
    pub fn record_response(&mut self, status: u16, ok: bool) {
        self.count_status(status);
        self.done += 1;
        if ok {
            self.succeeded += 1;
        } else {
            self.failed += 1;
        }
    }

    /// Counts a final status that arrived, whether or not its response
    /// was complete: h2load counts a status when its field arrives, so a
    /// stream reset after its HEADERS is in its status codes too.
    pub fn count_status(&mut self, status: u16) {
        *self.status_codes.entry(status).or_default() += 1;
    }

    /// Counts one request that ended without a response.
    pub fn record_error(&mut self, timed_out: bool) {
        self.done += 1;
        self.failed += 1;
        self.errored += 1;
        self.timed_out += u64::from(timed_out);
    }

    /// Responses by class, 1xx … 5xx; with the 1xx, the 0 of a response
    /// that ended without a final status. Any other code outside 100-599
    /// is invalid, and RFC 9110 §15 has a client treat it as a 5xx.
    pub fn status_classes(&self) -> [u64; 5] {
        let mut classes = [0; 5];
        for (code, n) in &self.status_codes {
            let class = match code {
                0 => 0,
                100..=599 => usize::from(code / 100) - 1,
                _ => 4,
            };
            classes[class] += n;
        }
        classes
    }

    /// Once the run's reports are merged: counts the requests that never
    /// ended as `lost`, and as failed and errored (see [`Report::lost`]),
    /// and sets `total` to `asked` (the count a `-C` run that ran to its
    /// end was asked for) or, with none, to what the run got to (see
    /// [`Report::total`]).
    pub fn settle(&mut self, asked: Option<u64>) {
        let lost = asked.map_or(self.abandoned, |t| {
            t.saturating_sub(self.done + self.skipped)
        });
        self.lost = lost;
        self.failed += lost;
        self.errored += lost;
        self.total = asked.unwrap_or(self.done + lost + self.skipped);
    }

    /// Requests that ended with their whole response, whatever its
    /// status: those done but not errored (`lost` is in `errored` and not
    /// in `done`). Not the status codes' sum, which also counts a status
    /// whose stream was reset before the response ended.
    pub fn responses(&self) -> u64 {
        (self.done + self.lost).saturating_sub(self.errored)
    }

    /// The run went wrong if any request failed or was lost, a fixed rate
    /// was not kept, a server was never reached, or Ctrl-C cut it short.
    pub fn is_success(&self) -> bool {
        self.failed == 0
            && self.lost == 0
            && self.missed == 0
            && self.unreachable == 0
            && !self.interrupted
    }

    /// h2load's `req/s`: the requests answered (a 404 too, not a reset or
    /// a request never sent) per second of the run. Of every request that
    /// ended, a run whose server died at once reported millions a second,
    /// the requests it could no longer send counted as done.
    pub fn requests_per_second(&self) -> f64 {
        per_second(self.responses(), self.elapsed)
    }

    /// The text report: h2load's lines first, then h2sim's own.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let t = &self.traffic;
        if let Some(tls) = &self.tls {
            out.push_str(&tls.lines());
        }
        if let Some(protocol) = &self.protocol {
            let _ = writeln!(out, "Application protocol: {protocol}");
        }
        let _ = writeln!(
            out,
            "finished in {}, {:.2} req/s, {}/s",
            human(self.elapsed),
            self.requests_per_second(),
            megabytes(per_second(t.bytes_received, self.elapsed))
        );
        let _ = writeln!(
            out,
            "requests: {} total, {} started, {} done, {} succeeded, {} failed, {} errored, {} timeout",
            self.total,
            self.started,
            self.done,
            self.succeeded,
            self.failed,
            self.errored,
            self.timed_out
        );
        let [c1, c2, c3, c4, c5] = self.status_classes();
        let _ = writeln!(out, "status codes: {c2} 2xx, {c3} 3xx, {c4} 4xx, {c5} 5xx");
        // As h2load: HTTP/2's headers are the HEADERS payloads as they came
        // (and HPACK's savings against their fields), HTTP/1.1's the
        // fields' name and value octets, which nothing compresses.
        let headers = if self.protocol.as_deref() == Some("http/1.1") {
            t.header_bytes_received
        } else {
            t.header_wire_bytes_received
        };
        let savings = if t.header_bytes_received > 0 {
            100.0 * (1.0 - headers as f64 / t.header_bytes_received as f64)
        } else {
            0.0
        };
        // As h2load: received bytes only (sent bytes are in the JSON).
        let _ = writeln!(
            out,
            "traffic: {} ({}) total, {} ({headers}) headers (space savings {savings:.2}%), {} ({}) data",
            megabytes(t.bytes_received as f64),
            t.bytes_received,
            megabytes(headers as f64),
            megabytes(t.data_bytes_received as f64),
            t.data_bytes_received
        );
        let _ = writeln!(
            out,
            "                     min         max         mean         sd        +/- sd{:>12}{:>12}{:>12}{:>12}",
            "p50", "p90", "p99", "p99.9"
        );
        for (name, latency) in [
            ("time for request:", &self.request_time),
            ("time for connect:", &self.connect_time),
            ("time to 1st byte:", &self.first_byte),
            ("request 1st byte:", &self.request_first_byte),
        ] {
            let _ = writeln!(out, "{name:<17}{}", latency.row());
        }
        let _ = writeln!(out, "req/s           :{}", rps_row(&self.connection_rps));
        let codes: Vec<String> = self
            .status_codes
            .iter()
            .map(|(code, n)| format!("{n} {code}"))
            .collect();
        let _ = writeln!(
            out,
            "status code counts: {}{}",
            if codes.is_empty() {
                "none".to_owned()
            } else {
                codes.join(", ")
            },
            if c1 > 0 {
                format!(" ({c1} 1xx or none)")
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            out,
            "more counts: {} lost, {} retried, {} resent unprocessed, {} warm-up (not counted), {} sends missed (-T)",
            self.lost, self.retried, self.resent, self.warmup, self.missed
        );
        let _ = writeln!(
            out,
            "connections: {} made, {} reconnects, {} unreachable; pushes: {} received; sent: {} ({}) total",
            self.connections,
            self.reconnects,
            self.unreachable,
            self.pushes,
            megabytes(t.bytes_sent as f64),
            t.bytes_sent
        );
        if self.show_steps {
            steps::render_steps(&mut out, &self.steps);
        }
        if let Some(notifications) = &self.notifications {
            steps::render_notifications(&mut out, notifications);
        }
        if let Some(cap) = self.stream_cap {
            let _ = writeln!(
                out,
                "the server capped in-flight streams at {} per connection (SETTINGS_MAX_CONCURRENT_STREAMS), of the {} asked by -P",
                cap.limit, cap.asked
            );
        }
        match (self.window_grown_to, self.missed) {
            (0, _) => {}
            (grown, 0) => {
                let _ = writeln!(
                    out,
                    "-T kept its rate by growing the in-flight window to {grown} per connection (a send fell due with -P requests still in flight)"
                );
            }
            (grown, missed) => {
                let bound = if self.window_held_at > 0 {
                    format!(
                        ", held there by the server's SETTINGS_MAX_CONCURRENT_STREAMS of {}",
                        self.window_held_at
                    )
                } else if grown >= crate::client::app::MAX_GROWN_SLOTS as u64 {
                    ", its bound (the larger of -P and 1024)".to_owned()
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "-T did not keep its rate: {missed} sends missed with the in-flight window grown to {grown} per connection{bound}"
                );
            }
        }
        out
    }
}

/// h2load's `req/s` row: min, max, mean, sd over the connections, and the
/// share within one sd of the mean.
fn rps_row(values: &[f64]) -> String {
    if values.is_empty() {
        return format!(" {:>10}", "-");
    }
    let n = values.len() as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = values.iter().sum::<f64>() / n;
    // Population sd, as h2load.
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let within = values.iter().filter(|v| (*v - mean).abs() <= sd).count() as f64 / n * 100.0;
    format!(" {min:>10.2}  {max:>10.2}  {mean:>10.2}  {sd:>10.2}  {within:>7.2}%")
}

fn per_second(n: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

/// A duration as h2load prints it: us, ms or s.
pub(crate) fn human(d: Duration) -> String {
    let micros = d.as_micros();
    if micros < 1000 {
        format!("{micros}us")
    } else if micros < 1_000_000 {
        format!("{:.2}ms", micros as f64 / 1000.0)
    } else {
        format!("{:.2}s", micros as f64 / 1e6)
    }
}

/// Bytes as h2load prints them: B, KB, MB, GB (powers of 1024) with two decimals.
fn megabytes(bytes: f64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0}{}", UNITS[unit])
    } else {
        format!("{value:.2}{}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        let mut a = Report {
            started: 6,
            ..Report::default()
        };
        for _ in 0..4 {
            a.record_status(200);
        }
        a.record_status(404);
        a.elapsed = Duration::from_secs(2);
        a.request_time.record(Duration::from_millis(3));
        a
    }

    #[test]
    fn arithmetic_and_merge() {
        let mut a = sample();
        let mut b = Report {
            started: 4,
            ..Report::default()
        };
        for _ in 0..3 {
            b.record_status(201);
        }
        b.record_error(true);
        b.elapsed = Duration::from_secs(1);
        b.request_time.record(Duration::from_millis(5));
        a.merge(&b);
        assert_eq!((a.started, a.done, a.succeeded, a.failed), (10, 9, 7, 2));
        // The one of the ten asked for that never ended: lost, and failed
        // and errored as h2load counts it, but not done (h2load: `10
        // total, 0 started, 0 done, 0 succeeded, 10 failed, 10 errored`
        // against a port nobody listens on).
        a.settle(Some(10));
        assert_eq!((a.done, a.failed, a.errored, a.lost), (9, 3, 2, 1));
        assert_eq!(a.done + a.lost, a.succeeded + a.failed);
        assert_eq!(a.status_classes(), [0, 7, 0, 1, 0]);
        // RFC 9110 §15: outside 100-599 a status is invalid, taken as 5xx.
        let mut odd = Report::default();
        odd.record_status(99);
        odd.record_status(600);
        assert_eq!(odd.status_classes(), [0, 0, 0, 0, 2]);
        assert_eq!(a.elapsed, Duration::from_secs(2));
        assert_eq!(a.request_time.count(), 2);
        assert!(!a.is_success());
        // h2load's req/s: the 8 answered (the 404 too) in 2 s, not the
        // reset, nor the lost.
        assert!((a.requests_per_second() - 4.0).abs() < 1e-9);
        let text = a.render();
        assert!(text.contains("finished in 2.00s, 4.00 req/s"), "{text}");
        assert!(text.contains("requests: 10 total, 10 started, 9 done, 7 succeeded, 3 failed, 2 errored, 1 timeout"), "{text}");
        assert_eq!(to_json(&a)["requests_per_second"], 4.0);
        assert!(
            text.contains("status codes: 7 2xx, 0 3xx, 1 4xx, 0 5xx"),
            "{text}"
        );
        assert!(
            text.contains("status code counts: 4 200, 3 201, 1 404"),
            "{text}"
        );
        assert!(text.contains("1 lost"), "{text}");
    }

    /// A `--duration` or interrupted run asked for no count: its total is
    /// what it got to, done, lost and skipped, as h2load's under `-D` is
    /// its done; the JSON carries the same figure.
    #[test]
    fn a_run_without_a_count_totals_what_it_got_to() {
        let mut a = Report {
            started: 5,
            abandoned: 2,
            skipped: 1,
            ..Report::default()
        };
        for _ in 0..4 {
            a.record_status(200);
        }
        a.settle(None);
        assert_eq!((a.total, a.done, a.lost), (7, 4, 2));
        assert!(a.render().contains("requests: 7 total, 5 started, 4 done"));
        assert_eq!(to_json(&a)["requests"]["total"], 7);
    }

    /// h2load counts received bytes only in `traffic: … total`.
    #[test]
    fn traffic_total_is_received_bytes() {
        let mut a = sample();
        a.traffic.bytes_received = 2048;
        a.traffic.bytes_sent = 100_000;
        let text = a.render();
        assert!(text.contains("traffic: 2.00KB (2048) total"), "{text}");
    }

    #[test]
    fn h2load_rows_and_columns() {
        let mut a = sample();
        a.protocol = Some("h2c".into());
        a.connection_rps = vec![10.0, 20.0, 30.0];
        let text = a.render();
        assert!(text.starts_with("Application protocol: h2c\n"), "{text}");
        assert!(text.contains("+/- sd"), "{text}");
        // mean 20, population sd 8.16: one of three within.
        assert!(
            text.contains(
                "req/s           :      10.00       30.00       20.00        8.16    33.33%"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "time for request:     3.00ms      3.00ms      3.00ms         0us   100.00%"
            ),
            "{text}"
        );
    }

    /// Issue 10 item 5: the text shows every counter the JSON has.
    #[test]
    fn text_shows_every_json_counter() {
        let mut a = sample();
        a.settle(Some(10));
        a.retried = 11;
        a.resent = 18;
        a.warmup = 12;
        a.missed = 13;
        a.reconnects = 14;
        a.unreachable = 15;
        a.pushes = 16;
        a.connections = 17;
        let text = a.render();
        for needle in [
            "5 lost",
            "11 retried",
            "18 resent unprocessed",
            "12 warm-up",
            "13 sends missed",
            "17 made, 14 reconnects, 15 unreachable",
            "pushes: 16 received",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        let json = to_json(&a);
        for key in [
            "total",
            "started",
            "done",
            "succeeded",
            "failed",
            "errored",
            "timeout",
            "retried",
            "resent_unprocessed",
            "lost",
            "warmup",
            "missed",
        ] {
            assert!(json["requests"].get(key).is_some(), "{key}");
        }
    }

    #[test]
    fn units() {
        assert_eq!(megabytes(512.0), "512B");
        assert_eq!(megabytes(1536.0), "1.50KB");
        assert_eq!(megabytes(3.0 * 1024.0 * 1024.0), "3.00MB");
    }
}
