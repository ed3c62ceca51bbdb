//! A request/response handler as an [`Application`], for library users who
//! want "request in, response out" rather than the event contract. It is
//! Sans-IO like the rest of this crate, so every runtime adapter serves it.
//!
//! The request body is gathered before the handler runs, up to the
//! connection's `Config::max_request_body`: the core answers a larger one
//! 413 itself, and the handler never sees it;
//! the response body is handed to the core whole and leaves in DATA frames
//! as flow control allows, without a copy.

use std::collections::HashMap;
use std::time::Instant;

use crate::message::declares_length;
use crate::trim::Trim;
use crate::{
    Application, Connection, Event, HeaderField, Protocol, RequestHead, ResponseHead, StreamId,
};
use bytes::{Bytes, BytesMut};

/// A complete request.
#[derive(Debug, Clone)]
pub struct Request {
    pub stream: StreamId,
    pub head: RequestHead,
    pub body: Bytes,
    pub trailers: Vec<HeaderField>,
}

/// A complete response, with responses to push before it (HTTP/2 only;
/// ignored where the client refuses pushes or speaks HTTP/1.1).
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

/// Runs a handler `FnMut(Request) -> Reply` on one connection.
#[derive(Debug)]
pub struct HandlerApp<H> {
    handler: H,
    /// Requests whose body is still arriving.
    pending: HashMap<StreamId, Pending>,
}

#[derive(Debug)]
struct Pending {
    head: RequestHead,
    body: BytesMut,
}

impl<H: FnMut(Request) -> Reply> HandlerApp<H> {
    pub fn new(handler: H) -> Self {
        HandlerApp {
            handler,
            pending: HashMap::new(),
        }
    }

