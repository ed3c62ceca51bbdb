//! Values at RFC 6901 JSON Pointers, read from the JSON text itself.
//!
//! A client's captures and a server's list filters each want one or two
//! values out of a document they would otherwise parse into a tree: an
//! allocation per member and string, for a 1 KiB answer or for every
//! stored profile a discovery request looks at. Here a pointer reads only
//! the members on its path, skipping the rest where they lie: in a
//! document checked once ([`parse`], [`find`]), or in a stored one known
//! to be JSON ([`find_in`]).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// `text` as JSON: checked whole, but not built into a tree.
pub fn parse(text: &[u8]) -> Option<&RawValue> {
    serde_json::from_slice(text).ok()
}

/// The value at an RFC 6901 pointer in `json`, as `Value::pointer` finds
/// it: `~1` is `/` and `~0` is `~` in a token; an array index is decimal
/// without a sign or a leading zero; of an object's repeated members the
/// last counts.
pub fn find<'a>(json: &'a RawValue, pointer: &str) -> Option<&'a RawValue> {
    if pointer.is_empty() {
        return Some(json);
    }
    find_in(json.get().as_bytes(), pointer)
}

/// [`find`] in JSON text not checked first, such as a stored item (which
/// was valid when stored): each object and array on the pointer's path is
/// read once, to its end, and nothing else is. Text that turns out not to
/// be JSON there finds nothing.
pub fn find_in<'a>(text: &'a [u8], pointer: &str) -> Option<&'a RawValue> {
    let Some(tokens) = pointer.strip_prefix('/') else {
        return if pointer.is_empty() {
            parse(text)
        } else {
            None
        };
    };
    let mut text = text;
    let mut found = None;
    for token in tokens.split('/') {
        let token = if token.contains('~') {
            std::borrow::Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
        } else {
            std::borrow::Cow::Borrowed(token)
        };
        let trimmed = text.trim_ascii_start();
        let mut de = serde_json::Deserializer::from_slice(trimmed);
        let value: &'a RawValue = match trimmed.first()? {
            b'{' => de.deserialize_map(Member(&token)).ok()??,
            b'[' => de.deserialize_seq(Element(array_index(&token)?)).ok()??,
            _ => return None,
        };
        text = value.get().as_bytes();
        found = Some(value);
    }
    found
}

/// An array index token: `0`, or digits not starting with `0`.
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

/// Finds the member named `.0` of an object, skipping the others.
struct Member<'t>(&'t str);

