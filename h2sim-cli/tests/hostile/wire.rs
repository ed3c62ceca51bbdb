//! HTTP/2 frames built by hand, valid or not (RFC 9113 §4.1): an attacking
//! peer must be able to send what no encoder would.

use bytes::Bytes;

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

/// END_STREAM on DATA/HEADERS, ACK on SETTINGS/PING.
pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;

pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;

/// One frame: the 9-byte head, then `payload` as is.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut out = Vec::with_capacity(9 + payload.len());
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

pub fn settings(values: &[(u16, u32)]) -> Vec<u8> {
    let mut payload = Vec::new();
    for (id, value) in values {
        payload.extend_from_slice(&id.to_be_bytes());
        payload.extend_from_slice(&value.to_be_bytes());
    }
    frame(SETTINGS, 0, 0, &payload)
}

pub fn settings_ack() -> Vec<u8> {
    frame(SETTINGS, ACK, 0, &[])
}

pub fn ping(ack: bool, payload: [u8; 8]) -> Vec<u8> {
    frame(PING, if ack { ACK } else { 0 }, 0, &payload)
}

pub fn window_update(stream: u32, increment: u32) -> Vec<u8> {
    frame(WINDOW_UPDATE, 0, stream, &increment.to_be_bytes())
}

pub fn rst_stream(stream: u32, code: u32) -> Vec<u8> {
    frame(RST_STREAM, 0, stream, &code.to_be_bytes())
}

pub fn goaway(last_stream: u32, code: u32) -> Vec<u8> {
    let mut payload = last_stream.to_be_bytes().to_vec();
    payload.extend_from_slice(&code.to_be_bytes());
    frame(GOAWAY, 0, 0, &payload)
}

/// A PRIORITY frame making `stream` depend on `on` (RFC 9113 §6.3).
pub fn priority(stream: u32, on: u32, weight: u8) -> Vec<u8> {
    let mut payload = on.to_be_bytes().to_vec();
    payload.push(weight);
    frame(PRIORITY, 0, stream, &payload)
}

/// `fields` as one HPACK block of literals without indexing and without
/// Huffman (RFC 7541 §6.2.2): no table state, so blocks can be sent in any
/// order, dropped, or put after an attack's own table entries.
pub fn block(fields: &[(&str, &str)]) -> Bytes {
    let mut out = Vec::new();
    for (name, value) in fields {
        literal(0x00, name.as_bytes(), value.as_bytes(), &mut out);
    }
    out.into()
}

/// A request's field block.
pub fn request_block(method: &str, path: &str) -> Bytes {
    block(&[
        (":method", method),
        (":scheme", "http"),
        (":authority", "127.0.0.1"),
        (":path", path),
    ])
}

/// HEADERS carrying a whole request on `stream`.
pub fn request(stream: u32, method: &str, path: &str, end_stream: bool) -> Vec<u8> {
    let flags = END_HEADERS | if end_stream { END_STREAM } else { 0 };
    frame(HEADERS, flags, stream, &request_block(method, path))
}

/// An HPACK integer with an `n`-bit prefix whose high bits are `first`
/// (RFC 7541 §5.1).
pub fn hpack_int(value: usize, n: u32, first: u8, out: &mut Vec<u8>) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128 + 128) as u8);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// A literal field with incremental indexing and a new name, no Huffman
/// (RFC 7541 §6.2.1): what puts an entry into the peer's dynamic table.
pub fn indexed_literal(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    literal(0x40, name, value, out);
}

/// A literal with a new name; `first` picks the kind (RFC 7541 §6.2).
fn literal(first: u8, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.push(first);
    hpack_int(name.len(), 7, 0, out);
    out.extend_from_slice(name);
    hpack_int(value.len(), 7, 0, out);
    out.extend_from_slice(value);
}
