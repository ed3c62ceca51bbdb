//! Errors, split as the RFC splits them: what ends the connection, what ends
//! one stream, and what the application asked for that cannot be done.
//!
//! Every peer-caused error names the rule that was broken (`Violation`), so a
//! trace or a test says *why*, not only which code went on the wire.
//! HTTP/1.1's own problems live in `http1`, a leaf of this tree, so the
//! protocol modules import errors and errors import no protocol module.

mod http1;

use std::fmt;

use bytes::Bytes;

pub use self::http1::{HeadPart, Http1Error};

use crate::frame::{FrameErrorKind, Reason, StreamId};
use crate::hpack::DecoderError;

/// A rule of RFC 9113 (or a limit of ours) that the peer broke.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The first 24 bytes from a client were not the connection preface (§3.4).
    BadPreface,
    /// The first frame from the peer was not SETTINGS (§3.4).
    FirstFrameNotSettings,
    /// A server answered our HTTP/2 with prior knowledge in HTTP/1.1
    /// (§3.3): `status_line` is the start of its first line.
    Http1Answer { status_line: Bytes },
    /// A server answered our cleartext HTTP/2 with a TLS record (an alert,
    /// as a rule): its port speaks TLS (RFC 8446 §5.1; RFC 9113 §3.2).
    TlsAnswer,
    /// A frame failed its frame-level checks (§4, §6).
    Frame(FrameErrorKind),
    /// A field block could not be decompressed (RFC 7541; §4.3).
    Compression(DecoderError),
    /// Our SETTINGS went unacknowledged past the configured timeout (§6.5.3).
    SettingsTimeout,
    /// A frame other than CONTINUATION arrived in the middle of a field
    /// block (§6.10); `got` is its type code.
    ContinuationExpected { got: u8 },
    /// A CONTINUATION named another stream than the field block it would
    /// continue, open on `block` (§6.10).
    ContinuationStreamMismatch { block: StreamId, got: StreamId },
    /// A CONTINUATION arrived outside a field block (§6.10).
    UnexpectedContinuation,
    /// A stream id of the wrong parity for its initiator (§5.1.1).
    StreamIdParity { stream: StreamId },
    /// A new stream whose id is not above every id the peer used before (§5.1.1).
    StreamIdNotIncreasing { stream: StreamId, last: StreamId },
    /// A frame on a stream in the idle state other than HEADERS/PRIORITY (§5.1).
    FrameOnIdleStream { kind: u8, stream: StreamId },
    /// DATA or HEADERS on a stream the peer had already ended (§5.1).
    StreamClosed { kind: u8, stream: StreamId },
    /// A second HEADERS on a stream that did not carry END_STREAM (§8.1).
    TrailersWithoutEndStream,
    /// More DATA than the receive window allowed (§6.9.1).
    FlowControlExceeded { window: i64, received: u32 },
    /// A WINDOW_UPDATE or SETTINGS_INITIAL_WINDOW_SIZE change that pushed a
    /// window above 2^31-1 (§6.9.1, §6.9.2).
    WindowOverflow,
    /// A PUSH_PROMISE from a client, or to a client that disabled push, or
    /// on a stream that cannot carry one (§6.6, §8.4).
    PushNotAllowed,
    /// A server sent SETTINGS_ENABLE_PUSH = 1 (§6.5.2).
    ServerEnabledPush,
    /// The request or response broke the field rules of §8.2–§8.3.
    Malformed(Malformation),
    /// The peer opened more streams than our MAX_CONCURRENT_STREAMS (§5.1.2).
    ConcurrencyExceeded,
    /// The decoded field section exceeded our MAX_HEADER_LIST_SIZE (§6.5.2).
    HeaderListTooLarge { size: usize, max: usize },
    /// An encoded field block grew past `Limits::max_header_block_size`.
    HeaderBlockTooLarge { size: usize },
    /// A request body above `Config::max_request_body`: `size` is its
    /// declared `content-length`, or what had come when it grew past the
    /// limit. HTTP/2's; an HTTP/1.1 body says the same in its own terms
    /// (`Http1Error::BodyTooLarge`), beside the other ways its framing
    /// can fail.
    BodyTooLarge { size: u64, max: u64 },
    /// More CONTINUATION frames than `Limits::max_continuation_frames`.
    TooManyContinuations,
    /// More PING/SETTINGS acknowledgements queued than `Limits::max_pending_acks`.
    AckFlood,
    /// More RST_STREAM frames per period on streams the peer opened than
    /// `Limits::max_resets_per_period`.
    ResetFlood,
    /// More streams reset for the peer's errors per period than
    /// `Limits::max_local_resets_per_period` allows.
    StreamErrorFlood,
    /// More empty DATA/CONTINUATION frames per period than allowed.
    EmptyFrameFlood,
    /// An HTTP/1.1 message broke RFC 9112 or one of our limits.
    Http1(Http1Error),
    /// A pushed stream's promise was refused by our own application, so its
    /// frames are unwanted (RFC 9113 §8.4.2).
    PushRefused,
}

