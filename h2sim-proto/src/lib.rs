//! Sans-IO HTTP/2 (RFC 9113) and HTTP/1.1 (RFC 9112) protocol core of h2sim.
//!
//! Bytes in, bytes and events out: nothing here opens a socket, reads a clock
//! or spawns a thread, so any event loop can drive it — tokio, glommio, a
//! blocking `std::net` loop (`examples/blocking.rs`), or a test on a virtual
//! clock. [`Connection`] is the entry point, one type for both protocols and
//! both roles (a server can tell the protocol from the first bytes, and
//! takes `Upgrade: h2c`); [`Endpoint`] joins it to an [`Application`] that
//! answers its events. [`frame`] and [`hpack`] are the HTTP/2 wire layer
//! beneath it, public for tools that speak HTTP/2 frame by frame (test
//! peers, fuzzers).
//!
//! # Example
//!
//! A client and a server joined in memory: the driver moves bytes between
//! them, and each application reacts to events with commands. The loop is
//! written out here because it is the one every driver runs; tests need
//! not write it: the cargo feature `pair` (off by default) offers
//! `pair::Pair`, which joins two connections or endpoints on a virtual
//! clock, delivers bytes split at random points, and steps or drives them.
//!
//! ```
//! use std::time::Instant;
//! use bytes::{Bytes, BytesMut};
//! use h2sim_proto::{Config, Connection, Event, RequestHead, ResponseHead};
//!
//! let now = Instant::now();
//! let mut client = Connection::client(Config::default(), now)?;
//! let mut server = Connection::server(Config::default(), now)?;
//!
//! let request = RequestHead::new("GET", "http", "example.com", "/hello");
//! let stream = client.send_request(request, true)?;
//!
//! // Moves everything `from` has to write into `to`'s input.
//! fn pump(from: &mut Connection, to: &mut Connection, now: Instant) {
//!     let mut wire = BytesMut::new();
//!     while let Some(chunk) = from.poll_transmit(now) {
//!         wire.extend_from_slice(&chunk);
//!     }
//!     to.handle_input(now, &mut wire);
//! }
//!
//! let mut body = Vec::new();
//! for _ in 0..4 {
//!     pump(&mut client, &mut server, now);
//!     while let Some(event) = server.poll_event() {
//!         if let Event::Request { stream, head, .. } = event {
//!             assert_eq!(head.path, "/hello");
//!             server.send_response(stream, ResponseHead::new(200), false)?;
//!             server.send_data(stream, Bytes::from_static(b"hi"), true)?;
//!         }
//!     }
//!     pump(&mut server, &mut client, now);
//!     while let Some(event) = client.poll_event() {
//!         if let Event::Data { stream: s, data, .. } = event {
//!             assert_eq!(s, stream);
//!             body.extend_from_slice(&data);
//!         }
//!     }
//! }
//! assert_eq!(body, b"hi");
//! # Ok::<(), h2sim_proto::UserError>(())
//! ```

mod application;
mod close;
mod config;
mod connection;
mod error;
mod event;
pub mod fetch;
pub mod frame;
mod h1;
mod h2;
pub mod handler;
mod hash;
pub mod host;
pub mod hpack;
mod message;
pub mod octets;
// The crate's own unit tests use it too, feature or not.
#[cfg(any(test, feature = "pair"))]
pub mod pair;
mod role;
mod send_queue;
mod spares;
mod stats;
mod timers;
mod trim;

pub use application::{Application, Endpoint};
pub use close::{CloseCause, TransportFailure};
pub use config::{Config, Http1Config, Limits, WindowPolicy};
pub use connection::Connection;
pub use error::{ConnectionError, Malformation, UserError, Violation};
pub use event::{Event, RefusedWith};
pub use frame::{Reason, StreamId};
pub use h1::{HeadPart, Http1Error};
pub use h2::{LocalSettings, connection_specific};
pub use hash::StreamMap;
pub use hpack::HeaderField;
pub use message::{RequestHead, ResponseHead, is_method};
pub use role::{Protocol, Role};
pub use stats::Stats;
