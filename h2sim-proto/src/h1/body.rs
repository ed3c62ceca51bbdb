//! Received bodies (RFC 9112 §6, §7): by length, chunked, or to the end of
//! the connection. Body bytes leave as slices of the input, never copied.

use bytes::{Buf, Bytes, BytesMut};

use super::parse::{self, BodyKind};
use crate::error::Http1Error;
use crate::hpack::HeaderField;

/// The longest chunk-size line we wait for. Extensions are ignored (§7.1.1)
/// but have to be read past, and without a bound a peer could make us
/// buffer one forever.
const MAX_CHUNK_LINE: usize = 4096;

/// Limits that apply while decoding one body.
#[derive(Debug, Clone, Copy)]
pub(super) struct BodyLimits {
    /// Largest body accepted, in decoded bytes.
    pub(super) max_body: u64,
    /// Largest trailer section, like a head.
    pub(super) max_head_size: usize,
    pub(super) max_headers: usize,
}

/// One step of decoding.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Decoded {
    /// Body bytes; `end` when they complete the body.
    Data { data: Bytes, end: bool },
    /// The body is complete, with these trailers (empty when there were none).
    End(Vec<HeaderField>),
    /// Nothing more can be decoded until more input arrives.
    Incomplete,
}

/// The decoder of one body in progress.
#[derive(Debug)]
pub(super) enum BodyDecoder {
    Length { remaining: u64 },
    Chunked { state: Chunk, received: u64 },
    Close,
}

/// Where a chunked body stands (RFC 9112 §7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Chunk {
    /// Expecting a chunk-size line.
    Size,
    /// Inside chunk-data.
    Data { remaining: u64 },
    /// Expecting the CRLF after chunk-data.
    DataEnd,
    /// After the last chunk: the trailer section, scanned this far.
    Trailers { scanned: usize },
}

impl BodyDecoder {
    /// The decoder for `kind`, or None when there is no body.
    pub(super) fn new(kind: BodyKind) -> Option<Self> {
        match kind {
            BodyKind::None | BodyKind::Length(0) => None,
            BodyKind::Length(remaining) => Some(BodyDecoder::Length { remaining }),
            BodyKind::Chunked => Some(BodyDecoder::Chunked {
                state: Chunk::Size,
                received: 0,
            }),
            BodyKind::Close => Some(BodyDecoder::Close),
        }
    }

    /// Whether only the end of the connection can end this body.
    pub(super) fn ends_at_close(&self) -> bool {
        matches!(self, BodyDecoder::Close)
    }

    /// Decodes the next piece from the front of `input`.
    pub(super) fn decode(
        &mut self,
        input: &mut BytesMut,
        limits: &BodyLimits,
    ) -> Result<Decoded, Http1Error> {
        match self {
            BodyDecoder::Length { remaining } => {
                if input.is_empty() {
                    return Ok(Decoded::Incomplete);
                }
                let n = take_len(*remaining, input.len());
                *remaining -= n as u64;
                Ok(Decoded::Data {
                    data: input.split_to(n).freeze(),
                    end: *remaining == 0,
                })
            }
            BodyDecoder::Close => {
                if input.is_empty() {
                    return Ok(Decoded::Incomplete);
                }
                Ok(Decoded::Data {
                    data: input.split().freeze(),
                    end: false,
                })
            }
            BodyDecoder::Chunked { state, received } => {
                decode_chunked(state, received, input, limits)
            }
        }
    }
}

/// How many of `available` input bytes belong to a body with `remaining`.
fn take_len(remaining: u64, available: usize) -> usize {
    usize::try_from(remaining).map_or(available, |r| r.min(available))
}

