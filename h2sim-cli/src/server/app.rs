//! The simulated server on one connection: it answers each request by the
//! first matching rule, with its pushes and delay, and counts what it did.
//! Sans-IO: it only sees events and time and gives commands.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2sim_proto::{
    Application, Connection, Event, HeaderField, RequestHead, ResponseHead, StreamId,
};

use super::rules::{self, Rule};
use crate::trace::{self, Trace};

/// What every connection of one server shares: the rules and where output goes.
pub struct Shared {
    pub rules: Vec<Rule>,
    /// Per-request dumps; None when quiet.
    pub trace: Option<Arc<dyn Trace>>,
    /// Per-connection summary lines (h2simple's `DISCONNECTED` line).
    pub summary: Option<Arc<dyn Trace>>,
    pub totals: Mutex<Totals>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("rules", &self.rules.len())
            .finish_non_exhaustive()
    }
}

/// Counts of one connection, and (merged) of the whole server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    pub connections: u64,
    pub requests: u64,
    pub responses: u64,
    pub pushes: u64,
    pub resets: u64,
    /// Responses by status class: 1xx … 5xx.
    pub status_classes: [u64; 5],
    pub not_found: u64,
    /// Hits per rule, in rule order.
    pub rule_hits: Vec<u64>,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

impl Totals {
    pub fn merge(&mut self, other: &Totals) {
        self.connections += other.connections;
        self.requests += other.requests;
        self.responses += other.responses;
        self.pushes += other.pushes;
        self.resets += other.resets;
        for (a, b) in self.status_classes.iter_mut().zip(other.status_classes) {
            *a += b;
        }
        self.not_found += other.not_found;
        if self.rule_hits.len() < other.rule_hits.len() {
            self.rule_hits.resize(other.rule_hits.len(), 0);
        }
        for (a, b) in self.rule_hits.iter_mut().zip(&other.rule_hits) {
            *a += b;
        }
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
    }
}

/// A request being received.
struct Pending {
    head: RequestHead,
    body: Vec<u8>,
    body_len: u64,
}

/// The server application of one connection.
pub struct ServerApp {
    shared: Arc<Shared>,
    peer: SocketAddr,
    pending: HashMap<StreamId, Pending>,
    /// Responses held back by a rule's delay, by due time.
    delayed: Vec<(Instant, StreamId, RequestHead, Option<usize>)>,
    totals: Totals,
    first_request: Option<Instant>,
    last_response: Option<Instant>,
    rng: u64,
    closed: bool,
}

impl ServerApp {
    pub fn new(shared: Arc<Shared>, peer: SocketAddr) -> Self {
        let rules = shared.rules.len();
        ServerApp {
            shared,
            peer,
            pending: HashMap::new(),
            delayed: Vec::new(),
            totals: Totals {
                connections: 1,
                rule_hits: vec![0; rules],
                ..Totals::default()
            },
            first_request: None,
            last_response: None,
            rng: 0x9E37_79B9_7F4A_7C15 ^ u64::from(peer.port()),
            closed: false,
        }
    }

