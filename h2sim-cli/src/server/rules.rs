//! Response rules: `-m METHOD [-a AUTHORITY] [-p PATH_PREFIX] [-s STATUS]
//! [-x name=value]… [body] [-o PUSH_PATH …]…`, checked in order, first match
//! wins; no match is 404. GET rules answer HEAD too (see [`find`]).

use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use h2sim_proto::{HeaderField, ResponseHead};

use super::matcher::{Conditions, PathMatch};
use super::notify::NotifySpec;
use super::oauth::TokenEndpoint;
use super::request::Request;
use super::resource::{List, Resource};
use super::status::final_status;
use super::template::{Template, Vars};
use crate::lasting;

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

/// A rule's body: fixed bytes, or text with placeholders (see
/// [`super::template`]).
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
        let head = h2sim_proto::RequestHead::new("GET", "http", "", path.to_owned());
        let request = Request::new(&head, b"");
        self.bind(&[]).render_for(&Vars::of(&request, prefix))
    }

    /// The body with its names bound to the rule's captures.
    fn bind(&self, names: &[String]) -> Body {
        match self {
            Body::Template(t) => {
                let t = t.bind(names);
                match t.literal() {
                    Some(text) => Body::Fixed(Bytes::from(text)),
                    None => Body::Template(t),
                }
            }
            other => other.clone(),
        }
    }

    /// The body for one request.
    pub fn render_for(&self, vars: &Vars<'_>) -> Bytes {
        match self {
            Body::Empty => Bytes::new(),
            Body::Fixed(bytes) => bytes.clone(),
            Body::Template(template) => Bytes::from(template.render(vars)),
        }
    }

    fn reads_body(&self) -> bool {
        matches!(self, Body::Template(t) if t.reads_body())
    }

    /// The length, when it is the same for every request.
    pub(super) fn fixed_len(&self) -> Option<usize> {
        match self {
            Body::Empty => Some(0),
            Body::Fixed(bytes) => Some(bytes.len()),
            Body::Template(_) => None,
        }
    }
}

