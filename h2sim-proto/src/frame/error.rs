//! Frame-layer errors: which rule a peer broke, and what that costs (RFC 9113
//! §5.4).

use std::{error, fmt};

use super::{FrameKind, Headers, Reason, Setting, StreamId};

/// How far an error reaches (RFC 9113 §5.4).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ErrorScope {
    /// The whole connection is unusable: send GOAWAY and stop reading
    /// (§5.4.1).
    Connection,
    /// Only this stream is affected: send RST_STREAM and keep the connection
    /// (§5.4.2).
    Stream(StreamId),
}

impl fmt::Display for ErrorScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorScope::Connection => f.write_str("connection error"),
            ErrorScope::Stream(id) => write!(f, "stream error on stream {id}"),
        }
    }
}

/// A frame that breaks a rule of RFC 9113 §4–§6.
///
/// `reason` is always `kind.reason()`; it is stored so that callers can read
/// the code to send without knowing the rules.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FrameError {
    /// Whether the connection or only one stream must be reset.
    pub scope: ErrorScope,
    /// The error code to put in GOAWAY or RST_STREAM.
    pub reason: Reason,
    /// The rule that was broken, with the offending values.
    pub kind: FrameErrorKind,
}

impl FrameError {
    /// A connection error (RFC 9113 §5.4.1) for breaking `kind`.
    pub fn connection(kind: FrameErrorKind) -> FrameError {
        FrameError {
            scope: ErrorScope::Connection,
            reason: kind.reason(),
            kind,
        }
    }

    /// A stream error (RFC 9113 §5.4.2) on `stream_id` for breaking `kind`.
    pub fn stream(stream_id: StreamId, kind: FrameErrorKind) -> FrameError {
        FrameError {
            scope: ErrorScope::Stream(stream_id),
            reason: kind.reason(),
            kind,
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} {}", self.kind, self.scope, self.reason)
    }
}

impl error::Error for FrameError {}

/// The rule a frame broke. Each variant documents its section and error code;
/// [`FrameErrorKind::reason`] is the single place that maps rules to codes.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum FrameErrorKind {
    /// Longer than the SETTINGS_MAX_FRAME_SIZE we advertised: FRAME_SIZE_ERROR
    /// (§4.2).
    TooLarge {
        /// Type of the frame.
        kind: FrameKind,
        /// Its payload length.
        len: u32,
        /// Our limit.
        max: u32,
    },
    /// A fixed-size frame of the wrong size: FRAME_SIZE_ERROR (PRIORITY §6.3,
    /// RST_STREAM §6.4, PING §6.7, WINDOW_UPDATE §6.9).
    BadLength {
        /// Type of the frame.
        kind: FrameKind,
        /// Its payload length.
        len: u32,
        /// The only length the type allows.
        expected: u32,
    },
    /// Too short to hold a field its type or flags require: FRAME_SIZE_ERROR,
    /// "too small to contain mandatory frame data" (§4.2).
    TooShort {
        /// Type of the frame.
        kind: FrameKind,
        /// Its payload length.
        len: u32,
        /// The smallest length that holds the field.
        needed: u32,
        /// The missing field, as RFC 9113 names it.
        field: &'static str,
    },
    /// A SETTINGS payload that is not a whole number of 6-byte settings:
    /// FRAME_SIZE_ERROR (§6.5).
    SettingsLength {
        /// Payload length.
        len: u32,
    },
    /// A SETTINGS acknowledgement with a payload: FRAME_SIZE_ERROR (§6.5).
    SettingsAckWithPayload {
        /// Payload length.
        len: u32,
    },
    /// A stream-level frame on stream 0: PROTOCOL_ERROR (§6.1–§6.4, §6.6,
    /// §6.10).
    StreamIdZero {
        /// Type of the frame.
        kind: FrameKind,
    },
    /// A connection-level frame on a stream: PROTOCOL_ERROR (§6.5, §6.7,
    /// §6.8).
    StreamIdNotZero {
        /// Type of the frame.
        kind: FrameKind,
        /// The stream it named.
        stream_id: StreamId,
    },
    /// Pad Length larger than what follows the fixed fields: PROTOCOL_ERROR
    /// (§6.1, §6.2, §6.6).
    PaddingTooLong {
        /// Type of the frame.
        kind: FrameKind,
        /// The Pad Length field.
        padding: u8,
        /// Bytes left for data (or fragment) plus padding.
        available: u32,
    },
    /// WINDOW_UPDATE with an increment of 0: PROTOCOL_ERROR (§6.9).
    ZeroWindowIncrement {
        /// Stream of the frame; 0 makes this a connection error.
        stream_id: StreamId,
    },
    /// A setting outside its allowed range (§6.5.2): FLOW_CONTROL_ERROR for
    /// SETTINGS_INITIAL_WINDOW_SIZE, PROTOCOL_ERROR for the others.
    InvalidSetting {
        /// Setting identifier, one of the `Setting::*` identifier constants.
        id: u16,
        /// The value sent.
        value: u32,
    },
    /// PUSH_PROMISE promising stream 0, which no stream can be: PROTOCOL_ERROR
    /// (§6.6, §5.1.1).
    PromisedIdZero,
    /// A HEADERS or PRIORITY frame making a stream depend on itself: stream
    /// error PROTOCOL_ERROR (§5.3.1).
    SelfDependency {
        /// The stream.
        stream_id: StreamId,
        /// For HEADERS, the decoded frame. Its field block still has to go
        /// through the connection's HPACK decoder, or the compression context
        /// shared by all streams falls out of sync (§4.3); CONTINUATION frames
        /// may follow it. `None` for PRIORITY.
        headers: Option<Box<Headers>>,
    },
}

