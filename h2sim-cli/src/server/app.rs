//! The simulated server on one connection: it answers each request by the
//! first matching rule, with its pushes and delay, and counts what it did.
//! Sans-IO: it sees events and time and gives commands; what little else it
//! touches it is given in [`Shared`]: the files `-d` rules serve
//! ([`Files`], the disk in the binary, synchronously: see its cost) and the
//! sinks its dumps and lines go to ([`Trace`], stdout and stderr in the
//! binary). Tests give it memory for both.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use h2sim_proto::{
    Application, Connection, Event, HeaderField, Protocol, Reason, RefusedWith, RequestHead,
    ResponseHead, StreamId, StreamMap, UserError,
};

use super::files::{Disk, Files};
use super::matcher::PathMatch;
use super::notify::{Notifier, Notify};
use super::oauth::{self, Tokens};
use super::problem;
use super::request::Request;
use super::resource;
use super::rules::{self, Answer, Found, Kind, Rule};
use super::store::{Limits, Store};
use super::template::{Text, Vars};
use crate::ending::{Counts, Ending, ServerSide};
use crate::trace::{self, Trace};

/// What every connection of one server shares: the rules and where output goes.
pub struct Shared {
    pub rules: Vec<Rule>,
    /// Per-request dumps; None when quiet.
    pub trace: Option<Arc<dyn Trace>>,
    /// Per-connection diagnostics: h2simple's `DISCONNECTED` line, and the
    /// REFUSED lines that name what the client got wrong before it, in
    /// order with it (stderr in the binary, with the report, not among the
    /// dumps); None when quiet.
    pub log: Option<Arc<dyn Trace>>,
    /// `-v`: one line per frame sent or received, after the peer's address
    /// (set with the core's `Config::trace_frames`, which raises the frame
    /// events); None from [`Shared::new`].
    pub frames: Option<Arc<dyn Trace>>,
    /// Where `-d` rules read their files; [`Disk`] from [`Shared::new`].
    pub files: Arc<dyn Files>,
    pub totals: Mutex<Totals>,
    /// What resource rules keep, for every connection.
    pub store: Store,
    /// The OAuth2 tokens issued.
    pub tokens: Tokens,
    /// The notifications rules send.
    pub notifier: Arc<Notifier>,
    /// The wall clock, for `${now}`.
    pub clock: fn() -> SystemTime,
    /// The rules' paths, compiled, by rule.
    paths: Vec<PathMatch>,
    /// The rules' replies ready to send, by rule.
    answers: Vec<RuleAnswers>,
    /// Whether any rule reads request bodies: otherwise they are not kept.
    needs_body: bool,
}

/// One rule's reply and pushed replies, templates parsed and bound.
struct RuleAnswers {
    reply: Answer,
    pushes: Vec<Answer>,
    notify: Vec<Notify>,
    /// A list rule's collection path.
    collection: Option<Text>,
    /// Its hits, for `${counter}`, when its templates use it.
    counter: Option<AtomicU64>,
}

impl Shared {
    /// The state for `rules`; their templates are parsed here, once for
    /// the whole server.
    pub fn new(
        rules: Vec<Rule>,
        trace: Option<Arc<dyn Trace>>,
        log: Option<Arc<dyn Trace>>,
    ) -> Shared {
        let paths: Vec<PathMatch> = rules
            .iter()
            .map(|r| PathMatch::parse(r.path_prefix.as_deref()))
            .collect();
        let answers: Vec<RuleAnswers> = rules
            .iter()
            .zip(&paths)
            .map(|(rule, path)| {
                let names = path.names();
                let reply = Answer::new(&rule.reply, rule.status_template.as_deref(), names);
                let notify: Vec<Notify> =
                    rule.notify.iter().map(|n| Notify::new(n, names)).collect();
                let counter = (reply.counts() || notify.iter().any(Notify::counts))
                    .then(|| AtomicU64::new(0));
                RuleAnswers {
                    pushes: rule
                        .pushes
                        .iter()
                        .map(|p| Answer::new(&p.reply, None, names))
                        .collect(),
                    notify,
                    collection: match &rule.kind {
                        Kind::List(list) => Some(Text::compile(&list.collection, names)),
                        _ => None,
                    },
                    reply,
                    counter,
                }
            })
            .collect();
        let needs_body = rules.iter().zip(&answers).any(|(rule, answers)| {
            rule.conditions.reads_body()
                || !matches!(rule.kind, Kind::Reply)
                || answers.reply.reads_body()
                || answers.notify.iter().any(Notify::reads_body)
        });
        Shared {
            store: Store::default().indexing(list_filters(&rules)),
            tokens: Tokens::default(),
            notifier: Arc::new(Notifier::default()),
            clock: SystemTime::now,
            paths,
            needs_body,
            totals: Mutex::new(Totals {
                rule_hits: vec![0; rules.len()],
                ..Totals::default()
            }),
            rules,
            trace,
            log,
            frames: None,
            files: Arc::new(Disk::default()),
            answers,
        }
    }

