//! The simulated client on one connection slot: `-P` stream slots, each
//! running scenarios (their steps in order) until the run's count or
//! duration is reached, paced when asked, timing every request. The
//! application outlives its connection: when the adapter replaces a lost
//! connection (or one that reached `--requests-per-connection`), the same
//! application goes on on the new one, carrying over the steps it still
//! owes. Sans-IO: events and time in, commands out.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2sim_proto::{
    Application, CloseCause, Connection, ConnectionError, Event, HeaderField, Protocol, Reason,
    RequestHead, Stats, StreamId, StreamMap, Violation,
};

use super::correlate::{Clock, Correlations};
use super::scenario::{Reuse, Step};
use super::slots::Slots;
use super::symbol::{Symbol, Values};
use super::token::Bearer;
use crate::ending::{ClientSide, Counts, Ending};
use crate::report::{Figure, LatencySink, Report, Samples, StepStats, Tls};
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
    /// A paced `-C` run: when its last send is due (`-C` at `-T`'s rate
    /// from the start). A send that leaves more than [`SCHEDULE_GRACE`] (or
    /// an interval, if longer) after it was missed, as a `--duration`
    /// run's send still waiting an interval after its end is: the run kept
    /// to its rate only if it sent its count by then. Before, such a run
    /// said `-T kept its rate` at a quarter of it, and passed.
    pub schedule_end: Option<Instant>,
    /// `--warmup`: requests sent before this are not counted.
    pub warmup_until: Option<Instant>,
    /// `-T TPS` split over the connections: one scenario start per interval
    /// on each connection, latency measured from the intended start.
    pub interval: Option<Duration>,
    /// Paced runs: when the send times start, the run's start. A
    /// connection's first send is due then however long connecting took
    /// (it goes out late and its latency says so), so a `--duration` run
    /// intends rate × duration sends, each of them sent or counted as
    /// missed. None: from the first connection's start.
    pub paced_from: Option<Instant>,
    /// Paced runs over several connections: each connection's send times
    /// start this much after the previous one's (the run's 1/N of `-T
    /// N`), so the run sends one request every 1/N second rather than a
    /// burst from every connection at once every interval.
    pub stagger: Duration,
    /// Connections taking a share of a paced run, for the stagger.
    pub paced_connections: u64,
    /// Connection slots made so far: the next one's place in the stagger.
    pub slots_made: AtomicU64,
    /// `-P N`: scenarios in flight per connection.
    pub slots: usize,
    /// Paced runs: when every slot is busy at a send time, the window grows
    /// up to this many slots (so `-T` keeps its rate when `-P` is below
    /// rate × latency); `slots` otherwise.
    pub max_slots: usize,
    /// `-r`: send a request again when its stream was reset or lost.
    pub retry: bool,
    /// `--timeout`: a request without a complete response by then is reset.
    pub timeout: Option<Duration>,
    /// `-D MS`: dump transactions taking this long or longer.
    pub slow: Option<Duration>,
    /// `--requests-per-connection N`: go away after N requests on a
    /// connection and go on on a new one.
    pub requests_per_connection: Option<u64>,
    /// Per-request dumps (not `-q`).
    pub trace: Option<Arc<dyn Trace>>,
    /// Notices and h2simple's per-connection `DISCONNECTED` lines (stderr).
    pub log: Option<Arc<dyn Trace>>,
    /// `-v`: one line per frame sent or received (set with the core's
    /// `Config::trace_frames`, which raises the frame events).
    pub frames: Option<Arc<dyn Trace>>,
    /// Next scenario number.
    pub next: AtomicU64,
    /// Requests ended so far, for the progress bar.
    pub completed: AtomicU64,
    /// Long transactions dumped so far (`-D` numbers them in order).
    pub slow_seen: AtomicU64,
    /// When the first Ctrl-C came: nothing new starts from then, what is
    /// in flight finishes, and a paced run's sends due after it were not
    /// missed, the run was cut short.
    interrupted_at: OnceLock<Instant>,
    /// `--listen`: each scenario instance's values, for timing the
    /// notifications that name them.
    pub correlations: Option<Arc<Correlations>>,
    /// `--token-url`: the `authorization` field every request carries.
    pub bearer: Option<Arc<Bearer>>,
    /// The run's latency histograms, which every slot records into.
    pub latencies: LatencySink,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("steps", &self.steps.len())
            .finish_non_exhaustive()
    }
}

/// How far behind a paced `-C` run's schedule a send may leave and still
/// count as kept (see `Plan::schedule_end`): the schedule counts from the
/// start of the run, so a short run's first sends wait for the connection
/// (a TLS handshake on a busy machine), which is not the rate's fault.
const SCHEDULE_GRACE: Duration = Duration::from_millis(100);

/// In-flight slots a paced connection may grow to (see `Plan::max_slots`).
pub const MAX_GROWN_SLOTS: usize = 1024;

impl Plan {
    /// A plan with `steps` (their texts kept for the run, see
    /// [`for_the_run`](crate::lasting::for_the_run)), `scenarios` of them
    /// on `slots` slots each, and everything else off; the caller sets what
    /// the command line asked.
    pub fn new(steps: Vec<Step>, scenarios: Option<u64>, slots: usize) -> Self {
        Plan {
            steps: steps.into_iter().map(Step::for_the_run).collect(),
            symbols: Vec::new(),
            wrap: None,
            scenarios,
            stop_at: None,
            schedule_end: None,
            warmup_until: None,
            interval: None,
            paced_from: None,
            stagger: Duration::ZERO,
            paced_connections: 1,
            slots_made: AtomicU64::new(0),
            slots: slots.max(1),
            max_slots: slots.max(1),
            retry: false,
            timeout: None,
            slow: None,
            requests_per_connection: None,
            trace: None,
            log: None,
            frames: None,
            next: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            slow_seen: AtomicU64::new(0),
            interrupted_at: OnceLock::new(),
            correlations: None,
            bearer: None,
            latencies: LatencySink::default(),
        }
    }

    /// Whether responses are dumped (the trace, or `-D` for slow
    /// transactions): their fields, body start and trailers are kept.
    fn dumps(&self) -> bool {
        self.trace.is_some() || self.slow.is_some()
    }

