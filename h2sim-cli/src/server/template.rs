//! Text with placeholders (`${...}`), parsed once when the rules are read so
//! that a request pays only for the substitution.
//!
//! What a placeholder can stand for:
//! - the request path: `${path}` (without the query), `${suffix}` (after the
//!   rule's prefix), `${seg1}`, `${seg2}`, … (its segments), and the rule's
//!   named captures by name (`${ueId}` for a path template
//!   `/nudm-uecm/v1/{ueId}/…`);
//! - `${query.NAME}`, `${header.NAME}`: a query parameter (percent-decoded)
//!   or a request field;
//! - `${body}` (the whole request body) and `${body/POINTER}`: the value at
//!   a JSON Pointer (RFC 6901) into the request's JSON body, a string
//!   without its quotes, anything else as JSON text;
//! - `${uuid}` (a new UUID v4), `${counter}` (this rule's hits so far,
//!   counted across connections, from 1), `${now}` (the current time in RFC
//!   3339, 3GPP's DateTime);
//! - for resource and list rules: `${id}` (the item's id), `${items}` (the
//!   JSON array a list rule found).
//!
//! A placeholder none of these names stays as written, as before these
//! existed (h2simple's bodies are sent as they are); the server names it
//! at start, with the placeholder it most likely meant
//! (`super::check::unknown_placeholders`).

use std::cell::RefCell;
use std::fmt::Write as _;
use std::time::SystemTime;

use super::request::Request;

/// The placeholders that are one word ([`Piece::named`] takes them; a test
/// holds the two together), for [`closest`].
const PLAIN: [&str; 8] = [
    "path", "suffix", "body", "uuid", "counter", "now", "id", "items",
];

/// The placeholder most like `name`, if one is close (a letter or two
/// off), among this module's and the rule's `captures`: the hint for a
/// name that is none of them. `query.`, `header.` and `body/` keep what
/// follows them.
pub fn closest(name: &str, captures: &[String]) -> Option<String> {
    let (head, sep, tail) = match name.find(['.', '/']) {
        Some(at) => (&name[..at], &name[at..=at], &name[at + 1..]),
        None => (name, "", ""),
    };
    let candidates: Vec<&str> = if sep.is_empty() {
        PLAIN
            .into_iter()
            .chain(captures.iter().map(String::as_str))
            .collect()
    } else {
        vec!["query", "header", "body"]
    };
    // A name off only in case (`${ueid}` for a capture `{ueId}`) is the
    // one meant, before any a letter away.
    let (best, distance) = candidates
        .into_iter()
        .map(|c| (c, edit_distance(head, c), !c.eq_ignore_ascii_case(head)))
        .min_by_key(|&(_, d, other_case)| (other_case, d))
        .map(|(c, d, _)| (c, d))?;
    // A prefixed name keeps its prefix's own separator.
    let sep = match (sep.is_empty(), best) {
        (true, _) => "",
        (false, "body") => "/",
        (false, _) => ".",
    };
    let hint = format!("{best}{sep}{tail}");
    (hint != name && distance <= 2 && distance < head.len()).then_some(hint)
}

/// Levenshtein distance, for the short names of placeholders.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
    /// Bytes of literal text and of the placeholders whose width is known
    /// (a UUID, a time, a counter at its widest), to size the output once.
    known_len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Path,
    Suffix,
    /// `${segN}`, 0-based here.
    Segment(usize),
    /// A name that may be one of the rule's captures: resolved by
    /// [`Template::bind`], written back as text when it is not.
    Named(String),
    /// A capture, by its index in the rule's path template.
    Capture(usize),
    Query(String),
    /// Lowercase, as the core gives field names.
    Header(String),
    /// The whole body.
    Body,
    /// A JSON Pointer into the body.
    Json(String),
    Uuid,
    Counter,
    Now,
    Id,
    Items,
}

/// Text that may be a template: fixed text costs nothing per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Text {
    Fixed(String),
    Template(Template),
}