impl<'de> Visitor<'de> for Member<'_> {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(hit) = map.next_key_seed(KeyIs(self.0))? {
            if hit {
                found = Some(map.next_value()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Whether a string (an object's key, or a value) is `.0`, compared
/// where it lies in the text (unescaped first when it has escapes).
struct KeyIs<'t>(&'t str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<bool, D::Error> {
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for KeyIs<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

/// Finds element `.0` of an array, skipping the others.
struct Element(usize);

impl<'de> Visitor<'de> for Element {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        let mut at = 0;
        loop {
            if at == self.0 {
                match seq.next_element()? {
                    Some(value) => found = Some(value),
                    None => break,
                }
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            at += 1;
        }
        Ok(found)
    }
}

/// Whether `found` holds `want` as a query parameter names it: a string
/// equal to it, an array with such a string, a number equal to it as a
/// number, or the boolean it spells.
pub fn holds(found: &RawValue, want: &str) -> bool {
    let text = found.get();
    let mut de = serde_json::Deserializer::from_str(text);
    match text.as_bytes().first() {
        Some(b'"') => de.deserialize_str(KeyIs(want)).unwrap_or(false),
        Some(b'[') => de.deserialize_seq(HasStr(want)).unwrap_or(false),
        Some(b't') => text == "true" && want == "true",
        Some(b'f') => text == "false" && want == "false",
        Some(b'-' | b'0'..=b'9') => {
            match (
                serde_json::from_str::<serde_json::Number>(text),
                want.parse::<serde_json::Number>(),
            ) {
                (Ok(n), Ok(w)) => n == w,
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether an array has a string element equal to `.0`.
struct HasStr<'t>(&'t str);

impl<'de> Visitor<'de> for HasStr<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(element) = seq.next_element::<&RawValue>()? {
            let text = element.get();
            found |= text.starts_with('"')
                && serde_json::Deserializer::from_str(text)
                    .deserialize_str(KeyIs(self.0))
                    .unwrap_or(false);
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::Value;

    use super::*;

    const DOC: &str = r#" { "a" : { "b" : [ 1 , { "c\u0064" : "e\"f" } , [ ] , null ] },
        "dup" : 1 , "dup" : { "x" : 2.50 } , "s" : "a\/b" , "01" : "key" , "t" : true ,
        "n" : -12 , "f" : 1.5e1 , "types" : [ "AMF" , 3 , "U\u0044M" ] ,
        "arr" : [ "x0" , "x1" , "x2" , "x3" , "x4" , "x5" , "x6" , "x7" , "x8" , "x9" , "x10" ] } "#;

    /// Every pointer finds what `serde_json::Value::pointer` finds in the
    /// same document: nested members and elements, escaped keys, repeated
    /// keys (the last counts), whitespace, bad indices, and paths through
    /// values that are neither objects nor arrays.
    #[test]
    fn pointers_find_what_a_parsed_tree_finds() {
        let tree: Value = serde_json::from_str(DOC).unwrap();
        let raw = parse(DOC.as_bytes()).unwrap();
        for pointer in [
            "",
            "/a",
            "/a/b",
            "/a/b/0",
            "/a/b/1",
            "/a/b/1/cd",
            "/a/b/2",
            "/a/b/3",
            "/a/b/4",
            "/a/b/01",
            "/a/b/+1",
            "/a/b/-",
            "/a/b/0/x",
            "/dup",
            "/dup/x",
            "/s",
            "/01",
            "/arr/10",
            "/arr/11",
            "/nope",
            "/a/",
            "//",
            "/t",
            "/types/2",
        ] {
            let found = find(raw, pointer).map(|v| serde_json::from_str::<Value>(v.get()).unwrap());
            assert_eq!(found.as_ref(), tree.pointer(pointer), "{pointer:?}");
            let unchecked = find_in(DOC.as_bytes(), pointer);
            assert_eq!(
                unchecked.map(RawValue::get),
                find(raw, pointer).map(RawValue::get)
            );
        }
        assert!(parse(br#"{"a":1"#).is_none());
        assert!(find_in(br#"{"a":1"#, "/a").is_none());
        assert!(find_in(br#"{"a":1,"b":}"#, "/a").is_none());
    }

    /// `holds` agrees with comparing the parsed value: strings (escaped or
    /// not), arrays of strings, numbers as numbers, booleans.
    #[test]
    fn holds_agrees_with_the_parsed_value() {
        let tree: Value = serde_json::from_str(DOC).unwrap();
        let raw = parse(DOC.as_bytes()).unwrap();
        let by_tree = |value: &Value, want: &str| match value {
            Value::String(s) => s == want,
            Value::Array(a) => a.iter().any(|v| v.as_str() == Some(want)),
            Value::Number(n) => want.parse::<serde_json::Number>().is_ok_and(|w| w == *n),
            Value::Bool(b) => want == if *b { "true" } else { "false" },
            _ => false,
        };
        for pointer in ["/s", "/types", "/t", "/n", "/f", "/dup", "/a/b/3", "/01"] {
            for want in [
                "a/b", "a\\/b", "AMF", "UDM", "3", "true", "false", "-12", "15", "15.0", "1.5e1",
                "key", "null", "",
            ] {
                assert_eq!(
                    holds(find(raw, pointer).unwrap(), want),
                    by_tree(tree.pointer(pointer).unwrap(), want),
                    "{pointer} {want}"
                );
            }
        }
    }
}
