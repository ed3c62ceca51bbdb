//! A real `h2sim server` process for the integration tests: started in a
//! directory, waited for until it listens, its output collected, stopped
//! with SIGTERM.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::fmt::Debug;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

pub const BIN: &str = env!("CARGO_BIN_EXE_h2sim");

/// A directory of its own under the system's temporary directory
/// (`h2sim-WHAT-…`), removed with what is in it when the guard is dropped,
/// a failing test's too: keep it for as long as its files are used.
pub fn scratch_dir(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("h2sim-{what}-"))
        .tempdir()
        .expect("create a scratch directory")
}

/// The repository's test certificates (`certs/`).
pub fn certs() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../certs")
}

/// A running server; killed on drop if the test did not stop it.
pub struct Server {
    child: Child,
    /// The listeners, as printed: `http://127.0.0.1:PORT`, `https://…`.
    pub urls: Vec<String>,
    /// Everything it printed, in the order it came.
    output: Arc<Mutex<String>>,
    /// What it printed on stderr alone (the rest is stdout's).
    stderr: Arc<Mutex<String>>,
    /// What it printed on stdout alone (its traces and report).
    stdout: Arc<Mutex<String>>,
    drains: Vec<JoinHandle<()>>,
}

impl Server {
    /// Runs `h2sim ARGS…` (ARGS start with `server`) in `dir` and waits
    /// for `listeners` "listening on" lines. Panics with the output if the
    /// server exits before.
    pub fn start<S: AsRef<OsStr> + Debug>(dir: &Path, args: &[S], listeners: usize) -> Server {
        let mut command = Command::new(BIN);
        command.args(args).current_dir(dir);
        Server::spawn(command, listeners)
    }

    /// Runs `command` (`h2sim server …`, with whatever else the test set
    /// on it, such as its environment) and waits for `listeners` "listening
    /// on" lines, as [`Server::start`] does.
    pub fn spawn(mut command: Command, listeners: usize) -> Server {
        let args: Vec<_> = command.get_args().map(|a| a.to_owned()).collect();
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start h2sim server");
        let output = Arc::new(Mutex::new(String::new()));
        let errors = Arc::new(Mutex::new(String::new()));
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut urls = Vec::new();
        while urls.len() < listeners {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap() == 0 {
                let mut rest = String::new();
                let _ = child.stdout.take().unwrap().read_to_string(&mut rest);
                panic!(
                    "server {args:?} exited before listening: {}{line}{rest}",
                    output.lock().unwrap()
                );
            }
            if let Some(url) = line.trim().strip_prefix("h2sim server listening on ") {
                urls.push(url.to_owned());
            }
            output.lock().unwrap().push_str(&line);
            errors.lock().unwrap().push_str(&line);
        }
        let stdout = child.stdout.take().unwrap();
        let printed = Arc::new(Mutex::new(String::new()));
        let drains = vec![
            drain(stderr, output.clone(), Some(errors.clone())),
            drain(stdout, output.clone(), Some(printed.clone())),
        ];
        Server {
            child,
            urls,
            output,
            stderr: errors,
            stdout: printed,
            drains,
        }
    }

    /// `h2sim server --runtime RUNTIME --threads 1 FLAGS…` in `dir`, waited
    /// for until `listeners` listen (see [`Server::start`]).
    pub fn on_runtime(runtime: &str, dir: &Path, flags: &[&str], listeners: usize) -> Server {
        let mut args = vec!["server", "--runtime", runtime, "--threads", "1"];
        args.extend_from_slice(flags);
        Server::start(dir, &args, listeners)
    }

    /// `h2sim server --runtime RUNTIME --threads 1` in `certs/` with an
    /// https listener of `key` and `cert`, `flags` before it (a `-V` for
    /// it, `-q`), answering `ok` to GET; waited for.
    pub fn tls(runtime: &str, key: &str, cert: &str, flags: &[&str]) -> Server {
        let mut args = vec!["-k", key, "-c", cert];
        args.extend_from_slice(flags);
        args.extend(["-S", "https://127.0.0.1:0", "-m", "GET", "-t", "ok"]);
        Server::on_runtime(runtime, &certs(), &args, 1)
    }

