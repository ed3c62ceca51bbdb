//! SETTINGS frames (RFC 9113 §6.5).

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{FrameError, FrameErrorKind};
use super::head::{FrameKind, Head, flags, wire_len};
use super::{DEFAULT_MAX_FRAME_SIZE, MAX_FRAME_SIZE_LIMIT, MAX_WINDOW_SIZE, StreamId};

/// Size of one setting on the wire: 2-byte identifier, 4-byte value (§6.5.1).
const SETTING_LEN: usize = 6;

/// SETTINGS (type 0x4, RFC 9113 §6.5): the sender's configuration, or with
/// ACK set, the acknowledgement of the peer's.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Settings {
    /// ACK: acknowledges the peer's SETTINGS; the payload is then empty.
    pub ack: bool,
    /// The settings in the order they were sent, since "the values in the
    /// SETTINGS frame MUST be processed in the order they appear" (§6.5.3).
    pub values: Vec<Setting>,
}

/// One setting (RFC 9113 §6.5.2).
///
/// Identifiers this crate does not know are decoded as [`Setting::Unknown`]
/// rather than dropped: "an endpoint that receives a SETTINGS frame with any
/// unknown or unsupported identifier MUST ignore that setting" (§6.5.2) is the
/// connection's job, and keeping them lets a simulator show what the peer sent
/// and lets tests send them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Setting {
    /// SETTINGS_HEADER_TABLE_SIZE (0x1): the HPACK dynamic table size the
    /// sender's decoder allows.
    HeaderTableSize(u32),
    /// SETTINGS_ENABLE_PUSH (0x2): whether the server may push; 0 or 1 on the
    /// wire.
    EnablePush(bool),
    /// SETTINGS_MAX_CONCURRENT_STREAMS (0x3): how many streams the peer may
    /// open.
    MaxConcurrentStreams(u32),
    /// SETTINGS_INITIAL_WINDOW_SIZE (0x4): the initial stream flow-control
    /// window, at most 2^31-1.
    InitialWindowSize(u32),
    /// SETTINGS_MAX_FRAME_SIZE (0x5): the largest payload the sender accepts,
    /// 2^14 to 2^24-1.
    MaxFrameSize(u32),
    /// SETTINGS_MAX_HEADER_LIST_SIZE (0x6): advisory limit on field sections.
    MaxHeaderListSize(u32),
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL (0x8, RFC 8441 §3): a server allows
    /// extended CONNECT (`:protocol`); 0 or 1 on the wire.
    EnableConnectProtocol(bool),
    /// Any other identifier, to be ignored by the receiver (§6.5.2).
    Unknown {
        /// The identifier.
        id: u16,
        /// Its value.
        value: u32,
    },
}

impl Setting {
    /// Identifier of SETTINGS_HEADER_TABLE_SIZE.
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    /// Identifier of SETTINGS_ENABLE_PUSH.
    pub const ENABLE_PUSH: u16 = 0x2;
    /// Identifier of SETTINGS_MAX_CONCURRENT_STREAMS.
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    /// Identifier of SETTINGS_INITIAL_WINDOW_SIZE.
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    /// Identifier of SETTINGS_MAX_FRAME_SIZE.
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    /// Identifier of SETTINGS_MAX_HEADER_LIST_SIZE.
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
    /// Identifier of SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 §9.1).
    pub const ENABLE_CONNECT_PROTOCOL: u16 = 0x8;

    /// The identifier on the wire.
    pub fn id(&self) -> u16 {
        match self {
            Setting::HeaderTableSize(_) => Setting::HEADER_TABLE_SIZE,
            Setting::EnablePush(_) => Setting::ENABLE_PUSH,
            Setting::MaxConcurrentStreams(_) => Setting::MAX_CONCURRENT_STREAMS,
            Setting::InitialWindowSize(_) => Setting::INITIAL_WINDOW_SIZE,
            Setting::MaxFrameSize(_) => Setting::MAX_FRAME_SIZE,
            Setting::MaxHeaderListSize(_) => Setting::MAX_HEADER_LIST_SIZE,
            Setting::EnableConnectProtocol(_) => Setting::ENABLE_CONNECT_PROTOCOL,
            Setting::Unknown { id, .. } => *id,
        }
    }

    /// The value on the wire.
    pub fn value(&self) -> u32 {
        match *self {
            Setting::HeaderTableSize(v)
            | Setting::MaxConcurrentStreams(v)
            | Setting::InitialWindowSize(v)
            | Setting::MaxFrameSize(v)
            | Setting::MaxHeaderListSize(v)
            | Setting::Unknown { value: v, .. } => v,
            Setting::EnablePush(enabled) | Setting::EnableConnectProtocol(enabled) => {
                u32::from(enabled)
            }
        }
    }

