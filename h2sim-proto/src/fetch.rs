//! Send a list of requests over N connections, up to M in flight on each,
//! and get every response back with its timing and the responses pushed
//! with it: the client side of the interop tests, and a small load tool.
//! Sans-IO: each runtime adapter's `fetch` runs these applications on its
//! connections and collects the results.
//!
//! Every request ends in exactly one result: a response, or the error that
//! took it (reset, connection lost, never sent). A request the server did
//! not process (above its GOAWAY's last stream id, RFC 9113 §8.7) goes back
//! into the queue for another connection. The queue is shared by all
//! connections behind a mutex, taken once per request: fine for a test
//! client, not meant as the hot path of a load generator.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use crate::host::{ClientError, ClientOptions, ClientOutcome, ConnectionInfo};
use crate::{
    Application, Connection, ConnectionError, Event, HeaderField, Reason, RequestHead,
    ResponseHead, StreamId,
};
use bytes::{Bytes, BytesMut};

/// One request to send.
#[derive(Debug, Clone)]
pub struct FetchRequest {
    pub head: RequestHead,
    pub body: Bytes,
}

impl FetchRequest {
    /// A GET of `path` on `authority` with `scheme`.
    pub fn get(scheme: &str, authority: &str, path: &str) -> Self {
        FetchRequest {
            head: RequestHead::new(
                "GET",
                scheme.to_owned(),
                authority.to_owned(),
                path.to_owned(),
            ),
            body: Bytes::new(),
        }
    }
}

/// A complete response and when each part of it happened.
#[derive(Debug, Clone)]
pub struct ResponseRecord {
    /// The stream it came on (its connection's numbering).
    pub stream: StreamId,
    /// The final (non-1xx) response head.
    pub head: ResponseHead,
    pub body: Bytes,
    pub trailers: Vec<HeaderField>,
    /// When the request was handed to the connection.
    pub sent_at: Instant,
    /// When the first response head (interim or final) arrived.
    pub first_byte_at: Instant,
    /// When the response ended.
    pub completed_at: Instant,
    /// Responses the server pushed with this one.
    pub pushes: Vec<PushedResponse>,
}

/// A pushed response, as far as it got.
#[derive(Debug, Clone)]
pub struct PushedResponse {
    pub stream: StreamId,
    /// The request the server promised to answer.
    pub request: RequestHead,
    pub head: Option<ResponseHead>,
    pub body: Bytes,
    pub completed_at: Option<Instant>,
    /// Set when the pushed stream was reset instead of completing.
    pub reset: Option<Reason>,
}

/// Why a request has no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// Its stream was reset (by the server when `remote`).
    Reset { reason: Reason, remote: bool },
    /// Its connection ended before the response did.
    ConnectionLost(Option<ConnectionError>),
    /// No connection took it; `why` says what happened to the connections.
    NotSent { why: String },
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::Reset { reason, remote } => {
                let by = if *remote { "server" } else { "client" };
                write!(f, "stream reset by the {by}: {reason:?}")
            }
            RequestError::ConnectionLost(Some(e)) => write!(f, "connection lost: {e}"),
            RequestError::ConnectionLost(None) => {
                f.write_str("connection closed before the response")
            }
            RequestError::NotSent { why } => write!(f, "not sent: {why}"),
        }
    }
}

impl std::error::Error for RequestError {}

/// What became of one request.
pub type Outcome = Result<ResponseRecord, RequestError>;

/// The queue and results all connections of one `fetch` share.
#[derive(Debug)]
pub struct Shared {
    requests: Vec<FetchRequest>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    queue: VecDeque<usize>,
    results: Vec<Option<Outcome>>,
}

impl Shared {
    pub fn new(requests: Vec<FetchRequest>) -> Self {
        let n = requests.len();
        Shared {
            requests,
            state: Mutex::new(State {
                queue: (0..n).collect(),
                results: (0..n).map(|_| None).collect(),
            }),
        }
    }

    /// The state, even if another connection panicked holding it: the
    /// queue and results stay consistent at every unlock.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The application for one more connection, with up to `in_flight`
    /// requests outstanding on it.
    pub fn app(self: &Arc<Self>, in_flight: usize) -> FetchApp {
        FetchApp {
            shared: Arc::clone(self),
            in_flight: in_flight.max(1),
            active: HashMap::new(),
            awaiting_pushes: HashMap::new(),
            pushes: HashMap::new(),
            leaving: false,
        }
    }

    /// One result per request, in order, once every connection ended; a
    /// request none took is `NotSent` with `why`.
    pub fn results(&self, why: &str) -> Vec<Outcome> {
        std::mem::take(&mut self.lock().results)
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(RequestError::NotSent {
                        why: why.to_owned(),
                    })
                })
            })
            .collect()
    }

    fn finish(&self, index: usize, outcome: Outcome) {
        self.lock().results[index] = Some(outcome);
    }
}