impl Text {
    /// `text` parsed and bound to the rule's capture `names`.
    pub fn compile(text: &str, names: &[String]) -> Text {
        match Template::parse(text).map(|t| t.bind(names)) {
            Some(t) => match t.literal() {
                Some(text) => Text::Fixed(text),
                None => Text::Template(t),
            },
            None => Text::Fixed(text.to_owned()),
        }
    }

    pub fn render(&self, vars: &Vars<'_>) -> std::borrow::Cow<'_, str> {
        match self {
            Text::Fixed(text) => std::borrow::Cow::Borrowed(text),
            Text::Template(t) => std::borrow::Cow::Owned(t.render(vars)),
        }
    }

    pub fn reads_body(&self) -> bool {
        matches!(self, Text::Template(t) if t.reads_body())
    }

    pub fn counts(&self) -> bool {
        matches!(self, Text::Template(t) if t.counts())
    }
}

/// What the placeholders of one request stand for.
#[derive(Debug, Clone, Copy)]
pub struct Vars<'a> {
    pub request: &'a Request<'a>,
    /// The rule's path prefix (for `${suffix}`).
    pub prefix: &'a str,
    /// The rule's captures, as byte ranges of the request path.
    pub captures: &'a [std::ops::Range<usize>],
    pub counter: u64,
    pub id: &'a str,
    pub items: &'a str,
    /// The wall clock, for `${now}`; the simulator's tests set their own.
    pub clock: fn() -> SystemTime,
}

impl<'a> Vars<'a> {
    /// The variables of a request with nothing but its path.
    pub fn of(request: &'a Request<'a>, prefix: &'a str) -> Self {
        Vars {
            request,
            prefix,
            captures: &[],
            counter: 0,
            id: "",
            items: "",
            clock: SystemTime::now,
        }
    }

    fn suffix(&self) -> &'a str {
        let path = self.request.path;
        path.strip_prefix(self.prefix).unwrap_or(path)
    }
}

impl Template {
    /// The template of `text`, or `None` when it has no placeholder (then
    /// it is plain text). Names that are not placeholders this module
    /// knows are kept for [`Template::bind`].
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
            let piece = Piece::named(&after[..end]);
            if !literal.is_empty() {
                pieces.push(Piece::Text(std::mem::take(&mut literal)));
            }
            pieces.push(piece);
            rest = &after[end + 1..];
        }
        literal.push_str(rest);
        if pieces.is_empty() {
            return None;
        }
        if !literal.is_empty() {
            pieces.push(Piece::Text(literal));
        }
        Some(Template::of(pieces))
    }

    fn of(pieces: Vec<Piece>) -> Template {
        // Neighbouring texts merge, so a bound template is as short as it
        // can be.
        let mut merged: Vec<Piece> = Vec::with_capacity(pieces.len());
        for piece in pieces {
            match (merged.last_mut(), piece) {
                (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
                (_, piece) => merged.push(piece),
            }
        }
        let known_len = merged
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.len(),
                Piece::Uuid => uuid::fmt::Hyphenated::LENGTH,
                Piece::Now => NOW_LEN,
                Piece::Counter => COUNTER_LEN,
                _ => 0,
            })
            .sum();
        Template {
            pieces: merged,
            known_len,
        }
    }

    /// Resolves names against the rule's captures (`names`, in path
    /// order); a name that is none of them goes back to the text it was
    /// (see [`Template::literal`]). A capture named as a placeholder of
    /// this module (`{id}`, `{path}`…) wins over it: whoever writes
    /// `/nf/{id}` and `${id}` means the path's segment. Where the rule's
    /// kind gives the name its own meaning (a resource rule's `{id}`, a
    /// list rule's `{items}`) the clash is refused at start
    /// (`super::check`).
    pub fn bind(&self, names: &[String]) -> Template {
        let pieces = self
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Named(name) => match names.iter().position(|n| n == name) {
                    Some(i) => Piece::Capture(i),
                    None => Piece::Text(format!("${{{name}}}")),
                },
                other => match names.iter().position(|n| other.is_named(n)) {
                    Some(i) => Piece::Capture(i),
                    None => other.clone(),
                },
            })
            .collect();
        Template::of(pieces)
    }

    /// The names of `${...}` that are neither a placeholder this module
    /// knows nor one of `names` (the rule's captures): they are sent as
    /// written, which is what h2simple's bodies need, and what a misspelt
    /// placeholder (`${sufix}`) does too.
    pub fn unknown<'a>(&'a self, names: &'a [String]) -> impl Iterator<Item = &'a str> {
        self.pieces.iter().filter_map(move |p| match p {
            Piece::Named(name) if !names.contains(name) => Some(name.as_str()),
            _ => None,
        })
    }

    /// The text, when nothing but text is left (after [`Template::bind`]).
    pub fn literal(&self) -> Option<String> {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Whether it reads the request's JSON body (which is then parsed).
    pub fn reads_body(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p, Piece::Body | Piece::Json(_)))
    }

    /// Whether it counts the rule's hits.
    pub fn counts(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Counter))
    }

    /// The text for one request.
    pub fn render(&self, vars: &Vars<'_>) -> String {
        let mut out = String::with_capacity(self.known_len + vars.request.path.len());
        for piece in &self.pieces {
            piece.render(vars, &mut out);
        }
        out
    }
}

