//! Request and response heads, the same for both protocols: what the
//! application sends and what events hand it.

use bytes::Bytes;

use crate::error::UserError;
use crate::hpack::HeaderField;
use crate::octets;

/// Whether `method` can be a request's method: an RFC 9110 token (§9.1,
/// §5.6.2), one or more letters, digits or ``!#$%&'*+-.^_`|~``. A
/// front end checks what its user gives before sending it; HTTP/2's
/// request validation checks every `:method` received.
pub fn is_method(method: &[u8]) -> bool {
    !method.is_empty() && method.iter().all(|&b| TCHAR[usize::from(b)])
}

/// The octets of a token (RFC 9110 §5.6.2), one lookup a byte: every
/// request received goes through it.
static TCHAR: [bool; 256] = alphanumeric_and(b"!#$%&'*+-.^_`|~");

/// Checks what the application is about to send over HTTP/1.1, which
/// writes fields as lines: every name a field name, every value a field
/// value, by the octets [`crate::octets`] allows (RFC 9110 §5.1, §5.5). A
/// value with CR or LF would end its line, and what follows it would be
/// read as fields, or a body, of the sender's choosing (response
/// splitting, request smuggling). HTTP/2 length-prefixes every field
/// (HPACK), so nothing there can write lines of its own; it leaves fields
/// as given, for its peer to judge (RFC 9113 §8.2.1), which also lets a
/// test send a malformed one on purpose. `Err` names the field.
pub(crate) fn check_fields(fields: &[HeaderField]) -> Result<(), UserError> {
    match fields
        .iter()
        .find(|f| !octets::is_field_name(&f.name) || !octets::is_field_value(&f.value))
    {
        Some(field) => Err(UserError::InvalidField(field.name.clone())),
        None => Ok(()),
    }
}

/// [`check_fields`] for a request, and its request line: a token for the
/// method, an authority (RFC 3986 §3.2.2) and a path that is a
/// request-target ([`octets::is_target`]), as a receiver checks them; and
/// no `:protocol`, which a request line cannot carry.
pub(crate) fn check_request(head: &RequestHead) -> Result<(), UserError> {
    if !head.protocol.is_empty() {
        return Err(UserError::Unsupported(
            "extended CONNECT (:protocol, RFC 8441)",
        ));
    }
    let pseudo = [
        (is_method(&head.method), ":method"),
        (is_authority(&head.authority), ":authority"),
        (octets::is_target(&head.path), ":path"),
    ];
    if let Some((_, name)) = pseudo.iter().find(|(ok, _)| !ok) {
        return Err(UserError::InvalidField(Bytes::from_static(name.as_bytes())));
    }
    check_fields(&head.fields)
}

/// Whether `value` can be a `uri-host [ ":" port ]` (RFC 3986 §3.2.2): the
/// characters of reg-name, IP literals and ports. Userinfo (`@`) is
/// refused: RFC 9110 §4.2.4 deprecates it, and RFC 9113 §8.3.1 forbids it
/// in an "http" or "https" `:authority`. Both protocols check what they
/// receive with it (HTTP/1.1's Host and request-target, HTTP/2's
/// `:authority`).
pub(crate) fn is_authority(value: &[u8]) -> bool {
    value.iter().all(|&b| AUTHORITY[usize::from(b)])
}

/// The octets of [`is_authority`], one lookup a byte: unreserved,
/// percent, sub-delims, `:` and the brackets of an IP literal.
static AUTHORITY: [bool; 256] = alphanumeric_and(b"-._~%!$&'()*+,;=:[]");

/// A byte table that holds the ASCII letters and digits and `others`.
const fn alphanumeric_and(others: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let mut i = 0;
    while i < others.len() {
        table[others[i] as usize] = true;
        i += 1;
    }
    table
}

/// The head of a request: the four request pseudo-header fields of RFC 9113
/// §8.3.1 (the request line in HTTP/1.1) and the ordinary fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestHead {
    pub method: Bytes,
    pub scheme: Bytes,
    /// `:authority` (the `Host` field in HTTP/1.1); may be empty.
    pub authority: Bytes,
    pub path: Bytes,
    /// `:protocol` of an HTTP/2 extended CONNECT (RFC 8441 §4): the
    /// protocol the tunnel will carry (`websocket`); empty on every other
    /// request. Received only where we advertised
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL, sent only where the peer did
    /// (§3); HTTP/1.1 has no such field (its Upgrade is another mechanism).
    pub protocol: Bytes,
    /// Ordinary fields, lowercase names, in the order they were sent.
    pub fields: Vec<HeaderField>,
}