/// The factory a [`plan`] gives `connect`: one [`FetchApp`] per
/// connection, all on the plan's queue.
pub type Apps = Box<dyn Fn(&ConnectionInfo) -> FetchApp + Send + Sync>;

/// What every host's `fetch` does around its runtime's `connect`, so that
/// it is written once: the shared queue for `requests`, the in-flight depth
/// (at least 1) set as `options`' HTTP/1.1 pipeline depth too, the factory
/// that gives each connection its [`FetchApp`], and the [`Collect`] that
/// turns the slots' outcomes into one result per request. An async host
/// awaits its `connect` between the two; a blocking one can use [`run`].
pub fn plan<R>(
    requests: Vec<FetchRequest>,
    in_flight: usize,
    options: &mut ClientOptions<R>,
) -> (Apps, Collect) {
    let in_flight = in_flight.max(1);
    options.config.http1.max_pipeline = in_flight;
    let shared = Arc::new(Shared::new(requests));
    let apps = Arc::clone(&shared);
    (Box::new(move |_| apps.app(in_flight)), Collect(shared))
}

/// [`plan`], a blocking host's `connect`, and [`Collect::results`], in one
/// call.
pub fn run<R>(
    requests: Vec<FetchRequest>,
    in_flight: usize,
    mut options: ClientOptions<R>,
    connect: impl FnOnce(ClientOptions<R>, Apps) -> Result<Vec<ClientOutcome<FetchApp>>, ClientError>,
) -> Result<Vec<Outcome>, ClientError> {
    let (apps, collect) = plan(requests, in_flight, &mut options);
    collect.results(connect(options, apps))
}

/// The results of one [`plan`], once its connections ended.
#[derive(Debug)]
pub struct Collect(Arc<Shared>);

impl Collect {
    /// One result per request, in order, from what `connect` returned: a
    /// request no connection took is `NotSent`, with the first slot's
    /// error as the reason.
    pub fn results(
        self,
        outcomes: Result<Vec<ClientOutcome<FetchApp>>, ClientError>,
    ) -> Result<Vec<Outcome>, ClientError> {
        let why = outcomes?
            .iter()
            .find_map(|o| o.error.as_ref().map(ToString::to_string))
            .unwrap_or_else(|| "no connection was left to send it".to_owned());
        Ok(self.0.results(&why))
    }
}

/// One request on its way.
#[derive(Debug)]
struct Exchange {
    index: usize,
    sent_at: Instant,
    first_byte_at: Option<Instant>,
    head: Option<ResponseHead>,
    body: BytesMut,
    trailers: Vec<HeaderField>,
    completed_at: Option<Instant>,
    /// Streams the server promised with this one.
    pushes: Vec<StreamId>,
}

#[derive(Debug)]
struct PushState {
    parent: StreamId,
    response: PushedResponse,
    body: BytesMut,
}

/// The application of one fetch connection.
#[derive(Debug)]
pub struct FetchApp {
    shared: Arc<Shared>,
    in_flight: usize,
    /// Requests whose response is not complete.
    active: HashMap<StreamId, Exchange>,
    /// Complete responses whose pushed responses are still arriving.
    awaiting_pushes: HashMap<StreamId, Exchange>,
    pushes: HashMap<StreamId, PushState>,
    /// GOAWAY sent: the queue was empty.
    leaving: bool,
}

impl FetchApp {
    /// Sends queued requests while there is room; goes away once the queue
    /// is empty and nothing is in flight.
    fn fill(&mut self, now: Instant, conn: &mut Connection) {
        while !self.leaving && self.active.len() < self.in_flight {
            let Some(index) = self.shared.lock().queue.pop_front() else {
                break;
            };
            let request = &self.shared.requests[index];
            let has_body = !request.body.is_empty();
            let Ok(stream) = conn.send_request(request.head.clone(), !has_body) else {
                // Going away or closed: another connection may take it.
                self.shared.lock().queue.push_front(index);
                return;
            };
            if has_body {
                // The stream was just opened with a body to come; it cannot fail.
                let _ = conn.send_data(stream, request.body.clone(), true);
            }
            self.active.insert(
                stream,
                Exchange {
                    index,
                    sent_at: now,
                    first_byte_at: None,
                    head: None,
                    body: BytesMut::new(),
                    trailers: Vec::new(),
                    completed_at: None,
                    pushes: Vec::new(),
                },
            );
        }
        if !self.leaving && self.active.is_empty() && self.shared.lock().queue.is_empty() {
            self.leaving = true;
            conn.go_away(now);
        }
    }

    /// The response on `stream` ended.
    fn complete(&mut self, stream: StreamId, now: Instant) {
        if let Some(mut exchange) = self.active.remove(&stream) {
            exchange.completed_at = Some(now);
            self.awaiting_pushes.insert(stream, exchange);
            self.settle(stream);
        } else if let Some(push) = self.pushes.get_mut(&stream) {
            push.response.completed_at = Some(now);
            let parent = push.parent;
            self.settle(parent);
        }
    }

