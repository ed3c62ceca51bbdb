//! Reports out: printed, and written as JSON when asked.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::options::client::ClientArgs;
use crate::options::{UsageError, usage};
use crate::report::Report;
use crate::trace::errln;

/// Writes `--json`, then prints the report; the exit code says whether
/// every request succeeded. The file comes first: a standard output that
/// fails (`| head -1`) must not cost it. With `--json -` the JSON is the
/// standard output, and the text report goes to standard error.
pub fn print_client_report(args: &ClientArgs, report: &Report) -> Result<ExitCode, UsageError> {
    print_report(args.json.as_deref(), report).map_err(usage)?;
    Ok(if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The text report, and the JSON one where `json` says (see
/// [`print_client_report`]); for a client run and a merge alike.
pub fn print_report(json: Option<&Path>, report: &Report) -> Result<(), String> {
    let text = report.render();
    match json {
        Some(path) if is_stdout(path) => {
            errln!("{}", text.trim_end());
            write_json(path, report)
        }
        Some(path) => {
            write_json(path, report)?;
            crate::trace::print(&text);
            Ok(())
        }
        None => {
            crate::trace::print(&text);
            Ok(())
        }
    }
}

/// `--json -`: standard output, as the convention goes.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Writes the report as JSON. A regular file (new, or found at `path` or
/// at the end of its symlink) is written beside its place and renamed into
/// it, so an interrupted run never leaves a half-written file, and keeps
/// the mode and owner it had. Anything else (`/dev/null`, a FIFO) is
/// written in place: a rename would have put a file where the device was.
pub fn write_json(path: &Path, report: &Report) -> Result<(), String> {
    let text = format!("{:#}\n", crate::report::to_json(report));
    if is_stdout(path) {
        crate::trace::print_json(&text);
        return Ok(());
    }
    let fail = |e: std::io::Error| format!("--json {}: {e}", path.display());
    let target = destination(path);
    let existing = match std::fs::metadata(&target) {
        Ok(meta) if !meta.is_file() => return std::fs::write(&target, text).map_err(fail),
        Ok(meta) => Some(meta),
        // A link to nothing yet: written through, which makes its target.
        Err(_) if target.is_symlink() => return std::fs::write(&target, text).map_err(fail),
        Err(_) => None,
    };
    let temporary = beside(&target);
    let written = std::fs::write(&temporary, text).and_then(|()| {
        if let Some(meta) = &existing {
            keep_mode_and_owner(&temporary, meta)?;
        }
        std::fs::rename(&temporary, &target)
    });
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        fail(e)
    })
}

/// The mode, and where allowed the owner, of the file a report replaces:
/// a report kept private stays private.
fn keep_mode_and_owner(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    std::fs::set_permissions(path, meta.permissions())?;
    // Only root may give a file away; anyone else keeps their own.
    let _ = std::os::unix::fs::chown(path, Some(meta.uid()), Some(meta.gid()));
    Ok(())
}

/// Where `path`'s file is: the end of its symlinks (a link to the latest
/// run stays a link), else `path` itself.
fn destination(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Checks before a run that [`write_json`] will be able to write `path`:
/// creates and removes the file it writes first, so that a directory that
/// does not exist or cannot be written is told at once, not after a run
/// whose report would then be lost. A path that is not a regular file
/// (`/dev/null`, a FIFO) is written in place, and opening it here could
/// block (a FIFO waits for its reader): it is taken as it is.
pub fn check_json(path: &Path) -> Result<(), String> {
    let fail = |why: String| format!("--json {}: {why}", path.display());
    if is_stdout(path) {
        return Ok(());
    }
    let target = destination(path);
    if target.is_dir() {
        return Err(fail("is a directory".into()));
    }
    if target.exists() && !target.is_file() {
        return Ok(());
    }
    let temporary = beside(&target);
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

    /// `--json` at something that is not a regular file is written in
    /// place: a FIFO stays a FIFO and its reader gets the report, a symlink
    /// stays a link and its target gets it, and a file replaced keeps its
    /// mode. The rename put a plain file where each had been (as root, it
    /// replaced `/dev/null`), and a private report came back as 0644.
    #[test]
    fn a_json_path_keeps_what_it_is() {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let report = Report::default();

        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        assert_eq!(check_json(&fifo), Ok(()));
        write_json(&fifo, &report).unwrap();
        assert!(reader.join().unwrap().contains("\"requests\""));
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());

        let target = dir.path().join("runs-1.json");
        std::fs::write(&target, "{}").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("latest.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(check_json(&link), Ok(()));
        write_json(&link, &report).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert!(
            std::fs::read_to_string(&target)
                .unwrap()
                .contains("\"requests\"")
        );
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // No temporary file is left beside either.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

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
