//! nghttp2's tools against us and us against them: `nghttp` (including a
//! pushed response), `h2load` (HTTP/2 over TCP and TLS, and HTTP/1.1), and
//! our client against `nghttpd` (h2c, TLS, and push with `-p`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use h2sim_tokio::tls::{self, ClientTls, ServerVerification, TlsVersions};
use h2sim_tokio::{ClientOptions, FetchRequest, ResponseRecord, fetch};

async fn nghttp(args: &[&str]) -> String {
    require(NGHTTP.0, NGHTTP.1);
    let mut cmd = Command::new("nghttp");
    cmd.args(["-nv", "-t", "20"]).args(args);
    let out = run_peer(cmd, Duration::from_secs(30)).await;
    assert!(out.status.success(), "nghttp {args:?}:\n{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nghttp_receives_a_push() {
    let server = start().await;
    let out = nghttp(&[&format!("http://{}/push", server.addr(false))]).await;
    assert!(out.contains("recv PUSH_PROMISE"), "no push:\n{out}");
    assert!(out.contains(":path: /pushed.css"), "{out}");
    // The pushed stream (2, our first) completes with its 22-byte body.
    assert!(out.contains("recv (stream_id=2) :status: 200"), "{out}");
    assert!(
        out.contains("recv DATA frame <length=22, flags=0x01, stream_id=2>"),
        "{out}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nghttp_over_tls() {
    let server = start().await;
    let out = nghttp(&[&format!("https://{}/", server.addr(true))]).await;
    assert!(out.contains("The negotiated protocol: h2"), "{out}");
    assert!(out.contains(":status: 200"), "{out}");
    server.stop().await;
}

/// Runs h2load and checks every request succeeded.
async fn h2load(args: &[&str], requests: usize) -> String {
    require(H2LOAD.0, H2LOAD.1);
    let mut cmd = Command::new("h2load");
    cmd.args(["-T", "20", "-N", "20"]).args(args);
    let out = run_peer(cmd, Duration::from_secs(60)).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "h2load {args:?}:\n{}", text(&out));
    let expected = format!("{requests} succeeded, 0 failed, 0 errored, 0 timeout");
    assert!(stdout.contains(&expected), "h2load {args:?}:\n{stdout}");
    assert!(
        stdout.contains(&format!("status codes: {requests} 2xx")),
        "{stdout}"
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2load_http2_cleartext() {
    let server = start().await;
    let url = format!("http://{}/", server.addr(false));
    h2load(&["-n", "2000", "-c", "4", "-m", "10", &url], 2000).await;
    assert_eq!(server.stats.accepted(), 4, "one connection per client");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2load_http2_over_tls() {
    let server = start().await;
    let url = format!("https://{}/", server.addr(true));
    let out = h2load(&["-n", "1000", "-c", "2", "-m", "10", &url], 1000).await;
    assert!(out.contains("Application protocol: h2"), "{out}");
    server.stop().await;
}

/// HTTP/1.1 with 10 requests pipelined per connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2load_http1_pipelined() {
    let server = start().await;
    let url = format!("http://{}/", server.addr(false));
    h2load(&["--h1", "-n", "2000", "-c", "4", "-m", "10", &url], 2000).await;
    server.stop().await;
}

/// An `nghttpd` on a free port serving `docroot`; `extra` adds options.
async fn nghttpd(docroot: &std::path::Path, tls: bool, extra: &[&str]) -> PeerServer {
    require(NGHTTPD.0, NGHTTPD.1);
    let port = free_port();
    let mut cmd = Command::new("nghttpd");
    cmd.args(["-a", "127.0.0.1", "-d"])
        .arg(docroot)
        .args(extra)
        .arg(port.to_string());
    if tls {
        cmd.arg(certs().join("server-ec.key"))
            .arg(certs().join("server-ec.crt"));
    } else {
        cmd.arg("--no-tls");
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = PeerServer { child, port };
    wait_listening(port).await;
    server
}

/// A docroot with `/index.html`, `/style.css` and `/file/0..N`.
fn docroot(files: usize) -> std::path::PathBuf {
    let dir = scratch_dir("docroot");
    std::fs::write(dir.join("index.html"), "<html>index</html>\n").unwrap();
    std::fs::write(dir.join("style.css"), "p { margin: 0 }\n").unwrap();
    std::fs::create_dir(dir.join("file")).unwrap();
    for i in 0..files {
        std::fs::write(dir.join("file").join(i.to_string()), format!("file {i}\n")).unwrap();
    }
    dir
}

fn ok(result: &Result<ResponseRecord, h2sim_tokio::RequestError>) -> &ResponseRecord {
    let record = result
        .as_ref()
        .unwrap_or_else(|e| panic!("request failed: {e}"));
    assert_eq!(record.head.status, 200);
    assert!(record.sent_at <= record.first_byte_at);
    assert!(record.first_byte_at <= record.completed_at);
    record
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_against_nghttpd_h2c() {
    let root = docroot(50);
    let peer = nghttpd(&root, false, &[]).await;
    let target = format!("127.0.0.1:{}", peer.port);
    let requests = (0..50)
        .map(|i| FetchRequest::get("http", &target, &format!("/file/{i}")))
        .collect();
    let options = ClientOptions {
        connections: 2,
        ..ClientOptions::default()
    };
    let results = fetch(&target, options, 5, requests).await.unwrap();
    for (i, result) in results.iter().enumerate() {
        assert_eq!(ok(result).body, format!("file {i}\n"));
    }
    let _ = std::fs::remove_dir_all(root);
}

fn client_tls() -> std::sync::Arc<rustls::ClientConfig> {
    tls::client_config(&ClientTls {
        verification: ServerVerification::Verify(dev_ca()),
        identity: None,
        versions: TlsVersions::default(),
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_against_nghttpd_tls() {
    let root = docroot(20);
    let peer = nghttpd(&root, true, &[]).await;
    let target = format!("https://localhost:{}", peer.port);
    let authority = format!("localhost:{}", peer.port);
    let requests = (0..20)
        .map(|i| FetchRequest::get("https", &authority, &format!("/file/{i}")))
        .collect();
    let options = ClientOptions {
        tls: Some(client_tls()),
        ..ClientOptions::default()
    };
    let results = fetch(&target, options, 4, requests).await.unwrap();
    for (i, result) in results.iter().enumerate() {
        assert_eq!(ok(result).body, format!("file {i}\n"));
    }
    let _ = std::fs::remove_dir_all(root);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_receives_nghttpd_push() {
    let root = docroot(0);
    let peer = nghttpd(&root, false, &["-p/index.html=/style.css"]).await;
    let target = format!("127.0.0.1:{}", peer.port);
    let request = FetchRequest::get("http", &target, "/index.html");
    let results = fetch(&target, ClientOptions::default(), 1, vec![request])
        .await
        .unwrap();
    let record = ok(&results[0]);
    assert_eq!(record.body, "<html>index</html>\n");
    assert_eq!(record.pushes.len(), 1, "{record:#?}");
    let push = &record.pushes[0];
    assert_eq!(push.request.path, "/style.css");
    assert_eq!(push.head.as_ref().map(|h| h.status), Some(200));
    assert_eq!(push.body, "p { margin: 0 }\n");
    assert!(push.completed_at.is_some());
    let _ = std::fs::remove_dir_all(root);
}
