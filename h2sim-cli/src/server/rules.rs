//! Response rules: `-m METHOD [-a AUTHORITY] [-p PATH_PREFIX] [-s STATUS]
//! [-x name=value]… [body] [-o PUSH_PATH …]…`, checked in order, first match
//! wins; no match is 404.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use h2sim_proto::HeaderField;

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
    Template(String),
}

impl Body {
    /// Text bodies with `${` become templates; everything else is fixed.
    pub fn from_text(text: &str) -> Body {
        if text.contains("${") {
            Body::Template(text.to_owned())
        } else {
            Body::Fixed(Bytes::copy_from_slice(text.as_bytes()))
        }
    }

    /// The body for one request.
    pub fn render(&self, path: &str, prefix: &str) -> Bytes {
        match self {
            Body::Empty => Bytes::new(),
            Body::Fixed(bytes) => bytes.clone(),
            Body::Template(text) => Bytes::from(fill(text, path, prefix)),
        }
    }
}

/// Replaces the placeholders of a template; unknown ones stay as written.
fn fill(template: &str, path: &str, prefix: &str) -> String {
    let path_only = path.split('?').next().unwrap_or(path);
    let suffix = path_only.strip_prefix(prefix).unwrap_or(path_only);
    let segments: Vec<&str> = path_only.split('/').filter(|s| !s.is_empty()).collect();
    let mut out = String::with_capacity(template.len() + path.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = &after[..end];
        let value = match name {
            "path" => Some(path_only),
            "suffix" => Some(suffix),
            _ => name
                .strip_prefix("seg")
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| n.checked_sub(1))
                .map(|i| segments.get(i).copied().unwrap_or("")),
        };
        match value {
            Some(v) => out.push_str(v),
            None => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
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

/// Why a `-d` lookup found nothing to serve; every case answers 404.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotServed {
    /// The path leaves the directory (`..`, an absolute part, a symlink out).
    Escapes,
    /// Bad percent-encoding or not UTF-8.
    BadPath,
    /// No such file (or a directory).
    Missing,
}

/// Resolves a request path under `dir` for `-d`, refusing anything that
/// would leave it: `..` (also percent-encoded), absolute components, NUL,
/// and symlinks that point outside.
pub fn resolve_in_dir(dir: &Path, relative: &str) -> Result<PathBuf, NotServed> {
    let relative = relative.split(['?', '#']).next().unwrap_or("");
    let decoded = percent_decode(relative).ok_or(NotServed::BadPath)?;
    if decoded.contains('\0') || decoded.contains('\\') {
        return Err(NotServed::BadPath);
    }
    let mut path = dir.to_path_buf();
    for component in Path::new(decoded.trim_start_matches('/')).components() {
        match component {
            Component::Normal(part) => path.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(NotServed::Escapes);
            }
        }
    }
    let root = dir.canonicalize().map_err(|_| NotServed::Missing)?;
    let real = path.canonicalize().map_err(|_| NotServed::Missing)?;
    if !real.starts_with(&root) {
        return Err(NotServed::Escapes);
    }
    if !real.is_file() {
        return Err(NotServed::Missing);
    }
    Ok(real)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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

    #[test]
    fn directory_serving_never_escapes() {
        let root = std::env::temp_dir().join(format!("h2sim-dir-{}", std::process::id()));
        let inside = root.join("www");
        std::fs::create_dir_all(inside.join("sub")).unwrap();
        std::fs::write(inside.join("sub/a.json"), b"{}").unwrap();
        std::fs::write(root.join("secret"), b"no").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("secret"), inside.join("link")).unwrap();

        assert!(resolve_in_dir(&inside, "/sub/a.json").is_ok());
        assert!(resolve_in_dir(&inside, "/sub/%61.json").is_ok());
        assert_eq!(
            resolve_in_dir(&inside, "/../secret"),
            Err(NotServed::Escapes)
        );
        assert_eq!(
            resolve_in_dir(&inside, "/%2e%2e/secret"),
            Err(NotServed::Escapes)
        );
        assert_eq!(
            resolve_in_dir(&inside, "/sub/%2E%2E/%2E%2E/secret"),
            Err(NotServed::Escapes)
        );
        assert_eq!(resolve_in_dir(&inside, "/%00"), Err(NotServed::BadPath));
        assert_eq!(resolve_in_dir(&inside, "/%zz"), Err(NotServed::BadPath));
        assert_eq!(resolve_in_dir(&inside, "/missing"), Err(NotServed::Missing));
        assert_eq!(resolve_in_dir(&inside, "/sub"), Err(NotServed::Missing));
        #[cfg(unix)]
        assert_eq!(resolve_in_dir(&inside, "/link"), Err(NotServed::Escapes));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
