//! One test per TLS verification outcome, on both sides, with the dev PKI
//! in `certs/`: a good chain is accepted (EC and RSA, trust file and trust
//! directory), an unknown CA, a wrong host name and a revoked certificate
//! (with CRL checking on) are rejected, verification can be turned off,
//! and a server that requires a client certificate rejects a client
//! without one or with a revoked one, and accepts one with a good one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::matrix::{CURL, certs, require, scratch_dir, text};
use common::*;
use h2sim_tokio::tls::{
    self, Certified, ClientAuth, ClientTls, Identity, Revocation, ServerVerification, TlsVersions,
    Trust,
};
use h2sim_tokio::{
    ClientOptions, FetchRequest, HandlerApp, HandshakeErrorHook, ListenerSpec, Reply, Server,
    ServerCounters, ServerOptions, Shutdown, fetch,
};

/// A TLS server whose every answer describes the handshake it came over.
struct TlsServer {
    port: u16,
    shutdown: Shutdown,
    stats: Arc<ServerCounters>,
    task: tokio::task::JoinHandle<()>,
}

impl TlsServer {
    async fn start(cert: &str, client_auth: ClientAuth) -> Self {
        Self::start_with(cert, client_auth, ServerOptions::default()).await
    }

    async fn start_with(cert: &str, client_auth: ClientAuth, options: ServerOptions) -> Self {
        let config = server_tls(cert, client_auth);
        let spec = ListenerSpec::tls("127.0.0.1:0", config).unwrap();
        let server = Server::bind(vec![spec], options).await.unwrap();
        let port = server.local_addrs()[0].0.port();
        let (shutdown, stats) = (server.shutdown(), server.stats());
        let task = tokio::spawn(server.run(|info| {
            let tls = info.tls.as_ref().expect("a TLS listener");
            let summary = format!(
                "version={:?} suite={:?} client_certs={}",
                tls.version,
                tls.cipher_suite,
                tls.peer_certificates.len()
            );
            HandlerApp::new(move |_| Reply::new(200, summary.clone()))
        }));
        TlsServer {
            port,
            shutdown,
            stats,
            task,
        }
    }

    async fn stop(self) {
        self.shutdown.trigger();
        tokio::time::timeout(Duration::from_secs(15), self.task)
            .await
            .unwrap()
            .unwrap();
    }
}

fn client(verification: ServerVerification, identity: Option<&str>) -> ClientTls {
    ClientTls {
        verification,
        identity: identity.map(|name| Identity {
            chain: certs().join(format!("{name}.crt")),
            key: certs().join(format!("{name}.key")),
        }),
        versions: TlsVersions::default(),
    }
}

/// One GET over TLS to 127.0.0.1:`port` checked as `server_name`: the
/// body, or why there is none.
async fn get(port: u16, tls: &ClientTls, server_name: &str) -> Result<String, String> {
    get_with(port, tls::client_config(tls).unwrap(), server_name).await
}

/// [`get`] with a rustls configuration built by the test itself.
async fn get_with(
    port: u16,
    config: Arc<rustls::ClientConfig>,
    server_name: &str,
) -> Result<String, String> {
    let options = ClientOptions {
        tls: Some(config),
        server_name: Some(server_name.to_owned()),
        connect_timeout: Duration::from_secs(5),
        ..ClientOptions::default()
    };
    let target = format!("127.0.0.1:{port}");
    let request = FetchRequest::get("https", &format!("{server_name}:{port}"), "/");
    let results = fetch(&target, options, 1, vec![request])
        .await
        .map_err(|e| e.to_string())?;
    match results.into_iter().next().unwrap() {
        Ok(record) => Ok(String::from_utf8_lossy(&record.body).into_owned()),
        Err(e) => Err(e.to_string()),
    }
}

fn trust_dir(revocation: Revocation) -> Trust {
    Trust {
        dir: Some(certs().join("trust")),
        revocation,
        ..Trust::default()
    }
}

#[tokio::test]
async fn good_chain_is_accepted() {
    for cert in ["server-ec", "server-rsa"] {
        let server = TlsServer::start(cert, ClientAuth::None).await;
        for trust in [dev_ca(), trust_dir(Revocation::FullChain)] {
            for name in ["localhost", "127.0.0.1"] {
                let tls = client(ServerVerification::Verify(trust.clone()), None);
                let body = get(server.port, &tls, name).await;
                assert!(body.is_ok(), "{cert} as {name}: {body:?}");
            }
        }
        server.stop().await;
    }
}