    /// The same, with a store bounded by `limits`.
    pub fn with_store(mut self, limits: Limits) -> Shared {
        self.store = Store::new(limits).indexing(list_filters(&self.rules));
        self
    }
}

/// The pointers the list rules filter on, which the store indexes.
fn list_filters(rules: &[Rule]) -> impl Iterator<Item = String> + '_ {
    rules.iter().flat_map(|rule| match &rule.kind {
        Kind::List(list) => list
            .filter
            .iter()
            .map(|(_, pointer)| pointer.clone())
            .collect(),
        _ => Vec::new(),
    })
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
    /// Streams ended by a reset for any other cause than a broken rule:
    /// the client's RST_STREAM, or ours for our own reasons. Over HTTP/1.1,
    /// which has no resets, the exchanges that ended so (cut off by the
    /// connection's end) count here while the connection lives and go to
    /// `unanswered` when it ends, before its line is written.
    pub resets: u64,
    /// Requests left without their response, cut off by their
    /// connection's end (HTTP/1.1's exchanges, HTTP/2's open streams),
    /// apart from HTTP/2's resets, so that the server's summary says what
    /// each connection's line said.
    pub unanswered: u64,
    /// Requests turned down because the client broke a rule (a malformed
    /// head or body, a limit, MAX_CONCURRENT_STREAMS), whether the core
    /// refused them before the rules saw them or reset them after: what a
    /// simulated server is there to catch, so apart from `resets`.
    pub refused: u64,
    /// Responses by status class: 1xx … 5xx.
    pub status_classes: [u64; 5],
    pub not_found: u64,
    /// Hits per rule, in rule order.
    pub rule_hits: Vec<u64>,
    pub bytes_in: u64,
    /// Body bytes given to the connection to send: responses' and pushed
    /// ones'.
    pub bytes_out: u64,
    /// Of those, what the core had not written when the connection
    /// ended: held back by HTTP/2 flow control (a client that never opens
    /// its window) or queued behind what was. `responses` counts the
    /// answers given to the connection, as the RESPONSE dumps show them:
    /// the core raises no event when a response's last frame leaves, so
    /// an answer that never left in full shows here, in its bytes.
    pub bytes_unsent: u64,
}

impl Totals {
    pub fn merge(&mut self, other: &Totals) {
        self.connections += other.connections;
        self.requests += other.requests;
        self.responses += other.responses;
        self.pushes += other.pushes;
        self.resets += other.resets;
        self.unanswered += other.unanswered;
        self.refused += other.refused;
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
        self.bytes_unsent += other.bytes_unsent;
    }
}

/// A request being received.
struct Pending {
    /// In the box the core delivered it in, which goes back with
    /// `Connection::recycle_request` for the next request decoded.
    head: Box<RequestHead>,
    /// Kept for the rules that read bodies (up to [`MAX_BODY`]) and for the
    /// trace (up to [`trace::SHOWN_BODY`], what a dump can show).
    body: Vec<u8>,
    body_len: u64,
}

/// REFUSED lines a connection prints at most. A client that sends
/// malformed requests as fast as it can is refused up to the core's limit
/// on stream errors, about 200 a second per connection: a line each would
/// drown the terminal and spend the server's CPU on writing them. The
/// first few show what the client does wrong; the count shows how often.
const REFUSED_LINES: u64 = 10;

/// Request body bytes kept for the rules at most; a longer body is seen
/// as cut there (and is not JSON).
const MAX_BODY: usize = 1 << 20;

/// Echoed bytes that may wait in a tunnel's stream for an HTTP/2 client's
/// window before the tunnel is reset (CANCEL).
const ECHO_WAITING: u64 = 1 << 20;

