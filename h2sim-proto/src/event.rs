//! What the connection tells the application, in the order it happened.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;

use crate::close::CloseCause;
use crate::error::{ConnectionError, Violation};
use crate::frame::{Frame, Reason, StreamId};
use crate::hpack::HeaderField;
use crate::message::{RequestHead, ResponseHead};

/// One thing that happened on the connection. Events of one stream come in
/// protocol order: head, data…, trailers or end, or a reset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The connection is up: the peer's first SETTINGS arrived (HTTP/2),
    /// or, as HTTP/1.1 has no handshake, its session began (at once for a
    /// client, and for a server told HTTP/1.1 by ALPN, its configuration
    /// or the first bytes). A server that closes before it learned the
    /// protocol, the peer having said nothing, never reports it.
    Connected,
    /// Server: a request head. `end_stream` means it has no body. The head
    /// comes boxed, which keeps every event small to move; give the box
    /// back with [`Connection::recycle_request`](crate::Connection::recycle_request)
    /// and the next request is decoded into it.
    Request {
        stream: StreamId,
        head: Box<RequestHead>,
        end_stream: bool,
    },
    /// Client: a response head, interim (1xx) or final.
    Response {
        stream: StreamId,
        head: ResponseHead,
        end_stream: bool,
    },
    /// Body bytes; with `end_stream` the message is complete.
    Data {
        stream: StreamId,
        data: Bytes,
        end_stream: bool,
    },
    /// Trailers, which always end the message.
    Trailers {
        stream: StreamId,
        fields: Vec<HeaderField>,
    },
    /// Client: the server promised a response to `request` on `promised`,
    /// associated with the client's stream `parent`. Refuse it with
    /// `Connection::reset(promised, Reason::CANCEL)`, or wait for its
    /// `Response` event.
    PushPromise {
        parent: StreamId,
        promised: StreamId,
        request: Box<RequestHead>,
    },
    /// A stream ended abnormally. `remote` tells whether the peer sent the
    /// RST_STREAM; a local reset caused by the peer says which rule it broke.
    ///
    /// `status` is the error status the core answered the peer with in the
    /// application's place, when a request body broke a rule after its
    /// head was delivered: a bad chunk (HTTP/1.1, 400), or a body past
    /// `Config::max_request_body` (413, either protocol). It is `None` when
    /// the application's response had already started on the wire, which
    /// then stops where it is: HTTP/1.1 closes the connection, HTTP/2
    /// resets the stream with `reason` CANCEL. With a status, HTTP/1.1 has
    /// no stream reset and `reason` says PROTOCOL_ERROR; HTTP/2 writes the
    /// 413 and, if the client is still sending, RST_STREAM with `reason`
    /// NO_ERROR after it (RFC 9113 §8.1), and what more comes of the body
    /// is dropped. It is `None` for any other reset. The stream is still
    /// one the application held, so this is a reset and not
    /// [`Event::Refused`]; its commands on it fail from here on.
    StreamReset {
        stream: StreamId,
        reason: Reason,
        remote: bool,
        violation: Option<Violation>,
        status: Option<u16>,
    },
    /// A stream the core turned down because of the peer, of which the
    /// application holds nothing: a request (a promise, for a client)
    /// refused before it was delivered, being malformed (RFC 9113 §8.1.1,
    /// §8.2, §8.3), over a limit (a 431, §10.5.1; a 413 for a declared
    /// length above `Config::max_request_body`; HTTP/1.1's 400, 413 and
    /// 431), past our MAX_CONCURRENT_STREAMS (REFUSED_STREAM, §5.1.2); or a
    /// stream error on a stream that had already closed. A stream the
    /// application holds ends in `StreamReset` instead.
    ///
    /// A variant of its own rather than `StreamReset` for streams the
    /// application never saw: an application that keeps state per stream
    /// then never meets a reset for an id it did not see open, and one that
    /// only counts and names what the peer got wrong (a server testing its
    /// client) finds it here. It comes once per stream, within the core's
    /// limit on stream errors (a flood of them ends the connection), and
    /// costs no allocation.
    Refused {
        stream: StreamId,
        answer: RefusedWith,
        violation: Violation,
    },
    /// A stream we opened that the peer never processed (above the last
    /// stream id of its GOAWAY, or refused): safe to retry elsewhere (§8.7).
    Retryable { stream: StreamId },
    /// The acknowledgement of our PING, with the round-trip time.
    Pong { rtt: Duration },
    /// The peer sent GOAWAY: no new streams; streams up to `last_stream_id` go on.
    GoAway {
        last_stream_id: StreamId,
        reason: Reason,
        debug_data: Bytes,
    },
    /// A frame sent (`outgoing`) or received, with `Config::trace_frames`.
    Frame { outgoing: bool, frame: Frame },
    /// The connection is over: after flushing `poll_transmit` the transport
    /// can be closed. `error` is `None` for a clean end (nothing the
    /// connection carried was lost); `cause` says what ended it.
    Closed {
        error: Option<ConnectionError>,
        cause: CloseCause,
    },
}

/// How the core answered a stream it refused ([`Event::Refused`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedWith {
    /// RST_STREAM with this code (HTTP/2).
    Reset(Reason),
    /// A response of this status, written by the core: HTTP/2's 431 for a
    /// field section above our limit or 413 for a declared body above it
    /// (after which the stream ends, with RST_STREAM(NO_ERROR) if the
    /// client is still sending), HTTP/1.1's 400, 413 or 431 (after which
    /// an HTTP/1.1 connection closes).
    Status(u16),
}

/// The code's name (`PROTOCOL_ERROR`) or the status (`431`).
impl fmt::Display for RefusedWith {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefusedWith::Reset(reason) => write!(f, "{reason}"),
            RefusedWith::Status(status) => write!(f, "{status}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Event;

    /// Every event is moved a few times (into the queue, out of
    /// `poll_event`, into the application's `match`): up to 128 bytes a
    /// move is a few inline stores, above it a `memcpy` call. The request
    /// head (152 bytes) comes boxed to stay under.
    #[test]
    fn an_event_is_small_to_move() {
        let size = std::mem::size_of::<Event>();
        assert!(size <= 128, "Event is {size} bytes");
    }
}
