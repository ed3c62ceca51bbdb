//! Prefix-coded integers (RFC 7541 §5.1).
//!
//! An integer fills the low `N` bits of a byte whose high bits belong to the
//! representation's pattern; values that do not fit continue in 7-bit
//! little-endian groups with a continuation flag.

use bytes::{BufMut, BytesMut};

/// Largest integer the decoder accepts. Nothing in HPACK legitimately needs
/// more (indices, string lengths and table sizes are all bounded far below
/// it), and a fixed bound keeps all arithmetic overflow-free on 32-bit
/// targets too. §5.1 lets implementations reject integers "that exceed
/// implementation limits — in value or octet length".
pub(crate) const MAX_INTEGER: u64 = u32::MAX as u64;

/// Most continuation bytes accepted: five 7-bit groups carry 35 bits, enough
/// for [`MAX_INTEGER`]. More can only be redundant zero groups, which a peer
/// could otherwise send without end.
const MAX_CONTINUATION_BYTES: usize = 5;

/// Why an integer could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntegerError {
    /// The input ended inside the integer.
    Truncated,
    /// The value exceeds [`MAX_INTEGER`] or uses too many bytes.
    Overflow,
}

/// Decodes an integer with an `prefix_bits`-bit prefix (1..=8) starting at
/// `input[*pos]`, whose high bits are ignored. On success `*pos` points past
/// the integer.
pub(crate) fn decode(
    input: &[u8],
    pos: &mut usize,
    prefix_bits: u8,
) -> Result<usize, IntegerError> {
    debug_assert!((1..=8).contains(&prefix_bits));
    let max_prefix: u8 = u8::MAX >> (8 - prefix_bits);
    let first = *input.get(*pos).ok_or(IntegerError::Truncated)?;
    let mut value = u64::from(first & max_prefix);
    let mut at = *pos + 1;
    if value == u64::from(max_prefix) {
        let mut shift = 0u32;
        loop {
            if at - *pos > MAX_CONTINUATION_BYTES {
                return Err(IntegerError::Overflow);
            }
            let byte = *input.get(at).ok_or(IntegerError::Truncated)?;
            at += 1;
            // shift <= 28 here and the group is < 2^7, so this stays < 2^36.
            value += u64::from(byte & 0x7f) << shift;
            if value > MAX_INTEGER {
                return Err(IntegerError::Overflow);
            }
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
    }
    *pos = at;
    usize::try_from(value).map_err(|_| IntegerError::Overflow)
}

/// Appends `value` with an `prefix_bits`-bit prefix (1..=8); `pattern`
/// supplies the representation's high bits of the first byte.
pub(crate) fn encode(value: usize, prefix_bits: u8, pattern: u8, dst: &mut BytesMut) {
    debug_assert!((1..=8).contains(&prefix_bits));
    let max_prefix: u8 = u8::MAX >> (8 - prefix_bits);
    if value < usize::from(max_prefix) {
        dst.put_u8(pattern | value as u8);
        return;
    }
    dst.put_u8(pattern | max_prefix);
    let mut rest = value - usize::from(max_prefix);
    while rest >= 0x80 {
        dst.put_u8(0x80 | (rest & 0x7f) as u8);
        rest >>= 7;
    }
    dst.put_u8(rest as u8);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    fn enc(value: usize, prefix_bits: u8, pattern: u8) -> Vec<u8> {
        let mut dst = BytesMut::new();
        encode(value, prefix_bits, pattern, &mut dst);
        dst.to_vec()
    }

    fn dec(input: &[u8], prefix_bits: u8) -> Result<(usize, usize), IntegerError> {
        let mut pos = 0;
        decode(input, &mut pos, prefix_bits).map(|v| (v, pos))
    }

    #[test]
    fn rfc_c1_1_ten_with_5_bit_prefix() {
        assert_eq!(enc(10, 5, 0), [0b0000_1010]);
        assert_eq!(dec(&[0b1110_1010], 5), Ok((10, 1)));
    }

    #[test]
    fn rfc_c1_2_1337_with_5_bit_prefix() {
        assert_eq!(enc(1337, 5, 0), [0b0001_1111, 0b1001_1010, 0b0000_1010]);
        assert_eq!(dec(&[0x1f, 0x9a, 0x0a], 5), Ok((1337, 3)));
    }

    #[test]
    fn rfc_c1_3_42_at_octet_boundary() {
        assert_eq!(enc(42, 8, 0), [0b0010_1010]);
        assert_eq!(dec(&[42], 8), Ok((42, 1)));
    }

    #[test]
    fn pattern_bits_are_kept_and_ignored() {
        assert_eq!(enc(5, 4, 0x10), [0x15]);
        assert_eq!(enc(15, 4, 0x10), [0x1f, 0x00]);
        assert_eq!(dec(&[0x1f, 0x00], 4), Ok((15, 2)));
    }

    #[test]
    fn rejects_truncation() {
        assert_eq!(dec(&[], 5), Err(IntegerError::Truncated));
        assert_eq!(dec(&[0x1f], 5), Err(IntegerError::Truncated));
        assert_eq!(dec(&[0x1f, 0xff, 0xff], 5), Err(IntegerError::Truncated));
    }

    #[test]
    fn rejects_overflow() {
        // 2^32 - 1 is the largest accepted value.
        let max = enc(u32::MAX as usize, 5, 0);
        assert_eq!(dec(&max, 5), Ok((u32::MAX as usize, max.len())));
        assert_eq!(dec(&enc(1 << 32, 5, 0), 5), Err(IntegerError::Overflow));
        // Endless redundant zero groups.
        let mut padded = vec![0x1f];
        padded.extend([0x80; 10]);
        padded.push(0);
        assert_eq!(dec(&padded, 5), Err(IntegerError::Overflow));
        // A huge value in few bytes.
        assert_eq!(
            dec(&[0x1f, 0xff, 0xff, 0xff, 0xff, 0x7f], 5),
            Err(IntegerError::Overflow)
        );
    }

    proptest! {
        #[test]
        fn round_trip(value in 0..=u32::MAX as usize, prefix_bits in 1u8..=8, pattern: u8) {
            let pattern = pattern & !(u8::MAX >> (8 - prefix_bits));
            let bytes = enc(value, prefix_bits, pattern);
            prop_assert_eq!(bytes[0] & pattern, pattern);
            prop_assert_eq!(dec(&bytes, prefix_bits), Ok((value, bytes.len())));
        }

        #[test]
        fn arbitrary_input_never_panics(input in proptest::collection::vec(any::<u8>(), 0..12), prefix_bits in 1u8..=8) {
            if let Ok((value, used)) = dec(&input, prefix_bits) {
                prop_assert!(value as u64 <= MAX_INTEGER);
                prop_assert!(used <= input.len());
            }
        }
    }
}
