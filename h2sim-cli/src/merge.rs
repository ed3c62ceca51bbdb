//! `h2sim merge`: one report from several JSON reports.
//!
//! Only reports of the same scenario add up: steps are merged by position,
//! so reports whose steps differ are refused rather than summed under the
//! first one's names, and a file given twice is refused rather than counted
//! twice. Reports of different protocols do add up (one scenario over h2c
//! and over HTTP/1.1), and the merged report names them all.

use std::fmt;
use std::path::Path;
use std::process::ExitCode;

use crate::report::Report;
use crate::setup::output::{check_json, print_report};
use crate::trace::errln;

/// Why the reports were not merged.
#[derive(Debug, PartialEq, Eq)]
enum MergeError {
    /// No report file was given.
    Nothing,
    /// A file that cannot be read, or is not an h2sim report.
    Unreadable { file: String, why: String },
    /// The same file, given twice (under whatever names).
    Twice { file: String, again: String },
    /// Two reports of different scenarios: their steps, as `METHOD path`.
    Steps {
        first: String,
        first_steps: Vec<String>,
        file: String,
        steps: Vec<String>,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::Nothing => {
                write!(
                    f,
                    "merge needs at least one report file (h2sim client --json FILE)"
                )
            }
            MergeError::Unreadable { file, why } => write!(f, "{file}: {why}"),
            MergeError::Twice { file, again } if file == again => {
                write!(f, "merge: {file} is given twice")
            }
            MergeError::Twice { file, again } => {
                write!(f, "merge: {file} and {again} are the same file")
            }
            MergeError::Steps {
                first,
                first_steps,
                file,
                steps,
            } => write!(
                f,
                "merge: {first} and {file} are reports of different steps ({} against {})",
                listed(first_steps),
                listed(steps)
            ),
        }
    }
}

