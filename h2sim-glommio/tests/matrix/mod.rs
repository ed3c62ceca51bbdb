//! The interop matrix, written once for any runtime: every case runs a
//! peer program (curl, nghttp, h2load, Python's h2, httpwg, nghttpd)
//! against our server, or our client against a peer server, through a
//! [`Harness`] that each adapter implements with its own server and client.
//! Nothing here names a runtime; it uses only `std`, the peers, rustls
//! with the core's TLS builders (for httpwg's TLS relay) and `tempfile`
//! (scratch directories), and the core for [`AnswerLate`], an application
//! both runtimes' client tests serve, so the tokio and glommio suites include this one
//! file (`#[path]`: glommio's `tests/interop.rs`, tokio's
//! `tests/common/mod.rs`) and instantiate every case with [`matrix_tests!`]
//! (glommio's `tests/interop.rs`, tokio's `tests/interop_matrix.rs`). The
//! tokio suite's own tests also use its peer helpers and its service.
//!
//! A peer program that is missing fails its case with the program's name
//! and how to install it; nothing is skipped.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use h2sim_proto::{Application, Connection, Event, ResponseHead, StreamId};

use tempfile::TempDir;

/// What an adapter provides to run the matrix.
pub trait Harness {
    type Server: TestServer;
    /// Starts [`service`] on a plain listener (HTTP/2 prior knowledge,
    /// HTTP/1.1 and h2c told apart by the first bytes) and a TLS listener
    /// (`certs/server-ec`, ALPN `h2`, `http/1.1` and `http/1.0`), both on
    /// 127.0.0.1.
    fn start(&self) -> Self::Server;
    /// Our client: sends `requests` to `target` as `client` says and
    /// returns one result per request, in order.
    fn fetch(
        &self,
        target: &str,
        client: &ClientSpec,
        requests: Vec<Req>,
    ) -> Vec<Result<Resp, String>>;
}

/// A running test server.
pub trait TestServer {
    /// The plain (`tls == false`) or TLS listener's address.
    fn addr(&self, tls: bool) -> SocketAddr;
    /// Stops the server gracefully, waiting for it, and says how TLS went.
    fn stop(self) -> ServerSummary;
}

/// What the matrix checks about a server once it stopped.
#[derive(Debug, Default)]
pub struct ServerSummary {
    pub tls_failures: u64,
    pub last_tls_error: Option<String>,
}

/// The protocol our client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Http2,
    Http1,
    /// TLS: offer both by ALPN.
    Negotiate,
}

/// How our client connects.
#[derive(Debug, Clone)]
pub struct ClientSpec {
    /// TLS trusting `certs/ca.crt`, with `localhost` as the server name.
    pub tls: bool,
    pub protocol: Proto,
    pub connections: usize,
    pub in_flight: usize,
}

impl ClientSpec {
    pub fn plain(protocol: Proto) -> Self {
        ClientSpec {
            tls: false,
            protocol,
            connections: 1,
            in_flight: 8,
        }
    }

    pub fn tls(protocol: Proto) -> Self {
        ClientSpec {
            tls: true,
            ..ClientSpec::plain(protocol)
        }
    }
}

/// A request for our client.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: &'static str,
    pub scheme: &'static str,
    pub authority: String,
    pub path: String,
    pub body: Vec<u8>,
}

impl Req {
    pub fn get(scheme: &'static str, authority: &str, path: &str) -> Self {
        Req {
            method: "GET",
            scheme,
            authority: authority.to_owned(),
            path: path.to_owned(),
            body: Vec::new(),
        }
    }
}

/// A response our client got, with what was pushed along with it.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub body: Vec<u8>,
    /// (path of the promised request, body of the pushed response).
    pub pushes: Vec<(String, Vec<u8>)>,
}

// ---------------------------------------------------------------- service