/// A CONNECT's stream (RFC 9113 §8.5, RFC 8441, RFC 9110 §9.3.6), from
/// its head until a 2xx opens it as a tunnel, which then echoes what the
/// client sends until the client ends its side: a simulator's tunnel
/// lets a WebSocket or tunnel client be tested end to end.
#[derive(Default)]
struct Tunnel {
    /// A 2xx went out: what comes is echoed as it comes.
    open: bool,
    /// What came before the answer (a rule's delay), echoed once it opens,
    /// dropped if the answer opens nothing; at most [`MAX_BODY`] bytes for
    /// all the connection's tunnels.
    early: Vec<Bytes>,
    early_len: usize,
    /// The client ended its side before the answer.
    ended: bool,
}

/// A response held back by a rule's delay.
struct Delayed {
    due: Instant,
    stream: StreamId,
    head: Box<RequestHead>,
    body: Bytes,
    found: Option<Found>,
}

/// What answering a request needs of its connection's application: the
/// shared rules, the peer (for the trace) and the totals to count in.
struct Outlet<'a> {
    shared: &'a Shared,
    peer: SocketAddr,
    totals: &'a mut Totals,
    /// The request is a HEAD: its answer goes without content.
    head_request: bool,
    /// The request is a CONNECT whose stream is open: a 2xx answer makes
    /// it a tunnel instead of carrying content.
    tunnel: bool,
    /// A 2xx opened the tunnel.
    opened: bool,
}

impl Outlet<'_> {
    /// Promises `push` on `parent` and sends its response; its templates
    /// are filled from the request that triggered it (`parts`).
    fn push(
        &mut self,
        parent: StreamId,
        head: &RequestHead,
        push: &rules::Push,
        answer: &Answer,
        vars: &Vars<'_>,
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
            let (reply, body) = answer.render(vars, conn.spare_fields());
            self.send(promised, reply, body, conn, "PUSH RESPONSE", false);
        }
    }

    /// Sends the answer to the request: to a HEAD, the head that a GET
    /// would have had, its `content-length` the GET body's (RFC 9110
    /// §9.3.2, §8.6), and no content; a 204 or 304 (a status template's)
    /// without content (§6.4.1). The core drops such content too; leaving
    /// it out here keeps it out of the trace and the byte counts.
    /// A 2xx to a CONNECT is the head alone, which leaves the stream open
    /// as the tunnel; it has no content and says no length (RFC 9110
    /// §9.3.6), so the rule's body and any `content-length` are left out:
    /// the core drops the length too, on either protocol, and leaving it
    /// out here keeps the dump to what the client gets.
    fn answer(
        &mut self,
        stream: StreamId,
        mut head: ResponseHead,
        body: Bytes,
        conn: &mut Connection,
    ) {
        let tunnel = self.tunnel && head.is_success();
        let body = if self.head_request || !head.may_have_content() || tunnel {
            Bytes::new()
        } else {
            body
        };
        if tunnel {
            head.fields
                .retain(|f| !f.name.eq_ignore_ascii_case(b"content-length"));
        }
        self.send(stream, head, body, conn, "RESPONSE", tunnel);
    }

    /// Sends the response, or for a `tunnel` only its head.
    fn send(
        &mut self,
        stream: StreamId,
        head: ResponseHead,
        body: Bytes,
        conn: &mut Connection,
        what: &str,
        tunnel: bool,
    ) {
        let status = head.status;
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
        let len = body.len() as u64;
        let sent = if tunnel {
            conn.send_response(stream, head, false)
        } else {
            conn.send_reply(stream, head, body)
        };
        match sent {
            Ok(()) => {
                self.opened = tunnel;
                self.sent(status, len);
            }
            // The head was above what the client accepts: the core reset
            // the stream.
            Err(UserError::HeaderListTooLarge { .. }) => self.totals.resets += 1,
            // A template filled a field with CR, LF or NUL (a value from
            // the request's JSON body, say), which the core does not send
            // (it would write lines of its own over HTTP/1.1): the client
            // gets a 500 that says so, not a stream left unanswered.
            Err(e @ UserError::InvalidField(_)) => {
                let why = Bytes::from(format!("h2sim server: the rule's answer: {e}\n"));
                let len = why.len() as u64;
                let head = ResponseHead::new(500).field("content-type", "text/plain");
                if conn.send_reply(stream, head, why).is_ok() {
                    self.sent(500, len);
                }
            }
            // The stream is gone (the client reset it) or the connection
            // is over: nobody is waiting.
            Err(_) => {}
        }
    }

    /// Counts a response sent.
    fn sent(&mut self, status: u16, len: u64) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.totals.status_classes[class] += 1;
        self.totals.responses += 1;
        self.totals.bytes_out += len;
    }
}