/// Steps as the message shows them: `1 POST /user/, 2 GET /user/`.
fn listed(steps: &[String]) -> String {
    if steps.is_empty() {
        return "one step, not detailed".to_owned();
    }
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{} {s}", i + 1))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `h2sim merge FILE... [--json OUT]`: one report from several JSON reports,
/// printed, and written as JSON when asked (so merged runs merge again).
pub fn run(files: &[String], json: Option<&Path>) -> ExitCode {
    if let Some(path) = json
        && let Err(e) = check_json(path)
    {
        errln!("h2sim: merge {e}");
        return ExitCode::from(2);
    }
    let report = match read_all(files).and_then(|reports| {
        if let Some(note) = tls_differs(&reports) {
            errln!("h2sim: merge: {note}");
        }
        merge(&reports)
    }) {
        Ok(report) => report,
        Err(e) => {
            errln!("h2sim: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = print_report(json, &report) {
        errln!("h2sim: merge {e}");
        return ExitCode::from(2);
    }
    if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Every file's report, with its name; a file named twice is refused.
fn read_all(files: &[String]) -> Result<Vec<(String, Report)>, MergeError> {
    let mut seen: Vec<(std::path::PathBuf, &String)> = Vec::new();
    let mut reports = Vec::new();
    for file in files {
        let unreadable = |why: String| MergeError::Unreadable {
            file: file.clone(),
            why,
        };
        let path = std::fs::canonicalize(file).map_err(|e| unreadable(e.to_string()))?;
        if let Some((_, earlier)) = seen.iter().find(|(p, _)| *p == path) {
            return Err(MergeError::Twice {
                file: (*earlier).clone(),
                again: file.clone(),
            });
        }
        seen.push((path, file));
        let report = std::fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                serde_json::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
            })
            .and_then(|json| {
                crate::report::from_json(&json).map_err(|e| format!("not an h2sim report: {e}"))
            })
            .map_err(unreadable)?;
        reports.push((file.clone(), report));
    }
    Ok(reports)
}

/// Why the merged report has no TLS lines, when its parts did not all
/// agree on one TLS: each part's TLS protocol (or none), in order.
fn tls_differs(reports: &[(String, Report)]) -> Option<String> {
    let (_, head) = reports.first()?;
    if reports.iter().all(|(_, r)| r.tls == head.tls) {
        return None;
    }
    let parts: Vec<String> = reports
        .iter()
        .map(|(file, r)| match &r.tls {
            Some(tls) => format!("{file} {}", tls.protocol),
            None => format!("{file} no TLS"),
        })
        .collect();
    Some(format!(
        "the TLS lines are left out, as the reports differ: {}",
        parts.join(", ")
    ))
}

/// The reports added up, if they are of one scenario; the protocol line
/// names every protocol they used, in the order first seen.
fn merge(reports: &[(String, Report)]) -> Result<Report, MergeError> {
    let ((first, head), rest) = reports.split_first().ok_or(MergeError::Nothing)?;
    let mut total = head.clone();
    let mut protocols: Vec<&str> = Vec::new();
    for (_, report) in reports {
        // A merged report's line (`h2c, http/1.1`) merges again.
        for protocol in report.protocol.iter().flat_map(|p| p.split(", ")) {
            if !protocols.contains(&protocol) {
                protocols.push(protocol);
            }
        }
    }
    let labels = |r: &Report| r.steps.iter().map(|s| s.label.clone()).collect::<Vec<_>>();
    let first_steps = labels(head);
    for (file, report) in rest {
        let steps = labels(report);
        if steps != first_steps {
            return Err(MergeError::Steps {
                first: first.clone(),
                first_steps,
                file: file.clone(),
                steps,
            });
        }
        total.merge(report);
    }
    total.protocol = (!protocols.is_empty()).then(|| protocols.join(", "));
    // The TLS lines are the first TLS part's: said of a mix of parts (h2
    // and h2c), they read as if every part had used that TLS.
    if tls_differs(reports).is_some() {
        total.tls = None;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::StepStats;

    fn report(protocol: &str, steps: &[&str]) -> Report {
        Report {
            protocol: Some(protocol.to_owned()),
            started: 10,
            steps: steps
                .iter()
                .map(|label| StepStats {
                    label: (*label).to_owned(),
                    ..StepStats::default()
                })
                .collect(),
            show_steps: !steps.is_empty(),
            ..Report::default()
        }
    }

    fn named(reports: &[(&str, Report)]) -> Vec<(String, Report)> {
        reports
            .iter()
            .map(|(n, r)| ((*n).to_owned(), r.clone()))
            .collect()
    }

    #[test]
    fn reports_of_different_steps_are_refused() {
        let a = report("h2c", &["POST /user/", "GET /user/"]);
        let b = report("h2c", &["GET /user/", "DELETE /user/"]);
        let error = merge(&named(&[("a.json", a.clone()), ("b.json", b)])).unwrap_err();
        let line = error.to_string();
        assert!(
            line.contains("a.json and b.json")
                && line
                    .contains("1 POST /user/, 2 GET /user/ against 1 GET /user/, 2 DELETE /user/"),
            "{line}"
        );
        let single = report("h2c", &[]);
        assert!(matches!(
            merge(&named(&[("a.json", a.clone()), ("s.json", single)])),
            Err(MergeError::Steps { .. })
        ));
        let merged = merge(&named(&[("a.json", a.clone()), ("c.json", a)])).unwrap();
        assert_eq!(merged.started, 20);
    }

    #[test]
    fn a_mix_of_protocols_is_named() {
        let reports = named(&[
            ("a.json", report("h2c", &[])),
            ("b.json", report("http/1.1", &[])),
            ("c.json", report("h2c", &[])),
        ]);
        let merged = merge(&reports).unwrap();
        assert_eq!(merged.protocol.as_deref(), Some("h2c, http/1.1"));
        let again = named(&[("m.json", merged), ("d.json", report("h2", &[]))]);
        assert_eq!(
            merge(&again).unwrap().protocol.as_deref(),
            Some("h2c, http/1.1, h2")
        );
    }

    /// A TLS part and an h2c part: the merged text has no TLS lines (they
    /// read as if every part used TLS), and says why; parts that agree
    /// keep theirs.
    #[test]
    fn tls_lines_are_of_parts_that_all_used_it() {
        let tls = crate::report::Tls {
            protocol: "TLSv1.3".into(),
            cipher: "TLS_AES_128_GCM_SHA256".into(),
            server_temp_key: "X25519 253 bits".into(),
        };
        let mut over_tls = report("h2", &[]);
        over_tls.tls = Some(tls);
        let mixed = named(&[("t.json", over_tls.clone()), ("c.json", report("h2c", &[]))]);
        let merged = merge(&mixed).unwrap();
        let text = merged.render();
        assert!(!text.contains("TLS Protocol:"), "{text}");
        assert!(text.contains("Application protocol: h2, h2c"), "{text}");
        assert_eq!(
            tls_differs(&mixed).unwrap(),
            "the TLS lines are left out, as the reports differ: t.json TLSv1.3, c.json no TLS"
        );
        let both = named(&[("t.json", over_tls.clone()), ("u.json", over_tls)]);
        assert!(tls_differs(&both).is_none());
        assert!(
            merge(&both)
                .unwrap()
                .render()
                .starts_with("TLS Protocol: TLSv1.3\n")
        );
    }

    #[test]
    fn a_file_given_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.json");
        crate::setup::output::write_json(&path, &report("h2c", &[])).unwrap();
        let name = path.display().to_string();
        let same = dir.path().join(".").join("e.json").display().to_string();
        assert_eq!(
            read_all(&[name.clone(), name.clone()])
                .unwrap_err()
                .to_string(),
            format!("merge: {name} is given twice")
        );
        assert_eq!(
            read_all(&[name.clone(), same.clone()]).unwrap_err(),
            MergeError::Twice {
                file: name,
                again: same
            }
        );
        assert_eq!(merge(&[]).unwrap_err(), MergeError::Nothing);
    }
}
