//! Our server against curl, beyond what the interop matrix
//! (`interop_matrix.rs`) covers: bodies of several megabytes, larger than
//! our stream and connection windows, both ways and over TLS, and a
//! listener on IPv6.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::matrix::scratch_dir;
use common::*;
use h2sim_tokio::{ListenerSpec, ServerOptions};

/// [`matrix::curl`] off the runtime's worker threads.
async fn curl(args: &[&str]) -> (String, String) {
    let args: Vec<String> = args.iter().map(|&a| a.to_owned()).collect();
    blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        matrix::curl(&args)
    })
    .await
}

/// An 8 MB download and a 4 MB upload echoed back: both exceed the stream
/// and connection windows, so they only complete if flow control moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_http2_large_bodies_both_ways() {
    let server = start().await;
    let dir = scratch_dir("curl-bodies");
    let down = dir.path().join("down");
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

    let up = dir.path().join("up");
    let payload: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&up, &payload).unwrap();
    let echoed = dir.path().join("echoed");
    let url = format!("https://{}/echo", server.addr(true));
    let (_, status) = curl(&[
        "--http2",
        "--cacert",
        &matrix::ca(),
        "--data-binary",
        &format!("@{}", up.display()),
        "-o",
        echoed.to_str().unwrap(),
        &url,
    ])
    .await;
    assert_eq!(status, "200 2");
    assert!(std::fs::read(&echoed).unwrap() == payload, "echo differs");
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
