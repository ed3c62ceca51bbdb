//! Received heads: finding where one ends, parsing it with httparse, and
//! turning it into the protocol-neutral `RequestHead` / `ResponseHead` and
//! the body framing it declares (`BodyKind`), which `body` then decodes.
//!
//! The head is cut off the input and frozen once; method, path, field names
//! (when already lowercase) and values are then `Bytes` slices of it, so a
//! head costs one `Vec` of fields and no per-value copy.

use std::mem::MaybeUninit;

use bytes::{Buf, Bytes, BytesMut};

use crate::error::{HeadPart, Http1Error};
use crate::hpack::HeaderField;
use crate::message::{RequestHead, ResponseHead, is_authority, is_method};

/// How the end of a body is found (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyKind {
    /// No body at all.
    None,
    /// Content-Length bytes.
    Length(u64),
    /// The chunked transfer coding (§7.1).
    Chunked,
    /// Everything until the peer closes (responses only, §6.3 item 8).
    Close,
}

/// Drops empty lines in front of a start line: RFC 9112 §2.2 asks a server
/// to ignore at least one CRLF before a request-line (old clients add one
/// after a POST body), and we are as lenient before a status line. Returns
/// whether anything was dropped.
pub(super) fn skip_empty_lines(input: &mut BytesMut) -> bool {
    let n = empty_lines_len(input, 0);
    input.advance(n);
    n > 0
}

/// Whether a server's answer can still be HTTP/1.1, from its first bytes
/// (after any empty lines): `Err` names what it is instead, so a server
/// that speaks something else is told at once, not when (if ever) a head
/// end arrives. A lone CR may be the start of an empty line: undecided.
pub(super) fn check_response_start(input: &[u8]) -> Result<(), Http1Error> {
    const START: &[u8] = b"HTTP/";
    let n = input.len().min(START.len());
    if input[..n] == START[..n] || input == b"\r" {
        return Ok(());
    }
    // An HTTP/2 frame head: 24-bit length, type 0x4 (SETTINGS), no flags,
    // stream 0 (RFC 9113 §4.1, §6.5); undecided while it may still be one.
    let settings = |i: usize, b: &u8| i < 3 || *b == u8::from(i == 3) * 0x04;
    if !input
        .iter()
        .take(9)
        .enumerate()
        .all(|(i, b)| settings(i, b))
    {
        return Err(Http1Error::NotHttp);
    }
    if input.len() >= 9 {
        return Err(Http1Error::Http2Answer);
    }
    Ok(())
}

/// Whether a client's bytes (after any empty lines, RFC 9112 §2.2) can
/// still begin a request-line, whose method is a token (RFC 9112 §3,
/// RFC 9110 §5.6.2): `Err` names what they are instead, so a client that
/// speaks something else gets its 400 at once, not when (if ever) a head
/// end arrives. A TLS record (RFC 8446 §5.1: type 22, handshake, then
/// version 3.x) is named, as a client that wants https:// sends one; a
/// lone 22 is taken for one, since no request can follow it either way.
/// A lone CR may be the start of an empty line: undecided.
pub(super) fn check_request_start(input: &[u8]) -> Result<(), Http1Error> {
    const HANDSHAKE: u8 = 0x16;
    match input {
        [] | [b'\r'] => Ok(()),
        [first, ..] if is_method(&[*first]) => Ok(()),
        [HANDSHAKE] | [HANDSHAKE, 0x03, ..] => Err(Http1Error::TlsHandshake),
        [b'\r', ..] => Err(Http1Error::Syntax(HeadPart::LineEnding)),
        _ => Err(Http1Error::Syntax(HeadPart::Method)),
    }
}

/// How many bytes of empty lines (CRLF or a bare LF) `input` starts with,
/// the first `from` of them already known to be such.
pub(super) fn empty_lines_len(input: &[u8], from: usize) -> usize {
    let mut n = from;
    loop {
        match (input.get(n), input.get(n + 1)) {
            (Some(b'\n'), _) => n += 1,
            (Some(b'\r'), Some(b'\n')) => n += 2,
            _ => return n,
        }
    }
}

/// Where the head at the front of `buf` ends: just past its first empty line
/// (RFC 9112 §2.1; a bare LF ends a line too, §2.2). `scanned` remembers how
/// far earlier calls looked, so a head arriving a byte at a time is scanned
/// once, not once per byte.
pub(super) fn find_head_end(buf: &[u8], scanned: &mut usize) -> Option<usize> {
    let mut from = *scanned;
    while let Some(pos) = memchr::memchr(b'\n', buf.get(from..)?) {
        let lf = from + pos;
        match (buf.get(lf + 1), buf.get(lf + 2)) {
            (Some(b'\n'), _) => return Some(lf + 2),
            (Some(b'\r'), Some(b'\n')) => return Some(lf + 3),
            (None, _) | (Some(b'\r'), None) => {
                // The line after this LF may still turn out empty.
                *scanned = lf;
                return None;
            }
            _ => from = lf + 1,
        }
    }
    *scanned = buf.len();
    None
}