impl Piece {
    fn named(name: &str) -> Piece {
        match name {
            "path" => Piece::Path,
            "suffix" => Piece::Suffix,
            "body" => Piece::Body,
            "uuid" => Piece::Uuid,
            "counter" => Piece::Counter,
            "now" => Piece::Now,
            "id" => Piece::Id,
            "items" => Piece::Items,
            _ => {
                if let Some(pointer) = name.strip_prefix("body/") {
                    return Piece::Json(format!("/{pointer}"));
                }
                if let Some(query) = name.strip_prefix("query.") {
                    return Piece::Query(query.to_owned());
                }
                if let Some(field) = name.strip_prefix("header.") {
                    return Piece::Header(field.to_ascii_lowercase());
                }
                match name
                    .strip_prefix("seg")
                    .and_then(|n| n.parse::<usize>().ok())
                    .and_then(|n| n.checked_sub(1))
                {
                    Some(n) => Piece::Segment(n),
                    None => Piece::Named(name.to_owned()),
                }
            }
        }
    }

    /// Whether `${name}` gives this piece: a placeholder's own name, which
    /// a capture of the same name takes over (see [`Template::bind`]).
    fn is_named(&self, name: &str) -> bool {
        match self {
            Piece::Path => name == "path",
            Piece::Suffix => name == "suffix",
            Piece::Body => name == "body",
            Piece::Uuid => name == "uuid",
            Piece::Counter => name == "counter",
            Piece::Now => name == "now",
            Piece::Id => name == "id",
            Piece::Items => name == "items",
            Piece::Segment(n) => matches!(Piece::named(name), Piece::Segment(m) if m == *n),
            _ => false,
        }
    }

    fn render(&self, vars: &Vars<'_>, out: &mut String) {
        let request = vars.request;
        match self {
            Piece::Text(text) => out.push_str(text),
            Piece::Path => out.push_str(request.path),
            Piece::Suffix => out.push_str(vars.suffix()),
            Piece::Segment(n) => out.push_str(request.segment(*n)),
            Piece::Named(name) => {
                let _ = write!(out, "${{{name}}}");
            }
            Piece::Capture(i) => {
                if let Some(text) = vars
                    .captures
                    .get(*i)
                    .and_then(|r| request.path.get(r.clone()))
                {
                    out.push_str(text);
                }
            }
            Piece::Query(name) => {
                if let Some(value) = request.query(name) {
                    out.push_str(&value);
                }
            }
            Piece::Header(name) => {
                if let Some(value) = request.header(name) {
                    out.push_str(value);
                }
            }
            Piece::Body => out.push_str(&String::from_utf8_lossy(request.body)),
            Piece::Json(pointer) => match request.pointer(pointer) {
                Some(serde_json::Value::String(s)) => out.push_str(s),
                Some(value) => {
                    let _ = write!(out, "{value}");
                }
                None => {}
            },
            Piece::Uuid => {
                let mut text = uuid::Uuid::encode_buffer();
                out.push_str(uuid::Uuid::new_v4().hyphenated().encode_lower(&mut text));
            }
            Piece::Counter => out.push_str(itoa::Buffer::new().format(vars.counter)),
            Piece::Now => push_now((vars.clock)(), out),
            Piece::Id => out.push_str(vars.id),
            Piece::Items => out.push_str(vars.items),
        }
    }
}