/// The field rules of RFC 9113 §8.2–§8.3 that make a message malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Malformation {
    /// A field name with uppercase characters (§8.2.1), told apart from
    /// other forbidden ones: an HTTP/1.1 habit, the likeliest client bug.
    UppercaseFieldName,
    /// A field name with other forbidden characters, or empty (§8.2.1).
    InvalidFieldName,
    /// A field value with NUL, CR, LF or leading/trailing whitespace (§8.2.1).
    InvalidFieldValue,
    /// Connection-specific fields such as `connection` or `transfer-encoding`,
    /// or `te` other than "trailers" (§8.2.2).
    ConnectionSpecificField,
    /// A pseudo-header this message kind does not define (§8.3).
    UnknownPseudoHeader,
    /// A pseudo-header after an ordinary field (§8.3).
    PseudoHeaderAfterField,
    /// A pseudo-header given twice (§8.3.1).
    DuplicatePseudoHeader,
    /// A required pseudo-header missing or empty (§8.3.1, §8.3.2).
    MissingPseudoHeader(&'static str),
    /// Pseudo-headers in trailers (§8.1).
    PseudoHeaderInTrailers,
    /// `:status` not three digits, or 101 (§8.3.2, §8.6).
    InvalidStatus,
    /// An unparsable or conflicting `content-length` (§8.1.1).
    InvalidContentLength,
    /// DATA that does not add up to `content-length` (§8.1.1).
    ContentLengthMismatch { declared: u64, received: u64 },
    /// An informational response with END_STREAM, or trailers before the
    /// final response (§8.1).
    UnexpectedEndStream,
    /// A promised request that is not safe and cacheable (§8.4).
    UnsafePushMethod,
    /// DATA before any HEADERS on a stream (§8.1).
    DataBeforeHeaders,
    /// A `host` field naming another entity than `:authority` (§8.3.1).
    HostMismatch,
    /// A `:method` that is not a token (§8.3.1, RFC 9110 §9.1).
    InvalidMethod,
    /// A `:scheme` that is not an RFC 3986 scheme (§8.3.1).
    InvalidScheme,
    /// An `:authority` with characters an RFC 3986 authority has not, or
    /// with userinfo (§8.3.1).
    InvalidAuthority,
    /// A `:path` with a space or control character, or, for "http" and
    /// "https", neither an absolute path nor `*` for OPTIONS (§8.3.1).
    InvalidPath,
    /// `:protocol` where we did not advertise SETTINGS_ENABLE_CONNECT_PROTOCOL
    /// = 1 (RFC 8441 §3, §4): an extended CONNECT we never offered.
    ProtocolNotEnabled,
    /// `:protocol` on a request whose method is not CONNECT (RFC 8441 §4).
    ProtocolWithoutConnect,
    /// An empty `:protocol`, or one with NUL, CR, LF or whitespace at an
    /// end (RFC 8441 §4, RFC 9113 §8.2.1).
    InvalidProtocol,
}

