//! Response rules: `-m METHOD [-a AUTHORITY] [-p PATH_PREFIX] [-s STATUS]
//! [-x name=value]… [body] [-o PUSH_PATH …]…`, checked in order, first match
//! wins; no match is 404.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use h2sim_proto::{HeaderField, ResponseHead};

/// A response the simulator gives: status, fields, body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<HeaderField>,
    pub body: Body,
}

impl Default for Reply {
    fn default() -> Self {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: Body::Empty,
        }
    }
}

/// A rule's body: fixed bytes, or text with placeholders filled from the
/// request path (`${path}`, `${suffix}` — the path after the rule's prefix —
/// and `${seg1}`, `${seg2}`, … — its segments).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Body {
    #[default]
    Empty,
    Fixed(Bytes),
    Template(Template),
}

impl Body {
    /// Text bodies with a placeholder become templates (parsed here, once);
    /// everything else is fixed.
    pub fn from_text(text: &str) -> Body {
        match Template::parse(text) {
            Some(template) => Body::Template(template),
            None => Body::Fixed(Bytes::copy_from_slice(text.as_bytes())),
        }
    }

    /// The body for a request for `path` on a rule with `prefix`.
    #[cfg(test)]
    pub fn render(&self, path: &str, prefix: &str) -> Bytes {
        self.render_for(&PathParts::new(path, prefix))
    }

    /// The body for one request whose path parts are already split.
    pub fn render_for(&self, parts: &PathParts<'_>) -> Bytes {
        match self {
            Body::Empty => Bytes::new(),
            Body::Fixed(bytes) => bytes.clone(),
            Body::Template(template) => Bytes::from(template.render(parts)),
        }
    }

    /// The length, when it is the same for every request.
    fn fixed_len(&self) -> Option<usize> {
        match self {
            Body::Empty => Some(0),
            Body::Fixed(bytes) => Some(bytes.len()),
            Body::Template(_) => None,
        }
    }
}

/// What the placeholders of one request stand for: its path without the
/// query, and that path after the rule's prefix. Segments are found when a
/// template asks, so a request pays only for what its templates use.
#[derive(Debug, Clone, Copy)]
pub struct PathParts<'a> {
    path: &'a str,
    suffix: &'a str,
}

impl<'a> PathParts<'a> {
    pub fn new(path: &'a str, prefix: &str) -> Self {
        let path = path.split('?').next().unwrap_or(path);
        PathParts {
            path,
            suffix: path.strip_prefix(prefix).unwrap_or(path),
        }
    }

    /// The `n`th non-empty segment (0-based), or "" past the last.
    fn segment(&self, n: usize) -> &'a str {
        self.path
            .split('/')
            .filter(|s| !s.is_empty())
            .nth(n)
            .unwrap_or("")
    }
}

/// Text with placeholders, parsed once when the rules are read, so a
/// request only pays the substitution. Unknown placeholders stay as
/// written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
    /// Bytes of literal text, to size the output once.
    literal_len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Path,
    Suffix,
    /// `${segN}`, 0-based here.
    Segment(usize),
}

impl Template {
    /// The template of `text`, or `None` when it has no placeholder we know
    /// (then it is plain text).
    pub fn parse(text: &str) -> Option<Template> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            literal.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                literal.push_str(&rest[start..]);
                rest = "";
                break;
            };
            let name = &after[..end];
            let piece = match name {
                "path" => Some(Piece::Path),
                "suffix" => Some(Piece::Suffix),
                _ => name
                    .strip_prefix("seg")
                    .and_then(|n| n.parse::<usize>().ok())
                    .and_then(|n| n.checked_sub(1))
                    .map(Piece::Segment),
            };
            match piece {
                Some(piece) => {
                    if !literal.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    }
                    pieces.push(piece);
                }
                None => literal.push_str(&rest[start..start + 2 + end + 1]),
            }
            rest = &after[end + 1..];
        }
        literal.push_str(rest);
        if pieces.is_empty() {
            return None;
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        let literal_len = pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.len(),
                _ => 0,
            })
            .sum();
        Some(Template {
            pieces,
            literal_len,
        })
    }

    /// The text for one request.
    pub fn render(&self, parts: &PathParts<'_>) -> String {
        let mut out = String::with_capacity(self.literal_len + parts.path.len());
        for piece in &self.pieces {
            out.push_str(match piece {
                Piece::Text(text) => text,
                Piece::Path => parts.path,
                Piece::Suffix => parts.suffix,
                Piece::Segment(n) => parts.segment(*n),
            });
        }
        out
    }
}

