//! What the interop tests share: the dev certificates, a test server
//! running in-process, peer programs run with a timeout, and the rule that
//! a missing peer fails its test with the way to install it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2sim_proto::{RequestHead, ResponseHead};
use h2sim_tokio::tls::{self, ClientAuth, Identity, ServerTls, TlsVersions, Trust};
use h2sim_tokio::{
    HandlerApp, ListenerSpec, Push, Reply, Request, Server, ServerOptions, ServerStats, Shutdown,
};

pub fn certs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../certs")
}

pub fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// Fails the test unless `program` is on the PATH, saying how to get it.
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

/// Fails the test unless python3 can import the `h2` package.
pub fn require_python_h2() {
    require("python3", "apt-get install python3");
    let ok = Command::new("python3")
        .args(["-c", "import h2"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python3 has no `h2` package: pip install h2 \
         (scripts/test.sh installs the interop peers)"
    );
}

pub const CURL: (&str, &str) = ("curl", "apt-get install curl");
pub const NGHTTP: (&str, &str) = ("nghttp", "apt-get install nghttp2-client");
pub const H2LOAD: (&str, &str) = ("h2load", "apt-get install nghttp2-client");
pub const NGHTTPD: (&str, &str) = ("nghttpd", "apt-get install nghttp2-server");
pub const HTTPWG: (&str, &str) = ("httpwg", "cargo install httpwg-cli");

/// Runs a peer program to its end or kills it after `timeout`. Output goes
/// to files rather than pipes, so a chatty peer cannot block on a full pipe
/// while we wait for it.
pub async fn run_peer(mut cmd: Command, timeout: Duration) -> Output {
    let described = format!("{cmd:?}");
    tokio::task::spawn_blocking(move || {
        let dir = scratch_dir("peer-output");
        let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
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
        let stdout = std::fs::read(&out_path).unwrap();
        let stderr = std::fs::read(&err_path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
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
    })
    .await
    .unwrap()
}

/// A fresh directory under the system's temporary one.
pub fn scratch_dir(what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "h2sim-tokio-{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
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

/// The body every `/` request gets: long enough for flow-control tests
/// that want several DATA frames.
pub fn hello_body() -> Bytes {
    Bytes::from(format!("hello from h2sim{}\n", ".".repeat(1000)))
}

/// The test service:
/// - `/push`: pushes `/pushed.css` and answers `pushed-parent`;
/// - `/big/N`: N bytes of body;
/// - `POST /echo`: the request body back;
/// - anything else: `hello_body()`.
pub fn service(req: Request) -> Reply {
    let path = String::from_utf8_lossy(&req.head.path).into_owned();
    if path == "/push" {
        let mut reply = Reply::new(200, "pushed-parent\n");
        let authority = req.head.authority.clone();
        reply.pushes.push(Push {
            request: RequestHead::new("GET", req.head.scheme.clone(), authority, "/pushed.css"),
            head: ResponseHead::new(200).field("content-type", "text/css"),
            body: Bytes::from_static(b"body { color: green }\n"),
        });
        return reply;
    }
    if let Some(n) = path.strip_prefix("/big/") {
        let n: usize = n.parse().unwrap_or(0);
        return Reply::new(200, vec![b'x'; n]);
    }
    if path == "/echo" {
        return Reply::new(200, req.body);
    }
    let mut reply = Reply::new(200, hello_body());
    reply.head = reply.head.field("content-type", "text/plain");
    reply
}

/// A server running `service` in this process.
pub struct TestServer {
    pub addrs: Vec<(SocketAddr, bool)>,
    pub shutdown: Shutdown,
    pub stats: Arc<ServerStats>,
    pub task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    /// The first plain (`tls == false`) or TLS address.
    pub fn addr(&self, tls: bool) -> SocketAddr {
        self.addrs
            .iter()
            .find(|(_, t)| *t == tls)
            .map(|(a, _)| *a)
            .expect("no listener of that kind")
    }

    /// Stops the server gracefully and waits for it.
    pub async fn stop(self) {
        self.shutdown.trigger();
        tokio::time::timeout(Duration::from_secs(15), self.task)
            .await
            .expect("server did not stop in time")
            .unwrap();
    }
}

pub async fn start_with(specs: Vec<ListenerSpec>, options: ServerOptions) -> TestServer {
    let server = Server::bind(specs, options).await.unwrap();
    TestServer {
        addrs: server.local_addrs(),
        shutdown: server.shutdown(),
        stats: server.stats(),
        task: tokio::spawn(server.run(|_| HandlerApp::new(service))),
    }
}

/// The test service on a plain and a TLS listener on 127.0.0.1.
pub async fn start() -> TestServer {
    start_with(
        vec![
            ListenerSpec::plain("127.0.0.1:0").unwrap(),
            ListenerSpec::tls("127.0.0.1:0", server_tls("server-ec", ClientAuth::None)).unwrap(),
        ],
        ServerOptions::default(),
    )
    .await
}

/// A TLS configuration with the `name` certificate from `certs/`.
pub fn server_tls(name: &str, client_auth: ClientAuth) -> Arc<rustls::ServerConfig> {
    tls::server_config(&ServerTls {
        identity: Identity {
            chain: certs().join(format!("{name}.crt")),
            key: certs().join(format!("{name}.key")),
        },
        client_auth,
        versions: TlsVersions::default(),
    })
    .unwrap()
}

/// Trust in the dev CA (file), without revocation checks.
pub fn dev_ca() -> Trust {
    Trust {
        file: Some(certs().join("ca.crt")),
        ..Trust::default()
    }
}

/// A port nobody listens on now, for a peer server to take.
pub fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts TCP connections on `port`.
pub async fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A peer server process, killed when dropped.
pub struct PeerServer {
    pub child: std::process::Child,
    pub port: u16,
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
