//! Outgoing messages (RFC 9112 §3, §4, §6, §7): start lines and fields go
//! into one small buffer that is handed out in pieces; body `Bytes` pass
//! through as their own pieces, never copied.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};

use super::parse::is_connection_specific;
use crate::hpack::HeaderField;
use crate::message::{RequestHead, ResponseHead};
use crate::trim::Trim;

/// How the body of a message we send is delimited (RFC 9112 §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Framing {
    /// No body may follow (HEAD, 1xx, 204, 304, or a length of 0): body
    /// bytes the application sends anyway are dropped.
    None,
    /// The application's own Content-Length.
    Length,
    /// The chunked transfer coding (§7.1).
    Chunked,
    /// Until we close the connection (§6.3 item 8; HTTP/1.0 peers).
    Close,
}

/// Room a head (or a chunk line, or trailers) starts with: below it, the
/// next one starts on a fresh [`HEAD_BLOCK`]. Most heads are a few hundred
/// bytes; a larger one grows the buffer as it is written.
const HEAD_ROOM: usize = 512;
/// What `wbuf` asks for at once. Heads written one at a time would each
/// grow it by a few bytes, which reallocates, and split off, a buffer that
/// grew as a `Vec` allocates again to be shared: three allocator calls a
/// response. A block is split among the heads of many responses, and once
/// they are written it is taken back in place, so a connection that
/// answers in turn allocates nothing. [`Output::trim`] frees it when the
/// connection goes quiet, which for a busy one is only after it has been
/// idle a while (`host::Driver`'s delayed trim): every connection under
/// load holds its block, so it is small. At 1 KiB (five heads of a
/// typical size) 10,000 keep-alive connections under wrk peaked at
/// 51-60 MB; at 4 KiB, 57-72 MB (`bench/connections.sh`).
const HEAD_BLOCK: usize = 1024;

/// Bytes waiting to be written: heads and chunk lines gather in `wbuf`,
/// which is split off (no copy) whenever a body piece must follow it.
#[derive(Debug, Default)]
pub(super) struct Output {
    wbuf: BytesMut,
    chunks: VecDeque<Bytes>,
    /// Bytes in `chunks`.
    chunked: usize,
    /// Body bytes queued so far (for statistics).
    body_bytes: u64,
}

impl Output {
    /// The buffer a head is written into, with [`HEAD_ROOM`] at least.
    pub(super) fn buf(&mut self) -> &mut BytesMut {
        if self.wbuf.capacity() - self.wbuf.len() < HEAD_ROOM {
            // What the buffer holds goes out as a chunk of its own first,
            // so that nothing is copied into the new room: `BytesMut`
            // grants exactly the room asked for when it reuses its
            // allocation, so the block is asked for whole.
            self.flush();
            self.wbuf.reserve(HEAD_BLOCK);
        }
        &mut self.wbuf
    }

    fn flush(&mut self) {
        if !self.wbuf.is_empty() {
            self.chunked += self.wbuf.len();
            self.chunks.push_back(self.wbuf.split().freeze());
        }
    }

    /// The next piece to write.
    pub(super) fn pop(&mut self) -> Option<Bytes> {
        if self.chunks.is_empty() {
            self.flush();
        }
        let chunk = self.chunks.pop_front()?;
        self.chunked -= chunk.len();
        Some(chunk)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.wbuf.is_empty() && self.chunks.is_empty()
    }

    /// Bytes waiting to be written.
    pub(super) fn len(&self) -> usize {
        self.chunked + self.wbuf.len()
    }

    /// Gives back the buffer and the chunk queue once both are empty.
    pub(super) fn trim(&mut self) {
        self.wbuf.trim();
        self.chunks.trim();
    }

    /// Drops everything not yet handed out.
    pub(super) fn clear(&mut self) {
        self.wbuf.clear();
        self.chunks.clear();
        self.chunked = 0;
    }

    pub(super) fn body_bytes(&self) -> u64 {
        self.body_bytes
    }

    /// A body piece as its own chunk, after whatever was written before it.
    fn body(&mut self, data: Bytes) {
        self.body_bytes += data.len() as u64;
        if !data.is_empty() {
            self.flush();
            self.chunked += data.len();
            self.chunks.push_back(data);
        }
    }

    /// Body bytes, framed for `framing`; `end` completes the body.
    pub(super) fn data(&mut self, framing: Framing, data: Bytes, end: bool) {
        match framing {
            Framing::None => {}
            Framing::Length | Framing::Close => self.body(data),
            Framing::Chunked => {
                if !data.is_empty() {
                    let buf = self.buf();
                    put_hex(buf, data.len() as u64);
                    buf.extend_from_slice(b"\r\n");
                    self.body(data);
                    self.wbuf.extend_from_slice(b"\r\n");
                }
                if end {
                    self.buf().extend_from_slice(b"0\r\n\r\n");
                }
            }
        }
    }

