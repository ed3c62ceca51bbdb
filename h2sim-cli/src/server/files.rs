//! Where `-d DIR` rules get the files they serve. The server application
//! is given a [`Files`] (in [`Shared`](super::app::Shared)), so it never
//! touches the file system itself: the binary reads the disk through
//! [`Disk`], the tests serve from memory.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use bytes::Bytes;

/// The files `-d` rules serve.
///
/// What it costs: the application calls `read` while it handles the
/// request, on the connection's event loop, and answers in the same turn.
/// [`Disk`] reads synchronously (a few `stat`s to resolve the path, then
/// the whole file, unless a response still being sent holds it already),
/// so while it reads no other connection on that thread moves: one tokio
/// worker thread, or on glommio the whole executor of that core. From the
/// page cache that is microseconds per small file; from a cold disk, or a
/// network file system, each read stalls that thread for the device's
/// latency. Serve large or cold trees with a real web server; `-d` is for
/// the handful of JSON bodies a test needs (they stay cached). Reading off
/// the loop, or a file in pieces as the client's window lets them out,
/// would need an answer that completes later, which the application
/// contract (events in, commands out, one deadline) has no wake-up for.
pub trait Files: Send + Sync {
    /// The file `relative` (the request path after the rule's prefix,
    /// still percent-encoded, maybe with a query) names under `dir`, or
    /// why there is none to serve.
    fn read(&self, dir: &Path, relative: &str) -> Result<Bytes, NotServed>;

    /// The size of the file `read` would give, without its content: what
    /// a HEAD needs (its `content-length`), which need not cost a read of
    /// the whole file.
    fn size(&self, dir: &Path, relative: &str) -> Result<u64, NotServed>;
}

/// The real file system, with the path confined to the directory
/// ([`resolve_in_dir`]).
///
/// A file being sent is shared: a request for it while some response
/// still holds its content (a slow client of a large file) gets that
/// content, not a copy of its own, as long as the file is unchanged (the
/// same length and modification time). Each copy was the whole file, held
/// until its response was sent: three clients that stopped reading a
/// 200 MiB file held 600 MiB. Nothing is kept once no response holds it,
/// so a file served one request at a time is read each time, as before,
/// and a changed file is read again.
#[derive(Debug, Default)]
pub struct Disk {
    sharing: Mutex<Sharing>,
}

/// The contents responses hold, by the file's resolved path.
#[derive(Debug, Default)]
struct Sharing {
    files: HashMap<PathBuf, Held>,
    /// The size past which the entries no response holds any more are
    /// swept out: twice the entries left by the last sweep, so sweeping
    /// costs a constant share of the insertions.
    sweep_at: usize,
}

/// A file's content, for as long as some response holds it.
#[derive(Debug)]
struct Held {
    len: u64,
    modified: Option<SystemTime>,
    content: Weak<Vec<u8>>,
}

/// What a response's `Bytes` keeps alive: the one shared copy.
struct Content(Arc<Vec<u8>>);

impl AsRef<[u8]> for Content {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Sharing {
    /// The content held for `path` if it is still that of a file of `len`
    /// bytes modified at `modified`.
    fn get(&self, path: &Path, len: u64, modified: Option<SystemTime>) -> Option<Arc<Vec<u8>>> {
        self.files
            .get(path)
            .filter(|held| held.len == len && held.modified == modified)
            .and_then(|held| held.content.upgrade())
    }

    fn insert(
        &mut self,
        path: PathBuf,
        len: u64,
        modified: Option<SystemTime>,
        content: &Arc<Vec<u8>>,
    ) {
        if self.files.len() >= self.sweep_at {
            self.files.retain(|_, held| held.content.strong_count() > 0);
            self.sweep_at = (2 * self.files.len()).max(64);
        }
        let content = Arc::downgrade(content);
        self.files.insert(
            path,
            Held {
                len,
                modified,
                content,
            },
        );
    }
}

impl Disk {
    /// The content of the file at `path` (resolved), shared with the
    /// responses that hold it already. Its length and modification time
    /// come from the descriptor it is read from, so they are that
    /// content's.
    fn content(&self, path: PathBuf) -> Result<Arc<Vec<u8>>, NotServed> {
        let mut file = File::open(&path).map_err(|_| NotServed::Unreadable)?;
        let meta = file.metadata().map_err(|_| NotServed::Unreadable)?;
        let (len, modified) = (meta.len(), meta.modified().ok());
        if let Some(content) = self.sharing().get(&path, len, modified) {
            return Ok(content);
        }
        // Read without the lock: a large file would hold up every other
        // thread's request for a file. Two first requests at once read
        // it twice, and the later takes the earlier's copy.
        // Reserved fallibly: the size is the file's, which a request picks,
        // and an allocation that fails must not abort the server.
        let mut bytes = Vec::new();
        let size = usize::try_from(len).map_err(|_| NotServed::Unreadable)?;
        bytes
            .try_reserve_exact(size)
            .map_err(|_| NotServed::Unreadable)?;
        file.read_to_end(&mut bytes)
            .map_err(|_| NotServed::Unreadable)?;
        let mut sharing = self.sharing();
        if let Some(content) = sharing.get(&path, len, modified) {
            return Ok(content);
        }
        let content = Arc::new(bytes);
        sharing.insert(path, len, modified, &content);
        Ok(content)
    }

