//! Runs the h2sim protocol core over glommio: io_uring, one executor per
//! core, nothing shared between executors while serving. The types a
//! front end handles (addresses, errors, outcomes, connection facts,
//! stats) are `h2sim_proto::host`'s, the same for every runtime; what
//! differs is the runtime's: [`Server::run`], [`connect`] and [`fetch()`]
//! block the calling thread and run their own executors, and applications
//! need not be `Send` on the server (each lives on one executor's thread).
//!
//! What a connection says is decided by `h2sim-proto`: its [`Connection`]
//! and the [`Application`] on top of it (the Sans-IO contract). This crate
//! only accepts and connects, does TLS (rustls, its handshake driven by
//! hand, its records through the core's `TlsSession`), moves bytes (one
//! write per loop turn, reads into one reused buffer, `TCP_NODELAY`),
//! fires timers and reports the time.
//!
//! - [`Server`]: every executor binds every listen address with
//!   `SO_REUSEPORT`, so the kernel spreads connections over them; plain
//!   listeners tell HTTP/2 prior knowledge from HTTP/1.1 (and its h2c
//!   upgrade) by the first bytes, TLS listeners by ALPN. Graceful shutdown
//!   through [`Shutdown`]; per-executor counts merged into [`ServerStats`]
//!   at the end. [`HandlerApp`] turns a plain `FnMut(Request) -> Reply`
//!   into an application.
//! - [`connect`]: N client connections dealt out over the executors, each
//!   running an application; [`fetch()`] sends a list of requests that way.
//! - [`Executors`]: how many, pinned to which CPUs, and glommio's
//!   `io_memory` (kept small so a normal user's memlock limit suffices).
//!   Where io_uring is unavailable, starting fails with a
//!   [`RuntimeError`] that names the tokio runtime; [`probe`] checks
//!   before anything is bound.
//! - TLS takes rustls configurations as they are;
//!   `h2sim_proto::host::tls` (feature `tls`, re-exported here as [`tls`])
//!   builds them: certificates, keys, trust stores with CRLs, ALPN.
//!
//! Everything that does not depend on glommio — addresses, the options
//! but for glommio's part of them ([`ClientRuntime`], the server's
//! [`Executors`]), errors, the reconnect policy, the outbox and the final
//! flush, the TLS builders — lives once in [`h2sim_proto::host`], shared
//! with any other runtime's adapter; idle, drain and head-read deadlines
//! are the core's own timers, set in its `Config`.
//!
//! # Example
//!
//! ```
//! use h2sim_glommio::{fetch, ClientOptions, Executors, FetchRequest, HandlerApp,
//!                     ListenerSpec, Reply, Server, ServerOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let options = ServerOptions { runtime: Executors::new(1), ..ServerOptions::default() };
//! let server = Server::bind(vec![ListenerSpec::plain("127.0.0.1:0")?], options)?;
//! let (addr, _tls) = server.local_addrs()[0];
//! let shutdown = server.shutdown();
//! let running = server.start(|_info| HandlerApp::new(|req| Reply::new(200, req.head.path)))?;
//!
//! let client = ClientOptions { runtime: Executors::new(1).into(), ..ClientOptions::default() };
//! let request = FetchRequest::get("http", &addr.to_string(), "/hello");
//! let results = fetch(&addr.to_string(), client, 1, vec![request])?;
//! let response = results.into_iter().next().unwrap()?;
//! assert_eq!(response.body, "/hello");
//!
//! shutdown.trigger();
//! let stats = running.join();
//! assert_eq!(stats.accepted(), 1);
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
mod runtime;
mod server;
mod shutdown;
mod transport;

pub use client::{ClientOptions, ClientRuntime, connect};
pub use fetch::fetch;
pub use h2sim_proto::fetch::{FetchRequest, Outcome, PushedResponse, RequestError, ResponseRecord};
pub use h2sim_proto::handler::{HandlerApp, Push, Reply, Request};
pub use h2sim_proto::host::{
    AddrError, ClientError, ClientOutcome, ClientProtocol, ConnectionInfo, DriverOptions,
    HandshakeErrorHook, HostPort, ListenerSpec, Reconnect, Scheme, ServerError, ServerStats,
    TlsInfo, tls,
};
pub use runtime::{DEFAULT_IO_MEMORY, Executors, RuntimeError, parse_cpu_list, probe};
pub use server::{RunningServer, Server, ServerOptions};
pub use shutdown::Shutdown;
