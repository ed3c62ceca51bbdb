//! PUSH_PROMISE frames (RFC 9113 §6.6).

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::error::{FrameError, FrameErrorKind};
use super::field_block::{self, FirstFrame, end_headers_flag};
use super::head::{FrameKind, Head, flags, wire_len};
use super::{StreamId, padding};

/// Size of the Promised Stream ID field.
const PROMISED_ID_LEN: usize = 4;

/// PUSH_PROMISE (type 0x5, RFC 9113 §6.6): the server announces a stream it
/// will push, with the first fragment of the request's field block.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PushPromise {
    /// The stream the promise is made on; never 0.
    pub stream_id: StreamId,
    /// The stream being reserved, reserved bit ignored; never 0.
    pub promised_id: StreamId,
    /// This frame's part of the field block, without padding.
    pub fragment: Bytes,
    /// END_HEADERS: the field block ends here.
    pub end_headers: bool,
    /// Pad Length if the PADDED flag is set.
    pub padding: Option<u8>,
}

impl PushPromise {
    pub(crate) fn decode(head: &Head, mut payload: Bytes) -> Result<PushPromise, FrameError> {
        // §6.6: PUSH_PROMISE on stream 0 is a connection error PROTOCOL_ERROR.
        let stream_id = head.nonzero_stream()?;
        let pad_len = padding::take_pad_len(head, &mut payload)?;
        // §4.2: too short for the promised id is FRAME_SIZE_ERROR, and a
        // connection error because PUSH_PROMISE carries a field block.
        let Some(&id) = payload.first_chunk::<PROMISED_ID_LEN>() else {
            return Err(FrameError::connection(FrameErrorKind::TooShort {
                kind: FrameKind::PushPromise,
                len: head.len,
                needed: wire_len(usize::from(pad_len.is_some()) + PROMISED_ID_LEN),
                field: "Promised Stream ID",
            }));
        };
        payload.advance(PROMISED_ID_LEN);
        let promised_id = StreamId::new(u32::from_be_bytes(id));
        // Stream 0 can never be reserved (§5.1.1), and a promise the connection
        // cannot track leaves the field block unattributable: connection error
        // PROTOCOL_ERROR.
        if promised_id.is_zero() {
            return Err(FrameError::connection(FrameErrorKind::PromisedIdZero));
        }
        let fragment = padding::strip_padding(head, pad_len, payload)?;
        Ok(PushPromise {
            stream_id,
            promised_id,
            fragment,
            end_headers: head.has(flags::END_HEADERS),
            padding: pad_len,
        })
    }

    /// Writes this single frame, copying the fragment. Use
    /// [`encode_push_promise`] to split a whole field block.
    pub fn encode(&self, dst: &mut BytesMut) {
        let len = padding::overhead(self.padding) + PROMISED_ID_LEN + self.fragment.len();
        dst.reserve(super::HEADER_LEN + len);
        Head {
            len: wire_len(len),
            kind: FrameKind::PushPromise,
            flags: end_headers_flag(self.end_headers) | padding::flag(self.padding),
            stream_id: self.stream_id,
        }
        .encode(dst);
        padding::put_pad_len(self.padding, dst);
        dst.put_u32(self.promised_id.value());
        dst.put_slice(&self.fragment);
        padding::put_padding(self.padding, dst);
    }
}

/// Writes the field block `block` as a PUSH_PROMISE frame on `stream_id`
/// reserving `promised_id`, followed by as many CONTINUATION frames as needed
/// so that no payload exceeds `max_frame_size` (RFC 9113 §4.2, §4.3, §6.6).
/// The 4-byte promised id counts against the first frame's size; it always
/// goes in the first frame, so a `max_frame_size` below 5 (never advertised by
/// a valid peer, §6.5.2) is exceeded by that frame.
pub fn encode_push_promise(
    stream_id: StreamId,
    promised_id: StreamId,
    block: &[u8],
    max_frame_size: u32,
    dst: &mut BytesMut,
) {
    let fields = promised_id.value().to_be_bytes();
    let first = FirstFrame {
        kind: FrameKind::PushPromise,
        stream_id,
        flags: 0,
        fields: &fields,
    };
    field_block::encode(&first, block, max_frame_size, dst);
}