#[tokio::test]
async fn unknown_ca_is_rejected() {
    let server = TlsServer::start("server-ec", ClientAuth::None).await;
    // A trust store whose only anchor did not sign the server's certificate.
    let stranger = Trust {
        file: Some(certs().join("client-ec.crt")),
        ..Trust::default()
    };
    let tls = client(ServerVerification::Verify(stranger), None);
    let err = get(server.port, &tls, "localhost").await.unwrap_err();
    assert!(err.contains("UnknownIssuer"), "{err}");
    server.stop().await;
}

#[tokio::test]
async fn wrong_host_name_is_rejected() {
    let server = TlsServer::start("server-ec", ClientAuth::None).await;
    let tls = client(ServerVerification::Verify(dev_ca()), None);
    let err = get(server.port, &tls, "wrong.example").await.unwrap_err();
    assert!(
        err.contains("is not valid for wrong.example, the name dialled"),
        "{err}"
    );
    server.stop().await;
}

#[tokio::test]
async fn revoked_server_certificate_is_rejected_with_crl_checks() {
    let server = TlsServer::start("server-revoked", ClientAuth::None).await;
    for revocation in [Revocation::EndEntity, Revocation::FullChain] {
        let tls = client(ServerVerification::Verify(trust_dir(revocation)), None);
        let err = get(server.port, &tls, "localhost").await.unwrap_err();
        assert!(err.contains("Revoked"), "{revocation:?}: {err}");
    }
    // The same chain passes without revocation checks: the CRL is what
    // rejected it.
    let tls = client(ServerVerification::Verify(trust_dir(Revocation::Off)), None);
    get(server.port, &tls, "localhost").await.unwrap();
    server.stop().await;
}

#[tokio::test]
async fn verification_off_accepts_anything() {
    let server = TlsServer::start("server-revoked", ClientAuth::None).await;
    let tls = client(ServerVerification::Off, None);
    get(server.port, &tls, "wrong.example").await.unwrap();
    server.stop().await;
}

fn required_client_certs() -> ClientAuth {
    ClientAuth::Required(Trust {
        file: Some(certs().join("ca.crt")),
        crls: vec![certs().join("ca.crl")],
        revocation: Revocation::FullChain,
        ..Trust::default()
    })
}

