//! Frames of types this crate does not implement (RFC 9113 §4.1, §5.5).

use bytes::{BufMut, Bytes, BytesMut};

use super::StreamId;
use super::head::{FrameKind, Head, wire_len};

/// A frame of an unknown type, kept whole so the connection can discard it
/// (§4.1: "Implementations MUST ignore and discard frames of unknown types")
/// or an extension can interpret it (§5.5). The one rule that still applies
/// is that it must not arrive inside a field block, which the connection
/// checks (§6.10).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Unknown {
    /// The frame type, 0x0a or above when decoded.
    pub kind: u8,
    /// Flags, uninterpreted.
    pub flags: u8,
    /// The stream, reserved bit ignored; may be 0.
    pub stream_id: StreamId,
    /// The payload, a slice of the input buffer.
    pub payload: Bytes,
}

impl Unknown {
    pub(crate) fn decode(kind: u8, head: &Head, payload: Bytes) -> Unknown {
        Unknown {
            kind,
            flags: head.flags,
            stream_id: head.stream_id,
            payload,
        }
    }

    /// Writes the whole frame as given, copying the payload. A `kind` below
    /// 0x0a writes a known frame type that will not decode back to `Unknown`.
    pub fn encode(&self, dst: &mut BytesMut) {
        dst.reserve(super::HEADER_LEN + self.payload.len());
        Head {
            len: wire_len(self.payload.len()),
            kind: FrameKind::from(self.kind),
            flags: self.flags,
            stream_id: self.stream_id,
        }
        .encode(dst);
        dst.put_slice(&self.payload);
    }
}
