//! A small server on h2sim-tokio: answers every request with a short text,
//! pushes `/pushed.css` with `/push`, and stops gracefully on Ctrl-C.
//!
//!     cargo run -p h2sim-tokio --example serve -- 127.0.0.1:8080 tls=[::1]:8443
//!
//! Plain listeners tell HTTP/2 prior knowledge from HTTP/1.1 (and h2c
//! upgrades); `tls=` listeners use the dev certificate in `certs/` and ALPN.

use std::path::PathBuf;

use bytes::Bytes;
use h2sim_proto::{RequestHead, ResponseHead};
use h2sim_tokio::tls::{self, ClientAuth, Identity, ServerTls, TlsVersions};
use h2sim_tokio::{HandlerApp, ListenerSpec, Push, Reply, Request, Server, ServerOptions};

fn answer(req: Request) -> Reply {
    let mut reply = Reply::new(
        200,
        format!(
            "{} {} ({} body bytes)\n{}\n",
            String::from_utf8_lossy(&req.head.method),
            String::from_utf8_lossy(&req.head.path),
            req.body.len(),
            "-".repeat(64)
        ),
    );
    if req.head.path == "/push" {
        reply.pushes.push(Push {
            request: RequestHead::new("GET", req.head.scheme, req.head.authority, "/pushed.css"),
            head: ResponseHead::new(200).field("content-type", "text/css"),
            body: Bytes::from_static(b"body { color: green }\n"),
        });
    }
    reply
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let certs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../certs");
    let tls_config = tls::server_config(&ServerTls {
        identity: Identity {
            chain: certs.join("server-ec.crt"),
            key: certs.join("server-ec.key"),
        },
        client_auth: ClientAuth::None,
        versions: TlsVersions::default(),
    })?;
    let mut specs = Vec::new();
    for arg in std::env::args().skip(1) {
        specs.push(match arg.strip_prefix("tls=") {
            Some(addr) => ListenerSpec::tls(addr, tls_config.clone())?,
            None => ListenerSpec::plain(&arg)?,
        });
    }
    if specs.is_empty() {
        specs.push(ListenerSpec::plain("127.0.0.1:8080")?);
    }
    let server = Server::bind(specs, ServerOptions::default()).await?;
    for (addr, tls) in server.local_addrs() {
        println!("listening on {addr}{}", if tls { " (TLS)" } else { "" });
    }
    server.shutdown().trigger_on_signals()?;
    server.run(|_| HandlerApp::new(answer)).await;
    Ok(())
}
