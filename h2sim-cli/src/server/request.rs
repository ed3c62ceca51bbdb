//! One request as the rules read it: path, query, fields and body, each
//! looked at only when a rule asks. The JSON body in particular is parsed
//! at most once, and only when a rule that could match needs it, so plain
//! prefix rules pay nothing for what other rules can do.

use std::borrow::Cow;
use std::cell::OnceCell;

use h2sim_proto::RequestHead;

/// A request under the rules' eyes.
#[derive(Debug)]
pub struct Request<'a> {
    pub head: &'a RequestHead,
    /// The method the rules see: the request's, or GET for a HEAD that
    /// GET rules answer (see [`Request::as_get`]).
    pub method: &'a [u8],
    /// The path without the query.
    pub path: &'a str,
    /// What follows `?`, raw.
    pub query: &'a str,
    pub body: &'a [u8],
    json: OnceCell<Option<serde_json::Value>>,
}

impl<'a> Request<'a> {
    /// The view of `head` with `body` (empty when no rule needs bodies).
    /// A path that is not UTF-8 is seen as empty: no rule written in text
    /// matches it but a match-all one.
    pub fn new(head: &'a RequestHead, body: &'a [u8]) -> Self {
        let full = std::str::from_utf8(&head.path).unwrap_or("");
        // By byte: `str::split_once(char)` runs a UTF-8 char searcher, twice
        // the cost of the rest of this view for a short path.
        let (path, query) = match memchr::memchr(b'?', full.as_bytes()) {
            Some(at) => (&full[..at], &full[at + 1..]),
            None => (full, ""),
        };
        Request {
            head,
            method: &head.method,
            path,
            query,
            body,
            json: OnceCell::new(),
        }
    }

    /// The same request seen as a GET: a HEAD is answered as the GET it
    /// would be, without the content (RFC 9110 §9.3.2).
    pub fn as_get(&self) -> Request<'a> {
        Request {
            method: b"GET",
            ..Request::new(self.head, self.body)
        }
    }

    /// Whether the request is a HEAD, whose response carries no content
    /// (RFC 9110 §9.3.2), whichever rule answers it.
    pub fn is_head(&self) -> bool {
        self.head.method.as_ref() == b"HEAD"
    }

    /// The `n`th non-empty path segment (0-based), or "" past the last.
    pub fn segment(&self, n: usize) -> &'a str {
        self.path
            .split('/')
            .filter(|s| !s.is_empty())
            .nth(n)
            .unwrap_or("")
    }

    /// The first value of query parameter `name`, percent-decoded (and
    /// `+` as a space, as forms write it).
    pub fn query(&self, name: &str) -> Option<Cow<'a, str>> {
        form_value(self.query, name)
    }

    /// The first field named `name` (lowercase), as text.
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.head
            .fields
            .iter()
            .find(|f| f.name.as_ref() == name.as_bytes())
            .and_then(|f| std::str::from_utf8(&f.value).ok())
    }

    /// The body as JSON, parsed on first use; `None` when it is not JSON.
    pub fn json(&self) -> Option<&serde_json::Value> {
        self.json
            .get_or_init(|| serde_json::from_slice(self.body).ok())
            .as_ref()
    }

    /// The value at a JSON Pointer (RFC 6901) into the body.
    pub fn pointer(&self, pointer: &str) -> Option<&serde_json::Value> {
        self.json()?.pointer(pointer)
    }

    /// The media type of the body, without parameters, lowercase.
    pub fn content_type(&self) -> String {
        self.header("content-type")
            .and_then(|v| v.split(';').next())
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }
}

/// The first value of `name` in `application/x-www-form-urlencoded` text
/// (a query string or a form body).
pub fn form_value<'a>(text: &'a str, name: &str) -> Option<Cow<'a, str>> {
    text.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(key) == name).then(|| decode(value))
    })
}

/// Percent-decoding, `+` as space; bytes that do not decode stay as they
/// are.
pub fn decode(text: &str) -> Cow<'_, str> {
    if !text.contains(['%', '+']) {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (
                    bytes.get(i + 1).and_then(|&b| hex(b)),
                    bytes.get(i + 2).and_then(|&b| hex(b)),
                ) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn query_values_are_decoded() {
        let q = "target-nf-type=UDM&service-names=nudm-sdm%2Cnudm-uecm&x=a+b&bad=%zz&end=%4";
        assert_eq!(form_value(q, "target-nf-type").unwrap(), "UDM");
        assert_eq!(
            form_value(q, "service-names").unwrap(),
            "nudm-sdm,nudm-uecm"
        );
        assert_eq!(form_value(q, "x").unwrap(), "a b");
        assert_eq!(form_value(q, "bad").unwrap(), "%zz");
        assert_eq!(form_value(q, "end").unwrap(), "%4");
        assert_eq!(form_value(q, "none"), None);
    }

    /// RFC 3986 §3.4: the query starts at the first `?` and may hold more.
    #[test]
    fn the_query_starts_at_the_first_question_mark() {
        for (target, path, query) in [
            ("/a?b?c", "/a", "b?c"),
            ("/a?", "/a", ""),
            ("/a", "/a", ""),
            ("?x=é", "", "x=é"),
        ] {
            let head = RequestHead::new("GET", "http", "h", target);
            let r = Request::new(&head, b"");
            assert_eq!((r.path, r.query), (path, query), "{target}");
        }
    }

    #[test]
    fn the_body_is_parsed_once_and_only_when_asked() {
        let head = RequestHead::new("PUT", "http", "h", "/a/b?c=d");
        let r = Request::new(&head, br#"{"a":{"b":[1,2]}}"#);
        assert_eq!((r.path, r.query, r.segment(1)), ("/a/b", "c=d", "b"));
        assert!(r.json.get().is_none());
        assert_eq!(r.pointer("/a/b/1"), Some(&serde_json::json!(2)));
        let bad = Request::new(&head, b"not json");
        assert_eq!(bad.pointer(""), None);
    }
}