/// The server application of one connection.
pub struct ServerApp {
    shared: Arc<Shared>,
    peer: SocketAddr,
    pending: StreamMap<Pending>,
    /// CONNECT streams, answered or not.
    tunnels: StreamMap<Tunnel>,
    /// Responses held back by a rule's delay.
    delayed: Vec<Delayed>,
    totals: Totals,
    /// When the connection was accepted (before its TLS handshake).
    accepted: Option<Instant>,
    handshake: Duration,
    /// The latest time an event brought, for a connection dropped without
    /// a `Closed` event.
    last_seen: Option<Instant>,
    rng: u64,
    /// The status the core answered the client's latest broken request
    /// with: over HTTP/1.1, which closes after it, its `DISCONNECTED` line
    /// names it (the core's error says PROTOCOL_ERROR, which no HTTP/1.1
    /// client sees).
    answered: Option<u16>,
    /// The protocol its requests came in, for the words of its
    /// `DISCONNECTED` line: a server tells it from the first bytes, and an
    /// h2c upgrade turns HTTP/1.1 into HTTP/2 after its first request.
    protocol: Option<Protocol>,
    closed: bool,
}

impl ServerApp {
    pub fn new(shared: Arc<Shared>, peer: SocketAddr) -> Self {
        let rules = shared.rules.len();
        ServerApp {
            shared,
            peer,
            pending: StreamMap::default(),
            tunnels: StreamMap::default(),
            delayed: Vec::new(),
            totals: Totals {
                connections: 1,
                rule_hits: vec![0; rules],
                ..Totals::default()
            },
            accepted: None,
            handshake: Duration::ZERO,
            last_seen: None,
            rng: 0x9E37_79B9_7F4A_7C15 ^ u64::from(peer.port()),
            answered: None,
            protocol: None,
            closed: false,
        }
    }

    /// The TLS handshake took `handshake` before the connection reached
    /// us: the connection's lifetime counts from the accept.
    pub fn accepted_before(mut self, handshake: Duration) -> Self {
        self.handshake = handshake;
        self
    }

