//! Field sections to message heads and back, with the validation of
//! RFC 9113 §8.2–§8.3. A message that breaks these rules is malformed: the
//! stream is reset with PROTOCOL_ERROR, the connection lives on (§8.1.1).

use std::borrow::Cow;

use bytes::Bytes;

use crate::error::Malformation;
use crate::hpack::{FieldRef, HeaderField};
use crate::message::{RequestHead, ResponseHead, is_authority, is_method};
use crate::octets;
use crate::spares::Spares;

/// Byte classes of §8.2.1: `NAME` marks bytes an ordinary field's name may
/// not hold (those no field name may, and uppercase letters: RFC 9110 §5.1
/// tchar is stricter, HTTP/2 only forbids these), `VALUE` those a value
/// may not. The URI parts of §8.3.1 take their characters from RFC 3986:
/// `NOT_PATH` marks the bytes a `:path` may not hold besides, those no
/// request-target may, checked in the same pass as its value;
/// `NOT_SCHEME` marks those outside a scheme's (§3.1: letters, digits,
/// `+`, `-`, `.`). An authority is checked by [`is_authority`], as
/// HTTP/1.1 checks its Host. The rules are [`crate::octets`]'; the table
/// holds them for one load a byte.
const NAME: u8 = 1;
const VALUE: u8 = 2;
const NOT_PATH: u8 = 4;
const NOT_SCHEME: u8 = 8;

const fn forbidden_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if octets::not_in_field_name(c) || c.is_ascii_uppercase() {
            t[b] |= NAME;
        }
        if octets::not_in_field_value(c) {
            t[b] |= VALUE;
        }
        if octets::not_in_target(c) {
            t[b] |= NOT_PATH;
        }
        if !(c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')) {
            t[b] |= NOT_SCHEME;
        }
        b += 1;
    }
    t
}
static FORBIDDEN: [u8; 256] = forbidden_table();

/// The classes of the bytes of `s`, or-ed: one table load per byte and no
/// branch, since every field of every message passes here.
fn classes(s: &[u8]) -> u8 {
    s.iter().fold(0, |acc, &b| acc | FORBIDDEN[usize::from(b)])
}

fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && classes(name) & NAME == 0
}

/// §8.2.1: no NUL, CR or LF anywhere, no whitespace at either end.
fn valid_value(value: &[u8]) -> bool {
    valid_value_without(value, 0)
}

/// [`valid_value`], and no byte of the classes in `also` either.
fn valid_value_without(value: &[u8], also: u8) -> bool {
    let edge = |b: Option<&u8>| !matches!(b, Some(b' ' | b'\t'));
    edge(value.first()) && edge(value.last()) && classes(value) & (VALUE | also) == 0
}

/// RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` or `.`.
fn valid_scheme(scheme: &[u8]) -> bool {
    scheme.first().is_some_and(u8::is_ascii_alphabetic) && classes(scheme) & NOT_SCHEME == 0
}

/// §8.3.1: an "http" or "https" request's `:path` is an absolute path (with
/// its query), or `*` for OPTIONS; other schemes are not restricted.
fn valid_path_for(scheme: &[u8], method: &[u8], path: &[u8]) -> bool {
    let web = scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https");
    !web || path.first() == Some(&b'/') || (path == b"*" && method == b"OPTIONS")
}

/// RFC 9113 §8.2.2: a field that only means something to one HTTP/1.1
/// hop, which makes an HTTP/2 message malformed: the peer resets its
/// stream. Public so that an application can refuse such a field where it
/// is written (a rule's or a step's), not meet the reset.
pub fn connection_specific(field: &HeaderField) -> bool {
    match field.name.as_ref() {
        b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade" => {
            true
        }
        b"te" => field.value.as_ref() != b"trailers",
        _ => false,
    }
}