/// A reply as it is sent: its templates parsed once and bound to the
/// rule's captures, and its `content-length` made once when the body's
/// size never changes.
#[derive(Debug, Clone)]
pub struct Answer {
    status: u16,
    /// A status from a template (`${query.status}`); one that does not
    /// come out as a final status code (see [`super::status`]) answers
    /// 500, so that a client under test cannot make the server send an
    /// interim head that leaves its stream waiting for ever.
    status_template: Option<Template>,
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
    /// `reply` (and a status template) for a rule with capture `names`.
    pub fn new(reply: &Reply, status: Option<&str>, names: &[String]) -> Answer {
        let templated = reply
            .headers
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let value = std::str::from_utf8(&f.value).ok()?;
                let t = Template::parse(value)?.bind(names);
                t.literal().is_none().then_some((i, t))
            })
            .collect();
        let status_template = status
            .and_then(Template::parse)
            .map(|t| t.bind(names))
            .filter(|t| t.literal().is_none());
        let add_length = (status_template.is_some() || may_have_length(reply.status))
            && !reply
                .headers
                .iter()
                .any(|f| f.name.eq_ignore_ascii_case(b"content-length"));
        // What every response carries as it is lasts as long as the server
        // (see `lasting`): responses copy it instead of counting references.
        let body = match reply.body.bind(names) {
            Body::Fixed(bytes) => Body::Fixed(lasting::body(&bytes)),
            other => other,
        };
        Answer {
            status: reply.status,
            status_template,
            fields: reply.headers.iter().map(lasting::field).collect(),
            templated,
            fixed_length: body
                .fixed_len()
                .map(|len| lasting::field(&length_field(len as u64))),
            body,
            add_length,
        }
    }

    /// Whether rendering reads the request's JSON body.
    pub fn reads_body(&self) -> bool {
        self.body.reads_body()
            || self.templated.iter().any(|(_, t)| t.reads_body())
            || self
                .status_template
                .as_ref()
                .is_some_and(Template::reads_body)
    }

    /// Whether rendering uses the rule's counter.
    pub fn counts(&self) -> bool {
        matches!(&self.body, Body::Template(t) if t.counts())
            || self.templated.iter().any(|(_, t)| t.counts())
            || self.status_template.as_ref().is_some_and(Template::counts)
    }

    /// The head and body for one request, the head's fields collected in
    /// `fields` (its room is reused and what it held dropped: a spare
    /// vector saves allocating one per response).
    pub fn render(&self, vars: &Vars<'_>, fields: Vec<HeaderField>) -> (ResponseHead, Bytes) {
        let body = self.body.render_for(vars);
        (self.head(vars, body.len() as u64, true, fields), body)
    }

    /// The head for one request answered with a file of `len` bytes (`-d
    /// DIR`) instead of the rule's body: the file's content goes with it,
    /// or for a HEAD nothing, its length told all the same.
    pub fn render_file(&self, vars: &Vars<'_>, len: u64, fields: Vec<HeaderField>) -> ResponseHead {
        self.head(vars, len, false, fields)
    }

    /// The status for one request: the rule's, or its template's (500
    /// when that gives no final status).
    pub fn status(&self, vars: &Vars<'_>) -> u16 {
        match &self.status_template {
            None => self.status,
            Some(t) => final_status(&t.render(vars)).unwrap_or(500),
        }
    }

    fn head(
        &self,
        vars: &Vars<'_>,
        len: u64,
        own_body: bool,
        mut fields: Vec<HeaderField>,
    ) -> ResponseHead {
        let status = self.status(vars);
        fields.clear();
        fields.reserve_exact(self.fields.len() + 1);
        fields.extend_from_slice(&self.fields);
        for (i, template) in &self.templated {
            fields[*i].value = Bytes::from(template.render(vars));
        }
        if self.add_length && may_have_length(status) {
            fields.push(match (&self.fixed_length, own_body) {
                (Some(fixed), true) => fixed.clone(),
                _ => length_field(len),
            });
        }
        ResponseHead { status, fields }
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
fn length_field(len: u64) -> HeaderField {
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

/// What a rule does with a request it matches.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Kind {
    /// Answer with the rule's reply (templates filled).
    #[default]
    Reply,
    /// Keep resources under the rule's path, the collection (see
    /// [`super::resource`]).
    Resource(Resource),
    /// List a collection, filtered by the query; the reply's body, if any,
    /// wraps the list (`${items}`).
    List(List),
    /// Issue OAuth2 tokens (see [`super::oauth`]).
    Token(TokenEndpoint),
}

/// One rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// `*` matches every method.
    pub method: String,
    pub authority: Option<String>,
    /// A prefix, or a path template when a segment is `{name}`; for a
    /// resource rule, its collection.
    pub path_prefix: Option<String>,
    /// Query, field and JSON body conditions.
    pub conditions: Conditions,
    pub reply: Reply,
    /// The reply's status as a template (`${query.code}`).
    pub status_template: Option<String>,
    pub kind: Kind,
    /// Answer 401 unless the request carries a bearer token this server
    /// issued.
    pub require_token: bool,
    /// Requests to send after answering.
    pub notify: Vec<NotifySpec>,
    pub pushes: Vec<Push>,
    pub delay: Option<Delay>,
    /// `-d DIR`: the body is the file under DIR named by the path after the
    /// prefix.
    pub dir: Option<PathBuf>,
}

/// Where a resource rule's request points: the end of the collection's
/// part of the path, and the item's id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Item {
    pub collection_end: usize,
    pub id: Option<Range<usize>>,
}

/// The rule a request matched, and what its path gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub rule: usize,
    /// The path template's captures, as byte ranges of the path.
    pub captures: Vec<Range<usize>>,
    pub item: Item,
}

impl Rule {
    /// Whether this rule, having matched a HEAD, answers it as a GET: it
    /// is a GET or `*` rule (see [`find`]), not one naming HEAD.
    pub fn answers_as_get(&self, request: &Request<'_>) -> bool {
        request.is_head() && self.method != "HEAD"
    }

    pub fn new(method: &str) -> Rule {
        Rule {
            method: method.to_owned(),
            authority: None,
            path_prefix: None,
            conditions: Conditions::default(),
            reply: Reply::default(),
            status_template: None,
            kind: Kind::Reply,
            require_token: false,
            notify: Vec::new(),
            pushes: Vec::new(),
            delay: None,
            dir: None,
        }
    }

    /// Whether `request` matches, with `path` this rule's compiled path;
    /// captures are pushed to `captures`. Method, authority and path
    /// first; the conditions, which may parse the body, last.
    pub fn matches(
        &self,
        path: &PathMatch,
        request: &Request<'_>,
        captures: &mut Vec<Range<usize>>,
    ) -> Option<Item> {
        let head = request.head;
        if !(self.method == "*" || self.method.as_bytes() == request.method)
            || self
                .authority
                .as_ref()
                .is_some_and(|a| a.as_bytes() != head.authority.as_ref())
        {
            return None;
        }
        let item = match &self.kind {
            Kind::Resource(_) => item(path, request.path, captures)?,
            _ => {
                let ok = match path {
                    PathMatch::Any => true,
                    PathMatch::Prefix(p) => head.path.starts_with(p.as_bytes()),
                    PathMatch::Template(t) => t.matches(request.path, captures),
                };
                if !ok {
                    return None;
                }
                Item::default()
            }
        };
        if self.conditions.is_empty() || self.conditions.hold(request) {
            Some(item)
        } else {
            captures.clear();
            None
        }
    }