impl FrameErrorKind {
    /// The error code RFC 9113 prescribes for breaking this rule.
    pub fn reason(&self) -> Reason {
        match self {
            FrameErrorKind::TooLarge { .. }
            | FrameErrorKind::BadLength { .. }
            | FrameErrorKind::TooShort { .. }
            | FrameErrorKind::SettingsLength { .. }
            | FrameErrorKind::SettingsAckWithPayload { .. } => Reason::FRAME_SIZE_ERROR,
            FrameErrorKind::InvalidSetting { id, .. } if *id == Setting::INITIAL_WINDOW_SIZE => {
                Reason::FLOW_CONTROL_ERROR
            }
            FrameErrorKind::StreamIdZero { .. }
            | FrameErrorKind::StreamIdNotZero { .. }
            | FrameErrorKind::PaddingTooLong { .. }
            | FrameErrorKind::ZeroWindowIncrement { .. }
            | FrameErrorKind::InvalidSetting { .. }
            | FrameErrorKind::PromisedIdZero
            | FrameErrorKind::SelfDependency { .. } => Reason::PROTOCOL_ERROR,
        }
    }
}

impl fmt::Display for FrameErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameErrorKind::TooLarge { kind, len, max } => write!(
                f,
                "{kind} frame with length {len} exceeds SETTINGS_MAX_FRAME_SIZE {max} (RFC 9113 §4.2)"
            ),
            FrameErrorKind::BadLength {
                kind,
                len,
                expected,
            } => write!(
                f,
                "{kind} frame with length {len}, must be {expected} (RFC 9113 §{})",
                kind.section()
            ),
            FrameErrorKind::TooShort {
                kind,
                len,
                needed,
                field,
            } => write!(
                f,
                "{kind} frame with length {len} is too short for its {field}, needs at least \
                 {needed} (RFC 9113 §4.2, §{})",
                kind.section()
            ),
            FrameErrorKind::SettingsLength { len } => write!(
                f,
                "SETTINGS frame with length {len}, must be a multiple of 6 (RFC 9113 §6.5)"
            ),
            FrameErrorKind::SettingsAckWithPayload { len } => write!(
                f,
                "SETTINGS frame with ACK flag and length {len}, must be 0 (RFC 9113 §6.5)"
            ),
            FrameErrorKind::StreamIdZero { kind } => write!(
                f,
                "{kind} frame on stream 0, must be on a stream (RFC 9113 §{})",
                kind.section()
            ),
            FrameErrorKind::StreamIdNotZero { kind, stream_id } => write!(
                f,
                "{kind} frame on stream {stream_id}, must be on stream 0 (RFC 9113 §{})",
                kind.section()
            ),
            FrameErrorKind::PaddingTooLong {
                kind,
                padding,
                available,
            } => write!(
                f,
                "{kind} frame with Pad Length {padding} but only {available} bytes after its \
                 fixed fields (RFC 9113 §{})",
                kind.section()
            ),
            FrameErrorKind::ZeroWindowIncrement { stream_id } => write!(
                f,
                "WINDOW_UPDATE frame on stream {stream_id} with increment 0 (RFC 9113 §6.9)"
            ),
            FrameErrorKind::InvalidSetting { id, value } => {
                let rule = match *id {
                    Setting::ENABLE_PUSH => "SETTINGS_ENABLE_PUSH must be 0 or 1",
                    Setting::INITIAL_WINDOW_SIZE => {
                        "SETTINGS_INITIAL_WINDOW_SIZE must be at most 2^31-1"
                    }
                    Setting::MAX_FRAME_SIZE => {
                        "SETTINGS_MAX_FRAME_SIZE must be between 2^14 and 2^24-1"
                    }
                    Setting::ENABLE_CONNECT_PROTOCOL => {
                        return write!(
                            f,
                            "SETTINGS_ENABLE_CONNECT_PROTOCOL must be 0 or 1, got {value} (RFC 8441 §3)"
                        );
                    }
                    _ => "setting out of range",
                };
                write!(f, "{rule}, got {value} (RFC 9113 §6.5.2)")
            }
            FrameErrorKind::PromisedIdZero => f.write_str(
                "PUSH_PROMISE frame promising stream 0, must be a new stream (RFC 9113 §6.6)",
            ),
            FrameErrorKind::SelfDependency { stream_id, .. } => {
                write!(f, "stream {stream_id} depends on itself (RFC 9113 §5.3.1)")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_rule_scope_and_code() {
        let err = FrameError::connection(FrameErrorKind::BadLength {
            kind: FrameKind::Ping,
            len: 7,
            expected: 8,
        });
        assert_eq!(
            err.to_string(),
            "PING frame with length 7, must be 8 (RFC 9113 §6.7): connection error FRAME_SIZE_ERROR"
        );
        let err = FrameError::stream(
            StreamId::new(3),
            FrameErrorKind::SelfDependency {
                stream_id: StreamId::new(3),
                headers: None,
            },
        );
        assert_eq!(
            err.to_string(),
            "stream 3 depends on itself (RFC 9113 §5.3.1): stream error on stream 3 PROTOCOL_ERROR"
        );
    }

    #[test]
    fn initial_window_size_overflow_is_a_flow_control_error() {
        let kind = FrameErrorKind::InvalidSetting {
            id: Setting::INITIAL_WINDOW_SIZE,
            value: 1 << 31,
        };
        assert_eq!(kind.reason(), Reason::FLOW_CONTROL_ERROR);
        let kind = FrameErrorKind::InvalidSetting {
            id: Setting::ENABLE_PUSH,
            value: 2,
        };
        assert_eq!(kind.reason(), Reason::PROTOCOL_ERROR);
    }
}
