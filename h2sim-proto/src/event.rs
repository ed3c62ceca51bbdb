//! What the connection tells the application, in the order it happened.

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
    /// The peer's first SETTINGS arrived: the connection is up.
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
    StreamReset {
        stream: StreamId,
        reason: Reason,
        remote: bool,
        violation: Option<Violation>,
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
