//! The 9-byte frame header, frame types and flags (RFC 9113 §4.1).

use std::fmt;

use bytes::{BufMut, BytesMut};

use super::error::{FrameError, FrameErrorKind};
use super::{HEADER_LEN, MAX_FRAME_SIZE_LIMIT, StreamId};

/// Flag bits (RFC 9113 §4.1, §6). A bit means something only for the frame
/// types that define it; undefined bits "MUST be ignored" on receipt (§4.1).
pub mod flags {
    /// DATA, HEADERS: the last frame the sender sends on this stream
    /// (RFC 9113 §6.1, §6.2).
    pub const END_STREAM: u8 = 0x01;
    /// SETTINGS, PING: this frame acknowledges the peer's (RFC 9113 §6.5,
    /// §6.7).
    pub const ACK: u8 = 0x01;
    /// HEADERS, PUSH_PROMISE, CONTINUATION: the field block ends in this frame
    /// (RFC 9113 §6.2, §6.6, §6.10).
    pub const END_HEADERS: u8 = 0x04;
    /// DATA, HEADERS, PUSH_PROMISE: the payload starts with Pad Length and
    /// ends with padding (RFC 9113 §6.1).
    pub const PADDED: u8 = 0x08;
    /// HEADERS: Exclusive, Stream Dependency and Weight follow (RFC 9113
    /// §6.2).
    pub const PRIORITY: u8 = 0x20;
}

/// A frame type (RFC 9113 §6, §11.2).
///
/// Types this crate does not implement are kept as [`FrameKind::Unknown`]:
/// "Implementations MUST ignore and discard frames of unknown types" (§4.1),
/// which is the connection's decision, not a decoding error.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FrameKind {
    /// DATA, type 0x00 (§6.1).
    Data,
    /// HEADERS, type 0x01 (§6.2).
    Headers,
    /// PRIORITY, type 0x02 (§6.3).
    Priority,
    /// RST_STREAM, type 0x03 (§6.4).
    RstStream,
    /// SETTINGS, type 0x04 (§6.5).
    Settings,
    /// PUSH_PROMISE, type 0x05 (§6.6).
    PushPromise,
    /// PING, type 0x06 (§6.7).
    Ping,
    /// GOAWAY, type 0x07 (§6.8).
    GoAway,
    /// WINDOW_UPDATE, type 0x08 (§6.9).
    WindowUpdate,
    /// CONTINUATION, type 0x09 (§6.10).
    Continuation,
    /// Any other type, by its number (§4.1, §5.5).
    Unknown(u8),
}

impl FrameKind {
    /// The RFC 9113 section that defines this frame type, for error messages.
    pub fn section(self) -> &'static str {
        match self {
            FrameKind::Data => "6.1",
            FrameKind::Headers => "6.2",
            FrameKind::Priority => "6.3",
            FrameKind::RstStream => "6.4",
            FrameKind::Settings => "6.5",
            FrameKind::PushPromise => "6.6",
            FrameKind::Ping => "6.7",
            FrameKind::GoAway => "6.8",
            FrameKind::WindowUpdate => "6.9",
            FrameKind::Continuation => "6.10",
            FrameKind::Unknown(_) => "5.5",
        }
    }
}

impl From<u8> for FrameKind {
    fn from(kind: u8) -> FrameKind {
        match kind {
            0x0 => FrameKind::Data,
            0x1 => FrameKind::Headers,
            0x2 => FrameKind::Priority,
            0x3 => FrameKind::RstStream,
            0x4 => FrameKind::Settings,
            0x5 => FrameKind::PushPromise,
            0x6 => FrameKind::Ping,
            0x7 => FrameKind::GoAway,
            0x8 => FrameKind::WindowUpdate,
            0x9 => FrameKind::Continuation,
            other => FrameKind::Unknown(other),
        }
    }
}

impl From<FrameKind> for u8 {
    fn from(kind: FrameKind) -> u8 {
        match kind {
            FrameKind::Data => 0x0,
            FrameKind::Headers => 0x1,
            FrameKind::Priority => 0x2,
            FrameKind::RstStream => 0x3,
            FrameKind::Settings => 0x4,
            FrameKind::PushPromise => 0x5,
            FrameKind::Ping => 0x6,
            FrameKind::GoAway => 0x7,
            FrameKind::WindowUpdate => 0x8,
            FrameKind::Continuation => 0x9,
            FrameKind::Unknown(other) => other,
        }
    }
}