fn decode_chunked(
    state: &mut Chunk,
    received: &mut u64,
    input: &mut BytesMut,
    limits: &BodyLimits,
) -> Result<Decoded, Http1Error> {
    loop {
        match *state {
            Chunk::Size => {
                let Some(lf) = input.iter().take(MAX_CHUNK_LINE).position(|&b| b == b'\n') else {
                    if input.len() >= MAX_CHUNK_LINE {
                        return Err(Http1Error::InvalidChunk);
                    }
                    return Ok(Decoded::Incomplete);
                };
                let size = chunk_size(input.get(..lf).unwrap_or_default())?;
                input.advance(lf + 1);
                let total = received.saturating_add(size);
                if total > limits.max_body {
                    return Err(Http1Error::BodyTooLarge {
                        size: total,
                        max: limits.max_body,
                    });
                }
                *state = if size == 0 {
                    Chunk::Trailers { scanned: 0 }
                } else {
                    Chunk::Data { remaining: size }
                };
            }
            Chunk::Data { remaining } => {
                if input.is_empty() {
                    return Ok(Decoded::Incomplete);
                }
                let n = take_len(remaining, input.len());
                let left = remaining - n as u64;
                *received = received.saturating_add(n as u64);
                *state = if left == 0 {
                    Chunk::DataEnd
                } else {
                    Chunk::Data { remaining: left }
                };
                return Ok(Decoded::Data {
                    data: input.split_to(n).freeze(),
                    end: false,
                });
            }
            Chunk::DataEnd => match input.get(..2) {
                Some(b"\r\n") => {
                    input.advance(2);
                    *state = Chunk::Size;
                }
                Some(_) => return Err(Http1Error::InvalidChunk),
                None if input.first().is_none_or(|&b| b == b'\r') => {
                    return Ok(Decoded::Incomplete);
                }
                None => return Err(Http1Error::InvalidChunk),
            },
            Chunk::Trailers { scanned } => return trailers(state, scanned, input, limits),
        }
    }
}

/// The trailer section after the last chunk (RFC 9112 §7.1.2), bounded like
/// a head.
fn trailers(
    state: &mut Chunk,
    mut scanned: usize,
    input: &mut BytesMut,
    limits: &BodyLimits,
) -> Result<Decoded, Http1Error> {
    match (input.first(), input.get(1)) {
        (Some(b'\r'), Some(b'\n')) => {
            input.advance(2);
            return Ok(Decoded::End(Vec::new()));
        }
        (None, _) | (Some(b'\r'), None) => return Ok(Decoded::Incomplete),
        // The chunked body ends with CRLF; a bare LF or CR here would let
        // two parsers disagree on where the next message starts.
        (Some(b'\n' | b'\r'), _) => return Err(Http1Error::InvalidChunk),
        _ => {}
    }
    let Some(end) = parse::find_head_end(input, &mut scanned) else {
        if input.len() > limits.max_head_size {
            return Err(Http1Error::HeadTooLarge {
                size: input.len(),
                max: limits.max_head_size,
            });
        }
        *state = Chunk::Trailers { scanned };
        return Ok(Decoded::Incomplete);
    };
    if end > limits.max_head_size {
        return Err(Http1Error::HeadTooLarge {
            size: end,
            max: limits.max_head_size,
        });
    }
    let section = input.split_to(end).freeze();
    parse::parse_trailers(&section, limits.max_headers).map(Decoded::End)
}

