//! What is checked of a rule at start, whether it comes from the command
//! line or a rules file: what the rule asks for that it could never do.
//! The caller names the rule (`-m GET -p /a`, `--rules f.yaml: rule 3`) in
//! the one line the user sees.

use std::fmt;

use super::matcher::PathMatch;
use super::notify::is_callback_uri;
use super::rules::{Body, Kind, Reply, Rule};
use super::template::{Template, Text, closest};

/// A rule that asks for what it could never do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleError {
    /// A 204 or 304 with a body, which could never be sent (RFC 9110
    /// §6.4.1); `push` names the pushed response, if it is one.
    NoContent { status: u16, push: Option<String> },
    /// A path capture whose name the rule's kind gives a meaning of its
    /// own: a resource rule's `{id}` (its item's id), a list rule's
    /// `{items}` (the items found). Elsewhere a capture wins over a
    /// placeholder of its name (`super::template`).
    ReservedCapture {
        name: &'static str,
        kind: &'static str,
    },
    /// A path with a `{` or `}` that is not a whole `{name}` segment: no
    /// request path has them (RFC 3986 §3.3), so it is a capture
    /// mistyped.
    PathBraces { path: String },
    /// A notification URI written without a placeholder that is no
    /// absolute `http://` or `https://` URI: it could never be sent (one
    /// from a template is checked per request).
    NotifyUri { uri: String },
    /// A resource or token rule, which answers by itself, given what only
    /// a plain reply uses (`what`: text, status, headers…).
    Unused {
        kind: &'static str,
        what: &'static str,
    },
    /// A `content-length` of the rule's own that its body does not have
    /// (RFC 9110 §8.6: a sender must not send a wrong one): over HTTP/1.1
    /// the answer would end short or run into the next one, and the
    /// connection's later answers would be misread. `len` is the body's
    /// size, `None` when it varies (a template, a directory's files).
    OwnLength {
        given: String,
        len: Option<usize>,
        push: Option<String>,
    },
    /// A method that is not a token (RFC 9110 §9.1): no request has it.
    Method { method: String },
    /// A path prefix (`push`: a push's path) that no request target has:
    /// not starting with `/`, or holding a space or a control character
    /// (RFC 9112 §3.2, RFC 9113 §8.3.1). A push's path is sent as its
    /// promise's `:path`, which the client would reset.
    Path { path: String, push: bool },
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleError::NoContent { status, push } => {
                if let Some(path) = push {
                    write!(f, "push {path}: ")?;
                }
                write!(
                    f,
                    "a {status} has no content (RFC 9110 §6.4.1): give it no body (text, hex, file, size, dir)"
                )
            }
            RuleError::ReservedCapture { name, kind } => write!(
                f,
                "path capture {{{name}}} clashes with ${{{name}}}, which a {kind} rule fills itself: rename the capture"
            ),
            RuleError::PathBraces { path } => write!(
                f,
                "path {path}: a capture is a whole segment, {{name}}, and no path has other braces"
            ),
            RuleError::NotifyUri { uri } => write!(
                f,
                "notify uri {uri:?} is not an absolute http:// or https:// URI"
            ),
            RuleError::Unused { kind, what } => write!(
                f,
                "a {kind} rule answers by itself and never uses its {what}: drop it"
            ),
            RuleError::Method { method } => write!(
                f,
                "method {method:?} is not a token (RFC 9110 §9.1): no request has it"
            ),
            RuleError::Path { path, push } => write!(
                f,
                "{} {path:?} is no request's path: it starts with / and has no space or control character",
                if *push { "push path" } else { "path" }
            ),
            RuleError::OwnLength { given, len, push } => {
                if let Some(path) = push {
                    write!(f, "push {path}: ")?;
                }
                match len {
                    Some(len) => write!(
                        f,
                        "content-length {given} but the body has {len} bytes (RFC 9110 §8.6): drop the field, the server sends the right one"
                    ),
                    None => write!(
                        f,
                        "content-length {given} for a body whose size varies (RFC 9110 §8.6): drop the field, the server sends the right one"
                    ),
                }
            }
        }
    }
}

impl std::error::Error for RuleError {}

/// The first thing `rule` asks for that it could never do.
pub fn rule(rule: &Rule) -> Result<(), RuleError> {
    if !h2sim_proto::is_method(rule.method.as_bytes()) {
        return Err(RuleError::Method {
            method: rule.method.clone(),
        });
    }
    if let Some(path) = &rule.path_prefix {
        request_path(path, false)?;
        path_braces(path)?;
    }
    for push in &rule.pushes {
        request_path(&push.path, true)?;
    }
    let path = PathMatch::parse(rule.path_prefix.as_deref());
    reserved_capture(rule, &path)?;
    unused(rule)?;
    notify_uris(rule, &path)?;
    let serves_files = rule.dir.is_some();
    no_content(&rule.reply, serves_files, None)?;
    // A HEAD's answer states the length a GET's content would have.
    if rule.method != "HEAD" {
        own_length(&rule.reply, serves_files, None)?;
    }
    for push in &rule.pushes {
        no_content(&push.reply, false, Some(&push.path))?;
        own_length(&push.reply, false, Some(&push.path))?;
    }
    Ok(())
}

