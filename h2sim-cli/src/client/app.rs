//! The simulated client on one connection: `-P` stream slots, each running
//! scenarios (their steps in order) until the run's count or duration is
//! reached, paced when asked, timing every request. Sans-IO: events and
//! time in, commands out.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2sim_proto::{Application, Connection, Event, HeaderField, Reason, StreamId};

use super::scenario::Step;
use super::symbol::{Symbol, Values};
use crate::report::Report;
use crate::trace::{self, Trace};

/// What all connections of a run share.
pub struct Plan {
    pub steps: Vec<Step>,
    pub symbols: Vec<Symbol>,
    /// `-M N`: scenario numbers wrap at N.
    pub wrap: Option<u64>,
    /// `-C N`: scenarios to run; None with `--duration`.
    pub scenarios: Option<u64>,
    /// `--duration`: no scenario starts after this.
    pub stop_at: Option<Instant>,
    /// `--warmup`: requests completing before this are not counted.
    pub warmup_until: Option<Instant>,
    /// `-T TPS` split over the connections: one scenario start per interval
    /// on each connection, latency measured from the intended start.
    pub interval: Option<Duration>,
    /// `-P N`: scenarios in flight per connection.
    pub slots: usize,
    /// `-r`: send a request again when its stream was reset or lost.
    pub retry: bool,
    /// `--timeout`: a request without a complete response by then is reset.
    pub timeout: Option<Duration>,
    /// `-D MS`: dump transactions slower than this.
    pub slow: Option<Duration>,
    /// Per-request dumps (not `-q`).
    pub trace: Option<Arc<dyn Trace>>,
    /// Next scenario number.
    pub next: AtomicU64,
    /// Requests completed so far, for the progress bar.
    pub completed: AtomicU64,
    /// Merged statistics of finished connections.
    pub report: Mutex<Report>,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("steps", &self.steps.len())
            .finish_non_exhaustive()
    }
}

impl Plan {
    /// Takes the next scenario number, if the run is not over.
    fn take_scenario(&self, now: Instant) -> Option<u64> {
        if self.stop_at.is_some_and(|t| now >= t) {
            return None;
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        if self.scenarios.is_some_and(|total| n >= total) {
            return None;
        }
        Some(self.wrap.map_or(n, |w| n % w.max(1)))
    }
}

/// Retries per request under `-r`, so a server that always resets cannot
/// keep the run going forever.
const MAX_RETRIES: u32 = 3;

/// The request in flight on one slot.
#[derive(Debug)]
struct Flight {
    scenario: u64,
    values: Values,
    step: usize,
    stream: StreamId,
    /// When the request should have gone out (paced runs) or went out.
    intended: Instant,
    sent: Instant,
    first_byte: Option<Instant>,
    status: Option<u16>,
    retries: u32,
    /// Response fields and body kept for dumps (trace or slow-transaction
    /// dumps).
    fields: Vec<HeaderField>,
    body: Vec<u8>,
}

/// Bytes of response body kept per request for dumps.
const DUMP_BODY_LIMIT: usize = 64 * 1024;

/// The client application of one connection.
pub struct ClientApp {
    plan: Arc<Plan>,
    slots: Vec<Option<Flight>>,
    by_stream: HashMap<StreamId, usize>,
    /// Paced runs: when the next scenario may start.
    next_start: Option<Instant>,
    report: Report,
    started_at: Option<Instant>,
    finished: bool,
    /// The server this connection reaches (`--server`): its authority goes
    /// in every request instead of the steps'.
    authority: Bytes,
}

impl ClientApp {
    /// `connect_time` is how long the transport (and TLS) took to set up.
    pub fn new(plan: Arc<Plan>, connect_time: Duration, authority: Bytes) -> Self {
        let mut report = Report {
            connections: 1,
            ..Report::default()
        };
        report.connect_time.record(connect_time);
        let slots = (0..plan.slots.max(1)).map(|_| None).collect();
        ClientApp {
            plan,
            slots,
            by_stream: HashMap::new(),
            next_start: None,
            report,
            started_at: None,
            finished: false,
            authority,
        }
    }