    /// The `-R` symbols; each step notes which of its texts hold none of
    /// them nor a captured one, to send those without scanning them.
    pub fn set_symbols(&mut self, symbols: Vec<Symbol>) {
        let captured = self.steps.iter().flat_map(|s| &s.captures);
        let names: Vec<String> = symbols
            .iter()
            .map(|s| s.name.clone())
            .chain(captured.map(|c| c.symbol.clone()))
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        for step in &mut self.steps {
            step.find_symbols(&names);
        }
        self.symbols = symbols;
    }

    /// Ctrl-C at `now`: no new scenario or step starts from now on.
    pub fn stop(&self, now: Instant) {
        let _ = self.interrupted_at.set(now);
    }

    /// Where a paced run's send times end: `--duration`'s end, or the
    /// Ctrl-C that cut the run short.
    fn sends_end(&self) -> Option<Instant> {
        match (self.stop_at, self.interrupted_at.get()) {
            (Some(end), Some(&cut)) => Some(end.min(cut)),
            (end, cut) => end.or(cut.copied()),
        }
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.interrupted_at.get().is_some()
    }

    /// Takes the next scenario number, if the run is not over.
    fn take_scenario(&self) -> Option<u64> {
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

/// Times a request refused with REFUSED_STREAM goes again, so a server
/// that refuses every stream cannot keep a connection busy for ever (a
/// request left unprocessed by a connection's end needs no bound: a
/// connection that answers nothing is a loss).
const MAX_REFUSALS: u8 = 3;

/// A step to send: a new scenario's first, the next of a running one, or
/// one to send again.
#[derive(Debug)]
struct Pending {
    scenario: u64,
    values: Values,
    step: usize,
    /// When the request should have gone out (paced runs) or was due.
    intended: Instant,
    retries: u32,
    /// Times the server refused it (REFUSED_STREAM) and it went again.
    refusals: u8,
    warmup: bool,
    /// Counted in `started` already (it went out once).
    started: bool,
    /// Why it goes out again, counted when it does: a request that waits
    /// for a connection that never comes is lost, not sent again.
    again: Option<Again>,
    /// `--listen`: this instance's clock, which its requests stamp.
    clock: Option<Arc<Clock>>,
}

/// Why a request that went out once goes out again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Again {
    /// `-r`: it ended without its response.
    Retry,
    /// The server did not process it (a GOAWAY's, a `connection: close`'s
    /// or a REFUSED_STREAM's).
    Unprocessed,
}

/// The request in flight on one slot. It moves at every send and answer
/// (into its slot and out), so it stays under 128 octets, which the
/// compiler moves inline rather than by a call to `memcpy`: what only dumps
/// and captures keep is in a box of its own.
#[derive(Debug)]
struct Flight {
    pending: Pending,
    sent: Instant,
    first_byte: Option<Instant>,
    status: Option<u16>,
    kept: Option<Box<Kept>>,
}

/// Response fields, body and trailers kept for dumps (trace or
/// slow-transaction dumps) and captures.
#[derive(Debug, Default)]
struct Kept {
    fields: Vec<HeaderField>,
    body: KeptBody,
    trailers: Vec<HeaderField>,
}

impl Kept {
    /// Appends the fields, the body as a dump shows it, and the trailers.
    fn dump(&self, out: &mut String) {
        let (fields, body) = (&self.fields, &self.body);
        trace::dump_kept(out, &[], fields, &body.start, body.len, &self.trailers);
    }
}

/// A response body's start, as much as its dumps or captures need, and
/// its whole length, which a dump shows when the body is too long.
#[derive(Debug, Default)]
struct KeptBody {
    start: Vec<u8>,
    len: usize,
}

impl KeptBody {
    /// Counts `data`, and keeps it while less than `limit` is kept.
    fn take(&mut self, data: &[u8], limit: usize) {
        self.len += data.len();
        if self.start.len() < limit {
            self.start.extend_from_slice(data);
        }
    }
}

impl Flight {
    /// Appends the response's fields, body (as much as was kept) and
    /// trailers.
    fn dump_response(&self, out: &mut String) {
        match &self.kept {
            Some(kept) => kept.dump(out),
            None => trace::dump(out, &[], &[], &[]),
        }
    }