impl fmt::Display for Malformation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Malformation::*;
        match self {
            UppercaseFieldName => f.write_str("uppercase field name (RFC 9113 §8.2.1)"),
            InvalidFieldName => f.write_str("invalid field name (RFC 9113 §8.2.1)"),
            InvalidFieldValue => f.write_str("invalid field value (RFC 9113 §8.2.1)"),
            ConnectionSpecificField => f.write_str("connection-specific field (RFC 9113 §8.2.2)"),
            UnknownPseudoHeader => f.write_str("unknown pseudo-header (RFC 9113 §8.3)"),
            PseudoHeaderAfterField => f.write_str("pseudo-header after a field (RFC 9113 §8.3)"),
            DuplicatePseudoHeader => f.write_str("duplicate pseudo-header (RFC 9113 §8.3.1)"),
            MissingPseudoHeader(name) => write!(f, "missing {name} (RFC 9113 §8.3)"),
            PseudoHeaderInTrailers => f.write_str("pseudo-header in trailers (RFC 9113 §8.1)"),
            InvalidStatus => f.write_str("invalid :status (RFC 9113 §8.3.2)"),
            InvalidContentLength => f.write_str("invalid content-length (RFC 9113 §8.1.1)"),
            ContentLengthMismatch { declared, received } => write!(
                f,
                "content-length {declared} but {received} bytes of DATA (RFC 9113 §8.1.1)"
            ),
            UnexpectedEndStream => f.write_str("END_STREAM out of place (RFC 9113 §8.1)"),
            UnsafePushMethod => f.write_str("promised request not safe and cacheable (§8.4)"),
            DataBeforeHeaders => f.write_str("DATA before HEADERS (RFC 9113 §8.1)"),
            HostMismatch => f.write_str("host differs from :authority (RFC 9113 §8.3.1)"),
            InvalidMethod => f.write_str("invalid :method (RFC 9113 §8.3.1, RFC 9110 §9.1)"),
            InvalidScheme => f.write_str("invalid :scheme (RFC 9113 §8.3.1, RFC 3986 §3.1)"),
            InvalidAuthority => f.write_str("invalid :authority (RFC 9113 §8.3.1, RFC 3986 §3.2)"),
            InvalidPath => f.write_str("invalid :path (RFC 9113 §8.3.1)"),
            ProtocolNotEnabled => {
                f.write_str(":protocol without our SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 §3)")
            }
            ProtocolWithoutConnect => {
                f.write_str(":protocol on a method other than CONNECT (RFC 8441 §4)")
            }
            InvalidProtocol => f.write_str("invalid :protocol (RFC 8441 §4)"),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Violation::*;
        match self {
            BadPreface => f.write_str("invalid connection preface (RFC 9113 §3.4)"),
            FirstFrameNotSettings => f.write_str("first frame not SETTINGS (RFC 9113 §3.4)"),
            Http1Answer { status_line } => write!(
                f,
                "the server answered in HTTP/1.1 ({:?}), not with SETTINGS: it does not take \
                 HTTP/2 with prior knowledge here (RFC 9113 §3.3)",
                String::from_utf8_lossy(status_line)
            ),
            TlsAnswer => f.write_str(
                "the server answered in TLS: it takes https://, not http:// (RFC 9113 §3.2)",
            ),
            Frame(kind) => write!(f, "{kind}"),
            Compression(e) => write!(f, "HPACK: {e}"),
            SettingsTimeout => f.write_str("SETTINGS not acknowledged in time (RFC 9113 §6.5.3)"),
            ContinuationExpected { got } => write!(
                f,
                "frame type {got:#x} inside a field block, CONTINUATION expected (RFC 9113 §6.10)"
            ),
            ContinuationStreamMismatch { block, got } => write!(
                f,
                "CONTINUATION on stream {got} while the field block on stream {block} \
                 is open (RFC 9113 §6.10)"
            ),
            UnexpectedContinuation => {
                f.write_str("CONTINUATION outside a field block (RFC 9113 §6.10)")
            }
            StreamIdParity { stream } => {
                write!(f, "stream {stream} has the wrong parity (RFC 9113 §5.1.1)")
            }
            StreamIdNotIncreasing { stream, last } => write!(
                f,
                "new stream {stream} not above last stream {last} (RFC 9113 §5.1.1)"
            ),
            FrameOnIdleStream { kind, stream } => write!(
                f,
                "frame type {kind:#x} on idle stream {stream} (RFC 9113 §5.1)"
            ),
            StreamClosed { kind, stream } => write!(
                f,
                "frame type {kind:#x} on closed stream {stream} (RFC 9113 §5.1)"
            ),
            TrailersWithoutEndStream => f.write_str("trailers without END_STREAM (RFC 9113 §8.1)"),
            FlowControlExceeded { window, received } => write!(
                f,
                "{received} bytes of DATA with a window of {window} (RFC 9113 §6.9.1)"
            ),
            WindowOverflow => f.write_str("flow-control window above 2^31-1 (RFC 9113 §6.9.1)"),
            PushNotAllowed => f.write_str("PUSH_PROMISE not allowed here (RFC 9113 §8.4)"),
            ServerEnabledPush => f.write_str("server sent ENABLE_PUSH=1 (RFC 9113 §6.5.2)"),
            Malformed(m) => write!(f, "malformed message: {m}"),
            ConcurrencyExceeded => f.write_str("MAX_CONCURRENT_STREAMS exceeded (RFC 9113 §5.1.2)"),
            HeaderListTooLarge { size, max } => write!(
                f,
                "field section of {size} bytes above MAX_HEADER_LIST_SIZE {max} (RFC 9113 §6.5.2)"
            ),
            BodyTooLarge { size, max } => {
                write!(f, "body of {size} bytes above the limit of {max}")
            }
            HeaderBlockTooLarge { size } => {
                write!(f, "field block of {size} bytes above our limit")
            }
            TooManyContinuations => f.write_str("too many CONTINUATION frames"),
            AckFlood => f.write_str("too many PING/SETTINGS acknowledgements queued"),
            ResetFlood => f.write_str("too many RST_STREAM frames (rapid reset)"),
            StreamErrorFlood => f.write_str("too many stream errors"),
            EmptyFrameFlood => f.write_str("too many empty frames"),
            PushRefused => f.write_str("frames on a refused push"),
            Http1(e) => write!(f, "{e}"),
        }
    }
}

