//! The static Huffman code of RFC 7541 §5.2 / Appendix B.
//!
//! The code in Appendix B is *canonical*: codes of equal length are
//! consecutive and ordered by symbol, and each length's first code follows
//! from the previous length's last one. So the whole code is determined by
//! the 257 code lengths in [`CODE_LENGTHS`]; the codes themselves and the
//! decoding tables are derived from them at compile time by `const fn`s,
//! which keeps the hand-typed data to one small array that is easy to check
//! against the RFC.
//!
//! Decoding reads twelve bits at a time through [`FAST`]: for each
//! twelve-bit value, the one or two symbols whose codes it starts with and
//! the bits they take. A request path's characters have codes of five to
//! seven bits, so most lookups decode two. Longer codes (rare: control
//! bytes, most punctuation outside URLs, non-ASCII) are decoded from the
//! code's canonical form ([`Canonical`]), and the string's last bits a
//! code at a time, where the padding is checked.

use bytes::{Bytes, BytesMut};

/// Symbol number of EOS, the 257th symbol, which must never appear in a
/// string (§5.2).
const EOS: usize = 256;

/// Length in bits of the code of each symbol 0..=255 and EOS (256), as
/// listed in RFC 7541 Appendix B.
const CODE_LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, // 0..=15
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, // 16..=31
    6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, // 32..=47
    5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, // 48..=63
    13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // 64..=79
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, // 80..=95
    15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, // 96..=111
    6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, // 112..=127
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, // 128..=143
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, // 144..=159
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, // 160..=175
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, // 176..=191
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, // 192..=207
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, // 208..=223
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, // 224..=239
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, // 240..=255
    30, // EOS
];

/// Longest code length in bits (EOS and a few control bytes).
const MAX_CODE_LEN: u8 = 30;
/// Shortest code length in bits (`0`, `1`, `2`, `a`, `c`, `e`, ...).
const MIN_CODE_LEN: u8 = 5;

/// The code of each symbol, right-aligned in a `u32`, with its length.
static CODES: [(u32, u8); 257] = canonical_codes();

/// Assigns canonical codes: shortest lengths first, symbols in increasing
/// order within a length, each code one more than the previous one and
/// shifted left when the length grows.
const fn canonical_codes() -> [(u32, u8); 257] {
    let mut codes = [(0u32, 0u8); 257];
    let mut code: u32 = 0;
    let mut len: u8 = 1;
    while len <= MAX_CODE_LEN {
        let mut sym = 0;
        while sym < 257 {
            if CODE_LENGTHS[sym] == len {
                codes[sym] = (code, len);
                code += 1;
            }
            sym += 1;
        }
        code <<= 1;
        len += 1;
    }
    codes
}

/// Number of internal nodes of the code tree: a full binary tree with 257
/// leaves has 256 of them, so a state fits in a `u8`.
const STATES: usize = 256;

/// Marks a child slot of [`Tree`] as a leaf holding a symbol.
const LEAF: u16 = 0x8000;

/// The code tree: for each internal node, its `[0-branch, 1-branch]`
/// children, either another node id or `LEAF | symbol`. Node 0 is the root.
type Tree = [[u16; 2]; STATES];

const fn build_tree() -> Tree {
    let mut tree: Tree = [[0; 2]; STATES];
    // Node 0 is the root, so 0 never occurs as a child: it means "not yet
    // allocated" while building.
    let mut next_free: u16 = 1;
    let mut sym = 0;
    while sym < 257 {
        let (code, len) = CODES[sym];
        let mut node = 0usize;
        let mut bit = len;
        while bit > 1 {
            bit -= 1;
            let branch = ((code >> bit) & 1) as usize;
            if tree[node][branch] == 0 {
                tree[node][branch] = next_free;
                next_free += 1;
            }
            node = tree[node][branch] as usize;
        }
        tree[node][(code & 1) as usize] = LEAF | sym as u16;
        sym += 1;
    }
    tree
}

/// Bits [`FAST`] is indexed by.
const FAST_BITS: u32 = 12;

