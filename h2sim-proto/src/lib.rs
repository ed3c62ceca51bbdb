//! Sans-IO HTTP/2 and HTTP/1.1 protocol core of h2sim.
//!
//! Bytes in, bytes and events out: nothing here opens a socket, reads a clock or
//! spawns a thread, so any event loop can drive it.

pub mod frame;
pub mod hpack;