/// What the test service answers.
#[derive(Debug, Clone)]
pub struct ServiceReply {
    pub status: u16,
    pub content_type: Option<&'static str>,
    pub body: Vec<u8>,
    /// Responses to push before this one: (path, content type, body).
    pub pushes: Vec<(&'static str, &'static str, &'static [u8])>,
}

/// The body every `/` request gets: long enough for several DATA frames.
pub fn hello_body() -> Vec<u8> {
    format!("hello from h2sim{}\n", ".".repeat(1000)).into_bytes()
}

/// The test service, which both adapters serve (the tokio suite's other
/// tests too, through `h2sim-tokio/tests/common`):
/// - `/push`: pushes `/pushed.css` and answers `pushed-parent`;
/// - `/big/N`: N bytes of body;
/// - `POST /echo`: the request body back;
/// - anything else: [`hello_body`].
pub fn service(path: &str, body: &[u8]) -> ServiceReply {
    let reply = |body: Vec<u8>| ServiceReply {
        status: 200,
        content_type: None,
        body,
        pushes: Vec::new(),
    };
    if path == "/push" {
        let mut r = reply(b"pushed-parent\n".to_vec());
        r.pushes
            .push(("/pushed.css", "text/css", b"body { color: green }\n"));
        return r;
    }
    if let Some(n) = path.strip_prefix("/big/") {
        return reply(vec![b'x'; n.parse().unwrap_or(0)]);
    }
    if path == "/echo" {
        return reply(body.to_vec());
    }
    ServiceReply {
        content_type: Some("text/plain"),
        ..reply(hello_body())
    }
}

// ---------------------------------------------------------------- peers

pub fn certs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../certs")
}

/// The Python peer scripts (kept with the tokio suite, shared as files).
pub fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../h2sim-tokio/tests/peers")
}

/// The dev CA's certificate file, for peers' `--cacert`.
pub fn ca() -> String {
    certs().join("ca.crt").display().to_string()
}

/// Fails the case unless `program` is on the PATH, saying how to get it.
pub fn require(program: &str, install: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "peer program `{program}` is not installed: {install} \
         (scripts/test.sh installs the interop peers)"
    );
}

/// Fails the case unless python3 can import the `h2` package.
pub fn require_python_h2() {
    require("python3", "apt-get install python3");
    let ok = Command::new("python3")
        .args(["-c", "import h2"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python3 has no `h2` package: pip install h2 (scripts/test.sh installs the interop peers)"
    );
}

pub const CURL: (&str, &str) = ("curl", "apt-get install curl");
pub const NGHTTP: (&str, &str) = ("nghttp", "apt-get install nghttp2-client");
pub const H2LOAD: (&str, &str) = ("h2load", "apt-get install nghttp2-client");
pub const NGHTTPD: (&str, &str) = ("nghttpd", "apt-get install nghttp2-server");
pub const HTTPWG: (&str, &str) = ("httpwg", "cargo install httpwg-cli");

/// A directory of its own under the system's temporary directory
/// (`h2sim-matrix-WHAT-…`), removed with what is in it when the guard is
/// dropped, a failing test's too: keep it for as long as its files are used.
pub fn scratch_dir(what: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("h2sim-matrix-{what}-"))
        .tempdir()
        .expect("create a scratch directory")
}