    pub fn prefix(&self) -> &str {
        self.path_prefix.as_deref().unwrap_or("")
    }

    /// What the rule answers, for the closing summary: its status, or,
    /// for the kinds that answer by themselves, what they do and with
    /// which statuses (a resource rule's 201, 204 and 404 are no `200`).
    pub fn answers(&self) -> String {
        let mut what = match &self.kind {
            Kind::Reply => match &self.status_template {
                Some(template) => template.clone(),
                None => self.reply.status.to_string(),
            },
            Kind::Resource(r) => {
                let patch = r.patch_status.to_string();
                let statuses: Vec<String> = [
                    ("POST", "201"),
                    ("PUT", "201/200"),
                    ("GET", "200"),
                    ("PATCH", patch.as_str()),
                    ("DELETE", "204"),
                ]
                .into_iter()
                .filter(|(method, _)| self.method == "*" || self.method == *method)
                .map(|(method, status)| format!("{method} {status}"))
                .collect();
                let reads = ["*", "GET", "PATCH", "DELETE"].contains(&self.method.as_str());
                let absent = if reads { "; 404 when absent" } else { "" };
                format!("resource ({}{absent})", statuses.join(", "))
            }
            Kind::List(l) => format!("list of {} ({})", l.collection, self.reply.status),
            Kind::Token(_) => "OAuth2 token (200; 400 for a bad grant)".to_owned(),
        };
        if self.require_token {
            what.push_str(", 401 without a token");
        }
        what
    }
}

/// A resource rule's path: the collection, then nothing or one segment.
fn item(path: &PathMatch, request: &str, captures: &mut Vec<Range<usize>>) -> Option<Item> {
    let end = match path {
        PathMatch::Any => 0,
        PathMatch::Prefix(p) => {
            let p = p.trim_end_matches('/');
            let rest = request.strip_prefix(p)?;
            if !(rest.is_empty() || rest.starts_with('/')) {
                return None;
            }
            p.len()
        }
        PathMatch::Template(t) => t.match_start(request, captures)?,
    };
    let rest = &request[end..];
    let id = rest.trim_matches('/');
    if id.is_empty() {
        return Some(Item {
            collection_end: end,
            id: None,
        });
    }
    if id.contains('/') {
        captures.clear();
        return None;
    }
    let start = end + (rest.len() - rest.trim_start_matches('/').len());
    Some(Item {
        collection_end: end,
        id: Some(start..start + id.len()),
    })
}

/// The first rule that matches `request`, if any; `paths[i]` is rule `i`'s
/// compiled path.
///
/// A HEAD is answered by GET rules too, as RFC 9110 asks of every server
/// (§9.1: GET and HEAD MUST be supported; §9.3.2: HEAD is GET without the
/// content). A rule naming HEAD, wherever it stands, wins over every GET
/// rule: whoever writes one means it for HEAD, and a catch-all GET rule
/// before it must not take its requests. Only when none matches is the
/// request matched again as a GET (GET and `*` rules, in order, with the
/// same conditions), and answered as that GET.
pub fn find(rules: &[Rule], paths: &[PathMatch], request: &Request<'_>) -> Option<Found> {
    if request.is_head() {
        return first(rules, paths, request, |rule| rule.method == "HEAD")
            .or_else(|| first(rules, paths, &request.as_get(), |_| true));
    }
    first(rules, paths, request, |_| true)
}