    /// Trailers, which end the body. Only the chunked coding can carry them
    /// (RFC 9112 §7.1.2); with any other framing they are dropped, as a
    /// recipient may drop them anyway (RFC 9110 §6.5).
    pub(super) fn trailers(&mut self, framing: Framing, fields: &[HeaderField]) {
        if framing == Framing::Chunked {
            let buf = self.buf();
            buf.extend_from_slice(b"0\r\n");
            put_fields(buf, fields, false);
            buf.extend_from_slice(b"\r\n");
        }
    }
}

/// The reason phrase for `status`: the one RFC 9110 §15 gives, or a
/// generic one by class. Recipients ignore it (RFC 9112 §4), people don't.
pub(super) fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        102 => "Processing",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        207 => "Multi-Status",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        511 => "Network Authentication Required",
        _ => match status / 100 {
            1 => "Informational",
            2 => "Success",
            3 => "Redirection",
            4 => "Client Error",
            _ => "Server Error",
        },
    }
}

/// `HTTP/1.1 200 OK` and its CRLF. We answer HTTP/1.0 requests as
/// HTTP/1.1 too: the version says what we speak (RFC 9112 §2.3).
/// `status` must have three digits.
pub(super) fn put_status_line(buf: &mut BytesMut, status: u16) {
    buf.extend_from_slice(b"HTTP/1.1 ");
    put_decimal(buf, u64::from(status));
    buf.extend_from_slice(b" ");
    buf.extend_from_slice(reason_phrase(status).as_bytes());
    buf.extend_from_slice(b"\r\n");
}

/// The request line and Host (RFC 9112 §3, §3.2): origin-form from the
/// path, authority-form for CONNECT.
pub(super) fn put_request_line(buf: &mut BytesMut, head: &RequestHead) {
    buf.extend_from_slice(&head.method);
    buf.extend_from_slice(b" ");
    if head.method.as_ref() == b"CONNECT" {
        buf.extend_from_slice(&head.authority);
    } else if head.path.is_empty() {
        buf.extend_from_slice(b"/");
    } else {
        buf.extend_from_slice(&head.path);
    }
    buf.extend_from_slice(b" HTTP/1.1\r\n");
    put_field(buf, b"host", &head.authority);
}

pub(super) fn put_field(buf: &mut BytesMut, name: &[u8], value: &[u8]) {
    buf.extend_from_slice(name);
    buf.extend_from_slice(b": ");
    buf.extend_from_slice(value);
    buf.extend_from_slice(b"\r\n");
}

/// `content-length: <length>`, written straight into the head: a body
/// whose whole size is known goes by it, allocating nothing.
pub(super) fn put_content_length(buf: &mut BytesMut, length: u64) {
    buf.extend_from_slice(b"content-length: ");
    put_decimal(buf, length);
    buf.extend_from_slice(b"\r\n");
}

/// The application's fields, less the connection-level ones this layer
/// writes itself (and `host` on requests, written from the authority).
pub(super) fn put_fields(buf: &mut BytesMut, fields: &[HeaderField], request: bool) {
    for f in fields {
        if is_connection_specific(&f.name) || (request && f.name.eq_ignore_ascii_case(b"host")) {
            continue;
        }
        put_field(buf, &f.name, &f.value);
    }
}

/// [`put_fields`] less any `content-length`: for a 2xx to CONNECT, which
/// has no content and must not say a length (RFC 9110 §8.6).
pub(super) fn put_fields_without_length(buf: &mut BytesMut, fields: &[HeaderField]) {
    for f in fields {
        if is_connection_specific(&f.name) || f.name.eq_ignore_ascii_case(b"content-length") {
            continue;
        }
        put_field(buf, &f.name, &f.value);
    }
}

/// Whether a request with this method and no content should still say
/// `content-length: 0`: not for methods whose requests do not carry content
/// (RFC 9110 §8.6: "SHOULD NOT send a Content-Length ... when the method
/// semantics do not anticipate such data").
pub(super) fn method_expects_content(method: &[u8]) -> bool {
    !matches!(
        method,
        b"GET" | b"HEAD" | b"DELETE" | b"OPTIONS" | b"TRACE" | b"CONNECT"
    )
}

/// A short `text/plain` response that closes the connection, naming what
/// was wrong with the request.
pub(super) fn error_response(status: u16, text: String) -> (ResponseHead, Bytes) {
    let body = Bytes::from(text);
    let head = ResponseHead::new(status)
        .field("content-type", "text/plain")
        .field("content-length", body.len().to_string());
    (head, body)
}

