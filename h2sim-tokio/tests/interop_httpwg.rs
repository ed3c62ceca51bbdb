//! The HTTP Working Group's HTTP/2 conformance cases (`httpwg-cli` from
//! crates.io, binary `httpwg`) against our server over TLS; the h2c run is
//! the interop matrix's (`interop_matrix.rs`), and so are the running of
//! httpwg and the known-failure bookkeeping.
//!
//! `httpwg` speaks only cleartext HTTP/2, so the TLS run goes through a
//! relay in this process: it takes httpwg's cleartext connections and
//! carries each over its own TLS connection (ALPN `h2`) to our TLS
//! listener, so every case crosses our TLS accept, ALPN selection and the
//! TLS driver path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::*;
use rustls_pki_types::ServerName;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsConnector;

/// How the relay set up one connection: the protocol ALPN chose (None: no
/// ALPN), or why there is no TLS connection to carry it over.
type Relayed = Result<Option<Vec<u8>>, String>;

/// Accepts cleartext connections and carries each over TLS to `target`,
/// offering `alpn`; reports how each connection was set up on the channel
/// returned, so the test body (not the relay's detached tasks, whose
/// panics no one sees) checks it.
async fn tls_relay(
    target: SocketAddr,
    alpn: &[&[u8]],
) -> (SocketAddr, mpsc::UnboundedReceiver<Relayed>) {
    let mut config = (*client_tls()).clone();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let connector = TlsConnector::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (report, reports) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut plain, _)) = listener.accept().await {
            let connector = connector.clone();
            let report = report.clone();
            tokio::spawn(async move {
                let _ = plain.set_nodelay(true);
                let tcp = match TcpStream::connect(target).await {
                    Ok(tcp) => tcp,
                    Err(e) => {
                        let _ = report.send(Err(format!("connect to {target}: {e}")));
                        return;
                    }
                };
                let _ = tcp.set_nodelay(true);
                let name = ServerName::try_from("localhost").unwrap();
                let mut secure = match connector.connect(name, tcp).await {
                    Ok(secure) => secure,
                    Err(e) => {
                        let _ = report.send(Err(format!("TLS handshake: {e}")));
                        return;
                    }
                };
                let chosen = secure.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                let _ = report.send(Ok(chosen));
                let _ = tokio::io::copy_bidirectional(&mut plain, &mut secure).await;
            });
        }
    });
    (addr, reports)
}

/// Every report received so far that is not a TLS connection with ALPN
/// `h2` (RFC 9113 §3.2), shown for a failure message; fails if there is
/// no report at all (nothing crossed the relay).
fn not_h2(reports: &mut mpsc::UnboundedReceiver<Relayed>) -> Vec<String> {
    let mut seen = 0;
    let mut wrong = Vec::new();
    while let Ok(relayed) = reports.try_recv() {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn httpwg_tls() {
    let server = start().await;
    let (relay, mut reports) = tls_relay(server.addr(true), &[b"h2"]).await;
    let (passed, total, output) = blocking(move || matrix::run_httpwg(relay)).await;
    let wrong = not_h2(&mut reports);
    assert!(wrong.is_empty(), "relayed connections: {wrong:#?}");
    matrix::check_httpwg("over TLS", passed, total, &output);
    assert_eq!(
        server.stats.tls_failures(),
        0,
        "{:?}",
        server.stats.last_tls_error()
    );
    server.stop().await;
}

/// The relay's check fails when ALPN does not choose `h2`: offered only
/// `http/1.1`, our server takes it (RFC 7301 §3.2), and the report says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_reports_a_protocol_other_than_h2() {
    let server = start().await;
    let (relay, mut reports) = tls_relay(server.addr(true), &[b"http/1.1"]).await;
    let plain = TcpStream::connect(relay).await.unwrap();
    let first = reports
        .recv()
        .await
        .expect("the relay reports the connection");
    drop(plain);
    assert_eq!(first, Ok(Some(b"http/1.1".to_vec())));
    let (report, mut again) = mpsc::unbounded_channel();
    report.send(first).unwrap();
    assert_eq!(not_h2(&mut again), ["ALPN chose \"http/1.1\""]);
    server.stop().await;
}