/// Fields that describe this connection rather than the message (RFC 9110
/// §7.6.1, RFC 9113 §8.2.2, RFC 7540 §3.2.1). They never reach the
/// application, and the application's own are not sent: framing and
/// persistence are this layer's business.
/// Names are compared without regard to case, as the application's fields
/// might not be lowercase.
pub(super) fn is_connection_specific(name: &[u8]) -> bool {
    [
        &b"connection"[..],
        b"keep-alive",
        b"proxy-connection",
        b"transfer-encoding",
        b"upgrade",
        b"http2-settings",
    ]
    .iter()
    .any(|n| name.eq_ignore_ascii_case(n))
}

/// What the connection-level fields of a received head said.
#[derive(Debug, Default)]
pub(super) struct Controls {
    /// `Connection: close` (RFC 9112 §9.6).
    pub(super) close: bool,
    /// `Connection: keep-alive`, which an HTTP/1.0 peer needs to persist
    /// (RFC 9112 Appendix C.2.2).
    pub(super) keep_alive: bool,
    /// `Connection` names both `Upgrade` and `HTTP2-Settings` (RFC 7540 §3.2).
    pub(super) upgrade_options: bool,
    /// `Upgrade` lists `h2c`.
    pub(super) upgrade_h2c: bool,
    /// Every `HTTP2-Settings` value.
    pub(super) http2_settings: Vec<Bytes>,
    /// `Expect: 100-continue` (RFC 9110 §10.1.1).
    pub(super) expect_continue: bool,
    content_length: ContentLength,
    transfer: Transfer,
    connection_upgrade: bool,
    connection_http2_settings: bool,
}

impl Controls {
    /// Whether the connection may carry another message after this one.
    pub(super) fn persistent(&self, http10: bool) -> bool {
        !self.close && (!http10 || self.keep_alive)
    }

    /// The body length of a request (RFC 9112 §6.3). Anything ambiguous is
    /// refused: a request that two parsers could frame differently is how
    /// requests are smuggled past a proxy.
    pub(super) fn request_body(&self, http10: bool) -> Result<BodyKind, Http1Error> {
        if self.transfer.present {
            if http10 {
                return Err(Http1Error::TransferEncodingInHttp10);
            }
            if self.content_length != ContentLength::Absent {
                return Err(Http1Error::ContentLengthWithTransferEncoding);
            }
            if !self.transfer.chunked_last || self.transfer.chunked > 1 {
                return Err(Http1Error::ChunkedNotFinal);
            }
            if self.transfer.chunked_parameters {
                return Err(Http1Error::ChunkedWithParameters);
            }
            if self.transfer.other {
                return Err(Http1Error::UnsupportedCoding);
            }
            return Ok(BodyKind::Chunked);
        }
        self.content_length.body(BodyKind::None)
    }

    /// The body length of a response to a request with `method` (RFC 9112
    /// §6.3). Codings before the final chunked are left applied: the bytes
    /// go to the application as they came.
    pub(super) fn response_body(
        &self,
        http10: bool,
        status: u16,
        head_request: bool,
    ) -> Result<BodyKind, Http1Error> {
        if head_request || (100..200).contains(&status) || status == 204 || status == 304 {
            return Ok(BodyKind::None);
        }
        if self.transfer.present {
            if http10 {
                return Err(Http1Error::TransferEncodingInHttp10);
            }
            if self.content_length != ContentLength::Absent {
                return Err(Http1Error::ContentLengthWithTransferEncoding);
            }
            if self.transfer.chunked > 1 {
                return Err(Http1Error::ChunkedNotFinal);
            }
            // RFC 9112 §7: chunked defines no parameters, and "their
            // presence SHOULD be treated as an error", in a response as in
            // a request.
            if self.transfer.chunked_last && self.transfer.chunked_parameters {
                return Err(Http1Error::ChunkedWithParameters);
            }
            return Ok(if self.transfer.chunked_last {
                BodyKind::Chunked
            } else {
                BodyKind::Close
            });
        }
        self.content_length.body(BodyKind::Close)
    }

