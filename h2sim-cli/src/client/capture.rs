//! What a step takes from its response for the later steps of its scenario
//! (`--capture SYM=SOURCE`), and the status it expects (`--expect`).
//!
//! A 5G NF's flows depend on answers: a subscription's id comes back in
//! `Location` (TS 29.500 §5.2.2: 201 Created with the new resource's URI)
//! or in the body (`subscriptionId`), and the PATCH and DELETE that follow
//! name it. A capture turns such a value into a symbol that the later
//! steps of the same scenario instance substitute like an `-R` symbol.

use std::fmt;

use h2sim_proto::HeaderField;
use serde_json::Value;
use serde_json::value::RawValue;

use super::symbol::Needle;
use crate::json_pointer;

/// Where a captured value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `status`: the final status code.
    Status,
    /// `header:NAME`: the whole value of the (first) field NAME.
    Header(String),
    /// `segment:NAME`: the last path segment of field NAME's value, a URI
    /// (`Location: http://nrf/nnrf-nfm/v1/subscriptions/42` gives `42`).
    Segment(String),
    /// `json:/POINTER`: the value at an RFC 6901 JSON Pointer in the body;
    /// a string as is, anything else as compact JSON.
    Json(String),
}

/// One `SYM=SOURCE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub symbol: String,
    /// The symbol's searcher, for the values the capture sets.
    pub needle: Needle,
    pub source: Source,
}

/// Why a capture found nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// The response has no such field.
    NoHeader(String),
    /// The field's value has no path segment.
    NoSegment(String),
    /// The body is not JSON.
    NotJson,
    /// The pointer names nothing in the body.
    NoValue(String),
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::NoHeader(name) => write!(f, "no {name} field"),
            Missing::NoSegment(name) => write!(f, "{name} has no path segment"),
            Missing::NotJson => f.write_str("body is not JSON"),
            Missing::NoValue(pointer) => write!(f, "nothing at {pointer} in the body"),
        }
    }
}

impl Capture {
    /// Parses `SYM=status`, `SYM=header:NAME`, `SYM=segment:NAME` or
    /// `SYM=json:/POINTER`.
    pub fn parse(spec: &str) -> Result<Capture, String> {
        let (symbol, source) = spec
            .split_once('=')
            .ok_or_else(|| format!("{spec:?}: expected SYMBOL=SOURCE"))?;
        Capture::new(symbol, source).map_err(|why| format!("{spec:?}: {why}"))
    }

    /// A capture of `source` (as `parse` takes it) into `symbol`.
    pub fn new(symbol: &str, source: &str) -> Result<Capture, String> {
        if symbol.is_empty() {
            return Err("empty symbol".to_owned());
        }
        let field = |name: &str| {
            let name = name.trim();
            if name.is_empty() || name.bytes().any(|b| !b.is_ascii_graphic() || b == b':') {
                Err(format!("{name:?} is not a field name"))
            } else {
                Ok(name.to_ascii_lowercase())
            }
        };
        let source = match source.split_once(':') {
            None if source == "status" => Source::Status,
            Some(("header", name)) => Source::Header(field(name)?),
            Some(("segment", name)) => Source::Segment(field(name)?),
            Some(("json", pointer)) if pointer.is_empty() || pointer.starts_with('/') => {
                Source::Json(pointer.to_owned())
            }
            Some(("json", pointer)) => {
                return Err(format!(
                    "JSON pointer {pointer:?} must start with / (RFC 6901)"
                ));
            }
            _ => {
                return Err(format!(
                    "source {source:?}: status, header:NAME, segment:NAME or json:/POINTER"
                ));
            }
        };
        Ok(Capture {
            symbol: symbol.to_owned(),
            needle: Needle::new(symbol),
            source,
        })
    }

    /// Whether the response's body must be kept for this capture.
    pub fn needs_body(&self) -> bool {
        matches!(self.source, Source::Json(_))
    }

    /// Whether the response's fields must be kept for this capture.
    pub fn needs_fields(&self) -> bool {
        matches!(self.source, Source::Header(_) | Source::Segment(_))
    }

    /// The value in a response; `json` is the body checked once for all
    /// the step's captures (None when it is not JSON), see
    /// [`json_pointer::parse`].
    pub fn take(
        &self,
        status: u16,
        fields: &[HeaderField],
        json: Option<&RawValue>,
    ) -> Result<String, Missing> {
        let header = |name: &str| {
            fields
                .iter()
                .find(|f| f.name.eq_ignore_ascii_case(name.as_bytes()))
                .map(|f| String::from_utf8_lossy(&f.value).into_owned())
                .ok_or_else(|| Missing::NoHeader(name.to_owned()))
        };
        match &self.source {
            Source::Status => Ok(status.to_string()),
            Source::Header(name) => header(name),
            Source::Segment(name) => {
                let value = header(name)?;
                last_segment(&value)
                    .map(str::to_owned)
                    .ok_or_else(|| Missing::NoSegment(name.clone()))
            }
            Source::Json(pointer) => {
                let missing = || Missing::NoValue(pointer.clone());
                let found = json_pointer::find(json.ok_or(Missing::NotJson)?, pointer)
                    .ok_or_else(missing)?;
                let text = found.get();
                // A string as is, anything else as compact JSON.
                let value = if text.starts_with('"') {
                    serde_json::from_str::<String>(text).ok()
                } else {
                    serde_json::from_str::<Value>(text)
                        .ok()
                        .map(|v| v.to_string())
                };
                value.ok_or_else(missing)
            }
        }
    }
}