/// What the next [`FAST_BITS`] bits start with: `count` symbols (0, 1 or
/// 2; 0 when the first code is longer than [`FAST_BITS`]), which take
/// `bits` of them. A second symbol's slot holds 0 when there is none.
#[derive(Clone, Copy)]
#[repr(align(4))]
struct Fast {
    symbols: [u8; 2],
    count: u8,
    bits: u8,
}

static FAST: [Fast; 1 << FAST_BITS] = build_fast();

/// Walks `tree` from the root along the bits of `value` (`len` bits, most
/// significant first, from bit `from` on): the symbol of the first code
/// they complete and its length, or `None` if they complete none (EOS
/// counts as none: it never goes in [`FAST`]).
const fn first_code(tree: &Tree, value: usize, from: u32, len: u32) -> Option<(u8, u8)> {
    let mut node = 0usize;
    let mut bit = from;
    while bit < len {
        let branch = (value >> (len - 1 - bit)) & 1;
        let child = tree[node][branch];
        if child & LEAF != 0 {
            let symbol = (child & !LEAF) as usize;
            if symbol == EOS {
                return None;
            }
            return Some((symbol as u8, (bit - from + 1) as u8));
        }
        node = child as usize;
        bit += 1;
    }
    None
}

const fn build_fast() -> [Fast; 1 << FAST_BITS] {
    let tree = build_tree();
    let mut table = [Fast {
        symbols: [0; 2],
        count: 0,
        bits: 0,
    }; 1 << FAST_BITS];
    let mut value = 0;
    while value < 1 << FAST_BITS {
        if let Some((first, len)) = first_code(&tree, value, 0, FAST_BITS) {
            table[value] = match first_code(&tree, value, len as u32, FAST_BITS) {
                Some((second, len2)) => Fast {
                    symbols: [first, second],
                    count: 2,
                    bits: len + len2,
                },
                None => Fast {
                    symbols: [first, 0],
                    count: 1,
                    bits: len,
                },
            };
        }
        value += 1;
    }
    table
}

/// The code in canonical form, for codes [`FAST`] does not hold: codes of
/// length `n` are the numbers `first[n] .. first[n] + count[n]`, and stand
/// for the symbols `sorted[offset[n] ..]`, in order.
struct Canonical {
    first: [u32; MAX_CODE_LEN as usize + 1],
    count: [u32; MAX_CODE_LEN as usize + 1],
    offset: [u16; MAX_CODE_LEN as usize + 1],
    /// Symbols by code length, then by value.
    sorted: [u16; 257],
}

static CANONICAL: Canonical = build_canonical();

const fn build_canonical() -> Canonical {
    let mut c = Canonical {
        first: [0; MAX_CODE_LEN as usize + 1],
        count: [0; MAX_CODE_LEN as usize + 1],
        offset: [0; MAX_CODE_LEN as usize + 1],
        sorted: [0; 257],
    };
    let mut placed = 0;
    let mut len = 1;
    while len <= MAX_CODE_LEN as usize {
        c.offset[len] = placed as u16;
        let mut sym = 0;
        while sym < 257 {
            if CODE_LENGTHS[sym] as usize == len {
                if c.count[len] == 0 {
                    c.first[len] = CODES[sym].0;
                }
                c.count[len] += 1;
                c.sorted[placed] = sym as u16;
                placed += 1;
            }
            sym += 1;
        }
        len += 1;
    }
    c
}

/// The code at the start of `window`, the next [`MAX_CODE_LEN`] bits (the
/// low ones of a `u32`): its symbol (EOS included) and its length.
fn canonical_code(window: u32) -> (usize, u32) {
    let c = &CANONICAL;
    for len in u32::from(MIN_CODE_LEN)..=u32::from(MAX_CODE_LEN) {
        let code = window >> (u32::from(MAX_CODE_LEN) - len);
        let n = len as usize;
        if code.wrapping_sub(c.first[n]) < c.count[n] {
            let at = usize::from(c.offset[n]) + (code - c.first[n]) as usize;
            // Within `sorted` by construction; were it not, EOS refuses it.
            return (c.sorted.get(at).map_or(EOS, |&s| usize::from(s)), len);
        }
    }
    // Not reached: the code is complete (its Kraft sum is 1) and none is
    // longer than a window, so every window starts with one. Were it
    // reached, the string would be refused as EOS is.
    (EOS, u32::from(MAX_CODE_LEN))
}

