//! Notifications: after answering, a rule can send requests of its own to
//! a callback URI (taken from the request, e.g. `${body/nfStatusNotificationUri}`,
//! or written in the rule), after a delay, once or N times at an interval,
//! with method, fields and body from templates filled from the triggering
//! request. The server sends them as a client, one connection per callback
//! authority, reused while there is work.
//!
//! Sans-IO like the rest of the server: [`Notifier`] is the queue all
//! server connections share, and [`NotifyApp`] the client application of
//! one callback connection. The runtime only opens that connection when
//! the notifier asks ([`Launch`]) and tells when it ended
//! ([`Notifier::ended`]). The adapters' client loop wakes for socket input
//! and the application's own deadline, not for work queued by another
//! connection's thread; so an open callback connection looks at its queue
//! every [`TICK`] while it lingers, and closes after [`LINGER`] without
//! work. That polling costs only while notifications flow.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2sim_proto::host::{ClientError, ClientOutcome};
use h2sim_proto::{Application, Connection, Event, HeaderField, RequestHead, StreamId};

use super::template::{Text, Vars};
use crate::report::Latency;
use crate::trace::Trace;

/// How often an open callback connection looks for queued work.
pub const TICK: Duration = Duration::from_millis(1);
/// How long a callback connection stays open without work.
pub const LINGER: Duration = Duration::from_secs(2);
/// Notifications queued (not yet sent) at most, over all callbacks; past
/// it new ones count as failed.
const MAX_QUEUED: usize = 100_000;
/// Requests in flight on one callback connection at most.
const IN_FLIGHT: usize = 100;
/// Failed notifications the server names at most, one line each. A
/// callback that is down fails every notification sent to it: the first
/// few lines say which URI and why, the closing summary how many.
const FAILURE_LINES: u64 = 10;

/// A rule's notification, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifySpec {
    /// An absolute `http://` or `https://` URI; placeholders allowed.
    pub uri: String,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay: Duration,
    /// How many times to send it.
    pub count: u32,
    /// Between two sends when `count` > 1.
    pub interval: Duration,
}

impl Default for NotifySpec {
    fn default() -> Self {
        NotifySpec {
            uri: String::new(),
            method: "POST".to_owned(),
            headers: Vec::new(),
            body: String::new(),
            delay: Duration::ZERO,
            count: 1,
            interval: Duration::from_secs(1),
        }
    }
}

/// A notification with its templates compiled.
#[derive(Debug, Clone)]
pub struct Notify {
    uri: Text,
    method: String,
    headers: Vec<(String, Text)>,
    body: Text,
    delay: Duration,
    count: u32,
    interval: Duration,
}

impl Notify {
    /// Compiles `spec` against the rule's capture `names`.
    pub fn new(spec: &NotifySpec, names: &[String]) -> Notify {
        Notify {
            uri: Text::compile(&spec.uri, names),
            method: spec.method.clone(),
            headers: spec
                .headers
                .iter()
                .map(|(n, v)| (n.to_ascii_lowercase(), Text::compile(v, names)))
                .collect(),
            body: Text::compile(&spec.body, names),
            delay: spec.delay,
            count: spec.count.max(1),
            interval: spec.interval,
        }
    }

    pub fn counts(&self) -> bool {
        self.uri.counts() || self.body.counts() || self.headers.iter().any(|(_, v)| v.counts())
    }

    pub fn reads_body(&self) -> bool {
        self.uri.reads_body()
            || self.body.reads_body()
            || self.headers.iter().any(|(_, v)| v.reads_body())
    }
}

/// Whether a notification can go to `uri`: an absolute `http://` or
/// `https://` URI with an authority.
pub fn is_callback_uri(uri: &str) -> bool {
    split_uri(uri).is_some()
}

/// Where a notification goes: `scheme://authority` (what the adapters
/// connect to) and the path.
fn split_uri(uri: &str) -> Option<(String, &str, &str)> {
    let (scheme, rest) = uri.split_once("://")?;
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    (!authority.is_empty()).then(|| (format!("{scheme}://{authority}"), authority, path))
}

/// Opens a callback connection: the runtime's part.
pub trait Launch: Send + Sync {
    /// Connect to `target` (`scheme://authority`) and run
    /// [`Notifier::app`] on it; when its runs are over, call
    /// [`Notifier::ended`] with `generation`.
    fn launch(&self, notifier: &Arc<Notifier>, target: String, generation: u64);
}

