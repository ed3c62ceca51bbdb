//! The HTTP Working Group's HTTP/2 conformance cases (`httpwg-cli` from
//! crates.io, binary `httpwg`) against our server, over h2c and over TLS.
//!
//! `httpwg` speaks only cleartext HTTP/2, so the TLS run goes through a
//! relay in this process: it takes httpwg's cleartext connections and
//! carries each over its own TLS connection (ALPN `h2`) to our TLS
//! listener, so every case crosses our TLS accept, ALPN selection and the
//! TLS driver path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use h2sim_tokio::tls::{self, ClientTls, ServerVerification, TlsVersions};
use rustls_pki_types::ServerName;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsConnector;

/// Runs every httpwg case against `addr`; returns (passed, total, output).
async fn run_httpwg(addr: std::net::SocketAddr) -> (usize, usize, String) {
    require(HTTPWG.0, HTTPWG.1);
    let mut cmd = std::process::Command::new("httpwg");
    // Cases run concurrently; give frames a little more than the 250 ms
    // default so a loaded CI machine does not fail cases on timing alone.
    cmd.args(["--frame-timeout", "2000", "--connect-timeout", "2000", "-a"])
        .arg(addr.to_string())
        .env("RUST_LOG", "error");
    let out = run_peer(cmd, Duration::from_secs(120)).await;
    let all = text(&out);
    let summary = all
        .lines()
        .find(|l| l.contains("Passed"))
        .unwrap_or_else(|| panic!("no summary line from httpwg:\n{all}"));
    // "🚄 Passed \x1b[1;32mP/T\x1b[0m tests in …"
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

/// Cases that fail because of the protocol core (`h2sim-proto`), not this
/// adapter; each is reported to the core's owners. A case listed here that
/// starts passing fails the test, so the list stays true.
const KNOWN_CORE_FAILURES: &[(&str, &str)] = &[];

/// The cases that did not pass: failed ones, and ones whose task panicked
/// (httpwg then prints no name, so those are found as the names missing
/// from the passed list).
fn not_passed(output: &str) -> Vec<String> {
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
    let mut missing: Vec<String> = KNOWN_CORE_FAILURES
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .filter(|name| !passed.contains(&name.as_str()) && !failed.contains(name))
        .collect();
    missing.extend(failed);
    missing
}

/// Every case passes but the known core failures, and those still fail.
fn check(run: &str, passed: usize, total: usize, output: &str) {
    assert!(total > 0, "httpwg ran no case:\n{output}");
    let not_passed = not_passed(output);
    let unexpected: Vec<&String> = not_passed
        .iter()
        .filter(|c| !KNOWN_CORE_FAILURES.iter().any(|(k, _)| k == c))
        .collect();
    assert!(
        unexpected.is_empty(),
        "httpwg {run}: {passed}/{total}; unexpected failures: {unexpected:#?}\n\nfull output:\n{output}"
    );
    let now_passing: Vec<&str> = KNOWN_CORE_FAILURES
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !not_passed.iter().any(|c| c == k))
        .collect();
    assert!(
        now_passing.is_empty(),
        "httpwg {run}: these known core failures pass now, remove them from \
         KNOWN_CORE_FAILURES: {now_passing:#?}"
    );
    assert_eq!(
        passed + KNOWN_CORE_FAILURES.len(),
        total,
        "httpwg {run}: {passed}/{total} with {} known core failures\n{output}",
        KNOWN_CORE_FAILURES.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn httpwg_h2c() {
    let server = start().await;
    let (passed, total, output) = run_httpwg(server.addr(false)).await;
    check("h2c", passed, total, &output);
    server.stop().await;
}

/// Accepts cleartext connections and carries each over TLS to `target`.
async fn tls_relay(target: std::net::SocketAddr) -> std::net::SocketAddr {
    let mut config = (*tls::client_config(&ClientTls {
        verification: ServerVerification::Verify(dev_ca()),
        identity: None,
        versions: TlsVersions::default(),
    })
    .unwrap())
    .clone();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = TlsConnector::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut plain, _)) = listener.accept().await {
            let connector = connector.clone();
            tokio::spawn(async move {
                let _ = plain.set_nodelay(true);
                let Ok(tcp) = TcpStream::connect(target).await else {
                    return;
                };
                let _ = tcp.set_nodelay(true);
                let name = ServerName::try_from("localhost").unwrap();
                let Ok(mut secure) = connector.connect(name, tcp).await else {
                    return;
                };
                assert_eq!(secure.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
                let _ = tokio::io::copy_bidirectional(&mut plain, &mut secure).await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn httpwg_tls() {
    let server = start().await;
    let relay = tls_relay(server.addr(true)).await;
    let (passed, total, output) = run_httpwg(relay).await;
    check("over TLS", passed, total, &output);
    assert_eq!(
        server.stats.tls_failures(),
        0,
        "{:?}",
        server.stats.last_tls_error()
    );
    server.stop().await;
}
