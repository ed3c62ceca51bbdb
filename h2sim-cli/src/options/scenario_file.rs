//! `client --scenario FILE`: a scenario's steps, and the symbols they use,
//! from YAML or TOML (by extension: `.yaml`/`.yml`, `.toml`), with the
//! same meaning as the command line's `-R` and `-m … --expect --capture`.
//!
//! ```yaml
//! replace:
//!   __NF__: "5a7bd676-ceeb-44bb-95e0-%012d"
//! step:
//!   - method: PUT
//!     path: /nnrf-nfm/v1/nf-instances/__NF__
//!     headers: { content-type: application/json }
//!     text: '{"nfInstanceId": "__NF__", "nfType": "AMF", "nfStatus": "REGISTERED"}'
//!     expect: 201
//!     capture: { __LOC__: "header:location" }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use h2sim_proto::HeaderField;
use serde::Deserialize;

use super::{UsageError, usage};
use crate::body;
use crate::client::capture::{Capture, Expect};
use crate::client::scenario::split_uri;
use crate::client::symbol::Symbol;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// `-R SYMBOL=FORMAT`, as a map.
    #[serde(default)]
    replace: BTreeMap<String, String>,
    #[serde(default, alias = "steps")]
    step: Vec<StepSpec>,
}

/// A status to expect: `201`, or a string such as `"200,204"` or `"2xx"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ExpectSpec {
    Code(u16),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepSpec {
    method: String,
    uri: Option<String>,
    path: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    text: Option<String>,
    hex: Option<String>,
    file: Option<PathBuf>,
    size: Option<String>,
    expect: Option<ExpectSpec>,
    /// SYMBOL → SOURCE, as `--capture SYMBOL=SOURCE`.
    #[serde(default)]
    capture: BTreeMap<String, String>,
}

/// One step as the file describes it, checked; its target is completed
/// like a command-line step's.
#[derive(Debug)]
pub struct FileStep {
    pub method: String,
    /// `uri:` as scheme, authority and path.
    pub uri: Option<(String, String, String)>,
    pub path: Option<String>,
    pub headers: Vec<HeaderField>,
    pub body: Option<Bytes>,
    pub captures: Vec<Capture>,
    pub expect: Option<Expect>,
}

/// What a scenario file gives.
#[derive(Debug)]
pub struct Scenario {
    pub symbols: Vec<Symbol>,
    pub steps: Vec<FileStep>,
}

/// Reads `path`; relative `file` bodies are taken from its folder.
pub fn load(path: &Path) -> Result<Scenario, UsageError> {
    let name = path.display();
    let text =
        std::fs::read_to_string(path).map_err(|e| usage(format!("--scenario {name}: {e}")))?;
    let file: File = match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => {
            toml::from_str(&text).map_err(|e| usage(format!("--scenario {name}: {e}")))?
        }
        Some("yaml" | "yml") => {
            serde_norway::from_str(&text).map_err(|e| usage(format!("--scenario {name}: {e}")))?
        }
        _ => {
            return Err(usage(format!(
                "--scenario {name}: use a .yaml, .yml or .toml file"
            )));
        }
    };
    if file.step.is_empty() {
        return Err(usage(format!("--scenario {name}: no step")));
    }
    let symbols = file
        .replace
        .iter()
        .map(|(symbol, format)| {
            Symbol::parse(&format!("{symbol}={format}"))
                .map_err(|e| usage(format!("--scenario {name}: replace: {e}")))
        })
        .collect::<Result<_, _>>()?;
    let base = path.parent().unwrap_or(Path::new("."));
    let steps = file
        .step
        .into_iter()
        .enumerate()
        .map(|(i, spec)| {
            step(spec, base).map_err(|e| usage(format!("--scenario {name}: step {}: {e}", i + 1)))
        })
        .collect::<Result<_, _>>()?;
    Ok(Scenario { symbols, steps })
}

fn step(spec: StepSpec, base: &Path) -> Result<FileStep, String> {
    let bodies = [
        spec.text.is_some(),
        spec.hex.is_some(),
        spec.file.is_some(),
        spec.size.is_some(),
    ];
    if bodies.iter().filter(|&&b| b).count() > 1 {
        return Err("give at most one of text, hex, file, size".into());
    }
    if spec.uri.is_some() == spec.path.is_some() {
        return Err("give uri or path".into());
    }
    // Checked here, where the file's step can be named, with the file's
    // words (`method`, `path`), not the command line's.
    super::client::check_method(&spec.method)
        .map_err(|why| format!("method {:?}: {why}", spec.method))?;
    if let Some(path) = &spec.path {
        super::client::check_path(path).map_err(|why| format!("path {path:?}: {why}"))?;
    }
    let uri = spec
        .uri
        .as_deref()
        .map(split_uri)
        .transpose()
        .map_err(|e| format!("uri {e}"))?;
    let body = if let Some(text) = &spec.text {
        Some(body::text(text))
    } else if let Some(hex) = &spec.hex {
        Some(body::hex(hex).map_err(|e| e.to_string())?)
    } else if let Some(file) = &spec.file {
        Some(body::file(&base.join(file)).map_err(|e| e.to_string())?)
    } else if let Some(size) = &spec.size {
        Some(body::sized(size).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let headers = spec
        .headers
        .iter()
        .map(|(n, v)| super::header(&format!("{n}={v}")).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let captures = spec
        .capture
        .iter()
        .map(|(symbol, source)| Capture::new(symbol, source).map_err(|e| format!("capture {e}")))
        .collect::<Result<_, _>>()?;
    let expect = match spec.expect {
        None => None,
        Some(ExpectSpec::Code(code)) => Some(Expect::parse(&code.to_string())?),
        Some(ExpectSpec::Text(text)) => Some(Expect::parse(&text)?),
    };
    Ok(FileStep {
        method: spec.method,
        uri,
        path: spec.path,
        headers,
        body,
        captures,
        expect,
    })
}
