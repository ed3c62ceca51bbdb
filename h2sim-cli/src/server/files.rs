//! Where `-d DIR` rules get the files they serve. The server application
//! is given a [`Files`] (in [`Shared`](super::app::Shared)), so it never
//! touches the file system itself: the binary reads the disk through
//! [`Disk`], the tests serve from memory.

use std::path::{Component, Path, PathBuf};

use bytes::Bytes;

/// The files `-d` rules serve.
///
/// What it costs: the application calls `read` while it handles the
/// request, on the connection's event loop, and answers in the same turn.
/// [`Disk`] reads synchronously (a few `stat`s to resolve the path, then
/// the whole file), so while it reads no other connection on that thread
/// moves: one tokio worker thread, or on glommio the whole executor of
/// that core. From the page cache that is microseconds per file; from a
/// cold disk, or a network file system, each read stalls that thread for
/// the device's latency. Serve large or cold trees with a real web server;
/// `-d` is for the handful of JSON bodies a test needs (they stay cached).
/// Reading off the loop would need an answer that completes later, which
/// the application contract (events in, commands out, one deadline) has
/// no wake-up for.
pub trait Files: Send + Sync {
    /// The file `relative` (the request path after the rule's prefix,
    /// still percent-encoded, maybe with a query) names under `dir`, or
    /// why there is none to serve.
    fn read(&self, dir: &Path, relative: &str) -> Result<Bytes, NotServed>;
}

/// The real file system, with the path confined to the directory
/// ([`resolve_in_dir`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl Files for Disk {
    fn read(&self, dir: &Path, relative: &str) -> Result<Bytes, NotServed> {
        let path = resolve_in_dir(dir, relative)?;
        std::fs::read(path)
            .map(Bytes::from)
            .map_err(|_| NotServed::Unreadable)
    }
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
    /// The file is there but reading it failed (permissions, I/O).
    Unreadable,
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

    #[test]
    fn directory_serving_never_escapes() {
        let scratch = crate::scratch::scratch("dir");
        let root = scratch.path();
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
        scratch.close().unwrap();
    }

    #[test]
    fn disk_reads_the_resolved_file() {
        let scratch = crate::scratch::scratch("disk");
        let root = scratch.path();
        std::fs::write(root.join("a.json"), b"{}").unwrap();
        assert_eq!(
            Disk.read(root, "/a.json?x=1"),
            Ok(Bytes::from_static(b"{}"))
        );
        assert_eq!(Disk.read(root, "/b.json"), Err(NotServed::Missing));
        assert_eq!(Disk.read(root, "/../a.json"), Err(NotServed::Escapes));
        scratch.close().unwrap();
    }
}
