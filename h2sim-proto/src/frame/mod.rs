//! HTTP/2 frames (RFC 9113 §4, §6): decoding from partial input and encoding.
//!
//! After the connection preface ([`PREFACE`], §3.4) everything on an HTTP/2
//! connection is a frame: a 9-byte header ([`Head`]) followed by a payload
//! whose layout depends on the frame type. This module turns bytes into
//! [`Frame`]s and back and enforces the rules a single frame can break (sizes,
//! stream 0 or not, padding, setting ranges), each reported as a
//! [`FrameError`] naming the rule, the error code and whether the connection
//! or one stream is affected (§5.4). Rules that need connection state (stream
//! states, CONTINUATION sequencing, flow-control windows) belong to the
//! connection.
//!
//! Decoding never copies payloads: [`FrameDecoder::decode`] hands out slices
//! of the receive buffer. Encoding copies, except for DATA, whose header
//! [`encode_data_head`] writes alone so the body can be sent from its own
//! buffer.
//!
//! ```
//! use bytes::BytesMut;
//! use h2sim_proto::frame::{Frame, FrameDecoder, Ping, DEFAULT_MAX_FRAME_SIZE};
//!
//! let mut wire = BytesMut::new();
//! Frame::from(Ping { ack: false, payload: *b"12345678" }).encode(&mut wire);
//!
//! let mut decoder = FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE);
//! let mut received = wire.split_to(5); // a partial read
//! assert_eq!(decoder.decode(&mut received), Ok(None));
//! received.extend_from_slice(&wire);
//! let frame = decoder.decode(&mut received).unwrap();
//! assert_eq!(frame, Some(Frame::Ping(Ping { ack: false, payload: *b"12345678" })));
//! ```

mod continuation;
mod data;
mod decoder;
mod error;
mod field_block;
mod goaway;
mod head;
mod headers;
mod padding;
mod ping;
mod priority;
mod push_promise;
mod reason;
mod rst_stream;
mod settings;
mod stream_id;
mod unknown;
mod window_update;

use bytes::BytesMut;

pub use continuation::Continuation;
pub use data::{Data, encode_data_head};
pub use decoder::FrameDecoder;
pub use error::{ErrorScope, FrameError, FrameErrorKind};
pub use goaway::GoAway;
pub use head::{FrameKind, Head, flags};
pub use headers::{Headers, encode_headers};
pub use ping::Ping;
pub use priority::{Priority, PrioritySpec};
pub use push_promise::{PushPromise, encode_push_promise};
pub use reason::Reason;
pub use rst_stream::RstStream;
pub use settings::{Setting, Settings};
pub use stream_id::StreamId;
pub use unknown::Unknown;
pub use window_update::WindowUpdate;

/// The client connection preface, sent before any frame (RFC 9113 §3.4).
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Size of the frame header (RFC 9113 §4.1).
pub const HEADER_LEN: usize = 9;

/// SETTINGS_MAX_FRAME_SIZE until the peer says otherwise, and the smallest
/// value it may say, 2^14 (RFC 9113 §6.5.2).
pub const DEFAULT_MAX_FRAME_SIZE: u32 = 16_384;

/// The largest SETTINGS_MAX_FRAME_SIZE, 2^24-1, bounded by the 24-bit length
/// field (RFC 9113 §4.1, §6.5.2).
pub const MAX_FRAME_SIZE_LIMIT: u32 = (1 << 24) - 1;

/// SETTINGS_INITIAL_WINDOW_SIZE until the peer says otherwise, and the initial
/// connection window, 2^16-1 (RFC 9113 §6.5.2, §6.9.2).
pub const DEFAULT_INITIAL_WINDOW_SIZE: u32 = 65_535;

/// The largest flow-control window, 2^31-1 (RFC 9113 §6.9.1).
pub const MAX_WINDOW_SIZE: u32 = (1 << 31) - 1;

