//! Message bodies as the command line gives them: `-t TEXT`, `-b HEX`,
//! `-f FILE`, `-e SIZE`. Loaded once when the options are read, so the hot
//! path only clones a `Bytes`.

use std::fmt;
use std::path::{Path, PathBuf};

use bytes::Bytes;

/// A body source that failed to load or parse; names the flag's argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// An odd number of hex digits.
    HexOdd(String),
    /// A character that is not a hex digit (the input, the character).
    HexDigit(String, char),
    Size(String),
    File(PathBuf, String),
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::HexOdd(s) => write!(f, "-b {s:?}: an odd number of hex digits"),
            BodyError::HexDigit(s, c) => write!(f, "-b {s:?}: {c:?} is not a hex digit"),
            BodyError::Size(s) => write!(f, "-e {s:?}: not a size (N, Nk or Nm)"),
            BodyError::File(p, e) => write!(f, "-f {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for BodyError {}

/// `-t TEXT`.
pub fn text(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// `-b HEX`: hex digits, optionally after `0x` and separated by spaces.
pub fn hex(s: &str) -> Result<Bytes, BodyError> {
    let trimmed = s.trim_start();
    let digits = trimmed
        .strip_prefix("0x")
        .or_else(|| trimmed.strip_prefix("0X"))
        .unwrap_or(trimmed);
    let mut nibbles = Vec::with_capacity(digits.len());
    for c in digits.chars().filter(|c| !c.is_ascii_whitespace()) {
        let v = c
            .to_digit(16)
            .ok_or_else(|| BodyError::HexDigit(s.to_owned(), c))?;
        nibbles.push(v as u8);
    }
    if !nibbles.len().is_multiple_of(2) {
        return Err(BodyError::HexOdd(s.to_owned()));
    }
    Ok(nibbles
        .chunks(2)
        .map(|pair| pair[0] << 4 | pair[1])
        .collect::<Vec<u8>>()
        .into())
}

/// `-f FILE`.
pub fn file(path: &Path) -> Result<Bytes, BodyError> {
    std::fs::read(path)
        .map(Bytes::from)
        .map_err(|e| BodyError::File(path.to_owned(), e.to_string()))
}

/// `-e SIZE`: a body of exactly SIZE bytes (N, Nk = N×1024, Nm = N×1024²),
/// shaped as a JSON object when it is big enough to be one, since SBI
/// payloads are JSON and some servers check.
pub fn sized(s: &str) -> Result<Bytes, BodyError> {
    let size = parse_size(s).ok_or_else(|| BodyError::Size(s.to_owned()))?;
    const OPEN: &[u8] = b"{\"data\":\"";
    const CLOSE: &[u8] = b"\"}";
    let mut body = Vec::with_capacity(size);
    if size >= OPEN.len() + CLOSE.len() {
        body.extend_from_slice(OPEN);
        body.resize(size - CLOSE.len(), b'x');
        body.extend_from_slice(CLOSE);
    } else {
        body.resize(size, b'x');
    }
    Ok(Bytes::from(body))
}

/// N, Nk or Nm (case-insensitive); at most 1 GiB.
pub fn parse_size(s: &str) -> Option<usize> {
    let (n, unit) = units(s)?;
    if unit > 1 << 20 {
        return None;
    }
    let size = usize::try_from(n.checked_mul(unit)?).ok()?;
    (size <= 1 << 30).then_some(size)
}

/// N, Nk, Nm or Ng (case-insensitive), with no bound but the type's: a
/// limit, which allocates nothing.
pub fn parse_limit(s: &str) -> Option<u64> {
    let (n, unit) = units(s)?;
    n.checked_mul(unit)
}

/// The number and the unit it is counted in (1, or 2^10, 2^20, 2^30 for
/// a k, m or g suffix).
fn units(s: &str) -> Option<(u64, u64)> {
    let s = s.trim();
    let (digits, unit) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 1 << 10),
        b'm' | b'M' => (&s[..s.len() - 1], 1 << 20),
        b'g' | b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    Some((digits.parse().ok()?, unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10"), Some(10));
        assert_eq!(parse_size("1k"), Some(1024));
        assert_eq!(parse_size("4K"), Some(4096));
        assert_eq!(parse_size("2m"), Some(2 << 20));
        assert_eq!(parse_size("k"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("9999999999m"), None);
        // Sizes that are allocated stop at 1 GiB, and have no g.
        assert_eq!(parse_size("1024m"), Some(1 << 30));
        assert_eq!(parse_size("1g"), None);
        assert_eq!(parse_limit("64m"), Some(64 << 20));
        assert_eq!(parse_limit("4G"), Some(4 << 30));
        assert_eq!(parse_limit("0"), Some(0));
        for bad in ["", "g", "-1", "1t", "99999999999999999999", "17179869184g"] {
            assert_eq!(parse_limit(bad), None, "{bad}");
        }
    }

    #[test]
    fn sized_bodies_are_exact_and_json_shaped() {
        for n in [0, 5, 11, 12, 1024, 10 * 1024] {
            let body = sized(&n.to_string()).unwrap();
            assert_eq!(body.len(), n);
        }
        let body = sized("1k").unwrap();
        assert!(body.starts_with(b"{\"data\":\"") && body.ends_with(b"\"}"));
    }

    #[test]
    fn hex_bodies() {
        assert_eq!(hex("48 69").unwrap(), Bytes::from_static(b"Hi"));
        assert!(hex("4").is_err());
        assert!(hex("zz").is_err());
    }

    /// Issue 10 item 10: `-b 0x48454c4c4f` was refused, and a non-hex digit
    /// got the odd-count message.
    #[test]
    fn hex_with_0x_prefix_and_digit_errors() {
        assert_eq!(hex("0x48454c4c4f").unwrap(), Bytes::from_static(b"HELLO"));
        assert_eq!(hex("0X48 69").unwrap(), Bytes::from_static(b"Hi"));
        assert_eq!(
            hex("48g9").unwrap_err().to_string(),
            "-b \"48g9\": 'g' is not a hex digit"
        );
        assert_eq!(
            hex("0x486").unwrap_err().to_string(),
            "-b \"0x486\": an odd number of hex digits"
        );
    }
}