/// The size from a chunk-size line without its LF: `1*HEXDIG`, optional
/// whitespace and ignored extensions, then CR (RFC 9112 §7.1, §7.1.1).
/// Stricter than httparse's `parse_chunk_size`, which takes an empty size
/// as 0: lenient chunk parsing is a smuggling vector.
fn chunk_size(line: &[u8]) -> Result<u64, Http1Error> {
    let line = line.strip_suffix(b"\r").ok_or(Http1Error::InvalidChunk)?;
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let (hex, rest) = line.split_at(digits);
    if hex.is_empty() {
        return Err(Http1Error::InvalidChunk);
    }
    let rest = rest.trim_ascii_start();
    if !(rest.is_empty() || rest.starts_with(b";")) || rest.iter().any(|&b| b == b'\r' || b == 0) {
        return Err(Http1Error::InvalidChunk);
    }
    hex.iter()
        .try_fold(0u64, |n, &b| {
            let digit = char::from(b).to_digit(16)?;
            n.checked_mul(16)?.checked_add(u64::from(digit))
        })
        .ok_or(Http1Error::InvalidChunk)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: BodyLimits = BodyLimits {
        max_body: 1 << 20,
        max_head_size: 1024,
        max_headers: 10,
    };

    /// Decodes everything in `input`, returning the body, the trailers when
    /// it ended, and what was left.
    fn run(
        decoder: &mut BodyDecoder,
        input: &mut BytesMut,
        limits: &BodyLimits,
    ) -> Result<(Vec<u8>, Option<Vec<HeaderField>>), Http1Error> {
        let mut body = Vec::new();
        loop {
            match decoder.decode(input, limits)? {
                Decoded::Data { data, end } => {
                    body.extend_from_slice(&data);
                    if end {
                        return Ok((body, Some(Vec::new())));
                    }
                }
                Decoded::End(trailers) => return Ok((body, Some(trailers))),
                Decoded::Incomplete => return Ok((body, None)),
            }
        }
    }

    fn chunked() -> BodyDecoder {
        BodyDecoder::new(BodyKind::Chunked).unwrap()
    }

    #[test]
    fn length_body_stops_at_its_end() {
        let mut d = BodyDecoder::new(BodyKind::Length(5)).unwrap();
        let mut input = BytesMut::from(&b"helloGET"[..]);
        let (body, end) = run(&mut d, &mut input, &LIMITS).unwrap();
        assert_eq!(body, b"hello");
        assert!(end.is_some());
        assert_eq!(&input[..], b"GET");
        assert!(BodyDecoder::new(BodyKind::Length(0)).is_none());
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let mut d = chunked();
        let mut input = BytesMut::from(
            &b"5;name=value\r\nhello\r\n6 ; x\r\n world\r\n0\r\nChecksum: 1\r\n\r\nNEXT"[..],
        );
        let (body, trailers) = run(&mut d, &mut input, &LIMITS).unwrap();
        assert_eq!(body, b"hello world");
        assert_eq!(trailers.unwrap(), [HeaderField::new("checksum", "1")]);
        assert_eq!(&input[..], b"NEXT");
    }

    #[test]
    fn chunked_a_byte_at_a_time() {
        let wire = b"3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: v\r\n\r\n";
        let mut d = chunked();
        let mut input = BytesMut::new();
        let mut body = Vec::new();
        let mut trailers = None;
        for &b in wire {
            input.extend_from_slice(&[b]);
            let (part, end) = run(&mut d, &mut input, &LIMITS).unwrap();
            body.extend_from_slice(&part);
            if end.is_some() {
                trailers = end;
            }
        }
        assert_eq!(body, b"abc0123456789abcdef");
        assert_eq!(trailers.unwrap(), [HeaderField::new("t", "v")]);
        assert!(input.is_empty());
    }

    #[test]
    fn bad_chunks_are_refused() {
        for wire in [
            &b"\r\n"[..],
            b";ext\r\n",
            b"5\n",
            b"x\r\n",
            b"5 5\r\n",
            b"11111111111111111\r\n",
            b"3\r\nabcXY",
            b"3\r\nabc\n\n",
            b"0\r\n\nGET",
        ] {
            let mut input = BytesMut::from(wire);
            assert_eq!(
                run(&mut chunked(), &mut input, &LIMITS),
                Err(Http1Error::InvalidChunk),
                "{wire:?}"
            );
        }
        let mut input = BytesMut::from(&vec![b'1'; MAX_CHUNK_LINE][..]);
        assert_eq!(
            run(&mut chunked(), &mut input, &LIMITS),
            Err(Http1Error::InvalidChunk)
        );
    }

    #[test]
    fn chunked_growth_past_the_limit() {
        let limits = BodyLimits {
            max_body: 8,
            ..LIMITS
        };
        let mut input = BytesMut::from(&b"5\r\nhello\r\n5\r\n"[..]);
        assert_eq!(
            run(&mut chunked(), &mut input, &limits),
            Err(Http1Error::BodyTooLarge { size: 10, max: 8 })
        );
    }

    #[test]
    fn trailers_are_bounded() {
        let limits = BodyLimits {
            max_head_size: 8,
            ..LIMITS
        };
        let mut input = BytesMut::from(&b"0\r\nLong-Trailer: 1"[..]);
        assert!(matches!(
            run(&mut chunked(), &mut input, &limits),
            Err(Http1Error::HeadTooLarge { .. })
        ));
    }

    #[test]
    fn close_body_takes_everything() {
        let mut d = BodyDecoder::new(BodyKind::Close).unwrap();
        assert!(d.ends_at_close());
        let mut input = BytesMut::from(&b"all of it"[..]);
        let (body, end) = run(&mut d, &mut input, &LIMITS).unwrap();
        assert_eq!(body, b"all of it");
        assert!(end.is_none());
    }
}
