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

use serde::Deserialize;

use super::{UsageError, usage};
use crate::body;
use crate::server::rules::{Body, Delay, Push, Reply, Rule};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    rule: Vec<RuleSpec>,
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
    status: Option<u16>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    text: Option<String>,
    hex: Option<String>,
    file: Option<PathBuf>,
    size: Option<String>,
    #[serde(default)]
    push: Vec<RuleSpec>,
}

impl RuleSpec {
    fn reply(&mut self, at: &str, base: &Path) -> Result<Reply, UsageError> {
        let sources = [
            self.text.is_some(),
            self.hex.is_some(),
            self.file.is_some(),
            self.size.is_some(),
        ];
        if sources.iter().filter(|&&s| s).count() > 1 {
            return Err(usage(format!(
                "{at}: give at most one of text, hex, file, size"
            )));
        }
        let body = if let Some(text) = self.text.take() {
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
        let status = self.status.unwrap_or(200);
        if !(100..=999).contains(&status) {
            return Err(usage(format!("{at}: status {status} is not a status code")));
        }
        let mut headers = Vec::new();
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
pub fn load(path: &Path) -> Result<Vec<Rule>, UsageError> {
    let name = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| usage(format!("--rules {name}: {e}")))?;
    let file: File = match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => toml::from_str(&text).map_err(|e| usage(format!("--rules {name}: {e}")))?,
        Some("yaml" | "yml") => {
            serde_norway::from_str(&text).map_err(|e| usage(format!("--rules {name}: {e}")))?
        }
        _ => {
            return Err(usage(format!(
                "--rules {name}: use a .toml, .yaml or .yml file"
            )));
        }
    };
    let base = path.parent().unwrap_or(Path::new("."));
    file.rule
        .into_iter()
        .enumerate()
        .map(|(i, mut spec)| {
            let at = format!("--rules {name}: rule {}", i + 1);
            let method = spec
                .method
                .take()
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
                    if p.method.is_some()
                        || p.authority.is_some()
                        || p.delay.is_some()
                        || p.dir.is_some()
                        || !p.push.is_empty()
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
            Ok(Rule {
                method,
                authority: spec.authority.take(),
                path_prefix: spec.path.take(),
                dir: spec.dir.take().map(|d| base.join(d)),
                reply: spec.reply(&at, base)?,
                pushes,
                delay,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("h2sim-rules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
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
        let a = load(&toml).unwrap();
        let b = load(&yaml).unwrap();
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
        assert!(load(&bad).unwrap_err().0.contains("rule 1"));
        let unknown = write("unknown.toml", "[[rule]]\nmethod = \"GET\"\nbogus = 1\n");
        assert!(load(&unknown).unwrap_err().0.contains("bogus"));
        assert!(
            load(Path::new("/nope/rules.toml"))
                .unwrap_err()
                .0
                .contains("/nope/rules.toml")
        );
        let ext = write("rules.txt", "");
        assert!(load(&ext).unwrap_err().0.contains(".toml"));
    }
}
