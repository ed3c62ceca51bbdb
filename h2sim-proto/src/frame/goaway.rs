//! GOAWAY frames (RFC 9113 §6.8).

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{FrameError, FrameErrorKind};
use super::head::{FrameKind, Head, wire_len};
use super::{Reason, StreamId};

/// Last-Stream-ID and Error Code, the fixed part of the payload.
const FIXED_LEN: usize = 8;

/// GOAWAY (type 0x7, RFC 9113 §6.8): the sender is shutting the connection
/// down and names the last stream it may have processed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct GoAway {
    /// The highest stream the sender might have acted on, reserved bit
    /// ignored; 0 if none.
    pub last_stream_id: StreamId,
    /// Why the connection is closing.
    pub reason: Reason,
    /// Opaque diagnostic data, a slice of the input buffer.
    pub debug_data: Bytes,
}

impl GoAway {
    pub(crate) fn decode(head: &Head, payload: Bytes) -> Result<GoAway, FrameError> {
        // §6.8: GOAWAY on a stream is a connection error PROTOCOL_ERROR.
        head.require_stream_zero()?;
        // §4.2: shorter than its two fixed fields is FRAME_SIZE_ERROR, a
        // connection error since the frame is on stream 0.
        let Some(&[l0, l1, l2, l3, c0, c1, c2, c3]) = payload.first_chunk::<FIXED_LEN>() else {
            return Err(FrameError::connection(FrameErrorKind::TooShort {
                kind: FrameKind::GoAway,
                len: head.len,
                needed: wire_len(FIXED_LEN),
                field: "Last-Stream-ID and Error Code",
            }));
        };
        Ok(GoAway {
            last_stream_id: StreamId::new(u32::from_be_bytes([l0, l1, l2, l3])),
            reason: Reason(u32::from_be_bytes([c0, c1, c2, c3])),
            debug_data: payload.slice(FIXED_LEN..),
        })
    }

    /// Writes the whole frame, copying the debug data.
    pub fn encode(&self, dst: &mut BytesMut) {
        let len = FIXED_LEN + self.debug_data.len();
        dst.reserve(super::HEADER_LEN + len);
        Head {
            len: wire_len(len),
            kind: FrameKind::GoAway,
            flags: 0,
            stream_id: StreamId::ZERO,
        }
        .encode(dst);
        dst.put_u32(self.last_stream_id.value());
        dst.put_u32(self.reason.0);
        dst.put_slice(&self.debug_data);
    }
}
