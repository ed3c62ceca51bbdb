//! What the tokio tests share. The runtime-agnostic part (the test service,
//! the dev certificates, peer programs run with a timeout, the rule that a
//! missing peer fails its test with the way to install it) is the interop
//! matrix's, shared with the glommio suite; here is the tokio part: the
//! service served in-process, TLS configurations, and peers run off the
//! runtime's worker threads.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../h2sim-glommio/tests/matrix/mod.rs"]
pub mod matrix;

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use h2sim_proto::{RequestHead, ResponseHead};
use h2sim_tokio::tls::{
    self, ClientAuth, ClientTls, Identity, ServerTls, ServerVerification, TlsVersions, Trust,
};
use h2sim_tokio::{
    HandlerApp, ListenerSpec, Push, Reply, Request, Server, ServerCounters, ServerOptions, Shutdown,
};
use matrix::certs;

/// Runs blocking `work` (a peer program, mostly) off the runtime's worker
/// threads, so a server in this process keeps them meanwhile.
pub async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work).await.unwrap()
}

/// [`matrix::run_peer`] off the runtime's worker threads.
pub async fn run_peer(cmd: Command, timeout: Duration) -> Output {
    blocking(move || matrix::run_peer(cmd, timeout)).await
}

/// The matrix's test service ([`matrix::service`]) as a tokio handler.
pub fn service(req: Request) -> Reply {
    let path = String::from_utf8_lossy(&req.head.path);
    let answer = matrix::service(&path, &req.body);
    let mut reply = Reply::new(answer.status, answer.body);
    if let Some(content_type) = answer.content_type {
        reply.head = reply.head.field("content-type", content_type);
    }
    for (path, content_type, body) in answer.pushes {
        reply.pushes.push(Push {
            request: RequestHead::new(
                "GET",
                req.head.scheme.clone(),
                req.head.authority.clone(),
                path,
            ),
            head: ResponseHead::new(200).field("content-type", content_type),
            body: Bytes::from_static(body),
        });
    }
    reply
}

/// A server running `service` in this process.
pub struct TestServer {
    pub addrs: Vec<(SocketAddr, bool)>,
    pub shutdown: Shutdown,
    pub stats: Arc<ServerCounters>,
    pub task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    /// The first plain (`tls == false`) or TLS address.
    pub fn addr(&self, tls: bool) -> SocketAddr {
        self.addrs
            .iter()
            .find(|(_, t)| *t == tls)
            .map(|(a, _)| *a)
            .expect("no listener of that kind")
    }

    /// Stops the server gracefully and waits for it.
    pub async fn stop(self) {
        self.shutdown.trigger();
        tokio::time::timeout(Duration::from_secs(15), self.task)
            .await
            .expect("server did not stop in time")
            .unwrap();
    }
}

pub async fn start_with(specs: Vec<ListenerSpec>, options: ServerOptions) -> TestServer {
    let server = Server::bind(specs, options).await.unwrap();
    TestServer {
        addrs: server.local_addrs(),
        shutdown: server.shutdown(),
        stats: server.stats(),
        task: tokio::spawn(server.run(|_| HandlerApp::new(service))),
    }
}

/// The test service on a plain and a TLS listener on 127.0.0.1.
pub async fn start() -> TestServer {
    start_with(
        vec![
            ListenerSpec::plain("127.0.0.1:0").unwrap(),
            ListenerSpec::tls("127.0.0.1:0", server_tls("server-ec", ClientAuth::None)).unwrap(),
        ],
        ServerOptions::default(),
    )
    .await
}

/// A TLS configuration with the `name` certificate from `certs/`.
pub fn server_tls(name: &str, client_auth: ClientAuth) -> Arc<rustls::ServerConfig> {
    tls::server_config(&ServerTls {
        identity: Identity {
            chain: certs().join(format!("{name}.crt")),
            key: certs().join(format!("{name}.key")),
        },
        client_auth,
        versions: TlsVersions::default(),
    })
    .unwrap()
}

/// Trust in the dev CA (file), without revocation checks.
pub fn dev_ca() -> Trust {
    Trust {
        file: Some(certs().join("ca.crt")),
        ..Trust::default()
    }
}

/// A client TLS configuration trusting the dev CA.
pub fn client_tls() -> Arc<rustls::ClientConfig> {
    tls::client_config(&ClientTls {
        verification: ServerVerification::Verify(dev_ca()),
        identity: None,
        versions: TlsVersions::default(),
    })
    .unwrap()
}