    /// Reports a complete response once its pushes are complete too.
    fn settle(&mut self, parent: StreamId) {
        let ready = self.awaiting_pushes.get(&parent).is_some_and(|e| {
            e.pushes.iter().all(|p| {
                self.pushes
                    .get(p)
                    .is_none_or(|s| s.response.completed_at.is_some() || s.response.reset.is_some())
            })
        });
        if ready && let Some(exchange) = self.awaiting_pushes.remove(&parent) {
            self.report(parent, exchange);
        }
    }

    /// Turns an exchange into its result, with whatever its pushes got.
    fn report(&mut self, stream: StreamId, exchange: Exchange) {
        let pushes = exchange
            .pushes
            .iter()
            .filter_map(|p| self.pushes.remove(p))
            .map(|mut p| {
                p.response.body = p.body.freeze();
                p.response
            })
            .collect();
        let (Some(head), Some(completed_at)) = (exchange.head, exchange.completed_at) else {
            self.shared
                .finish(exchange.index, Err(RequestError::ConnectionLost(None)));
            return;
        };
        let record = ResponseRecord {
            stream,
            head,
            body: exchange.body.freeze(),
            trailers: exchange.trailers,
            sent_at: exchange.sent_at,
            first_byte_at: exchange.first_byte_at.unwrap_or(completed_at),
            completed_at,
            pushes,
        };
        self.shared.finish(exchange.index, Ok(record));
    }

    /// The connection ended: in-flight requests are lost; complete ones
    /// are reported with the pushes they got.
    fn lose_all(&mut self, error: Option<ConnectionError>) {
        for (_, exchange) in self.active.drain() {
            self.shared.finish(
                exchange.index,
                Err(RequestError::ConnectionLost(error.clone())),
            );
        }
        let parents: Vec<StreamId> = self.awaiting_pushes.keys().copied().collect();
        for parent in parents {
            if let Some(exchange) = self.awaiting_pushes.remove(&parent) {
                self.report(parent, exchange);
            }
        }
        self.pushes.clear();
    }

    fn on_reset(&mut self, stream: StreamId, reason: Reason, remote: bool) {
        if let Some(exchange) = self.active.remove(&stream) {
            for p in &exchange.pushes {
                self.pushes.remove(p);
            }
            self.shared
                .finish(exchange.index, Err(RequestError::Reset { reason, remote }));
        } else if let Some(push) = self.pushes.get_mut(&stream) {
            push.response.reset = Some(reason);
            let parent = push.parent;
            self.settle(parent);
        }
    }
}

impl Application for FetchApp {
    fn start(&mut self, now: Instant, conn: &mut Connection) {
        self.leaving = false;
        self.fill(now, conn);
    }

    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        match event {
            Event::Response {
                stream,
                head,
                end_stream,
            } => {
                if let Some(exchange) = self.active.get_mut(&stream) {
                    exchange.first_byte_at.get_or_insert(now);
                    if !head.is_informational() {
                        exchange.head = Some(head);
                    }
                } else if let Some(push) = self.pushes.get_mut(&stream)
                    && !head.is_informational()
                {
                    push.response.head = Some(head);
                }
                if end_stream {
                    self.complete(stream, now);
                }
            }
            Event::Data {
                stream,
                data,
                end_stream,
            } => {
                if let Some(exchange) = self.active.get_mut(&stream) {
                    exchange.body.extend_from_slice(&data);
                } else if let Some(push) = self.pushes.get_mut(&stream) {
                    push.body.extend_from_slice(&data);
                }
                if end_stream {
                    self.complete(stream, now);
                }
            }
            Event::Trailers { stream, fields } => {
                if let Some(exchange) = self.active.get_mut(&stream) {
                    exchange.trailers = fields;
                }
                self.complete(stream, now);
            }
            Event::PushPromise {
                parent,
                promised,
                request,
            } => {
                if let Some(exchange) = self.active.get_mut(&parent) {
                    exchange.pushes.push(promised);
                    self.pushes.insert(
                        promised,
                        PushState {
                            parent,
                            response: PushedResponse {
                                stream: promised,
                                request: *request,
                                head: None,
                                body: Bytes::new(),
                                completed_at: None,
                                reset: None,
                            },
                            body: BytesMut::new(),
                        },
                    );
                }
            }
            Event::StreamReset {
                stream,
                reason,
                remote,
                ..
            } => self.on_reset(stream, reason, remote),
            Event::Retryable { stream } => {
                if let Some(exchange) = self.active.remove(&stream) {
                    self.shared.lock().queue.push_front(exchange.index);
                }
            }
            Event::Closed { error, .. } => {
                self.lose_all(error);
                return;
            }
            _ => {}
        }
        self.fill(now, conn);
    }

    /// Requests no connection has taken yet (or that came back unprocessed).
    fn wants_reconnect(&mut self) -> bool {
        !self.shared.lock().queue.is_empty()
    }
}
