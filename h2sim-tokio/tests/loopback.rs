//! Our client against our server over every way they can meet: HTTP/2
//! prior knowledge and pipelined HTTP/1.1 on a plain listener, and TLS with
//! ALPN choosing either; bodies larger than the windows both ways, a push,
//! and several connections.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use common::matrix::hello_body;
use common::*;
use h2sim_proto::RequestHead;
use h2sim_tokio::{ClientOptions, ClientProtocol, FetchRequest, ResponseRecord, fetch};

/// Sends 30 GETs, a 2 MB echo and `/big/3000000`, and checks them all.
async fn exchange(target: &str, scheme: &str, options: ClientOptions) -> Vec<ResponseRecord> {
    let authority = target.rsplit_once("//").map_or(target, |(_, a)| a);
    let mut requests: Vec<FetchRequest> = (0..30)
        .map(|i| FetchRequest::get(scheme, authority, &format!("/n/{i}")))
        .collect();
    let upload = Bytes::from(
        (0..2_000_000u32)
            .map(|i| (i % 241) as u8)
            .collect::<Vec<_>>(),
    );
    requests.push(FetchRequest {
        head: RequestHead::new("POST", scheme.to_owned(), authority.to_owned(), "/echo"),
        body: upload.clone(),
    });
    requests.push(FetchRequest::get(scheme, authority, "/big/3000000"));
    requests.push(FetchRequest::get(scheme, authority, "/push"));
    let results = fetch(target, options, 6, requests).await.unwrap();
    let records: Vec<ResponseRecord> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("request failed: {e}")))
        .collect();
    for record in &records[..30] {
        assert_eq!(record.body, hello_body());
    }
    assert!(records[30].body == upload, "echo differs");
    assert_eq!(records[31].body.len(), 3_000_000);
    assert_eq!(records[32].body, "pushed-parent\n");
    records
}

fn tls_options(protocol: ClientProtocol) -> ClientOptions {
    ClientOptions {
        tls: Some(client_tls()),
        protocol,
        connections: 2,
        ..ClientOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_prior_knowledge() {
    let server = start().await;
    let options = ClientOptions {
        connections: 3,
        ..ClientOptions::default()
    };
    let records = exchange(&server.addr(false).to_string(), "http", options).await;
    let push = &records[32].pushes;
    assert_eq!(push.len(), 1);
    assert_eq!(push[0].body, "body { color: green }\n");
    assert_eq!(server.stats.accepted(), 3);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_pipelined() {
    let server = start().await;
    let options = ClientOptions {
        protocol: ClientProtocol::Http1,
        connections: 2,
        ..ClientOptions::default()
    };
    let records = exchange(&server.addr(false).to_string(), "http", options).await;
    assert!(records[32].pushes.is_empty(), "no push over HTTP/1.1");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_negotiates_http2() {
    let server = start().await;
    let target = format!("https://localhost:{}", server.addr(true).port());
    let records = exchange(&target, "https", tls_options(ClientProtocol::Negotiate)).await;
    assert_eq!(records[32].pushes.len(), 1, "pushed, so HTTP/2");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_http1() {
    let server = start().await;
    let target = format!("https://localhost:{}", server.addr(true).port());
    let records = exchange(&target, "https", tls_options(ClientProtocol::Http1)).await;
    assert!(records[32].pushes.is_empty());
    server.stop().await;
}