/// What notifications did, over the whole server. Once the server has
/// stopped, `queued = answered + failed`, and `sent` lies between
/// `answered` and `queued`.
#[derive(Debug, Clone, Default)]
pub struct NotifyStats {
    /// Every notification the rules asked for (each of a rule's `count`),
    /// whether it could go or not.
    pub queued: u64,
    /// Of those, the ones that left on a callback connection.
    pub sent: u64,
    /// Of those sent, the ones answered with a final status.
    pub answered: u64,
    /// Of those, with a 2xx.
    pub answered_2xx: u64,
    /// Queued and never answered: not sent (no http(s) URI, the queue
    /// full, no connection to the callback, the server stopping) or sent
    /// and then reset or lost with its connection. Each is named on
    /// stderr, up to [`FAILURE_LINES`].
    pub failed: u64,
    /// From sending to the end of the answer.
    pub latency: Latency,
}

impl NotifyStats {
    /// The server report's line.
    pub fn line(&self) -> String {
        let p = |q| crate::report::human(self.latency.percentile(q));
        let latency = if self.latency.count() == 0 {
            String::new()
        } else {
            format!("; latency p50 {} p99 {} max {}", p(50.0), p(99.0), p(100.0))
        };
        format!(
            "notifications: {} queued, {} sent, {} answered ({} 2xx), {} failed{latency}",
            self.queued, self.sent, self.answered, self.answered_2xx, self.failed
        )
    }
}

/// One notification ready to go.
#[derive(Debug)]
struct Outgoing {
    due: Instant,
    head: RequestHead,
    body: Bytes,
}

#[derive(Debug, Default)]
struct Target {
    /// In due order.
    queue: VecDeque<Outgoing>,
    /// A connection runs for it (or is being opened).
    running: bool,
    generation: u64,
}

#[derive(Debug, Default)]
struct State {
    targets: HashMap<String, Target>,
    queued: usize,
    closed: bool,
    stats: NotifyStats,
    /// The lines naming failures still to print (printed once the state
    /// is unlocked).
    unsaid: Vec<String>,
}

impl State {
    /// `n` notifications to `uri` failed, `why`: counted, and named while
    /// fewer than [`FAILURE_LINES`] were.
    fn fail(&mut self, n: u64, uri: &dyn std::fmt::Display, why: &dyn std::fmt::Display) {
        let before = self.stats.failed;
        self.stats.failed += n;
        if before < FAILURE_LINES {
            let times = if n > 1 {
                format!(" ({n} notifications)")
            } else {
                String::new()
            };
            self.unsaid.push(format!(
                "h2sim server: notification to {uri} failed: {why}{times}"
            ));
        }
        if before <= FAILURE_LINES && self.stats.failed > FAILURE_LINES {
            self.unsaid.push(format!(
                "h2sim server: more than {FAILURE_LINES} notifications failed: the rest are \
                 counted, not named (see the closing summary)"
            ));
        }
    }
}

/// The notifications of one server: queues by callback target, and counts.
#[derive(Default)]
pub struct Notifier {
    state: Mutex<State>,
    launch: OnceLock<Box<dyn Launch>>,
    /// Where failures are named (stderr in the binary, even with `-q`: a
    /// lost notification is an error nothing else reports).
    log: OnceLock<Arc<dyn Trace>>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier").finish_non_exhaustive()
    }
}

impl Notifier {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Prints the failures named while the state was locked.
    fn say(&self, lines: Vec<String>) {
        if let Some(log) = self.log.get() {
            for line in lines {
                log.line(&line);
            }
        }
    }

