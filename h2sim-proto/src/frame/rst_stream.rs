//! RST_STREAM frames (RFC 9113 §6.4).

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{FrameError, FrameErrorKind};
use super::head::{FrameKind, Head};
use super::{Reason, StreamId};

/// RST_STREAM (type 0x3, RFC 9113 §6.4): terminates one stream immediately.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RstStream {
    /// The stream being reset; never 0.
    pub stream_id: StreamId,
    /// Why.
    pub reason: Reason,
}

impl RstStream {
    pub(crate) fn decode(head: &Head, payload: Bytes) -> Result<RstStream, FrameError> {
        // §6.4: RST_STREAM on stream 0 is a connection error PROTOCOL_ERROR.
        let stream_id = head.nonzero_stream()?;
        // §6.4: a length other than 4 is a connection error FRAME_SIZE_ERROR.
        let Ok(code) = <[u8; 4]>::try_from(payload.as_ref()) else {
            return Err(FrameError::connection(FrameErrorKind::BadLength {
                kind: FrameKind::RstStream,
                len: head.len,
                expected: 4,
            }));
        };
        Ok(RstStream {
            stream_id,
            reason: Reason(u32::from_be_bytes(code)),
        })
    }

    /// Writes the whole frame.
    pub fn encode(&self, dst: &mut BytesMut) {
        Head {
            len: 4,
            kind: FrameKind::RstStream,
            flags: 0,
            stream_id: self.stream_id,
        }
        .encode(dst);
        dst.put_u32(self.reason.0);
    }
}