/// Checks one ordinary field.
fn check_field(field: &HeaderField) -> Result<(), Malformation> {
    if !valid_name(&field.name) {
        return Err(if field.name.iter().any(u8::is_ascii_uppercase) {
            Malformation::UppercaseFieldName
        } else {
            Malformation::InvalidFieldName
        });
    }
    if !valid_value(&field.value) {
        return Err(Malformation::InvalidFieldValue);
    }
    if connection_specific(field) {
        return Err(Malformation::ConnectionSpecificField);
    }
    Ok(())
}

/// Splits a decoded field section into pseudo-headers (handed to `pseudo`)
/// and ordinary fields, enforcing order and field syntax; `checked`: the
/// same fields passed [`check_field`] in the block before. The decoder's
/// vector is the caller's to reuse; the ordinary fields move out of it,
/// into a spare vector.
fn split(
    fields: &mut Vec<HeaderField>,
    checked: bool,
    spares: &mut Spares,
    mut pseudo: impl FnMut(&[u8], Bytes) -> Result<(), Malformation>,
) -> Result<Vec<HeaderField>, Malformation> {
    let leading = fields
        .iter()
        .take_while(|f| f.name.first() == Some(&b':'))
        .count();
    // The ordinary fields move out first (a message without any takes no
    // vector; `mem::take` would hand over the decoder's, whose room then
    // goes with the message), so the pseudo-headers' removal leaves
    // nothing behind them to shift down.
    let mut ordinary = Vec::new();
    if leading < fields.len() {
        ordinary = spares.fields();
        // Exactly: a vector that circulates grows to the largest head it
        // carries, not to twice that.
        ordinary.reserve_exact(fields.len() - leading);
        ordinary.extend(fields.drain(leading..));
    }
    for field in fields.drain(..) {
        pseudo(&field.name[1..], field.value)?;
    }
    for field in &ordinary {
        if field.name.first() == Some(&b':') {
            return Err(Malformation::PseudoHeaderAfterField);
        }
        if !checked {
            check_field(field)?;
        }
    }
    Ok(ordinary)
}

fn set_once(slot: &mut Option<Bytes>, value: Bytes) -> Result<(), Malformation> {
    if slot.replace(value).is_some() {
        return Err(Malformation::DuplicatePseudoHeader);
    }
    Ok(())
}