    fn kept(&mut self) -> &mut Kept {
        self.kept.get_or_insert_with(Box::default)
    }
}

/// A pushed response being received, kept for its dump.
#[derive(Debug, Default)]
struct PushedResponse {
    status: u16,
    kept: Kept,
}

/// Bytes of response body kept for a step's JSON captures; a longer body
/// fails them (as not JSON) rather than growing without bound.
const CAPTURE_BODY_LIMIT: usize = 1024 * 1024;

/// The connection now in use, for its `DISCONNECTED` line and h2load's
/// per-connection rows.
#[derive(Debug)]
struct Link {
    /// When connecting started.
    opened: Instant,
    /// The server has said something: over HTTP/2 its SETTINGS, which
    /// are its side of the handshake (RFC 9113 §3.4); over HTTP/1.1 a
    /// response.
    spoke: bool,
    /// Its `time to 1st byte` is taken: as h2load's, at the first byte of
    /// a response's content, or the end of a response that has none (a
    /// server's SETTINGS, or a head whose content is slow to come, says
    /// nothing of how soon it answers).
    first_byte: bool,
    requests: u64,
    responses: u64,
    /// Requests that ended without their response while it lived: reset
    /// over HTTP/2 (by the server, or by us at `--timeout`); over
    /// HTTP/1.1, which resets nothing, timed out or cut off by its close,
    /// whether lost or sent again on the next connection (pipelined
    /// behind the server's `connection: close`).
    resets: u64,
    /// HTTP/2: requests the server did not process (above its GOAWAY's
    /// last stream, or refused with REFUSED_STREAM), which its line counts
    /// after h2simple's counts, when there are any.
    unprocessed: u64,
    pushes: u64,
    /// Its line counts in HTTP/1.1's words (see [`Counts`]).
    http1: bool,
    /// How long it took to set up, recorded when it ends unless the
    /// server refused it then (see [`ClientApp::close_link`]).
    connect_time: Option<Duration>,
    /// It was counted as a reconnect.
    reconnect: bool,
    /// We sent GOAWAY (or HTTP/1.1's last request): nothing new goes out.
    going_away: bool,
    /// When it went away with every answer in: its life for its line and
    /// its req/s ends there, as h2load's does, not at the close, which
    /// waits up to a second for a server that keeps its side open after
    /// our GOAWAY.
    done_at: Option<Instant>,
    /// HTTP/1.1: we went away with nothing left to write, so no request
    /// said `connection: close`; the transport just closed.
    quiet_close: bool,
    /// `--warmup`: the traffic counts from where the warm-up ended, which
    /// the report leaves out as it does the warm-up's requests (h2load
    /// counts bytes from its main phase too).
    traffic: TrafficFrom,
}

/// Where a connection's traffic starts to count.
#[derive(Debug)]
enum TrafficFrom {
    /// It opened after the warm-up (or the run has none): all of it.
    Start,
    /// It opened during the warm-up, which is not over yet: none so far.
    WarmupEnd,
    /// The warm-up ended while it was open: what came after this snapshot.
    Snapshot(Stats),
}

/// The client application of one connection slot.
pub struct ClientApp {
    plan: Arc<Plan>,
    slots: Slots<Flight>,
    /// Steps owed that wait for a free slot or a new connection.
    carry: VecDeque<Pending>,
    /// Paced runs: when the next scenario may start.
    next_start: Option<Instant>,
    /// Paced runs: when this slot's first send is due (the run's start,
    /// staggered by the slot's place among the run's connections).
    first_send: Option<Instant>,
    /// As many requests are in flight as the server lets streams be open
    /// (its MAX_CONCURRENT_STREAMS): the next waits for one to end, here
    /// rather than queued in the core, where its time would count as the
    /// server's (see `Connection::peer_stream_limit`).
    at_server_limit: bool,
    /// No new scenario will start (count reached, duration over, Ctrl-C).
    exhausted: bool,
    /// The scenario claimed for the next connection when the last one
    /// ended, so that a slot opens a connection only for a scenario it
    /// has: with a connection per request, slots that each saw one left
    /// opened connections that found none.
    reserved: Option<u64>,
    /// Counts; the latencies go to the plan's sink (see `samples`). Boxed:
    /// the slot's task holds the application inline, and a run of many
    /// connections pays for its size in each.
    report: Box<Report>,
    /// Latency samples not yet in the plan's sink.
    samples: Samples,
    link: Option<Link>,
    /// Connections this slot has had.
    links: u64,
    /// How long the next connection took to set up, until it starts.
    connect_time: Option<Duration>,
    /// Its last connection was refused by the server once the TLS
    /// handshake was over on our side (see [`ClientApp::close_link`]).
    refused: bool,
    /// The server this connection reaches (`--server`): its authority goes
    /// in every request instead of the steps'.
    authority: Bytes,
    /// Pushed responses being received, by promised stream (dumps only).
    pushed: StreamMap<PushedResponse>,
    reuse: Reuse,
    /// The values of finished scenarios, for the next ones to fill in
    /// again instead of allocating their own (at most one per scenario in
    /// flight).
    spare_values: Vec<Values>,
    last_now: Option<Instant>,
}

impl ClientApp {
    /// `connect_time` is how long the transport (and TLS) took to set up.
    pub fn new(plan: Arc<Plan>, connect_time: Duration, authority: Bytes) -> Self {
        let slots = Slots::new(plan.slots.max(1));
        let report = Box::new(Report {
            steps: plan
                .steps
                .iter()
                .map(|s| StepStats::new(s.label()))
                .collect(),
            show_steps: plan.steps.len() > 1
                || plan.steps.iter().any(|s| s.ends_scenario_on_failure()),
            ..Report::default()
        });
        let place = plan.slots_made.fetch_add(1, Ordering::Relaxed) % plan.paced_connections.max(1);
        let stagger = plan.stagger * u32::try_from(place).unwrap_or(u32::MAX);
        let first_send = plan.paced_from.map(|t| t + stagger);
        ClientApp {
            plan,
            slots,
            carry: VecDeque::new(),
            next_start: None,
            first_send,
            at_server_limit: false,
            exhausted: false,
            reserved: None,
            report,
            samples: Samples::default(),
            link: None,
            links: 0,
            connect_time: Some(connect_time),
            refused: false,
            authority,
            pushed: StreamMap::default(),
            reuse: Reuse::default(),
            spare_values: Vec::new(),
            last_now: None,
        }
    }

    /// Names the application protocol for the report (`h2c`, `h2`,
    /// `http/1.1`), and what TLS agreed on.
    pub fn with_protocol(mut self, name: &str, tls: Option<Tls>) -> Self {
        self.report.protocol = Some(name.to_owned());
        self.report.tls = tls;
        self
    }

    /// This slot's counts, once its last connection is over; its
    /// latencies are in the plan's sink by then.
    ///
    /// A slot whose last connection was lost with no successor (its server
    /// gone, no `-r`, or `-r`'s reconnects spent) ends here with its run
    /// unfinished: the requests it still owed for scenarios it had begun
    /// are counted as abandoned, and a paced run's send times left before
    /// its end as missed.
    pub fn into_report(mut self) -> Report {
        if self.link.is_some() {
            let now = self.last_now.unwrap_or_else(Instant::now);
            self.close_link(now, None, &Ending::Side(ClientSide::RunOver), false);
        }
        self.exhaust();
        // A scenario's first step that never went out was not begun: a
        // run of no set count owed it nothing.
        let owed = self
            .carry
            .iter()
            .filter(|p| !p.warmup && (p.started || p.step > 0));
        let owed = owed.count();
        self.report.abandoned += owed as u64;
        // None of its connections came up: it agreed on no protocol.
        if self.report.connections == 0 {
            self.report.protocol = None;
            self.report.tls = None;
        }
        self.samples.flush(&self.plan.latencies);
        *self.report
    }

    /// Whether this connection has sent all it may (`--requests-per-connection`).
    fn link_full(&self) -> bool {
        match (&self.link, self.plan.requests_per_connection) {
            (Some(link), Some(max)) => link.requests >= max,
            _ => false,
        }
    }

    /// A slot is free, or the window may grow by one.
    fn can_start(&self) -> bool {
        self.slots.free().is_some() || self.slots.len() < self.plan.max_slots
    }