impl RequestHead {
    /// A request with no fields yet; `fields` may be pushed to afterwards.
    pub fn new(
        method: impl Into<Bytes>,
        scheme: impl Into<Bytes>,
        authority: impl Into<Bytes>,
        path: impl Into<Bytes>,
    ) -> Self {
        RequestHead {
            method: method.into(),
            scheme: scheme.into(),
            authority: authority.into(),
            path: path.into(),
            protocol: Bytes::new(),
            fields: Vec::new(),
        }
    }

    /// Sets `:protocol`, making this an extended CONNECT (RFC 8441 §4)
    /// when the method is CONNECT (builder style).
    pub fn protocol(mut self, protocol: impl Into<Bytes>) -> Self {
        self.protocol = protocol.into();
        self
    }

    /// Adds one field (builder style).
    pub fn field(mut self, name: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        self.fields.push(HeaderField::new(name, value));
        self
    }

    /// The first value of the field `name` (lowercase), if present.
    pub fn get(&self, name: &[u8]) -> Option<&Bytes> {
        find(&self.fields, name)
    }
}

/// The head of a response: a status code and the ordinary fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub fields: Vec<HeaderField>,
}

impl ResponseHead {
    pub fn new(status: u16) -> Self {
        ResponseHead {
            status,
            fields: Vec::new(),
        }
    }

    /// Adds one field (builder style).
    pub fn field(mut self, name: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        self.fields.push(HeaderField::new(name, value));
        self
    }

    /// The first value of the field `name` (lowercase), if present.
    pub fn get(&self, name: &[u8]) -> Option<&Bytes> {
        find(&self.fields, name)
    }

    /// 1xx: an interim response that a final one follows (RFC 9110 §15.2).
    pub fn is_informational(&self) -> bool {
        (100..200).contains(&self.status)
    }

    /// Whether the status is 2xx (RFC 9110 §15.3): the answer to a CONNECT
    /// that opens its tunnel (§9.3.6).
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Whether a server may send this status: RFC 9110 §15 defines
    /// 100-599, and 101 switches protocols, which HTTP/2 does not do (RFC
    /// 9113 §8.6) and which HTTP/1.1's h2c upgrade sends by itself.
    pub fn is_sendable(&self) -> bool {
        (100..=599).contains(&self.status) && self.status != 101
    }

    /// Whether the response may carry content: 1xx, 204 and 304 responses
    /// never do (RFC 9110 §6.4.1, §15.3.5, §15.4.5).
    pub fn may_have_content(&self) -> bool {
        !(self.is_informational() || self.status == 204 || self.status == 304)
    }
}

/// Whether `fields` hold a `content-length`, its name in any case: an
/// application writing HTTP/1.1 may spell it `Content-Length` (field names
/// are case-insensitive, RFC 9110 §5.1). Its value then frames the body;
/// adding a length of ours or the chunked coding besides would give the
/// message two framings (RFC 9112 §6.1, §6.3).
pub(crate) fn declares_length(fields: &[HeaderField]) -> bool {
    const NAME: &[u8] = b"content-length";
    // Lowercase, as this crate and HTTP/2 write it, compares as a whole;
    // only a name of its length in other case is compared letter by letter.
    fields.iter().any(|f| {
        f.name.len() == NAME.len() && (f.name == NAME || f.name.eq_ignore_ascii_case(NAME))
    })
}

fn find<'a>(fields: &'a [HeaderField], name: &[u8]) -> Option<&'a Bytes> {
    fields.iter().find(|f| f.name == name).map(|f| &f.value)
}

#[cfg(test)]
mod tests {
    use super::{is_authority, is_method};

    #[test]
    fn an_authority_is_a_host_and_a_port() {
        for ok in [
            "[::1]:8080",
            "a-b.example:80",
            "a%2Db",
            "udm.5gc.mnc001.mcc001.3gppnetwork.org",
        ] {
            assert!(is_authority(ok.as_bytes()), "{ok}");
        }
        for bad in ["user@host", "a b", "a/b", "h\u{e9}te"] {
            assert!(!is_authority(bad.as_bytes()), "{bad:?}");
        }
    }

    #[test]
    fn a_method_is_a_token() {
        for ok in ["GET", "M-SEARCH", "x~y"] {
            assert!(is_method(ok.as_bytes()), "{ok}");
        }
        for bad in ["", "GE T", "GET\r", "A/B", "ö"] {
            assert!(!is_method(bad.as_bytes()), "{bad:?}");
        }
    }

    /// RFC 9110 §5.6.2 the other way round: a token's octets are the
    /// visible ASCII ones that are not delimiters.
    #[test]
    fn a_token_octet_is_visible_and_not_a_delimiter() {
        for b in 0..=u8::MAX {
            let tchar = b.is_ascii_graphic() && !b"\"(),/:;<=>?@[\\]{}".contains(&b);
            assert_eq!(is_method(&[b]), tchar, "{b:#04x}");
        }
    }
}
