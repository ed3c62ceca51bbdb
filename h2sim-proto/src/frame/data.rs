//! DATA frames (RFC 9113 §6.1).

use bytes::{BufMut, Bytes, BytesMut};

use super::error::FrameError;
use super::head::{FrameKind, Head, flags, wire_len};
use super::{StreamId, padding};

/// DATA (type 0x0, RFC 9113 §6.1): a chunk of a stream's content.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Data {
    /// The stream the content belongs to; never 0.
    pub stream_id: StreamId,
    /// The content, without Pad Length and padding. Decoded payloads are
    /// slices of the input buffer, not copies.
    pub payload: Bytes,
    /// END_STREAM: the sender's last frame on this stream.
    pub end_stream: bool,
    /// Pad Length if the PADDED flag is set.
    pub padding: Option<u8>,
}

impl Data {
    /// How much this frame counts against flow-control windows: "the entire
    /// DATA frame payload is included in flow control, including the Pad
    /// Length and Padding fields if present" (RFC 9113 §6.1, §6.9.1).
    /// Saturates at `u32::MAX` for a payload no frame could carry.
    pub fn flow_controlled_len(&self) -> u32 {
        wire_len(self.payload.len()).saturating_add(wire_len(padding::overhead(self.padding)))
    }

    pub(crate) fn decode(head: &Head, mut payload: Bytes) -> Result<Data, FrameError> {
        // §6.1: DATA on stream 0 is a connection error PROTOCOL_ERROR.
        let stream_id = head.nonzero_stream()?;
        let pad_len = padding::take_pad_len(head, &mut payload)?;
        let payload = padding::strip_padding(head, pad_len, payload)?;
        Ok(Data {
            stream_id,
            payload,
            end_stream: head.has(flags::END_STREAM),
            padding: pad_len,
        })
    }

    /// Writes the whole frame, copying the payload. To send a payload without
    /// copying it, use [`encode_data_head`] and write the payload after it.
    pub fn encode(&self, dst: &mut BytesMut) {
        let len = self.payload.len() + padding::overhead(self.padding);
        dst.reserve(super::HEADER_LEN + len);
        Head {
            len: wire_len(len),
            kind: FrameKind::Data,
            flags: end_stream_flag(self.end_stream) | padding::flag(self.padding),
            stream_id: self.stream_id,
        }
        .encode(dst);
        padding::put_pad_len(self.padding, dst);
        dst.put_slice(&self.payload);
        padding::put_padding(self.padding, dst);
    }
}

/// Writes only the 9-byte header of an unpadded DATA frame whose `len`-byte
/// payload the caller sends next from its own buffer, e.g. with a vectored
/// write, so large bodies are never copied into the output buffer.
///
/// `len` must not exceed the peer's SETTINGS_MAX_FRAME_SIZE (RFC 9113 §4.2).
pub fn encode_data_head(stream_id: StreamId, len: u32, end_stream: bool, dst: &mut BytesMut) {
    Head {
        len,
        kind: FrameKind::Data,
        flags: end_stream_flag(end_stream),
        stream_id,
    }
    .encode(dst);
}

fn end_stream_flag(end_stream: bool) -> u8 {
    if end_stream { flags::END_STREAM } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_control_counts_padding_and_pad_length() {
        let mut data = Data {
            stream_id: StreamId::new(1),
            payload: Bytes::from_static(b"hello"),
            end_stream: false,
            padding: None,
        };
        assert_eq!(data.flow_controlled_len(), 5);
        data.padding = Some(0);
        assert_eq!(data.flow_controlled_len(), 6);
        data.padding = Some(255);
        assert_eq!(data.flow_controlled_len(), 5 + 1 + 255);
    }

    #[test]
    fn data_head_matches_full_encoding() {
        let data = Data {
            stream_id: StreamId::new(3),
            payload: Bytes::from_static(b"body"),
            end_stream: true,
            padding: None,
        };
        let mut full = BytesMut::new();
        data.encode(&mut full);
        let mut head = BytesMut::new();
        encode_data_head(StreamId::new(3), 4, true, &mut head);
        head.put_slice(b"body");
        assert_eq!(full, head);
    }
}