    fn roll(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// The whole request is in, with its `trailers` if it had any (shown
    /// in the trace; no rule reads them): pick the rule, then answer now
    /// or later.
    fn complete(
        &mut self,
        now: Instant,
        stream: StreamId,
        pending: Pending,
        trailers: &[HeaderField],
        conn: &mut Connection,
    ) {
        let head = pending.head;
        let body = Bytes::from(pending.body);
        let request = Request::new(&head, &body);
        let found = rules::find(&self.shared.rules, &self.shared.paths, &request);
        if let Some(trace) = &self.shared.trace {
            let mut text = format!(
                "REQUEST[{}, stream {}]: {} {}",
                self.peer,
                stream.value(),
                String::from_utf8_lossy(&head.method),
                String::from_utf8_lossy(&head.path)
            );
            text.push('\n');
            // An extended CONNECT's :protocol (RFC 8441) shows with it.
            let pseudo: &[(&[u8], &[u8])] = if head.protocol.is_empty() {
                &[(b":authority", &head.authority)]
            } else {
                &[
                    (b":authority", &head.authority),
                    (b":protocol", &head.protocol),
                ]
            };
            trace::dump_kept(
                &mut text,
                pseudo,
                &head.fields,
                &body,
                usize::try_from(pending.body_len).unwrap_or(usize::MAX),
                trailers,
            );
            trace.line(&text);
        }
        match found.as_ref().and_then(|f| self.shared.rules[f.rule].delay) {
            Some(delay) => {
                let wait = delay.pick(self.roll());
                self.delayed.push(Delayed {
                    due: now + wait,
                    stream,
                    head,
                    body,
                    found,
                });
            }
            None => {
                let opened = self.respond(now, stream, &request, found, conn);
                self.answered_connect(stream, opened, conn);
                // Its box and vector serve the next head decoded or answered.
                conn.recycle_request(head);
            }
        }
    }

    /// A CONNECT on `stream` was answered: a 2xx (`opened`) echoes what
    /// came early, and the client's end if it came; anything else leaves
    /// no tunnel, and what came is dropped.
    /// `stream` is a CONNECT's: looked up only while some CONNECT is open,
    /// so the requests of a connection without one (nearly all) pay one
    /// test, not a hash each.
    fn is_tunnel(&self, stream: StreamId) -> bool {
        !self.tunnels.is_empty() && self.tunnels.contains_key(&stream)
    }

    fn answered_connect(&mut self, stream: StreamId, opened: bool, conn: &mut Connection) {
        if self.tunnels.is_empty() {
            return;
        }
        if !opened {
            self.tunnels.remove(&stream);
            return;
        }
        let Some(tunnel) = self.tunnels.get_mut(&stream) else {
            return;
        };
        tunnel.open = true;
        let early = std::mem::take(&mut tunnel.early);
        let ended = tunnel.ended;
        let n = early.len();
        for (i, data) in early.into_iter().enumerate() {
            self.echo(stream, data, ended && i + 1 == n, conn);
        }
        if ended && n == 0 {
            self.echo(stream, Bytes::new(), true, conn);
        }
    }

    /// Sends `data` back on the tunnel `stream`; its end ends ours, and a
    /// stream that cannot take it (reset, the connection gone) is dropped.
    fn echo(&mut self, stream: StreamId, data: Bytes, end_stream: bool, conn: &mut Connection) {
        let len = data.len() as u64;
        // Over HTTP/2 the echo waits in the core for the client's window,
        // while what the client sends is taken as it comes (its window
        // given back at once): a client that sends and never reads would
        // grow it without bound. Past ECHO_WAITING the tunnel is cut.
        // (Over HTTP/1.1 the driver stops reading while output waits.)
        if conn.unsent(stream) + len > ECHO_WAITING {
            self.tunnels.remove(&stream);
            let _ = conn.reset(stream, Reason::CANCEL);
            self.totals.resets += 1;
            return;
        }
        match conn.send_data(stream, data, end_stream) {
            Ok(()) => self.totals.bytes_out += len,
            Err(_) => {
                self.tunnels.remove(&stream);
                return;
            }
        }
        if end_stream {
            self.tunnels.remove(&stream);
        }
    }

    /// Answers `request` by the rule `found` picked (the same view of it,
    /// so a JSON body is parsed once for both). A HEAD that a GET rule
    /// matched is answered as that GET, rule hit, counter, delay and
    /// notifications included, but without content and without pushes:
    /// a client that asks for no content wants no pushed content either.
    /// True when a 2xx opened a CONNECT's tunnel.
    fn respond(
        &mut self,
        now: Instant,
        stream: StreamId,
        request: &Request<'_>,
        found: Option<Found>,
        conn: &mut Connection,
    ) -> bool {
        let as_get;
        let request = match &found {
            Some(found) if self.shared.rules[found.rule].answers_as_get(request) => {
                as_get = request.as_get();
                &as_get
            }
            _ => request,
        };
        let tunnel = self.is_tunnel(stream);
        // Borrowed, not cloned: an `Arc` clone per request is two atomic
        // operations.
        let mut out = Outlet {
            shared: &self.shared,
            peer: self.peer,
            totals: &mut self.totals,
            head_request: request.is_head(),
            tunnel,
            opened: false,
        };
        let shared = out.shared;
        let Some(found) = found else {
            out.totals.not_found += 1;
            out.answer(stream, rules::not_found(), Bytes::new(), conn);
            return false;
        };
        let i = found.rule;
        out.totals.rule_hits[i] += 1;
        let rule = &shared.rules[i];
        let answers = &shared.answers[i];
        let mut vars = Vars {
            captures: &found.captures,
            clock: shared.clock,
            ..Vars::of(request, rule.prefix())
        };
        // A request turned away for its token does not count.
        if rule.require_token
            && let Some((reply, body)) = oauth::check_bearer(&shared.tokens, request, now)
        {
            out.answer(stream, reply, body, conn);
            return out.opened;
        }
        if let Some(counter) = &answers.counter {
            vars.counter = counter.fetch_add(1, Ordering::Relaxed) + 1;
        }
        let list_items;
        let (reply, body, id) = match &rule.kind {
            Kind::Reply => {
                if !out.head_request {
                    for (push, answer) in rule.pushes.iter().zip(&answers.pushes) {
                        out.push(stream, request.head, push, answer, &vars, conn);
                    }
                }
                let (reply, body) = match &rule.dir {
                    // A HEAD takes the file's size alone: its content
                    // would be read only to be dropped (200 MiB for one
                    // `curl -I`).
                    Some(dir) => {
                        let relative = request
                            .path
                            .strip_prefix(rule.prefix())
                            .unwrap_or(request.path);
                        let file = if out.head_request {
                            shared
                                .files
                                .size(dir, relative)
                                .map(|len| (len, Bytes::new()))
                        } else {
                            shared
                                .files
                                .read(dir, relative)
                                .map(|bytes| (bytes.len() as u64, bytes))
                        };
                        match file {
                            Ok((len, bytes)) => (
                                answers.reply.render_file(&vars, len, conn.spare_fields()),
                                bytes,
                            ),
                            Err(_) => (rules::not_found(), Bytes::new()),
                        }
                    }
                    None => answers.reply.render(&vars, conn.spare_fields()),
                };
                (reply, body, None)
            }
            Kind::Resource(resource) => {
                let collection = &request.path[..found.item.collection_end];
                let id = found.item.id.clone().and_then(|r| request.path.get(r));
                let a = resource::handle(resource, &shared.store, request, collection, id);
                (a.head, a.body, a.id)
            }
            Kind::List(list) => {
                let collection = answers
                    .collection
                    .as_ref()
                    .map(|c| c.render(&vars).into_owned())
                    .unwrap_or_default();
                list_items = resource::list(list, &shared.store, request, &collection);
                // Stored items are JSON, so UTF-8: checked at the speed of
                // `from_utf8`, not of a lossy conversion's byte walk.
                let items = match std::str::from_utf8(&list_items) {
                    Ok(text) => std::borrow::Cow::Borrowed(text),
                    Err(_) => String::from_utf8_lossy(&list_items),
                };
                let vars = Vars {
                    items: &items,
                    ..vars
                };
                let (reply, body) = if matches!(rule.reply.body, rules::Body::Empty) {
                    problem::json_response(
                        answers.reply.status(&vars),
                        "application/json",
                        list_items.clone(),
                        rule.reply.headers.clone(),
                    )
                } else {
                    answers.reply.render(&vars, conn.spare_fields())
                };
                (reply, body, None)
            }
            Kind::Token(endpoint) => {
                let (reply, body) = oauth::token(endpoint, &shared.tokens, request, now);
                (reply, body, None)
            }
        };
        let ok = (200..300).contains(&reply.status);
        out.answer(stream, reply, body, conn);
        // Only what succeeded notifies: a refused subscription has no one
        // to tell.
        if ok && !answers.notify.is_empty() {
            let vars = Vars {
                id: id.as_deref().unwrap_or(""),
                ..vars
            };
            for notify in &answers.notify {
                shared.notifier.trigger(notify, &vars, now);
            }
        }
        out.opened
    }

    /// A request turned down because the client broke `violation`, and
    /// `answer`ed by the core (a 413 for a body above
    /// `--request-body-limit`, `Config::max_request_body`, over either
    /// protocol): counted, and named in the log in the style of the
    /// REQUEST dumps, since the application has no other trace of it.
    fn refused(
        &mut self,
        stream: StreamId,
        answer: RefusedWith,
        violation: &dyn std::fmt::Display,
    ) {
        self.totals.refused += 1;
        self.answered = match answer {
            RefusedWith::Status(status) => Some(status),
            RefusedWith::Reset(_) => None,
        };
        // A connection names its first REFUSED_LINES refusals, then says
        // once that the rest are only counted.
        let Some(log) = &self.shared.log else {
            return;
        };
        match self.totals.refused {
            n if n <= REFUSED_LINES => log.line(&format!(
                "REFUSED[{}, stream {}]: {answer}: {violation}",
                self.peer,
                stream.value()
            )),
            n if n == REFUSED_LINES + 1 => log.line(&format!(
                "REFUSED[{}]: more than {REFUSED_LINES} on this connection: the rest are \
                 counted, not printed (see its DISCONNECTED line)",
                self.peer
            )),
            _ => {}
        }
    }

    /// The per-connection line h2simple users know, printed when it
    /// closes: what ended it, and its counts over its whole life. The
    /// requests refused, which h2simple did not count, follow the line it
    /// printed (as its ` !!!` did), and only when there were any, so that
    /// what reads h2simple's line reads it still.
    fn summary(&self, cause: &Ending<ServerSide>, closed: Option<Instant>) -> String {
        let life = match (self.accepted, closed) {
            (Some(a), Some(b)) => b.saturating_duration_since(a),
            _ => Duration::ZERO,
        };
        let http1 = self.is_http1();
        // HTTP/1.1's line has no resets: its unanswered requests take
        // their place, in its own words; HTTP/2's follow h2simple's counts.
        let counts = Counts {
            requests: self.totals.requests,
            responses: self.totals.responses,
            resets: if http1 {
                self.totals.unanswered
            } else {
                self.totals.resets
            },
            pushes: self.totals.pushes,
            http1,
        };
        let mut line = counts.line(self.peer, cause, life);
        if !http1 && self.totals.unanswered > 0 {
            let _ = write!(line, " {} unanswered", self.totals.unanswered);
        }
        if self.totals.refused > 0 {
            let _ = write!(line, " {} refused", self.totals.refused);
        }
        if self.totals.bytes_unsent > 0 {
            let _ = write!(
                line,
                " {} of {} body bytes unsent",
                self.totals.bytes_unsent, self.totals.bytes_out
            );
        }
        line
    }

    /// Its requests came over HTTP/1.1: its counts are told in that
    /// protocol's words.
    fn is_http1(&self) -> bool {
        self.protocol == Some(Protocol::Http1)
    }

    fn finish(&mut self, cause: Ending<ServerSide>, now: Option<Instant>) {
        if self.closed {
            return;
        }
        self.closed = true;
        // HTTP/1.1's resets were exchanges cut off by its end: unanswered
        // requests, as its line and the summary say (a server that served
        // both protocols summed the two as resets).
        if self.is_http1() {
            self.totals.unanswered += std::mem::take(&mut self.totals.resets);
        }
        // Requests still waiting for their answer (a body still coming, a
        // rule's delay) are cut off by the connection's end: HTTP/1.1's
        // core told them by a reset event already, HTTP/2's end takes its
        // streams with it.
        self.totals.unanswered += (self.pending.len() + self.delayed.len()) as u64;
        self.pending.clear();
        self.delayed.clear();
        if let Some(log) = &self.shared.log {
            log.line(&self.summary(&cause, now.or(self.last_seen)));
        }
        if let Ok(mut totals) = self.shared.totals.lock() {
            totals.merge(&self.totals);
        }
    }
}

impl Application for ServerApp {
    fn start(&mut self, now: Instant, _conn: &mut Connection) {
        self.accepted = now.checked_sub(self.handshake).or(Some(now));
        self.last_seen = Some(now);
    }