    /// The server's stream limit holds back a request `-P` has room for:
    /// noted for the report, which says it once for the run; or it holds
    /// a paced window grown past `-P`, which the verdict on the rate names.
    fn held_by_server(&mut self, conn: &Connection) {
        self.at_server_limit = true;
        let asked = self.plan.slots as u64;
        let Some(limit) = conn.peer_stream_limit().map(u64::from) else {
            return;
        };
        if limit < asked {
            self.report.capped(limit, asked);
        } else if self.slots.len() > self.plan.slots.max(1) {
            // A paced window grown past `-P` stopped at the server's limit.
            self.report.window_held_at = self.report.window_held_at.max(limit);
        }
    }

    /// Whether the server lets one more request of ours be in flight.
    fn below_server_limit(&self, conn: &Connection) -> bool {
        conn.peer_stream_limit()
            .is_none_or(|limit| self.slots.busy() < limit as usize)
    }

    /// `--duration` runs: until when a send due before the end may wait
    /// for a slot (one interval after the end); what still waits then was
    /// missed.
    fn last_send_by(&self) -> Option<Instant> {
        let grace = self.plan.interval.unwrap_or_default();
        self.plan.stop_at.map(|t| t + grace)
    }

    /// Paced runs: when the next scenario is due (this slot's staggered
    /// start before the first).
    fn next_send(&self) -> Option<Instant> {
        self.next_start.or(self.first_send)
    }

    /// Marks the run over for this slot; a paced `--duration` run counts
    /// the send times it never reached before its end (or before the
    /// Ctrl-C that cut it short): those the window could not take, and
    /// those of a slot whose server went away for good.
    fn exhaust(&mut self) {
        if self.exhausted {
            return;
        }
        self.exhausted = true;
        self.reserved = None;
        if let (Some(interval), Some(at), Some(end)) =
            (self.plan.interval, self.next_send(), self.plan.sends_end())
            && self.plan.stop_at.is_some()
            && at < end
            && !interval.is_zero()
        {
            let behind = (end - at).as_secs_f64() / interval.as_secs_f64();
            self.report.missed += behind.ceil() as u64;
        }
        self.next_start = None;
    }

    /// Fills idle slots with owed steps and new scenarios, as pacing allows;
    /// when nothing is left for this connection, ends it gracefully.
    fn fill(&mut self, now: Instant, conn: &mut Connection) {
        self.last_now = Some(now);
        self.at_server_limit = false;
        while self.link.as_ref().is_some_and(|l| !l.going_away) && !self.link_full() {
            let room = self.below_server_limit(conn);
            if !self.carry.is_empty() {
                if !room {
                    self.held_by_server(conn);
                    break;
                }
                let Some(slot) = self.slots.free() else { break };
                if let Some(pending) = self.carry.pop_front() {
                    self.send(now, conn, slot, pending);
                }
                continue;
            }
            if self.exhausted {
                break;
            }
            let intended = match (self.plan.interval, self.next_send()) {
                (Some(_), Some(at)) if at > now => break,
                (Some(_), at) => at.unwrap_or(now),
                (None, _) => now,
            };
            // A send due before the end goes out late, like any other, if
            // a slot takes it when the client runs (its timer may wake up
            // well after the end on a busy machine); one still waiting for
            // a slot an interval after the end was missed.
            let blocked = !room || !self.can_start();
            let over = self.plan.stop_at.is_some_and(|t| intended >= t)
                || (blocked && self.last_send_by().is_some_and(|last| now >= last));
            if self.plan.is_stopping() || over {
                self.exhaust();
                break;
            }
            if !room {
                self.held_by_server(conn);
                break;
            }
            let slot = match self.slots.free() {
                Some(slot) => slot,
                None if self.plan.interval.is_some() && self.slots.len() < self.plan.max_slots => {
                    self.grow()
                }
                None => break,
            };
            let Some(scenario) = self.reserved.take().or_else(|| self.plan.take_scenario()) else {
                self.exhaust();
                break;
            };
            if let Some(interval) = self.plan.interval {
                self.next_start = Some(intended + interval);
                let grace = interval.max(SCHEDULE_GRACE);
                if self.plan.schedule_end.is_some_and(|end| now > end + grace) {
                    self.report.missed += 1;
                }
            }
            let values = match self.spare_values.pop() {
                Some(mut values) => {
                    values.refill(&self.plan.symbols, scenario);
                    values
                }
                None => Values::new(&self.plan.symbols, scenario),
            };
            let pending = Pending {
                scenario,
                values,
                step: 0,
                intended,
                retries: 0,
                refusals: 0,
                warmup: self.plan.warmup_until.is_some_and(|t| intended < t),
                started: false,
                again: None,
                clock: None,
            };
            self.send(now, conn, slot, pending);
        }
        // An HTTP/1.1 connection that has sent all it may goes away at once,
        // before its last request is written, so that request says
        // `connection: close` and the server closes first and keeps the
        // TIME_WAIT. A client that closed first held a TIME_WAIT per
        // connection, and with a connection per request its connects spent
        // a sixth of the client's CPU searching the ports for one not in
        // TIME_WAIT. An HTTP/2 connection waits for its answers: its
        // GOAWAY would refuse the pushes still to come (RFC 9113 §6.8).
        let full = self.link_full();
        let done_here = full && conn.protocol() == Some(Protocol::Http1)
            || self.slots.is_idle() && (full || self.carry.is_empty() && self.exhausted);
        if done_here
            && let Some(link) = self.link.as_mut()
            && !link.going_away
        {
            // Graceful: the Closed event that follows counts the traffic.
            link.going_away = true;
            link.quiet_close = !full;
            link.done_at = self.slots.is_idle().then_some(now);
            conn.go_away(now);
        }
    }

    /// A paced connection needs one more slot than `-P` to keep its rate;
    /// the report says how far the window grew (a notice at the moment it
    /// happens would fire on every run whose connect took longer than one
    /// send interval, as the first sends are then due together).
    fn grow(&mut self) -> usize {
        let slot = self.slots.grow();
        self.report.window_grown_to = self.report.window_grown_to.max(self.slots.len() as u64);
        slot
    }

