//! Interop with Go's net/http (Debian's golang-go): an HTTP/2 implementation
//! that shares no code with h2sim's or nghttp2's, and the one free5GC's
//! network functions are built on. `tests/go/peer.go` is built with
//! `go build` and meets h2sim over TLS with ALPN (Go's standard library
//! speaks h2c only through golang.org/x/net), in both directions, on both
//! runtimes, certificates checked on both sides. Every answer's status,
//! protocol and body length is checked, and the server side's count of
//! requests against the client's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use server_support::{
    PeerServer, Server, certs, client_succeeds_at, run, scratch_dir, served, text,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// Builds the Go peer into `dir`, with a build cache of its own there (Go
/// wants one, and finds none without `HOME`; Debian's Go ships its
/// standard library built, so this takes about a second); a missing Go
/// toolchain fails the test.
fn build_peer(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/go/peer.go");
    let binary = dir.join("peer");
    let out = Command::new("go")
        .env("GOCACHE", dir.join("go-cache"))
        .arg("build")
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("go (Debian's golang-go) is needed for this test: {e}"));
    assert!(out.status.success(), "go build: {}", text(&out));
    binary
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs the Go peer's client (300 requests at once, the server's
/// certificate checked against the test CA) against `url`; `at` names the
/// run in a failure.
fn go_client_succeeds(peer: &Path, url: &str, at: &str) {
    let ca = certs().join("ca.crt");
    let (code, out) = run(path(peer), &["client", path(&ca), url, "300"]);
    assert_eq!((code, out.trim()), (Some(0), "ok 300"), "{at}");
}

/// Go's client against h2sim's server over TLS: 300 requests at once, a
/// third each GET 1 KiB, POST 100 KiB answered with 1 KiB, and GET
/// 300 KiB (the uploads meet answers waiting to be written, see
/// `tests/go/peer.go`).
#[test]
fn go_client_against_the_server() {
    let dir = scratch_dir("interop-go-client");
    let peer = build_peer(dir.path());
    for runtime in RUNTIMES {
        let server = Server::interop(runtime, dir.path(), &["https://127.0.0.1:0"]);
        let url = server.url("https").to_owned();
        go_client_succeeds(&peer, &url, runtime);
        server.stop_report();
    }
}

/// Go's client against a server that ends each connection after 100
/// requests (`--requests-per-connection`), 300 requests at once, three
/// times: Go sends again what the GOAWAY left out, on new connections, and
/// the server takes each request once. It failed one run in two while the
/// server, closing, read at most 1 MiB of what Go was still uploading to
/// the streams it left out, then let the socket go: the kernel's RST threw
/// away answers Go had not read yet (`host::LINGER_BYTES`).
#[test]
fn go_client_moves_on_at_the_servers_request_limit() {
    let dir = scratch_dir("interop-go-limit");
    let peer = build_peer(dir.path());
    for runtime in RUNTIMES {
        let limit = ["--requests-per-connection", "100"];
        let server = Server::interop_with(runtime, dir.path(), &["https://127.0.0.1:0"], &limit);
        let url = server.url("https").to_owned();
        for round in 0..3 {
            go_client_succeeds(&peer, &url, &format!("{runtime} round {round}"));
        }
        let report = server.stop_report();
        assert!(
            report.contains(" 900 requests, 900 responses"),
            "{runtime}: {report}"
        );
    }
}

/// The Go peer's server, and its URL (the certificate names 127.0.0.1).
fn go_server(peer: &Path) -> (PeerServer, String) {
    let certs = certs();
    let mut command = Command::new(peer);
    command.args([
        "server",
        path(&certs.join("server-ec.crt")),
        path(&certs.join("server-ec.key")),
    ]);
    let server = PeerServer::start(command, "the Go peer");
    let url = format!("https://127.0.0.1:{}", server.port);
    (server, url)
}

/// h2sim's client against Go's server: GETs of 1 KiB at 100 streams,
/// 100 KiB uploads echoed back, 300 KiB answers; Go's certificate checked
/// against the test CA.
#[test]
fn the_client_against_a_go_server() {
    let dir = scratch_dir("interop-go-server");
    let peer = build_peer(dir.path());
    let (_server, base) = go_server(&peer);
    let ca = certs().join("ca.crt");
    let verify = format!("verify,trust_file={}", path(&ca));
    let mut expected = 0;
    for runtime in RUNTIMES {
        for (args, n, data) in [
            (&["-P", "100", "/1k"][..], 2_000, 2_048_000),
            (
                &["-P", "20", "-m", "POST", "-e", "100k", "/echo"][..],
                200,
                20_480_000,
            ),
            (&["-P", "10", "/big"][..], 100, 30_720_000),
        ] {
            let leading = ["--runtime", runtime, "-V", &verify];
            let report = client_succeeds_at(&base, &leading, args, n, data);
            assert!(report.contains("Application protocol: h2"), "{report}");
            expected += n;
        }
    }
    assert_eq!(served(&[], &format!("{base}/stats")), expected);
}