/// Runs a peer program to its end or kills it after `timeout` (and fails).
/// Output goes to files, so a chatty peer cannot block on a full pipe.
pub fn run_peer(mut cmd: Command, timeout: Duration) -> Output {
    let described = format!("{cmd:?}");
    let dir = scratch_dir("peer");
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {described}: {e}"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = std::fs::read(&out_path).unwrap_or_default();
    let stderr = std::fs::read(&err_path).unwrap_or_default();
    let Some(status) = status else {
        panic!(
            "{described} did not finish within {timeout:?}\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        );
    };
    Output {
        status,
        stdout,
        stderr,
    }
}

/// Output as text, for assertions and failure messages.
pub fn text(out: &Output) -> String {
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A port nobody listens on now, for a peer server to take.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts TCP connections on `port`.
pub fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A peer server process, killed when dropped; then its directory (a
/// document root, a prefix), if it has one, is removed.
pub struct PeerServer {
    pub child: std::process::Child,
    pub port: u16,
    /// Dropped after `child` is killed and waited for.
    pub dir: Option<TempDir>,
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Stops `server` and fails if a TLS handshake failed on it.
fn stop_clean(server: impl TestServer) {
    let summary = server.stop();
    assert_eq!(
        summary.tls_failures, 0,
        "TLS handshakes failed: {:?}",
        summary.last_tls_error
    );
}

// ---------------------------------------------------------------- curl

/// Runs curl with `args`; returns the body and `<code> <version>`.
pub fn curl(args: &[&str]) -> (String, String) {
    require(CURL.0, CURL.1);
    let mut cmd = Command::new("curl");
    cmd.args([
        "-sS",
        "--max-time",
        "20",
        "-w",
        "\n%{http_code} %{http_version}\n",
    ])
    .args(args);
    let out = run_peer(cmd, Duration::from_secs(30));
    assert!(
        out.status.success(),
        "curl {args:?} failed:\n{}",
        text(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, status) = stdout
        .trim_end()
        .rsplit_once('\n')
        .map(|(b, s)| (b.to_owned(), s.to_owned()))
        .unwrap_or_else(|| (String::new(), stdout.trim().to_owned()));
    (body, status)
}

fn hello() -> String {
    String::from_utf8(hello_body()).unwrap()
}

pub fn curl_http2_prior_knowledge(h: &impl Harness) {
    let server = h.start();
    let url = format!("http://{}/", server.addr(false));
    let (body, status) = curl(&["--http2-prior-knowledge", &url]);
    assert_eq!(status, "200 2");
    assert_eq!(body, hello());
    stop_clean(server);
}

/// `curl --http2` on http:// asks for `Upgrade: h2c`.
pub fn curl_http2_h2c_upgrade(h: &impl Harness) {
    let server = h.start();
    let url = format!("http://{}/", server.addr(false));
    let (body, status) = curl(&["--http2", &url]);
    assert_eq!(status, "200 2");
    assert_eq!(body, hello());
    stop_clean(server);
}

pub fn curl_http1_plain(h: &impl Harness) {
    let server = h.start();
    let url = format!("http://{}/", server.addr(false));
    let (body, status) = curl(&["--http1.1", &url]);
    assert_eq!(status, "200 1.1");
    assert_eq!(body, hello());
    stop_clean(server);
}

/// curl over TLS with `version` (which sets the ALPN ids it offers):
/// `status` is `<code> <version of the answer>`.
fn curl_tls_alpn(h: &impl Harness, version: &str, status: &str) {
    let server = h.start();
    let url = format!("https://localhost:{}/", server.addr(true).port());
    let (body, got) = curl(&["--cacert", &ca(), version, &url]);
    assert_eq!(got, status);
    assert_eq!(body, hello());
    stop_clean(server);
}

pub fn curl_tls_alpn_h2(h: &impl Harness) {
    curl_tls_alpn(h, "--http2", "200 2");
}

pub fn curl_tls_alpn_http1(h: &impl Harness) {
    curl_tls_alpn(h, "--http1.1", "200 1.1");
}

/// `curl -0` over TLS offers only the ALPN id `http/1.0` (RFC 7301 §6):
/// the server takes it and answers the HTTP/1.0 request as HTTP/1.1 does
/// on a plain listener (its own version in the status line), where a
/// server that knew only `h2` and `http/1.1` failed the handshake.
pub fn curl_tls_alpn_http10(h: &impl Harness) {
    curl_tls_alpn(h, "--http1.0", "200 1.1");
}

/// A 300 kB upload echoed back and a 1 MB download: both larger than every
/// default flow-control window, over HTTP/2 and HTTP/1.1, and over TLS,
/// where curl sends the upload's first window right behind its Finished.
pub fn curl_bodies_larger_than_windows(h: &impl Harness) {
    let server = h.start();
    let dir = scratch_dir("curl-upload");
    let upload: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let file = dir.path().join("upload");
    std::fs::write(&file, &upload).unwrap();
    let data = format!("@{}", file.display());
    let tls = format!("https://localhost:{}", server.addr(true).port());
    let plain = format!("http://{}", server.addr(false));
    let ca = ca();
    for (base, options) in [
        (&plain, &["--http2-prior-knowledge"][..]),
        (&plain, &["--http1.1"][..]),
        (&tls, &["--http2", "--cacert", &ca][..]),
    ] {
        let url = format!("{base}/echo");
        let (body, status) = curl(&[options, &["--data-binary", &data, &url]].concat());
        assert!(status.starts_with("200"), "{options:?}: {status}");
        assert!(body.as_bytes() == upload, "{options:?}: echo differs");
        let url = format!("{base}/big/1000000");
        let (body, status) = curl(&[options, &[url.as_str()]].concat());
        assert!(status.starts_with("200"), "{options:?}: {status}");
        assert_eq!(body.len(), 1_000_000, "{options:?}");
    }
    stop_clean(server);
}

// ---------------------------------------------------------------- nghttp, h2load

/// `nghttp -ans`: the statistics list every stream, pushed ones too.
fn nghttp(url: &str) -> String {
    require(NGHTTP.0, NGHTTP.1);
    let mut cmd = Command::new("nghttp");
    cmd.args(["-ans", "-t", "20", url]);
    let out = run_peer(cmd, Duration::from_secs(30));
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn nghttp_receives_push(h: &impl Harness) {
    let server = h.start();
    let stats = nghttp(&format!("http://{}/push", server.addr(false)));
    let pushed = stats
        .lines()
        .find(|l| l.contains("/pushed.css"))
        .unwrap_or_else(|| panic!("no pushed stream in:\n{stats}"));
    assert!(pushed.contains(" 200 "), "{pushed}");
    stop_clean(server);
}

/// nghttp over TLS (ALPN h2) fetching 2 MB: its output is the body.
pub fn nghttp_tls_large_body(h: &impl Harness) {
    require(NGHTTP.0, NGHTTP.1);
    let server = h.start();
    let url = format!("https://localhost:{}/big/2000000", server.addr(true).port());
    let mut cmd = Command::new("nghttp");
    cmd.args(["-t", "20", &url]);
    let out = run_peer(cmd, Duration::from_secs(30));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout.len(), 2_000_000);
    assert!(out.stdout.iter().all(|&b| b == b'x'));
    stop_clean(server);
}

/// h2load with `args` against `url`: every request must succeed.
fn h2load(args: &[&str], url: &str, requests: u32) {
    require(H2LOAD.0, H2LOAD.1);
    let mut cmd = Command::new("h2load");
    cmd.args(["-n", &requests.to_string(), "-c", "4", "-T", "20"])
        .args(args)
        .arg(url);
    let out = run_peer(cmd, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    let expected = format!("{requests} succeeded, 0 failed, 0 errored, 0 timeout");
    assert!(stdout.contains(&expected), "{}", text(&out));
}

pub fn h2load_h2c(h: &impl Harness) {
    let server = h.start();
    h2load(
        &["-m", "32"],
        &format!("http://{}/", server.addr(false)),
        20_000,
    );
    stop_clean(server);
}

pub fn h2load_tls(h: &impl Harness) {
    let server = h.start();
    h2load(
        &["-m", "32"],
        &format!("https://{}/", server.addr(true)),
        20_000,
    );
    stop_clean(server);
}

/// HTTP/1.1 with 10 requests pipelined per connection.
pub fn h2load_http1(h: &impl Harness) {
    let server = h.start();
    h2load(
        &["--h1", "-m", "10"],
        &format!("http://{}/", server.addr(false)),
        5_000,
    );
    stop_clean(server);
}

// ---------------------------------------------------------------- Python h2

fn python_client(host: &str, port: u16, tls: bool) {
    require_python_h2();
    let mut cmd = Command::new("python3");
    cmd.arg(peers_dir().join("h2_client.py"))
        .args([host, &port.to_string()]);
    if tls {
        cmd.arg("--tls").arg(ca());
    }
    let out = run_peer(cmd, Duration::from_secs(30));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains("OK 22 responses"), "{}", text(&out));
    assert!(stdout.contains("OK push /pushed.css"), "{}", text(&out));
}

pub fn python_h2_client(h: &impl Harness) {
    let server = h.start();
    python_client("127.0.0.1", server.addr(false).port(), false);
    stop_clean(server);
}

pub fn python_h2_client_tls(h: &impl Harness) {
    let server = h.start();
    python_client("localhost", server.addr(true).port(), true);
    stop_clean(server);
}

fn python_server() -> PeerServer {
    use std::io::{BufRead, BufReader};
    require_python_h2();
    let mut child = Command::new("python3")
        .arg(peers_dir().join("h2_server.py"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("h2_server.py printed no port");
    let port = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("h2_server.py said {line:?}"));
    PeerServer {
        child,
        port,
        dir: None,
    }
}

/// Our client: 30 GETs, a 300 kB download, a 200 kB upload and a push,
/// over two connections, against the Python h2 server.
pub fn our_client_against_python_h2_server(h: &impl Harness) {
    let peer = python_server();
    let target = format!("127.0.0.1:{}", peer.port);
    let mut requests: Vec<Req> = (0..30)
        .map(|i| Req::get("http", &target, &format!("/file/{i}")))
        .collect();
    requests.push(Req::get("http", &target, "/big/300000"));
    let upload: Vec<u8> = (0..200_000u32).map(|i| (i % 253) as u8).collect();
    requests.push(Req {
        method: "POST",
        body: upload.clone(),
        ..Req::get("http", &target, "/echo")
    });
    requests.push(Req::get("http", &target, "/push"));
    let client = ClientSpec {
        connections: 2,
        ..ClientSpec::plain(Proto::Http2)
    };
    let results: Vec<Resp> = h
        .fetch(&target, &client, requests)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("request failed: {e}")))
        .collect();
    for (i, r) in results[..30].iter().enumerate() {
        assert_eq!(r.body, format!("python /file/{i}").as_bytes());
    }
    assert_eq!(results[30].body.len(), 300_000);
    assert!(results[31].body == upload, "echo differs");
    let push = &results[32];
    assert_eq!(push.body, b"python /push\n");
    assert_eq!(push.pushes.len(), 1, "{:?}", push.pushes);
    assert_eq!(push.pushes[0].0, "/pushed.txt");
    assert_eq!(push.pushes[0].1, b"pushed by python\n");
}

/// `python3 -m http.server`, which speaks HTTP/1.0 and closes the
/// connection after every response, serving `/a.txt` ("hello\n").
pub fn python_http10_server() -> PeerServer {
    require("python3", "apt-get install python3");
    let root = scratch_dir("http10-root");
    std::fs::write(root.path().join("a.txt"), "hello\n").unwrap();
    let port = free_port();
    let child = Command::new("python3")
        .args(["-m", "http.server", "--bind", "127.0.0.1"])
        .arg(port.to_string())
        .current_dir(root.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = PeerServer {
        child,
        port,
        dir: Some(root),
    };
    wait_listening(port);
    server
}

// ---------------------------------------------------------------- nghttpd

/// nghttpd serving a small document root, pushing `/style.css` with `/`.
pub fn nghttpd(tls: bool) -> PeerServer {
    require(NGHTTPD.0, NGHTTPD.1);
    let root = scratch_dir("nghttpd-root");
    std::fs::write(
        root.path().join("index.html"),
        "<html>nghttpd index</html>\n",
    )
    .unwrap();
    std::fs::write(root.path().join("style.css"), "p { color: blue }\n").unwrap();
    std::fs::write(root.path().join("big"), vec![b'n'; 500_000]).unwrap();
    let port = free_port();
    let mut cmd = Command::new("nghttpd");
    cmd.arg("-d")
        .arg(root.path())
        .arg("--push=/index.html=/style.css")
        .arg("--push=/=/style.css");
    if tls {
        cmd.arg(port.to_string())
            .arg(certs().join("server-ec.key"))
            .arg(certs().join("server-ec.crt"));
    } else {
        cmd.arg("--no-tls").arg(port.to_string());
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = PeerServer {
        child,
        port,
        dir: Some(root),
    };
    wait_listening(port);
    server
}

fn against_nghttpd(h: &impl Harness, tls: bool) {
    let peer = nghttpd(tls);
    let (scheme, target) = if tls {
        ("https", format!("https://localhost:{}", peer.port))
    } else {
        ("http", format!("127.0.0.1:{}", peer.port))
    };
    let authority = format!("localhost:{}", peer.port);
    let requests = vec![
        Req::get(scheme, &authority, "/index.html"),
        Req::get(scheme, &authority, "/big"),
        Req::get(scheme, &authority, "/missing"),
    ];
    let client = if tls {
        ClientSpec::tls(Proto::Http2)
    } else {
        ClientSpec::plain(Proto::Http2)
    };
    let results: Vec<Resp> = h
        .fetch(&target, &client, requests)
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("request failed: {e}")))
        .collect();
    assert_eq!(results[0].status, 200);
    assert_eq!(results[0].body, b"<html>nghttpd index</html>\n");
    assert_eq!(results[0].pushes.len(), 1, "{:?}", results[0].pushes);
    assert_eq!(results[0].pushes[0].0, "/style.css");
    assert_eq!(results[0].pushes[0].1, b"p { color: blue }\n");
    assert_eq!(results[1].body.len(), 500_000);
    assert_eq!(results[2].status, 404);
}

pub fn our_client_against_nghttpd(h: &impl Harness) {
    against_nghttpd(h, false);
}

pub fn our_client_against_nghttpd_tls(h: &impl Harness) {
    against_nghttpd(h, true);
}

// ---------------------------------------------------------------- our own pair

/// Our client against our server: HTTP/2 and HTTP/1.1 over TCP, and ALPN
/// over TLS, many requests over several connections, with a push.
pub fn our_client_against_our_server(h: &impl Harness) {
    let server = h.start();
    for (client, tls) in [
        (ClientSpec::plain(Proto::Http2), false),
        (ClientSpec::plain(Proto::Http1), false),
        (ClientSpec::tls(Proto::Negotiate), true),
        (ClientSpec::tls(Proto::Http1), true),
    ] {
        let addr = server.addr(tls);
        let (scheme, authority) = if tls {
            ("https", format!("localhost:{}", addr.port()))
        } else {
            ("http", addr.to_string())
        };
        let target = format!("{scheme}://{authority}");
        let client = ClientSpec {
            connections: 3,
            ..client
        };
        let mut requests: Vec<Req> = (0..200)
            .map(|_| Req::get(scheme, &authority, "/"))
            .collect();
        requests.push(Req::get(scheme, &authority, "/push"));
        let results = h.fetch(&target, &client, requests);
        for r in &results[..200] {
            let r = r.as_ref().unwrap_or_else(|e| panic!("{client:?}: {e}"));
            let body = String::from_utf8_lossy(&r.body);
            assert_eq!(
                (r.status, body.as_ref()),
                (200, hello().as_str()),
                "{client:?}"
            );
        }
        let push = results[200].as_ref().unwrap();
        assert_eq!(push.body, b"pushed-parent\n");
        // Push exists in HTTP/2 only.
        let pushes = if client.protocol == Proto::Http1 {
            0
        } else {
            1
        };
        assert_eq!(push.pushes.len(), pushes, "{client:?}");
    }
    stop_clean(server);
}

// ---------------------------------------------------------------- httpwg

/// Cases that fail because of the protocol core (`h2sim-proto`), not an
/// adapter, each with why: (case name, reason). A case listed here that
/// starts passing fails the check, so the list stays true.
pub const HTTPWG_KNOWN_CORE_FAILURES: &[(&str, &str)] = &[];

/// Runs every httpwg case against `addr` (cleartext HTTP/2); returns
/// (passed, total, output).
pub fn run_httpwg(addr: SocketAddr) -> (usize, usize, String) {
    require(HTTPWG.0, HTTPWG.1);
    let mut cmd = Command::new("httpwg");
    // Cases run concurrently; give frames a little more than the 250 ms
    // default so a loaded CI machine does not fail cases on timing alone.
    cmd.args(["--frame-timeout", "2000", "--connect-timeout", "2000", "-a"])
        .arg(addr.to_string())
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "error");
    let out = run_peer(cmd, Duration::from_secs(120));
    let all = text(&out);
    let summary = all
        .lines()
        .find(|l| l.contains("Passed"))
        .unwrap_or_else(|| panic!("no summary line from httpwg:\n{all}"));
    // "🚄 Passed P/T tests in …"
    let digits: String = summary
        .chars()
        .map(|c| {
            if c.is_ascii_digit() || c == '/' {
                c
            } else {
                ' '
            }
        })
        .collect();
    let fraction = digits
        .split_whitespace()
        .find(|w| w.contains('/'))
        .unwrap_or_else(|| panic!("unreadable summary {summary:?}"));
    let (p, t) = fraction.split_once('/').unwrap();
    (p.parse().unwrap(), t.parse().unwrap(), all)
}

/// The cases that did not pass: failed ones, and known ones whose task
/// panicked (httpwg then prints no name, so those are found as the names
/// missing from both the passed and the failed lists).
fn httpwg_not_passed(output: &str) -> Vec<String> {
    let passed: Vec<&str> = output
        .lines()
        .filter_map(|l| l.split("Test passed: ").nth(1))
        .map(str::trim_end)
        .collect();
    let failed: Vec<String> = output
        .lines()
        .filter_map(|l| l.split("Test failed: ").nth(1))
        .map(|name| name.trim_end().to_owned())
        .collect();
    let mut missing: Vec<String> = HTTPWG_KNOWN_CORE_FAILURES
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .filter(|name| !passed.contains(&name.as_str()) && !failed.contains(name))
        .collect();
    missing.extend(failed);
    missing
}

/// Every case of the `run` (a name for messages) passed but the known core
/// failures, and those still fail.
pub fn check_httpwg(run: &str, passed: usize, total: usize, output: &str) {
    assert!(total > 0, "httpwg ran no case:\n{output}");
    let not_passed = httpwg_not_passed(output);
    let unexpected: Vec<&String> = not_passed
        .iter()
        .filter(|c| !HTTPWG_KNOWN_CORE_FAILURES.iter().any(|(k, _)| k == c))
        .collect();
    assert!(
        unexpected.is_empty(),
        "httpwg {run}: {passed}/{total}; unexpected failures: {unexpected:#?}\n\nfull output:\n{output}"
    );
    let now_passing: Vec<&str> = HTTPWG_KNOWN_CORE_FAILURES
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !not_passed.iter().any(|c| c == k))
        .collect();
    assert!(
        now_passing.is_empty(),
        "httpwg {run}: these known core failures pass now, remove them from \
         HTTPWG_KNOWN_CORE_FAILURES: {now_passing:#?}"
    );
    assert_eq!(
        passed + HTTPWG_KNOWN_CORE_FAILURES.len(),
        total,
        "httpwg {run}: {passed}/{total} with {} known core failures\n{output}",
        HTTPWG_KNOWN_CORE_FAILURES.len()
    );
}

pub fn httpwg_h2c(h: &impl Harness) {
    let server = h.start();
    let (passed, total, output) = run_httpwg(server.addr(false));
    check_httpwg("h2c", passed, total, &output);
    stop_clean(server);
}

/// Instantiates every case of the matrix as a `#[test]` with `$harness`.
#[macro_export]
macro_rules! matrix_tests {
    ($harness:expr) => {
        $crate::matrix_tests!(@cases $harness;
            curl_http2_prior_knowledge, curl_http2_h2c_upgrade, curl_http1_plain,
            curl_tls_alpn_h2, curl_tls_alpn_http1, curl_tls_alpn_http10,
            curl_bodies_larger_than_windows,
            nghttp_receives_push, nghttp_tls_large_body,
            h2load_h2c, h2load_tls, h2load_http1,
            python_h2_client, python_h2_client_tls, our_client_against_python_h2_server,
            our_client_against_nghttpd, our_client_against_nghttpd_tls,
            our_client_against_our_server, httpwg_h2c, httpwg_tls,
            tls_relay_reports_a_protocol_other_than_h2);
    };
    (@cases $harness:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                matrix::$case(&$harness);
            }
        )*
    };
}