    fn send(&mut self, now: Instant, conn: &mut Connection, slot: usize, mut pending: Pending) {
        // Unpaced, a request's time runs from when it goes out, as
        // h2load's does: not from when an earlier step ended, if it waited
        // for the server's stream limit since.
        if self.plan.interval.is_none() && !pending.started {
            pending.intended = now;
        }
        let (mut head, body) = self.plan.steps[pending.step].request(
            &pending.values,
            &self.authority,
            &mut self.reuse,
            conn.spare_fields(),
        );
        if let Some(field) = self.plan.bearer.as_ref().and_then(|b| b.header()) {
            head.fields.push(field);
        }
        if let Some(correlations) = &self.plan.correlations {
            match &pending.clock {
                Some(clock) => correlations.stamp(clock, now),
                None => {
                    let clock = correlations.clock(now);
                    correlations.register(pending.values.values(), &clock);
                    pending.clock = Some(clock);
                }
            }
        }
        if let Some(trace) = &self.plan.trace {
            let mut text = format!(
                "REQUEST[{}/{},{slot}]: {}\n",
                pending.scenario,
                pending.step,
                target(&head)
            );
            trace::dump(&mut text, &[], &head.fields, &body);
            trace.line(&text);
        }
        let sent = conn.send_request(head, body.is_empty()).and_then(|stream| {
            if !body.is_empty() {
                conn.send_data(stream, body, true)?;
            }
            Ok(stream)
        });
        match sent {
            Ok(stream) => {
                if !pending.started && !pending.warmup {
                    self.report.started += 1;
                    self.report.steps[pending.step].started += 1;
                }
                pending.started = true;
                match pending.again.take() {
                    Some(Again::Retry) => self.report.retried += 1,
                    Some(Again::Unprocessed) => self.report.resent += 1,
                    None => {}
                }
                if let Some(link) = self.link.as_mut() {
                    link.requests += 1;
                }
                self.slots.fill(
                    slot,
                    stream,
                    Flight {
                        pending,
                        sent: now,
                        first_byte: None,
                        status: None,
                        kept: None,
                    },
                );
            }
            // The connection is going away (the server said so, HTTP/1.0
            // after its response): the request never left; it waits for
            // the next connection, if one comes.
            Err(_) => {
                if let Some(link) = self.link.as_mut() {
                    link.going_away = true;
                }
                self.carry.push_front(pending);
            }
        }
    }

    /// A response is complete: record it, then run the next step or scenario.
    fn complete(&mut self, now: Instant, conn: &mut Connection, stream: StreamId) {
        let Some((slot, flight)) = self.slots.remove(stream) else {
            return;
        };
        let mut flight = flight;
        let status = flight.status.unwrap_or(0);
        let elapsed = now.saturating_duration_since(flight.pending.intended);
        self.plan.completed.fetch_add(1, Ordering::Relaxed);
        if let Some(link) = self.link.as_mut() {
            link.responses += 1;
        }
        let step = &self.plan.steps[flight.pending.step];
        let expected = step.succeeds(status);
        let captured = expected && capture(&self.plan, step, &mut flight);
        let ok = expected && captured;
        let ends = step.ends_scenario_on_failure();
        if flight.pending.warmup {
            self.report.warmup += 1;
        } else {
            self.report.record_response(status, ok);
            self.report.last_done = self.report.last_done.max(Some(now));
            let sink = &self.plan.latencies;
            if let Some(first) = flight.first_byte {
                let waited = first.saturating_duration_since(flight.sent);
                self.samples.record(Figure::RequestFirstByte, waited, sink);
            }
            let step = Figure::Step(flight.pending.step);
            self.samples.record(step, elapsed, sink);
            let stats = &mut self.report.steps[flight.pending.step];
            stats.done += 1;
            if ok {
                stats.succeeded += 1;
            } else {
                stats.failed += 1;
                stats.unexpected += u64::from(!expected);
                stats.uncaptured += u64::from(expected && !captured);
            }
        }
        if let Some(trace) = &self.plan.trace {
            let mut text = format!(
                "RESPONSE[{}/{},{slot}]: {status}\n",
                flight.pending.scenario, flight.pending.step
            );
            flight.dump_response(&mut text);
            trace.line(&text);
        }
        if let Some(slow) = self.plan.slow
            && elapsed >= slow
        {
            self.dump_slow(slot, &flight, elapsed, status);
        }
        let next = flight.pending.step + 1;
        if (ok || !ends) && next < self.plan.steps.len() && !self.plan.is_stopping() {
            self.carry.push_front(Pending {
                step: next,
                intended: now,
                retries: 0,
                refusals: 0,
                started: false,
                again: None,
                ..flight.pending
            });
        } else {
            if !ok && ends {
                self.skip_after(&flight.pending);
            }
            self.spare_values.push(flight.pending.values);
        }
        self.fill(now, conn);
    }

    /// A step failed what its scenario depends on: the scenario's later
    /// steps are not sent, and count as skipped.
    fn skip_after(&mut self, pending: &Pending) {
        let rest = self.plan.steps.len() - pending.step - 1;
        self.plan
            .completed
            .fetch_add(rest as u64, Ordering::Relaxed);
        if pending.warmup {
            return;
        }
        self.report.skipped += rest as u64;
        for stats in &mut self.report.steps[pending.step + 1..] {
            stats.skipped += 1;
        }
    }

    fn dump_slow(&self, slot: usize, flight: &Flight, elapsed: Duration, status: u16) {
        let n = self.plan.slow_seen.fetch_add(1, Ordering::Relaxed) + 1;
        let line = format!(
            "LONG TRANSACTION({n}) DETECTED: elapsed_msec={} req_id={} req_step={} par_idx={slot} status={status}",
            elapsed.as_millis(),
            flight.pending.scenario,
            flight.pending.step,
        );
        let (head, body) = self.plan.steps[flight.pending.step].request(
            &flight.pending.values,
            &self.authority,
            &mut Reuse::default(),
            Vec::new(),
        );
        let mut text = format!(
            "{line}\nREQUEST: {} {}\n",
            String::from_utf8_lossy(&head.method),
            String::from_utf8_lossy(&head.path)
        );
        trace::dump(&mut text, &[], &head.fields, &body);
        text.push_str(&format!("\nRESPONSE: {status}\n"));
        flight.dump_response(&mut text);
        match &self.plan.log {
            Some(log) => log.line(&text),
            None => crate::trace::Stderr.line(&text),
        }
    }

