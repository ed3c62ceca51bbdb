//! HEADERS frames (RFC 9113 §6.2).

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::error::{FrameError, FrameErrorKind};
use super::field_block::{self, FirstFrame, end_headers_flag};
use super::head::{FrameKind, Head, flags, wire_len};
use super::priority::PrioritySpec;
use super::{StreamId, padding};

/// HEADERS (type 0x1, RFC 9113 §6.2): opens a stream and carries the first
/// fragment of a field block.
///
/// The fragment is HPACK-encoded and may continue in CONTINUATION frames; the
/// connection reassembles and decodes it (§4.3).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Headers {
    /// The stream; never 0.
    pub stream_id: StreamId,
    /// This frame's part of the field block, without padding and priority.
    pub fragment: Bytes,
    /// END_STREAM: no DATA follows on this stream (§6.2).
    pub end_stream: bool,
    /// END_HEADERS: the field block ends here, no CONTINUATION follows.
    pub end_headers: bool,
    /// Priority fields if the PRIORITY flag is set (§5.3.2: parsed, not
    /// acted on).
    pub priority: Option<PrioritySpec>,
    /// Pad Length if the PADDED flag is set.
    pub padding: Option<u8>,
}

impl Headers {
    pub(crate) fn decode(head: &Head, mut payload: Bytes) -> Result<Headers, FrameError> {
        // §6.2: HEADERS on stream 0 is a connection error PROTOCOL_ERROR.
        let stream_id = head.nonzero_stream()?;
        let pad_len = padding::take_pad_len(head, &mut payload)?;
        let priority = if head.has(flags::PRIORITY) {
            // §4.2: too short for the priority fields is FRAME_SIZE_ERROR,
            // and a connection error because HEADERS carries a field block.
            let Some(&fields) = payload.first_chunk::<{ PrioritySpec::LEN }>() else {
                return Err(FrameError::connection(FrameErrorKind::TooShort {
                    kind: FrameKind::Headers,
                    len: head.len,
                    needed: wire_len(usize::from(pad_len.is_some()) + PrioritySpec::LEN),
                    field: "Exclusive, Stream Dependency and Weight",
                }));
            };
            payload.advance(PrioritySpec::LEN);
            Some(PrioritySpec::parse(fields))
        } else {
            None
        };
        let fragment = padding::strip_padding(head, pad_len, payload)?;
        let headers = Headers {
            stream_id,
            fragment,
            end_stream: head.has(flags::END_STREAM),
            end_headers: head.has(flags::END_HEADERS),
            priority,
            padding: pad_len,
        };
        // §5.3.1: a stream depending on itself is a stream error
        // PROTOCOL_ERROR. The frame travels with the error so the connection
        // can still feed its fragment to HPACK.
        if let Some(spec) = &headers.priority
            && spec.depends_on(stream_id)
        {
            return Err(FrameError::stream(
                stream_id,
                FrameErrorKind::SelfDependency {
                    stream_id,
                    headers: Some(Box::new(headers)),
                },
            ));
        }
        Ok(headers)
    }

    /// Writes this single frame, copying the fragment, with padding and
    /// priority as set. Use [`encode_headers`] to split a whole field block.
    pub fn encode(&self, dst: &mut BytesMut) {
        let priority_len = if self.priority.is_some() {
            PrioritySpec::LEN
        } else {
            0
        };
        let len = padding::overhead(self.padding) + priority_len + self.fragment.len();
        let mut frame_flags = end_headers_flag(self.end_headers) | padding::flag(self.padding);
        if self.end_stream {
            frame_flags |= flags::END_STREAM;
        }
        if self.priority.is_some() {
            frame_flags |= flags::PRIORITY;
        }
        dst.reserve(super::HEADER_LEN + len);
        Head {
            len: wire_len(len),
            kind: FrameKind::Headers,
            flags: frame_flags,
            stream_id: self.stream_id,
        }
        .encode(dst);
        padding::put_pad_len(self.padding, dst);
        if let Some(spec) = &self.priority {
            spec.encode(dst);
        }
        dst.put_slice(&self.fragment);
        padding::put_padding(self.padding, dst);
    }
}

/// Writes the field block `block` as a HEADERS frame followed by as many
/// CONTINUATION frames as needed so that no payload exceeds `max_frame_size`
/// (the peer's SETTINGS_MAX_FRAME_SIZE, RFC 9113 §4.2, §4.3).
///
/// END_STREAM goes on the HEADERS frame (§6.2), END_HEADERS on the last frame
/// only. No padding or priority is sent. An empty block is one HEADERS frame
/// with END_HEADERS.
pub fn encode_headers(
    stream_id: StreamId,
    block: &[u8],
    end_stream: bool,
    max_frame_size: u32,
    dst: &mut BytesMut,
) {
    let first = FirstFrame {
        kind: FrameKind::Headers,
        stream_id,
        flags: if end_stream { flags::END_STREAM } else { 0 },
        fields: &[],
    };
    field_block::encode(&first, block, max_frame_size, dst);
}
