//! Incremental frame decoding (RFC 9113 §4).

use bytes::{Buf, Bytes, BytesMut};

use super::error::{FrameError, FrameErrorKind};
use super::head::{FrameKind, Head};
use super::{
    Continuation, DEFAULT_MAX_FRAME_SIZE, Data, Frame, GoAway, HEADER_LEN, Headers, Ping, Priority,
    PushPromise, RstStream, Settings, Unknown, WindowUpdate,
};

/// Takes whole frames off the front of a receive buffer.
///
/// The decoder keeps no state between calls besides the size limit: a frame
/// is taken only once all its bytes are in the buffer, so input split at any
/// byte boundary decodes to the same frames. Only rules that a single frame
/// can break are checked here; those that depend on connection state
/// (CONTINUATION sequencing, stream states, flow-control windows) are the
/// connection's.
#[derive(Clone, Debug)]
pub struct FrameDecoder {
    max_frame_size: u32,
}

impl FrameDecoder {
    /// A decoder enforcing `max_frame_size`, the SETTINGS_MAX_FRAME_SIZE we
    /// advertised (RFC 9113 §4.2, §6.5.2).
    pub fn new(max_frame_size: u32) -> Self {
        FrameDecoder { max_frame_size }
    }

    /// Changes the limit, once the peer has acknowledged a new
    /// SETTINGS_MAX_FRAME_SIZE; until then it may still send frames sized for
    /// the previous value (§6.5.3).
    pub fn set_max_frame_size(&mut self, size: u32) {
        self.max_frame_size = size;
    }

    /// The limit in force.
    pub fn max_frame_size(&self) -> u32 {
        self.max_frame_size
    }

    /// Takes one whole frame off the front of `buf`.
    ///
    /// - `Ok(None)`: `buf` does not hold a whole frame yet; nothing was
    ///   consumed.
    /// - `Ok(Some(frame))`: the frame's bytes were consumed. Payloads are
    ///   slices of `buf`'s allocation, not copies.
    /// - `Err` with [`ErrorScope::Stream`](super::ErrorScope::Stream): the bad
    ///   frame's bytes were consumed and decoding may continue.
    /// - `Err` with [`ErrorScope::Connection`](super::ErrorScope::Connection):
    ///   the caller must stop reading; what is left in `buf` is unspecified.
    ///
    /// An oversized frame is reported as soon as its header arrives, without
    /// waiting for (or buffering) its payload.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let Some(head_bytes) = buf.first_chunk::<HEADER_LEN>() else {
            return Ok(None);
        };
        let head = Head::parse(head_bytes);
        // §4.2: a frame over our SETTINGS_MAX_FRAME_SIZE is FRAME_SIZE_ERROR.
        // §4.2 requires a connection error for frames that carry a field
        // block, SETTINGS, and frames on stream 0, and allows one for all
        // others. We always use it: the sender ignored a limit we told it
        // about, so it cannot be trusted to frame the rest correctly, and
        // skipping the payload would mean buffering up to 16 MiB of it.
        if head.len > self.max_frame_size {
            return Err(FrameError::connection(FrameErrorKind::TooLarge {
                kind: head.kind,
                len: head.len,
                max: self.max_frame_size,
            }));
        }
        let payload_len = head.len as usize;
        if buf.len() < HEADER_LEN + payload_len {
            return Ok(None);
        }
        buf.advance(HEADER_LEN);
        let payload = buf.split_to(payload_len).freeze();
        parse(&head, payload).map(Some)
    }
}

impl Default for FrameDecoder {
    /// A decoder for the default SETTINGS_MAX_FRAME_SIZE of 2^14 (§6.5.2).
    fn default() -> Self {
        FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE)
    }
}

/// Interprets a whole frame according to its type (RFC 9113 §6).
fn parse(head: &Head, payload: Bytes) -> Result<Frame, FrameError> {
    Ok(match head.kind {
        FrameKind::Data => Frame::Data(Data::decode(head, payload)?),
        FrameKind::Headers => Frame::Headers(Headers::decode(head, payload)?),
        FrameKind::Priority => Frame::Priority(Priority::decode(head, payload)?),
        FrameKind::RstStream => Frame::RstStream(RstStream::decode(head, payload)?),
        FrameKind::Settings => Frame::Settings(Settings::decode(head, payload)?),
        FrameKind::PushPromise => Frame::PushPromise(PushPromise::decode(head, payload)?),
        FrameKind::Ping => Frame::Ping(Ping::decode(head, payload)?),
        FrameKind::GoAway => Frame::GoAway(GoAway::decode(head, payload)?),
        FrameKind::WindowUpdate => Frame::WindowUpdate(WindowUpdate::decode(head, payload)?),
        FrameKind::Continuation => Frame::Continuation(Continuation::decode(head, payload)?),
        FrameKind::Unknown(kind) => Frame::Unknown(Unknown::decode(kind, head, payload)),
    })
}
