//! Padding, shared by DATA, HEADERS and PUSH_PROMISE (RFC 9113 §6.1, §6.2,
//! §6.6).
//!
//! Padding obscures the size of messages (§10.7). With the PADDED flag the
//! payload starts with a one-byte Pad Length and ends with that many padding
//! octets; the frame's own fields and data sit in between. Padding octets are
//! not checked for being zero: a receiver "is not obligated to verify padding"
//! (§6.1), and the decoder never looks at them.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::error::{FrameError, FrameErrorKind};
use super::head::{Head, flags, wire_len};

/// Takes the Pad Length byte off the front of `payload` if the PADDED flag is
/// set.
///
/// A PADDED frame with an empty payload cannot hold the Pad Length field. That
/// is a frame "too small to contain mandatory frame data", a FRAME_SIZE_ERROR
/// (§4.2) rather than the PROTOCOL_ERROR for padding that is too long: there
/// is no padding length to compare. It is a connection error because §4.2
/// requires that for HEADERS and PUSH_PROMISE and treating DATA the same keeps
/// one rule for all padded frames.
pub(crate) fn take_pad_len(head: &Head, payload: &mut Bytes) -> Result<Option<u8>, FrameError> {
    if !head.has(flags::PADDED) {
        return Ok(None);
    }
    let Some(&pad_len) = payload.first() else {
        return Err(FrameError::connection(FrameErrorKind::TooShort {
            kind: head.kind,
            len: head.len,
            needed: 1,
            field: "Pad Length",
        }));
    };
    payload.advance(1);
    Ok(Some(pad_len))
}

/// Cuts `pad_len` padding octets off the end of `rest`, which is what follows
/// the Pad Length byte and the frame's fixed fields.
///
/// Padding longer than `rest` is a connection error of type PROTOCOL_ERROR
/// (§6.1: "the length of the frame payload or greater"; §6.2: "exceeds the size
/// remaining for the field block fragment"). Padding exactly as long as `rest`
/// is valid and leaves no data.
pub(crate) fn strip_padding(
    head: &Head,
    pad_len: Option<u8>,
    mut rest: Bytes,
) -> Result<Bytes, FrameError> {
    let Some(pad_len) = pad_len else {
        return Ok(rest);
    };
    let Some(keep) = rest.len().checked_sub(usize::from(pad_len)) else {
        return Err(FrameError::connection(FrameErrorKind::PaddingTooLong {
            kind: head.kind,
            padding: pad_len,
            available: wire_len(rest.len()),
        }));
    };
    rest.truncate(keep);
    Ok(rest)
}

/// Bytes padding adds to a payload: the Pad Length byte and the padding.
pub(crate) fn overhead(pad_len: Option<u8>) -> usize {
    pad_len.map_or(0, |n| usize::from(n) + 1)
}

/// The PADDED flag if `pad_len` is set.
pub(crate) fn flag(pad_len: Option<u8>) -> u8 {
    if pad_len.is_some() { flags::PADDED } else { 0 }
}

/// Writes the Pad Length byte, if any; goes before the frame's fields.
pub(crate) fn put_pad_len(pad_len: Option<u8>, dst: &mut BytesMut) {
    if let Some(n) = pad_len {
        dst.put_u8(n);
    }
}

/// Writes the padding octets, all zero as §6.1 requires of senders; goes after
/// the data.
pub(crate) fn put_padding(pad_len: Option<u8>, dst: &mut BytesMut) {
    if let Some(n) = pad_len {
        dst.put_bytes(0, usize::from(n));
    }
}
