//! Our server against curl: HTTP/2 prior knowledge, the h2c upgrade, TLS
//! with ALPN (h2 and http/1.1), plain HTTP/1.1, IPv6, and bodies larger
//! than every flow-control window in both directions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;
use std::time::Duration;

use common::*;
use h2sim_tokio::{ListenerSpec, ServerOptions};

/// Runs curl with `args`, printing `<code> <version>` on a last line of its own.
async fn curl(args: &[&str]) -> (String, String) {
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
    let out = run_peer(cmd, Duration::from_secs(30)).await;
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

fn ca() -> String {
    certs().join("ca.crt").display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_http2_prior_knowledge() {
    let server = start().await;
    let url = format!("http://{}/", server.addr(false));
    let (body, status) = curl(&["--http2-prior-knowledge", &url]).await;
    assert_eq!(status, "200 2");
    assert_eq!(body, String::from_utf8_lossy(&hello_body()));
    server.stop().await;
}

/// `curl --http2` on http:// asks for `Upgrade: h2c` (needs the HTTP/1.1
/// session for the first request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_http2_h2c_upgrade() {
    let server = start().await;
    let url = format!("http://{}/", server.addr(false));
    let (body, status) = curl(&["--http2", &url]).await;
    assert_eq!(status, "200 2", "the upgrade did not happen");
    assert!(body.starts_with("hello from h2sim"), "{body}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_http2_over_tls_alpn() {
    let server = start().await;
    let url = format!("https://{}/", server.addr(true));
    let (body, status) = curl(&["--http2", "--cacert", &ca(), &url]).await;
    assert_eq!(status, "200 2");
    assert!(body.starts_with("hello from h2sim"), "{body}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_http1_plain() {
    let server = start().await;
    let url = format!("http://{}/", server.addr(false));
    let (body, status) = curl(&["--http1.1", &url]).await;
    assert_eq!(status, "200 1.1");
    assert!(body.starts_with("hello from h2sim"), "{body}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_http1_over_tls_alpn() {
    let server = start().await;
    let url = format!("https://{}/", server.addr(true));
    let (body, status) = curl(&["--http1.1", "--cacert", &ca(), &url]).await;
    assert_eq!(status, "200 1.1");
    assert!(body.starts_with("hello from h2sim"), "{body}");
    server.stop().await;
}

/// An 8 MB download and a 4 MB upload echoed back: both exceed the stream
/// and connection windows, so they only complete if flow control moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_http2_large_bodies_both_ways() {
    let server = start().await;
    let dir = scratch_dir("curl-bodies");
    let down = dir.join("down");
    let url = format!("http://{}/big/8000000", server.addr(false));
    let (_, status) = curl(&[
        "--http2-prior-knowledge",
        "-o",
        down.to_str().unwrap(),
        &url,
    ])
    .await;
    assert_eq!(status, "200 2");
    assert_eq!(std::fs::metadata(&down).unwrap().len(), 8_000_000);

    let up = dir.join("up");
    let payload: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&up, &payload).unwrap();
    let echoed = dir.join("echoed");
    let url = format!("https://{}/echo", server.addr(true));
    let (_, status) = curl(&[
        "--http2",
        "--cacert",
        &ca(),
        "--data-binary",
        &format!("@{}", up.display()),
        "-o",
        echoed.to_str().unwrap(),
        &url,
    ])
    .await;
    assert_eq!(status, "200 2");
    assert!(std::fs::read(&echoed).unwrap() == payload, "echo differs");
    let _ = std::fs::remove_dir_all(&dir);
    server.stop().await;
}

/// Listeners on IPv4 and IPv6 at once; curl reaches the IPv6 one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_ipv6_listener() {
    let server = start_with(
        vec![
            ListenerSpec::plain("127.0.0.1:0").unwrap(),
            ListenerSpec::plain("[::1]:0").unwrap(),
        ],
        ServerOptions::default(),
    )
    .await;
    let v6 = server
        .addrs
        .iter()
        .find(|(a, _)| a.is_ipv6())
        .map(|(a, _)| *a)
        .unwrap();
    let url = format!("http://{v6}/");
    let (_, status) = curl(&["-g", "--http2-prior-knowledge", &url]).await;
    assert_eq!(status, "200 2");
    server.stop().await;
}