    fn complete(&mut self, stream: StreamId, trailers: Vec<HeaderField>, conn: &mut Connection) {
        let Some(pending) = self.pending.remove(&stream) else {
            return;
        };
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

fn respond(conn: &mut Connection, stream: StreamId, mut head: ResponseHead, body: Bytes) {
    if conn.protocol() == Some(Protocol::Http2) {
        with_length(&mut head, body.len());
    }
    // A failure has nothing left to do here: the core reset a stream
    // whose head was too large, or nobody is waiting any more.
    let _ = conn.send_reply(stream, head, body);
}

/// The whole body is at hand, so its size goes in `content-length` (RFC
/// 9110 §8.6) on HTTP/2 too, where `send_reply` sends the head as given.
/// (Over HTTP/1.1 `send_reply` says the size itself, writing it into the
/// head without a field to allocate.) Not in 1xx and 204 responses, which
/// must not carry one, nor in 304 (the length of a body it does not send),
/// nor where the handler set its own, in any case.
fn with_length(head: &mut ResponseHead, len: usize) {
    let status = head.status;
    if status < 200 || status == 204 || status == 304 || declares_length(&head.fields) {
        return;
    }
    head.fields
        .push(HeaderField::new("content-length", len.to_string()));
}

impl<H: FnMut(Request) -> Reply> Application for HandlerApp<H> {
    fn trim(&mut self) {
        self.pending.trim();
    }

    fn on_event(&mut self, _now: Instant, event: Event, conn: &mut Connection) {
        match event {
            Event::Request {
                stream,
                mut head,
                end_stream,
            } => {
                // The head moves out; its box serves the next request.
                let taken = std::mem::take(&mut *head);
                conn.recycle_request(head);
                self.pending.insert(
                    stream,
                    Pending {
                        head: taken,
                        body: BytesMut::new(),
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
                // Bounded by the core, which takes the stream back (a
                // `StreamReset`) once it passes `Config::max_request_body`.
                if let Some(pending) = self.pending.get_mut(&stream) {
                    pending.body.extend_from_slice(&data);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pair::Pair;
    use crate::{Config, Endpoint};

    /// Records what a client connection receives.
    #[derive(Default)]
    struct Recorder(Vec<Event>);

    impl Application for Recorder {
        fn on_event(&mut self, _now: Instant, event: Event, _conn: &mut Connection) {
            self.0.push(event);
        }
    }

    fn echo(req: Request) -> Reply {
        let mut reply = Reply::new(200, req.body);
        if req.head.path == "/push" {
            reply.pushes.push(Push {
                request: RequestHead::new("GET", "http", "h", "/pushed"),
                head: ResponseHead::new(200),
                body: Bytes::from_static(b"pushed body"),
            });
        }
        reply
    }

    /// A recording client joined to `app` over HTTP/2.
    fn pair<H: FnMut(Request) -> Reply>(
        app: HandlerApp<H>,
    ) -> Pair<Endpoint<Recorder>, Endpoint<HandlerApp<H>>> {
        let now = Instant::now();
        let client = Endpoint::new(
            Connection::client(Config::default(), now).unwrap(),
            Recorder::default(),
            now,
        );
        let server = Endpoint::new(
            crate::Connection::server_for(crate::Protocol::Http2, Config::default(), now).unwrap(),
            app,
            now,
        );
        Pair::join(client, server, now)
    }

    fn body_of(events: &[Event], stream: StreamId) -> Vec<u8> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Data {
                    stream: s, data, ..
                } if *s == stream => Some(data.to_vec()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// A reply head the client said it would not accept resets the stream.
    #[test]
    fn a_reply_above_the_clients_header_list_size_resets_the_stream() {
        let now = Instant::now();
        let small = Config {
            max_header_list_size: 200,
            ..Config::default()
        };
        let client = Endpoint::new(
            Connection::client(small, now).unwrap(),
            Recorder::default(),
            now,
        );
        let app = HandlerApp::new(|_req: Request| {
            let mut reply = Reply::new(200, Bytes::new());
            reply.head = reply.head.field("x-large", "v".repeat(300));
            reply
        });
        let server = Endpoint::new(
            crate::Connection::server_for(crate::Protocol::Http2, Config::default(), now).unwrap(),
            app,
            now,
        );
        let mut pair = Pair::join(client, server, now);
        pair.drive();
        let head = RequestHead::new("GET", "http", "h", "/");
        let stream = pair
            .client
            .connection_mut()
            .send_request(head, true)
            .unwrap();
        pair.drive();
        let events = &pair.client.application().0;
        assert!(
            events.iter().any(|e| matches!(e,
                Event::StreamReset { stream: s, reason: crate::Reason::INTERNAL_ERROR, remote: true, .. }
                    if *s == stream)),
            "{events:?}"
        );
    }

    #[test]
    fn echoes_a_body_larger_than_the_windows() {
        let mut pair = pair(HandlerApp::new(echo));
        let body = Bytes::from(vec![7u8; 300_000]);
        let conn = pair.client.connection_mut();
        let id = conn
            .send_request(RequestHead::new("POST", "http", "h", "/echo"), false)
            .unwrap();
        conn.send_data(id, body.clone(), true).unwrap();
        pair.drive();
        assert_eq!(body_of(&pair.client.application().0, id), body);
    }

    #[test]
    fn pushes_before_the_response() {
        let mut pair = pair(HandlerApp::new(echo));
        let id = pair
            .client
            .connection_mut()
            .send_request(RequestHead::new("GET", "http", "h", "/push"), true)
            .unwrap();
        pair.drive();
        let events = &pair.client.application().0;
        let promised = events
            .iter()
            .find_map(|e| match e {
                Event::PushPromise {
                    parent, promised, ..
                } if *parent == id => Some(*promised),
                _ => None,
            })
            .unwrap();
        assert_eq!(body_of(events, promised), b"pushed body");
    }

    /// The core's limit (`Config::max_request_body`) holds the bodies a
    /// handler gathers: one that grows past it is answered 413 by the
    /// core, and the handler never runs.
    #[test]
    fn a_body_over_the_limit_is_answered_413_without_the_handler() {
        let now = Instant::now();
        let client = Endpoint::new(
            Connection::client(Config::default(), now).unwrap(),
            Recorder::default(),
            now,
        );
        let limited = Config {
            max_request_body: 10,
            ..Config::default()
        };
        let app = HandlerApp::new(|_: Request| -> Reply { panic!("the handler ran") });
        let server = Endpoint::new(
            crate::Connection::server_for(crate::Protocol::Http2, limited, now).unwrap(),
            app,
            now,
        );
        let mut pair = Pair::join(client, server, now);
        let conn = pair.client.connection_mut();
        let id = conn
            .send_request(RequestHead::new("POST", "http", "h", "/"), false)
            .unwrap();
        conn.send_data(id, Bytes::from_static(b"0123456789abc"), true)
            .unwrap();
        pair.drive();
        let status = pair.client.application().0.iter().find_map(|e| match e {
            Event::Response { head, .. } => Some(head.status),
            _ => None,
        });
        assert_eq!(status, Some(413));
        assert!(pair.server.application().pending.is_empty());
    }

    /// RFC 9112 §6.1-§6.3: the whole body is known, so an HTTP/1.1 answer
    /// carries content-length and is not chunked.
    #[test]
    fn http1_answers_carry_content_length_not_chunked() {
        let now = Instant::now();
        let mut server = Endpoint::new(
            Connection::server_for(crate::Protocol::Http1, Config::default(), now).unwrap(),
            HandlerApp::new(|_| Reply::new(200, "hello")),
            now,
        );
        let mut input = BytesMut::from(&b"GET / HTTP/1.1\r\nhost: h\r\n\r\n"[..]);
        server.handle_input(now, &mut input);
        let mut wire = Vec::new();
        while let Some(chunk) = server.poll_transmit(now) {
            wire.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&wire).to_ascii_lowercase();
        assert!(text.contains("content-length: 5\r\n"), "{text}");
        assert!(!text.contains("chunked"), "{text}");
        assert!(text.ends_with("\r\n\r\nhello"), "{text}");
    }

    /// RFC 9110 §8.6: HTTP/2 answers say their size too, except a 204.
    #[test]
    fn http2_answers_carry_content_length() {
        let mut pair = pair(HandlerApp::new(|req: Request| {
            if req.head.path == "/none" {
                Reply::new(204, Bytes::new())
            } else {
                Reply::new(200, "hello")
            }
        }));
        let conn = pair.client.connection_mut();
        let ok = conn
            .send_request(RequestHead::new("GET", "http", "h", "/"), true)
            .unwrap();
        let none = conn
            .send_request(RequestHead::new("GET", "http", "h", "/none"), true)
            .unwrap();
        pair.drive();
        let length = |id| {
            pair.client.application().0.iter().find_map(|e| match e {
                Event::Response { stream, head, .. } if *stream == id => {
                    Some(head.get(b"content-length").cloned())
                }
                _ => None,
            })
        };
        assert_eq!(length(ok), Some(Some(Bytes::from_static(b"5"))));
        assert_eq!(length(none), Some(None));
    }
}
