//! Process settings a simulator outgrows: one open file per connection
//! against a soft limit (often 1024) far below what the hard limit allows,
//! a heap that glibc shrinks after every busy turn, and glibc's copies on
//! AMD processors.

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

/// The glibc tunable below which glibc's `memcpy` copies with vector
/// loops, and from which it uses `rep movsb`.
#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
const REP_MOVSB_THRESHOLD: &str = "glibc.cpu.x86_rep_movsb_threshold";

/// On AMD processors, starts this program again (the same process, by
/// `exec`) with glibc's `rep movsb` copies turned off, unless glibc already
/// avoids them or the user set the tunable. Called first, before any
/// thread starts; if the `exec` fails, the program runs on as it is.
///
/// Why: on Zen 3 and later, `rep movsb` to a destination that is not
/// aligned from a source that is runs at a twentieth of the vector loop's
/// speed (glibc bug 30994; `bench/memcpy_alignment.sh`: 3.5 against 90
/// GB/s on an AMD EPYC). Copies land at any offset: rustls's copy of each
/// record's plaintext out of its buffer took 26% of a TLS client's CPU
/// there. glibc 2.40 made the vector loop its default on AMD up to the
/// size where it copies without the cache; this gives earlier glibc the
/// same.
#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
pub fn copy_without_rep_movsb() {
    use std::os::unix::process::CommandExt;

    let Some(tunables) = with_vector_copies(
        std::env::var_os("GLIBC_TUNABLES").as_deref(),
        is_amd(),
        glibc_version(),
    ) else {
        return;
    };
    // Started through the dynamic loader (`ld-linux-x86-64.so.2 h2sim …`),
    // the process's executable is the loader, which would take the first
    // argument for the program: run on.
    let exe = std::fs::read_link("/proc/self/exe").unwrap_or_default();
    if exe
        .file_name()
        .is_none_or(|name| name.to_string_lossy().starts_with("ld-"))
    {
        return;
    }
    let mut args = std::env::args_os();
    let Some(arg0) = args.next() else {
        return;
    };
    // The executable's own path first: the kernel names the process after
    // the file it runs (`/proc/PID/comm`, what `ps`, `top` and `pgrep -x`
    // show), and `/proc/self/exe` made every h2sim an `exe`. That link
    // still runs a binary since replaced or removed. `exec` only returns
    // when it failed: with neither, glibc's own copies stay.
    let args: Vec<_> = args.collect();
    for program in [exe.as_path(), std::path::Path::new("/proc/self/exe")] {
        let _ = std::process::Command::new(program)
            .arg0(&arg0)
            .args(&args)
            .env("GLIBC_TUNABLES", &tunables)
            .exec();
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64")))]
pub fn copy_without_rep_movsb() {}

/// The `GLIBC_TUNABLES` to start again with, given the current ones, or
/// `None` to run on: not AMD, a glibc that avoids `rep movsb` there by
/// itself (2.40 on), or the threshold already set (by the user, or by the
/// start before this one).
#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
fn with_vector_copies(
    current: Option<&std::ffi::OsStr>,
    amd: bool,
    glibc: (u32, u32),
) -> Option<std::ffi::OsString> {
    if !amd || glibc >= (2, 40) {
        return None;
    }
    /// Above glibc's own threshold for copies that bypass the cache (tens of
    /// MiB at most), so `rep movsb` is never chosen.
    const NEVER: u64 = 1 << 40;
    let setting = format!("{REP_MOVSB_THRESHOLD}={NEVER}");
    let Some(current) = current.filter(|c| !c.is_empty()) else {
        return Some(setting.into());
    };
    if current.to_string_lossy().contains(REP_MOVSB_THRESHOLD) {
        return None;
    }
    let mut tunables = current.to_owned();
    tunables.push(":");
    tunables.push(setting);
    Some(tunables)
}

/// Whether the processor is AMD's (CPUID leaf 0 names the vendor).
#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
fn is_amd() -> bool {
    let leaf = std::arch::x86_64::__cpuid(0);
    let mut vendor = [0u8; 12];
    vendor[..4].copy_from_slice(&leaf.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&leaf.edx.to_le_bytes());
    vendor[8..].copy_from_slice(&leaf.ecx.to_le_bytes());
    &vendor == b"AuthenticAMD"
}

/// The running glibc's version, major and minor; (0, 0) when unreadable,
/// which counts as old.
#[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
fn glibc_version() -> (u32, u32) {
    // SAFETY: glibc returns a pointer to a static NUL-terminated string.
    #[allow(unsafe_code)]
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    let mut parts = version
        .to_str()
        .unwrap_or_default()
        .split('.')
        .map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[cfg(all(test, target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
mod copy_tests {
    use super::with_vector_copies;
    use std::ffi::OsStr;

    const SET: &str = "glibc.cpu.x86_rep_movsb_threshold=1099511627776";

    #[test]
    fn amd_with_glibc_before_2_40_starts_again_once() {
        assert_eq!(with_vector_copies(None, true, (2, 36)), Some(SET.into()));
        assert_eq!(
            with_vector_copies(Some(OsStr::new("")), true, (2, 39)),
            Some(SET.into())
        );
        // The user's other tunables stay.
        assert_eq!(
            with_vector_copies(Some(OsStr::new("glibc.malloc.arena_max=1")), true, (2, 36)),
            Some(format!("glibc.malloc.arena_max=1:{SET}").into())
        );
        // The start after the `exec` sees its own setting and runs on, as
        // it does when the user chose a threshold.
        assert_eq!(
            with_vector_copies(Some(OsStr::new(SET)), true, (2, 36)),
            None
        );
        let chosen = OsStr::new("glibc.cpu.x86_rep_movsb_threshold=4096");
        assert_eq!(with_vector_copies(Some(chosen), true, (2, 36)), None);
    }

    #[test]
    fn other_processors_and_newer_glibc_run_on() {
        assert_eq!(with_vector_copies(None, false, (2, 36)), None);
        assert_eq!(with_vector_copies(None, true, (2, 40)), None);
        assert_eq!(with_vector_copies(None, true, (3, 0)), None);
    }
}

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
