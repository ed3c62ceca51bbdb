//! PING frames (RFC 9113 §6.7).

use bytes::{BufMut, Bytes, BytesMut};

use super::StreamId;
use super::error::{FrameError, FrameErrorKind};
use super::head::{FrameKind, Head, flags};

/// PING (type 0x6, RFC 9113 §6.7): measures round-trip time and checks that
/// the connection is alive. The receiver echoes the payload with ACK set.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Ping {
    /// ACK: this is the response to a PING.
    pub ack: bool,
    /// Opaque data, echoed back unchanged.
    pub payload: [u8; 8],
}

impl Ping {
    pub(crate) fn decode(head: &Head, payload: Bytes) -> Result<Ping, FrameError> {
        // §6.7: PING on a stream is a connection error PROTOCOL_ERROR.
        head.require_stream_zero()?;
        // §6.7: a length other than 8, ACK or not, is a connection error
        // FRAME_SIZE_ERROR.
        let Ok(data) = <[u8; 8]>::try_from(payload.as_ref()) else {
            return Err(FrameError::connection(FrameErrorKind::BadLength {
                kind: FrameKind::Ping,
                len: head.len,
                expected: 8,
            }));
        };
        Ok(Ping {
            ack: head.has(flags::ACK),
            payload: data,
        })
    }

    /// Writes the whole frame.
    pub fn encode(&self, dst: &mut BytesMut) {
        Head {
            len: 8,
            kind: FrameKind::Ping,
            flags: if self.ack { flags::ACK } else { 0 },
            stream_id: StreamId::ZERO,
        }
        .encode(dst);
        dst.put_slice(&self.payload);
    }
}
