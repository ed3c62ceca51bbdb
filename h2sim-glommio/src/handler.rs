//! A request/response handler as an [`Application`], for library users who
//! want "request in, response out" rather than the event contract. The
//! interface is the tokio adapter's, so a handler runs on either runtime.
//!
//! The request body is gathered (up to a bound) before the handler runs;
//! the response body is handed to the core whole and leaves in DATA frames
//! as flow control allows, without a copy.

use std::collections::HashMap;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use h2sim_proto::{
    Application, Connection, Event, HeaderField, RequestHead, ResponseHead, StreamId,
};

/// A complete request.
#[derive(Debug, Clone)]
pub struct Request {
    pub stream: StreamId,
    pub head: RequestHead,
    pub body: Bytes,
    pub trailers: Vec<HeaderField>,
}

/// A complete response, with responses to push before it (HTTP/2 only;
/// dropped where the client refuses pushes or speaks HTTP/1.1).
#[derive(Debug, Clone)]
pub struct Reply {
    pub head: ResponseHead,
    pub body: Bytes,
    pub pushes: Vec<Push>,
}

impl Reply {
    /// A response with `status` and a body.
    pub fn new(status: u16, body: impl Into<Bytes>) -> Self {
        Reply {
            head: ResponseHead::new(status),
            body: body.into(),
            pushes: Vec::new(),
        }
    }
}

/// One pushed response: the request it answers and the response itself.
#[derive(Debug, Clone)]
pub struct Push {
    pub request: RequestHead,
    pub head: ResponseHead,
    pub body: Bytes,
}

/// Largest request body a [`HandlerApp`] gathers by default; a larger one
/// is answered 413 without calling the handler.
pub const DEFAULT_MAX_REQUEST_BODY: usize = 16 << 20;

/// Runs a handler `FnMut(Request) -> Reply` on one connection.
#[derive(Debug)]
pub struct HandlerApp<H> {
    handler: H,
    max_body: usize,
    /// Requests whose body is still arriving.
    pending: HashMap<StreamId, Pending>,
}

#[derive(Debug)]
struct Pending {
    head: RequestHead,
    body: BytesMut,
    /// Answered 413 already; the rest of the body is dropped as it comes.
    refused: bool,
}

impl<H: FnMut(Request) -> Reply> HandlerApp<H> {
    pub fn new(handler: H) -> Self {
        HandlerApp {
            handler,
            max_body: DEFAULT_MAX_REQUEST_BODY,
            pending: HashMap::new(),
        }
    }

    /// Sets the largest request body gathered before answering 413.
    pub fn max_request_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    fn complete(&mut self, stream: StreamId, trailers: Vec<HeaderField>, conn: &mut Connection) {
        let Some(pending) = self.pending.remove(&stream) else {
            return;
        };
        if pending.refused {
            return;
        }
        let reply = (self.handler)(Request {
            stream,
            head: pending.head,
            body: pending.body.freeze(),
            trailers,
        });
        send(conn, stream, reply);
    }
}

/// Sends a reply; pushes go first so the client hears of them before the
/// response that may refer to them (RFC 9113 §8.4).
fn send(conn: &mut Connection, stream: StreamId, reply: Reply) {
    for push in reply.pushes {
        // A refused push (client disabled push, HTTP/1.1, going away) is
        // simply not sent: pushes are an optimisation the client may decline.
        if let Ok(promised) = conn.push_promise(stream, push.request) {
            respond(conn, promised, push.head, push.body);
        }
    }
    respond(conn, stream, reply.head, reply.body);
}

fn respond(conn: &mut Connection, stream: StreamId, head: ResponseHead, body: Bytes) {
    // These fail only if the stream is gone (the client reset it, or the
    // connection ended); there is nobody left to answer then.
    if body.is_empty() {
        let _ = conn.send_response(stream, head, true);
    } else if conn.send_response(stream, head, false).is_ok() {
        let _ = conn.send_data(stream, body, true);
    }
}

impl<H: FnMut(Request) -> Reply> Application for HandlerApp<H> {
    fn on_event(&mut self, _now: Instant, event: Event, conn: &mut Connection) {
        match event {
            Event::Request {
                stream,
                head,
                end_stream,
            } => {
                self.pending.insert(
                    stream,
                    Pending {
                        head,
                        body: BytesMut::new(),
                        refused: false,
                    },
                );
                if end_stream {
                    self.complete(stream, Vec::new(), conn);
                }
            }
            Event::Data {
                stream,
                data,
                end_stream,
            } => {
                if let Some(pending) = self.pending.get_mut(&stream)
                    && !pending.refused
                {
                    if pending.body.len() + data.len() > self.max_body {
                        pending.refused = true;
                        pending.body = BytesMut::new();
                        respond(conn, stream, ResponseHead::new(413), Bytes::new());
                    } else {
                        pending.body.extend_from_slice(&data);
                    }
                }
                if end_stream {
                    self.complete(stream, Vec::new(), conn);
                }
            }
            Event::Trailers { stream, fields } => self.complete(stream, fields, conn),
            Event::StreamReset { stream, .. } => {
                self.pending.remove(&stream);
            }
            Event::Closed { .. } => self.pending.clear(),
            _ => {}
        }
    }
}
