//! `h2sim merge`: one report from several JSON reports.

use std::process::ExitCode;

use crate::report::Report;
use crate::setup::output::write_json;

/// `h2sim merge FILE... [--json OUT]`: one report from several JSON reports,
/// printed, and written as JSON when asked (so merged runs merge again).
pub fn run(files: &[String], json: Option<&std::path::Path>) -> ExitCode {
    if files.is_empty() {
        eprintln!("h2sim: merge needs at least one report file (h2sim client --json FILE)");
        return ExitCode::from(2);
    }
    let mut total: Option<Report> = None;
    for file in files {
        let parsed = std::fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                serde_json::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
            })
            .and_then(|json| {
                crate::report::from_json(&json).ok_or_else(|| "not an h2sim report".to_owned())
            });
        let report = match parsed {
            Ok(report) => report,
            Err(e) => {
                eprintln!("h2sim: {file}: {e}");
                return ExitCode::from(2);
            }
        };
        let expected = report.total;
        match &mut total {
            Some(t) => {
                t.merge(&report);
                t.total = t.total.zip(expected).map(|(a, b)| a + b);
            }
            None => total = Some(report),
        }
    }
    let Some(report) = total else {
        return ExitCode::from(2);
    };
    print!("{}", report.render());
    if let Some(path) = json
        && let Err(e) = write_json(path, &report)
    {
        eprintln!("h2sim: merge {e}");
        return ExitCode::from(2);
    }
    if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
