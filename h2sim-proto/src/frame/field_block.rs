//! Splitting a field block across HEADERS or PUSH_PROMISE and CONTINUATION
//! frames (RFC 9113 §4.3, §6.10).
//!
//! A field block larger than the peer's SETTINGS_MAX_FRAME_SIZE continues in
//! CONTINUATION frames on the same stream, with nothing interleaved; only the
//! last frame carries END_HEADERS (§4.3).

use bytes::{BufMut, BytesMut};

use super::head::{FrameKind, Head, flags, wire_len};
use super::{HEADER_LEN, MAX_FRAME_SIZE_LIMIT, StreamId};

/// The first frame of a field block: HEADERS or PUSH_PROMISE.
pub(crate) struct FirstFrame<'a> {
    pub(crate) kind: FrameKind,
    pub(crate) stream_id: StreamId,
    /// Flags other than END_HEADERS, which is set here.
    pub(crate) flags: u8,
    /// Fixed fields that precede the fragment (PUSH_PROMISE's promised id).
    pub(crate) fields: &'a [u8],
}

/// Writes `first` carrying as much of `block` as fits, then CONTINUATION
/// frames for the rest, none with a payload over `max_frame_size`.
///
/// `max_frame_size` is clamped to `1..=2^24-1` so that every frame makes
/// progress; values below 2^14 are never advertised by a valid peer (§6.5.2)
/// but let tests produce many small frames.
pub(crate) fn encode(
    first: &FirstFrame<'_>,
    block: &[u8],
    max_frame_size: u32,
    dst: &mut BytesMut,
) {
    let max = max_frame_size.clamp(1, MAX_FRAME_SIZE_LIMIT) as usize;
    let room = max.saturating_sub(first.fields.len());
    let (fragment, mut rest) = block.split_at(room.min(block.len()));

    let frames = 1 + rest.len().div_ceil(max);
    dst.reserve(frames * HEADER_LEN + first.fields.len() + block.len());

    Head {
        len: wire_len(first.fields.len() + fragment.len()),
        kind: first.kind,
        flags: first.flags | end_headers_flag(rest.is_empty()),
        stream_id: first.stream_id,
    }
    .encode(dst);
    dst.put_slice(first.fields);
    dst.put_slice(fragment);

    while !rest.is_empty() {
        let (fragment, tail) = rest.split_at(max.min(rest.len()));
        Head {
            len: wire_len(fragment.len()),
            kind: FrameKind::Continuation,
            flags: end_headers_flag(tail.is_empty()),
            stream_id: first.stream_id,
        }
        .encode(dst);
        dst.put_slice(fragment);
        rest = tail;
    }
}

pub(crate) fn end_headers_flag(end_headers: bool) -> u8 {
    if end_headers { flags::END_HEADERS } else { 0 }
}
