//! The `Upgrade: h2c` handshake on the server (RFC 7540 §3.2; RFC 9113
//! §3.1 deprecates it, but `curl --http2 http://…` still sends it).

use bytes::Bytes;

use super::parse::BodyKind;
use super::parse::ParsedRequest;
use crate::config::Http1Config;
use crate::frame::Settings;

/// The whole 101 response we answer an accepted upgrade with.
pub(super) const SWITCHING_PROTOCOLS: &[u8] =
    b"HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: h2c\r\n\r\n";

/// The SETTINGS payload of an upgrade we accept, or None to serve the
/// request as plain HTTP/1.1. The upgrade is ignored, which RFC 9110 §7.8
/// allows, rather than refused when:
///
/// - it is off in the config, or the connection is TLS (h2c is cleartext
///   HTTP/2, RFC 7540 §3.2), or the request is HTTP/1.0 (RFC 9110 §7.8);
/// - `Upgrade` lacks `h2c`, or `Connection` lacks `Upgrade` or
///   `HTTP2-Settings` (RFC 7540 §3.2);
/// - there is not exactly one `HTTP2-Settings`, or it is not base64url, or
///   not a whole number of settings (RFC 7540 §3.2.1: "MUST NOT upgrade"),
///   or a setting is out of its range (RFC 9113 §6.5.2): answering 101
///   and then a GOAWAY for it would end a connection that HTTP/1.1 can
///   serve;
/// - the request has a body: it would have to be read in HTTP/1.1 before
///   the switch, and RFC 7540 §3.2 lets a server decline instead.
pub(super) fn h2c_settings(request: &ParsedRequest, config: &Http1Config) -> Option<Bytes> {
    let controls = &request.controls;
    if !config.allow_h2c_upgrade
        || config.secure
        || request.http10
        || !controls.upgrade_h2c
        || !controls.upgrade_options
        || request.body != BodyKind::None
    {
        return None;
    }
    let [value] = controls.http2_settings.as_slice() else {
        return None;
    };
    let settings = decode_base64url(value)?;
    Settings::decode_values(&settings).ok()?;
    Some(settings)
}

/// Decodes base64url (RFC 4648 §5). HTTP2-Settings omits the padding;
/// trailing `=` is tolerated all the same.
fn decode_base64url(text: &[u8]) -> Option<Bytes> {
    let end = text.iter().rposition(|&b| b != b'=').map_or(0, |i| i + 1);
    let text = text.get(..end)?;
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for &c in text {
        let sextet = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(sextet);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url() {
        assert_eq!(decode_base64url(b"").unwrap(), "");
        assert_eq!(decode_base64url(b"aGk").unwrap(), "hi");
        assert_eq!(decode_base64url(b"aGk=").unwrap(), "hi");
        assert_eq!(decode_base64url(b"aGVsbG8").unwrap(), "hello");
        assert_eq!(decode_base64url(b"-_8").unwrap(), [0xfb, 0xff].as_slice());
        assert_eq!(
            decode_base64url(b"AAMAAABkAAQAoAAAAAIAAAAA").unwrap().len(),
            18
        );
        assert!(decode_base64url(b"a").is_none());
        assert!(decode_base64url(b"a+b/").is_none());
        assert!(decode_base64url(b"aG k").is_none());
    }
}