// ---------------------------------------------------------------- TLS relay

/// How the relay set up one connection: the protocol ALPN chose (None: no
/// ALPN), or why there is no TLS connection to carry it over.
pub type Relayed = Result<Option<Vec<u8>>, String>;

/// A relay that takes cleartext connections and carries each over its own
/// TLS connection (trusting `certs/ca.crt`, server name `localhost`) to a
/// TLS listener: `httpwg` speaks only cleartext HTTP/2, and through the
/// relay every case crosses the server's TLS accept, ALPN selection and TLS
/// driver path. Plain threads and rustls, so it runs beside any runtime.
pub struct TlsRelay {
    pub addr: SocketAddr,
    /// One report per connection, sent by the connection's thread, so the
    /// test body (not a thread whose panic no one sees) checks it.
    pub reports: std::sync::mpsc::Receiver<Relayed>,
}

impl TlsRelay {
    /// Starts relaying to `target`, offering `alpn`. The accept thread
    /// lives as long as the test process.
    pub fn start(target: SocketAddr, alpn: &[&[u8]]) -> TlsRelay {
        use h2sim_proto::host::tls::{self, ClientTls, ServerVerification, TlsVersions, Trust};
        let mut config = (*tls::client_config(&ClientTls {
            verification: ServerVerification::Verify(Trust {
                file: Some(certs().join("ca.crt")),
                ..Trust::default()
            }),
            identity: None,
            versions: TlsVersions::default(),
        })
        .unwrap())
        .clone();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let config = std::sync::Arc::new(config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (report, reports) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for plain in listener.incoming() {
                let Ok(plain) = plain else { continue };
                let (config, report) = (config.clone(), report.clone());
                std::thread::spawn(move || relay_one(plain, target, config, &report));
            }
        });
        TlsRelay { addr, reports }
    }

    /// Every report received so far that is not a TLS connection with ALPN
    /// `h2` (RFC 9113 §3.2), for a failure message; fails if there is no
    /// report at all (nothing crossed the relay).
    pub fn not_h2(&self) -> Vec<String> {
        let mut seen = 0;
        let mut wrong = Vec::new();
        while let Ok(relayed) = self.reports.try_recv() {
            seen += 1;
            match relayed {
                Ok(Some(protocol)) if protocol == b"h2" => {}
                Ok(Some(protocol)) => wrong.push(format!(
                    "ALPN chose {:?}",
                    String::from_utf8_lossy(&protocol)
                )),
                Ok(None) => wrong.push("no ALPN protocol chosen".to_owned()),
                Err(why) => wrong.push(why),
            }
        }
        assert!(seen > 0, "no connection crossed the TLS relay");
        wrong
    }
}