/// A request head from a decoded field section (§8.3.1), in the box it
/// is handed on in (a spare one): built there, not moved into it.
/// `extended_connect`: we advertised SETTINGS_ENABLE_CONNECT_PROTOCOL, so
/// a CONNECT may carry `:protocol` (RFC 8441 §3, §4); otherwise that
/// pseudo-header makes the request malformed, as any we do not define
/// does (RFC 9113 §8.3), with the error naming the setting.
pub(crate) fn request(
    fields: &mut Vec<HeaderField>,
    checked: bool,
    extended_connect: bool,
    spares: &mut Spares,
) -> Result<Box<RequestHead>, Malformation> {
    let (mut method, mut scheme, mut authority, mut path) = (None, None, None, None);
    let mut protocol = None;
    let fields = split(fields, checked, spares, |name, value| match name {
        b"method" => set_once(&mut method, value),
        b"scheme" => set_once(&mut scheme, value),
        b"authority" => set_once(&mut authority, value),
        b"path" => set_once(&mut path, value),
        b"protocol" => set_once(&mut protocol, value),
        _ => Err(Malformation::UnknownPseudoHeader),
    })?;
    let method = method
        .filter(|m| !m.is_empty())
        .ok_or(Malformation::MissingPseudoHeader(":method"))?;
    if !is_method(&method) {
        return Err(Malformation::InvalidMethod);
    }
    if let Some(authority) = &authority
        && !is_authority(authority)
    {
        return Err(Malformation::InvalidAuthority);
    }
    let connect = method.as_ref() == b"CONNECT";
    // One test on the common path: `:protocol` is rare, and only then are
    // its rules (RFC 8441 §4) looked at.
    let protocol = match protocol {
        None => Bytes::new(),
        // Not ours to accept: we never said we would (RFC 8441 §3).
        Some(_) if !extended_connect => return Err(Malformation::ProtocolNotEnabled),
        // RFC 8441 §4 defines it for CONNECT only.
        Some(_) if !connect => return Err(Malformation::ProtocolWithoutConnect),
        Some(p) if p.is_empty() || !valid_value(&p) => return Err(Malformation::InvalidProtocol),
        Some(p) => p,
    };
    if connect && protocol.is_empty() {
        // §8.5: CONNECT carries only :method and :authority.
        if scheme.is_some() || path.is_some() {
            return Err(Malformation::UnknownPseudoHeader);
        }
        let authority = authority.ok_or(Malformation::MissingPseudoHeader(":authority"))?;
        return Ok(spares.boxed(RequestHead {
            method,
            scheme: Bytes::new(),
            authority,
            path: Bytes::new(),
            protocol,
            fields,
        }));
    }
    // An extended CONNECT goes on as any request: RFC 8441 §4 requires
    // :scheme and :path, and :authority is what §8.3.1 makes it.
    let scheme = scheme
        .filter(|s| !s.is_empty())
        .ok_or(Malformation::MissingPseudoHeader(":scheme"))?;
    if !valid_scheme(&scheme) {
        return Err(Malformation::InvalidScheme);
    }
    let path = path
        .filter(|p| !p.is_empty())
        .ok_or(Malformation::MissingPseudoHeader(":path"))?;
    if !valid_value_without(&path, NOT_PATH) || !valid_path_for(&scheme, &method, &path) {
        return Err(Malformation::InvalidPath);
    }
    // §8.3.1: a Host that names another entity than :authority is malformed.
    if let Some(authority) = &authority
        && fields
            .iter()
            .any(|f| f.name.as_ref() == b"host" && !f.value.eq_ignore_ascii_case(authority))
    {
        return Err(Malformation::HostMismatch);
    }
    Ok(spares.boxed(RequestHead {
        method,
        scheme,
        authority: authority.unwrap_or_default(),
        path,
        protocol,
        fields,
    }))
}

/// A response head from a decoded field section (§8.3.2).
pub(crate) fn response(
    fields: &mut Vec<HeaderField>,
    checked: bool,
    spares: &mut Spares,
) -> Result<ResponseHead, Malformation> {
    let mut status = None;
    let fields = split(fields, checked, spares, |name, value| match name {
        b"status" => set_once(&mut status, value),
        _ => Err(Malformation::UnknownPseudoHeader),
    })?;
    let status = status.ok_or(Malformation::MissingPseudoHeader(":status"))?;
    let status = parse_status(&status).ok_or(Malformation::InvalidStatus)?;
    Ok(ResponseHead { status, fields })
}

/// The octets of a decoded field section's names and values, as the
/// statistics count them.
pub(crate) fn octets(fields: &[HeaderField]) -> u64 {
    fields
        .iter()
        .map(|f| (f.name.len() + f.value.len()) as u64)
        .sum()
}

/// Three digits, 100–599, and not 101: HTTP/2 has no Upgrade (§8.6).
pub(crate) fn parse_status(digits: &[u8]) -> Option<u16> {
    let &[a, b, c] = digits else { return None };
    if ![a, b, c].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let status = u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0');
    ((100..600).contains(&status) && status != 101).then_some(status)
}

/// Trailers: ordinary fields only (§8.1).
pub(crate) fn trailers(
    fields: &mut Vec<HeaderField>,
    checked: bool,
    spares: &mut Spares,
) -> Result<Vec<HeaderField>, Malformation> {
    split(fields, checked, spares, |_, _| {
        Err(Malformation::PseudoHeaderInTrailers)
    })
}

