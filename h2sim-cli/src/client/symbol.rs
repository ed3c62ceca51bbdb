//! `-R SYMBOL=FORMAT`: each scenario's number, formatted like printf, put in
//! place of SYMBOL in paths, header values and bodies (`-R __MDN__=01092%06d`
//! turns scenario 7 into 01092000007).

use std::fmt::{self, Write as _};
use std::sync::Arc;

use bytes::Bytes;
use memchr::memmem::Finder;

/// A printf-style format with one integer conversion: `%d`, `%u`, `%x`,
/// `%X`, `%o`, with an optional `0` flag and width; `%%` is a percent sign.
/// Built-in symbols (`__LISTEN__`) are constants: no conversion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    prefix: String,
    conversion: Option<Conversion>,
    suffix: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Conversion {
    zero: bool,
    width: usize,
    radix: Radix,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Radix {
    Decimal,
    Hex,
    HexUpper,
    Octal,
}

/// What is wrong with a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    NoConversion(String),
    Unsupported(String),
    TooMany(String),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::NoConversion(s) => write!(f, "format {s:?} has no %d/%x conversion"),
            FormatError::Unsupported(s) => write!(
                f,
                "format {s:?}: only %d %u %x %X %o with 0 and width are supported"
            ),
            FormatError::TooMany(s) => write!(f, "format {s:?} has more than one conversion"),
        }
    }
}

impl Format {
    pub fn parse(s: &str) -> Result<Format, FormatError> {
        let mut prefix = String::new();
        let mut suffix = String::new();
        let mut conversion = None;
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            let out = if conversion.is_some() {
                &mut suffix
            } else {
                &mut prefix
            };
            if c != '%' {
                out.push(c);
                continue;
            }
            if chars.peek() == Some(&'%') {
                chars.next();
                out.push('%');
                continue;
            }
            if conversion.is_some() {
                return Err(FormatError::TooMany(s.to_owned()));
            }
            let zero = chars.peek() == Some(&'0');
            if zero {
                chars.next();
            }
            let mut width = 0usize;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                chars.next();
                width = width.saturating_mul(10).saturating_add(d as usize);
            }
            // Length modifiers printf users write out of habit: %ld, %lld, %lu.
            while chars.peek() == Some(&'l') {
                chars.next();
            }
            let radix = match chars.next() {
                Some('d' | 'u' | 'i') => Radix::Decimal,
                Some('x') => Radix::Hex,
                Some('X') => Radix::HexUpper,
                Some('o') => Radix::Octal,
                _ => return Err(FormatError::Unsupported(s.to_owned())),
            };
            if width > 64 {
                return Err(FormatError::Unsupported(s.to_owned()));
            }
            conversion = Some(Conversion { zero, width, radix });
        }
        if conversion.is_none() {
            return Err(FormatError::NoConversion(s.to_owned()));
        }
        Ok(Format {
            prefix,
            conversion,
            suffix,
        })
    }

    /// The same `text` for every scenario.
    pub fn constant(text: &str) -> Format {
        Format {
            prefix: text.to_owned(),
            conversion: None,
            suffix: String::new(),
        }
    }

    /// Formats `n` into `out`.
    pub fn write(&self, n: u64, out: &mut String) {
        out.push_str(&self.prefix);
        let Some(Conversion { zero, width, radix }) = self.conversion else {
            return;
        };
        let _ = match (radix, zero) {
            // Every request of a `-R` run formats one: digits and padding
            // by hand cost a fraction of the formatting machinery.
            (Radix::Decimal, _) => {
                let mut digits = itoa::Buffer::new();
                let digits = digits.format(n);
                let pad = if zero { '0' } else { ' ' };
                out.extend(std::iter::repeat_n(pad, width.saturating_sub(digits.len())));
                out.push_str(digits);
                Ok(())
            }
            (Radix::Hex, true) => write!(out, "{n:0width$x}"),
            (Radix::Hex, false) => write!(out, "{n:width$x}"),
            (Radix::HexUpper, true) => write!(out, "{n:0width$X}"),
            (Radix::HexUpper, false) => write!(out, "{n:width$X}"),
            (Radix::Octal, true) => write!(out, "{n:0width$o}"),
            (Radix::Octal, false) => write!(out, "{n:width$o}"),
        };
        out.push_str(&self.suffix);
    }

    pub fn format(&self, n: u64) -> String {
        // Room for any u64 in any radix this takes (22 octal digits) and
        // the width, so the string is allocated once.
        let width = self.conversion.map_or(0, |c| c.width);
        let mut out = String::with_capacity(self.prefix.len() + width.max(22) + self.suffix.len());
        self.write(n, &mut out);
        out
    }
}

/// One `-R SYMBOL=FORMAT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub format: Format,
    needle: Needle,
}

impl Symbol {
    pub fn new(name: &str, format: Format) -> Symbol {
        Symbol {
            name: name.to_owned(),
            format,
            needle: Needle::new(name),
        }
    }

    /// Parses `SYMBOL=FORMAT`.
    pub fn parse(s: &str) -> Result<Symbol, String> {
        let (name, format) = s
            .split_once('=')
            .ok_or_else(|| format!("-R {s:?}: expected SYMBOL=FORMAT"))?;
        if name.is_empty() {
            return Err(format!("-R {s:?}: empty symbol"));
        }
        let format = Format::parse(format).map_err(|e| format!("-R {s:?}: {e}"))?;
        Ok(Symbol::new(name, format))
    }
}