pub(super) fn put_decimal(buf: &mut BytesMut, n: u64) {
    put_digits(buf, n, 10);
}

fn put_hex(buf: &mut BytesMut, n: u64) {
    put_digits(buf, n, 16);
}

fn put_digits(buf: &mut BytesMut, mut n: u64, radix: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b"0123456789abcdef"[(n % radix) as usize];
        n /= radix;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(out: &mut Output) -> Vec<Bytes> {
        std::iter::from_fn(|| out.pop()).collect()
    }

    /// The heads of a turn's responses (100 pipelined requests answered
    /// at once, every piece held until the turn's write) lie side by side
    /// in as few blocks as hold them, turn after turn. Grown a head at a time, the
    /// buffer was allocated anew for each head while the earlier ones were
    /// held, and reallocated as it grew: three allocator calls a response.
    #[test]
    fn the_heads_of_a_turn_share_a_block() {
        let mut out = Output::default();
        for _ in 0..5 {
            let mut held = Vec::new();
            for _ in 0..100 {
                let buf = out.buf();
                put_status_line(buf, 200);
                put_field(buf, b"content-length", b"5");
                buf.extend_from_slice(b"\r\n");
                out.data(Framing::Length, Bytes::from_static(b"hello"), true);
                held.extend(drain(&mut out));
            }
            let heads: Vec<&Bytes> = held.iter().step_by(2).collect();
            assert!(heads.iter().all(|h| h.starts_with(b"HTTP/1.1 200 OK\r\n")));
            // A head that does not follow the one before it starts a block.
            let starts = heads
                .windows(2)
                .filter(|w| w[0].as_ptr().wrapping_add(w[0].len()) != w[1].as_ptr())
                .count();
            // A block takes heads until less than `HEAD_ROOM` is left.
            let per_block = (HEAD_BLOCK - HEAD_ROOM) / heads[0].len() + 1;
            let most = heads.len().div_ceil(per_block);
            assert!(starts <= most, "{starts} blocks in a turn, {most} at most");
        }
    }

    #[test]
    fn status_lines() {
        let mut buf = BytesMut::new();
        for status in [200, 404, 431, 299, 599, 999] {
            put_status_line(&mut buf, status);
        }
        assert_eq!(
            &buf[..],
            b"HTTP/1.1 200 OK\r\nHTTP/1.1 404 Not Found\r\n\
              HTTP/1.1 431 Request Header Fields Too Large\r\nHTTP/1.1 299 Success\r\n\
              HTTP/1.1 599 Server Error\r\nHTTP/1.1 999 Server Error\r\n"
        );
    }

    #[test]
    fn numbers() {
        let mut buf = BytesMut::new();
        put_decimal(&mut buf, 0);
        put_decimal(&mut buf, u64::MAX);
        put_hex(&mut buf, 0xbeef);
        assert_eq!(&buf[..], b"018446744073709551615beef");
    }

    #[test]
    fn chunked_body_passes_data_through() {
        let mut out = Output::default();
        let data = Bytes::from_static(b"0123456789abcdef0");
        out.data(Framing::Chunked, data.clone(), false);
        out.data(Framing::Chunked, Bytes::new(), false);
        out.trailers(Framing::Chunked, &[HeaderField::new("t", "v")]);
        let chunks = drain(&mut out);
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[0], "11\r\n");
        assert_eq!(chunks[1].as_ptr(), data.as_ptr(), "no copy");
        assert_eq!(chunks[2], "\r\n0\r\nt: v\r\n\r\n");
    }

    #[test]
    fn framings() {
        let mut out = Output::default();
        out.data(Framing::None, Bytes::from_static(b"dropped"), true);
        out.trailers(Framing::Length, &[HeaderField::new("t", "v")]);
        assert!(out.is_empty());
        out.data(Framing::Chunked, Bytes::from_static(b"ab"), true);
        out.data(Framing::Close, Bytes::from_static(b"cd"), false);
        let wire: Vec<u8> = drain(&mut out).concat();
        assert_eq!(wire, b"2\r\nab\r\n0\r\n\r\ncd");
    }

    #[test]
    fn request_line_forms() {
        let mut buf = BytesMut::new();
        let head = RequestHead::new("GET", "http", "h", "").field("Host", "other");
        put_request_line(&mut buf, &head);
        put_fields(&mut buf, &head.fields, true);
        let head = RequestHead::new("CONNECT", "", "h:443", "");
        put_request_line(&mut buf, &head);
        assert_eq!(
            &buf[..],
            b"GET / HTTP/1.1\r\nhost: h\r\nCONNECT h:443 HTTP/1.1\r\nhost: h:443\r\n"
        );
    }
}