/// The declared body length, if any; repeated values must agree (RFC 9110 §8.6).
pub(crate) fn content_length(fields: &[HeaderField]) -> Result<Option<u64>, Malformation> {
    let mut declared = None;
    for field in fields
        .iter()
        .filter(|f| f.name.as_ref() == b"content-length")
    {
        // Nearly every value is the digits alone: parsed as they are, the
        // list's split and trims are left to the others.
        if let Some(n) = parse_decimal(&field.value) {
            declared = Some(agree(declared, n)?);
            continue;
        }
        for part in field.value.split(|&b| b == b',') {
            let n = parse_decimal(part.trim_ascii()).ok_or(Malformation::InvalidContentLength)?;
            declared = Some(agree(declared, n)?);
        }
    }
    Ok(declared)
}

/// `n`, if it is the length declared before it, or the first.
fn agree(declared: Option<u64>, n: u64) -> Result<u64, Malformation> {
    match declared {
        Some(d) if d != n => Err(Malformation::InvalidContentLength),
        _ => Ok(n),
    }
}

/// The request asks for `100 (Continue)` before it sends its content
/// (RFC 9110 §10.1.1; the expectation is matched case-insensitively).
pub(crate) fn expects_continue(fields: &[HeaderField]) -> bool {
    fields.iter().any(|f| {
        f.name.as_ref() == b"expect" && f.value.trim_ascii().eq_ignore_ascii_case(b"100-continue")
    })
}

fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}

/// The text of a status code: a common one is borrowed from a static,
/// so it is neither built nor dropped per response.
pub(crate) fn status_bytes(status: u16) -> Cow<'static, Bytes> {
    static COMMON: [(u16, Bytes); 9] = [
        (200, Bytes::from_static(b"200")),
        (201, Bytes::from_static(b"201")),
        (204, Bytes::from_static(b"204")),
        (206, Bytes::from_static(b"206")),
        (304, Bytes::from_static(b"304")),
        (400, Bytes::from_static(b"400")),
        (404, Bytes::from_static(b"404")),
        (500, Bytes::from_static(b"500")),
        (100, Bytes::from_static(b"100")),
    ];
    match COMMON.iter().find(|(code, _)| *code == status) {
        Some((_, text)) => Cow::Borrowed(text),
        None => Cow::Owned(Bytes::from(status.to_string())),
    }
}

/// The size of `fields` as SETTINGS_MAX_HEADER_LIST_SIZE counts it: every
/// field's name and value plus 32 (RFC 9113 §6.5.2).
pub(crate) fn section_size(fields: &[HeaderField]) -> usize {
    fields.iter().map(HeaderField::size).sum()
}

/// The field section of the request `head` (its pseudo-fields, then its
/// fields), as a HEADERS or PUSH_PROMISE carries it.
pub(crate) fn request_section(head: &RequestHead) -> impl Iterator<Item = FieldRef<'_>> {
    let (pseudo, count) = request_pseudo(head);
    pseudo
        .into_iter()
        .take(count)
        .chain(head.fields.iter().map(FieldRef::from))
}

/// [`section_size`] of the request `head`, pseudo-fields included.
pub(crate) fn request_size(head: &RequestHead) -> usize {
    let (pseudo, count) = request_pseudo(head);
    let pseudo: usize = pseudo[..count].iter().map(FieldRef::size).sum();
    pseudo + section_size(&head.fields)
}

/// [`section_size`] of the response `head` (`:status` and its fields).
pub(crate) fn response_size(head: &ResponseHead) -> usize {
    let status = status_bytes(head.status);
    FieldRef::new(&STATUS, &status).size() + section_size(&head.fields)
}

/// Pseudo-header names, borrowed by the fields of every head sent.
pub(crate) static STATUS: Bytes = Bytes::from_static(b":status");
static METHOD: Bytes = Bytes::from_static(b":method");
static SCHEME: Bytes = Bytes::from_static(b":scheme");
static AUTHORITY: Bytes = Bytes::from_static(b":authority");
static PATH: Bytes = Bytes::from_static(b":path");
static PROTOCOL: Bytes = Bytes::from_static(b":protocol");