    /// A request ended without its whole response: retry it (on this
    /// connection or the next), or count it. A final status that came is
    /// counted either way, as h2load counts it when the field arrives.
    fn ended_without_response(&mut self, now: Instant, flight: Flight, timed_out: bool) {
        let Flight {
            pending, status, ..
        } = flight;
        if let Some(status) = status
            && !pending.warmup
        {
            self.report.count_status(status);
        }
        if self.plan.retry && pending.retries < MAX_RETRIES && !timed_out {
            self.carry.push_back(Pending {
                retries: pending.retries + 1,
                again: Some(Again::Retry),
                ..pending
            });
            return;
        }
        self.plan.completed.fetch_add(1, Ordering::Relaxed);
        if pending.warmup {
            self.report.warmup += 1;
        } else {
            self.report.record_error(timed_out);
            self.report.last_done = self.report.last_done.max(Some(now));
            let stats = &mut self.report.steps[pending.step];
            stats.done += 1;
            stats.failed += 1;
            stats.errored += 1;
        }
        // The scenario ends here in any case; a step its later steps
        // depend on says so in the report (the others' count as lost, as
        // they always did).
        if self.plan.steps[pending.step].ends_scenario_on_failure() {
            self.skip_after(&pending);
        }
    }

    /// A stream we opened ended without its response.
    fn lost(&mut self, now: Instant, conn: &mut Connection, stream: StreamId, timed_out: bool) {
        let Some((_, flight)) = self.slots.remove(stream) else {
            return;
        };
        if let Some(link) = self.link.as_mut() {
            link.resets += 1;
        }
        self.ended_without_response(now, flight, timed_out);
        self.fill(now, conn);
    }

    /// The server did not process a request we sent: it was above the last
    /// stream of its GOAWAY (RFC 9113 §6.8) or pipelined behind its
    /// `connection: close` (RFC 9112 §9.6), or never left, or the server
    /// refused it (see [`ClientApp::refused`]). It goes again, on this
    /// connection's successor (or on this one, after a refusal), with or
    /// without `-r`: nothing of it failed. The successor comes, as the end
    /// is planned, and a server that answers nothing on it makes that a
    /// loss, so this cannot loop.
    fn unprocessed(&mut self, now: Instant, conn: &mut Connection, stream: StreamId) {
        let Some((_, flight)) = self.slots.remove(stream) else {
            return;
        };
        // Over HTTP/1.1 it went unanswered on this connection, as its line
        // counts (against nginx's 1,000-request limit: `1004 reqs 1000 rsps
        // 0 unanswered`); HTTP/2's counts resets, which this was not.
        if let Some(link) = self.link.as_mut() {
            if link.http1 {
                link.resets += 1;
            } else {
                link.unprocessed += 1;
            }
        }
        self.carry.push_back(Pending {
            again: Some(Again::Unprocessed),
            ..flight.pending
        });
        self.fill(now, conn);
    }

    /// The server refused a request with REFUSED_STREAM: it was not
    /// processed (RFC 9113 §8.7), so it goes again, as one a connection's
    /// end left unprocessed does, up to [`MAX_REFUSALS`] times; then it is
    /// lost as any reset is (and `-r` may still retry it).
    fn refused(&mut self, now: Instant, conn: &mut Connection, stream: StreamId) {
        let Some(flight) = self.slots.get_mut(stream) else {
            return;
        };
        if flight.pending.refusals >= MAX_REFUSALS {
            self.lost(now, conn, stream, false);
            return;
        }
        flight.pending.refusals += 1;
        self.unprocessed(now, conn, stream);
    }

    /// The connection is over: what was in flight is lost with it (or owed
    /// to the next one under `-r`); its line is printed and its figures
    /// counted.
    ///
    /// `refusal`: it ended in a TLS alert from the server, or in
    /// `--connect-timeout` passing without the server's SETTINGS. One that
    /// came before the server said anything (its SETTINGS, or an HTTP/1.1
    /// response) refused the handshake: over TLS 1.3 the handshake is over
    /// on the client's side before the server has checked the client's
    /// certificate (RFC 8446 §4.4.2.4), so a refused certificate, or a
    /// missing one, is told at the first read; a server that accepts and
    /// never speaks lets the HTTP/2 handshake time out. Such a connection
    /// never came up: it is not counted as made (nor its connect time),
    /// and prints no line, as a failed handshake does not; the run's error
    /// line names the alert or the timeout, and the slot counts as
    /// unreachable.
    ///
    /// An HTTP/2 connection that ended before the server's SETTINGS for
    /// any other reason never came up either, and is counted the same
    /// way: the server closed it first (the run's error line says so), or
    /// a Ctrl-C's GOAWAY ended the handshake, which makes the slot neither
    /// made nor unreachable (the server had not yet said whether it
    /// would answer). Both counted it as made, with its connect time and
    /// line.
    fn close_link(
        &mut self,
        now: Instant,
        stats: Option<Stats>,
        cause: &Ending<ClientSide>,
        refusal: bool,
    ) {
        let flights = self.slots.drain();
        self.pushed.clear();
        for flight in flights {
            self.ended_without_response(now, flight, false);
        }
        let Some(link) = self.link.take() else {
            return;
        };
        match (stats, &link.traffic) {
            (Some(stats), TrafficFrom::Start) => self.report.traffic.merge(&stats),
            (Some(stats), TrafficFrom::Snapshot(from)) => {
                self.report.traffic.merge(&stats.since(from));
            }
            (None, _) | (_, TrafficFrom::WarmupEnd) => {}
        }
        self.refused = refusal && !link.spoke;
        if !link.spoke && (refusal || !link.http1) {
            self.report.connections -= 1;
            self.report.reconnects -= u64::from(link.reconnect);
            return;
        }
        if let Some(t) = link.connect_time {
            self.samples
                .record(Figure::ConnectTime, t, &self.plan.latencies);
        }
        let lifetime = link
            .done_at
            .unwrap_or(now)
            .saturating_duration_since(link.opened);
        let counts = Counts {
            requests: link.requests,
            responses: link.responses,
            resets: link.resets,
            pushes: link.pushes,
            http1: link.http1,
        };
        if !lifetime.is_zero() {
            self.report.connection_rps.push(counts.tps(lifetime));
        }
        if let Some(log) = &self.plan.log {
            let mut line = counts.line(String::from_utf8_lossy(&self.authority), cause, lifetime);
            if link.unprocessed > 0 {
                let _ = write!(line, " {} unprocessed", link.unprocessed);
            }
            log.line(&line);
        }
    }