/// A reply as it is sent: its header values' templates parsed once, and
/// its `content-length` made once when the body's size never changes.
#[derive(Debug, Clone)]
pub struct Answer {
    status: u16,
    fields: Vec<HeaderField>,
    /// Fields whose value is a template, by index into `fields`.
    templated: Vec<(usize, Template)>,
    body: Body,
    /// Whether we add `content-length` (the rule names none itself, and the
    /// status may carry one).
    add_length: bool,
    /// The `content-length` of a body whose size is fixed.
    fixed_length: Option<HeaderField>,
}

impl Answer {
    pub fn new(reply: &Reply) -> Answer {
        let templated = reply
            .headers
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let value = std::str::from_utf8(&f.value).ok()?;
                Template::parse(value).map(|t| (i, t))
            })
            .collect();
        let add_length = may_have_length(reply.status)
            && !reply
                .headers
                .iter()
                .any(|f| f.name.eq_ignore_ascii_case(b"content-length"));
        Answer {
            status: reply.status,
            fields: reply.headers.clone(),
            templated,
            body: reply.body.clone(),
            add_length,
            fixed_length: reply.body.fixed_len().map(length_field),
        }
    }

    /// The head and body for one request.
    pub fn render(&self, parts: &PathParts<'_>) -> (ResponseHead, Bytes) {
        let body = self.body.render_for(parts);
        let length = self.add_length.then(|| {
            self.fixed_length
                .clone()
                .unwrap_or_else(|| length_field(body.len()))
        });
        (self.head(parts, length), body)
    }

    /// The head and body for one request answered with a file's bytes
    /// (`-d DIR`) instead of the rule's body.
    pub fn render_file(&self, parts: &PathParts<'_>, body: Bytes) -> (ResponseHead, Bytes) {
        let length = self.add_length.then(|| length_field(body.len()));
        (self.head(parts, length), body)
    }

    fn head(&self, parts: &PathParts<'_>, length: Option<HeaderField>) -> ResponseHead {
        let mut fields = Vec::with_capacity(self.fields.len() + 1);
        fields.extend_from_slice(&self.fields);
        for (i, template) in &self.templated {
            fields[*i].value = Bytes::from(template.render(parts));
        }
        fields.extend(length);
        ResponseHead {
            status: self.status,
            fields,
        }
    }
}

/// The 404 a request no rule matches gets (or a `-d` file that is not there).
pub fn not_found() -> ResponseHead {
    ResponseHead {
        status: 404,
        fields: vec![length_field(0)],
    }
}

/// A server must not send `content-length` in 1xx and 204 responses (RFC
/// 9110 §8.6); a 304 carries the length of a body it does not send, which
/// a rule cannot know.
fn may_have_length(status: u16) -> bool {
    status >= 200 && status != 204 && status != 304
}

/// Every reply whose size is known says so (RFC 9110 §8.6): HTTP/1.1 then
/// needs no chunked coding, and SBI clients that log or reject responses
/// without a length are content.
fn length_field(len: usize) -> HeaderField {
    HeaderField::new("content-length", len.to_string())
}

/// A push promise attached to a rule (`-o PATH`): the promised request is a
/// GET for `path` on the same authority, answered by `reply`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Push {
    pub path: String,
    pub reply: Reply,
}

/// How long to hold a response back: fixed, or uniformly within a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delay {
    pub min: Duration,
    pub max: Duration,
}

impl Delay {
    /// `MS` or `MIN-MAX` in milliseconds.
    pub fn parse(s: &str) -> Option<Delay> {
        let ms = |v: &str| v.trim().parse::<u64>().ok().map(Duration::from_millis);
        let (min, max) = match s.split_once('-') {
            Some((a, b)) => (ms(a)?, ms(b)?),
            None => (ms(s)?, ms(s)?),
        };
        (min <= max).then_some(Delay { min, max })
    }

    /// The delay for one response; `roll` is a uniform random number.
    pub fn pick(&self, roll: u64) -> Duration {
        let span = (self.max - self.min).as_micros() as u64;
        if span == 0 {
            return self.min;
        }
        self.min + Duration::from_micros(roll % (span + 1))
    }
}

/// One rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub method: String,
    pub authority: Option<String>,
    pub path_prefix: Option<String>,
    pub reply: Reply,
    pub pushes: Vec<Push>,
    pub delay: Option<Delay>,
    /// `-d DIR`: the body is the file under DIR named by the path after the
    /// prefix.
    pub dir: Option<PathBuf>,
}

impl Rule {
    pub fn new(method: &str) -> Rule {
        Rule {
            method: method.to_owned(),
            authority: None,
            path_prefix: None,
            reply: Reply::default(),
            pushes: Vec::new(),
            delay: None,
            dir: None,
        }
    }

    pub fn matches(&self, method: &[u8], authority: &[u8], path: &[u8]) -> bool {
        self.method.as_bytes() == method
            && self
                .authority
                .as_ref()
                .is_none_or(|a| a.as_bytes() == authority)
            && self
                .path_prefix
                .as_ref()
                .is_none_or(|p| path.starts_with(p.as_bytes()))
    }