/// Carries one cleartext connection over TLS: a handshake, a report, then
/// one thread each way around the shared rustls connection (the blocking
/// socket reads happen outside its lock).
fn relay_one(
    plain: TcpStream,
    target: SocketAddr,
    config: std::sync::Arc<rustls::ClientConfig>,
    report: &std::sync::mpsc::Sender<Relayed>,
) {
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};
    let _ = plain.set_nodelay(true);
    let mut tcp = match TcpStream::connect(target) {
        Ok(tcp) => tcp,
        Err(e) => {
            let _ = report.send(Err(format!("connect to {target}: {e}")));
            return;
        }
    };
    let _ = tcp.set_nodelay(true);
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut tls = rustls::ClientConnection::new(config, name).unwrap();
    while tls.is_handshaking() {
        if let Err(e) = tls.complete_io(&mut tcp) {
            let _ = report.send(Err(format!("TLS handshake: {e}")));
            return;
        }
    }
    let _ = report.send(Ok(tls.alpn_protocol().map(<[u8]>::to_vec)));
    let tls = Arc::new(Mutex::new(tls));
    let (mut plain_in, mut tcp_out) = (plain.try_clone().unwrap(), tcp.try_clone().unwrap());
    let up_tls = tls.clone();
    let up = std::thread::spawn(move || {
        let mut buf = vec![0; 16 * 1024];
        loop {
            let n = plain_in.read(&mut buf).unwrap_or(0);
            let mut tls = up_tls.lock().unwrap();
            if n == 0 {
                tls.send_close_notify();
            } else {
                let _ = tls.writer().write_all(&buf[..n]);
            }
            while tls.wants_write() {
                if tls.write_tls(&mut tcp_out).is_err() {
                    return;
                }
            }
            if n == 0 {
                let _ = tcp_out.shutdown(std::net::Shutdown::Write);
                return;
            }
        }
    });
    let mut plain_out = plain;
    let mut buf = vec![0; 16 * 1024];
    'down: loop {
        let n = tcp.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        let mut tls = tls.lock().unwrap();
        let mut input = &buf[..n];
        while !input.is_empty() {
            if tls.read_tls(&mut input).is_err() || tls.process_new_packets().is_err() {
                break 'down;
            }
            let mut clear = Vec::new();
            let _ = tls.reader().read_to_end(&mut clear);
            if plain_out.write_all(&clear).is_err() {
                break 'down;
            }
        }
        while tls.wants_write() {
            if tls.write_tls(&mut tcp).is_err() {
                break 'down;
            }
        }
    }
    let _ = plain_out.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
}