    /// Interprets one identifier/value pair, checking the ranges of §6.5.2.
    /// Every violation is a connection error.
    fn decode(id: u16, value: u32) -> Result<Setting, FrameError> {
        let invalid = || FrameError::connection(FrameErrorKind::InvalidSetting { id, value });
        Ok(match id {
            Setting::HEADER_TABLE_SIZE => Setting::HeaderTableSize(value),
            // "Any value other than 0 or 1 MUST be treated as a connection
            // error of type PROTOCOL_ERROR."
            Setting::ENABLE_PUSH => match value {
                0 => Setting::EnablePush(false),
                1 => Setting::EnablePush(true),
                _ => return Err(invalid()),
            },
            Setting::MAX_CONCURRENT_STREAMS => Setting::MaxConcurrentStreams(value),
            // "Values above the maximum flow-control window size of 2^31-1
            // MUST be treated as a connection error of type
            // FLOW_CONTROL_ERROR."
            Setting::INITIAL_WINDOW_SIZE if value > MAX_WINDOW_SIZE => return Err(invalid()),
            Setting::INITIAL_WINDOW_SIZE => Setting::InitialWindowSize(value),
            // "Values outside this range MUST be treated as a connection error
            // of type PROTOCOL_ERROR."
            Setting::MAX_FRAME_SIZE
                if !(DEFAULT_MAX_FRAME_SIZE..=MAX_FRAME_SIZE_LIMIT).contains(&value) =>
            {
                return Err(invalid());
            }
            Setting::MAX_FRAME_SIZE => Setting::MaxFrameSize(value),
            Setting::MAX_HEADER_LIST_SIZE => Setting::MaxHeaderListSize(value),
            // RFC 8441 §3: "The value of the parameter MUST be 0 or 1"; like
            // ENABLE_PUSH, anything else is a PROTOCOL_ERROR.
            Setting::ENABLE_CONNECT_PROTOCOL => match value {
                0 => Setting::EnableConnectProtocol(false),
                1 => Setting::EnableConnectProtocol(true),
                _ => return Err(invalid()),
            },
            id => Setting::Unknown { id, value },
        })
    }
}

impl Settings {
    /// The settings a SETTINGS payload holds, each checked against its
    /// range (§6.5.2): a frame's payload, and the client's HTTP2-Settings
    /// of an h2c upgrade, which is one (RFC 7540 §3.2.1) and is checked
    /// before the 101 goes out.
    pub(crate) fn decode_values(payload: &[u8]) -> Result<Vec<Setting>, FrameError> {
        // §6.5: a length that is not a multiple of 6 is a connection error
        // FRAME_SIZE_ERROR.
        let (entries, remainder) = payload.as_chunks::<SETTING_LEN>();
        if !remainder.is_empty() {
            return Err(FrameError::connection(FrameErrorKind::SettingsLength {
                len: u32::try_from(payload.len()).unwrap_or(u32::MAX),
            }));
        }
        entries
            .iter()
            .map(|&[i0, i1, v0, v1, v2, v3]| {
                Setting::decode(
                    u16::from_be_bytes([i0, i1]),
                    u32::from_be_bytes([v0, v1, v2, v3]),
                )
            })
            .collect()
    }

    pub(crate) fn decode(head: &Head, payload: Bytes) -> Result<Settings, FrameError> {
        // §6.5: SETTINGS on a stream is a connection error PROTOCOL_ERROR.
        head.require_stream_zero()?;
        let ack = head.has(flags::ACK);
        // §6.5: an ACK with a payload is a connection error FRAME_SIZE_ERROR.
        if ack && !payload.is_empty() {
            return Err(FrameError::connection(
                FrameErrorKind::SettingsAckWithPayload { len: head.len },
            ));
        }
        let values = Settings::decode_values(&payload)?;
        Ok(Settings { ack, values })
    }

    /// Writes the whole frame with the values as given, out-of-range ones
    /// included, so tests can send invalid settings; an ACK is normally sent
    /// with no values (§6.5).
    pub fn encode(&self, dst: &mut BytesMut) {
        let len = self.values.len() * SETTING_LEN;
        dst.reserve(super::HEADER_LEN + len);
        Head {
            len: wire_len(len),
            kind: FrameKind::Settings,
            flags: if self.ack { flags::ACK } else { 0 },
            stream_id: StreamId::ZERO,
        }
        .encode(dst);
        for setting in &self.values {
            dst.put_u16(setting.id());
            dst.put_u32(setting.value());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_values_round_trip() {
        let all = [
            Setting::HeaderTableSize(4096),
            Setting::EnablePush(true),
            Setting::EnablePush(false),
            Setting::MaxConcurrentStreams(100),
            Setting::InitialWindowSize(MAX_WINDOW_SIZE),
            Setting::MaxFrameSize(MAX_FRAME_SIZE_LIMIT),
            Setting::MaxHeaderListSize(u32::MAX),
            Setting::Unknown { id: 0x9, value: 1 },
        ];
        for setting in all {
            assert_eq!(Setting::decode(setting.id(), setting.value()), Ok(setting));
        }
    }
}