/// The last non-empty path segment of a URI or path, query and fragment
/// left out.
pub fn last_segment(uri: &str) -> Option<&str> {
    let path = uri.split(['?', '#']).next().unwrap_or(uri);
    let path = match path.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("", |i| &rest[i..]),
        None => path,
    };
    path.split('/').rev().find(|s| !s.is_empty())
}

/// `--expect`: the statuses a step counts as success. Without it a step
/// succeeds on 2xx and 3xx, as h2load counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expect(Vec<StatusRange>);

/// A status code, or a class such as `2xx`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatusRange {
    low: u16,
    high: u16,
}

impl Expect {
    /// Parses `201`, `200,204` or `2xx` (comma-separated).
    pub fn parse(spec: &str) -> Result<Expect, String> {
        let mut ranges = Vec::new();
        for part in spec.split(',').map(str::trim) {
            let range = match part.as_bytes() {
                [d @ b'1'..=b'5', b'x' | b'X', b'x' | b'X'] => {
                    let low = u16::from(d - b'0') * 100;
                    StatusRange {
                        low,
                        high: low + 99,
                    }
                }
                _ => match part.parse::<u16>() {
                    Ok(code) if (100..=599).contains(&code) => StatusRange {
                        low: code,
                        high: code,
                    },
                    _ => {
                        return Err(format!(
                            "{spec:?}: statuses are 100-599 or classes like 2xx, comma-separated"
                        ));
                    }
                },
            };
            ranges.push(range);
        }
        Ok(Expect(ranges))
    }

    pub fn allows(&self, status: u16) -> bool {
        self.0.iter().any(|r| (r.low..=r.high).contains(&status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Vec<HeaderField> {
        vec![
            HeaderField::new("content-type", "application/json"),
            HeaderField::new(
                "location",
                "http://127.0.0.1:8080/nnrf-nfm/v1/subscriptions/sub-7?x=1",
            ),
        ]
    }

    #[test]
    fn sources_parse() {
        assert_eq!(
            Capture::parse("__ID__=segment:Location").unwrap().source,
            Source::Segment("location".into())
        );
        assert_eq!(Capture::parse("S=status").unwrap().source, Source::Status);
        assert_eq!(
            Capture::parse("J=json:/a/0").unwrap().source,
            Source::Json("/a/0".into())
        );
        for (bad, says) in [
            ("noequals", "SYMBOL=SOURCE"),
            ("=status", "empty symbol"),
            ("X=json:a", "must start with /"),
            ("X=cookie:a", "header:NAME"),
            ("X=header:", "not a field name"),
        ] {
            let err = Capture::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    /// TS 29.500 §5.2.2 / RFC 9110 §10.2.2: the created resource's URI is
    /// in `Location`; its last segment is the id.
    #[test]
    fn header_and_segment() {
        let f = fields();
        let take = |s: &str| Capture::parse(s).unwrap().take(201, &f, None);
        assert_eq!(take("I=segment:location").unwrap(), "sub-7");
        assert!(take("L=header:location").unwrap().ends_with("/sub-7?x=1"));
        assert_eq!(take("S=status").unwrap(), "201");
        assert_eq!(
            take("X=header:etag").unwrap_err(),
            Missing::NoHeader("etag".into())
        );
        assert_eq!(last_segment("/a/b/"), Some("b"));
        assert_eq!(last_segment("http://h:1"), None);
        assert_eq!(last_segment("http://h:1/x#f"), Some("x"));
    }

    /// RFC 6901 §5's examples, and escapes (`~1` is `/`, `~0` is `~`).
    #[test]
    fn json_pointers() {
        let text = br#"{"foo":["bar","baz"],"":0,"a/b":1,"m~n":8,"id":"x-1","n":{"k":true}}"#;
        let body = json_pointer::parse(text).unwrap();
        let take = |p: &str| {
            Capture::new("S", &format!("json:{p}"))
                .unwrap()
                .take(200, &[], Some(body))
        };
        assert_eq!(take("/foo/0").unwrap(), "bar");
        assert_eq!(take("/").unwrap(), "0");
        assert_eq!(take("/a~1b").unwrap(), "1");
        assert_eq!(take("/m~0n").unwrap(), "8");
        assert_eq!(take("/id").unwrap(), "x-1");
        assert_eq!(take("/n").unwrap(), r#"{"k":true}"#);
        assert_eq!(take("/nope").unwrap_err(), Missing::NoValue("/nope".into()));
        let not_json = Capture::new("S", "json:/id").unwrap().take(200, &[], None);
        assert_eq!(not_json.unwrap_err(), Missing::NotJson);
        assert!(json_pointer::parse(br#"{"id":"x-1""#).is_none());
    }

    #[test]
    fn expectations() {
        let e = Expect::parse("201").unwrap();
        assert!(e.allows(201) && !e.allows(200));
        let e = Expect::parse("200, 204").unwrap();
        assert!(e.allows(204) && !e.allows(201));
        let e = Expect::parse("2xx,404").unwrap();
        assert!(e.allows(299) && e.allows(404) && !e.allows(300));
        for bad in ["", "99", "600", "6xx", "2x", "ok"] {
            assert!(Expect::parse(bad).is_err(), "{bad}");
        }
    }
}
