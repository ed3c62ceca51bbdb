//! What a rule asks of a request beyond its method and authority: a path
//! (a prefix, or a template with named segments as 3GPP's OpenAPI files
//! write them), query parameters, request fields, and values in the JSON
//! body by JSON Pointer (RFC 6901). Cheap tests run first; the body is
//! parsed only when a rule whose other tests passed looks into it.

use std::ops::Range;

use super::request::Request;

/// How a rule matches the path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PathMatch {
    /// Every path.
    #[default]
    Any,
    /// Paths starting with this (h2simple's `-p`).
    Prefix(String),
    /// The whole path (without the query), segment by segment.
    Template(PathTemplate),
}

impl PathMatch {
    /// A path with a `{name}` segment is a template, anything else a
    /// prefix.
    pub fn parse(path: Option<&str>) -> PathMatch {
        match path {
            None => PathMatch::Any,
            Some(p) => PathTemplate::parse(p)
                .map_or_else(|| PathMatch::Prefix(p.to_owned()), PathMatch::Template),
        }
    }

    /// The capture names, in path order.
    pub fn names(&self) -> &[String] {
        match self {
            PathMatch::Template(t) => &t.names,
            _ => &[],
        }
    }
}

/// `/nudm-uecm/v1/{ueId}/registrations/amf-3gpp-access`: literal segments
/// and whole-segment captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTemplate {
    segments: Vec<Segment>,
    names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    /// The index of its name.
    Capture(usize),
}

impl PathTemplate {
    /// The template of `path`, or `None` when no segment is `{name}`.
    pub fn parse(path: &str) -> Option<PathTemplate> {
        let mut names = Vec::new();
        let segments = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(
                |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Some(name) if !name.is_empty() => {
                        names.push(name.to_owned());
                        Segment::Capture(names.len() - 1)
                    }
                    _ => Segment::Literal(s.to_owned()),
                },
            )
            .collect();
        (!names.is_empty()).then_some(PathTemplate { segments, names })
    }

    /// Matches the template's segments at the start of `path`: the byte
    /// offset where the matched part ends, with the captures pushed to
    /// `captures` (byte ranges of `path`). Empty segments are skipped, as
    /// `//` means nothing more than `/` to the rules.
    pub fn match_start(&self, path: &str, captures: &mut Vec<Range<usize>>) -> Option<usize> {
        // Bytes, not chars: `/` is ASCII, so every offset found is a char
        // boundary, and a byte search is a fraction of a char pattern's.
        let bytes = path.as_bytes();
        let mut at = 0;
        for segment in &self.segments {
            let start = at + bytes[at..].iter().position(|&b| b != b'/')?;
            let end = memchr::memchr(b'/', &bytes[start..]).map_or(path.len(), |i| start + i);
            match segment {
                Segment::Literal(lit) if lit == &path[start..end] => {}
                Segment::Literal(_) => return None,
                Segment::Capture(_) => captures.push(start..end),
            }
            at = end;
        }
        Some(at)
    }

    /// Whether the whole of `path` matches (a trailing `/` allowed).
    pub fn matches(&self, path: &str, captures: &mut Vec<Range<usize>>) -> bool {
        let mark = captures.len();
        let ok = self
            .match_start(path, captures)
            .is_some_and(|end| path[end..].trim_matches('/').is_empty());
        if !ok {
            captures.truncate(mark);
        }
        ok
    }
}

/// A value a condition expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect<T> {
    /// Present, with any value (written `"*"`).
    Present,
    Equals(T),
}

/// The request-reading conditions of a rule, all of which must hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conditions {
    /// Query parameter → value.
    pub query: Vec<(String, Expect<String>)>,
    /// Field name (lowercase) → value.
    pub headers: Vec<(String, Expect<String>)>,
    /// JSON Pointer → value.
    pub body: Vec<(String, Expect<serde_json::Value>)>,
}

impl Conditions {
    pub fn is_empty(&self) -> bool {
        self.query.is_empty() && self.headers.is_empty() && self.body.is_empty()
    }

    pub fn reads_body(&self) -> bool {
        !self.body.is_empty()
    }

