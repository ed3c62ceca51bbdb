//! What every host of the core needs besides the protocol, written once so
//! that each runtime adapter (tokio, glommio, or a third one embedding the
//! core) keeps only what depends on its runtime: accepting, connecting,
//! reading, writing, timers, spawning, signals.
//!
//! Everything here is Sans-IO like the rest of the crate: no socket, no
//! clock, no runtime, no name lookup (an adapter resolves names its own way
//! and hands the answer to [`HostPort::addresses`]).
//!
//! - [`addr`]: addresses as people write them.
//! - [`Driver`]: the per-connection loop without its runtime — the
//!   [`ReadBuf`] to read into, the [`Outbox`] to write from, one deadline,
//!   shutdown and a [`State`]; a runtime adds its socket calls and a timer.
//! - [`Outbox`]: the core's output on its way to the socket.
//! - [`DriverOptions`] and [`FinalFlush`]: the driver's output bound, and
//!   how long its last bytes may take to leave (idle, head-read and drain
//!   deadlines are the core's own timers, in `Config`).
//! - [`info`]: what a connection's factory learns, and ALPN → protocol →
//!   [`Connection`](crate::Connection).
//! - [`client`]: the client's options ([`ClientOptions`], generic over
//!   what the runtime adds), protocol choice, errors, loss and reconnect
//!   policy ([`Slot`], [`Watched`]).
//! - [`server`]: the server's options ([`ServerOptions`], likewise),
//!   listener specs, start errors, the handshake-error hook, and one
//!   [`ServerStats`] shape.
//! - `tls` (cargo feature `tls`, off by default): the rustls configuration
//!   builders — trust stores with CRLs, client certificates, `-V pass`,
//!   in-memory and self-signed identities, system roots — the way
//!   quinn-proto keeps its rustls glue behind a feature; and `TlsSession`,
//!   a session between the outbox and read buffer and a socket's bytes,
//!   which the adapters drive over their sockets.

pub mod addr;
pub mod client;
mod driver;
pub mod info;
mod lifecycle;
mod outbox;
mod read_buf;
pub mod server;
mod stall;
#[cfg(feature = "tls")]
pub mod tls;
#[cfg(feature = "tls")]
mod tls_session;

pub use addr::{AddrError, HostPort, Scheme};
pub use client::{
    ClientError, ClientOptions, ClientOutcome, ClientProtocol, Dial, Next, Reconnect, Slot, Target,
    Watched,
};
pub use driver::{Driver, State};
#[cfg(feature = "tls")]
pub use info::TlsInfo;
pub use info::{ALPN_H2, ALPN_HTTP1, ALPN_HTTP10, ConnectionInfo, ServerConfigs, accepted_local};
pub use lifecycle::{DriverOptions, Ending, FinalFlush, LINGER, LINGER_BYTES};
pub use outbox::Outbox;
pub use read_buf::{ReadBuf, ReadPool};
pub use server::{
    ACCEPT_ERROR_EVERY, AcceptErrorHook, DEFER_ACCEPT_SECS, HandshakeErrorHook, LISTEN_BACKLOG,
    ListenerSpec, ServerCounters, ServerError, ServerOptions, ServerStats, UNSENT_LIMIT,
};
#[cfg(feature = "tls")]
pub use tls_session::TlsSession;
