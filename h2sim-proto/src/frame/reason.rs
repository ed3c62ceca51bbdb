//! Error codes carried by RST_STREAM and GOAWAY (RFC 9113 §7).

use std::fmt;

/// An HTTP/2 error code (RFC 9113 §7).
///
/// An open newtype rather than an enum: "Unknown or unsupported error codes
/// MUST NOT trigger any special behavior" (§7), so a code we do not know is
/// kept as its number instead of being rejected or rewritten.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reason(pub u32);

/// The codes RFC 9113 §7 defines, indexed by value.
const NAMES: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

impl Reason {
    /// Graceful shutdown, not an error.
    pub const NO_ERROR: Reason = Reason(0x0);
    /// An unspecific protocol error.
    pub const PROTOCOL_ERROR: Reason = Reason(0x1);
    /// An unexpected internal error.
    pub const INTERNAL_ERROR: Reason = Reason(0x2);
    /// The peer violated the flow-control protocol.
    pub const FLOW_CONTROL_ERROR: Reason = Reason(0x3);
    /// A SETTINGS frame was not acknowledged in time.
    pub const SETTINGS_TIMEOUT: Reason = Reason(0x4);
    /// A frame arrived after the stream was half-closed.
    pub const STREAM_CLOSED: Reason = Reason(0x5);
    /// A frame had an invalid size.
    pub const FRAME_SIZE_ERROR: Reason = Reason(0x6);
    /// The stream was refused before any application processing.
    pub const REFUSED_STREAM: Reason = Reason(0x7);
    /// The stream is no longer needed.
    pub const CANCEL: Reason = Reason(0x8);
    /// The field-compression context cannot be maintained.
    pub const COMPRESSION_ERROR: Reason = Reason(0x9);
    /// The tunnel of a CONNECT request was reset or closed abnormally.
    pub const CONNECT_ERROR: Reason = Reason(0xa);
    /// The peer may be generating excessive load.
    pub const ENHANCE_YOUR_CALM: Reason = Reason(0xb);
    /// The transport does not meet the minimum security requirements.
    pub const INADEQUATE_SECURITY: Reason = Reason(0xc);
    /// HTTP/1.1 must be used instead of HTTP/2.
    pub const HTTP_1_1_REQUIRED: Reason = Reason(0xd);

    /// The name RFC 9113 §7 gives this code, or `None` for a code it does not
    /// define.
    pub fn name(self) -> Option<&'static str> {
        usize::try_from(self.0)
            .ok()
            .and_then(|index| NAMES.get(index))
            .copied()
    }
}

impl From<u32> for Reason {
    fn from(code: u32) -> Reason {
        Reason(code)
    }
}

impl From<Reason> for u32 {
    fn from(reason: Reason) -> u32 {
        reason.0
    }
}

impl fmt::Debug for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "Reason({:#x})", self.0),
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "unknown error code {:#x}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Reason;

    #[test]
    fn known_codes_have_their_rfc_names() {
        assert_eq!(Reason::NO_ERROR.name(), Some("NO_ERROR"));
        assert_eq!(Reason::FRAME_SIZE_ERROR.to_string(), "FRAME_SIZE_ERROR");
        assert_eq!(
            format!("{:?}", Reason::HTTP_1_1_REQUIRED),
            "HTTP_1_1_REQUIRED"
        );
        assert_eq!(Reason::HTTP_1_1_REQUIRED, Reason(0xd));
    }

    #[test]
    fn unknown_codes_are_kept_as_numbers() {
        let reason = Reason(0xe);
        assert_eq!(reason.name(), None);
        assert_eq!(reason.to_string(), "unknown error code 0xe");
        assert_eq!(format!("{reason:?}"), "Reason(0xe)");
        assert_eq!(u32::from(Reason(u32::MAX)), u32::MAX);
        assert_eq!(Reason(u32::MAX).name(), None);
    }
}