    pub fn prefix(&self) -> &str {
        self.path_prefix.as_deref().unwrap_or("")
    }
}

/// The index of the first rule that matches, if any.
pub fn find(rules: &[Rule], method: &[u8], authority: &[u8], path: &[u8]) -> Option<usize> {
    rules
        .iter()
        .position(|r| r.matches(method, authority, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(method: &str, prefix: &str) -> Rule {
        Rule {
            path_prefix: Some(prefix.to_owned()),
            ..Rule::new(method)
        }
    }

    #[test]
    fn first_match_wins() {
        let rules = vec![
            rule("GET", "/user2/"),
            rule("GET", "/user"),
            rule("POST", "/user/"),
        ];
        assert_eq!(find(&rules, b"GET", b"h", b"/user2/x"), Some(0));
        assert_eq!(find(&rules, b"GET", b"h", b"/user/x"), Some(1));
        assert_eq!(find(&rules, b"POST", b"h", b"/user/1"), Some(2));
        assert_eq!(find(&rules, b"DELETE", b"h", b"/user/1"), None);
    }

    #[test]
    fn authority_is_exact() {
        let mut r = rule("GET", "/");
        r.authority = Some("nrf.example:8080".into());
        assert!(r.matches(b"GET", b"nrf.example:8080", b"/x"));
        assert!(!r.matches(b"GET", b"nrf.example", b"/x"));
    }

    #[test]
    fn templates_echo_path_parts() {
        let body = Body::from_text(
            r#"{"user":"${suffix}","first":"${seg1}","p":"${path}","x":"${nope}"}"#,
        );
        let out = body.render("/user/01092000001?x=1", "/user/");
        assert_eq!(
            &out[..],
            br#"{"user":"01092000001","first":"user","p":"/user/01092000001","x":"${nope}"}"#
        );
        assert_eq!(
            Body::from_text("plain"),
            Body::Fixed(Bytes::from_static(b"plain"))
        );
    }

    #[test]
    fn header_templates_are_parsed_once_and_filled_per_request() {
        let reply = Reply {
            status: 201,
            headers: vec![
                HeaderField::new("location", "/nudm/${suffix}?from=${seg1}"),
                HeaderField::new("content-type", "application/json"),
                HeaderField::new("x-left", "${nope} ${unclosed"),
            ],
            body: Body::from_text("${seg2}"),
        };
        let answer = Answer::new(&reply);
        // Only the one real template is kept as such.
        assert_eq!(answer.templated.len(), 1);
        let (head, body) = answer.render(&PathParts::new("/user/42?x=1", "/user/"));
        assert_eq!(head.status, 201);
        assert_eq!(&head.get(b"location").unwrap()[..], b"/nudm/42?from=user");
        assert_eq!(&head.get(b"x-left").unwrap()[..], b"${nope} ${unclosed");
        assert_eq!(&head.get(b"content-length").unwrap()[..], b"2");
        assert_eq!(&body[..], b"42");
    }

    /// RFC 9110 §8.6: content-length for every known size, never twice,
    /// never in a 204.
    #[test]
    fn content_length_where_it_belongs() {
        let reply = |status, headers, body| Reply {
            status,
            headers,
            body,
        };
        let parts = PathParts::new("/x", "");
        let length = |r: &Reply| {
            let (head, _) = Answer::new(r).render(&parts);
            head.fields
                .iter()
                .filter(|f| f.name == "content-length")
                .map(|f| f.value.clone())
                .collect::<Vec<_>>()
        };
        let fixed = Body::Fixed(Bytes::from_static(b"abc"));
        assert_eq!(length(&reply(200, vec![], fixed.clone())), ["3"]);
        assert_eq!(length(&reply(200, vec![], Body::Empty)), ["0"]);
        assert_eq!(length(&reply(204, vec![], Body::Empty)).len(), 0);
        let own = vec![HeaderField::new("content-length", "3")];
        assert_eq!(length(&reply(200, own, fixed)), ["3"]);
        let (head, _) = Answer::new(&reply(200, vec![], Body::Empty))
            .render_file(&parts, Bytes::from_static(b"file!"));
        assert_eq!(&head.get(b"content-length").unwrap()[..], b"5");
    }

    #[test]
    fn delays() {
        assert_eq!(
            Delay::parse("5"),
            Some(Delay {
                min: Duration::from_millis(5),
                max: Duration::from_millis(5)
            })
        );
        let d = Delay::parse("10-20").unwrap();
        for roll in [0, 1, 7_777, u64::MAX] {
            let p = d.pick(roll);
            assert!(p >= Duration::from_millis(10) && p <= Duration::from_millis(20));
        }
        assert_eq!(Delay::parse("20-10"), None);
        assert_eq!(Delay::parse("x"), None);
    }
}
