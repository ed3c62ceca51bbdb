//! `--rules FILE`: the same rules as the command line, from TOML or YAML
//! (by extension: `.toml`, `.yaml`/`.yml`).
//!
//! ```toml
//! [[rule]]
//! method = "POST"
//! path = "/user1k/"
//! status = 200
//! headers = { "content-type" = "application/json" }
//! size = "1k"
//! delay = "5-20"
//!
//! [[rule.push]]
//! path = "/user1k/name1"
//! text = "1k_name1"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::{UsageError, usage};
use crate::body;
use crate::server::matcher::{Conditions, Expect, PathMatch};
use crate::server::notify::NotifySpec;
use crate::server::oauth::TokenEndpoint;
use crate::server::problem::Problem;
use crate::server::resource::{List, Resource};
use crate::server::rules::{Body, Delay, Kind, Push, Reply, Rule};
use crate::server::status::{final_code, final_status};
use crate::server::store::Limits;
use crate::server::template::Template;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    rule: Vec<RuleSpec>,
    store: Option<StoreSpec>,
}

/// What a rules file holds: its rules, and the store's bounds if it sets
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    pub rules: Vec<Rule>,
    pub store: Option<Limits>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct StoreSpec {
    max_items: Option<usize>,
    /// `N`, `Nk` or `Nm` bytes.
    max_bytes: Option<Value>,
}

