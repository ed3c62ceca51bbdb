//! Which octets a message may hold where, each rule stated once: the
//! HTTP/2 receive checks (`h2::fields`), the HTTP/1.1 send checks
//! (`message`) and front ends (a client checking the targets and fields
//! its user gives) all take them from here, so no two can drift apart.
//!
//! Each rule is a `const fn` on one octet. The HTTP/2 receive path, which
//! every field of every message passes, folds them into a byte table at
//! compile time (one load a byte); the HTTP/1.1 send checks read eight
//! bytes at a time with the same octets. These rules are what keeps a
//! message from being read as another (lines, fields or pseudo-fields of
//! a sender's choosing); a peer's stricter grammar (RFC 9110 §5.6.2
//! tokens, RFC 3986's URI characters) is its own business.

/// Whether no field name may hold `b`: controls, space, DEL, octets above
/// ASCII, and `:` (RFC 9110 §5.1; RFC 9113 §8.2.1 forbids the same in
/// HTTP/2, and uppercase letters besides). Over HTTP/1.1 such a name ends
/// or splits its line; over HTTP/2 it is malformed.
pub const fn not_in_field_name(b: u8) -> bool {
    !b.is_ascii_graphic() || b == b':'
}

/// Whether no field value may hold `b`: NUL, CR or LF (RFC 9110 §5.5,
/// RFC 9113 §8.2.1). Over HTTP/1.1 such a value ends its line, and what
/// follows would be read as fields or a body of the sender's choosing
/// (response splitting, request smuggling).
pub const fn not_in_field_value(b: u8) -> bool {
    let mut i = 0;
    while i < NOT_IN_FIELD_VALUE.len() {
        if NOT_IN_FIELD_VALUE[i] == b {
            return true;
        }
        i += 1;
    }
    false
}

/// The octets of [`not_in_field_value`], also for the eight-at-a-time
/// reading of [`is_field_value`].
const NOT_IN_FIELD_VALUE: [u8; 3] = [0, b'\r', b'\n'];

/// Whether no request-target (an HTTP/1.1 request line's, an HTTP/2
/// `:path`) may hold `b` as it is: controls, space and DEL. RFC 3986 has
/// none of them, and a space would end the request line (RFC 9112 §3;
/// RFC 9113 §8.3.1 makes such a `:path` malformed). Octets above ASCII
/// pass, as raw UTF-8 paths are met; RFC 3986's other excluded characters
/// (``"<>\^`{|}``) are left to a sender that wants to be stricter.
pub const fn not_in_target(b: u8) -> bool {
    b <= b' ' || b == 0x7f
}

/// Whether `name` can be a field name: not empty, and no octet
/// [`not_in_field_name`].
pub fn is_field_name(name: &[u8]) -> bool {
    !name.is_empty()
        && !any_word(name, |w| {
            // Every octet of the rule: above ASCII, below `!`, DEL, `:`.
            w & HIGHS != 0 || has_less(w, b'!') || has_byte(w, 0x7f) || has_byte(w, b':')
        })
}

/// Whether `value` holds no octet [`not_in_field_value`].
pub fn is_field_value(value: &[u8]) -> bool {
    !any_word(value, |w| {
        NOT_IN_FIELD_VALUE.iter().any(|&b| has_byte(w, b))
    })
}

/// Whether `target` holds no octet [`not_in_target`].
pub fn is_target(target: &[u8]) -> bool {
    !target.iter().any(|&b| not_in_target(b))
}

// Eight bytes at a time (SWAR), as every field of every HTTP/1.1 message
// sent passes here: with `content-type` and `content-length`, about 170
// instructions a response, where a byte table took about 250.
const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// Whether a byte of `w` is below `n` (at most 0x80), for bytes below 0x80.
const fn has_less(w: u64, n: u8) -> bool {
    w.wrapping_sub(ONES * n as u64) & !w & HIGHS != 0
}

/// Whether a byte of `w` equals `b`.
const fn has_byte(w: u64, b: u8) -> bool {
    has_less(w ^ (ONES * b as u64), 1)
}

/// Whether `test` holds for a word of `s`, read eight bytes at a time: the
/// last word overlaps the one before it rather than leaving a remainder,
/// and a text shorter than a word is padded with `a`, which no rule here
/// refuses.
fn any_word(s: &[u8], test: impl Fn(u64) -> bool) -> bool {
    let word = |bytes: &[u8]| {
        let mut w = [b'a'; 8];
        w[..bytes.len()].copy_from_slice(bytes);
        u64::from_ne_bytes(w)
    };
    match s.len() {
        0..8 => test(word(s)),
        len => {
            s.chunks_exact(8).any(|c| test(word(c))) || (len % 8 != 0 && test(word(&s[len - 8..])))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-bytes-at-a-time checks agree with the rules, octet by
    /// octet, for every octet at every place of a text shorter than a
    /// word, of a whole word and of the overlapped last one.
    #[test]
    fn the_word_checks_are_the_octet_rules() {
        for len in [1, 7, 8, 9, 16, 17] {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut text = vec![b'a'; len];
                    text[at] = b;
                    assert_eq!(
                        is_field_name(&text),
                        !not_in_field_name(b),
                        "{len} {at} {b}"
                    );
                    assert_eq!(
                        is_field_value(&text),
                        !not_in_field_value(b),
                        "{len} {at} {b}"
                    );
                    assert_eq!(is_target(&text), !not_in_target(b), "{len} {at} {b}");
                }
            }
        }
        assert!(!is_field_name(b""));
        assert!(is_field_value(b"") && is_target(b""));
    }

    /// The rules as RFC 9110 §5.1, §5.5 and RFC 3986 (with RFC 9112 §3)
    /// word them, octet by octet.
    #[test]
    fn the_rules_are_the_rfcs() {
        for b in 0..=255u8 {
            let visible = (0x21..=0x7e).contains(&b);
            assert_eq!(not_in_field_name(b), !visible || b == b':', "{b:#04x}");
            assert_eq!(
                not_in_field_value(b),
                matches!(b, 0 | b'\r' | b'\n'),
                "{b:#04x}"
            );
            assert_eq!(not_in_target(b), b <= 0x20 || b == 0x7f, "{b:#04x}");
        }
    }
}
