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

use std::sync::Arc;

use common::*;
use rustls_pki_types::ServerName;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsConnector;

/// Accepts cleartext connections and carries each over TLS to `target`.
async fn tls_relay(target: std::net::SocketAddr) -> std::net::SocketAddr {
    let mut config = (*client_tls()).clone();
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
    let (passed, total, output) = blocking(move || matrix::run_httpwg(relay)).await;
    matrix::check_httpwg("over TLS", passed, total, &output);
    assert_eq!(
        server.stats.tls_failures(),
        0,
        "{:?}",
        server.stats.last_tls_error()
    );
    server.stop().await;
}
