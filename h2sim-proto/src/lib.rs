//! Sans-IO HTTP/2 protocol core of h2sim.
//!
//! Bytes in, bytes and events out: nothing here opens a socket, reads a clock
//! or spawns a thread, so any event loop can drive it. [`Connection`] is the
//! entry point; [`frame`] and [`hpack`] are the wire layer beneath it and are
//! public for tools that speak HTTP/2 frame by frame (test peers, fuzzers).

mod config;
mod connection;
mod error;
mod event;
pub mod frame;
mod h2;
pub mod hpack;
mod message;

pub use config::{Config, Limits, WindowPolicy};
pub use connection::Connection;
pub use error::{ConnectionError, Malformation, UserError, Violation};
pub use event::Event;
pub use frame::{Reason, StreamId};
pub use h2::{LocalSettings, Role};
pub use hpack::HeaderField;
pub use message::{RequestHead, ResponseHead};