/// Why a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionError {
    /// The peer broke a rule; we sent GOAWAY with `reason` (HTTP/2), or
    /// closed the connection (HTTP/1.1, whose `violation` is `Http1`: it
    /// has no GOAWAY and no codes, and `reason` is PROTOCOL_ERROR).
    Local {
        reason: Reason,
        violation: Violation,
    },
    /// The peer sent GOAWAY with an error code.
    Remote { reason: Reason, debug_data: Bytes },
    /// The transport ended while streams were still open.
    TransportClosed,
    /// Our keep-alive PING went unanswered (`Config::keepalive`).
    KeepaliveTimeout,
    /// Streams were still open when `Config::drain_timeout` after our
    /// GOAWAY ran out; they were cut.
    DrainExpired,
}

impl ConnectionError {
    /// The code that went (or came) in GOAWAY.
    pub fn reason(&self) -> Reason {
        match self {
            ConnectionError::Local { reason, .. } | ConnectionError::Remote { reason, .. } => {
                *reason
            }
            ConnectionError::TransportClosed => Reason::CANCEL,
            ConnectionError::KeepaliveTimeout | ConnectionError::DrainExpired => Reason::NO_ERROR,
        }
    }
}

impl fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // HTTP/1.1 has no error codes: its rules say what was broken.
            ConnectionError::Local {
                violation: violation @ Violation::Http1(_),
                ..
            } => write!(f, "connection error: {violation}"),
            ConnectionError::Local { reason, violation } => {
                write!(f, "connection error {reason}: {violation}")
            }
            ConnectionError::Remote { reason, debug_data } => {
                write!(f, "peer ended the connection with {reason}")?;
                if !debug_data.is_empty() {
                    write!(f, ": {}", String::from_utf8_lossy(debug_data))?;
                }
                Ok(())
            }
            ConnectionError::TransportClosed => f.write_str("transport closed"),
            ConnectionError::KeepaliveTimeout => f.write_str("keep-alive PING unanswered"),
            ConnectionError::DrainExpired => {
                f.write_str("streams still open when the drain time ran out")
            }
        }
    }
}

impl std::error::Error for ConnectionError {}

