//! What can be wrong with an HTTP/1.1 message we received, and what each
//! problem becomes: the status a server answers with (RFC 9110 §15) and the
//! `Violation` the connection reports in `Event::Closed` (`Violation::Http1`).

use std::fmt;

/// A received head or body that breaks RFC 9112 or one of our limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Http1Error {
    /// httparse refused the start line or a field line (RFC 9112 §3, §4,
    /// §5); `Syntax` says which part.
    Syntax(HeadPart),
    /// A well-formed HTTP-version other than 1.0 or 1.1 (RFC 9112 §2.3).
    UnsupportedVersion,
    /// A request-target in none of the four forms of RFC 9112 §3.2.
    InvalidTarget,
    /// An HTTP/1.1 request without Host (RFC 9112 §3.2).
    MissingHost,
    /// More than one Host field line (RFC 9112 §3.2).
    MultipleHost,
    /// A Host value that is not an authority (RFC 9112 §3.2, RFC 3986 §3.2).
    InvalidHost,
    /// A Content-Length that is not a number, or several that differ
    /// (RFC 9112 §6.3 item 5, RFC 9110 §8.6).
    InvalidContentLength,
    /// Both Transfer-Encoding and Content-Length (RFC 9112 §6.3 item 3):
    /// the classic request smuggling ambiguity.
    ContentLengthWithTransferEncoding,
    /// Transfer-Encoding in an HTTP/1.0 message (RFC 9112 §6.1).
    TransferEncodingInHttp10,
    /// A request whose final transfer coding is not chunked, or that applies
    /// chunked twice (RFC 9112 §6.3 item 4, §7).
    ChunkedNotFinal,
    /// The chunked coding with parameters, which it does not define
    /// (RFC 9112 §7: their presence SHOULD be treated as an error).
    ChunkedWithParameters,
    /// A transfer coding other than chunked, which we do not decode
    /// (RFC 9112 §6.1: 501).
    UnsupportedCoding,
    /// A head (or trailer section) larger than `Http1Config::max_head_size`.
    HeadTooLarge { size: usize, max: usize },
    /// A request-line that alone is larger than `Http1Config::max_head_size`
    /// (`size` bytes so far, its end perhaps not yet received): a
    /// request-target longer than the server will parse (RFC 9112 §3,
    /// RFC 9110 §15.5.15).
    RequestLineTooLong { size: usize, max: usize },
    /// More field lines than `Http1Config::max_headers`.
    TooManyHeaders { max: usize },
    /// A request body larger than `Config::max_request_body`.
    BodyTooLarge { size: u64, max: u64 },
    /// A chunk-size line or chunk terminator that breaks RFC 9112 §7.1.
    InvalidChunk,
    /// Client: a response with no request waiting for it (RFC 9112 §9.3).
    UnexpectedResponse,
    /// Client: a 101 Switching Protocols to a request that offered no
    /// protocol in Upgrade; a server may only switch to one the client
    /// offered (RFC 9110 §7.8, §15.2.2).
    UnrequestedSwitch,
    /// Client: the connection closed inside a response body whose framing
    /// said more was to come, which makes the message incomplete (RFC 9112
    /// §8); `missing` is what its Content-Length still owed, `None` for a
    /// chunked body.
    IncompleteMessage { missing: Option<u64> },
    /// Client: the server's first bytes are an HTTP/2 SETTINGS frame, not
    /// a status line: it takes HTTP/2 with prior knowledge only, and sent
    /// its connection preface (RFC 9113 §3.4) to our HTTP/1.1 request.
    Http2Answer,
    /// Client: the server's first bytes cannot begin a status line, which
    /// starts with `HTTP/` (RFC 9112 §4); told at once rather than once a
    /// head end that may never come has arrived.
    NotHttp,
    /// Server: the client's first bytes are a TLS handshake record (a
    /// ClientHello, RFC 8446 §5.1) on a plain listener: it wants https://,
    /// and no request-line can begin with them (RFC 9112 §3).
    TlsHandshake,
}

/// The part of a head that failed to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadPart {
    /// The method, or the spaces of the request line (RFC 9112 §3).
    Method,
    /// The HTTP-version is not `HTTP/` DIGIT `.` DIGIT (RFC 9112 §2.3).
    Version,
    /// The status code or reason phrase (RFC 9112 §4).
    Status,
    /// A field name, including whitespace before the colon (§5.1) and a
    /// line starting with whitespace: obsolete line folding (§5.2).
    FieldName,
    /// A field value with CR, NUL or another control (RFC 9110 §5.5).
    FieldValue,
    /// A CR not followed by LF, or in a request an LF without CR
    /// (RFC 9112 §2.2).
    LineEnding,
}