    /// Runs `f` on the locked state, then prints the failures it named.
    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let (out, lines) = {
            let mut state = self.lock();
            let out = f(&mut state);
            (out, std::mem::take(&mut state.unsaid))
        };
        self.say(lines);
        out
    }

    /// Sets how callback connections are opened (once, by the runtime).
    pub fn set_launch(&self, launch: Box<dyn Launch>) {
        let _ = self.launch.set(launch);
    }

    /// Sets where failed notifications are named (once, at start).
    pub fn set_log(&self, log: Arc<dyn Trace>) {
        let _ = self.log.set(log);
    }

    /// Queues `notify` for the request that `vars` describe, answered at
    /// `now`.
    pub fn trigger(self: &Arc<Self>, notify: &Notify, vars: &Vars<'_>, now: Instant) {
        let uri = notify.uri.render(vars);
        let count = u64::from(notify.count);
        let Some((target, authority, path)) = split_uri(&uri) else {
            let why = if uri.is_empty() {
                "its URI template gave nothing"
            } else {
                "not an absolute http:// or https:// URI"
            };
            self.with_state(|state| {
                state.stats.queued += count;
                state.fail(count, &format_args!("{uri:?}"), &why);
            });
            return;
        };
        let scheme = target.split("://").next().unwrap_or("http").to_owned();
        let mut head = RequestHead::new(
            notify.method.clone(),
            scheme,
            authority.to_owned(),
            path.to_owned(),
        );
        for (name, value) in &notify.headers {
            head.fields.push(HeaderField::new(
                name.clone(),
                value.render(vars).into_owned(),
            ));
        }
        let body = Bytes::from(notify.body.render(vars).into_owned());
        if !body.is_empty() && head.get(b"content-length").is_none() {
            head.fields
                .push(HeaderField::new("content-length", body.len().to_string()));
        }
        let launch = self.with_state(|state| {
            state.stats.queued += count;
            if state.closed {
                state.fail(count, &uri, &"the server is stopping");
                return None;
            }
            if state.queued + notify.count as usize > MAX_QUEUED {
                state.fail(
                    count,
                    &uri,
                    &format_args!("{MAX_QUEUED} notifications already wait"),
                );
                return None;
            }
            state.queued += notify.count as usize;
            let entry = state.targets.entry(target.clone()).or_default();
            for i in 0..notify.count {
                let due = now + notify.delay + notify.interval * i;
                let at = entry.queue.partition_point(|o| o.due <= due);
                entry.queue.insert(
                    at,
                    Outgoing {
                        due,
                        head: head.clone(),
                        body: body.clone(),
                    },
                );
            }
            (!entry.running).then(|| {
                entry.running = true;
                entry.generation += 1;
                entry.generation
            })
        });
        if let Some(generation) = launch {
            match self.launch.get() {
                Some(l) => l.launch(self, target, generation),
                None => self.ended(&target, generation, Some("no way to connect")),
            }
        }
    }

    /// The application for one connection to `target`.
    pub fn app(self: &Arc<Self>, target: &str) -> NotifyApp {
        NotifyApp {
            notifier: Arc::clone(self),
            target: target.to_owned(),
            in_flight: HashMap::new(),
            last: None,
            idle_since: None,
            leaving: false,
        }
    }

    /// The connections of run `generation` to `target` are over, for the
    /// reason `why` when they failed (see [`run_failure`]): what is still
    /// queued for it failed, unless a newer run took over.
    pub fn ended(&self, target: &str, generation: u64, why: Option<&str>) {
        self.with_state(|state| {
            let Some(t) = state.targets.get_mut(target) else {
                return;
            };
            if t.generation != generation {
                return;
            }
            t.running = false;
            let lost = std::mem::take(&mut t.queue);
            state.queued -= lost.len();
            let why = why.unwrap_or("its connection ended before it was sent");
            for o in lost {
                state.fail(
                    1,
                    &format_args!("{target}{}", String::from_utf8_lossy(&o.head.path)),
                    &why,
                );
            }
        });
    }

    /// Stops taking notifications (the server is stopping); what is
    /// queued fails.
    pub fn close(&self) {
        self.with_state(|state| {
            state.closed = true;
            let lost: Vec<(String, VecDeque<Outgoing>)> = state
                .targets
                .iter_mut()
                .map(|(target, t)| (target.clone(), std::mem::take(&mut t.queue)))
                .collect();
            for (target, queue) in lost {
                state.queued -= queue.len();
                for o in queue {
                    let uri = format_args!("{target}{}", String::from_utf8_lossy(&o.head.path));
                    state.fail(1, &uri, &"the server stopped before it was sent");
                }
            }
        });
    }

    pub fn stats(&self) -> NotifyStats {
        self.lock().stats.clone()
    }

    fn has_queued(&self, target: &str) -> bool {
        self.lock()
            .targets
            .get(target)
            .is_some_and(|t| !t.queue.is_empty())
    }
}