/// A decoded frame, one variant per frame type (RFC 9113 §6).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Frame {
    /// DATA (§6.1).
    Data(Data),
    /// HEADERS (§6.2).
    Headers(Headers),
    /// PRIORITY (§6.3).
    Priority(Priority),
    /// RST_STREAM (§6.4).
    RstStream(RstStream),
    /// SETTINGS (§6.5).
    Settings(Settings),
    /// PUSH_PROMISE (§6.6).
    PushPromise(PushPromise),
    /// PING (§6.7).
    Ping(Ping),
    /// GOAWAY (§6.8).
    GoAway(GoAway),
    /// WINDOW_UPDATE (§6.9).
    WindowUpdate(WindowUpdate),
    /// CONTINUATION (§6.10).
    Continuation(Continuation),
    /// A type this crate does not implement (§4.1, §5.5).
    Unknown(Unknown),
}

impl Frame {
    /// The stream the frame is on; [`StreamId::ZERO`] for SETTINGS, PING and
    /// GOAWAY, which concern the whole connection.
    pub fn stream_id(&self) -> StreamId {
        match self {
            Frame::Data(f) => f.stream_id,
            Frame::Headers(f) => f.stream_id,
            Frame::Priority(f) => f.stream_id,
            Frame::RstStream(f) => f.stream_id,
            Frame::PushPromise(f) => f.stream_id,
            Frame::WindowUpdate(f) => f.stream_id,
            Frame::Continuation(f) => f.stream_id,
            Frame::Unknown(f) => f.stream_id,
            Frame::Settings(_) | Frame::Ping(_) | Frame::GoAway(_) => StreamId::ZERO,
        }
    }

    /// The frame type.
    pub fn kind(&self) -> FrameKind {
        match self {
            Frame::Data(_) => FrameKind::Data,
            Frame::Headers(_) => FrameKind::Headers,
            Frame::Priority(_) => FrameKind::Priority,
            Frame::RstStream(_) => FrameKind::RstStream,
            Frame::Settings(_) => FrameKind::Settings,
            Frame::PushPromise(_) => FrameKind::PushPromise,
            Frame::Ping(_) => FrameKind::Ping,
            Frame::GoAway(_) => FrameKind::GoAway,
            Frame::WindowUpdate(_) => FrameKind::WindowUpdate,
            Frame::Continuation(_) => FrameKind::Continuation,
            Frame::Unknown(f) => FrameKind::from(f.kind),
        }
    }

    /// Appends the whole frame to `dst`, copying its payload. The payload must
    /// fit the peer's SETTINGS_MAX_FRAME_SIZE (§4.2); nothing here splits it.
    pub fn encode(&self, dst: &mut BytesMut) {
        match self {
            Frame::Data(f) => f.encode(dst),
            Frame::Headers(f) => f.encode(dst),
            Frame::Priority(f) => f.encode(dst),
            Frame::RstStream(f) => f.encode(dst),
            Frame::Settings(f) => f.encode(dst),
            Frame::PushPromise(f) => f.encode(dst),
            Frame::Ping(f) => f.encode(dst),
            Frame::GoAway(f) => f.encode(dst),
            Frame::WindowUpdate(f) => f.encode(dst),
            Frame::Continuation(f) => f.encode(dst),
            Frame::Unknown(f) => f.encode(dst),
        }
    }
}

/// `From<T> for Frame` for each frame struct, so `frame.into()` works.
macro_rules! frame_from {
    ($($variant:ident),* $(,)?) => {
        $(
            impl From<$variant> for Frame {
                fn from(frame: $variant) -> Frame {
                    Frame::$variant(frame)
                }
            }
        )*
    };
}

frame_from!(
    Data,
    Headers,
    Priority,
    RstStream,
    Settings,
    PushPromise,
    Ping,
    GoAway,
    WindowUpdate,
    Continuation,
    Unknown,
);
