//! The interop matrix (`h2sim-glommio/tests/matrix/mod.rs`, written for any
//! runtime and included through `common`) run against the tokio server and
//! with the tokio client: the server on a runtime of its own with two
//! worker threads, each fetch on a runtime of its own too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::SocketAddr;

use bytes::Bytes;
use common::matrix::{ClientSpec, Harness, Proto, Req, Resp, ServerSummary};
use common::{client_tls, matrix};
use h2sim_proto::RequestHead;
use h2sim_tokio::{ClientOptions, ClientProtocol, FetchRequest, fetch};
use tokio::runtime::Runtime;

fn runtime(worker_threads: usize) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads)
        .enable_all()
        .build()
        .unwrap()
}

struct Tokio;

/// [`common::TestServer`] with the runtime it runs on.
struct TokioServer {
    server: common::TestServer,
    runtime: Runtime,
}

impl matrix::TestServer for TokioServer {
    fn addr(&self, tls: bool) -> SocketAddr {
        self.server.addr(tls)
    }

    fn stop(self) -> ServerSummary {
        let stats = self.server.stats.clone();
        self.runtime.block_on(self.server.stop());
        ServerSummary {
            tls_failures: stats.tls_failures(),
            last_tls_error: stats.last_tls_error(),
        }
    }
}

impl Harness for Tokio {
    type Server = TokioServer;

    fn start(&self) -> TokioServer {
        let runtime = runtime(2);
        let server = runtime.block_on(common::start());
        TokioServer { server, runtime }
    }

    fn fetch(
        &self,
        target: &str,
        client: &ClientSpec,
        requests: Vec<Req>,
    ) -> Vec<Result<Resp, String>> {
        let options = ClientOptions {
            connections: client.connections,
            protocol: match client.protocol {
                Proto::Http2 => ClientProtocol::Http2,
                Proto::Http1 => ClientProtocol::Http1,
                Proto::Negotiate => ClientProtocol::Negotiate,
            },
            tls: client.tls.then(client_tls),
            server_name: client.tls.then(|| "localhost".to_owned()),
            ..ClientOptions::default()
        };
        let requests = requests
            .into_iter()
            .map(|r| FetchRequest {
                head: RequestHead::new(r.method, r.scheme, r.authority, r.path),
                body: Bytes::from(r.body),
            })
            .collect();
        runtime(1)
            .block_on(fetch(target, options, client.in_flight, requests))
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

matrix_tests!(Tokio);