#[tokio::test]
async fn required_client_certificate_missing_is_rejected() {
    let server = TlsServer::start("server-ec", required_client_certs()).await;
    let tls = client(ServerVerification::Verify(dev_ca()), None);
    let err = get(server.port, &tls, "localhost").await.unwrap_err();
    assert!(!err.is_empty());
    assert_eq!(server.stats.tls_failures(), 1);
    let why = server.stats.last_tls_error().unwrap();
    assert!(why.contains("peer sent no certificates"), "{why}");
    server.stop().await;
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

/// Each rejected client certificate reaches the server's hook once, with
/// the peer's address and rustls' reason (RFC 8446 §4.4.2: no certificate,
/// or one that does not lead to a trusted CA), as h2svr logged them.
#[tokio::test]
async fn rejected_client_certificates_reach_the_hook_once_each() {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let hook = {
        let heard = heard.clone();
        HandshakeErrorHook::new(move |peer, why| {
            heard.lock().unwrap().push((peer, why.to_owned()));
        })
    };
    let options = ServerOptions {
        on_handshake_error: Some(hook),
        ..ServerOptions::default()
    };
    let server = TlsServer::start_with("server-ec", required_client_certs(), options).await;
    let without = client(ServerVerification::Verify(dev_ca()), None);
    assert!(get(server.port, &without, "localhost").await.is_err());
    assert!(
        get_with(server.port, stranger_client(), "localhost")
            .await
            .is_err()
    );
    let stats = server.stats.clone();
    // Stopping waits for every connection task, so each hook call is in.
    server.stop().await;
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

#[tokio::test]
async fn required_client_certificate_present_is_accepted() {
    let server = TlsServer::start("server-ec", required_client_certs()).await;
    for identity in ["client-ec", "client-rsa"] {
        let tls = client(ServerVerification::Verify(dev_ca()), Some(identity));
        let body = get(server.port, &tls, "localhost").await.unwrap();
        assert!(body.contains("client_certs=1"), "{identity}: {body}");
    }
    assert_eq!(server.stats.tls_failures(), 0);
    server.stop().await;
}

/// Runs openssl in `dir`, failing the test with its output if it fails.
fn openssl(dir: &std::path::Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `certs/` has no revoked client certificate, so one is made here with
/// the dev CA: a client certificate (serial 7E57) and a CRL that revokes
/// it. Returns the directory (the files live as long as it does), the
/// identity and the CRL.
fn revoked_client() -> (tempfile::TempDir, Identity, std::path::PathBuf) {
    require("openssl", "apt-get install openssl");
    let scratch = scratch_dir("revoked-client");
    let dir = scratch.path();
    let (ca_crt, ca_key) = (certs().join("ca.crt"), certs().join("ca.key"));
    std::fs::write(
        dir.join("ext.cnf"),
        "basicConstraints = critical, CA:false\n\
         keyUsage = critical, digitalSignature\n\
         extendedKeyUsage = clientAuth\n\
         authorityKeyIdentifier = keyid\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "ecparam",
            "-name",
            "prime256v1",
            "-genkey",
            "-noout",
            "-out",
            "client.key",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-key",
            "client.key",
            "-subj",
            "/CN=revoked-client",
            "-out",
            "client.csr",
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "client.csr",
            "-CA",
            ca_crt.to_str().unwrap(),
            "-CAkey",
            ca_key.to_str().unwrap(),
            "-set_serial",
            "0x7e57",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "client.crt",
        ],
    );
    std::fs::write(
        dir.join("ca.cnf"),
        format!(
            "[ ca ]\ndefault_ca = dev\n[ dev ]\ndatabase = index.txt\n\
             certificate = {}\nprivate_key = {}\ncrlnumber = crlnumber\n\
             default_md = sha256\ndefault_crl_days = 2\n",
            ca_crt.display(),
            ca_key.display()
        ),
    )
    .unwrap();
    // openssl's CA database: one revoked entry (R, expiry, revocation
    // time, serial, file, subject).
    std::fs::write(
        dir.join("index.txt"),
        "R\t491231235959Z\t240101000000Z\t7E57\tunknown\t/CN=revoked-client\n",
    )
    .unwrap();
    std::fs::write(dir.join("crlnumber"), "01\n").unwrap();
    openssl(
        dir,
        &["ca", "-gencrl", "-config", "ca.cnf", "-out", "revoked.crl"],
    );
    let identity = Identity {
        chain: dir.join("client.crt"),
        key: dir.join("client.key"),
    };
    let crl = dir.join("revoked.crl");
    (scratch, identity, crl)
}

#[tokio::test]
async fn revoked_client_certificate_is_rejected_with_crl_checks() {
    let (_dir, identity, crl) = revoked_client();
    let trust = |revocation| Trust {
        file: Some(certs().join("ca.crt")),
        crls: vec![crl.clone()],
        revocation,
        ..Trust::default()
    };
    let tls = ClientTls {
        identity: Some(identity),
        ..client(ServerVerification::Verify(dev_ca()), None)
    };
    for revocation in [Revocation::EndEntity, Revocation::FullChain] {
        let server = TlsServer::start("server-ec", ClientAuth::Required(trust(revocation))).await;
        assert!(get(server.port, &tls, "localhost").await.is_err());
        let why = server.stats.last_tls_error().unwrap();
        assert!(why.contains("Revoked"), "{revocation:?}: {why}");
        server.stop().await;
    }
    // Without revocation checks the same certificate is fine.
    let server = TlsServer::start("server-ec", ClientAuth::Required(trust(Revocation::Off))).await;
    let body = get(server.port, &tls, "localhost").await.unwrap();
    assert!(body.contains("client_certs=1"), "{body}");
    server.stop().await;
}

#[tokio::test]
async fn optional_client_certificate_may_be_missing() {
    let server = TlsServer::start("server-ec", ClientAuth::Optional(dev_ca())).await;
    let tls = client(ServerVerification::Verify(dev_ca()), None);
    let body = get(server.port, &tls, "localhost").await.unwrap();
    assert!(body.contains("client_certs=0"), "{body}");
    server.stop().await;
}

/// TLS 1.3 by default; a client limited to TLS 1.2 gets one of the
/// 3GPP TS 33.210 ECDHE suites.
#[tokio::test]
async fn tls13_by_default_and_tls12_on_request() {
    let server = TlsServer::start("server-ec", ClientAuth::None).await;
    let tls = client(ServerVerification::Verify(dev_ca()), None);
    let body = get(server.port, &tls, "localhost").await.unwrap();
    assert!(body.contains("version=Some(TLSv1_3)"), "{body}");
    let tls12 = ClientTls {
        versions: TlsVersions::Tls12Only,
        ..tls
    };
    let body = get(server.port, &tls12, "localhost").await.unwrap();
    assert!(body.contains("version=Some(TLSv1_2)"), "{body}");
    assert!(body.contains("TLS_ECDHE_ECDSA_WITH_"), "{body}");
    server.stop().await;
}

/// curl, with and without a client certificate, against a server that
/// requires one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curl_client_certificate() {
    require(CURL.0, CURL.1);
    let server = TlsServer::start("server-rsa", required_client_certs()).await;
    let url = format!("https://localhost:{}/", server.port);
    let ca = certs().join("ca.crt");
    let mut with = Command::new("curl");
    with.args(["-sS", "--http2", "--max-time", "10", "--cacert"])
        .arg(&ca)
        .arg("--cert")
        .arg(certs().join("client-ec.crt"))
        .arg("--key")
        .arg(certs().join("client-ec.key"))
        .arg(&url);
    let out = run_peer(with, Duration::from_secs(20)).await;
    assert!(out.status.success(), "{}", text(&out));
    // curl (OpenSSL) sends the chain it can build up to the CA, so one or two.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("client_certs=") && !stdout.contains("client_certs=0"),
        "{}",
        text(&out)
    );
    let mut without = Command::new("curl");
    without
        .args(["-sS", "--http2", "--max-time", "10", "--cacert"])
        .arg(&ca)
        .arg(&url);
    let out = run_peer(without, Duration::from_secs(20)).await;
    assert!(!out.status.success(), "{}", text(&out));
    server.stop().await;
}