/// What to tell of each `${...}` in `rule`'s texts (bodies, fields, the
/// status, notifications) that names no placeholder nor capture: it is
/// sent as written, as h2simple sends its bodies, so the rule stands, but
/// a misspelt placeholder (`${sufix}`) would go out unnoticed.
pub fn unknown_placeholders(rule: &Rule) -> Vec<String> {
    let path = PathMatch::parse(rule.path_prefix.as_deref());
    let captures = path.names();
    let replies = std::iter::once(&rule.reply).chain(rule.pushes.iter().map(|p| &p.reply));
    let mut texts: Vec<&str> = Vec::new();
    let mut templates: Vec<&Template> = Vec::new();
    for reply in replies {
        if let Body::Template(t) = &reply.body {
            templates.push(t);
        }
        texts.extend(
            reply
                .headers
                .iter()
                .filter_map(|f| std::str::from_utf8(&f.value).ok()),
        );
    }
    texts.extend(rule.status_template.as_deref());
    for notify in &rule.notify {
        texts.push(&notify.uri);
        texts.push(&notify.body);
        texts.extend(notify.headers.iter().map(|(_, v)| v.as_str()));
    }
    let parsed: Vec<Template> = texts.into_iter().filter_map(Template::parse).collect();
    let mut seen: Vec<&str> = Vec::new();
    for name in templates
        .into_iter()
        .chain(&parsed)
        .flat_map(|t| t.unknown(captures))
    {
        if !seen.contains(&name) {
            seen.push(name);
        }
    }
    seen.into_iter()
        .map(|name| {
            let hint = closest(name, captures)
                .map(|c| format!(" (did you mean ${{{c}}}?)"))
                .unwrap_or_default();
            format!("${{{name}}} is no placeholder{hint}: it is sent as written")
        })
        .collect()
}

/// A request target's path: `/` first, then octets a target may hold.
fn request_path(path: &str, push: bool) -> Result<(), RuleError> {
    if path.starts_with('/') && h2sim_proto::octets::is_target(path.as_bytes()) {
        return Ok(());
    }
    Err(RuleError::Path {
        path: path.to_owned(),
        push,
    })
}

/// Every segment is free of braces or a whole `{name}`.
fn path_braces(path: &str) -> Result<(), RuleError> {
    let capture = |s: &str| {
        s.strip_prefix('{')
            .and_then(|s| s.strip_suffix('}'))
            .is_some_and(|name| !name.is_empty() && !name.contains(['{', '}']))
    };
    let bad = path
        .split(['/', '?'])
        .any(|s| s.contains(['{', '}']) && !capture(s));
    if bad {
        return Err(RuleError::PathBraces {
            path: path.to_owned(),
        });
    }
    Ok(())
}

/// What a resource or token rule is given that only a plain reply uses.
fn unused(rule: &Rule) -> Result<(), RuleError> {
    let kind = match rule.kind {
        Kind::Resource(_) => "resource",
        Kind::Token(_) => "token",
        Kind::Reply | Kind::List(_) => return Ok(()),
    };
    let what = if !matches!(rule.reply.body, Body::Empty) {
        "body (text, hex, file, size, problem)"
    } else if rule.reply.status != Reply::default().status || rule.status_template.is_some() {
        "status"
    } else if !rule.reply.headers.is_empty() {
        "headers"
    } else if !rule.pushes.is_empty() {
        "pushes"
    } else if rule.dir.is_some() {
        "dir"
    } else {
        return Ok(());
    };
    Err(RuleError::Unused { kind, what })
}

/// A capture of the name the rule's kind fills itself.
fn reserved_capture(rule: &Rule, path: &PathMatch) -> Result<(), RuleError> {
    let (name, kind) = match rule.kind {
        Kind::Resource(_) => ("id", "resource"),
        Kind::List(_) => ("items", "list"),
        Kind::Reply | Kind::Token(_) => return Ok(()),
    };
    if path.names().iter().any(|n| n == name) {
        return Err(RuleError::ReservedCapture { name, kind });
    }
    Ok(())
}

/// A notification URI with no placeholder left once bound to the rule's
/// captures is what every request sends to: it must be one.
fn notify_uris(rule: &Rule, path: &PathMatch) -> Result<(), RuleError> {
    for notify in &rule.notify {
        if let Text::Fixed(uri) = Text::compile(&notify.uri, path.names())
            && !is_callback_uri(&uri)
        {
            return Err(RuleError::NotifyUri { uri });
        }
    }
    Ok(())
}

/// A `content-length` of the reply's own that is not its body's size. A
/// 304's states the length of content it does not send, so any goes.
fn own_length(reply: &Reply, serves_files: bool, push: Option<&str>) -> Result<(), RuleError> {
    let Some(given) = reply
        .headers
        .iter()
        .find(|f| f.name.eq_ignore_ascii_case(b"content-length"))
    else {
        return Ok(());
    };
    if reply.status == 304 {
        return Ok(());
    }
    let len = if serves_files {
        None
    } else {
        reply.body.fixed_len()
    };
    let given = String::from_utf8_lossy(&given.value).trim().to_owned();
    if len.is_some_and(|len| given.parse() == Ok(len)) {
        return Ok(());
    }
    Err(RuleError::OwnLength {
        given,
        len,
        push: push.map(str::to_owned),
    })
}

/// A written 204 or 304 whose rule gives a body: the core drops it, so
/// the rule says something that never happens.
fn no_content(reply: &Reply, serves_files: bool, push: Option<&str>) -> Result<(), RuleError> {
    let has_body = serves_files || !matches!(reply.body, Body::Empty);
    if has_body && matches!(reply.status, 204 | 304) {
        return Err(RuleError::NoContent {
            status: reply.status,
            push: push.map(str::to_owned),
        });
    }
    Ok(())
}