    fn roll(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// The whole request is in: pick the rule, then answer now or later.
    fn complete(
        &mut self,
        now: Instant,
        stream: StreamId,
        pending: Pending,
        conn: &mut Connection,
    ) {
        let head = pending.head;
        let rule = rules::find(
            &self.shared.rules,
            &head.method,
            &head.authority,
            &head.path,
        );
        if let Some(trace) = &self.shared.trace {
            let mut text = format!(
                "REQUEST[{}, stream {}]: {} {}",
                self.peer,
                stream.value(),
                String::from_utf8_lossy(&head.method),
                String::from_utf8_lossy(&head.path)
            );
            text.push('\n');
            trace::dump(
                &mut text,
                &[(b":authority", &head.authority)],
                &head.fields,
                &pending.body,
            );
            trace.line(&text);
        }
        match rule.and_then(|i| self.shared.rules[i].delay.map(|d| (i, d))) {
            Some((i, delay)) => {
                let wait = delay.pick(self.roll());
                self.delayed.push((now + wait, stream, head, Some(i)));
            }
            None => self.respond(now, stream, &head, rule, conn),
        }
    }

    fn respond(
        &mut self,
        now: Instant,
        stream: StreamId,
        head: &RequestHead,
        rule: Option<usize>,
        conn: &mut Connection,
    ) {
        let shared = Arc::clone(&self.shared);
        let not_found: (u16, &[HeaderField], Bytes) = (404, &[], Bytes::new());
        let (status, headers, body) = match rule.map(|i| (i, &shared.rules[i])) {
            Some((i, rule)) => {
                self.totals.rule_hits[i] += 1;
                let path = String::from_utf8_lossy(&head.path);
                for push in &rule.pushes {
                    self.push(stream, head, push, conn);
                }
                let reply = &rule.reply;
                match &rule.dir {
                    Some(dir) => {
                        let relative = path.strip_prefix(rule.prefix()).unwrap_or(&path);
                        match rules::resolve_in_dir(dir, relative)
                            .ok()
                            .and_then(|p| std::fs::read(p).ok())
                        {
                            Some(bytes) => (reply.status, &reply.headers[..], Bytes::from(bytes)),
                            None => not_found,
                        }
                    }
                    None => (
                        reply.status,
                        &reply.headers[..],
                        reply.body.render(&path, rule.prefix()),
                    ),
                }
            }
            None => {
                self.totals.not_found += 1;
                not_found
            }
        };
        self.send(stream, status, headers, body, conn, "RESPONSE");
        self.last_response = Some(now);
    }

    fn push(
        &mut self,
        parent: StreamId,
        head: &RequestHead,
        push: &rules::Push,
        conn: &mut Connection,
    ) {
        let request = RequestHead::new(
            "GET",
            head.scheme.clone(),
            head.authority.clone(),
            push.path.clone(),
        );
        // A client that disabled push, or HTTP/1.1, simply gets no pushes.
        if let Ok(promised) = conn.push_promise(parent, request) {
            self.totals.pushes += 1;
            let body = push.reply.body.render(&push.path, "");
            let reply = &push.reply;
            self.send(
                promised,
                reply.status,
                &reply.headers,
                body,
                conn,
                "PUSH RESPONSE",
            );
        }
    }

    fn send(
        &mut self,
        stream: StreamId,
        status: u16,
        headers: &[HeaderField],
        body: Bytes,
        conn: &mut Connection,
        what: &str,
    ) {
        let head = ResponseHead {
            status,
            fields: headers.to_vec(),
        };
        if let Some(trace) = &self.shared.trace {
            let mut text = format!(
                "{what}[{}, stream {}]: {}",
                self.peer,
                stream.value(),
                status
            );
            text.push('\n');
            trace::dump(&mut text, &[], &head.fields, &body);
            trace.line(&text);
        }
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.totals.status_classes[class] += 1;
        self.totals.responses += 1;
        self.totals.bytes_out += body.len() as u64;
        let empty = body.is_empty();
        if conn.send_response(stream, head, empty).is_ok() && !empty {
            let _ = conn.send_data(stream, body, true);
        }
    }

    /// The per-connection line h2simple users know, printed when it closes.
    fn summary(&self) -> String {
        let span = match (self.first_request, self.last_response) {
            (Some(a), Some(b)) => b.saturating_duration_since(a),
            _ => Duration::ZERO,
        };
        let secs = span.as_secs_f64();
        let tps = if secs > 0.0 {
            self.totals.responses as f64 / secs
        } else {
            0.0
        };
        format!(
            "{} DISCONNECTED by sess term: {:.0} tps ({:.3} secs for {} reqs {} rsps {} rsts {} streams)",
            self.peer,
            tps,
            secs,
            self.totals.requests,
            self.totals.responses,
            self.totals.resets,
            self.totals.requests + self.totals.pushes
        )
    }

    fn finish(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        if let Some(summary) = &self.shared.summary {
            summary.line(&self.summary());
        }
        if let Ok(mut totals) = self.shared.totals.lock() {
            totals.merge(&self.totals);
        }
    }
}

/// Body bytes kept per request for the trace; beyond this only the size.
const TRACE_BODY_LIMIT: usize = 64 * 1024;

impl Application for ServerApp {
    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        match event {
            Event::Request {
                stream,
                head,
                end_stream,
            } => {
                self.totals.requests += 1;
                self.first_request.get_or_insert(now);
                let pending = Pending {
                    head,
                    body: Vec::new(),
                    body_len: 0,
                };
                if end_stream {
                    self.complete(now, stream, pending, conn);
                } else {
                    self.pending.insert(stream, pending);
                }
            }
            Event::Data {
                stream,
                data,
                end_stream,
            } => {
                self.totals.bytes_in += data.len() as u64;
                if let Some(p) = self.pending.get_mut(&stream) {
                    p.body_len += data.len() as u64;
                    if self.shared.trace.is_some() && p.body.len() < TRACE_BODY_LIMIT {
                        p.body.extend_from_slice(&data);
                    }
                }
                if end_stream && let Some(p) = self.pending.remove(&stream) {
                    self.complete(now, stream, p, conn);
                }
            }
            Event::Trailers { stream, .. } => {
                if let Some(p) = self.pending.remove(&stream) {
                    self.complete(now, stream, p, conn);
                }
            }
            Event::StreamReset { stream, .. } => {
                self.totals.resets += 1;
                self.pending.remove(&stream);
                self.delayed.retain(|(_, s, _, _)| *s != stream);
            }
            Event::Frame { outgoing, frame } => {
                crate::trace::Stdout.line(&format!(
                    "[{}] {}",
                    self.peer,
                    trace::frame(outgoing, &frame)
                ));
            }
            Event::Closed { .. } => self.finish(),
            _ => {}
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.delayed.iter().map(|(at, ..)| *at).min()
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        let due: Vec<_> = self
            .delayed
            .iter()
            .filter(|(at, ..)| *at <= now)
            .cloned()
            .collect();
        self.delayed.retain(|(at, ..)| *at > now);
        for (_, stream, head, rule) in due {
            self.respond(now, stream, &head, rule, conn);
        }
    }
}

impl Drop for ServerApp {
    /// A connection that ends without a Closed event (the transport was
    /// dropped) still counts.
    fn drop(&mut self) {
        self.finish();
    }
}