/// A command the application gave that the connection cannot carry out; the
/// connection itself is unharmed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UserError {
    /// No such stream, or it is already closed; for `release_capacity`,
    /// which still takes the bytes of a closed stream, one never opened.
    UnknownStream(StreamId),
    /// The stream cannot take this now (e.g. data after END_STREAM, a response
    /// on a client, a second final response).
    InvalidState(StreamId),
    /// Requests on a server, responses and pushes on a client.
    WrongRole,
    /// The peer disabled push, or the parent stream cannot carry a promise.
    PushDisabled,
    /// The connection is going away (GOAWAY sent or received) or closed.
    GoingAway,
    /// Stream ids are exhausted (2^31-1 reached); open a new connection.
    StreamIdsExhausted,
    /// Too many streams queued behind MAX_CONCURRENT_STREAMS.
    QueueFull,
    /// Released more receive capacity than was received (and not yet
    /// released) on the stream, or on the connection once it closed.
    ReleaseTooLarge,
    /// The head's field section (`size`, counted as RFC 9113 §6.5.2 does)
    /// is above the peer's SETTINGS_MAX_HEADER_LIST_SIZE (`max`): it is not
    /// sent, since the peer would refuse it (§10.5.1).
    HeaderListTooLarge { size: usize, max: usize },
    /// The protocol in use cannot do this (push or PING over HTTP/1.1).
    Unsupported(&'static str),
    /// A response status outside RFC 9110 §15's 100-599, or 101, which
    /// HTTP/2 does not have (RFC 9113 §8.6) and HTTP/1.1's h2c upgrade
    /// sends by itself: no peer could take it.
    InvalidStatus(u16),
    /// `send_reply` was given an interim (1xx) head: a whole response is a
    /// final one (RFC 9110 §15.2); interim heads go with `send_response`,
    /// before the final one.
    InterimReply(u16),
    /// HTTP/1.1: a field (or a request's method, authority or path) that
    /// cannot go out as a line: a name with space, controls or `:`, a value
    /// with NUL, CR or LF, which would let it write lines of its own
    /// (RFC 9110 §5.1, §5.5). Nothing is sent.
    InvalidField(Bytes),
    /// A setting outside what RFC 9113 §6.5.2 allows (`name`, `value`, to
    /// be within `min..=max`): the peer would end the connection over it.
    /// Nothing is sent, and a connection is not made with it.
    InvalidSetting {
        name: &'static str,
        value: u32,
        min: u32,
        max: u32,
    },
    /// A request with `:protocol` (an extended CONNECT) to a server that has
    /// not advertised SETTINGS_ENABLE_CONNECT_PROTOCOL = 1, or not yet:
    /// "a client MUST NOT send" it then (RFC 8441 §3, §4). Nothing is sent.
    ConnectProtocolNotEnabled,
    /// A request with `:protocol` whose method is not CONNECT: RFC 8441 §4
    /// defines it for CONNECT only, and the peer would find it malformed.
    ProtocolWithoutConnect,
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UserError::UnknownStream(s) => write!(f, "stream {s} is not open"),
            UserError::InvalidState(s) => write!(f, "stream {s} cannot take this in its state"),
            UserError::WrongRole => f.write_str("not allowed in this role"),
            UserError::PushDisabled => f.write_str("push is disabled or not possible here"),
            UserError::GoingAway => f.write_str("the connection is going away"),
            UserError::StreamIdsExhausted => f.write_str("stream ids exhausted"),
            UserError::QueueFull => f.write_str("too many streams queued"),
            UserError::ReleaseTooLarge => f.write_str("released more than was received"),
            UserError::HeaderListTooLarge { size, max } => write!(
                f,
                "field section of {size} bytes above the peer's MAX_HEADER_LIST_SIZE {max} (RFC 9113 §6.5.2)"
            ),
            UserError::Unsupported(what) => write!(f, "{what} is not supported by this protocol"),
            UserError::InvalidStatus(status) => write!(
                f,
                "status {status} cannot be sent: 100-599 (RFC 9110 §15), not 101 (RFC 9113 §8.6)"
            ),
            UserError::InvalidField(name) => write!(
                f,
                "field {:?} cannot be sent over HTTP/1.1: a name must be visible ASCII without \
                 ':', a value must hold no NUL, CR or LF (RFC 9110 §5.1, §5.5)",
                String::from_utf8_lossy(name)
            ),
            UserError::InvalidSetting {
                name,
                value,
                min,
                max,
            } => write!(
                f,
                "{name} {value} is out of range: {min} to {max} (RFC 9113 §6.5.2)"
            ),
            UserError::ConnectProtocolNotEnabled => f.write_str(
                ":protocol needs the server's SETTINGS_ENABLE_CONNECT_PROTOCOL = 1 (RFC 8441 §3)",
            ),
            UserError::ProtocolWithoutConnect => {
                f.write_str(":protocol is for CONNECT only (RFC 8441 §4)")
            }
            UserError::InterimReply(status) => write!(
                f,
                "status {status} is interim (RFC 9110 §15.2): a whole response needs a final one, 200-599"
            ),
        }
    }
}

impl std::error::Error for UserError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GOAWAY's debug data is shown after the code when there is some
    /// (RFC 9113 §6.8: it is optional), with no colon left hanging when not.
    #[test]
    fn a_peers_goaway_reads_with_or_without_debug_data() {
        let goaway = |data: &'static [u8]| {
            ConnectionError::Remote {
                reason: Reason::ENHANCE_YOUR_CALM,
                debug_data: Bytes::from_static(data),
            }
            .to_string()
        };
        assert_eq!(
            goaway(b""),
            "peer ended the connection with ENHANCE_YOUR_CALM"
        );
        assert_eq!(
            goaway(b"too many resets"),
            "peer ended the connection with ENHANCE_YOUR_CALM: too many resets"
        );
    }
}