/// Why a callback connection run (the adapter's `connect`) failed, if it
/// did: it could not start (a name that does not resolve), or its last
/// connection ended abnormally (refused, reset, timed out).
pub fn run_failure<A>(run: &Result<Vec<ClientOutcome<A>>, ClientError>) -> Option<String> {
    match run {
        Err(e) => Some(e.to_string()),
        Ok(outcomes) => outcomes
            .iter()
            .find_map(|o| o.error.as_ref().map(ToString::to_string)),
    }
}

/// What a callback connection does next.
enum Work {
    Send(Vec<Outgoing>),
    /// Nothing due yet, or in flight.
    Wait,
    /// Nothing to do for [`LINGER`], or the server stops: go away. The
    /// target is no longer running, so new work opens a new connection.
    Leave,
}

/// The client application of one callback connection.
#[derive(Debug)]
pub struct NotifyApp {
    notifier: Arc<Notifier>,
    target: String,
    /// Sent, by stream: when, its path (to name it if it fails), and the
    /// status once its head came.
    in_flight: HashMap<StreamId, (Instant, bytes::Bytes, Option<u16>)>,
    last: Option<Instant>,
    idle_since: Option<Instant>,
    leaving: bool,
}

impl NotifyApp {
    fn work(&mut self, now: Instant) -> Work {
        let room = IN_FLIGHT.saturating_sub(self.in_flight.len());
        let mut state = self.notifier.lock();
        let closed = state.closed;
        let State {
            targets, queued, ..
        } = &mut *state;
        let Some(target) = targets.get_mut(&self.target) else {
            return Work::Leave;
        };
        let mut due = Vec::new();
        while due.len() < room && target.queue.front().is_some_and(|o| o.due <= now) {
            due.extend(target.queue.pop_front());
        }
        *queued -= due.len();
        if !due.is_empty() {
            self.idle_since = None;
            return Work::Send(due);
        }
        if !self.in_flight.is_empty() || !target.queue.is_empty() && !closed {
            self.idle_since = None;
            return Work::Wait;
        }
        let idle = *self.idle_since.get_or_insert(now);
        if closed || now.saturating_duration_since(idle) >= LINGER {
            target.running = false;
            return Work::Leave;
        }
        Work::Wait
    }

    fn fill(&mut self, now: Instant, conn: &mut Connection) {
        self.last = Some(now);
        if self.leaving {
            return;
        }
        match self.work(now) {
            Work::Send(batch) => {
                let mut sent = 0;
                let mut failed = Vec::new();
                for o in batch {
                    let has_body = !o.body.is_empty();
                    let path = o.head.path.clone();
                    match conn.send_request(o.head, !has_body) {
                        Ok(stream) => {
                            if has_body {
                                let _ = conn.send_data(stream, o.body, true);
                            }
                            self.in_flight.insert(stream, (now, path, None));
                            sent += 1;
                        }
                        Err(e) => failed.push((path, e)),
                    }
                }
                let target = &self.target;
                self.notifier.with_state(|state| {
                    state.stats.sent += sent;
                    for (path, e) in failed {
                        let uri = format_args!("{target}{}", String::from_utf8_lossy(&path));
                        state.fail(1, &uri, &e);
                    }
                });
            }
            Work::Wait => {}
            Work::Leave => {
                self.leaving = true;
                conn.go_away(now);
            }
        }
    }

    /// The exchange on `stream` ended: answered with its final status,
    /// or, without one, failed for the reason `lost`.
    fn answered(&mut self, stream: StreamId, status: Option<u16>, now: Instant, lost: &str) {
        let Some((sent, path, head_status)) = self.in_flight.remove(&stream) else {
            return;
        };
        let status = status.or(head_status);
        let target = &self.target;
        self.notifier.with_state(|state| match status {
            Some(status) => {
                state.stats.answered += 1;
                if (200..300).contains(&status) {
                    state.stats.answered_2xx += 1;
                }
                state
                    .stats
                    .latency
                    .record(now.saturating_duration_since(sent));
            }
            None => {
                let uri = format_args!("{target}{}", String::from_utf8_lossy(&path));
                state.fail(1, &uri, &lost);
            }
        });
    }
}

