//! Process settings a simulator outgrows: one open file per connection
//! against a soft limit (often 1024) far below what the hard limit allows,
//! and a heap that glibc shrinks after every busy turn.

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

/// Lets glibc's heap keep freed memory for the next burst. Called first,
/// before any thread starts.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn keep_freed_heap() {
    /// Free memory glibc may keep at the top of its heap instead of giving
    /// it back to the kernel. Its default (128 KiB, raised only when a
    /// block that had its own mapping is freed) is less than one busy turn
    /// frees: with 10 connections of 1,000 streams, each turn's output
    /// (about 1 MiB a connection, in 64 KiB write buffers) was freed as it
    /// left, the heap shrank, and the next turn grew it again a page fault
    /// at a time (107,000 faults per 1,000,000 requests). What is kept is
    /// bounded by this and was in use a moment before.
    const TRIM_THRESHOLD: libc::c_int = 32 << 20;
    /// Blocks from this size up get a mapping of their own. Setting the
    /// trim threshold stops glibc from raising this one as it sees large
    /// blocks freed, which left every block over 128 KiB (a grown read
    /// buffer, a histogram) mapped and unmapped anew each time.
    const MMAP_THRESHOLD: libc::c_int = 4 << 20;
    // SAFETY: `mallopt` sets one parameter of glibc's allocator (under its
    // own lock): valid parameters and values, no pointers involved. A
    // refusal (it returns 0) leaves glibc's default, as before.
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_freed_heap() {}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    #![allow(clippy::unwrap_used)]

    /// The process's resident memory, from `/proc/self/status`.
    fn resident_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// A burst's worth of 64 KiB buffers (as a busy turn's output is
    /// written from), freed together, stays with the process for the next
    /// burst: glibc's default gave it back to the kernel at once (resident
    /// memory fell by the whole 8 MiB), to be faulted in again.
    #[test]
    fn a_freed_burst_stays_in_the_heap() {
        super::keep_freed_heap();
        let burst: Vec<Vec<u8>> = (0..128).map(|_| vec![1u8; 64 * 1024]).collect();
        let before = resident_kib();
        drop(burst);
        let after = resident_kib();
        assert!(
            before.saturating_sub(after) < 1024,
            "freeing 8 MiB gave {} KiB back to the kernel",
            before.saturating_sub(after)
        );
    }
}
