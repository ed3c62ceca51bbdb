//! Runs the h2sim protocol core over tokio: TCP and TLS listeners and
//! connectors, one task per connection, and nothing else.
//!
//! What a connection says is decided by `h2sim-proto`: its [`Connection`]
//! and the [`Application`] on top of it (the Sans-IO contract). This crate
//! only accepts and connects, moves bytes (one vectored write per loop
//! turn, reads into one reused buffer, `TCP_NODELAY`; over TLS, handshake
//! included, through the core's `TlsSession`, rustls with the `ring`
//! provider), fires timers and reports the time.
//!
//! - [`Server`]: listens on any number of addresses, plain (HTTP/2 prior
//!   knowledge, HTTP/1.1 and its h2c upgrade, told apart by the first
//!   bytes) or TLS (protocol by ALPN), and runs an application per
//!   connection made by the caller's factory; [`HandlerApp`] turns a plain
//!   `FnMut(Request) -> Reply` into one. Graceful shutdown through
//!   [`Shutdown`].
//! - [`connect`]: N client connections to a target, each running an
//!   application, replaced when lost if asked; [`fetch()`] sends a list of
//!   requests that way and returns each response with its timing and pushes.
//!
//! Everything that does not depend on tokio — addresses, the options but
//! for tokio's part of them (the client's [`Shutdown`]), errors, the
//! reconnect policy, the outbox and the final flush, the rustls
//! configuration builders (`h2sim_proto::host::tls`, feature `tls`) and the
//! TLS session between the core's buffers and the socket —
//! lives once in [`h2sim_proto::host`], shared with any other runtime's
//! adapter; idle, drain and head-read deadlines are the core's own
//! timers, set in its `Config`.
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
mod listen;
mod server;
mod shutdown;
mod timer;

pub use client::{ClientOptions, connect};
pub use fetch::fetch;
pub use h2sim_proto::fetch::{FetchRequest, Outcome, PushedResponse, RequestError, ResponseRecord};
pub use h2sim_proto::handler::{HandlerApp, Push, Reply, Request};
pub use h2sim_proto::host::{
    AddrError, ClientError, ClientOutcome, ClientProtocol, ConnectionInfo, DriverOptions,
    HandshakeErrorHook, HostPort, ListenerSpec, Reconnect, Scheme, ServerCounters, ServerError,
    ServerStats, TlsInfo, tls,
};
pub use server::{Server, ServerOptions};
pub use shutdown::Shutdown;