/// httpwg's cases over TLS, through [`TlsRelay`]: every relayed connection
/// negotiated `h2`, the same cases pass as over h2c, and no TLS failure.
pub fn httpwg_tls(h: &impl Harness) {
    let server = h.start();
    let relay = TlsRelay::start(server.addr(true), &[b"h2"]);
    let (passed, total, output) = run_httpwg(relay.addr);
    let wrong = relay.not_h2();
    assert!(wrong.is_empty(), "relayed connections: {wrong:#?}");
    check_httpwg("over TLS", passed, total, &output);
    stop_clean(server);
}

/// The relay's check fails when ALPN does not choose `h2`: offered only
/// `http/1.1`, the server takes it (RFC 7301 §3.2), and the report says so.
pub fn tls_relay_reports_a_protocol_other_than_h2(h: &impl Harness) {
    let server = h.start();
    let relay = TlsRelay::start(server.addr(true), &[b"http/1.1"]);
    let plain = TcpStream::connect(relay.addr).unwrap();
    let first = relay
        .reports
        .recv_timeout(Duration::from_secs(10))
        .expect("the relay reports the connection");
    drop(plain);
    assert_eq!(first, Ok(Some(b"http/1.1".to_vec())));
    let again = TlsRelay {
        addr: relay.addr,
        reports: {
            let (report, reports) = std::sync::mpsc::channel();
            report.send(first).unwrap();
            reports
        },
    };
    assert_eq!(again.not_h2(), ["ALPN chose \"http/1.1\""]);
    stop_clean(server);
}

