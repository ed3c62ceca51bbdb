//! Starting where glommio cannot run, and as a normal user.
//!
//! Each case runs this test binary again as a child (selected by
//! `H2SIM_GLOMMIO_CHILD`) under a restriction: a memlock limit below
//! glommio's floor (`prlimit`), a seccomp filter that refuses
//! `io_uring_setup` (installed by a few lines of Python through `prctl`,
//! as container runtimes do), or another user (`setpriv`). The child tries
//! to start a server and reports; the parent checks that it failed quickly
//! with a message naming the tokio runtime, or that it worked.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use h2sim_glommio::{
    ClientOptions, Executors, FetchRequest, HandlerApp, ListenerSpec, Reply, Server, ServerOptions,
    fetch,
};

const CHILD: &str = "H2SIM_GLOMMIO_CHILD";

/// Child side: start a one-executor server with `io_memory`, fetch once,
/// print what happened; exit 3 when the server could not start.
fn child(io_memory: usize) -> ! {
    let options = ServerOptions {
        runtime: Executors {
            io_memory,
            ..Executors::new(1)
        },
        ..ServerOptions::default()
    };
    let server = Server::bind(vec![ListenerSpec::plain("127.0.0.1:0").unwrap()], options).unwrap();
    let addr = server.local_addrs()[0].0;
    let running = match server.start(|_| HandlerApp::new(|_| Reply::new(200, "up"))) {
        Ok(running) => running,
        Err(e) => {
            println!("START-ERROR: {e}");
            std::process::exit(3);
        }
    };
    let pinned = pinned_kib();
    let target = addr.to_string();
    let client = ClientOptions {
        runtime: Executors::new(1).into(),
        ..ClientOptions::default()
    };
    let results = fetch(
        &target,
        client,
        1,
        vec![FetchRequest::get("http", &target, "/")],
    );
    let ok = results.is_ok_and(|r| r[0].as_ref().is_ok_and(|r| r.body == "up"));
    running.shutdown().trigger();
    running.join();
    println!("SERVED: {ok} PINNED-KIB: {pinned}");
    std::process::exit(if ok { 0 } else { 1 });
}

/// Memory pinned by this process (io_uring registered buffers), in KiB.
fn pinned_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmPin:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Runs this binary's `test` as a child with `io_memory`, through
/// `wrapper` (a command line that ends by running the program given).
fn run_child(test: &str, wrapper: &[&str], io_memory: usize) -> Output {
    let exe = std::env::current_exe().unwrap();
    let (program, args) = wrapper.split_first().unwrap();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .arg(&exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, io_memory.to_string())
        .stdin(Stdio::null());
    let started = Instant::now();
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    // Failing must be quick: no hang waiting for executors that never came.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the child took {:?}",
        started.elapsed()
    );
    out
}

fn child_io_memory() -> Option<usize> {
    std::env::var(CHILD).ok()?.parse().ok()
}

fn stdout(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn require(program: &str, install: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(found, "`{program}` is not installed: {install}");
}

#[test]
fn memlock_below_glommio_floor_fails_naming_tokio() {
    if let Some(io_memory) = child_io_memory() {
        child(io_memory);
    }
    require("prlimit", "apt-get install util-linux");
    let out = run_child(
        "memlock_below_glommio_floor_fails_naming_tokio",
        &["prlimit", "--memlock=65536:65536"],
        h2sim_glommio::DEFAULT_IO_MEMORY,
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("START-ERROR"), "{text}");
    assert!(text.contains("ulimit -l"), "{text}");
    assert!(text.contains("--runtime tokio"), "{text}");
}

/// A seccomp filter in the child: `io_uring_setup` (425 on every Linux
/// architecture) fails with the errno given, everything else is allowed.
const SECCOMP_WRAPPER: &str = r#"
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
def stmt(code, k, jt=0, jf=0):
    return struct.pack("HBBI", code, jt, jf, k)
prog = b"".join([
    stmt(0x20, 0),                         # ld [nr]
    stmt(0x15, 425, 0, 1),                 # jeq io_uring_setup
    stmt(0x06, 0x00050000 | int(sys.argv[1])),  # ret ERRNO(n)
    stmt(0x06, 0x7FFF0000),                # ret ALLOW
])
buf = ctypes.create_string_buffer(prog, len(prog))
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fprog = Fprog(len(prog) // 8, ctypes.addressof(buf))
if libc.prctl(38, 1, 0, 0, 0) != 0:
    sys.exit("PR_SET_NO_NEW_PRIVS failed")
if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
    sys.exit("PR_SET_SECCOMP failed: errno %d" % ctypes.get_errno())
os.execv(sys.argv[2], sys.argv[2:])
"#;

#[test]
fn io_uring_refused_fails_naming_tokio() {
    if let Some(io_memory) = child_io_memory() {
        child(io_memory);
    }
    require("python3", "apt-get install python3");
    // ENOSYS as an old kernel or a filter answers; EPERM as
    // kernel.io_uring_disabled or Docker's default profile does.
    for errno in ["38", "1"] {
        let out = run_child(
            "io_uring_refused_fails_naming_tokio",
            &["python3", "-c", SECCOMP_WRAPPER, errno],
            h2sim_glommio::DEFAULT_IO_MEMORY,
        );
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(3), "errno {errno}: {text}");
        assert!(text.contains("io_uring is unavailable"), "{text}");
        assert!(text.contains("--runtime tokio"), "{text}");
        assert!(!text.contains("panicked"), "{text}");
    }
}

/// As an unprivileged user (uid 65534 when the tests run as root), the
/// executors start within the default memlock limit and register their
/// small buffers; glommio's own default (10 MiB per executor) would exceed
/// the usual 8 MiB limit, and its registration silently fails then.
#[test]
fn runs_as_a_normal_user() {
    if let Some(io_memory) = child_io_memory() {
        child(io_memory);
    }
    let as_root = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    let wrapper: &[&str] = if as_root {
        require("setpriv", "apt-get install util-linux");
        &[
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ]
    } else {
        &["env"]
    };
    let out = run_child(
        "runs_as_a_normal_user",
        wrapper,
        h2sim_glommio::DEFAULT_IO_MEMORY,
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("SERVED: true"), "{text}");
    // Three rings per executor, each registering io_memory.
    let pinned: u64 = text
        .split("PINNED-KIB: ")
        .nth(1)
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert_eq!(pinned, 3 * 64, "{text}");
}
