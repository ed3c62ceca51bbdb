//! Scratch directories for the unit tests.

/// A directory of its own under the system's temporary directory
/// (`h2sim-NAME-…`), removed with what is in it when the guard is dropped,
/// a failing test's too. Tests take relative paths from it, never from the
/// process's working directory, so tests running at the same time do not
/// see each other's files.
pub(crate) fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("h2sim-{name}-"))
        .tempdir()
        .expect("create a scratch directory")
}