    /// Whether `request` meets them all; the body last, as it may need
    /// parsing.
    pub fn hold(&self, request: &Request<'_>) -> bool {
        self.query.iter().all(|(name, expect)| match expect {
            Expect::Present => request.query(name).is_some(),
            Expect::Equals(v) => request.query(name).is_some_and(|q| q == v.as_str()),
        }) && self.headers.iter().all(|(name, expect)| match expect {
            Expect::Present => request.header(name).is_some(),
            Expect::Equals(v) => request.header(name) == Some(v.as_str()),
        }) && self.body.iter().all(|(pointer, expect)| match expect {
            Expect::Present => request.pointer(pointer).is_some(),
            Expect::Equals(v) => request.pointer(pointer) == Some(v),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use h2sim_proto::{HeaderField, RequestHead};

    fn texts<'a>(path: &'a str, captures: &[Range<usize>]) -> Vec<&'a str> {
        captures.iter().map(|r| &path[r.clone()]).collect()
    }

    #[test]
    fn templates_capture_whole_segments() {
        let t = PathTemplate::parse("/nudm-uecm/v1/{ueId}/registrations/amf-3gpp-access").unwrap();
        let mut caps = Vec::new();
        let path = "/nudm-uecm/v1/imsi-001010000000001/registrations/amf-3gpp-access";
        assert!(t.matches(path, &mut caps));
        assert_eq!(texts(path, &caps), ["imsi-001010000000001"]);
        caps.clear();
        assert!(!t.matches("/nudm-uecm/v1/imsi-1/registrations/smf", &mut caps));
        assert!(!t.matches("/nudm-uecm/v1/imsi-1/registrations", &mut caps));
        assert!(!t.matches(
            "/nudm-uecm/v1/imsi-1/registrations/amf-3gpp-access/x",
            &mut caps
        ));
        assert!(caps.is_empty(), "a failed match leaves no captures");
        assert_eq!(PathTemplate::parse("/plain/prefix/"), None);
        assert_eq!(
            PathMatch::parse(Some("/user/")),
            PathMatch::Prefix("/user/".into())
        );
    }

    #[test]
    fn match_start_leaves_the_rest() {
        let t = PathTemplate::parse("/nudm-sdm/v2/{ueId}/sdm-subscriptions").unwrap();
        let mut caps = Vec::new();
        let path = "/nudm-sdm/v2/imsi-1/sdm-subscriptions/abc";
        let end = t.match_start(path, &mut caps).unwrap();
        assert_eq!(&path[end..], "/abc");
        assert_eq!(texts(path, &caps), ["imsi-1"]);
        assert_eq!(t.match_start("/nudm-sdm/v2/imsi-1", &mut caps), None);
        assert_eq!(
            t.match_start("/nudm-sdm/v2/imsi-1/sdm-subscriptionsX", &mut caps),
            None
        );
    }

    #[test]
    fn conditions_on_query_fields_and_body() {
        let mut head = RequestHead::new(
            "GET",
            "http",
            "h",
            "/nnrf-disc/v1/nf-instances?target-nf-type=UDM&requester-nf-type=AMF",
        );
        head.fields
            .push(HeaderField::new("3gpp-sbi-callback", "Nnrf"));
        let body = br#"{"nfType":"AMF","heartBeatTimer":10}"#;
        let request = Request::new(&head, body);
        let cond = |query: Vec<(&str, Expect<String>)>,
                    headers: Vec<(&str, Expect<String>)>,
                    body: Vec<(&str, Expect<serde_json::Value>)>| {
            Conditions {
                query: query.into_iter().map(|(a, b)| (a.to_owned(), b)).collect(),
                headers: headers
                    .into_iter()
                    .map(|(a, b)| (a.to_owned(), b))
                    .collect(),
                body: body.into_iter().map(|(a, b)| (a.to_owned(), b)).collect(),
            }
            .hold(&request)
        };
        let eq = |s: &str| Expect::Equals(s.to_owned());
        assert!(cond(vec![("target-nf-type", eq("UDM"))], vec![], vec![]));
        assert!(!cond(vec![("target-nf-type", eq("AUSF"))], vec![], vec![]));
        assert!(cond(
            vec![("requester-nf-type", Expect::Present)],
            vec![],
            vec![]
        ));
        assert!(!cond(vec![("supi", Expect::Present)], vec![], vec![]));
        assert!(cond(
            vec![],
            vec![("3gpp-sbi-callback", Expect::Present)],
            vec![]
        ));
        assert!(!cond(
            vec![],
            vec![("3gpp-sbi-callback", eq("other"))],
            vec![]
        ));
        let json = |v| Expect::Equals(v);
        assert!(cond(
            vec![],
            vec![],
            vec![("/heartBeatTimer", json(serde_json::json!(10)))]
        ));
        assert!(!cond(
            vec![],
            vec![],
            vec![("/nfType", json(serde_json::json!("SMF")))]
        ));
        assert!(!cond(vec![], vec![], vec![("/nfStatus", Expect::Present)]));
    }
}