    /// Its last connection was refused once the TLS handshake was over on
    /// our side (see [`ClientApp::close_link`]): it never came up.
    pub fn refused_at_handshake(&self) -> bool {
        self.refused
    }

    /// The warm-up is over: a connection open since before takes a
    /// snapshot of its traffic, from which its counts start.
    fn note_warmup_end(&mut self, now: Instant, conn: &Connection) {
        if let Some(link) = self.link.as_mut()
            && matches!(link.traffic, TrafficFrom::WarmupEnd)
            && self.plan.warmup_until.is_some_and(|t| now >= t)
        {
            link.traffic = TrafficFrom::Snapshot(conn.stats());
        }
    }

    fn on_push_promise(&mut self, parent: StreamId, promised: StreamId, request: &RequestHead) {
        self.report.pushes += 1;
        if let Some(link) = self.link.as_mut() {
            link.pushes += 1;
        }
        let Some(trace) = &self.plan.trace else {
            return;
        };
        let at = self
            .slots
            .get(parent)
            .map(|(s, f)| format!("{}/{},{s}", f.pending.scenario, f.pending.step))
            .unwrap_or_default();
        let mut text = format!(
            "PUSH_PROMISE[{at}]: promised stream {} {}\n",
            promised.value(),
            target(request)
        );
        trace::dump(&mut text, &[], &request.fields, &[]);
        trace.line(&text);
        self.pushed.insert(promised, PushedResponse::default());
    }

    /// A pushed response is complete: dump it.
    fn push_complete(&mut self, promised: StreamId) {
        if let (Some(pushed), Some(trace)) = (self.pushed.remove(&promised), &self.plan.trace) {
            let mut text = format!("PUSH_RESPONSE[{}]: {}\n", promised.value(), pushed.status);
            pushed.kept.dump(&mut text);
            trace.line(&text);
        }
    }

    /// The server said something on the connection in use.
    fn spoke(&mut self) {
        if let Some(link) = self.link.as_mut() {
            link.spoke = true;
        }
    }

