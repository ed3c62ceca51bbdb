//! `--listen`: the notifications a client receives during its run. The
//! server application that answers them (the rule server's, 204 or
//! `--listen-rules`) runs inside [`ListenerApp`], which watches each
//! request go by: it counts it and, when it names a scenario instance's
//! value, times it against that instance's latest request
//! ([`Correlations`]). Sans-IO like the applications it wraps.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use h2sim_proto::{Application, Connection, Event, StreamId};

use super::correlate::Correlations;
use crate::report::Notifications;

/// Bytes of a notification's body kept for finding its value.
const BODY_LIMIT: usize = 64 * 1024;

/// What every listening connection shares: the run's values, which also
/// keep the notifications' figures.
#[derive(Debug)]
pub struct Inbox {
    correlations: Arc<Correlations>,
}

impl Inbox {
    pub fn new(correlations: Arc<Correlations>) -> Inbox {
        Inbox { correlations }
    }

    /// The figures so far.
    pub fn notifications(&self) -> Notifications {
        self.correlations.notifications()
    }

    fn arrived(&self, path: &str, body: &[u8], now: Instant) {
        self.correlations.arrived(path, body, now);
    }
}

/// A notification being received.
#[derive(Debug, Default)]
struct Arriving {
    path: String,
    body: Vec<u8>,
}

/// A server application, and the notifications it answers counted.
pub struct ListenerApp<A> {
    inner: A,
    inbox: Arc<Inbox>,
    arriving: HashMap<StreamId, Arriving>,
}

impl<A> ListenerApp<A> {
    pub fn new(inner: A, inbox: Arc<Inbox>) -> Self {
        ListenerApp {
            inner,
            inbox,
            arriving: HashMap::new(),
        }
    }

    fn complete(&mut self, stream: StreamId, now: Instant) {
        if let Some(n) = self.arriving.remove(&stream) {
            self.inbox.arrived(&n.path, &n.body, now);
        }
    }

    /// Notes what the request event says, before the inner application
    /// takes it.
    fn watch(&mut self, now: Instant, event: &Event) {
        match event {
            Event::Request {
                stream,
                head,
                end_stream,
            } => {
                self.arriving.insert(
                    *stream,
                    Arriving {
                        path: String::from_utf8_lossy(&head.path).into_owned(),
                        body: Vec::new(),
                    },
                );
                if *end_stream {
                    self.complete(*stream, now);
                }
            }
            Event::Data {
                stream,
                data,
                end_stream,
            } => {
                if let Some(n) = self.arriving.get_mut(stream)
                    && n.body.len() < BODY_LIMIT
                {
                    n.body.extend_from_slice(data);
                }
                if *end_stream {
                    self.complete(*stream, now);
                }
            }
            Event::Trailers { stream, .. } => self.complete(*stream, now),
            Event::StreamReset { stream, .. } => {
                self.arriving.remove(stream);
            }
            _ => {}
        }
    }
}

impl<A: Application> Application for ListenerApp<A> {
    fn start(&mut self, now: Instant, conn: &mut Connection) {
        self.inner.start(now, conn);
    }

    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        self.watch(now, &event);
        self.inner.on_event(now, event, conn);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        self.inner.on_timeout(now, conn);
    }

    fn trim(&mut self) {
        self.inner.trim();
    }
}