impl Application for NotifyApp {
    fn start(&mut self, now: Instant, conn: &mut Connection) {
        self.leaving = false;
        self.idle_since = None;
        self.fill(now, conn);
    }

    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        match event {
            Event::Response {
                stream,
                head,
                end_stream,
            } if !head.is_informational() => {
                if end_stream {
                    self.answered(stream, Some(head.status), now, "");
                } else if let Some((_, _, status)) = self.in_flight.get_mut(&stream) {
                    // The answer ends with its body.
                    *status = Some(head.status);
                }
            }
            Event::Data {
                stream,
                end_stream: true,
                ..
            }
            | Event::Trailers { stream, .. } => {
                self.answered(stream, None, now, "no answer before the stream ended");
            }
            Event::StreamReset { stream, reason, .. } => {
                // Not answered, whatever head came.
                if let Some((_, _, status)) = self.in_flight.get_mut(&stream) {
                    *status = None;
                }
                let lost = format!("the stream was reset ({reason})");
                self.answered(stream, None, now, &lost);
            }
            Event::Retryable { stream } => {
                if let Some((_, _, status)) = self.in_flight.get_mut(&stream) {
                    *status = None;
                }
                self.answered(stream, None, now, "the peer did not process it");
            }
            Event::Closed { .. } => {
                let lost: Vec<StreamId> = self.in_flight.keys().copied().collect();
                for stream in lost {
                    self.answered(stream, None, now, "its connection closed before the answer");
                }
                return;
            }
            _ => {}
        }
        self.fill(now, conn);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match (self.leaving, self.last) {
            (false, Some(last)) => Some(last + TICK),
            _ => None,
        }
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        self.fill(now, conn);
    }

    fn wants_reconnect(&mut self) -> bool {
        self.notifier.has_queued(&self.target)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::server::request::Request;
    use h2sim_proto::handler::{HandlerApp, Reply};
    use h2sim_proto::pair::Pair;
    use h2sim_proto::{Config, Endpoint};

    /// Records what the notifier asked to open.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<(String, u64)>>);

    impl Launch for Arc<Recorder> {
        fn launch(&self, _: &Arc<Notifier>, target: String, generation: u64) {
            self.0.lock().unwrap().push((target, generation));
        }
    }

    fn spec(uri: &str) -> NotifySpec {
        NotifySpec {
            uri: uri.to_owned(),
            headers: vec![("content-type".into(), "application/json".into())],
            body: r#"{"event":"NF_REGISTERED","id":"${body/nfInstanceId}"}"#.into(),
            delay: Duration::from_millis(50),
            count: 3,
            interval: Duration::from_secs(1),
            ..NotifySpec::default()
        }
    }

    /// Three notifications at their times over one callback connection,
    /// each answered; the connection then lingers and goes away; a URI
    /// that is no http(s) URI fails.
    #[test]
    fn notifications_go_out_on_one_connection_at_their_times() {
        let notifier = Arc::new(Notifier::default());
        let launched = Arc::new(Recorder::default());
        notifier.set_launch(Box::new(launched.clone()));
        let head = RequestHead::new("POST", "http", "nrf", "/nnrf-nfm/v1/subscriptions");
        let body = br#"{"nfStatusNotificationUri":"http://amf:9000/cb/1","nfInstanceId":"i-1"}"#;
        let request = Request::new(&head, body);
        let vars = Vars::of(&request, "");
        let start = Instant::now();
        let notify = Notify::new(&spec("${body/nfStatusNotificationUri}"), &[]);
        notifier.trigger(&notify, &vars, start);
        // A second trigger while the first run is on opens nothing new.
        notifier.trigger(
            &Notify::new(&spec("http://amf:9000/cb/2"), &[]),
            &vars,
            start,
        );
        notifier.trigger(&Notify::new(&spec("ftp://x/y"), &[]), &vars, start);
        assert_eq!(
            *launched.0.lock().unwrap(),
            [("http://amf:9000".to_owned(), 1)]
        );

        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let server = HandlerApp::new(move |req: h2sim_proto::handler::Request| {
            log.lock()
                .unwrap()
                .push((req.head.path.clone(), req.body.clone()));
            Reply::new(204, "")
        });
        let client = Endpoint::new(
            Connection::client(Config::default(), start).unwrap(),
            notifier.app("http://amf:9000"),
            start,
        );
        let server = Endpoint::new(
            Connection::server(Config::default(), start).unwrap(),
            server,
            start,
        );
        let mut pair = Pair::join(client, server, start);
        for _ in 0..100_000 {
            pair.drive();
            if pair.client.is_closed() || pair.jump().is_none() {
                break;
            }
        }
        assert!(pair.client.is_closed(), "went away after lingering");
        // The last pair went out at 50 ms + 2 s, then 2 s of quiet.
        assert!(pair.now - start >= Duration::from_millis(2050) + LINGER);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 6);
        assert_eq!(seen.iter().filter(|(p, _)| p == "/cb/1").count(), 3);
        assert_eq!(&seen[0].1[..], br#"{"event":"NF_REGISTERED","id":"i-1"}"#);
        let stats = notifier.stats();
        assert_eq!(
            (
                stats.queued,
                stats.sent,
                stats.answered,
                stats.answered_2xx,
                stats.failed
            ),
            (9, 6, 6, 6, 3)
        );
        assert_eq!(stats.latency.count(), 6);
        // The run is over: new work opens a new connection.
        notifier.ended("http://amf:9000", 1, None);
        notifier.trigger(&notify, &vars, pair.now);
        assert_eq!(launched.0.lock().unwrap().last().unwrap().1, 2);
        // A run that ends with work queued fails it.
        notifier.ended("http://amf:9000", 2, Some("refused"));
        let stats = notifier.stats();
        assert_eq!((stats.queued, stats.failed), (12, 6));
        assert_eq!(stats.queued, stats.answered + stats.failed);
    }

    /// Every notification asked for is counted once as queued, and ends
    /// answered or failed, whatever stopped it: no usable URI, a run that
    /// could not connect, the server stopping. Each failure is named with
    /// its URI and why, up to FAILURE_LINES, then counted only.
    #[test]
    fn failures_add_up_and_are_named() {
        let notifier = Arc::new(Notifier::default());
        let log = Arc::new(crate::trace::Memory::default());
        notifier.set_log(log.clone());
        let launched = Arc::new(Recorder::default());
        notifier.set_launch(Box::new(launched.clone()));
        let start = Instant::now();
        let once = |uri: &str| NotifySpec {
            uri: uri.to_owned(),
            ..NotifySpec::default()
        };
        let notify = Notify::new(&once("${body/cb}"), &[]);
        for body in [
            r#"{"tag":"nocb"}"#,
            r#"{"cb":"not a uri"}"#,
            r#"{"cb":"http://127.0.0.1:1/x"}"#,
            r#"{"cb":"http://x.invalid:80/x"}"#,
        ] {
            let head = RequestHead::new("POST", "http", "nrf", "/subs");
            let request = Request::new(&head, body.as_bytes());
            notifier.trigger(&notify, &Vars::of(&request, ""), start);
        }
        notifier.ended(
            "http://127.0.0.1:1",
            1,
            Some("cannot connect to 127.0.0.1:1: refused"),
        );
        notifier.close();
        let stats = notifier.stats();
        assert_eq!(
            (stats.queued, stats.sent, stats.answered, stats.failed),
            (4, 0, 0, 4)
        );
        let lines = log.lines();
        assert_eq!(
            lines,
            [
                "h2sim server: notification to \"\" failed: its URI template gave nothing",
                "h2sim server: notification to \"not a uri\" failed: not an absolute http:// or https:// URI",
                "h2sim server: notification to http://127.0.0.1:1/x failed: cannot connect to 127.0.0.1:1: refused",
                "h2sim server: notification to http://x.invalid:80/x failed: the server stopped before it was sent",
            ]
        );
        // Past FAILURE_LINES, one line says the rest are only counted.
        let many = Notify::new(
            &NotifySpec {
                count: 20,
                ..once("nope")
            },
            &[],
        );
        let head = RequestHead::new("POST", "http", "nrf", "/subs");
        let request = Request::new(&head, b"");
        notifier.trigger(&many, &Vars::of(&request, ""), start);
        notifier.trigger(&many, &Vars::of(&request, ""), start);
        let lines = log.lines();
        assert_eq!(lines.len(), 6, "{lines:?}");
        assert!(
            lines[5].contains("more than 10 notifications failed"),
            "{lines:?}"
        );
        assert_eq!(notifier.stats().failed, 44);
    }
}