/// A symbol's name with its searcher (memchr's SIMD one), built once and
/// shared: every request with symbols scans its path, field values and
/// whole body for each of them.
#[derive(Debug, Clone)]
struct Needle(Arc<Finder<'static>>);

impl Needle {
    fn new(name: &str) -> Needle {
        Needle(Arc::new(Finder::new(name.as_bytes()).into_owned()))
    }

    fn name(&self) -> &[u8] {
        self.0.needle()
    }

    /// `text` with every occurrence of the name replaced by `with`, built
    /// at its exact size (so it becomes `Bytes` without a reallocation);
    /// `None` when the name does not occur (an empty one never does).
    fn replace(&self, text: &[u8], with: &[u8]) -> Option<Vec<u8>> {
        if self.name().is_empty() {
            return None;
        }
        let count = self.0.find_iter(text).count();
        if count == 0 {
            return None;
        }
        let len = text.len() - count * self.name().len() + count * with.len();
        let mut out = Vec::with_capacity(len);
        let mut from = 0;
        for at in self.0.find_iter(text) {
            out.extend_from_slice(&text[from..at]);
            out.extend_from_slice(with);
            from = at + self.name().len();
        }
        out.extend_from_slice(&text[from..]);
        Some(out)
    }
}

impl PartialEq for Needle {
    fn eq(&self, other: &Needle) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Needle {}

/// The symbols' values for one scenario number, ready to substitute.
#[derive(Debug, Clone, Default)]
pub struct Values(Vec<(Needle, String)>);

impl Values {
    pub fn new(symbols: &[Symbol], number: u64) -> Values {
        Values(
            symbols
                .iter()
                .map(|s| (s.needle.clone(), s.format.format(number)))
                .collect(),
        )
    }

    /// Sets a captured symbol for the later steps of this scenario
    /// instance (a later capture of the same symbol replaces it).
    pub fn set(&mut self, name: &str, value: String) {
        match self.0.iter_mut().find(|(n, _)| n.name() == name.as_bytes()) {
            Some((_, v)) => *v = value,
            None => self.0.push((Needle::new(name), value)),
        }
    }

    /// The symbols' values, for correlating notifications.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(_, v)| v.as_str())
    }

    /// Replaces every symbol in a path, field value or body (bytewise, so
    /// any body works). Bytes without symbols come back as the same
    /// `Bytes`, not a copy.
    pub fn apply(&self, body: &Bytes) -> Bytes {
        let mut out: Option<Vec<u8>> = None;
        for (needle, value) in &self.0 {
            let current = out.as_deref().unwrap_or(body);
            if let Some(replaced) = needle.replace(current, value.as_bytes()) {
                out = Some(replaced);
            }
        }
        out.map_or_else(|| body.clone(), Bytes::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_like() {
        let f = |s: &str, n| Format::parse(s).unwrap().format(n);
        assert_eq!(f("01092%06d", 7), "01092000007");
        assert_eq!(f("01092%06d", 99_999), "01092099999");
        assert_eq!(f("%d", 42), "42");
        assert_eq!(f("%5d|", 42), "   42|");
        assert_eq!(f("id-%x", 255), "id-ff");
        assert_eq!(f("%04X", 255), "00FF");
        assert_eq!(f("%o", 8), "10");
        assert_eq!(f("100%%-%lu", 3), "100%-3");
        assert!(Format::parse("plain").is_err());
        assert!(Format::parse("%s").is_err());
        assert!(Format::parse("%d%d").is_err());
    }

    #[test]
    fn values_replace_everywhere() {
        let symbols = vec![
            Symbol::parse("__MDN__=01092%06d").unwrap(),
            Symbol::parse("@N@=%x").unwrap(),
        ];
        let v = Values::new(&symbols, 26);
        assert_eq!(
            v.apply(&Bytes::from_static(b"/user/__MDN__?h=@N@")),
            "/user/01092000026?h=1a"
        );
        let body = Bytes::from_static(b"{ \"USER_MDN\" : \"__MDN__\" } __MDN__@N@");
        assert_eq!(
            &v.apply(&body)[..],
            b"{ \"USER_MDN\" : \"01092000026\" } 010920000261a"
        );
        let plain = Bytes::from_static(b"no symbols _ here __MDN_");
        assert_eq!(v.apply(&plain).as_ptr(), plain.as_ptr(), "not copied");
        assert!(Symbol::parse("noequals").is_err());
        assert!(Symbol::parse("=%d").is_err());
    }

    /// Occurrences do not overlap, and the text is built at its size.
    #[test]
    fn replacing_builds_the_text_at_its_size() {
        let out = Needle::new("ab").replace(b"xabyabab", b"123").unwrap();
        assert_eq!(out, b"x123y123123");
        assert_eq!(out.capacity(), out.len());
        assert_eq!(Needle::new("aa").replace(b"aaa", b"b").unwrap(), b"ba");
        assert_eq!(Needle::new("ab").replace(b"ba", b"x"), None);
        assert_eq!(Needle::new("").replace(b"anything", b"x"), None);
    }

    /// Captured symbols join the scenario's values and replace like `-R`
    /// ones; capturing a symbol again replaces its value.
    #[test]
    fn captured_values_substitute() {
        let mut v = Values::new(&[Symbol::parse("__N__=%d").unwrap()], 3);
        v.set("__SUB__", "sub-1".into());
        let path = Bytes::from_static(b"/s/__SUB__/n/__N__");
        assert_eq!(v.apply(&path), "/s/sub-1/n/3");
        v.set("__SUB__", "sub-2".into());
        assert_eq!(
            &v.apply(&Bytes::from_static(b"{\"id\":\"__SUB__\"}"))[..],
            b"{\"id\":\"sub-2\"}"
        );
        assert_eq!(v.values().collect::<Vec<_>>(), ["3", "sub-2"]);
    }
}