/// The longest `${now}`: `2026-12-04T21:26:17.583Z`.
const NOW_LEN: usize = 24;

/// The longest `${counter}` (a `u64`).
const COUNTER_LEN: usize = 20;

/// Appends `${now}` for `time`. The text is made once per millisecond and
/// thread and copied for the other requests of that millisecond: a busy
/// server answers hundreds within one, and formatting a date is most of
/// what such a placeholder would cost.
fn push_now(time: SystemTime, out: &mut String) {
    thread_local! {
        /// The millisecond last formatted, since the epoch, and its text.
        static LAST: RefCell<(Option<u128>, String)> = const { RefCell::new((None, String::new())) };
    }
    let Ok(since) = time.duration_since(SystemTime::UNIX_EPOCH) else {
        out.push_str(&rfc3339(time));
        return;
    };
    let millis = since.as_millis();
    LAST.with_borrow_mut(|(last, text)| {
        if *last != Some(millis) {
            *text = rfc3339(time);
            *last = Some(millis);
        }
        out.push_str(text);
    });
}

/// `time` as RFC 3339 in UTC with milliseconds (3GPP's DateTime has a zone).
fn rfc3339(time: SystemTime) -> String {
    let time = time::OffsetDateTime::from(time);
    let millis = time.millisecond();
    let time = time.replace_millisecond(millis).unwrap_or(time);
    time.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use h2sim_proto::{HeaderField, RequestHead};

    fn head(path: &str) -> RequestHead {
        let mut head = RequestHead::new("POST", "http", "nrf:8080", path.to_owned());
        head.fields
            .push(HeaderField::new("3gpp-sbi-callback", "Nnrf_NFManagement"));
        head
    }

    /// The hint for a name that is no placeholder: the closest of them or
    /// of the captures, a letter or two away, one off only in case first;
    /// none for a name far from all (`${HOME}`), or as short as its
    /// distance.
    #[test]
    fn a_misspelt_placeholder_gets_the_closest_name() {
        let captures = ["ueId".to_owned(), "nfInstanceId".to_owned()];
        for (name, hint) in [
            ("sufix", Some("suffix")),
            ("Path", Some("path")),
            ("ueid", Some("ueId")),
            ("nfInstanceID", Some("nfInstanceId")),
            ("querry.nf-type", Some("query.nf-type")),
            ("headr.x-a", Some("header.x-a")),
            ("bdy/a/b", Some("body/a/b")),
            ("body.a", Some("body/a")),
            ("HOME", None),
            ("x", None),
            ("seg", None),
        ] {
            assert_eq!(closest(name, &captures).as_deref(), hint, "{name}");
        }
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        for name in PLAIN {
            assert!(!matches!(Piece::named(name), Piece::Named(_)), "{name}");
        }
        // A capture named like a prefix is a plain name: no separator.
        let query = ["query".to_owned()];
        assert_eq!(closest("qery", &query).as_deref(), Some("query"));
    }

    /// Names left as written are those no placeholder nor capture takes.
    #[test]
    fn unknown_names_are_those_sent_as_written() {
        let t = Template::parse("${sufix}${suffix}${ueId}${HOME}${seg2}").unwrap();
        let captures = ["ueId".to_owned()];
        assert_eq!(t.unknown(&captures).collect::<Vec<_>>(), ["sufix", "HOME"]);
    }

    #[test]
    fn every_placeholder_kind() {
        let head = head("/nudm-uecm/v1/imsi-001/registrations?nf-type=AMF&x=a%20b");
        let body = br#"{"amfInstanceId":"a-1","guami":{"plmnId":{"mcc":"001"}},"n":5}"#;
        let request = Request::new(&head, body);
        let template = Template::parse(
            "${ueId}|${seg3}|${query.nf-type}|${query.x}|${header.3GPP-Sbi-Callback}|\
             ${body/amfInstanceId}|${body/guami/plmnId}|${body/n}|${body/none}|${counter}|${nope}|${id}",
        )
        .unwrap()
        .bind(&["ueId".to_owned()]);
        let captures = [std::ops::Range { start: 14, end: 22 }];
        let vars = Vars {
            captures: &captures,
            counter: 7,
            id: "i-9",
            ..Vars::of(&request, "")
        };
        assert_eq!(
            template.render(&vars),
            r#"imsi-001|imsi-001|AMF|a b|Nnrf_NFManagement|a-1|{"mcc":"001"}|5||7|${nope}|i-9"#
        );
        assert!(template.reads_body() && template.counts());
    }

    #[test]
    fn uuid_and_time_are_well_formed() {
        let head = head("/x");
        let request = Request::new(&head, b"");
        let vars = Vars {
            clock: || SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_500),
            ..Vars::of(&request, "")
        };
        let out = Template::parse("${uuid} ${now}").unwrap().render(&vars);
        let (id, now) = out.split_once(' ').unwrap();
        let id = uuid::Uuid::parse_str(id).unwrap();
        assert_eq!(id.get_version_num(), 4);
        // RFC 3339 §5.6, with a zone as TS 29.571's DateTime requires.
        assert_eq!(now, "1970-01-01T00:00:01.5Z");
    }

    /// `${now}` is made once per millisecond: a new millisecond, or a
    /// clock that went back, gets its own text, never the last one's.
    #[test]
    fn now_follows_the_clock_across_milliseconds() {
        let head = head("/x");
        let request = Request::new(&head, b"");
        let at = |clock: fn() -> SystemTime| {
            let vars = Vars {
                clock,
                ..Vars::of(&request, "")
            };
            Template::parse("${now}").unwrap().render(&vars)
        };
        fn ms(n: u64) -> SystemTime {
            SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(n)
        }
        assert_eq!(at(|| ms(1_500)), "1970-01-01T00:00:01.5Z");
        assert_eq!(at(|| ms(1_501)), "1970-01-01T00:00:01.501Z");
        assert_eq!(at(|| ms(1_500)), "1970-01-01T00:00:01.5Z");
        assert_eq!(
            at(|| SystemTime::UNIX_EPOCH - std::time::Duration::from_secs(1)),
            "1969-12-31T23:59:59Z"
        );
    }

    /// A path capture named as a placeholder (`/nf/{id}`) wins over it:
    /// `${id}` is the path's segment, not a resource's (empty) item id.
    #[test]
    fn captures_win_over_placeholders_of_the_same_name() {
        let head = head("/nf/abc/x/7");
        let request = Request::new(&head, b"");
        let captures = [
            std::ops::Range { start: 4, end: 7 },
            std::ops::Range { start: 10, end: 11 },
        ];
        let vars = Vars {
            captures: &captures,
            ..Vars::of(&request, "")
        };
        let names = ["id".to_owned(), "seg1".to_owned()];
        let template = Template::parse("id=${id} seg1=${seg1} seg2=${seg2} path=${path}").unwrap();
        assert_eq!(
            template.bind(&names).render(&vars),
            "id=abc seg1=7 seg2=abc path=/nf/abc/x/7"
        );
    }

    #[test]
    fn unknown_names_go_back_to_text() {
        let t = Template::parse("a ${nope} b").unwrap();
        assert_eq!(t.bind(&[]).literal().unwrap(), "a ${nope} b");
        assert_eq!(Template::parse("plain ${unclosed"), None);
    }
}
