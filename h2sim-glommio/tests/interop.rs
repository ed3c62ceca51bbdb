//! The interop matrix (`matrix/mod.rs`, written for any runtime) run
//! against the glommio server and with the glommio client: the server on
//! two executors (so the cases also cross `SO_REUSEPORT`'s spreading), the
//! client on one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod matrix;

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use h2sim_glommio::{
    ClientOptions, ClientProtocol, Executors, FetchRequest, HandlerApp, ListenerSpec, Push, Reply,
    Request, RunningServer, Server, ServerOptions, Shutdown, fetch,
};
use h2sim_proto::host::tls::{
    self, ClientAuth, ClientTls, Identity, ServerTls, ServerVerification, TlsVersions, Trust,
};
use h2sim_proto::{RequestHead, ResponseHead};
use matrix::{ClientSpec, Harness, Proto, Req, Resp, ServerSummary, TestServer};

/// The matrix's service as a glommio handler.
fn handle(req: Request) -> Reply {
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

fn server_tls() -> Arc<rustls::ServerConfig> {
    let certs = matrix::certs();
    tls::server_config(&ServerTls {
        identity: Identity {
            chain: certs.join("server-ec.crt"),
            key: certs.join("server-ec.key"),
        },
        client_auth: ClientAuth::None,
        versions: TlsVersions::default(),
    })
    .unwrap()
}

struct Glommio;

struct GlommioServer {
    addrs: Vec<(SocketAddr, bool)>,
    shutdown: Shutdown,
    running: RunningServer,
}

impl TestServer for GlommioServer {
    fn addr(&self, tls: bool) -> SocketAddr {
        self.addrs
            .iter()
            .find(|(_, t)| *t == tls)
            .map(|(a, _)| *a)
            .expect("no listener of that kind")
    }

    fn stop(self) -> ServerSummary {
        self.shutdown.trigger();
        let stats = self.running.join();
        ServerSummary {
            tls_failures: stats.tls_failures(),
            last_tls_error: stats.last_tls_error(),
        }
    }
}

impl Harness for Glommio {
    type Server = GlommioServer;

    fn start(&self) -> GlommioServer {
        let specs = vec![
            ListenerSpec::plain("127.0.0.1:0").unwrap(),
            ListenerSpec::tls("127.0.0.1:0", server_tls()).unwrap(),
        ];
        let options = ServerOptions {
            runtime: Executors::new(2),
            ..ServerOptions::default()
        };
        let server = Server::bind(specs, options).unwrap();
        let shutdown = server.shutdown();
        let running = server.start(|_| HandlerApp::new(handle)).unwrap();
        GlommioServer {
            addrs: running.local_addrs(),
            shutdown,
            running,
        }
    }

    fn fetch(
        &self,
        target: &str,
        client: &ClientSpec,
        requests: Vec<Req>,
    ) -> Vec<Result<Resp, String>> {
        let tls = client.tls.then(|| {
            tls::client_config(&ClientTls {
                verification: ServerVerification::Verify(Trust {
                    file: Some(matrix::certs().join("ca.crt")),
                    ..Trust::default()
                }),
                identity: None,
                versions: TlsVersions::default(),
            })
            .unwrap()
        });
        let options = ClientOptions {
            connections: client.connections,
            protocol: match client.protocol {
                Proto::Http2 => ClientProtocol::Http2,
                Proto::Http1 => ClientProtocol::Http1,
                Proto::Negotiate => ClientProtocol::Negotiate,
            },
            tls,
            server_name: client.tls.then(|| "localhost".to_owned()),
            runtime: Executors::new(1).into(),
            ..ClientOptions::default()
        };
        let requests = requests
            .into_iter()
            .map(|r| FetchRequest {
                head: RequestHead::new(r.method, r.scheme, r.authority, r.path),
                body: Bytes::from(r.body),
            })
            .collect();
        fetch(target, options, client.in_flight, requests)
            .unwrap_or_else(|e| panic!("fetch {target}: {e}"))
            .into_iter()
            .map(|r| {
                r.map(|record| Resp {
                    status: record.head.status,
                    body: record.body.to_vec(),
                    pushes: record
                        .pushes
                        .iter()
                        .map(|p| {
                            let path = String::from_utf8_lossy(&p.request.path).into_owned();
                            (path, p.body.to_vec())
                        })
                        .collect(),
                })
                .map_err(|e| e.to_string())
            })
            .collect()
    }
}

matrix_tests!(Glommio);