/// RFC 9113 §3.2: HTTP/2 over TLS exists only where ALPN selected `h2`. A
/// server that selects nothing (an h2sim listener whose configuration
/// offers no protocol; it would take the preface) fails a client that
/// offered only `h2` at the handshake's end, and sends nothing of HTTP/2.
#[tokio::test]
async fn a_server_that_selects_no_protocol_is_not_spoken_h2_to() {
    let mut config = (*server_tls("server-ec", ClientAuth::None)).clone();
    config.alpn_protocols.clear();
    let spec = ListenerSpec::tls("127.0.0.1:0", Arc::new(config)).unwrap();
    let server = Server::bind(vec![spec], ServerOptions::default())
        .await
        .unwrap();
    let port = server.local_addrs()[0].0.port();
    let shutdown = server.shutdown();
    let task = tokio::spawn(server.run(|_| HandlerApp::new(|_| Reply::new(200, "ok"))));
    let tls = client(ServerVerification::Off, None);
    let err = get(port, &tls, "localhost").await.unwrap_err();
    assert!(err.contains("chose no application protocol"), "{err}");
    shutdown.trigger();
    tokio::time::timeout(Duration::from_secs(15), task)
        .await
        .unwrap()
        .unwrap();
}

/// A TLS handshake that gets no answer (RFC 8446 §4.1.2: the server owes
/// a ServerHello) is reported as the handshake's, not as the TCP connect
/// that had succeeded.
#[tokio::test]
async fn a_silent_server_times_the_handshake_out() {
    // Never accepted: the kernel completes the TCP handshake from its backlog.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let options = ClientOptions {
        tls: Some(tls::client_config(&client(ServerVerification::Off, None)).unwrap()),
        server_name: Some("localhost".to_owned()),
        connect_timeout: Duration::from_millis(300),
        ..ClientOptions::default()
    };
    let request = FetchRequest::get("https", &format!("localhost:{}", addr.port()), "/");
    let err = fetch(&addr.to_string(), options, 1, vec![request])
        .await
        .map_err(|e| e.to_string())
        .and_then(|mut r| r.remove(0).map_err(|e| e.to_string()))
        .unwrap_err();
    assert!(
        err.ends_with(&format!(
            "TLS handshake with {addr} got no answer within 300ms"
        )),
        "{err}"
    );
}