impl Http1Error {
    /// Translates httparse's verdict; `max_headers` was the room it had.
    pub(crate) fn from_httparse(e: httparse::Error, max_headers: usize) -> Self {
        let part = match e {
            httparse::Error::Token => HeadPart::Method,
            httparse::Error::Version => HeadPart::Version,
            httparse::Error::Status => HeadPart::Status,
            httparse::Error::HeaderName => HeadPart::FieldName,
            httparse::Error::HeaderValue => HeadPart::FieldValue,
            httparse::Error::NewLine => HeadPart::LineEnding,
            httparse::Error::TooManyHeaders => {
                return Http1Error::TooManyHeaders { max: max_headers };
            }
        };
        Http1Error::Syntax(part)
    }

    /// The status a server answers this problem with.
    pub(crate) fn status(&self) -> u16 {
        use Http1Error::*;
        match self {
            UnsupportedVersion => 505,
            UnsupportedCoding => 501,
            // RFC 9112 §3: "A server that receives a request-target longer
            // than any URI it wishes to parse MUST respond with a 414".
            RequestLineTooLong { .. } => 414,
            HeadTooLarge { .. } | TooManyHeaders { .. } => 431,
            BodyTooLarge { .. } => 413,
            Syntax(_)
            | InvalidTarget
            | MissingHost
            | MultipleHost
            | InvalidHost
            | InvalidContentLength
            | ContentLengthWithTransferEncoding
            | TransferEncodingInHttp10
            | ChunkedNotFinal
            // A malformed use of the one coding we implement, as a
            // misplaced chunked is: 400, the status RFC 9112 §7 means by an
            // error. 501 (RFC 9112 §6.1) stays for a coding we do not
            // implement at all, such as gzip.
            | ChunkedWithParameters
            | InvalidChunk
            | UnexpectedResponse
            | UnrequestedSwitch
            | IncompleteMessage { .. }
            | Http2Answer
            | NotHttp
            | TlsHandshake => 400,
        }
    }
}

impl fmt::Display for Http1Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Http1Error::*;
        match self {
            Syntax(part) => write!(f, "invalid {part} (RFC 9112)"),
            UnsupportedVersion => f.write_str("HTTP version not supported (RFC 9112 §2.3)"),
            InvalidTarget => f.write_str("invalid request-target (RFC 9112 §3.2)"),
            MissingHost => f.write_str("missing Host (RFC 9112 §3.2)"),
            MultipleHost => f.write_str("more than one Host (RFC 9112 §3.2)"),
            InvalidHost => f.write_str("invalid Host (RFC 9112 §3.2)"),
            InvalidContentLength => f.write_str("invalid Content-Length (RFC 9112 §6.3)"),
            ContentLengthWithTransferEncoding => {
                f.write_str("both Transfer-Encoding and Content-Length (RFC 9112 §6.3)")
            }
            TransferEncodingInHttp10 => {
                f.write_str("Transfer-Encoding in an HTTP/1.0 message (RFC 9112 §6.1)")
            }
            ChunkedNotFinal => f.write_str("chunked is not the final coding once (RFC 9112 §6.3)"),
            ChunkedWithParameters => f.write_str("parameters on the chunked coding (RFC 9112 §7)"),
            UnsupportedCoding => f.write_str("unsupported transfer coding (RFC 9112 §6.1)"),
            HeadTooLarge { size, max } => {
                write!(f, "head of {size} bytes above the limit of {max}")
            }
            RequestLineTooLong { size, max } => {
                write!(
                    f,
                    "request-line of {size} bytes above the limit of {max} (RFC 9112 §3)"
                )
            }
            TooManyHeaders { max } => write!(f, "more than {max} header fields"),
            BodyTooLarge { size, max } => {
                write!(f, "body of {size} bytes above the limit of {max}")
            }
            InvalidChunk => f.write_str("invalid chunk (RFC 9112 §7.1)"),
            UnexpectedResponse => f.write_str("response without a request (RFC 9112 §9.3)"),
            UnrequestedSwitch => f.write_str(
                "unrequested protocol switch: 101 to a request without Upgrade \
                 (RFC 9110 §7.8, §15.2.2)",
            ),
            IncompleteMessage {
                missing: Some(missing),
            } => write!(
                f,
                "incomplete message: the connection closed {missing} bytes short of \
                 its Content-Length (RFC 9112 §8)"
            ),
            IncompleteMessage { missing: None } => f.write_str(
                "incomplete message: the connection closed inside its chunked body \
                 (RFC 9112 §8)",
            ),
            Http2Answer => f.write_str(
                "the server answered in HTTP/2 (a SETTINGS frame), not with a status line: \
                 it takes HTTP/2 with prior knowledge only (RFC 9113 §3.4)",
            ),
            NotHttp => f.write_str("the server's answer does not begin with HTTP/ (RFC 9112 §4)"),
            TlsHandshake => f.write_str(
                "a TLS ClientHello on a plain listener: the client wants https:// \
                 (RFC 9112 §3, RFC 8446 §5.1)",
            ),
        }
    }
}

impl fmt::Display for HeadPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HeadPart::Method => "request line",
            HeadPart::Version => "HTTP version",
            HeadPart::Status => "status line",
            HeadPart::FieldName => "field name",
            HeadPart::FieldValue => "field value",
            HeadPart::LineEnding => "line ending",
        })
    }
}