impl fmt::Display for FrameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            FrameKind::Data => "DATA",
            FrameKind::Headers => "HEADERS",
            FrameKind::Priority => "PRIORITY",
            FrameKind::RstStream => "RST_STREAM",
            FrameKind::Settings => "SETTINGS",
            FrameKind::PushPromise => "PUSH_PROMISE",
            FrameKind::Ping => "PING",
            FrameKind::GoAway => "GOAWAY",
            FrameKind::WindowUpdate => "WINDOW_UPDATE",
            FrameKind::Continuation => "CONTINUATION",
            FrameKind::Unknown(kind) => return write!(f, "unknown type {kind:#04x}"),
        };
        f.write_str(name)
    }
}

/// The fixed 9-byte header every frame starts with (RFC 9113 §4.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Head {
    /// Payload length, a 24-bit field: the header itself is not counted.
    pub len: u32,
    /// Frame type.
    pub kind: FrameKind,
    /// Flag bits, see [`flags`].
    pub flags: u8,
    /// Stream the frame belongs to, reserved bit already ignored.
    pub stream_id: StreamId,
}

impl Head {
    /// Reads a header. Any 9 bytes are a syntactically valid header; what the
    /// values mean is checked per frame type.
    pub fn parse(bytes: &[u8; HEADER_LEN]) -> Head {
        let [l0, l1, l2, kind, flags, s0, s1, s2, s3] = *bytes;
        Head {
            len: u32::from_be_bytes([0, l0, l1, l2]),
            kind: FrameKind::from(kind),
            flags,
            stream_id: StreamId::new(u32::from_be_bytes([s0, s1, s2, s3])),
        }
    }

    /// Writes the header. `len` must fit the 24-bit field
    /// ([`MAX_FRAME_SIZE_LIMIT`]); callers keep payloads within the peer's
    /// SETTINGS_MAX_FRAME_SIZE anyway (§4.2).
    pub fn encode(&self, dst: &mut BytesMut) {
        debug_assert!(
            self.len <= MAX_FRAME_SIZE_LIMIT,
            "frame length overflows 24 bits"
        );
        let [_, l0, l1, l2] = self.len.to_be_bytes();
        dst.put_slice(&[l0, l1, l2, u8::from(self.kind), self.flags]);
        dst.put_u32(self.stream_id.value());
    }

    /// Whether `flag` is set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The stream of a frame type that must be sent on a stream: stream 0 is a
    /// connection error of type PROTOCOL_ERROR (RFC 9113 §6.1–§6.4, §6.6,
    /// §6.10).
    pub(crate) fn nonzero_stream(&self) -> Result<StreamId, FrameError> {
        if self.stream_id.is_zero() {
            return Err(FrameError::connection(FrameErrorKind::StreamIdZero {
                kind: self.kind,
            }));
        }
        Ok(self.stream_id)
    }

    /// Checks that a connection-level frame is on stream 0: anything else is a
    /// connection error of type PROTOCOL_ERROR (RFC 9113 §6.5, §6.7, §6.8).
    pub(crate) fn require_stream_zero(&self) -> Result<(), FrameError> {
        if !self.stream_id.is_zero() {
            return Err(FrameError::connection(FrameErrorKind::StreamIdNotZero {
                kind: self.kind,
                stream_id: self.stream_id,
            }));
        }
        Ok(())
    }
}

/// Converts a payload length for [`Head::len`]. Lengths that do not fit the
/// wire field are a caller bug caught by the assertion in [`Head::encode`].
pub(crate) fn wire_len(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let head = Head {
            len: 0x12_3456,
            kind: FrameKind::Unknown(0xfa),
            flags: 0xff,
            stream_id: StreamId::new(0x7fff_fffe),
        };
        let mut buf = BytesMut::new();
        head.encode(&mut buf);
        assert_eq!(
            &buf[..],
            &[0x12, 0x34, 0x56, 0xfa, 0xff, 0x7f, 0xff, 0xff, 0xfe]
        );
        let bytes: [u8; HEADER_LEN] = *buf.first_chunk().expect("9 bytes written");
        assert_eq!(Head::parse(&bytes), head);
    }

    #[test]
    fn reserved_stream_bit_is_ignored() {
        let head = Head::parse(&[0, 0, 0, 0, 0, 0x80, 0, 0, 3]);
        assert_eq!(head.stream_id, StreamId::new(3));
    }

    #[test]
    fn kinds_convert_both_ways() {
        for raw in 0..=u8::MAX {
            assert_eq!(u8::from(FrameKind::from(raw)), raw);
        }
        assert_eq!(FrameKind::from(9), FrameKind::Continuation);
        assert_eq!(FrameKind::from(10), FrameKind::Unknown(10));
        assert_eq!(FrameKind::Unknown(10).to_string(), "unknown type 0x0a");
        assert_eq!(FrameKind::WindowUpdate.to_string(), "WINDOW_UPDATE");
    }
}