/// Why a Huffman-coded string was rejected (RFC 7541 §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HuffmanError {
    /// The EOS symbol was decoded inside the string.
    EosInString,
    /// The string ended with more than 7 bits of padding.
    PaddingTooLong,
    /// The padding bits were not the most significant bits of EOS (all ones).
    PaddingNotEos,
}

impl std::fmt::Display for HuffmanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::EosInString => "EOS symbol inside the string",
            Self::PaddingTooLong => "padding longer than 7 bits",
            Self::PaddingNotEos => "padding is not a prefix of EOS (all ones)",
        })
    }
}

impl std::error::Error for HuffmanError {}

/// Decoded strings are cut from chunks of this size: a request's unique
/// `:path` costs a share of one allocation, not an allocation and a free
/// of its own, and a string held for long keeps at most a chunk alive.
const CHUNK: usize = 1024;

/// Decodes a Huffman-coded string into `Bytes` cut from `chunk` (empty,
/// and left empty: what it decodes is split off), which is replaced when
/// too little room is left in it.
pub(crate) fn decode(input: &[u8], chunk: &mut BytesMut) -> Result<Bytes, HuffmanError> {
    let room = room_for(input);
    if chunk.capacity() < room {
        *chunk = BytesMut::with_capacity(room.max(CHUNK));
    }
    chunk.resize(room, 0);
    match decode_into(input, chunk) {
        Ok(len) => {
            chunk.truncate(len);
            Ok(chunk.split().freeze())
        }
        Err(e) => {
            chunk.clear();
            Err(e)
        }
    }
}

/// The room [`decode_into`] needs for `input`: one more than the most
/// symbols it can hold, each taking at least 5 bits.
fn room_for(input: &[u8]) -> usize {
    input.len().saturating_mul(8) / 5 + 1
}

/// Decodes `input` into `out` (at least [`room_for`] long); returns the
/// decoded length.
///
/// Input is taken into `acc`, whose low `held` bits are still to decode,
/// a few octets at a time; then, while [`FAST_BITS`] are held, each step
/// looks them up in [`FAST`] and stores both symbol slots, moving on by
/// what it decoded: whether that was one symbol or two follows no pattern
/// a branch predictor could learn, so it is not a branch. A code longer
/// than [`FAST`] holds, and the last bits of the string, are decoded a
/// code at a time from the code's canonical form; then the padding is
/// checked (§5.2): at most 7 bits, all ones. All ones short of EOS's 30
/// bits is never a code, so it can only be padding.
fn decode_into(input: &[u8], out: &mut [u8]) -> Result<usize, HuffmanError> {
    let mut acc: u64 = 0;
    let mut held: u32 = 0;
    let mut len = 0;
    let mut rest = input;
    while !rest.is_empty() {
        // As many whole octets as `acc` has room for: eight at once while
        // eight are left, the last few one by one.
        let room = ((u64::BITS - held) / 8) as usize;
        if let Some(word) = rest.first_chunk::<8>() {
            let bits = room as u32 * 8;
            acc = acc.checked_shl(bits).unwrap_or(0)
                | u64::from_be_bytes(*word)
                    .checked_shr(64 - bits)
                    .unwrap_or(0);
            held += bits;
            rest = &rest[room..];
        } else {
            let (now, later) = rest.split_at(room.min(rest.len()));
            for &byte in now {
                acc = (acc << 8) | u64::from(byte);
            }
            held += now.len() as u32 * 8;
            rest = later;
        }
        while held >= FAST_BITS {
            let fast = FAST[peek(acc, held, FAST_BITS) as usize];
            if fast.count == 0 {
                if held < u32::from(MAX_CODE_LEN) {
                    // More octets first, or the end below.
                    break;
                }
                held -= decode_code(acc, held, out, &mut len)?;
                continue;
            }
            // Within the room: `len` counts symbols, of which `input`
            // holds fewer than `out.len()`; the second slot may fall past.
            if let Some(slot) = out.get_mut(len) {
                *slot = fast.symbols[0];
            }
            if let Some(slot) = out.get_mut(len + 1) {
                *slot = fast.symbols[1];
            }
            len += usize::from(fast.count);
            held -= u32::from(fast.bits);
        }
    }
    // Fewer than MAX_CODE_LEN bits are left, and no more input.
    while held > 0 {
        let ones = (1u64 << held) - 1;
        if acc & ones == ones {
            return if held > 7 {
                Err(HuffmanError::PaddingTooLong)
            } else {
                Ok(len.min(out.len()))
            };
        }
        held -= decode_code(acc, held, out, &mut len)?;
    }
    Ok(len.min(out.len()))
}