    /// Takes note of one connection-level or framing field; false for an
    /// ordinary field.
    fn note(&mut self, name: &[u8], value: &[u8]) -> bool {
        match name {
            b"connection" => {
                for option in list(value) {
                    self.close |= option.eq_ignore_ascii_case(b"close");
                    self.keep_alive |= option.eq_ignore_ascii_case(b"keep-alive");
                    self.connection_upgrade |= option.eq_ignore_ascii_case(b"upgrade");
                    self.connection_http2_settings |=
                        option.eq_ignore_ascii_case(b"http2-settings");
                }
                self.upgrade_options = self.connection_upgrade && self.connection_http2_settings;
            }
            b"upgrade" => {
                self.upgrade_h2c |= list(value).any(|p| p.eq_ignore_ascii_case(b"h2c"));
            }
            b"transfer-encoding" => self.transfer.add(value),
            // HTTP2-Settings is collected by the caller, which has the Bytes.
            b"keep-alive" | b"proxy-connection" | b"http2-settings" => {}
            b"content-length" => {
                self.content_length.add(value);
                return false;
            }
            b"expect" => {
                self.expect_continue |= trim(value).eq_ignore_ascii_case(b"100-continue");
                return false;
            }
            _ => return false,
        }
        true
    }
}

/// Content-Length as seen so far. Repeated lines or list members with the
/// same value are accepted as one (RFC 9110 §8.6 allows either that or a
/// rejection); differing values are refused.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ContentLength {
    #[default]
    Absent,
    Value(u64),
    Invalid,
}

impl ContentLength {
    fn add(&mut self, value: &[u8]) {
        for member in value.split(|&b| b == b',') {
            let parsed = parse_decimal(trim(member));
            *self = match (*self, parsed) {
                (ContentLength::Absent, Some(n)) => ContentLength::Value(n),
                (ContentLength::Value(m), Some(n)) if m == n => ContentLength::Value(n),
                _ => ContentLength::Invalid,
            };
        }
    }

    /// The body this gives, with `absent` when there is no Content-Length.
    fn body(self, absent: BodyKind) -> Result<BodyKind, Http1Error> {
        match self {
            ContentLength::Absent => Ok(absent),
            ContentLength::Value(0) => Ok(BodyKind::None),
            ContentLength::Value(n) => Ok(BodyKind::Length(n)),
            ContentLength::Invalid => Err(Http1Error::InvalidContentLength),
        }
    }
}

/// The transfer codings of all Transfer-Encoding lines (RFC 9112 §6.1).
#[derive(Debug, Default)]
struct Transfer {
    present: bool,
    chunked: u32,
    chunked_last: bool,
    /// A chunked member carried parameters (`chunked;q=1`).
    chunked_parameters: bool,
    other: bool,
}

impl Transfer {
    fn add(&mut self, value: &[u8]) {
        self.present = true;
        for member in list(value) {
            // A coding may carry parameters after `;` (RFC 9110 §10.1.4).
            let mut parts = member.split(|&b| b == b';');
            let coding = trim(parts.next().unwrap_or_default());
            if coding.eq_ignore_ascii_case(b"chunked") {
                self.chunked = self.chunked.saturating_add(1);
                self.chunked_last = true;
                self.chunked_parameters |= parts.any(|p| !trim(p).is_empty());
            } else {
                self.other = true;
                self.chunked_last = false;
            }
        }
    }
}

/// The non-empty members of a comma-separated list (RFC 9110 §5.6.1).
fn list(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(trim)
        .filter(|m| !m.is_empty())
}

/// `value` without surrounding optional whitespace (RFC 9110 §5.6.3).
fn trim(value: &[u8]) -> &[u8] {
    value.trim_ascii()
}

