//! `-R SYMBOL=FORMAT`: each scenario's number, formatted like printf, put in
//! place of SYMBOL in paths, header values and bodies (`-R __MDN__=01092%06d`
//! turns scenario 7 into 01092000007).

use std::fmt::{self, Write as _};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use memchr::memmem::Finder;

/// Filled texts are cut from chunks of this size: a request's path with a
/// symbol in it costs a share of one allocation, not an allocation and a
/// free of its own.
const CHUNK: usize = 1024;

/// Texts shorter than this are searched for a symbol without memchr's
/// searcher (see `Needle::find`).
const SHORT_TEXT: usize = 64;

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
/// whole body for each of them, and a capture hands its symbol's to every
/// scenario instance it sets a value for.
#[derive(Debug, Clone)]
pub struct Needle(Arc<Finder<'static>>);

impl Needle {
    pub fn new(name: &str) -> Needle {
        Needle(Arc::new(Finder::new(name.as_bytes()).into_owned()))
    }

    fn name(&self) -> &[u8] {
        self.0.needle()
    }

    /// Where the name next occurs in `text` at or after `from`. A short
    /// text (a path, a field value) is searched for the name's first byte
    /// and checked where it is found, which costs a fraction of what
    /// setting the searcher to work does; a longer one (a body) goes
    /// through the searcher.
    fn find(&self, text: &[u8], from: usize) -> Option<usize> {
        let rest = text.get(from..)?;
        if rest.len() >= SHORT_TEXT {
            return self.0.find(rest).map(|at| from + at);
        }
        let name = self.name();
        let &first = name.first()?;
        let mut at = 0;
        while let Some(found) = rest.get(at..).and_then(|r| memchr::memchr(first, r)) {
            let start = at + found;
            if rest[start..].starts_with(name) {
                return Some(from + start);
            }
            at = start + 1;
        }
        None
    }

    /// Appends `text` with every occurrence of the name replaced by `with`
    /// to `out`, in one scan; says whether the name occurs (when it does
    /// not, an empty one never does, nothing is appended).
    fn replace_into(&self, text: &[u8], with: &[u8], out: &mut BytesMut) -> bool {
        let name = self.name();
        if name.is_empty() {
            return false;
        }
        let mut from = 0;
        while let Some(at) = self.find(text, from) {
            out.extend_from_slice(&text[from..at]);
            out.extend_from_slice(with);
            from = at + name.len();
        }
        // A match moves `from` past a name of at least one byte.
        if from == 0 {
            return false;
        }
        out.extend_from_slice(&text[from..]);
        true
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

    /// These values made anew for scenario `number`, reusing their
    /// strings: the values of a finished scenario of the same run (made
    /// from the same `symbols`, then maybe given captured ones, which go).
    pub fn refill(&mut self, symbols: &[Symbol], number: u64) {
        self.0.truncate(symbols.len());
        if self.0.len() < symbols.len() {
            *self = Values::new(symbols, number);
            return;
        }
        for ((_, value), symbol) in self.0.iter_mut().zip(symbols) {
            value.clear();
            symbol.format.write(number, value);
        }
    }

    /// Sets a captured symbol (by its needle, made once for the run) for
    /// the later steps of this scenario instance (a later capture of the
    /// same symbol replaces it).
    pub fn set(&mut self, symbol: &Needle, value: String) {
        match self.0.iter_mut().find(|(n, _)| n == symbol) {
            Some((_, v)) => *v = value,
            None => self.0.push((symbol.clone(), value)),
        }
    }

    /// The symbols' values, for correlating notifications.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(_, v)| v.as_str())
    }

    /// Replaces every symbol in a path, field value or body (bytewise, so
    /// any body works), symbol after symbol; the result is cut from `chunk`
    /// (empty, and left empty), which is replaced when too little room is
    /// left in it. Bytes without symbols come back as the same `Bytes`, not
    /// a copy.
    pub fn apply(&self, text: &Bytes, chunk: &mut BytesMut) -> Bytes {
        let mut filled: Option<Bytes> = None;
        for (needle, value) in &self.0 {
            let current = filled.as_deref().unwrap_or(text);
            // Room for one occurrence; more grow the chunk as they come.
            let room = current.len() + value.len();
            if chunk.capacity() < room {
                *chunk = BytesMut::with_capacity(room.max(CHUNK));
            }
            if needle.replace_into(current, value.as_bytes(), chunk) {
                filled = Some(chunk.split().freeze());
            }
        }
        filled.unwrap_or_else(|| text.clone())
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

    /// Texts filled one after another from one chunk keep their bytes: a
    /// text with many occurrences grows past the room it was given, and a
    /// long one takes a chunk of its own.
    #[test]
    fn texts_filled_from_one_chunk_keep_their_bytes() {
        let v = Values::new(&[Symbol::parse("__MDN__=01092%06d").unwrap()], 26);
        let mut chunk = BytesMut::new();
        let path = Bytes::from_static(b"/user/__MDN__");
        let many = Bytes::from("__MDN__,".repeat(300));
        let mut filled = Vec::new();
        for _ in 0..100 {
            filled.push((v.apply(&path, &mut chunk), "/user/01092000026".to_owned()));
            filled.push((v.apply(&many, &mut chunk), "01092000026,".repeat(300)));
            assert!(chunk.is_empty());
        }
        for (bytes, expected) in filled {
            assert_eq!(&bytes[..], expected.as_bytes());
        }
    }

    #[test]
    fn values_replace_everywhere() {
        let symbols = vec![
            Symbol::parse("__MDN__=01092%06d").unwrap(),
            Symbol::parse("@N@=%x").unwrap(),
        ];
        let v = Values::new(&symbols, 26);
        assert_eq!(
            v.apply(
                &Bytes::from_static(b"/user/__MDN__?h=@N@"),
                &mut BytesMut::new()
            ),
            "/user/01092000026?h=1a"
        );
        let body = Bytes::from_static(b"{ \"USER_MDN\" : \"__MDN__\" } __MDN__@N@");
        assert_eq!(
            &v.apply(&body, &mut BytesMut::new())[..],
            b"{ \"USER_MDN\" : \"01092000026\" } 010920000261a"
        );
        let plain = Bytes::from_static(b"no symbols _ here __MDN_");
        assert_eq!(
            v.apply(&plain, &mut BytesMut::new()).as_ptr(),
            plain.as_ptr(),
            "not copied"
        );
        assert!(Symbol::parse("noequals").is_err());
        assert!(Symbol::parse("=%d").is_err());
    }

    /// Occurrences do not overlap; a text without the name (or an empty
    /// name) appends nothing.
    #[test]
    fn replacing_appends_the_filled_text() {
        let replace = |name: &str, text: &[u8], with: &[u8]| {
            let mut out = BytesMut::from(&b"<"[..]);
            Needle::new(name)
                .replace_into(text, with, &mut out)
                .then(|| out.to_vec())
                .ok_or(out.len())
        };
        assert_eq!(
            replace("ab", b"xabyabab", b"123"),
            Ok(b"<x123y123123".to_vec())
        );
        assert_eq!(replace("aa", b"aaa", b"b"), Ok(b"<ba".to_vec()));
        assert_eq!(replace("ab", b"ba", b"x"), Err(1));
        assert_eq!(replace("", b"anything", b"x"), Err(1));
    }

    /// Short texts (searched byte by byte) and long ones (through the
    /// searcher) are filled alike: every length across the bound, with the
    /// name at the start, the end, twice in a row and cut short, and
    /// near-misses around it.
    #[test]
    fn short_and_long_texts_are_filled_alike() {
        let needle = Needle::new("__N__");
        for len in 0..2 * SHORT_TEXT {
            for shape in [
                "__N__{}",
                "{}__N__",
                "_{}__N____N__x",
                "__N_{}_N__",
                "{}__N",
            ] {
                let pad: String = (0..len)
                    .map(|i| if i % 3 == 0 { '_' } else { 'a' })
                    .collect();
                let text = shape.replace("{}", &pad);
                let expected = text.replace("__N__", "7");
                let mut out = BytesMut::new();
                let filled = needle.replace_into(text.as_bytes(), b"7", &mut out);
                assert_eq!(filled, text.contains("__N__"), "{text}");
                if filled {
                    assert_eq!(&out[..], expected.as_bytes(), "{text}");
                }
            }
        }
    }

    /// Values filled in again for another scenario are what new ones
    /// would be, the captured symbols of the one before gone.
    #[test]
    fn refilled_values_are_new_values() {
        let symbols = [
            Symbol::parse("__MDN__=01092%06d").unwrap(),
            Symbol::parse("@N@=%x").unwrap(),
        ];
        let mut v = Values::new(&symbols, 1);
        v.set(&Needle::new("__SUB__"), "sub-1".into());
        v.refill(&symbols, 26);
        let text = Bytes::from_static(b"/u/__MDN__/@N@/__SUB__");
        let fresh = Values::new(&symbols, 26);
        assert_eq!(
            v.apply(&text, &mut BytesMut::new()),
            fresh.apply(&text, &mut BytesMut::new())
        );
        assert_eq!(v.values().collect::<Vec<_>>(), ["01092000026", "1a"]);
        let mut short = Values::new(&symbols[..1], 3);
        short.refill(&symbols, 4);
        assert_eq!(short.values().collect::<Vec<_>>(), ["01092000004", "4"]);
    }

    /// Captured symbols join the scenario's values and replace like `-R`
    /// ones; capturing a symbol again replaces its value.
    #[test]
    fn captured_values_substitute() {
        let mut v = Values::new(&[Symbol::parse("__N__=%d").unwrap()], 3);
        v.set(&Needle::new("__SUB__"), "sub-1".into());
        let path = Bytes::from_static(b"/s/__SUB__/n/__N__");
        assert_eq!(v.apply(&path, &mut BytesMut::new()), "/s/sub-1/n/3");
        v.set(&Needle::new("__SUB__"), "sub-2".into());
        assert_eq!(
            &v.apply(
                &Bytes::from_static(b"{\"id\":\"__SUB__\"}"),
                &mut BytesMut::new()
            )[..],
            b"{\"id\":\"sub-2\"}"
        );
        assert_eq!(v.values().collect::<Vec<_>>(), ["3", "sub-2"]);
    }
}