    /// `h2sim server --runtime RUNTIME --threads 1 -q` in `dir`, answering
    /// by [`INTEROP_RULES`] on `listeners` (`-S` URLs, port 0 for one the
    /// system picks; an `https` one with the test certificate), waited for.
    pub fn interop(runtime: &str, dir: &Path, listeners: &[&str]) -> Server {
        Server::interop_with(runtime, dir, listeners, &[])
    }

    /// [`Server::interop`] with `extra` flags before the listeners.
    pub fn interop_with(runtime: &str, dir: &Path, listeners: &[&str], extra: &[&str]) -> Server {
        let certs = certs();
        let key = certs.join("server-ec.key");
        let crt = certs.join("server-ec.crt");
        let mut flags = vec!["-q"];
        flags.extend_from_slice(extra);
        for url in listeners {
            if url.starts_with("https:") {
                flags.extend(["-k", key.to_str().unwrap(), "-c", crt.to_str().unwrap()]);
            }
            flags.extend(["-S", url]);
        }
        flags.extend(INTEROP_RULES);
        Server::on_runtime(runtime, dir, &flags, listeners.len())
    }

    /// `h2sim server --runtime RUNTIME --threads 1 -S http://127.0.0.1:0
    /// FLAGS…` in the temporary directory: one plain listener on a port
    /// the system picks, FLAGS (the rules, `-q`, whatever else the test
    /// needs) as typed on a command line, split as a shell would.
    pub fn with_rules(runtime: &str, flags: &str) -> Server {
        Server::with_rules_on(runtime, "http://127.0.0.1:0", flags)
    }

    /// [`Server::with_rules`] on the plain listener `url`, for a peer
    /// configured with its port before the server starts.
    pub fn with_rules_on(runtime: &str, url: &str, flags: &str) -> Server {
        let flags = split(flags);
        let mut all = vec!["-S", url];
        all.extend(flags.iter().map(String::as_str));
        Server::on_runtime(runtime, &std::env::temp_dir(), &all, 1)
    }

    /// The plain listener's `HOST:PORT`.
    pub fn authority(&self) -> &str {
        self.url("http").trim_start_matches("http://")
    }

    /// Writes `bytes` on a new connection to the plain listener and reads
    /// what comes back until the server closes (a 20 s read timeout only
    /// bounds a hang): a raw HTTP/1.1 exchange, or a hand-made HTTP/2 one.
    pub fn exchange(&self, bytes: &[u8]) -> Vec<u8> {
        let mut tcp = std::net::TcpStream::connect(self.authority()).unwrap();
        tcp.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        std::io::Write::write_all(&mut tcp, bytes).unwrap();
        let mut answer = Vec::new();
        let _ = tcp.read_to_end(&mut answer);
        answer
    }

    /// `h2sim server --runtime RUNTIME -q FLAGS… -S http://127.0.0.1:0`
    /// answering `hi` to every GET, started in the temporary directory.
    pub fn answering_hi(runtime: &str, flags: &[&str]) -> Server {
        Server::spawn(Server::answering_hi_command(runtime, flags), 1)
    }

    /// The command [`Server::answering_hi`] runs, for a test to add to
    /// (its environment, say) before [`Server::spawn`].
    pub fn answering_hi_command(runtime: &str, flags: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command
            .args(["server", "--runtime", runtime, "-q"])
            .args(flags)
            .args(split("-S http://127.0.0.1:0 -m GET -p / -t hi"))
            .current_dir(std::env::temp_dir());
        command
    }

