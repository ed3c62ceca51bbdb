//! WINDOW_UPDATE frames (RFC 9113 §6.9).

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{FrameError, FrameErrorKind};
use super::head::{FrameKind, Head};
use super::{MAX_WINDOW_SIZE, StreamId};

/// WINDOW_UPDATE (type 0x8, RFC 9113 §6.9): grants the peer more
/// flow-control credit on a stream, or on the connection when on stream 0.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct WindowUpdate {
    /// The stream whose window grows; 0 for the connection window.
    pub stream_id: StreamId,
    /// Credit granted, 1 to 2^31-1 once decoded.
    pub increment: u32,
}

impl WindowUpdate {
    pub(crate) fn decode(head: &Head, payload: Bytes) -> Result<WindowUpdate, FrameError> {
        // §6.9: a length other than 4 is a connection error FRAME_SIZE_ERROR.
        let Ok(bytes) = <[u8; 4]>::try_from(payload.as_ref()) else {
            return Err(FrameError::connection(FrameErrorKind::BadLength {
                kind: FrameKind::WindowUpdate,
                len: head.len,
                expected: 4,
            }));
        };
        // The top bit is reserved and ignored (§6.9).
        let increment = u32::from_be_bytes(bytes) & MAX_WINDOW_SIZE;
        if increment == 0 {
            // §6.9: increment 0 is a PROTOCOL_ERROR, a stream error on a
            // stream and a connection error on the connection window.
            let kind = FrameErrorKind::ZeroWindowIncrement {
                stream_id: head.stream_id,
            };
            return Err(if head.stream_id.is_zero() {
                FrameError::connection(kind)
            } else {
                FrameError::stream(head.stream_id, kind)
            });
        }
        Ok(WindowUpdate {
            stream_id: head.stream_id,
            increment,
        })
    }

    /// Writes the whole frame. Only the low 31 bits of `increment` are sent,
    /// the top one being reserved (§6.9); 0 is written as is so tests can
    /// send invalid frames.
    pub fn encode(&self, dst: &mut BytesMut) {
        Head {
            len: 4,
            kind: FrameKind::WindowUpdate,
            flags: 0,
            stream_id: self.stream_id,
        }
        .encode(dst);
        dst.put_u32(self.increment & MAX_WINDOW_SIZE);
    }
}
