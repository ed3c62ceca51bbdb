//! Reports out: printed, and written as JSON when asked.

use std::path::{Path, PathBuf};
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
pub fn write_json(path: &Path, report: &Report) -> Result<(), String> {
    let json = crate::report::to_json(report);
    let temporary = beside(path);
    std::fs::write(&temporary, format!("{json:#}\n"))
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            format!("--json {}: {e}", path.display())
        })
}

/// Checks before a run that [`write_json`] will be able to write `path`:
/// creates and removes the file it writes first, so that a directory that
/// does not exist or cannot be written is told at once, not after a run
/// whose report would then be lost.
pub fn check_json(path: &Path) -> Result<(), String> {
    let fail = |why: String| format!("--json {}: {why}", path.display());
    if path.is_dir() {
        return Err(fail("is a directory".into()));
    }
    let temporary = beside(path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .map_err(|e| fail(e.to_string()))?;
    std::fs::remove_file(&temporary).map_err(|e| fail(e.to_string()))
}

/// The temporary file a report is written to before it takes `path`'s name.
fn beside(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_path_is_checked_without_leaving_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        assert_eq!(check_json(&path), Ok(()));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let missing = dir.path().join("no/such/r.json");
        let error = check_json(&missing).unwrap_err();
        assert!(
            error.starts_with("--json ") && error.contains("no/such/r.json"),
            "{error}"
        );
        assert!(
            check_json(dir.path())
                .unwrap_err()
                .ends_with("is a directory")
        );
    }
}