/// The next `bits` bits of `acc`, whose low `held` bits are still to
/// decode; past its end, ones (EOS's bits, as padding is).
fn peek(acc: u64, held: u32, bits: u32) -> u64 {
    let next = if held >= bits {
        acc >> (held - bits)
    } else {
        (acc << (bits - held)) | ((1 << (bits - held)) - 1)
    };
    next & ((1 << bits) - 1)
}

/// Decodes the code the next bits of `acc` start with into `out[len]`
/// (moving `len` on) from its canonical form; returns its length. A code
/// that runs past the `held` bits (the input ends inside it, and what is
/// left is not all ones) and EOS are errors.
fn decode_code(acc: u64, held: u32, out: &mut [u8], len: &mut usize) -> Result<u32, HuffmanError> {
    let (symbol, bits) = canonical_code(peek(acc, held, u32::from(MAX_CODE_LEN)) as u32);
    if bits > held {
        return Err(HuffmanError::PaddingNotEos);
    }
    let Ok(symbol) = u8::try_from(symbol) else {
        return Err(HuffmanError::EosInString);
    };
    if let Some(slot) = out.get_mut(*len) {
        *slot = symbol;
    }
    *len += 1;
    Ok(bits)
}

/// Length in bytes of the Huffman coding of `input`, padding included; lets
/// the encoder pick the shorter representation before writing anything.
pub(crate) fn encoded_len(input: &[u8]) -> usize {
    let bits: u64 = input
        .iter()
        .map(|&b| u64::from(CODES[usize::from(b)].1))
        .sum();
    // At most 30 bits per input byte: fits in usize whenever `input` does.
    usize::try_from(bits.div_ceil(8)).unwrap_or(usize::MAX)
}

