//! Python's `h2` package against us, both ways: its client against our
//! server (plain and TLS), and our client against its server. The scripts
//! are in `tests/peers/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use common::*;
use h2sim_proto::RequestHead;
use h2sim_tokio::{ClientOptions, FetchRequest, fetch};

async fn python_client(host: &str, port: u16, tls: bool) {
    require_python_h2();
    let mut cmd = Command::new("python3");
    cmd.arg(peers_dir().join("h2_client.py"))
        .args([host, &port.to_string()]);
    if tls {
        cmd.arg("--tls").arg(certs().join("ca.crt"));
    }
    let out = run_peer(cmd, Duration::from_secs(30)).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout.contains("OK 22 responses"), "{}", text(&out));
    assert!(stdout.contains("OK push /pushed.css"), "{}", text(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_h2_client_against_our_server() {
    let server = start().await;
    python_client("127.0.0.1", server.addr(false).port(), false).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_h2_client_against_our_tls_server() {
    let server = start().await;
    python_client("localhost", server.addr(true).port(), true).await;
    server.stop().await;
}

/// Starts `h2_server.py` and reads the port it took.
async fn python_server() -> PeerServer {
    require_python_h2();
    let mut child = Command::new("python3")
        .arg(peers_dir().join("h2_server.py"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    });
    let line = tokio::time::timeout(Duration::from_secs(10), line)
        .await
        .expect("h2_server.py printed no port")
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("h2_server.py said {line:?}"));
    PeerServer { child, port }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_against_python_h2_server() {
    let peer = python_server().await;
    let target = format!("127.0.0.1:{}", peer.port);
    let mut requests: Vec<FetchRequest> = (0..30)
        .map(|i| FetchRequest::get("http", &target, &format!("/file/{i}")))
        .collect();
    requests.push(FetchRequest::get("http", &target, "/big/300000"));
    let upload = Bytes::from((0..200_000u32).map(|i| (i % 253) as u8).collect::<Vec<_>>());
    requests.push(FetchRequest {
        head: RequestHead::new("POST", "http", target.clone(), "/echo"),
        body: upload.clone(),
    });
    requests.push(FetchRequest::get("http", &target, "/push"));
    let options = ClientOptions {
        connections: 2,
        ..ClientOptions::default()
    };
    let results = fetch(&target, options, 8, requests).await.unwrap();
    let records: Vec<_> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("request failed: {e}")))
        .collect();
    for (i, record) in records[..30].iter().enumerate() {
        assert_eq!(record.body, format!("python /file/{i}"));
    }
    assert_eq!(records[30].body.len(), 300_000);
    assert_eq!(records[31].body, upload);
    let push = &records[32];
    assert_eq!(push.body, "python /push\n");
    assert_eq!(push.pushes.len(), 1);
    assert_eq!(push.pushes[0].request.path, "/pushed.txt");
    assert_eq!(push.pushes[0].body, "pushed by python\n");
}