/// Holds every request until `expected` are held, tells `arrived`, and
/// answers them all [`LATE`] after: by then the client is going away.
pub struct AnswerLate {
    expected: usize,
    held: Vec<StreamId>,
    arrived: mpsc::Sender<()>,
    answer_at: Option<Instant>,
}

/// How long [`AnswerLate`] holds its answers.
pub const LATE: Duration = Duration::from_millis(300);

impl AnswerLate {
    pub fn new(expected: usize, arrived: mpsc::Sender<()>) -> Self {
        AnswerLate {
            expected,
            held: Vec::new(),
            arrived,
            answer_at: None,
        }
    }
}

impl Application for AnswerLate {
    fn on_event(&mut self, now: Instant, event: Event, _conn: &mut Connection) {
        if let Event::Request { stream, .. } = event {
            self.held.push(stream);
            if self.held.len() == self.expected {
                self.answer_at = Some(now + LATE);
                let _ = self.arrived.send(());
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.answer_at
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        if self.answer_at.is_some_and(|at| at <= now) {
            self.answer_at = None;
            for stream in self.held.drain(..) {
                let _ = conn.send_response(stream, ResponseHead::new(200), false);
                let _ = conn.send_data(stream, bytes::Bytes::from_static(b"late"), true);
            }
        }
    }
}
