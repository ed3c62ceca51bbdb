//! What `h2sim` sets up for itself when it starts: on AMD processors with
//! a glibc before 2.40, it starts again in the same process with glibc's
//! `rep movsb` copies off (`limits::copy_without_rep_movsb`), unless the
//! user chose the threshold.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use server_support::Server;

const TUNABLE: &str = "glibc.cpu.x86_rep_movsb_threshold";

/// `GLIBC_TUNABLES` of a server started with `tunables` (none: unset), read
/// from `/proc/<pid>/environ` once it listens: the environment of what
/// runs under the pid the test started.
fn server_tunables(tunables: Option<&str>) -> Option<String> {
    let mut command = Server::answering_hi_command("tokio", &[]);
    match tunables {
        Some(value) => command.env("GLIBC_TUNABLES", value),
        None => command.env_remove("GLIBC_TUNABLES"),
    };
    let server = Server::spawn(command, 1);
    let environ = std::fs::read(format!("/proc/{}/environ", server.pid())).unwrap();
    server.stop();
    environ
        .split(|&b| b == 0)
        .filter_map(|entry| std::str::from_utf8(entry).ok())
        .find_map(|entry| entry.strip_prefix("GLIBC_TUNABLES="))
        .map(str::to_owned)
}

/// Whether this machine is one the start again is for: an AMD processor
/// (as `/proc/cpuinfo` names it) and a glibc before 2.40.
fn amd_with_older_glibc() -> bool {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let amd = cpuinfo
        .lines()
        .any(|l| l.starts_with("vendor_id") && l.ends_with("AuthenticAMD"));
    // SAFETY: glibc returns a pointer to a static NUL-terminated string.
    #[allow(unsafe_code)]
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    let version: Vec<u32> = version
        .to_str()
        .unwrap()
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    amd && (version[0], version[1]) < (2, 40)
}

#[test]
fn on_amd_with_older_glibc_the_process_runs_without_rep_movsb() {
    let tunables = server_tunables(None);
    if amd_with_older_glibc() {
        assert_eq!(
            tunables.as_deref(),
            Some("glibc.cpu.x86_rep_movsb_threshold=1099511627776")
        );
    } else {
        assert_eq!(tunables, None);
    }
}

#[test]
fn a_threshold_the_user_chose_stays() {
    let chosen = format!("{TUNABLE}=4096");
    assert_eq!(server_tunables(Some(&chosen)), Some(chosen));
}
