//! A minimal hyper server for bench/run.sh: `/1k`, `/4k`, `/10k` (any
//! `/Nk`) are answered 200 with N KiB, anything else with 1 KiB; h2c prior
//! knowledge and HTTP/1.1 on one port (hyper-util's auto builder), tokio
//! workers as TOKIO_WORKER_THREADS says. The request body is read to its
//! end first, as h2sim does.
//!
//! usage: bench-hyper-server PORT

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use tokio::net::TcpListener;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let port: u16 = args
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| std::io::Error::other("usage: bench-hyper-server PORT"))?;
    let body = Bytes::from(vec![b'x'; 1024 * 1024]);
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await?;
    loop {
        let (tcp, _) = listener.accept().await?;
        let _ = tcp.set_nodelay(true);
        let body = body.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let body = body.clone();
                async move {
                    let kib = req
                        .uri()
                        .path()
                        .strip_prefix('/')
                        .and_then(|p| p.strip_suffix('k'))
                        .and_then(|n| n.parse::<usize>().ok())
                        .map_or(1, |n| n.min(1024));
                    let _ = req.into_body().collect().await;
                    Ok::<_, Infallible>(Response::new(Full::new(body.slice(..kib * 1024))))
                }
            });
            let mut builder = Builder::new(TokioExecutor::new());
            builder.http2().max_concurrent_streams(1000);
            let _ = builder.serve_connection(TokioIo::new(tcp), service).await;
        });
    }
}