    /// The server process's id (for `/proc/<pid>/…`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The listener of `scheme` (`http` or `https`).
    pub fn url(&self, scheme: &str) -> &str {
        let prefix = format!("{scheme}://");
        self.urls
            .iter()
            .find(|u| u.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no {scheme} listener in {:?}", self.urls))
    }

    /// Waits until the server has printed a line containing `needle`, and
    /// returns that line (a test that never sees it is ended by the
    /// harness's timeout, not by a timed assertion).
    pub fn wait_for(&self, needle: &str) -> String {
        loop {
            if let Some(line) = self
                .output
                .lock()
                .unwrap()
                .lines()
                .find(|l| l.contains(needle))
            {
                return line.to_owned();
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// SIGTERM, then the exit code and everything the server printed.
    pub fn stop(mut self) -> (Option<i32>, String) {
        let code = self.terminate();
        let out = self.output.lock().unwrap().clone();
        (code, out)
    }

    /// [`Server::stop`] for a server that must exit 0 (the panic shows
    /// all it printed otherwise): its closing report line
    /// (`h2sim server: N connections, N requests, …`).
    pub fn stop_report(self) -> String {
        let (code, log) = self.stop();
        assert_eq!(code, Some(0), "{log}");
        server_report(&log).to_owned()
    }

    /// [`Server::stop`], with what the server printed on stderr apart:
    /// the exit code, everything printed, and stderr's part of it.
    pub fn stop_apart(mut self) -> (Option<i32>, String, String) {
        let code = self.terminate();
        let out = self.output.lock().unwrap().clone();
        let stderr = self.stderr.lock().unwrap().clone();
        (code, out, stderr)
    }

    /// [`Server::stop`], with what the server printed on stdout alone: a
    /// trace's lines, which no stderr line (a `DISCONNECTED` one) can
    /// come between, as they can in the merged output.
    pub fn stop_stdout(mut self) -> (Option<i32>, String) {
        let code = self.terminate();
        let out = self.stdout.lock().unwrap().clone();
        (code, out)
    }

    /// SIGTERM, then the exit code once the output is all read.
    fn terminate(&mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        let status = self.child.wait().unwrap();
        for drain in self.drains.drain(..) {
            drain.join().unwrap();
        }
        status.code()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads `pipe` line by line into `into`, and into `apart` too if given.
fn drain(
    pipe: impl Read + Send + 'static,
    into: Arc<Mutex<String>>,
    apart: Option<Arc<Mutex<String>>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            for out in std::iter::once(&into).chain(&apart) {
                let mut out = out.lock().unwrap();
                out.push_str(&line);
                out.push('\n');
            }
        }
    })
}

/// Runs a program and returns its exit code and stdout + stderr.
pub fn run(program: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} is needed for this test: {e}"));
    (out.status.code(), text(&out))
}

/// Runs `program ARGS…` (a peer's client), which must exit 0 printing
/// `says` and nothing else.
pub fn run_says(program: &str, args: &[&str], says: &str) {
    let (code, out) = run(program, args);
    assert_eq!((code, out.trim()), (Some(0), says), "{program} {args:?}");
}

/// Runs `h2sim client ARGS` to its end.
pub fn client(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("client")
        .args(args)
        .output()
        .expect("run h2sim client")
}

/// A finished program's stdout, then its stderr.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The response header lines `curl -sv` printed (`< name: value`),
/// lowercased, without the status line.
pub fn curl_headers(args: &[&str]) -> Vec<String> {
    let mut all = vec!["-sv", "-o", "/dev/null"];
    all.extend_from_slice(args);
    let (code, out) = run("curl", &all);
    assert_eq!(code, Some(0), "curl {args:?}: {out}");
    out.lines()
        .filter_map(|l| l.strip_prefix("< "))
        .filter(|l| l.contains(':') && !l.starts_with("HTTP/"))
        .map(|l| l.trim().to_ascii_lowercase())
        .collect()
}

/// Runs [`h2_client.py`](h2_client.py), Python's h2 as an HTTP/2 client
/// (its own header checks off), against `authority` with the requests
/// `words` describe (see the script; split as a shell would), and
/// returns what it printed: a `response STREAM STATUS` or `reset STREAM
/// CODE` line as each came, then how the last request's stream finished
/// (`ended`, `reset`, `cut`). Panics unless it ran to its end.
pub fn h2_client(authority: &str, words: &str) -> String {
    let out = Command::new("python3")
        .args(["-c", include_str!("h2_client.py"), authority])
        .args(split(words))
        .output()
        .expect("python3 is needed (scripts/test.sh installs it)");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "h2_client.py {words:?}: {}",
        text(&out)
    );
    said
}

/// `words` split as a shell would.
fn split(words: &str) -> Vec<String> {
    shlex::split(words).unwrap_or_else(|| panic!("unbalanced quotes: {words}"))
}

/// A port nothing listens on right now (for a peer or `--listen`).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A peer program serving: on a port it chose and announced (the Go and
/// Java peers), or on ports its configuration names (haproxy, lighttpd);
/// killed on drop.
pub struct PeerServer {
    child: Child,
    /// The port it announced, or the first it was told to listen on.
    pub port: u16,
}

impl PeerServer {
    /// Runs `command` and waits for its `listening PORT` line; `what` names
    /// the peer and the Debian package that has it, for a missing program.
    pub fn start(mut command: Command, what: &str) -> PeerServer {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} is needed for this test: {e}"));
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("{what} said {line:?}"));
        PeerServer { child, port }
    }

    /// Runs `command`, a server told to listen on `ports`, and waits until
    /// each accepts a connection; panics with `what` if it exits first or
    /// is not listening within 10 s.
    pub fn listening(mut command: Command, ports: &[u16], what: &str) -> PeerServer {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} is needed for this test: {e}"));
        let mut server = PeerServer {
            child,
            port: ports[0],
        };
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        for &port in ports {
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                if let Ok(Some(status)) = server.child.try_wait() {
                    panic!("{what} exited with {status} before listening on {port}");
                }
                assert!(
                    std::time::Instant::now() < until,
                    "{what} is not listening on {port}"
                );
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        server
    }
}