/// 1*DIGIT as a u64, or None for anything else or an overflow.
fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &b| {
        let digit = b.checked_sub(b'0').filter(|d| *d <= 9)?;
        n.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// Field names that HTTP/1.1 peers commonly send capitalized (`Host`,
/// `User-Agent`, `Content-Type`): their lowercase form is a static
/// `Bytes`, where lowercasing would allocate for each such field of each
/// message.
const KNOWN_NAMES: [&str; 32] = [
    "host",
    "user-agent",
    "accept",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "authorization",
    "cache-control",
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "http2-settings",
    "if-modified-since",
    "if-none-match",
    "keep-alive",
    "last-modified",
    "location",
    "origin",
    "range",
    "referer",
    "server",
    "set-cookie",
    "te",
    "transfer-encoding",
    "upgrade",
    "vary",
    "x-forwarded-for",
];

/// A lowercase name for a field: a slice of the head when it already is,
/// a static name when it is a known one, else a lowercased copy.
fn field_name(head: &Bytes, name: &str) -> Bytes {
    let name = name.as_bytes();
    if !name.iter().any(u8::is_ascii_uppercase) {
        return head.slice_ref(name);
    }
    match KNOWN_NAMES
        .iter()
        .find(|known| known.as_bytes().eq_ignore_ascii_case(name))
    {
        Some(known) => Bytes::from_static(known.as_bytes()),
        None => Bytes::from(name.to_ascii_lowercase()),
    }
}

/// Field slots on the stack: a head with more lines (and a limit that
/// allows them) gets its slots on the heap.
const STACK_HEADERS: usize = 32;

/// The line endings of a head: how many lines it has, and whether one of
/// them ends in LF alone; one vectorized search for LF, as every head of
/// every request passes here.
#[derive(Debug, Clone, Copy)]
struct Lines {
    count: usize,
    /// A line ends in LF alone. RFC 9112 §2.2 lets a recipient accept
    /// that, and we do in responses; a server does not: a front end that
    /// ends lines only at CRLF would read other fields (or another
    /// request) out of the same bytes than we do, the ground request
    /// smuggling grows on.
    bare_lf: bool,
}

impl Lines {
    fn of(head: &[u8]) -> Lines {
        let mut lines = Lines {
            count: 0,
            bare_lf: false,
        };
        for lf in memchr::memchr_iter(b'\n', head) {
            lines.count += 1;
            lines.bare_lf |= lf.checked_sub(1).and_then(|cr| head.get(cr)) != Some(&b'\r');
        }
        lines
    }
}

/// Room for the field lines of a head: no more slots than the head has
/// lines, and no more than the limit, so httparse reports
/// `TooManyHeaders` exactly when the limit is exceeded. A start line's
/// head leaves its slots uninitialized (httparse writes those it fills:
/// filling 32 empty ones cost a copy of 1 KiB a head); httparse parses
/// trailers only into initialized ones.
struct HeaderRoom<T> {
    stack: [T; STACK_HEADERS],
    heap: Vec<T>,
    len: usize,
}

impl<T: Copy> HeaderRoom<T> {
    fn new(empty: T, lines: Lines, max_headers: usize) -> Self {
        let len = lines.count.min(max_headers);
        let heap = if len > STACK_HEADERS {
            vec![empty; len]
        } else {
            Vec::new()
        };
        HeaderRoom {
            stack: [empty; STACK_HEADERS],
            heap,
            len,
        }
    }

    fn slots(&mut self) -> &mut [T] {
        if self.len > STACK_HEADERS {
            &mut self.heap
        } else {
            &mut self.stack[..self.len]
        }
    }
}

/// Which start line a head begins with: where its HTTP-version sits.
#[derive(Clone, Copy)]
enum StartLine {
    /// `method SP request-target SP HTTP-version` (RFC 9112 §3).
    Request,
    /// `HTTP-version SP status-code SP [ reason-phrase ]` (RFC 9112 §4).
    Status,
}

/// Checks httparse's verdict on a whole head: it must end exactly where our
/// scan found the empty line.
fn complete(
    status: Result<httparse::Status<usize>, httparse::Error>,
    head: &[u8],
    max_headers: usize,
    start: StartLine,
) -> Result<(), Http1Error> {
    match status {
        Ok(httparse::Status::Complete(n)) if n == head.len() => Ok(()),
        Ok(_) => Err(Http1Error::Syntax(HeadPart::LineEnding)),
        Err(httparse::Error::Version) => Err(version_error(head, start)),
        Err(e) => Err(Http1Error::from_httparse(e, max_headers)),
    }
}

/// What a start line whose version httparse refused is wrong with. Only a
/// version in the syntax of RFC 9112 §2.3 (`HTTP/` DIGIT `.` DIGIT), in
/// its place, is one we do not speak (505); anything else is a malformed
/// line (400, RFC 9112 §3: "SHOULD respond with a 400"). In a request the
/// version is the third and last word: httparse takes the word after the
/// target for the version, so in `GET /a b HTTP/1.1` it refused `b`, and
/// the line's fault is the space in its request-target.
fn version_error(head: &[u8], start: StartLine) -> Http1Error {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let is_version = |token: &[u8]| {
        matches!(token, [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit())
    };
    let mut words = line.split(|&b| b == b' ');
    match start {
        StartLine::Status if words.next().is_some_and(is_version) => Http1Error::UnsupportedVersion,
        StartLine::Request if words.next_back().is_some_and(is_version) => match words.count() {
            2 => Http1Error::UnsupportedVersion,
            n if n > 2 => Http1Error::InvalidTarget,
            _ => Http1Error::Syntax(HeadPart::Version),
        },
        _ => Http1Error::Syntax(HeadPart::Version),
    }
}

/// A request head, parsed.
#[derive(Debug)]
pub(super) struct ParsedRequest {
    pub(super) head: RequestHead,
    pub(super) http10: bool,
    pub(super) body: BodyKind,
    pub(super) controls: Controls,
    /// Name and value octets of every field line: the decoded size that
    /// `Stats::header_bytes_received` counts (h2load's, for HTTP/1.1).
    pub(super) field_octets: u64,
}

/// Parses a request head (`head` runs to and including its empty line),
/// its fields collected in `fields` (a spare vector, emptied first).
/// `secure` picks the scheme: HTTP/1.1 does not carry it (RFC 9112 §3.3).
pub(super) fn parse_request(
    head: &Bytes,
    max_headers: usize,
    secure: bool,
    mut fields: Vec<HeaderField>,
) -> Result<ParsedRequest, Http1Error> {
    let lines = Lines::of(head);
    if lines.bare_lf {
        return Err(Http1Error::Syntax(HeadPart::LineEnding));
    }
    let mut room = HeaderRoom::new(MaybeUninit::uninit(), lines, max_headers);
    let mut req = httparse::Request::new(&mut []);
    let status = req.parse_with_uninit_headers(head, room.slots());
    complete(status, head, max_headers, StartLine::Request)?;
    let http10 = req.version == Some(0);
    let method = head.slice_ref(req.method.unwrap_or_default().as_bytes());
    let target = head.slice_ref(req.path.unwrap_or_default().as_bytes());

    let mut controls = Controls::default();
    fields.clear();
    fields.reserve_exact(req.headers.len());
    let mut host = None;
    let mut hosts = 0usize;
    let mut field_octets = 0;
    for h in req.headers.iter() {
        field_octets += (h.name.len() + h.value.len()) as u64;
        let name = field_name(head, h.name);
        let value = head.slice_ref(h.value);
        if name == "host" {
            hosts += 1;
            host = Some(value);
        } else if name == "http2-settings" {
            controls.http2_settings.push(value);
        } else if !controls.note(&name, &value) {
            fields.push(HeaderField::new(name, value));
        }
    }
    if hosts > 1 {
        return Err(Http1Error::MultipleHost);
    }
    if hosts == 0 && !http10 {
        return Err(Http1Error::MissingHost);
    }
    let host = host.unwrap_or_default();
    // An empty Host is what a client sends for a target without an
    // authority (RFC 9112 §3.2); a port without a host is no authority.
    if !is_authority(&host) || (!host.is_empty() && empty_host(&host)) {
        return Err(Http1Error::InvalidHost);
    }
    let (authority, path) = request_target(&method, target, host)?;
    let body = controls.request_body(http10)?;
    let scheme = if secure { "https" } else { "http" };
    Ok(ParsedRequest {
        head: RequestHead {
            method,
            scheme: Bytes::from_static(scheme.as_bytes()),
            authority,
            path,
            protocol: Bytes::new(),
            fields,
        },
        http10,
        body,
        controls,
        field_octets,
    })
}

/// Authority and path from the request-target (RFC 9112 §3.2): the path of
/// origin-form with Host as authority; both from absolute-form (whose
/// authority overrides Host, §3.2.2); the authority alone for CONNECT; `*`
/// for a server-wide OPTIONS.
fn request_target(method: &[u8], target: Bytes, host: Bytes) -> Result<(Bytes, Bytes), Http1Error> {
    if method == b"CONNECT" {
        if !is_authority(&target) || empty_host(&target) {
            return Err(Http1Error::InvalidTarget);
        }
        return Ok((target, Bytes::new()));
    }
    if target.starts_with(b"/") || (target.as_ref() == b"*" && method == b"OPTIONS") {
        return Ok((host, target));
    }
    let scheme_len = [&b"http://"[..], b"https://"]
        .iter()
        .find(|s| {
            target
                .get(..s.len())
                .is_some_and(|t| t.eq_ignore_ascii_case(s))
        })
        .map(|s| s.len())
        .ok_or(Http1Error::InvalidTarget)?;
    let rest = target.slice(scheme_len..);
    let end = rest
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let authority = rest.slice(..end);
    if !is_authority(&authority) || empty_host(&authority) {
        return Err(Http1Error::InvalidTarget);
    }
    let path = rest.slice(end..);
    let path = if path.starts_with(b"/") {
        path
    } else {
        // "http://h" or "http://h?q": the path is "/" (RFC 9112 §3.2.2).
        let mut p = BytesMut::with_capacity(path.len() + 1);
        p.extend_from_slice(b"/");
        p.extend_from_slice(&path);
        p.freeze()
    };
    Ok((authority, path))
}

/// Whether the host of `authority` (one [`is_authority`] accepts) is
/// empty: nothing at all, or a port alone (`:80`). "A recipient that
/// processes such a URI reference MUST reject it as invalid" (RFC 9110
/// §4.2.1, for the http and https schemes); the octets of an authority
/// hold no userinfo, so the host is what comes before the first `:`.
fn empty_host(authority: &[u8]) -> bool {
    matches!(authority.first(), None | Some(b':'))
}

/// A response head, parsed.
#[derive(Debug)]
pub(super) struct ParsedResponse {
    pub(super) head: ResponseHead,
    pub(super) http10: bool,
    pub(super) controls: Controls,
    /// As [`ParsedRequest::field_octets`].
    pub(super) field_octets: u64,
}

/// Parses a response head (`head` runs to and including its empty line),
/// its fields collected in `fields` (a spare vector, emptied first).
pub(super) fn parse_response(
    head: &Bytes,
    max_headers: usize,
    mut fields: Vec<HeaderField>,
) -> Result<ParsedResponse, Http1Error> {
    let mut room = HeaderRoom::new(MaybeUninit::uninit(), Lines::of(head), max_headers);
    let mut res = httparse::Response::new(&mut []);
    let status = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut res,
        head,
        room.slots(),
    );
    complete(status, head, max_headers, StartLine::Status)?;
    let http10 = res.version == Some(0);
    let status = res.code.unwrap_or_default();
    let mut controls = Controls::default();
    fields.clear();
    fields.reserve_exact(res.headers.len());
    let mut field_octets = 0;
    for h in res.headers.iter() {
        field_octets += (h.name.len() + h.value.len()) as u64;
        let name = field_name(head, h.name);
        let value = head.slice_ref(h.value);
        if !controls.note(&name, &value) {
            fields.push(HeaderField::new(name, value));
        }
    }
    Ok(ParsedResponse {
        head: ResponseHead { status, fields },
        http10,
        controls,
        field_octets,
    })
}

/// Parses a trailer section (RFC 9112 §7.1.2), `section` running to and
/// including its empty line. Connection-level fields are dropped like in a
/// head.
pub(super) fn parse_trailers(
    section: &Bytes,
    max_headers: usize,
) -> Result<Vec<HeaderField>, Http1Error> {
    let mut room = HeaderRoom::new(httparse::EMPTY_HEADER, Lines::of(section), max_headers);
    let parsed = match httparse::parse_headers(section, room.slots()) {
        Ok(httparse::Status::Complete((n, parsed))) if n == section.len() => parsed,
        Ok(_) => return Err(Http1Error::Syntax(HeadPart::LineEnding)),
        Err(e) => return Err(Http1Error::from_httparse(e, max_headers)),
    };
    Ok(parsed
        .iter()
        .map(|h| (field_name(section, h.name), section.slice_ref(h.value)))
        .filter(|(name, _)| !is_connection_specific(name))
        .map(|(name, value)| HeaderField::new(name, value))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(text: &str) -> Result<ParsedRequest, Http1Error> {
        parse_request(&Bytes::from(text.to_owned()), 100, false, Vec::new())
    }

    /// Capitalized names come out lowercase, known ones without a copy
    /// (RFC 9110 §5.1: names are case-insensitive; HTTP/2 and our events
    /// carry them lowercase).
    #[test]
    fn field_names_are_lowercased() {
        assert!(
            KNOWN_NAMES
                .iter()
                .all(|n| !n.bytes().any(|b| b.is_ascii_uppercase()))
        );
        let head = Bytes::from_static(b"Host User-Agent X-Mine accept");
        let name = |at: std::ops::Range<usize>| {
            let s = std::str::from_utf8(&head[at]).unwrap();
            field_name(&head, s)
        };
        assert_eq!(name(0..4), "host");
        assert_eq!(name(5..15), "user-agent");
        assert_eq!(name(16..22), "x-mine");
        assert_eq!(name(23..29), "accept");
    }

    #[test]
    fn head_end_found_across_calls() {
        let mut scanned = 0;
        let buf = b"GET / HTTP/1.1\r\nHost: a\r\n\r";
        assert_eq!(find_head_end(buf, &mut scanned), None);
        let mut longer = buf.to_vec();
        longer.extend_from_slice(b"\nrest");
        assert_eq!(find_head_end(&longer, &mut scanned), Some(buf.len() + 1));
        let mut scanned = 0;
        assert_eq!(
            find_head_end(b"GET / HTTP/1.0\n\nx", &mut scanned),
            Some(16)
        );
    }

    #[test]
    fn empty_lines_before_a_head_are_skipped() {
        let mut input = BytesMut::from(&b"\r\n\nGET"[..]);
        assert!(skip_empty_lines(&mut input));
        assert_eq!(&input[..], b"GET");
        let mut input = BytesMut::from(&b"\r"[..]);
        assert!(!skip_empty_lines(&mut input));
        // Counted on from where an earlier call stopped, a CR waiting for
        // its LF not yet among them.
        assert_eq!(empty_lines_len(b"\r\n\n\r", 0), 3);
        assert_eq!(empty_lines_len(b"\r\n\n\r\nGET", 3), 5);
    }

    #[test]
    fn fields_are_slices_of_the_head() {
        let head =
            Bytes::from_static(b"GET /p HTTP/1.1\r\nHost: h\r\nX-Mixed: v\r\nlow: w\r\n\r\n");
        let parsed = parse_request(&head, 100, true, Vec::new()).unwrap();
        assert_eq!(parsed.head.method, "GET");
        assert_eq!(parsed.head.scheme, "https");
        assert_eq!(parsed.head.authority, "h");
        assert_eq!(parsed.head.path, "/p");
        let names: Vec<_> = parsed.head.fields.iter().map(|f| f.name.clone()).collect();
        assert_eq!(names, ["x-mixed", "low"]);
        let inside = |b: &Bytes| head.as_ptr_range().contains(&b.as_ptr());
        assert!(inside(&parsed.head.fields[1].name));
        assert!(inside(&parsed.head.fields[0].value));
        assert!(inside(&parsed.head.path));
    }

    #[test]
    fn absolute_form_gives_authority_and_path() {
        let p = request("GET http://Example.com:80?q HTTP/1.1\r\nHost: other\r\n\r\n").unwrap();
        assert_eq!(p.head.authority, "Example.com:80");
        assert_eq!(p.head.path, "/?q");
        let p = request("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n").unwrap();
        assert_eq!(p.head.authority, "h:443");
        assert_eq!(p.head.path, "");
        let p = request("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
        assert_eq!(p.head.path, "*");
        assert_eq!(
            request("GET * HTTP/1.1\r\nHost: h\r\n\r\n").unwrap_err(),
            Http1Error::InvalidTarget
        );
        assert_eq!(
            request("GET http://u@h/ HTTP/1.1\r\nHost: h\r\n\r\n").unwrap_err(),
            Http1Error::InvalidTarget
        );
    }

    /// An http URI with an empty host is invalid (RFC 9110 §4.2.1), in the
    /// Host field (400, RFC 9112 §3.2) as in the request-target; an empty
    /// Host stands for a target without an authority and is accepted.
    #[test]
    fn empty_host_is_rejected() {
        for (head, error) in [
            (
                "GET / HTTP/1.1\r\nHost: :80\r\n\r\n",
                Http1Error::InvalidHost,
            ),
            ("GET / HTTP/1.1\r\nHost: :\r\n\r\n", Http1Error::InvalidHost),
            (
                "GET http://:80/ HTTP/1.1\r\nHost: h\r\n\r\n",
                Http1Error::InvalidTarget,
            ),
            (
                "GET http:///p HTTP/1.1\r\nHost: h\r\n\r\n",
                Http1Error::InvalidTarget,
            ),
            (
                "CONNECT :443 HTTP/1.1\r\nHost: h\r\n\r\n",
                Http1Error::InvalidTarget,
            ),
        ] {
            assert_eq!(request(head).unwrap_err(), error, "{head:?}");
        }
        assert_eq!(
            request("GET / HTTP/1.1\r\nHost:\r\n\r\n")
                .unwrap()
                .head
                .authority,
            ""
        );
        assert_eq!(
            request("GET / HTTP/1.1\r\nHost: h:80\r\n\r\n")
                .unwrap()
                .head
                .authority,
            "h:80"
        );
    }

    #[test]
    fn host_rules() {
        assert_eq!(
            request("GET / HTTP/1.1\r\n\r\n").unwrap_err(),
            Http1Error::MissingHost
        );
        assert!(request("GET / HTTP/1.0\r\n\r\n").is_ok());
        assert_eq!(
            request("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n").unwrap_err(),
            Http1Error::MultipleHost
        );
        assert_eq!(
            request("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n").unwrap_err(),
            Http1Error::InvalidHost
        );
    }

    #[test]
    fn framing_rules() {
        let body = |fields: &str| {
            request(&format!("POST / HTTP/1.1\r\nHost: h\r\n{fields}\r\n")).map(|p| p.body)
        };
        assert_eq!(body(""), Ok(BodyKind::None));
        assert_eq!(body("Content-Length: 0\r\n"), Ok(BodyKind::None));
        assert_eq!(body("Content-Length: 12\r\n"), Ok(BodyKind::Length(12)));
        assert_eq!(
            body("Content-Length: 5\r\nContent-Length: 5\r\n"),
            Ok(BodyKind::Length(5))
        );
        assert_eq!(body("Content-Length: 5, 5\r\n"), Ok(BodyKind::Length(5)));
        assert_eq!(
            body("Content-Length: 5\r\nContent-Length: 6\r\n"),
            Err(Http1Error::InvalidContentLength)
        );
        for bad in ["+5", "5 5", "0x5", "", "99999999999999999999", "-1"] {
            assert_eq!(
                body(&format!("Content-Length: {bad}\r\n")),
                Err(Http1Error::InvalidContentLength),
                "{bad}"
            );
        }
        assert_eq!(
            body("Transfer-Encoding: Chunked\r\n"),
            Ok(BodyKind::Chunked)
        );
        assert_eq!(
            body("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"),
            Err(Http1Error::ContentLengthWithTransferEncoding)
        );
        assert_eq!(
            body("Transfer-Encoding: gzip\r\n"),
            Err(Http1Error::ChunkedNotFinal)
        );
        assert_eq!(
            body("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"),
            Err(Http1Error::ChunkedNotFinal)
        );
        assert_eq!(
            body("Transfer-Encoding: gzip, chunked\r\n"),
            Err(Http1Error::UnsupportedCoding)
        );
        assert_eq!(
            request("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap_err(),
            Http1Error::TransferEncodingInHttp10
        );
    }

    #[test]
    fn response_framing_rules() {
        let kind = |text: &str, head_request: bool| {
            let p = parse_response(&Bytes::from(text.to_owned()), 100, Vec::new()).unwrap();
            p.controls
                .response_body(p.http10, p.head.status, head_request)
        };
        assert_eq!(kind("HTTP/1.1 200 OK\r\n\r\n", false), Ok(BodyKind::Close));
        assert_eq!(
            kind("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", true),
            Ok(BodyKind::None)
        );
        for status in ["100 Continue", "204 No Content", "304 Not Modified"] {
            assert_eq!(
                kind(&format!("HTTP/1.1 {status}\r\n\r\n"), false),
                Ok(BodyKind::None)
            );
        }
        assert_eq!(
            kind("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false),
            Ok(BodyKind::Close)
        );
        assert_eq!(
            kind(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
                false
            ),
            Ok(BodyKind::Chunked)
        );
    }

    #[test]
    fn versions() {
        assert_eq!(
            request("GET / HTTP/2.0\r\nHost: h\r\n\r\n").unwrap_err(),
            Http1Error::UnsupportedVersion
        );
        assert_eq!(
            request("GET / HTTP/1.2\r\nHost: h\r\n\r\n").unwrap_err(),
            Http1Error::UnsupportedVersion
        );
        assert_eq!(
            request("GET / FTP/1.1\r\nHost: h\r\n\r\n").unwrap_err(),
            Http1Error::Syntax(HeadPart::Version)
        );
        let p = parse_response(
            &Bytes::from_static(b"HTTP/3.0 200 OK\r\n\r\n"),
            10,
            Vec::new(),
        );
        assert_eq!(p.unwrap_err(), Http1Error::UnsupportedVersion);
    }

    #[test]
    fn bad_field_lines() {
        for bad in [
            "GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nX : a\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n  folded\r\n\r\n",
            // A bare LF ends no line of a request (see `parse_request`).
            "GET / HTTP/1.1\nHost: h\n\n",
            "GET / HTTP/1.1\r\nHost: h\nX: a\r\n\r\n",
        ] {
            assert!(
                matches!(request(bad), Err(Http1Error::Syntax(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn field_limit() {
        let head = Bytes::from_static(b"GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n");
        assert!(parse_request(&head, 3, false, Vec::new()).is_ok());
        assert_eq!(
            parse_request(&head, 2, false, Vec::new()).unwrap_err(),
            Http1Error::TooManyHeaders { max: 2 }
        );
    }

    #[test]
    fn connection_controls() {
        let p = request(
            "GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n\
             Upgrade: websocket, H2C\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\
             Expect: 100-Continue\r\nKeep-Alive: timeout=5\r\n\r\n",
        )
        .unwrap();
        assert!(p.controls.upgrade_options && p.controls.upgrade_h2c);
        assert!(p.controls.expect_continue);
        assert_eq!(p.controls.http2_settings.len(), 1);
        assert!(p.controls.persistent(false));
        assert_eq!(
            p.head.fields.len(),
            1,
            "only expect reaches the application"
        );
        let p = request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
        assert!(p.controls.persistent(true));
        let p = request("GET / HTTP/1.0\r\n\r\n").unwrap();
        assert!(!p.controls.persistent(true));
        let p = request("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").unwrap();
        assert!(!p.controls.persistent(false));
    }

    #[test]
    fn trailers_parse() {
        let section = Bytes::from_static(b"Checksum: abc\r\nConnection: x\r\n\r\n");
        let fields = parse_trailers(&section, 10).unwrap();
        assert_eq!(fields, [HeaderField::new("checksum", "abc")]);
    }
}