/// The pseudo-header fields of a request, in the order §8.3.1 lists them:
/// the first `count` of a fixed array of borrowed fields, so sending a
/// request builds nothing for them (the rest repeat `:method`, unused).
/// A plain CONNECT has `:authority` alone (§8.5); an extended one is a
/// request like others with `:protocol` after them (RFC 8441 §4).
fn request_pseudo(head: &RequestHead) -> ([FieldRef<'_>; 5], usize) {
    let mut fields = [FieldRef::new(&METHOD, &head.method); 5];
    let mut count = 1;
    let plain_connect = head.method.as_ref() == b"CONNECT" && head.protocol.is_empty();
    let mut push = |field| {
        fields[count] = field;
        count += 1;
    };
    if !plain_connect {
        push(FieldRef::new(&SCHEME, &head.scheme));
    }
    if !head.authority.is_empty() {
        push(FieldRef::new(&AUTHORITY, &head.authority));
    }
    if !plain_connect {
        push(FieldRef::new(&PATH, &head.path));
    }
    if !head.protocol.is_empty() {
        push(FieldRef::new(&PROTOCOL, &head.protocol));
    }
    (fields, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The checks under test, each with spares of its own.
    fn request(fields: &mut Vec<HeaderField>, checked: bool) -> Result<RequestHead, Malformation> {
        super::request(fields, checked, false, &mut Spares::default()).map(|head| *head)
    }

    fn response(
        fields: &mut Vec<HeaderField>,
        checked: bool,
    ) -> Result<ResponseHead, Malformation> {
        super::response(fields, checked, &mut Spares::default())
    }

    fn trailers(
        fields: &mut Vec<HeaderField>,
        checked: bool,
    ) -> Result<Vec<HeaderField>, Malformation> {
        super::trailers(fields, checked, &mut Spares::default())
    }

    fn f(name: &'static str, value: &'static str) -> HeaderField {
        HeaderField::new(name.as_bytes(), value.as_bytes())
    }

    fn get() -> Vec<HeaderField> {
        vec![
            f(":method", "GET"),
            f(":scheme", "http"),
            f(":authority", "a"),
            f(":path", "/"),
        ]
    }

    #[test]
    fn valid_request() {
        let mut fields = get();
        fields.push(f("accept", "*/*"));
        let head = request(&mut fields, false).unwrap();
        assert_eq!(head.method, "GET");
        assert_eq!(head.fields, vec![f("accept", "*/*")]);
    }

    #[test]
    fn request_rules_rfc9113_8_3() {
        let cases: Vec<(Vec<HeaderField>, Malformation)> = vec![
            (
                vec![f(":method", "GET"), f(":scheme", "http")],
                Malformation::MissingPseudoHeader(":path"),
            ),
            (
                [get(), vec![f(":method", "GET")]].concat(),
                Malformation::DuplicatePseudoHeader,
            ),
            (
                [get(), vec![f(":status", "200")]].concat(),
                Malformation::UnknownPseudoHeader,
            ),
            (
                vec![
                    f(":method", "GET"),
                    f("x", "1"),
                    f(":scheme", "http"),
                    f(":path", "/"),
                ],
                Malformation::PseudoHeaderAfterField,
            ),
            (
                [get(), vec![f("Accept", "x")]].concat(),
                Malformation::UppercaseFieldName,
            ),
            (
                [get(), vec![f("a b", "x")]].concat(),
                Malformation::InvalidFieldName,
            ),
            (
                [get(), vec![f("connection", "close")]].concat(),
                Malformation::ConnectionSpecificField,
            ),
            (
                [get(), vec![f("te", "gzip")]].concat(),
                Malformation::ConnectionSpecificField,
            ),
            (
                [get(), vec![f("x", " padded")]].concat(),
                Malformation::InvalidFieldValue,
            ),
            (
                [get(), vec![f("x", "a\nb")]].concat(),
                Malformation::InvalidFieldValue,
            ),
            (
                vec![f(":method", "GET"), f(":scheme", "http"), f(":path", "")],
                Malformation::MissingPseudoHeader(":path"),
            ),
            // A space inside a path (RFC 3986 has none), where any other
            // value may hold one.
            (
                vec![
                    f(":method", "GET"),
                    f(":scheme", "http"),
                    f(":path", "/a b"),
                ],
                Malformation::InvalidPath,
            ),
        ];
        for (fields, want) in cases {
            assert_eq!(request(&mut fields.clone(), false), Err(want), "{fields:?}");
        }
        assert!(request(&mut [get(), vec![f("te", "trailers")]].concat(), false).is_ok());
        assert!(request(&mut [get(), vec![f("x", "a b")]].concat(), false).is_ok());
        assert!(request(&mut [get(), vec![f("host", "EXAMPLE")]].concat(), false).is_err());
        assert!(request(&mut [get(), vec![f("host", "a")]].concat(), false).is_ok());
        assert!(
            request(&mut [get(), vec![f("host", "A")]].concat(), false).is_ok(),
            "host names compare without case"
        );
        assert_eq!(
            request(&mut [get(), vec![f("host", "other")]].concat(), false),
            Err(Malformation::HostMismatch)
        );
    }

    /// §8.2.1 and §8.3.1 as `crate::octets` states them, octet by octet: a
    /// name refused for what no field name may hold and for uppercase, a
    /// value for what no value may hold, a `:path` for what no
    /// request-target may hold; the HTTP/1.1 send checks take the same
    /// rules (`message::check_request`).
    #[test]
    fn the_receive_checks_are_the_octet_rules() {
        for b in 0..=u8::MAX {
            let text = |before: &[u8]| {
                let mut t = before.to_vec();
                t.extend([b, b'a']);
                Bytes::from(t)
            };
            let mut named = get();
            named.push(HeaderField::new(text(b"x"), "v"));
            let bad_name = octets::not_in_field_name(b) || b.is_ascii_uppercase();
            assert_eq!(request(&mut named, false).is_err(), bad_name, "{b:#04x}");
            let mut valued = get();
            valued.push(HeaderField::new("x", text(b"v")));
            let bad_value = octets::not_in_field_value(b);
            assert_eq!(request(&mut valued, false).is_err(), bad_value, "{b:#04x}");
            let mut pathed = get();
            pathed.retain(|f| f.name != ":path");
            pathed.push(HeaderField::new(":path", text(b"/")));
            let bad_path = octets::not_in_target(b);
            assert_eq!(request(&mut pathed, false).is_err(), bad_path, "{b:#04x}");
            let sent = RequestHead::new("GET", "http", "a", text(b"/"));
            assert_eq!(
                crate::message::check_request(&sent).is_err(),
                bad_path,
                "{b:#04x}"
            );
        }
    }

    /// §8.3.1's URI parts, by RFC 3986's grammar: a scheme (§3.1), an
    /// authority without userinfo (§3.2), and for "http" and "https" a path
    /// that is absolute, or `*` for OPTIONS only.
    #[test]
    fn request_uri_parts_rfc9113_8_3_1() {
        let head = |method: &'static str,
                    scheme: &'static str,
                    authority: &'static str,
                    path: &'static str| {
            vec![
                f(":method", method),
                f(":scheme", scheme),
                f(":authority", authority),
                f(":path", path),
            ]
        };
        let malformed = [
            (head("GET", "ht tp", "a", "/"), Malformation::InvalidScheme),
            (head("GET", "1http", "a", "/"), Malformation::InvalidScheme),
            (
                head("GET", "http", "a b", "/"),
                Malformation::InvalidAuthority,
            ),
            (
                head("GET", "http", "user@a", "/"),
                Malformation::InvalidAuthority,
            ),
            (
                head("GET", "http", "a/b", "/"),
                Malformation::InvalidAuthority,
            ),
            (head("GET", "http", "a", "abc"), Malformation::InvalidPath),
            (head("GET", "https", "a", "*"), Malformation::InvalidPath),
            (head("GET", "http", "a", "/\x7f"), Malformation::InvalidPath),
        ];
        for (mut fields, want) in malformed {
            assert_eq!(request(&mut fields.clone(), false), Err(want), "{fields:?}");
            assert!(request(&mut fields, true).is_err(), "checked or not");
        }
        let valid = [
            head("OPTIONS", "http", "a", "*"),
            head("GET", "HTTPS", "a", "/"),
            head(
                "GET",
                "http",
                "[::1]:8080",
                "/nudm-sdm/v2/imsi-001?dataset-names=AM,SMF",
            ),
            head("GET", "http", "a%2Db.example:80", "/"),
            head("GET", "urn+x-1.0", "a", "relative"),
        ];
        for mut fields in valid {
            assert!(request(&mut fields, false).is_ok(), "{fields:?}");
        }
    }

    #[test]
    fn connect_takes_authority_only() {
        let head = request(
            &mut vec![f(":method", "CONNECT"), f(":authority", "h:443")],
            false,
        )
        .unwrap();
        assert_eq!(head.authority, "h:443");
        assert!(
            request(
                &mut vec![
                    f(":method", "CONNECT"),
                    f(":authority", "h"),
                    f(":path", "/")
                ],
                false
            )
            .is_err()
        );
    }

    #[test]
    fn response_status_rules() {
        assert_eq!(
            response(&mut vec![f(":status", "204")], false)
                .unwrap()
                .status,
            204
        );
        for bad in ["20", "2000", "abc", "101", "099", "600"] {
            assert_eq!(
                response(&mut vec![HeaderField::new(":status", bad)], false),
                Err(Malformation::InvalidStatus),
                "{bad}"
            );
        }
        assert_eq!(
            response(&mut vec![], false),
            Err(Malformation::MissingPseudoHeader(":status"))
        );
    }

    #[test]
    fn content_length_rules() {
        assert_eq!(content_length(&[f("content-length", "12")]), Ok(Some(12)));
        assert_eq!(
            content_length(&[f("content-length", "12, 12")]),
            Ok(Some(12))
        );
        assert_eq!(
            content_length(&[f("content-length", "1"), f("content-length", "2")]),
            Err(Malformation::InvalidContentLength)
        );
        assert_eq!(
            content_length(&[f("content-length", "-1")]),
            Err(Malformation::InvalidContentLength)
        );
        assert_eq!(
            content_length(&[f("content-length", "99999999999999999999")]),
            Err(Malformation::InvalidContentLength)
        );
        assert_eq!(content_length(&[]), Ok(None));
        // Each kind of value: digits alone, a list, and where they disagree.
        assert_eq!(
            content_length(&[f("content-length", "12,12")]),
            Ok(Some(12))
        );
        assert_eq!(
            content_length(&[f("content-length", "12"), f("content-length", "12, 12")]),
            Ok(Some(12))
        );
        for bad in ["", "12,", "1, 2", "12 12", "+12", "0x10"] {
            assert_eq!(
                content_length(&[f("content-length", bad)]),
                Err(Malformation::InvalidContentLength),
                "{bad:?}"
            );
        }
        assert_eq!(
            content_length(&[f("content-length", "12, 12"), f("content-length", "13")]),
            Err(Malformation::InvalidContentLength)
        );
    }

    #[test]
    fn trailers_reject_pseudo() {
        assert_eq!(
            trailers(&mut vec![f(":status", "200")], false),
            Err(Malformation::PseudoHeaderInTrailers)
        );
        assert!(trailers(&mut vec![f("grpc-status", "0")], false).is_ok());
    }
}