impl Drop for PeerServer {
    /// SIGTERM first, so a server with worker processes (Apache's run as
    /// www-data) stops them too; SIGKILL only if it is still there 5 s on.
    /// Killed at once, Apache left its workers behind, holding its ports.
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The number before `label` in a report line (`2000 succeeded`).
pub fn count(report: &str, label: &str) -> u64 {
    report
        .split(", ")
        .flat_map(|part| part.split(": "))
        .find_map(|part| part.strip_suffix(&format!(" {label}")))
        .and_then(|n| n.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {label} count in {report}"))
}

/// The requests a peer server says it served, from its `served N` page
/// at `url` (the Go, Java and Netty peers), fetched by curl with `flags`
/// (`--http2-prior-knowledge` for a server that speaks HTTP/2 alone).
pub fn served(flags: &[&str], url: &str) -> u64 {
    let mut args = vec!["-sk"];
    args.extend_from_slice(flags);
    args.push(url);
    let (code, out) = run("curl", &args);
    assert_eq!(code, Some(0), "{url}: {out}");
    out.trim()
        .strip_prefix("served ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{url}: {out:?}"))
}

/// The rules the interop tests' servers answer by: GET /1k with 1 KiB,
/// POST /up with 201 and 1 KiB, GET /big with 300 KiB.
pub const INTEROP_RULES: [&str; 24] = [
    "-m", "GET", "-p", "/1k", "-s", "200", "-e", "1k", "-m", "POST", "-p", "/up", "-s", "201",
    "-e", "1k", "-m", "GET", "-p", "/big", "-s", "200", "-e", "300k",
];

/// Runs `h2sim client -q -C N ARGS…` and checks that it exits 0 with all
/// `n` requests succeeded and `data` bytes of answer content; returns its
/// report for further checks.
pub fn client_succeeds(args: &[&str], n: u64, data: u64) -> String {
    let n_arg = n.to_string();
    let mut all = vec!["-q", "-C", &n_arg];
    all.extend_from_slice(args);
    let out = client(&all);
    let report = text(&out);
    assert!(out.status.success(), "{args:?}: {report}");
    assert_eq!(count(&report, "succeeded"), n, "{args:?}: {report}");
    assert!(
        report.contains(&format!("({data}) data")),
        "{args:?}: {report}"
    );
    report
}

/// The client's `-V` that checks a server's certificate against the test
/// CA (`certs/ca.crt`).
pub fn verify_test_ca() -> String {
    format!("verify,trust_file={}", certs().join("ca.crt").display())
}

/// [`client_succeeds`] on `runtime` (`--runtime`), whose report must name
/// `protocol` as the one spoken; returns the report.
pub fn client_succeeds_over(
    runtime: &str,
    protocol: &str,
    args: &[&str],
    n: u64,
    data: u64,
) -> String {
    let report = client_succeeds(&[&["--runtime", runtime][..], args].concat(), n, data);
    assert!(
        report.contains(&format!("Application protocol: {protocol}\n")),
        "{runtime} {args:?}: {report}"
    );
    report
}

/// A client `report` against a server that ends connections after so many
/// requests: it made at least `connections` connections and sent again,
/// without `-r`, what the server had not processed.
pub fn moved_on(report: &str, connections: u64) {
    assert!(count(report, "made") >= connections, "{report}");
    assert!(count(report, "resent unprocessed") > 0, "{report}");
    assert_eq!(count(report, "retried"), 0, "{report}");
}

/// [`client_succeeds`] against `base` followed by the path that ends
/// `args` (`-P 10 /big`), with `leading` flags first.
pub fn client_succeeds_at(
    base: &str,
    leading: &[&str],
    args: &[&str],
    n: u64,
    data: u64,
) -> String {
    let (path, rest) = args.split_last().expect("args end with a path");
    let url = format!("{base}{path}");
    client_succeeds(&[leading, rest, &[url.as_str()]].concat(), n, data)
}

/// The server's closing report line in `log`.
pub fn server_report(log: &str) -> &str {
    log.lines()
        .find(|l| l.starts_with("h2sim server: ") && l.contains(" connections, "))
        .unwrap_or_else(|| panic!("no report in {log}"))
}

/// The JSON file at `path` (a `--json` report, a peer's counts), the
/// path named when it cannot be read.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// Sends `signal` (`-INT`, `-TERM`) to the process.
pub fn kill(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for the process, at most `limit`.
pub fn wait(child: &mut Child, limit: std::time::Duration) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the process did not exit"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `h2sim client ARGS…` started with its output piped.
pub fn spawn_client(args: &[&str]) -> Child {
    Command::new(BIN)
        .arg("client")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ctrl-C (SIGINT) to a running client `after` it started; its report
/// once it exited by itself (within 10 s), stdout and stderr together.
pub fn interrupt_after(mut child: Child, after: std::time::Duration) -> String {
    std::thread::sleep(after);
    kill(&child, "-INT");
    wait(&mut child, std::time::Duration::from_secs(10));
    text(&child.wait_with_output().unwrap())
}

/// A peer's client against [`Server::interop`] with a TLS and a plain
/// listener, on `runtime`: for each run `(scheme, mode, n)`, `client(base,
/// mode, n)` sends `n` requests to the listener of `scheme` and checks
/// them; the server must then count every request once.
pub fn peer_client_runs(
    runtime: &str,
    dir: &Path,
    runs: &[(&str, &str, u64)],
    client: impl Fn(&str, &str, u64),
) {
    let listeners = ["https://127.0.0.1:0", "http://127.0.0.1:0"];
    let server = Server::interop(runtime, dir, &listeners);
    for &(scheme, mode, n) in runs {
        client(server.url(scheme), mode, n);
    }
    let report = server.stop_report();
    let all: u64 = runs.iter().map(|&(_, _, n)| n).sum();
    assert!(
        report.contains(&format!(" {all} requests, {all} responses")),
        "{runtime}: {report}"
    );
}