/// The first rule `pick` allows that matches `request`.
fn first(
    rules: &[Rule],
    paths: &[PathMatch],
    request: &Request<'_>,
    pick: impl Fn(&Rule) -> bool,
) -> Option<Found> {
    let mut captures = Vec::new();
    for (i, (rule, path)) in rules.iter().zip(paths).enumerate() {
        if !pick(rule) {
            continue;
        }
        captures.clear();
        if let Some(item) = rule.matches(path, request, &mut captures) {
            return Some(Found {
                rule: i,
                captures,
                item,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::matcher::Expect;
    use super::*;

    fn rule(method: &str, prefix: &str) -> Rule {
        Rule {
            path_prefix: Some(prefix.to_owned()),
            ..Rule::new(method)
        }
    }

    fn find_in(rules: &[Rule], method: &str, authority: &str, path: &str) -> Option<Found> {
        let paths: Vec<_> = rules
            .iter()
            .map(|r| PathMatch::parse(r.path_prefix.as_deref()))
            .collect();
        let head = h2sim_proto::RequestHead::new(
            method.to_owned(),
            "http",
            authority.to_owned(),
            path.to_owned(),
        );
        find(rules, &paths, &Request::new(&head, b""))
    }

    fn index(found: Option<Found>) -> Option<usize> {
        found.map(|f| f.rule)
    }

    #[test]
    fn first_match_wins() {
        let rules = vec![
            rule("GET", "/user2/"),
            rule("GET", "/user"),
            rule("POST", "/user/"),
        ];
        assert_eq!(index(find_in(&rules, "GET", "h", "/user2/x")), Some(0));
        assert_eq!(index(find_in(&rules, "GET", "h", "/user/x")), Some(1));
        assert_eq!(index(find_in(&rules, "POST", "h", "/user/1")), Some(2));
        assert_eq!(index(find_in(&rules, "DELETE", "h", "/user/1")), None);
    }

    /// RFC 9110 §9.1, §9.3.2: GET rules answer HEAD, in order and with
    /// their conditions; a rule naming HEAD wins wherever it stands.
    #[test]
    fn head_is_answered_by_get_rules_unless_a_head_rule_matches() {
        let mut only_json = rule("GET", "/b/");
        only_json
            .conditions
            .headers
            .push(("accept".into(), Expect::Equals("application/json".into())));
        let rules = vec![
            rule("POST", "/"),
            only_json,
            rule("GET", "/"),
            rule("HEAD", "/a/"),
            rule("*", "/c/"),
        ];
        let head = |path| find_in(&rules, "HEAD", "h", path);
        let as_get = |rules: &[Rule], found: &Found| {
            let head = h2sim_proto::RequestHead::new("HEAD", "http", "h", "/");
            rules[found.rule].answers_as_get(&Request::new(&head, b""))
        };
        let found = head("/a/x").unwrap();
        assert_eq!(
            (found.rule, as_get(&rules, &found)),
            (3, false),
            "the HEAD rule"
        );
        let found = head("/b/x").unwrap();
        assert_eq!(
            (found.rule, as_get(&rules, &found)),
            (2, true),
            "condition unmet"
        );
        assert_eq!(index(find_in(&rules, "GET", "h", "/a/x")), Some(2));
        let rules = vec![rule("*", "/c/"), rule("PUT", "/")];
        let found = find_in(&rules, "HEAD", "h", "/c/x").unwrap();
        assert_eq!(
            (found.rule, as_get(&rules, &found)),
            (0, true),
            "* as for GET"
        );
        assert!(find_in(&rules, "HEAD", "h", "/d").is_none());
    }

    #[test]
    fn authority_is_exact() {
        let mut r = rule("GET", "/");
        r.authority = Some("nrf.example:8080".into());
        let rules = [r];
        assert!(find_in(&rules, "GET", "nrf.example:8080", "/x").is_some());
        assert!(find_in(&rules, "GET", "nrf.example", "/x").is_none());
    }

    #[test]
    fn templates_and_resources_match_their_paths() {
        let mut put = rule("PUT", "/nudm-uecm/v1/{ueId}/registrations/amf-3gpp-access");
        put.conditions.headers.push((
            "content-type".into(),
            super::super::matcher::Expect::Present,
        ));
        let mut subs = rule("*", "/nudm-sdm/v2/{ueId}/sdm-subscriptions");
        subs.kind = Kind::Resource(Resource::default());
        let rules = vec![put, subs];
        let path = "/nudm-uecm/v1/imsi-1/registrations/amf-3gpp-access";
        assert_eq!(
            index(find_in(&rules, "PUT", "h", path)),
            None,
            "no content-type"
        );
        let found = find_in(
            &rules,
            "DELETE",
            "h",
            "/nudm-sdm/v2/imsi-2/sdm-subscriptions/s-1",
        )
        .unwrap();
        assert_eq!(found.rule, 1);
        assert_eq!(found.captures, [Range { start: 13, end: 19 }]);
        assert_eq!(found.item.collection_end, 37);
        assert_eq!(found.item.id, Some(38..41));
        let collection =
            find_in(&rules, "POST", "h", "/nudm-sdm/v2/imsi-2/sdm-subscriptions").unwrap();
        assert_eq!(collection.item.id, None);
        assert!(
            find_in(
                &rules,
                "GET",
                "h",
                "/nudm-sdm/v2/imsi-2/sdm-subscriptions/a/b"
            )
            .is_none()
        );
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
        let answer = Answer::new(&reply, None, &[]);
        // Only the one real template is kept as such.
        assert_eq!(answer.templated.len(), 1);
        let head = h2sim_proto::RequestHead::new("GET", "http", "h", "/user/42?x=1");
        let request = Request::new(&head, b"");
        let (head, body) = answer.render(&Vars::of(&request, "/user/"), Vec::new());
        assert_eq!(head.status, 201);
        assert_eq!(&head.get(b"location").unwrap()[..], b"/nudm/42?from=user");
        assert_eq!(&head.get(b"x-left").unwrap()[..], b"${nope} ${unclosed");
        assert_eq!(&head.get(b"content-length").unwrap()[..], b"2");
        assert_eq!(&body[..], b"42");
    }

    /// What a fixed answer sends is static: once the rule and the answer
    /// are gone, a response's texts counted by reference would be the only
    /// handle on them (unique); static ones never are.
    #[test]
    fn fixed_answers_send_static_texts() {
        let reply = Reply {
            status: 200,
            headers: vec![HeaderField::new(
                "content-type",
                Bytes::from(b"application/json".to_vec()),
            )],
            body: Body::Fixed(Bytes::from(vec![b'x'; 1024])),
        };
        let answer = Answer::new(&reply, None, &[]);
        drop(reply);
        let head = h2sim_proto::RequestHead::new("GET", "http", "h", "/x");
        let request = Request::new(&head, b"");
        let (head, body) = answer.render(&Vars::of(&request, ""), Vec::new());
        drop(answer);
        assert_eq!(&head.get(b"content-type").unwrap()[..], b"application/json");
        assert_eq!(&head.get(b"content-length").unwrap()[..], b"1024");
        assert_eq!(body.len(), 1024);
        for field in &head.fields {
            assert!(
                !field.value.is_unique(),
                "{:?} counted by reference",
                field.name
            );
        }
        assert!(!body.is_unique(), "the body is counted by reference");
    }

    /// RFC 9110 §15, §15.2, RFC 9113 §8.6: a status template that gives
    /// no final status answers 500, never a 1xx that leaves the stream
    /// waiting or a code outside 100-599.
    #[test]
    fn status_templates_give_final_statuses_or_500() {
        let answer = Answer::new(&Reply::default(), Some("${query.code}"), &[]);
        for (code, status) in [
            ("201", 201),
            ("599", 599),
            ("600", 500),
            ("999", 500),
            ("101", 500),
            ("100", 500),
            ("abc", 500),
            ("", 500),
        ] {
            let head = h2sim_proto::RequestHead::new("GET", "http", "h", format!("/x?code={code}"));
            let request = Request::new(&head, b"");
            let (head, _) = answer.render(&Vars::of(&request, ""), Vec::new());
            assert_eq!(head.status, status, "?code={code}");
        }
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
        let head = h2sim_proto::RequestHead::new("GET", "http", "h", "/x");
        let request = Request::new(&head, b"");
        let parts = Vars::of(&request, "");
        let length = |r: &Reply| {
            let (head, _) = Answer::new(r, None, &[]).render(&parts, Vec::new());
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
        let head = Answer::new(&reply(200, vec![], Body::Empty), None, &[]).render_file(
            &parts,
            5,
            Vec::new(),
        );
        assert_eq!(&head.get(b"content-length").unwrap()[..], b"5");
    }

    /// The closing summary says what each kind answers with: a resource
    /// rule's statuses are its own, not the reply's default 200.
    #[test]
    fn rules_say_what_they_answer() {
        let mut reply = rule("GET", "/a");
        reply.reply.status = 201;
        assert_eq!(reply.answers(), "201");
        reply.status_template = Some("${query.code}".into());
        assert_eq!(reply.answers(), "${query.code}");
        let mut resource = rule("*", "/subs");
        resource.kind = Kind::Resource(Resource {
            patch_status: 204,
            ..Resource::default()
        });
        assert_eq!(
            resource.answers(),
            "resource (POST 201, PUT 201/200, GET 200, PATCH 204, DELETE 204; 404 when absent)"
        );
        resource.method = "POST".into();
        assert_eq!(resource.answers(), "resource (POST 201)");
        let mut list = rule("GET", "/disc");
        list.kind = Kind::List(List {
            collection: "/nf".into(),
            filter: Vec::new(),
        });
        list.require_token = true;
        assert_eq!(list.answers(), "list of /nf (200), 401 without a token");
        let mut token = rule("POST", "/oauth2/token");
        token.kind = Kind::Token(TokenEndpoint::default());
        assert!(token.answers().starts_with("OAuth2 token"));
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