    /// Between requests, the map of requests in progress and the delay
    /// queue give back what a burst grew them to.
    fn trim(&mut self) {
        if self.pending.is_empty() && self.pending.capacity() > 0 {
            self.pending = StreamMap::default();
        }
        if self.tunnels.is_empty() && self.tunnels.capacity() > 0 {
            self.tunnels = StreamMap::default();
        }
        if self.delayed.is_empty() && self.delayed.capacity() > 0 {
            self.delayed = Vec::new();
        }
    }

    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        self.last_seen = Some(now);
        match event {
            Event::Request {
                stream,
                head,
                end_stream,
            } => {
                self.protocol = conn.protocol();
                self.totals.requests += 1;
                // A CONNECT is answered on its head: what follows on its
                // stream is the tunnel's, not a body (RFC 9113 §8.5).
                let connect = head.method.as_ref() == b"CONNECT";
                let pending = Pending {
                    head,
                    body: Vec::new(),
                    body_len: 0,
                };
                if connect && !end_stream {
                    self.tunnels.insert(stream, Tunnel::default());
                }
                if end_stream || connect {
                    self.complete(now, stream, pending, &[], conn);
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
                // No lookup on a connection without tunnels (nearly all).
                let tunnel_open = if self.tunnels.is_empty() {
                    None
                } else {
                    self.tunnels.get(&stream).map(|t| t.open)
                };
                if let Some(open) = tunnel_open {
                    if open {
                        self.echo(stream, data, end_stream, conn);
                        return;
                    }
                    // What the connection's tunnels hold for answers still
                    // to come (a rule's delay), all of them: bounded per
                    // connection, not per tunnel, or 256 tunnels could
                    // hold 256 times the bound. Summed only here, not for
                    // every DATA of an open tunnel's echo.
                    let early: usize = self.tunnels.values().map(|t| t.early_len).sum();
                    if early + data.len() > MAX_BODY {
                        // Held for an answer that is slow to come: a
                        // client that sends this much before it has one
                        // is not waiting for it.
                        self.tunnels.remove(&stream);
                        let _ = conn.reset(stream, Reason::CANCEL);
                        self.totals.resets += 1;
                    } else if let Some(tunnel) = self.tunnels.get_mut(&stream) {
                        tunnel.early_len += data.len();
                        tunnel.early.push(data);
                        tunnel.ended = end_stream;
                    }
                    return;
                }
                // A body past `--request-body-limit` never gets here: the
                // core takes its stream back (a `StreamReset`).
                if let Some(p) = self.pending.get_mut(&stream) {
                    p.body_len += data.len() as u64;
                    let keep = if self.shared.needs_body {
                        MAX_BODY
                    } else if self.shared.trace.is_some() {
                        trace::SHOWN_BODY
                    } else {
                        0
                    };
                    let room = keep.saturating_sub(p.body.len()).min(data.len());
                    p.body.extend_from_slice(&data[..room]);
                }
                if end_stream && let Some(p) = self.pending.remove(&stream) {
                    self.complete(now, stream, p, &[], conn);
                }
            }
            Event::Trailers { stream, fields } => {
                // Trailers end a tunnel's side as its last DATA would.
                if !self.tunnels.is_empty()
                    && let Some(tunnel) = self.tunnels.get_mut(&stream)
                {
                    if tunnel.open {
                        self.echo(stream, Bytes::new(), true, conn);
                    } else {
                        tunnel.ended = true;
                    }
                    return;
                }
                if let Some(p) = self.pending.remove(&stream) {
                    self.complete(now, stream, p, &fields, conn);
                }
            }
            Event::StreamReset {
                stream,
                reason,
                violation,
                status,
                ..
            } => {
                // The answer the client got: the core's status for a bad
                // request body (a 413 past the limit, on either protocol),
                // else the RST_STREAM.
                let answer = status.map_or(RefusedWith::Reset(reason), RefusedWith::Status);
                self.pending.remove(&stream);
                match violation {
                    Some(violation) => self.refused(stream, answer, &violation),
                    None => self.totals.resets += 1,
                }
                self.tunnels.remove(&stream);
                self.delayed.retain(|d| d.stream != stream);
            }
            Event::Refused {
                stream,
                answer,
                violation,
            } => self.refused(stream, answer, &violation),
            Event::Frame { outgoing, frame } => {
                if let Some(frames) = &self.shared.frames {
                    frames.line(&format!(
                        "[{}] {}",
                        self.peer,
                        trace::frame(outgoing, &frame)
                    ));
                }
            }
            Event::Closed { cause, .. } => {
                self.protocol = conn.protocol();
                // What the core wrote of the bodies by now is all it ever
                // will: after the end it writes no stream's frames.
                // Of the bodies it gave: the core's own answers (its 413s)
                // are written too, and hid as many of its bytes unsent.
                let stats = conn.stats();
                let written = stats.data_bytes_sent - stats.own_data_bytes_sent;
                self.totals.bytes_unsent = self.totals.bytes_out.saturating_sub(written);
                let ending = Ending::server(&cause, conn.protocol(), self.answered);
                self.finish(ending, Some(now));
            }
            _ => {}
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.delayed.iter().map(|d| d.due).min()
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        self.last_seen = Some(now);
        let (due, later) = std::mem::take(&mut self.delayed)
            .into_iter()
            .partition(|d| d.due <= now);
        self.delayed = later;
        for d in due {
            let request = Request::new(&d.head, &d.body);
            let opened = self.respond(now, d.stream, &request, d.found, conn);
            self.answered_connect(d.stream, opened, conn);
            conn.recycle_request(d.head);
        }
    }
}

impl Drop for ServerApp {
    /// A connection that ends without a Closed event (the transport was
    /// dropped, as at shutdown) still counts.
    fn drop(&mut self) {
        self.finish(Ending::Side(ServerSide::Shutdown), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::matcher::Expect;
    use crate::server::rules::Body;

    fn rule(f: impl FnOnce(&mut Rule)) -> Rule {
        let mut r = Rule::new("POST");
        r.path_prefix = Some("/user/".into());
        f(&mut r);
        r
    }

    /// Plain rules, templates of the path included, keep no request body:
    /// only a rule that reads one makes the server keep them.
    #[test]
    fn bodies_are_kept_only_for_rules_that_read_them() {
        let needs = |rules| Shared::new(rules, None, None).needs_body;
        assert!(!needs(vec![rule(
            |r| r.reply.body = Body::from_text("${suffix} ${uuid} ${now}")
        )]));
        assert!(needs(vec![rule(
            |r| r.reply.body = Body::from_text("${body/a}")
        )]));
        assert!(needs(vec![rule(|r| r
            .conditions
            .body
            .push(("/a".into(), Expect::Present)))]));
        assert!(needs(vec![rule(
            |r| r.kind = Kind::Resource(Default::default())
        )]));
    }
}
