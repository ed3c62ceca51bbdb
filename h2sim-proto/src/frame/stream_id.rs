//! Stream identifiers (RFC 9113 §5.1.1).

use std::fmt;

/// Mask of the 31 bits that carry an identifier; the top bit of the wire field
/// is reserved (RFC 9113 §4.1).
const ID_MASK: u32 = 0x7fff_ffff;

/// A 31-bit stream identifier (RFC 9113 §5.1.1).
///
/// The wire field is 32 bits whose top bit is reserved: it "MUST remain unset
/// when sending and MUST be ignored when receiving" (§4.1). Every constructor
/// masks that bit off, so a `StreamId` always holds a value the wire format can
/// carry and two frames that differ only in the reserved bit name the same
/// stream.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct StreamId(u32);

impl StreamId {
    /// Stream 0: the connection itself, used by frames that apply to the whole
    /// connection (RFC 9113 §5.1.1).
    pub const ZERO: StreamId = StreamId(0);

    /// The largest identifier a stream can have, 2^31-1 (RFC 9113 §5.1.1).
    pub const MAX: StreamId = StreamId(ID_MASK);

    /// Builds an identifier from a wire value, ignoring the reserved bit
    /// (RFC 9113 §4.1).
    pub const fn new(id: u32) -> StreamId {
        StreamId(id & ID_MASK)
    }

    /// The identifier as a number in `0..=2^31-1`.
    pub const fn value(self) -> u32 {
        self.0
    }

    /// Whether this is stream 0, i.e. the connection as a whole.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Whether a client opens streams with this identifier: clients use odd
    /// numbers (RFC 9113 §5.1.1).
    pub const fn is_client_initiated(self) -> bool {
        self.0 & 1 == 1
    }

    /// Whether a server opens (pushes) streams with this identifier: servers
    /// use even numbers, and 0 is the connection, not a stream (RFC 9113
    /// §5.1.1).
    pub const fn is_server_initiated(self) -> bool {
        self.0 != 0 && self.0 & 1 == 0
    }
}

impl From<StreamId> for u32 {
    fn from(id: StreamId) -> u32 {
        id.0
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::StreamId;

    #[test]
    fn reserved_bit_is_masked() {
        assert_eq!(StreamId::new(0x8000_0001), StreamId::new(1));
        assert_eq!(StreamId::new(0x8000_0000), StreamId::ZERO);
        assert_eq!(StreamId::new(u32::MAX), StreamId::MAX);
        assert_eq!(StreamId::MAX.value(), (1 << 31) - 1);
    }

    #[test]
    fn initiator_follows_parity() {
        assert!(StreamId::new(1).is_client_initiated());
        assert!(!StreamId::new(1).is_server_initiated());
        assert!(StreamId::new(2).is_server_initiated());
        assert!(!StreamId::new(2).is_client_initiated());
        assert!(StreamId::ZERO.is_zero());
        assert!(!StreamId::ZERO.is_client_initiated());
        assert!(!StreamId::ZERO.is_server_initiated());
    }

    #[test]
    fn displays_as_number() {
        assert_eq!(StreamId::new(7).to_string(), "7");
        assert_eq!(u32::from(StreamId::new(7)), 7);
    }
}
