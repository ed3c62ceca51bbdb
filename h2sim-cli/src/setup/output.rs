//! Reports out: printed, and written as JSON when asked.

use std::process::ExitCode;

use crate::options::client::ClientArgs;
use crate::options::{UsageError, usage};
use crate::report::Report;

/// Prints the report (and writes `--json`); the exit code says whether
/// every request succeeded.
pub fn print_client_report(args: &ClientArgs, report: &Report) -> Result<ExitCode, UsageError> {
    print!("{}", report.render());
    if let Some(path) = &args.json {
        write_json(path, report).map_err(usage)?;
    }
    Ok(if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Writes the report as JSON beside `path`, then renames it into place, so
/// an interrupted run never leaves a half-written file.
pub fn write_json(path: &std::path::Path, report: &Report) -> Result<(), String> {
    let json = crate::report::to_json(report);
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(name);
    std::fs::write(&temporary, format!("{json:#}\n"))
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            format!("--json {}: {e}", path.display())
        })
}