    /// The table, even if a thread panicked holding it: it holds only
    /// weak references, which stay valid.
    fn sharing(&self) -> std::sync::MutexGuard<'_, Sharing> {
        self.sharing.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Files for Disk {
    fn read(&self, dir: &Path, relative: &str) -> Result<Bytes, NotServed> {
        let path = resolve_in_dir(dir, relative)?;
        Ok(Bytes::from_owner(Content(self.content(path)?)))
    }

    /// Opened, as `read` opens it, so that a file GET cannot read is not
    /// found for HEAD either; its size is the descriptor's.
    fn size(&self, dir: &Path, relative: &str) -> Result<u64, NotServed> {
        let path = resolve_in_dir(dir, relative)?;
        let file = File::open(path).map_err(|_| NotServed::Unreadable)?;
        file.metadata()
            .map(|meta| meta.len())
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
        let disk = Disk::default();
        assert_eq!(
            disk.read(root, "/a.json?x=1"),
            Ok(Bytes::from_static(b"{}"))
        );
        assert_eq!(disk.size(root, "/a.json"), Ok(2));
        assert_eq!(disk.read(root, "/b.json"), Err(NotServed::Missing));
        assert_eq!(disk.size(root, "/b.json"), Err(NotServed::Missing));
        assert_eq!(disk.read(root, "/../a.json"), Err(NotServed::Escapes));
        assert_eq!(disk.size(root, "/../a.json"), Err(NotServed::Escapes));
        scratch.close().unwrap();
    }

    /// Requests for a file while a response still holds it share its one
    /// copy; once none holds it nothing is kept, and a changed file is
    /// read again, not served from the copy of its old content.
    #[test]
    fn a_file_being_sent_is_shared() {
        let scratch = crate::scratch::scratch("share");
        let root = scratch.path();
        let file = root.join("big.bin");
        std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
        let disk = Disk::default();
        let first = disk.read(root, "/big.bin").unwrap();
        let second = disk.read(root, "/big.bin").unwrap();
        assert_eq!(first.as_ptr(), second.as_ptr());
        assert_eq!(second.len(), 1 << 20);
        // A slice of a response (a DATA frame's) keeps the copy too.
        let tail = first.slice(1000..);
        drop((first, second));
        assert_eq!(
            disk.read(root, "/big.bin").unwrap().as_ptr(),
            tail.as_ptr().wrapping_sub(1000)
        );
        drop(tail);
        let real = file.canonicalize().unwrap();
        let held = |disk: &Disk| disk.sharing().files[&real].content.strong_count();
        assert_eq!(held(&disk), 0);
        let old = disk.read(root, "/big.bin").unwrap();
        std::fs::write(&file, b"new").unwrap();
        assert_eq!(
            disk.read(root, "/big.bin").unwrap(),
            Bytes::from_static(b"new")
        );
        assert_eq!(old.len(), 1 << 20);
        drop(old);
        assert_eq!(held(&disk), 0);
        scratch.close().unwrap();
    }

    /// Paths no response holds any more are swept out as others come, so
    /// the table stays within a constant factor of what is held.
    #[test]
    fn the_table_forgets_what_no_response_holds() {
        let scratch = crate::scratch::scratch("sweep");
        let root = scratch.path();
        let disk = Disk::default();
        for i in 0..1000 {
            std::fs::write(root.join(format!("{i}.json")), b"{}").unwrap();
            disk.read(root, &format!("/{i}.json")).unwrap();
        }
        assert!(
            disk.sharing().files.len() <= 64,
            "{}",
            disk.sharing().files.len()
        );
        scratch.close().unwrap();
    }
}
