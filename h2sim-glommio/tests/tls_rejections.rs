//! A glommio server that requires client certificates tells its
//! [`HandshakeErrorHook`] of each rejected one, once, with the peer's
//! address and rustls' reason (RFC 8446 §4.4.2: a client without a
//! certificate, or with one that does not lead to a trusted CA).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use h2sim_glommio::{
    ClientOptions, Executors, FetchRequest, HandlerApp, HandshakeErrorHook, ListenerSpec, Reply,
    Server, ServerOptions, fetch,
};
use h2sim_proto::host::tls::{
    self, Certified, ClientAuth, ClientTls, Identity, ServerTls, ServerVerification, TlsVersions,
    Trust,
};

fn certs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../certs")
}

fn dev_ca() -> Trust {
    Trust {
        file: Some(certs().join("ca.crt")),
        ..Trust::default()
    }
}

/// A client that trusts the dev CA and presents a self-signed certificate:
/// one from a CA (itself) the server does not know.
fn stranger_client() -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in tls::load_certs(&certs().join("ca.crt")).unwrap() {
        roots.add(cert).unwrap();
    }
    let stranger = Certified::self_signed(&["h2sim-stranger".to_owned()]).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_client_auth_cert(stranger.chain, stranger.key)
    .unwrap();
    Arc::new(config)
}

/// One GET to `addr` over `config`: whether it was answered.
fn answered(addr: SocketAddr, config: Arc<rustls::ClientConfig>) -> bool {
    let options = ClientOptions {
        tls: Some(config),
        server_name: Some("localhost".to_owned()),
        runtime: Executors::new(1).into(),
        ..ClientOptions::default()
    };
    let target = addr.to_string();
    let request = FetchRequest::get("https", &format!("localhost:{}", addr.port()), "/");
    fetch(&target, options, 1, vec![request])
        .is_ok_and(|results| results.into_iter().all(|r| r.is_ok()))
}

#[test]
fn rejected_client_certificates_reach_the_hook_once_each() {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let hook = {
        let heard = heard.clone();
        HandshakeErrorHook::new(move |peer, why| {
            heard.lock().unwrap().push((peer, why.to_owned()));
        })
    };
    let server_tls = tls::server_config(&ServerTls {
        identity: Identity {
            chain: certs().join("server-ec.crt"),
            key: certs().join("server-ec.key"),
        },
        client_auth: ClientAuth::Required(dev_ca()),
        versions: TlsVersions::default(),
    })
    .unwrap();
    let options = ServerOptions {
        runtime: Executors::new(1),
        on_handshake_error: Some(hook),
        ..ServerOptions::default()
    };
    let spec = ListenerSpec::tls("127.0.0.1:0", server_tls).unwrap();
    let server = Server::bind(vec![spec], options).unwrap();
    let addr = server.local_addrs()[0].0;
    let running = server
        .start(|_| HandlerApp::new(|_| Reply::new(200, "ok")))
        .unwrap();

    let without = tls::client_config(&ClientTls {
        verification: ServerVerification::Verify(dev_ca()),
        identity: None,
        versions: TlsVersions::default(),
    })
    .unwrap();
    assert!(!answered(addr, without));
    assert!(!answered(addr, stranger_client()));

    // Joining waits for every connection task, so each hook call is in.
    running.shutdown().trigger();
    let stats = running.join();
    let heard = heard.lock().unwrap();
    assert_eq!(heard.len(), 2, "{heard:?}");
    assert!(
        heard.iter().all(|(peer, _)| peer.ip().is_loopback()),
        "{heard:?}"
    );
    assert!(
        heard[0].1.contains("peer sent no certificates"),
        "{heard:?}"
    );
    assert!(heard[1].1.contains("UnknownIssuer"), "{heard:?}");
    assert_eq!(stats.tls_failures(), 2);
}
