//! Process limits a simulator outgrows: one open file per connection, and
//! a soft limit (often 1024) far below what the hard limit allows.

/// Raises the soft open-file limit to the hard one, so a server holding
/// 10,000 connections (or a client opening them) does not fail at the
/// soft limit with EMFILE. Best effort: a limit that cannot be raised
/// stays, and accepting then fails as it would have.
#[cfg(unix)]
pub fn raise_open_files() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            },
        );
    }
}

#[cfg(not(unix))]
pub fn raise_open_files() {}