    #[cfg(test)]
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Fills idle slots with new scenarios, as pacing allows; when nothing
    /// is left to do, ends the connection gracefully.
    fn fill(&mut self, now: Instant, conn: &mut Connection) {
        for slot in 0..self.slots.len() {
            if self.slots[slot].is_some() {
                continue;
            }
            let intended = match (self.plan.interval, self.next_start) {
                (Some(_), Some(at)) if at > now => break,
                (Some(interval), at) => {
                    let at = at.unwrap_or(now);
                    self.next_start = Some(at + interval);
                    at
                }
                (None, _) => now,
            };
            let Some(scenario) = self.plan.take_scenario(now) else {
                self.next_start = None;
                break;
            };
            let values = Values::new(&self.plan.symbols, scenario);
            self.send(now, conn, slot, scenario, values, 0, intended, 0);
        }
        if self.slots.iter().all(Option::is_none) && !self.finished {
            // Graceful: the Closed event that follows counts the traffic.
            conn.go_away(now);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        now: Instant,
        conn: &mut Connection,
        slot: usize,
        scenario: u64,
        values: Values,
        step: usize,
        intended: Instant,
        retries: u32,
    ) {
        let (mut head, body) = self.plan.steps[step].request(&values);
        head.authority = self.authority.clone();
        if let Some(trace) = &self.plan.trace {
            let mut text = format!(
                "REQUEST[{scenario}/{step},{slot}]: {} {}://{}{}\n",
                String::from_utf8_lossy(&head.method),
                String::from_utf8_lossy(&head.scheme),
                String::from_utf8_lossy(&head.authority),
                String::from_utf8_lossy(&head.path)
            );
            trace::dump(&mut text, &[], &head.fields, &body);
            trace.line(&text);
        }
        self.started_at.get_or_insert(now);
        let sent = conn.send_request(head, body.is_empty()).and_then(|stream| {
            if !body.is_empty() {
                conn.send_data(stream, body, true)?;
            }
            Ok(stream)
        });
        self.report.started += 1;
        match sent {
            Ok(stream) => {
                self.by_stream.insert(stream, slot);
                self.slots[slot] = Some(Flight {
                    scenario,
                    values,
                    step,
                    stream,
                    intended,
                    sent: now,
                    first_byte: None,
                    status: None,
                    retries,
                    fields: Vec::new(),
                    body: Vec::new(),
                });
            }
            // The connection is going away: this request never left.
            Err(_) => self.report.errored += 1,
        }
    }

    /// A response is complete: record it, then run the next step or scenario.
    fn complete(&mut self, now: Instant, conn: &mut Connection, stream: StreamId) {
        let Some(slot) = self.by_stream.remove(&stream) else {
            return;
        };
        let Some(flight) = self.slots[slot].take() else {
            return;
        };
        let status = flight.status.unwrap_or(0);
        let elapsed = now.saturating_duration_since(flight.intended);
        self.plan.completed.fetch_add(1, Ordering::Relaxed);
        if self.plan.warmup_until.is_none_or(|t| now >= t) {
            self.report.done += 1;
            let class = usize::from(status / 100).clamp(1, 5) - 1;
            self.report.status_classes[class] += 1;
            if (100..400).contains(&status) {
                self.report.succeeded += 1;
            } else {
                self.report.failed += 1;
            }
            self.report.request_time.record(elapsed);
            if let Some(first) = flight.first_byte {
                self.report
                    .first_byte
                    .record(first.saturating_duration_since(flight.sent));
            }
        }
        if let Some(trace) = &self.plan.trace {
            let mut text = format!(
                "RESPONSE[{}/{},{slot}]: {status}\n",
                flight.scenario, flight.step
            );
            trace::dump(&mut text, &[], &flight.fields, &flight.body);
            trace.line(&text);
        }
        if let Some(slow) = self.plan.slow
            && elapsed > slow
        {
            self.dump_slow(slot, &flight, elapsed, status);
        }
        let next = flight.step + 1;
        if next < self.plan.steps.len() {
            self.send(
                now,
                conn,
                slot,
                flight.scenario,
                flight.values,
                next,
                now,
                0,
            );
        } else {
            self.fill(now, conn);
        }
    }

    fn dump_slow(&self, slot: usize, flight: &Flight, elapsed: Duration, status: u16) {
        let line = format!(
            "LONG TRANSACTION({}) DETECTED: elapsed_msec={} req_id={} req_step={} par_idx={slot} status={status}",
            flight.stream.value(),
            elapsed.as_millis(),
            flight.scenario,
            flight.step,
        );
        let (head, body) = self.plan.steps[flight.step].request(&flight.values);
        let mut text = format!(
            "{line}\nREQUEST: {} {}\n",
            String::from_utf8_lossy(&head.method),
            String::from_utf8_lossy(&head.path)
        );
        trace::dump(&mut text, &[], &head.fields, &body);
        text.push_str(&format!("\nRESPONSE: {status}\n"));
        trace::dump(&mut text, &[], &flight.fields, &flight.body);
        crate::trace::Stderr.line(&text);
    }

    /// A request ended without a response: retry it, or count it and move on.
    fn lost(&mut self, now: Instant, conn: &mut Connection, stream: StreamId, timed_out: bool) {
        let Some(slot) = self.by_stream.remove(&stream) else {
            return;
        };
        let Some(flight) = self.slots[slot].take() else {
            return;
        };
        if self.plan.retry && flight.retries < MAX_RETRIES && !timed_out {
            self.report.retried += 1;
            self.send(
                now,
                conn,
                slot,
                flight.scenario,
                flight.values,
                flight.step,
                flight.intended,
                flight.retries + 1,
            );
            return;
        }
        if timed_out {
            self.report.timed_out += 1;
        } else {
            self.report.errored += 1;
        }
        self.report.failed += 1;
        self.plan.completed.fetch_add(1, Ordering::Relaxed);
        self.fill(now, conn);
    }

    /// Counts this connection into the run's totals, once.
    fn finish(&mut self, now: Instant) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.report.elapsed = self
            .started_at
            .map_or(Duration::ZERO, |s| now.saturating_duration_since(s));
        if let Ok(mut total) = self.plan.report.lock() {
            total.merge(&self.report);
        }
    }
}

impl Application for ClientApp {
    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        match event {
            Event::Connected if self.started_at.is_none() => self.fill(now, conn),
            Event::Response {
                stream,
                head,
                end_stream,
            } => {
                let keep = self.plan.trace.is_some() || self.plan.slow.is_some();
                if let Some(flight) = self
                    .by_stream
                    .get(&stream)
                    .and_then(|&s| self.slots[s].as_mut())
                {
                    flight.first_byte.get_or_insert(now);
                    if !head.is_informational() {
                        flight.status = Some(head.status);
                        if keep {
                            flight.fields = head.fields;
                        }
                    }
                }
                if end_stream {
                    self.complete(now, conn, stream);
                }
            }
            Event::Data {
                stream,
                data,
                end_stream,
            } => {
                let keep = self.plan.trace.is_some() || self.plan.slow.is_some();
                if let Some(flight) = self
                    .by_stream
                    .get(&stream)
                    .and_then(|&s| self.slots[s].as_mut())
                    && keep
                    && flight.body.len() < DUMP_BODY_LIMIT
                {
                    flight.body.extend_from_slice(&data);
                }
                if end_stream {
                    self.complete(now, conn, stream);
                }
            }
            Event::Trailers { stream, .. } => self.complete(now, conn, stream),
            Event::PushPromise { .. } => self.report.pushes += 1,
            Event::Frame { outgoing, frame } => {
                crate::trace::Stdout.line(&trace::frame(outgoing, &frame));
            }
            Event::StreamReset { stream, .. } | Event::Retryable { stream } => {
                self.lost(now, conn, stream, false);
            }
            Event::Closed { .. } => {
                // Whatever was in flight is lost with the connection.
                let streams: Vec<StreamId> = self.by_stream.keys().copied().collect();
                for stream in streams {
                    if let Some(flight) = self
                        .by_stream
                        .remove(&stream)
                        .and_then(|s| self.slots[s].take())
                    {
                        let _ = flight;
                        self.report.errored += 1;
                        self.report.failed += 1;
                    }
                }
                self.report.traffic = conn.stats();
                self.finish(now);
            }
            _ => {}
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let pacing = self
            .next_start
            .filter(|_| self.slots.iter().any(Option::is_none));
        let timeouts = self
            .plan
            .timeout
            .and_then(|t| self.slots.iter().flatten().map(|f| f.sent + t).min());
        [
            pacing,
            timeouts,
            self.plan.stop_at.filter(|_| !self.finished),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        if let Some(timeout) = self.plan.timeout {
            let expired: Vec<StreamId> = self
                .slots
                .iter()
                .flatten()
                .filter(|f| f.sent + timeout <= now)
                .map(|f| f.stream)
                .collect();
            for stream in expired {
                let _ = conn.reset(stream, Reason::CANCEL);
                self.lost(now, conn, stream, true);
            }
        }
        if !self.finished {
            self.fill(now, conn);
        }
    }
}

impl Drop for ClientApp {
    fn drop(&mut self) {
        if !self.finished {
            let now = self
                .started_at
                .map_or_else(Instant::now, |s| s + self.report.elapsed);
            self.finish(now);
        }
    }
}
