//! Runs the h2sim protocol core over tokio: TCP and TLS listeners and
//! connectors, one task per connection, and nothing else.
//!
//! What a connection says is decided by `h2sim-proto`: its [`Connection`]
//! and the [`Application`] on top of it (the Sans-IO contract). This crate
//! only accepts and connects, does TLS (rustls with the `ring` provider),
//! moves bytes (one vectored write per loop turn, reads into one reused
//! buffer, `TCP_NODELAY`), fires timers and reports the time.
//!
//! - [`Server`]: listens on any number of addresses, plain (HTTP/2 prior
//!   knowledge, HTTP/1.1 and its h2c upgrade, told apart by the first
//!   bytes) or TLS (protocol by ALPN), and runs an application per
//!   connection made by the caller's factory; [`HandlerApp`] turns a plain
//!   `FnMut(Request) -> Reply` into one. Graceful shutdown through
//!   [`Shutdown`].
//! - [`connect`]: N client connections to a target, each running an
//!   application, replaced when lost if asked; [`fetch`] sends a list of
//!   requests that way and returns each response with its timing and pushes.
//! - [`tls`]: certificates, keys, trust stores with CRLs, and the rustls
//!   configurations for both sides.
//!
//! # Example
//!
//! ```
//! use h2sim_tokio::{fetch, FetchRequest, ClientOptions, HandlerApp, ListenerSpec, Reply,
//!                   Server, ServerOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::bind(vec![ListenerSpec::plain("127.0.0.1:0")?], ServerOptions::default())
//!     .await?;
//! let (addr, _tls) = server.local_addrs()[0];
//! let shutdown = server.shutdown();
//! let running = tokio::spawn(server.run(|_info| HandlerApp::new(|req| Reply::new(200, req.head.path))));
//!
//! let request = FetchRequest::get("http", &addr.to_string(), "/hello");
//! let results = fetch(&addr.to_string(), ClientOptions::default(), 1, vec![request]).await?;
//! let response = results.into_iter().next().unwrap()?;
//! assert_eq!(response.body, "/hello");
//!
//! shutdown.trigger();
//! running.await?;
//! # Ok(())
//! # }
//! ```
//!
//! [`Connection`]: h2sim_proto::Connection
//! [`Application`]: h2sim_proto::Application

mod client;
mod driver;
mod fetch;
mod info;
mod listen;
mod server;
mod shutdown;
pub mod tls;

pub use client::{ClientError, ClientOptions, ClientOutcome, ClientProtocol, Reconnect, connect};
pub use driver::DriverOptions;
pub use fetch::{FetchRequest, PushedResponse, RequestError, ResponseRecord, fetch};
pub use h2sim_proto::handler::{DEFAULT_MAX_REQUEST_BODY, HandlerApp, Push, Reply, Request};
pub use info::{ConnectionInfo, TlsInfo};
pub use listen::{AddrError, HostPort, Scheme};
pub use server::{
    HandshakeErrorHook, ListenerSpec, Server, ServerError, ServerOptions, ServerStats,
};
pub use shutdown::Shutdown;