    /// A response's content began, or a response without any ended: the
    /// connection's `time to 1st byte`, once.
    fn first_byte(&mut self, now: Instant) {
        if let Some(link) = self.link.as_mut()
            && !link.first_byte
        {
            link.first_byte = true;
            let waited = now.saturating_duration_since(link.opened);
            self.samples
                .record(Figure::FirstByte, waited, &self.plan.latencies);
        }
    }
}

/// Runs the step's captures on its response into the instance's
/// values; false when one found nothing.
fn capture(plan: &Plan, step: &Step, flight: &mut Flight) -> bool {
    if step.captures.is_empty() {
        return true;
    }
    let Flight {
        pending,
        status,
        kept,
        ..
    } = flight;
    let (fields, body) = kept
        .as_deref()
        .map_or((&[][..], &[][..]), |k| (&k.fields[..], &k.body.start[..]));
    let json = step
        .captures
        .iter()
        .any(|c| c.needs_body())
        .then(|| crate::json_pointer::parse(body))
        .flatten();
    let status = status.unwrap_or(0);
    for capture in &step.captures {
        match capture.take(status, fields, json) {
            Ok(value) => {
                if let (Some(correlations), Some(clock), false) = (
                    &plan.correlations,
                    &pending.clock,
                    matches!(capture.source, super::capture::Source::Status),
                ) {
                    correlations.register([value.as_str()], clock);
                }
                pending.values.set(&capture.needle, value);
            }
            Err(missing) => {
                if let Some(trace) = &plan.trace {
                    trace.line(&format!(
                        "CAPTURE[{}/{}]: {} not captured: {missing}",
                        pending.scenario, pending.step, capture.symbol
                    ));
                }
                return false;
            }
        }
    }
    true
}

/// `METHOD scheme://authority/path`, for dumps.
fn target(head: &RequestHead) -> String {
    format!(
        "{} {}://{}{}",
        String::from_utf8_lossy(&head.method),
        String::from_utf8_lossy(&head.scheme),
        String::from_utf8_lossy(&head.authority),
        String::from_utf8_lossy(&head.path)
    )
}

impl Application for ClientApp {
    /// A new connection (the first, or a replacement).
    fn start(&mut self, now: Instant, conn: &mut Connection) {
        // Given to `new` for the first connection, to `reconnected` for
        // each replacement.
        let connect_time = self.connect_time.take();
        self.report.connections += 1;
        let reconnect = self.links > 0;
        self.report.reconnects += u64::from(reconnect);
        self.links += 1;
        self.link = Some(Link {
            opened: now
                .checked_sub(connect_time.unwrap_or_default())
                .unwrap_or(now),
            connect_time,
            reconnect,
            spoke: false,
            first_byte: false,
            requests: 0,
            responses: 0,
            resets: 0,
            unprocessed: 0,
            pushes: 0,
            http1: conn.protocol() == Some(Protocol::Http1),
            going_away: false,
            done_at: None,
            quiet_close: false,
            traffic: if self.plan.warmup_until.is_some_and(|t| now < t) {
                TrafficFrom::WarmupEnd
            } else {
                TrafficFrom::Start
            },
        });
        self.last_now = Some(now);
    }

    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        self.last_now = Some(now);
        self.note_warmup_end(now, conn);
        match event {
            Event::Connected => {
                // HTTP/2: the server's SETTINGS are its first bytes.
                if conn.protocol() == Some(Protocol::Http2) {
                    self.spoke();
                }
                self.fill(now, conn);
            }
            Event::Response {
                stream,
                head,
                end_stream,
            } => {
                self.spoke();
                if end_stream {
                    self.first_byte(now);
                }
                if let Some(pushed) = self.pushed.get_mut(&stream) {
                    pushed.status = head.status;
                    pushed.kept.fields = head.fields;
                    if end_stream {
                        self.push_complete(stream);
                    }
                    return;
                }
                let dumps = self.plan.dumps();
                if let Some(flight) = self.slots.get_mut(stream) {
                    flight.first_byte.get_or_insert(now);
                    if !head.is_informational() {
                        flight.status = Some(head.status);
                        let step = &self.plan.steps[flight.pending.step];
                        if dumps || step.captures.iter().any(|c| c.needs_fields()) {
                            flight.kept().fields = head.fields;
                        } else {
                            conn.recycle_fields(head.fields);
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
                if end_stream || !data.is_empty() {
                    self.first_byte(now);
                }
                if let Some(pushed) = self.pushed.get_mut(&stream) {
                    pushed.kept.body.take(&data, trace::SHOWN_BODY);
                    if end_stream {
                        self.push_complete(stream);
                    }
                    return;
                }
                let dumps = self.plan.dumps();
                if let Some(flight) = self.slots.get_mut(stream) {
                    let step = &self.plan.steps[flight.pending.step];
                    let limit = if step.captures.iter().any(|c| c.needs_body()) {
                        CAPTURE_BODY_LIMIT
                    } else if dumps {
                        trace::SHOWN_BODY
                    } else {
                        0
                    };
                    if limit > 0 {
                        flight.kept().body.take(&data, limit);
                    }
                }
                if end_stream {
                    self.complete(now, conn, stream);
                }
            }
            Event::Trailers { stream, fields } => {
                self.first_byte(now);
                if let Some(pushed) = self.pushed.get_mut(&stream) {
                    pushed.kept.trailers = fields;
                    self.push_complete(stream);
                    return;
                }
                if self.plan.dumps()
                    && let Some(flight) = self.slots.get_mut(stream)
                {
                    flight.kept().trailers = fields;
                }
                self.complete(now, conn, stream);
            }
            Event::PushPromise {
                parent,
                promised,
                request,
            } => self.on_push_promise(parent, promised, &request),
            Event::Frame { outgoing, frame } => {
                if let Some(frames) = &self.plan.frames {
                    frames.line(&trace::frame(outgoing, &frame));
                }
            }
            Event::StreamReset {
                stream,
                reason: Reason::REFUSED_STREAM,
                remote: true,
                ..
            } if self.slots.get(stream).is_some() => self.refused(now, conn, stream),
            Event::StreamReset { stream, .. } if self.pushed.remove(&stream).is_none() => {
                self.lost(now, conn, stream, false);
            }
            Event::Retryable { stream } => self.unprocessed(now, conn, stream),
            Event::Closed { cause, .. } => {
                let quiet = self.link.as_ref().is_some_and(|l| l.quiet_close);
                let ending = Ending::client(&cause, conn.protocol(), quiet);
                let refusal = match &cause {
                    CloseCause::TransportError(f) => f.alert.is_some(),
                    CloseCause::Error(ConnectionError::Local {
                        violation: Violation::SettingsTimeout,
                        ..
                    }) => true,
                    _ => false,
                };
                self.close_link(now, Some(conn.stats()), &ending, refusal);
            }
            _ => {}
        }
    }

    fn reconnected(&mut self, connect_time: Duration) {
        self.connect_time = Some(connect_time);
    }

    /// Whether a replacement connection should be opened: the slot still has
    /// steps to send, or claims the next scenario here.
    fn wants_reconnect(&mut self) -> bool {
        if !self.carry.is_empty() {
            return true;
        }
        // A paced run knows when its next send is due: one due at or after
        // the end needs no connection.
        let due = self.next_send().or(self.last_now);
        let over =
            self.plan.is_stopping() || self.plan.stop_at.zip(due).is_some_and(|(t, at)| at >= t);
        if over {
            self.exhaust();
        }
        if self.exhausted {
            return false;
        }
        self.reserved = self.reserved.or_else(|| self.plan.take_scenario());
        if self.reserved.is_none() {
            self.exhaust();
        }
        self.reserved.is_some()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let open = self.link.as_ref().is_some_and(|l| !l.going_away)
            && !self.exhausted
            && !self.link_full();
        let pacing = self
            .next_send()
            .filter(|_| open && self.can_start() && !self.at_server_limit);
        let timeouts = self
            .plan
            .timeout
            .and_then(|t| self.slots.iter().map(|(_, f)| f.sent + t).min());
        let end = self.last_send_by().filter(|_| open);
        [pacing, timeouts, end].into_iter().flatten().min()
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        self.note_warmup_end(now, conn);
        if let Some(timeout) = self.plan.timeout {
            let expired: Vec<StreamId> = self
                .slots
                .iter()
                .filter(|(_, f)| f.sent + timeout <= now)
                .map(|(stream, _)| stream)
                .collect();
            for stream in expired {
                let _ = conn.reset(stream, Reason::CANCEL);
                self.lost(now, conn, stream, true);
            }
        }
        self.fill(now, conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-T` over four connections: their first sends are a quarter of an
    /// interval apart, so the run sends evenly, not four at once.
    #[test]
    fn paced_connections_start_staggered() {
        let start = Instant::now();
        let mut plan = Plan::new(Vec::new(), None, 1);
        plan.paced_from = Some(start);
        plan.interval = Some(Duration::from_millis(40));
        plan.stagger = Duration::from_millis(10);
        plan.paced_connections = 4;
        let plan = Arc::new(plan);
        let firsts: Vec<Duration> = (0..5)
            .map(|_| {
                let app = ClientApp::new(plan.clone(), Duration::ZERO, Bytes::new());
                app.next_send().unwrap() - start
            })
            .collect();
        let ms = Duration::from_millis;
        assert_eq!(firsts, [ms(0), ms(10), ms(20), ms(30), ms(0)]);
    }

    /// A flight moves into its slot and out at every request: at 128
    /// octets or less the compiler moves it inline, above that through a
    /// call to `memcpy` (it was 160 with the dump fields in it).
    #[test]
    fn a_flight_moves_without_memcpy() {
        let size = std::mem::size_of::<Flight>();
        assert!(size <= 128, "a flight is {size} octets");
    }
}