/// `match:`: conditions on the request.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchSpec {
    #[serde(default)]
    query: BTreeMap<String, Value>,
    #[serde(default)]
    headers: BTreeMap<String, Value>,
    /// JSON Pointer → value.
    #[serde(default)]
    body: BTreeMap<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProblemSpec {
    status: u16,
    cause: Option<String>,
    title: Option<String>,
    detail: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ResourceSpec {
    id: Option<String>,
    patch_status: Option<u16>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListSpec {
    collection: String,
    /// Query parameter → JSON Pointer into each item.
    #[serde(default)]
    filter: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct TokenSpec {
    expires_in: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NotifyFileSpec {
    uri: String,
    method: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    text: Option<String>,
    /// Milliseconds.
    delay: Option<u64>,
    count: Option<u32>,
    /// Milliseconds.
    interval: Option<u64>,
}

/// A status code, or a template that gives one (text without a
/// placeholder is a code too: `"201"`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum StatusSpec {
    Code(i64),
    Template(String),
}

/// A rule, or (with `push`) a push: the same keys except that only a rule
/// has method, authority, delay, dir and pushes. One struct, checked after
/// parsing, because serde cannot combine flattening with rejecting unknown
/// keys, and an unknown key is most often a typo worth an error.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    method: Option<String>,
    authority: Option<String>,
    path: Option<String>,
    delay: Option<String>,
    dir: Option<PathBuf>,
    status: Option<StatusSpec>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    text: Option<String>,
    hex: Option<String>,
    file: Option<PathBuf>,
    size: Option<String>,
    #[serde(default)]
    push: Vec<RuleSpec>,
    #[serde(rename = "match")]
    matching: Option<MatchSpec>,
    problem: Option<ProblemSpec>,
    resource: Option<ResourceSpec>,
    list: Option<ListSpec>,
    token: Option<TokenSpec>,
    #[serde(default, rename = "require-token")]
    require_token: bool,
    #[serde(default)]
    notify: Vec<NotifyFileSpec>,
}

impl RuleSpec {
    fn reply(&mut self, at: &str, base: &Path) -> Result<Reply, UsageError> {
        let sources = [
            self.text.is_some(),
            self.hex.is_some(),
            self.file.is_some(),
            self.size.is_some(),
            self.problem.is_some(),
        ];
        if sources.iter().filter(|&&s| s).count() > 1 {
            return Err(usage(format!(
                "{at}: give at most one of text, hex, file, size, problem"
            )));
        }
        let mut headers = Vec::new();
        let body = if let Some(p) = self.problem.take() {
            if self.status.is_some() {
                return Err(usage(format!("{at}: a problem has its own status")));
            }
            // RFC 9457 §1: problem details describe an error.
            if !(400..=599).contains(&p.status) {
                return Err(usage(format!(
                    "{at}: problem status {}: problem details describe errors (RFC 9457 §1): use 400-599",
                    p.status
                )));
            }
            self.status = Some(StatusSpec::Code(i64::from(p.status)));
            headers.push(h2sim_proto::HeaderField::new(
                "content-type",
                crate::server::problem::MEDIA_TYPE,
            ));
            Body::from_text(
                &Problem {
                    status: p.status,
                    cause: p.cause,
                    title: p.title,
                    detail: p.detail,
                    kind: p.kind,
                }
                .json(),
            )
        } else if let Some(text) = self.text.take() {
            Body::from_text(&text)
        } else if let Some(hex) = self.hex.take() {
            Body::Fixed(body::hex(&hex).map_err(|e| usage(format!("{at}: {e}")))?)
        } else if let Some(file) = self.file.take() {
            Body::Fixed(body::file(&base.join(file)).map_err(|e| usage(format!("{at}: {e}")))?)
        } else if let Some(size) = self.size.take() {
            Body::Fixed(body::sized(&size).map_err(|e| usage(format!("{at}: {e}")))?)
        } else {
            Body::Empty
        };
        let status = match &self.status {
            None | Some(StatusSpec::Template(_)) => 200,
            Some(StatusSpec::Code(code)) => {
                final_code(*code).map_err(|e| usage(format!("{at}: status {e}")))?
            }
        };
        for (name, value) in std::mem::take(&mut self.headers) {
            headers.push(
                super::header(&format!("{name}={value}"))
                    .map_err(|e| usage(format!("{at}: {e}")))?,
            );
        }
        Ok(Reply {
            status,
            headers,
            body,
        })
    }
}

/// Reads the rules of `path`; relative `file` and `dir` entries are taken
/// from the rules file's folder.
pub fn load(path: &Path) -> Result<Rules, UsageError> {
    let origin = format!("--rules {}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| usage(format!("{origin}: {e}")))?;
    let format = match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => Format::Toml,
        Some("yaml" | "yml") => Format::Yaml,
        _ => return Err(usage(format!("{origin}: use a .toml, .yaml or .yml file"))),
    };
    parse(
        &text,
        format,
        &origin,
        path.parent().unwrap_or(Path::new(".")),
    )
}

/// How a rules text is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Yaml,
}

/// The rules of `text` (a file's, or built into the program): `origin`
/// names them in errors, and relative `file` and `dir` entries are taken
/// from `base`.
pub fn parse(text: &str, format: Format, origin: &str, base: &Path) -> Result<Rules, UsageError> {
    let file: File = match format {
        Format::Toml => toml::from_str(text)
            .map_err(|e| usage(format!("{origin}: {}", toml_error(&e, text))))?,
        Format::Yaml => serde_norway::from_str(text)
            .map_err(|e| usage(format!("{origin}: {}", yaml_error(&e.to_string()))))?,
    };
    let store = file
        .store
        .map(|s| store_limits(s, &format!("{origin}: store")))
        .transpose()?;
    let rules = file
        .rule
        .into_iter()
        .enumerate()
        .map(|(i, mut spec)| {
            let at = format!("{origin}: rule {}", i + 1);
            literal_status(&mut spec, &at)?;
            let kind = kind(&mut spec, &at)?;
            if spec.method.is_none() && matches!(kind, Kind::Token(_)) && spec.path.is_none() {
                spec.path = Some("/oauth2/token".to_owned());
            }
            let method = spec
                .method
                .take()
                .or(match kind {
                    Kind::Resource(_) => Some("*".to_owned()),
                    Kind::List(_) => Some("GET".to_owned()),
                    Kind::Token(_) => Some("POST".to_owned()),
                    Kind::Reply => None,
                })
                .ok_or_else(|| usage(format!("{at}: no method")))?;
            let delay = match spec.delay.take() {
                Some(d) => Some(
                    Delay::parse(&d)
                        .ok_or_else(|| usage(format!("{at}: delay {d:?} is not MS or MIN-MAX")))?,
                ),
                None => None,
            };
            let pushes = std::mem::take(&mut spec.push)
                .into_iter()
                .map(|mut p| {
                    literal_status(&mut p, &at)?;
                    if p.method.is_some()
                        || p.authority.is_some()
                        || p.delay.is_some()
                        || p.dir.is_some()
                        || !p.push.is_empty()
                        || p.matching.is_some()
                        || p.resource.is_some()
                        || p.list.is_some()
                        || p.token.is_some()
                        || p.require_token
                        || !p.notify.is_empty()
                        || matches!(p.status, Some(StatusSpec::Template(_)))
                    {
                        return Err(usage(format!(
                            "{at}: a push has only path, status, headers and a body"
                        )));
                    }
                    let path = p
                        .path
                        .take()
                        .ok_or_else(|| usage(format!("{at}: a push needs a path")))?;
                    Ok(Push {
                        path,
                        reply: p.reply(&at, base)?,
                    })
                })
                .collect::<Result<Vec<_>, UsageError>>()?;
            let conditions = conditions(spec.matching.take().unwrap_or_default(), &at)?;
            let notify = std::mem::take(&mut spec.notify)
                .into_iter()
                .map(notify_spec)
                .collect();
            let reply = spec.reply(&at, base)?;
            let status_template = match spec.status.take() {
                Some(StatusSpec::Template(t)) => Some(t),
                _ => None,
            };
            let dir = spec.dir.take().map(|d| base.join(d));
            if let Some(d) = dir.as_ref().filter(|d| !d.is_dir()) {
                // As `-d` on the command line: every request would be a 404.
                return Err(usage(format!("{at}: dir {}: not a directory", d.display())));
            }
            let rule = Rule {
                method,
                authority: spec.authority.take(),
                path_prefix: spec.path.take(),
                conditions,
                dir,
                reply,
                status_template,
                kind,
                require_token: spec.require_token,
                notify,
                pushes,
                delay,
            };
            super::check_rule(&rule, &at)?;
            Ok(rule)
        })
        .collect::<Result<Vec<_>, UsageError>>()?;
    if rules.is_empty() && store.is_none() {
        // A file left empty, or a typo in `rule:`: every request would
        // be a 404, and nothing said why.
        return Err(usage(format!("{origin}: no rule")));
    }
    Ok(Rules { rules, store })
}

/// A status written as text with no placeholder left once the rule's
/// path captures are bound (`"201"`, `"abc"`, `"${nope}"`) is a code,
/// checked here at start like a number: only a real template waits for
/// the request.
fn literal_status(spec: &mut RuleSpec, at: &str) -> Result<(), UsageError> {
    let Some(StatusSpec::Template(text)) = &spec.status else {
        return Ok(());
    };
    let path = PathMatch::parse(spec.path.as_deref());
    let literal = match Template::parse(text) {
        Some(template) => template.bind(path.names()).literal(),
        None => Some(text.clone()),
    };
    if let Some(literal) = literal {
        let code = final_status(&literal).map_err(|e| usage(format!("{at}: status {e}")))?;
        spec.status = Some(StatusSpec::Code(i64::from(code)));
    }
    Ok(())
}

/// A YAML error on one line, its rules numbered from 1 as the checks
/// after parsing number them: the parser's `rule[0].push[1]: unknown
/// field` becomes `rule 1: push 2: unknown field`.
fn yaml_error(message: &str) -> String {
    let Some((path, rest)) = message.split_once(": ") else {
        return message.to_owned();
    };
    if path.contains(' ') || !path.contains('[') {
        return message.to_owned();
    }
    let parts: Vec<String> = path
        .split('.')
        .map(|part| {
            let index = part
                .strip_suffix(']')
                .and_then(|p| p.split_once('['))
                .and_then(|(name, n)| Some((name, n.parse::<usize>().ok()?)));
            match index {
                Some((name, n)) => format!("{name} {}", n + 1),
                None => part.to_owned(),
            }
        })
        .collect();
    format!("{}: {rest}", parts.join(": "))
}

/// A TOML error on one line (the parser draws the line it points at over
/// several), naming the rule it is in, numbered from 1, and where.
fn toml_error(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim();
    let Some(at) = e.span().map(|s| s.start.min(text.len())) else {
        return message.to_owned();
    };
    let before = text.get(..at).unwrap_or_default();
    let line = before.matches('\n').count() + 1;
    let rule = before
        .lines()
        .filter(|l| l.trim_start().starts_with("[[rule]]"))
        .count();
    if rule == 0 {
        format!("line {line}: {message}")
    } else {
        format!("rule {rule} (line {line}): {message}")
    }
}

/// At most one of `resource`, `list`, `token`; none is a plain reply.
fn kind(spec: &mut RuleSpec, at: &str) -> Result<Kind, UsageError> {
    let kinds = [
        spec.resource.is_some(),
        spec.list.is_some(),
        spec.token.is_some(),
    ];
    if kinds.iter().filter(|&&k| k).count() > 1 {
        return Err(usage(format!(
            "{at}: give at most one of resource, list, token"
        )));
    }
    if let Some(r) = spec.resource.take() {
        if let Some(id) = &r.id {
            pointer(id, at)?;
        }
        return Ok(Kind::Resource(Resource {
            id: r.id,
            patch_status: match r.patch_status.unwrap_or(200) {
                s @ (200 | 204) => s,
                s => return Err(usage(format!("{at}: patch-status {s}: use 200 or 204"))),
            },
        }));
    }
    if let Some(l) = spec.list.take() {
        for p in l.filter.values() {
            pointer(p, at)?;
        }
        return Ok(Kind::List(List {
            collection: l.collection,
            filter: l.filter.into_iter().collect(),
        }));
    }
    if let Some(t) = spec.token.take() {
        return Ok(Kind::Token(TokenEndpoint {
            expires_in: t.expires_in.unwrap_or(TokenEndpoint::default().expires_in),
        }));
    }
    Ok(Kind::Reply)
}

/// RFC 6901 §3: a pointer is empty or starts with `/`.
fn pointer(p: &str, at: &str) -> Result<(), UsageError> {
    if p.is_empty() || p.starts_with('/') {
        Ok(())
    } else {
        Err(usage(format!(
            "{at}: {p:?} is not a JSON Pointer (start it with /)"
        )))
    }
}

fn conditions(spec: MatchSpec, at: &str) -> Result<Conditions, UsageError> {
    let text = |name: &str, v: Value| -> Result<Expect<String>, UsageError> {
        match v {
            Value::String(s) if s == "*" => Ok(Expect::Present),
            Value::String(s) => Ok(Expect::Equals(s)),
            Value::Number(n) => Ok(Expect::Equals(n.to_string())),
            Value::Bool(b) => Ok(Expect::Equals(b.to_string())),
            _ => Err(usage(format!(
                "{at}: match {name}: give a text value, or \"*\" for any"
            ))),
        }
    };
    let mut body = Vec::new();
    for (p, v) in spec.body {
        pointer(&p, at)?;
        body.push((
            p,
            match v {
                Value::String(s) if s == "*" => Expect::Present,
                v => Expect::Equals(v),
            },
        ));
    }
    Ok(Conditions {
        query: spec
            .query
            .into_iter()
            .map(|(k, v)| Ok((k.clone(), text(&k, v)?)))
            .collect::<Result<_, UsageError>>()?,
        headers: spec
            .headers
            .into_iter()
            .map(|(k, v)| Ok((k.to_ascii_lowercase(), text(&k, v)?)))
            .collect::<Result<_, UsageError>>()?,
        body,
    })
}

fn notify_spec(n: NotifyFileSpec) -> NotifySpec {
    let default = NotifySpec::default();
    NotifySpec {
        uri: n.uri,
        method: n.method.unwrap_or(default.method),
        headers: n.headers.into_iter().collect(),
        body: n.text.unwrap_or_default(),
        delay: n.delay.map_or(default.delay, Duration::from_millis),
        count: n.count.unwrap_or(default.count),
        interval: n.interval.map_or(default.interval, Duration::from_millis),
    }
}

fn store_limits(spec: StoreSpec, at: &str) -> Result<Limits, UsageError> {
    let default = Limits::default();
    let max_bytes = match spec.max_bytes {
        None => default.max_bytes,
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| usage(format!("{at}: max-bytes {n} is not a size")))?,
        Some(Value::String(s)) => body::parse_size(&s)
            .ok_or_else(|| usage(format!("{at}: max-bytes {s:?} is not N, Nk or Nm")))?,
        Some(other) => return Err(usage(format!("{at}: max-bytes {other} is not a size"))),
    };
    Ok(Limits {
        max_items: spec.max_items.unwrap_or(default.max_items),
        max_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rules file holding `text`, whose name ends in `-NAME` (so its
    /// extension is NAME's); removed when dropped.
    fn write(name: &str, text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::Builder::new()
            .prefix("h2sim-rules-")
            .suffix(&format!("-{name}"))
            .tempfile()
            .unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    #[test]
    fn toml_and_yaml_give_the_same_rules() {
        let toml = write(
            "r.toml",
            r#"
[[rule]]
method = "POST"
path = "/user1k/"
headers = { "content-type" = "application/json" }
size = "1k"
delay = "5"
[[rule.push]]
path = "/user1k/name1"
text = "1k_name1"
[[rule]]
method = "GET"
status = 404
"#,
        );
        let yaml = write(
            "r.yaml",
            r#"
rule:
  - method: POST
    path: /user1k/
    headers: { content-type: application/json }
    size: 1k
    delay: "5"
    push:
      - path: /user1k/name1
        text: 1k_name1
  - method: GET
    status: 404
"#,
        );
        let a = load(toml.path()).unwrap().rules;
        let b = load(yaml.path()).unwrap().rules;
        assert_eq!(a, b);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].reply.body.render("", "").len(), 1024);
        assert_eq!(a[0].pushes[0].path, "/user1k/name1");
        assert_eq!(a[1].reply.status, 404);
    }

    #[test]
    fn errors_name_file_and_rule() {
        let bad = write(
            "bad.toml",
            "[[rule]]\nmethod = \"GET\"\ntext = \"a\"\nhex = \"00\"\n",
        );
        assert!(load(bad.path()).unwrap_err().0.contains("rule 1"));
        let unknown = write("unknown.toml", "[[rule]]\nmethod = \"GET\"\nbogus = 1\n");
        assert!(load(unknown.path()).unwrap_err().0.contains("bogus"));
        assert!(
            load(Path::new("/nope/rules.toml"))
                .unwrap_err()
                .0
                .contains("/nope/rules.toml")
        );
        let ext = write("rules.txt", "");
        assert!(load(ext.path()).unwrap_err().0.contains(".toml"));
        // A file with no rule, and a dir that is none, answered every
        // request 404 with nothing said; the command line refuses the dir.
        for (name, text) in [("empty.yaml", ""), ("none.yaml", "rule: []\n")] {
            let file = write(name, text);
            assert!(
                load(file.path()).unwrap_err().0.ends_with(": no rule"),
                "{name}"
            );
        }
        let nodir = write(
            "nodir.yaml",
            "rule:\n  - {method: GET, dir: /nope/nothing}\n",
        );
        assert!(
            load(nodir.path())
                .unwrap_err()
                .0
                .ends_with("rule 1: dir /nope/nothing: not a directory")
        );
    }

    /// The examples parse into the kinds they show.
    #[test]
    fn the_nf_examples_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let nrf = load(&dir.join("nrf/rules.yaml")).unwrap();
        assert_eq!(
            nrf.store,
            Some(Limits {
                max_items: 10_000,
                max_bytes: 16 << 20
            })
        );
        let kinds: Vec<_> = nrf
            .rules
            .iter()
            .map(|r| std::mem::discriminant(&r.kind))
            .collect();
        assert_eq!(
            kinds[0],
            std::mem::discriminant(&Kind::Token(TokenEndpoint::default()))
        );
        assert_eq!(nrf.rules[0].path_prefix.as_deref(), Some("/oauth2/token"));
        assert_eq!(nrf.rules[1].method, "*");
        assert_eq!(nrf.rules[2].notify.len(), 1);
        assert_eq!(
            nrf.rules[2].conditions.body[0].0,
            "/nfStatusNotificationUri"
        );
        assert_eq!(nrf.rules[3].reply.status, 400);
        let udm = load(&dir.join("udm/rules.yaml")).unwrap();
        assert!(udm.rules[2].require_token);
    }

    #[test]
    fn nf_rule_errors_name_the_rule() {
        let err = |text: &str| load(write("nf.yaml", text).path()).unwrap_err().0;
        assert!(
            err("rule:\n  - path: /a\n    resource: {}\n    token: {}\n")
                .contains("at most one of resource")
        );
        assert!(
            err("rule:\n  - path: /a\n    resource: { id: nope }\n").contains("not a JSON Pointer")
        );
        assert!(err("rule:\n  - method: GET\n    match: { body: { x: 1 } }\n").contains("rule 1"));
        assert!(
            err("rule:\n  - method: GET\n    match: { query: { a: [1] } }\n").contains("match a")
        );
        assert!(
            err("rule:\n  - path: /a\n    resource: { patch-status: 201 }\n")
                .contains("patch-status")
        );
        assert!(
            err("rule:\n  - method: GET\n    status: 200\n    problem: { status: 404 }\n")
                .contains("own status")
        );
        assert!(err("store: { max-bytes: 2x }\n").contains("max-bytes"));
        // RFC 9110 §6.4.1: a 204 or 304 has no content to give.
        assert!(
            err("rule:\n  - method: GET\n    status: 204\n    text: x\n")
                .contains("rule 1: a 204 has no content (RFC 9110 §6.4.1)")
        );
        // A resource rule fills ${id} itself: a capture of that name would
        // never show; outside resource rules the capture wins.
        assert!(
            err("rule:\n  - method: GET\n  - path: /nf/{id}/subs\n    resource: {}\n").contains(
                "rule 2: path capture {id} clashes with ${id}, which a resource rule fills"
            )
        );
        assert!(
            err("rule:\n  - path: /d/{items}\n    list: { collection: /c }\n")
                .contains("path capture {items}")
        );
        let file = write(
            "id.yaml",
            "rule:\n  - method: PUT\n    path: /nf/{id}\n    text: id=${id}\n",
        );
        assert!(load(file.path()).is_ok());
    }

    /// What a rule asks for that it could never do stops the server at
    /// start with one line naming the rule, numbered from 1 however the
    /// mistake is found.
    #[test]
    fn impossible_rules_are_refused() {
        let err = |text: &str| load(write("bad.yaml", text).path()).unwrap_err().0;
        for (rule, says) in [
            (
                "method: GET\n    problem: { status: 200 }",
                "rule 2: problem status 200: problem details describe errors (RFC 9457 §1)",
            ),
            (
                "method: GET\n    path: /a/{id",
                "rule 2: path /a/{id: a capture is a whole segment",
            ),
            ("method: GET\n    path: /a/x{id}", "rule 2: path /a/x{id}"),
            (
                "method: POST\n    notify: [{ uri: not a uri }]",
                "rule 2: notify uri \"not a uri\" is not an absolute http:// or https:// URI",
            ),
            (
                "path: /a\n    resource: {}\n    text: x",
                "rule 2: a resource rule answers by itself and never uses its body",
            ),
            (
                "token: {}\n    text: x",
                "rule 2: a token rule answers by itself and never uses its body",
            ),
            (
                "path: /a\n    resource: {}\n    status: 201",
                "rule 2: a resource rule answers by itself and never uses its status",
            ),
            ("method: GET\n    bogus: 1", "rule 2: unknown field `bogus`"),
            (
                "method: GET\n    push: [{ path: /x, bogus: 1 }]",
                "rule 2: push 1: unknown field `bogus`",
            ),
            ("path: /a", "rule 2: no method"),
        ] {
            let line = err(&format!("rule:\n  - method: GET\n  - {rule}\n"));
            assert!(line.contains(says), "{rule}: {line}");
            assert!(!line.contains('\n'), "one line: {line}");
        }
        // A notify URI from a template is checked per request.
        let ok = "rule:\n  - method: POST\n    notify: [{ uri: '${body/cb}' }]\n";
        assert!(load(write("ok.yaml", ok).path()).is_ok());
        let toml = write(
            "bad.toml",
            "[[rule]]\nmethod = \"GET\"\n[[rule]]\nmethod = \"GET\"\nbogus = 1\n",
        );
        let line = load(toml.path()).unwrap_err().0;
        assert!(
            line.contains("rule 2 (line 5): unknown field `bogus`"),
            "{line}"
        );
        assert!(!line.contains('\n'), "one line: {line}");
    }

    /// RFC 9110 §15: 100-599; a rule's response is final (§15.2), and
    /// HTTP/2 has no 101 (RFC 9113 §8.6). Text without a placeholder is a
    /// code, checked at start; a template waits for the request.
    #[test]
    fn statuses_are_final() {
        let load_yaml = |status: &str| {
            let text =
                format!("rule:\n  - method: GET\n    path: /a/{{x}}\n    status: {status}\n");
            load(write("st.yaml", &text).path())
        };
        for (status, says) in [
            (
                "999",
                "rule 1: status 999 is not a status code (100-599, RFC 9110 §15)",
            ),
            ("100", "rule 1: status 100 is interim (RFC 9110 §15.2)"),
            ("101", "RFC 9113 §8.6"),
            ("'abc'", "rule 1: status \"abc\" is not a status code"),
            ("'600'", "600 is not a status code"),
            ("'${nope}'", "\"${nope}\" is not a status code"),
        ] {
            let line = load_yaml(status).unwrap_err().0;
            assert!(line.contains(says), "{status}: {line}");
        }
        let rules = load_yaml("'201'").unwrap().rules;
        assert_eq!(
            (rules[0].reply.status, &rules[0].status_template),
            (201, &None)
        );
        let rules = load_yaml("'${query.code}'").unwrap().rules;
        assert_eq!(rules[0].status_template.as_deref(), Some("${query.code}"));
        let push = "rule:\n  - method: GET\n    push: [{ path: /p, status: '202' }]\n";
        let rules = load(write("push.yaml", push).path()).unwrap().rules;
        assert_eq!(
            rules[0].pushes[0].reply.status, 202,
            "a push's written status"
        );
        let push = "rule:\n  - method: GET\n    push: [{ path: /p, status: '103' }]\n";
        let line = load(write("push.yaml", push).path()).unwrap_err().0;
        assert!(line.contains("rule 1: status 103 is interim"), "{line}");
        let rules = load_yaml("'${x}'").unwrap().rules;
        assert_eq!(
            rules[0].status_template.as_deref(),
            Some("${x}"),
            "a capture"
        );
    }
}
