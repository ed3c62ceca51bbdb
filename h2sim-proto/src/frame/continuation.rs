//! CONTINUATION frames (RFC 9113 §6.10).

use bytes::{BufMut, Bytes, BytesMut};

use super::StreamId;
use super::error::FrameError;
use super::field_block::end_headers_flag;
use super::head::{FrameKind, Head, flags, wire_len};

/// CONTINUATION (type 0x9, RFC 9113 §6.10): the next fragment of a field block
/// begun by HEADERS or PUSH_PROMISE.
///
/// Whether a CONTINUATION is expected here is connection state (§6.10) and is
/// checked by the connection, not the decoder.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Continuation {
    /// The stream; never 0.
    pub stream_id: StreamId,
    /// This frame's part of the field block.
    pub fragment: Bytes,
    /// END_HEADERS: the field block ends here.
    pub end_headers: bool,
}

impl Continuation {
    pub(crate) fn decode(head: &Head, payload: Bytes) -> Result<Continuation, FrameError> {
        // §6.10: CONTINUATION on stream 0 is a connection error PROTOCOL_ERROR.
        let stream_id = head.nonzero_stream()?;
        Ok(Continuation {
            stream_id,
            fragment: payload,
            end_headers: head.has(flags::END_HEADERS),
        })
    }

    /// Writes the whole frame, copying the fragment.
    pub fn encode(&self, dst: &mut BytesMut) {
        dst.reserve(super::HEADER_LEN + self.fragment.len());
        Head {
            len: wire_len(self.fragment.len()),
            kind: FrameKind::Continuation,
            flags: end_headers_flag(self.end_headers),
            stream_id: self.stream_id,
        }
        .encode(dst);
        dst.put_slice(&self.fragment);
    }
}
