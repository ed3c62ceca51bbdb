//! How a glommio client's TLS connection fails before it is up: a server
//! that selects no ALPN protocol is not spoken HTTP/2 to (RFC 9113 §3.2),
//! and a server that never answers the ClientHello times out as a
//! handshake, not as the TCP connect that succeeded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use h2sim_glommio::{
    ClientOptions, Executors, FetchRequest, HandlerApp, ListenerSpec, Reply, Server, ServerOptions,
    fetch,
};
use h2sim_proto::host::tls::{
    self, ClientAuth, ClientTls, Identity, ServerTls, ServerVerification, TlsVersions,
};

fn certs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../certs")
}

/// One GET over TLS to `target` (`host:port`), not verifying the server,
/// within `connect_timeout`: why it failed.
fn failure(target: &str, port: u16, connect_timeout: Duration) -> String {
    let config = tls::client_config(&ClientTls {
        verification: ServerVerification::Off,
        identity: None,
        versions: TlsVersions::default(),
    })
    .unwrap();
    let options = ClientOptions {
        tls: Some(config),
        server_name: Some("localhost".to_owned()),
        connect_timeout,
        runtime: Executors::new(1).into(),
        ..ClientOptions::default()
    };
    let request = FetchRequest::get("https", &format!("localhost:{port}"), "/");
    fetch(target, options, 1, vec![request])
        .map_err(|e| e.to_string())
        .and_then(|mut r| r.remove(0).map_err(|e| e.to_string()))
        .map(|_| ())
        .unwrap_err()
}

/// RFC 9113 §3.2: HTTP/2 over TLS exists only where ALPN selected `h2`;
/// an h2sim listener whose configuration offers no protocol selects none
/// (and would take the preface), so the client fails at the handshake's end.
#[test]
fn a_server_that_selects_no_protocol_is_not_spoken_h2_to() {
    let mut config = (*tls::server_config(&ServerTls {
        identity: Identity {
            chain: certs().join("server-ec.crt"),
            key: certs().join("server-ec.key"),
        },
        client_auth: ClientAuth::None,
        versions: TlsVersions::default(),
    })
    .unwrap())
    .clone();
    config.alpn_protocols.clear();
    let spec = ListenerSpec::tls("127.0.0.1:0", Arc::new(config)).unwrap();
    let options = ServerOptions {
        runtime: Executors::new(1),
        ..ServerOptions::default()
    };
    let server = Server::bind(vec![spec], options).unwrap();
    let addr = server.local_addrs()[0].0;
    let running = server
        .start(|_| HandlerApp::new(|_| Reply::new(200, "ok")))
        .unwrap();
    let err = failure(&addr.to_string(), addr.port(), Duration::from_secs(5));
    assert!(err.contains("chose no application protocol"), "{err}");
    running.shutdown().trigger();
    running.join();
}

/// RFC 8446 §4.1.2: the server owes a ServerHello; one that never sends it
/// times the handshake out, named as such.
#[test]
fn a_silent_server_times_the_handshake_out() {
    // Never accepted: the kernel completes the TCP handshake from its backlog.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let err = failure(&addr.to_string(), addr.port(), Duration::from_millis(300));
    assert!(
        err.ends_with(&format!(
            "TLS handshake with {addr} got no answer within 300ms"
        )),
        "{err}"
    );
}