/// Appends the Huffman coding of `input`, padded with the most significant
/// bits of EOS (ones) to a whole byte. Its length, `coded_len`, is what
/// [`encoded_len`] gave (the caller needed it first, to choose the coding
/// and write the length prefix), so its room is made once and filled four
/// bytes at a time.
pub(crate) fn encode(input: &[u8], coded_len: usize, dst: &mut BytesMut) {
    debug_assert_eq!(coded_len, encoded_len(input));
    let start = dst.len();
    dst.resize(start + coded_len, 0);
    let out = &mut dst[start..];
    // Pending bits are the low `pending` bits of `acc`: under 32 before a
    // code is added, so at most 32 + 30 after, and a u64 has room. Bits
    // shifted out at the top have already been written.
    let mut acc: u64 = 0;
    let mut pending: u32 = 0;
    let mut at = 0;
    for &byte in input {
        let (code, len) = CODES[usize::from(byte)];
        acc = (acc << len) | u64::from(code);
        pending += u32::from(len);
        if pending >= 32 {
            pending -= 32;
            let word = (acc >> pending) as u32;
            if let Some(slot) = out.get_mut(at..at + 4) {
                slot.copy_from_slice(&word.to_be_bytes());
            }
            at += 4;
        }
    }
    let pad = (8 - pending % 8) % 8;
    acc = (acc << pad) | ((1 << pad) - 1);
    pending += pad;
    while pending > 0 {
        pending -= 8;
        if let Some(slot) = out.get_mut(at) {
            *slot = (acc >> pending) as u8;
        }
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    fn encode_vec(input: &[u8]) -> Vec<u8> {
        let mut dst = BytesMut::new();
        encode(input, encoded_len(input), &mut dst);
        dst.to_vec()
    }

    #[test]
    fn code_lengths_lie_between_the_bounds() {
        assert_eq!(CODE_LENGTHS.iter().min(), Some(&MIN_CODE_LEN));
        assert_eq!(CODE_LENGTHS.iter().max(), Some(&MAX_CODE_LEN));
    }

    #[test]
    fn codes_match_appendix_b_samples() {
        // A few rows of Appendix B, including both ends of the length range.
        assert_eq!(CODES[0], (0x1ff8, 13));
        assert_eq!(CODES[usize::from(b'0')], (0x0, 5));
        assert_eq!(CODES[usize::from(b'a')], (0x3, 5));
        assert_eq!(CODES[usize::from(b' ')], (0x14, 6));
        assert_eq!(CODES[usize::from(b'A')], (0x21, 6));
        assert_eq!(CODES[usize::from(b'z')], (0x7b, 7));
        assert_eq!(CODES[usize::from(b'~')], (0x1ffd, 13));
        assert_eq!(CODES[10], (0x3fff_fffc, 30));
        assert_eq!(CODES[255], (0x3ff_ffee, 26));
        assert_eq!(CODES[EOS], (0x3fff_ffff, 30));
    }

    #[test]
    fn code_is_complete_prefix_code() {
        // Kraft equality: a complete code has sum(2^-len) == 1.
        let sum: u64 = CODE_LENGTHS.iter().map(|&l| 1u64 << (30 - l)).sum();
        assert_eq!(sum, 1 << 30);
    }

    #[test]
    fn rfc_c4_strings() {
        let cases: [(&[u8], &str); 4] = [
            (b"www.example.com", "f1e3c2e5f23a6ba0ab90f4ff"),
            (b"no-cache", "a8eb10649cbf"),
            (b"custom-key", "25a849e95ba97d7f"),
            (b"custom-value", "25a849e95bb8e8b4bf"),
        ];
        for (plain, hex) in cases {
            let coded: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            assert_eq!(encode_vec(plain), coded);
            assert_eq!(encoded_len(plain), coded.len());
            assert_eq!(decode_vec(&coded).unwrap(), plain);
        }
    }

    /// Strings decoded one after another into one chunk each get their
    /// own bytes, whether they fit in what is left of the chunk or need a
    /// new one (a string longer than a chunk gets one of its size); a
    /// failed decode leaves the chunk empty for the next.
    #[test]
    fn strings_cut_from_chunks_keep_their_bytes() {
        let mut chunk = BytesMut::new();
        let mut decoded = Vec::new();
        for len in (0..1400).step_by(7) {
            let text: Vec<u8> = (0..len).map(|i| b"a0/-%Zz"[i % 7]).collect();
            let coded = encode_vec(&text);
            decoded.push((text, decode(&coded, &mut chunk).unwrap()));
            assert!(chunk.is_empty());
            assert_eq!(
                decode(&[0xff, 0xff, 0xff, 0xff], &mut chunk),
                Err(HuffmanError::EosInString)
            );
            assert!(chunk.is_empty());
        }
        for (text, bytes) in decoded {
            assert_eq!(bytes, text, "{} bytes", text.len());
        }
    }

    #[test]
    fn every_symbol_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode_vec(&encode_vec(&all)).unwrap(), all);
    }

    #[test]
    fn rejects_eos() {
        // EOS (30 ones) right at the start, padded with two more ones.
        assert_eq!(decode_vec(&[0xff; 4]), Err(HuffmanError::EosInString));
        // 'a' (00011) then EOS.
        assert_eq!(
            decode_vec(&[0x1f, 0xff, 0xff, 0xff, 0xff]),
            Err(HuffmanError::EosInString)
        );
    }

    #[test]
    fn rejects_bad_padding() {
        // A whole byte of ones is 8 bits of padding.
        assert_eq!(decode_vec(&[0xff]), Err(HuffmanError::PaddingTooLong));
        // 'a' (00011) + 111 padding is fine; one extra 0xff byte is not.
        assert_eq!(decode_vec(&[0x1f]).unwrap(), b"a");
        assert_eq!(decode_vec(&[0x1f, 0xff]), Err(HuffmanError::PaddingTooLong));
        // 'a' followed by 000 padding.
        assert_eq!(decode_vec(&[0x18]), Err(HuffmanError::PaddingNotEos));
        // 'a' followed by 110 padding.
        assert_eq!(decode_vec(&[0x1e]), Err(HuffmanError::PaddingNotEos));
        assert_eq!(decode_vec(&[]).unwrap(), b"");
    }

    fn decode_vec(input: &[u8]) -> Result<Vec<u8>, HuffmanError> {
        decode(input, &mut BytesMut::new()).map(|b| b.to_vec())
    }

    /// §5.2 read literally: the code tree walked a bit at a time.
    fn decode_bit_by_bit(input: &[u8]) -> Result<Vec<u8>, HuffmanError> {
        let tree = build_tree();
        let mut out = Vec::new();
        let (mut node, mut depth, mut ones) = (0usize, 0, true);
        for i in 0..input.len() * 8 {
            let bit = (input[i / 8] >> (7 - i % 8)) & 1;
            let child = tree[node][usize::from(bit)];
            depth += 1;
            ones &= bit == 1;
            if child & LEAF == 0 {
                node = usize::from(child);
                continue;
            }
            let symbol = usize::from(child & !LEAF);
            if symbol == EOS {
                return Err(HuffmanError::EosInString);
            }
            out.push(u8::try_from(symbol).unwrap());
            (node, depth, ones) = (0, 0, true);
        }
        match (depth, ones) {
            (0, _) => Ok(out),
            (_, false) => Err(HuffmanError::PaddingNotEos),
            (1..=7, true) => Ok(out),
            (_, true) => Err(HuffmanError::PaddingTooLong),
        }
    }

    /// Every string of one or two octets decodes as the bit-by-bit walk
    /// does: each end of a string, padding and error.
    #[test]
    fn short_strings_decode_as_the_tree_walk_does() {
        for a in 0..=255u8 {
            assert_eq!(decode_vec(&[a]), decode_bit_by_bit(&[a]), "{a:02x}");
            for b in 0..=255u8 {
                let input = [a, b];
                assert_eq!(
                    decode_vec(&input),
                    decode_bit_by_bit(&input),
                    "{input:02x?}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn arbitrary_input_never_panics(input in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(decoded) = decode_vec(&input) {
                // Whatever decodes must re-encode to the same bytes: the
                // padding rules leave exactly one valid coding per string.
                prop_assert_eq!(encode_vec(&decoded), input);
            }
        }

        #[test]
        fn decodes_as_the_tree_walk_does(input in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(decode_vec(&input), decode_bit_by_bit(&input));
        }

        /// Codes of every length among short ones, and a bad last octet
        /// or none: what real strings and their corruptions look like.
        #[test]
        fn coded_strings_decode_as_the_tree_walk_does(
            text in proptest::collection::vec(any::<u8>(), 0..64),
            last in proptest::option::of(any::<u8>()),
        ) {
            let mut input = encode_vec(&text);
            if let (Some(last), Some(end)) = (last, input.last_mut()) {
                *end = last;
            }
            prop_assert_eq!(decode_vec(&input), decode_bit_by_bit(&input));
        }

        #[test]
        fn round_trip(input in proptest::collection::vec(any::<u8>(), 0..256)) {
            let coded = encode_vec(&input);
            prop_assert_eq!(coded.len(), encoded_len(&input));
            prop_assert_eq!(decode_vec(&coded).unwrap(), input);
        }
    }
}
