//! Runs the h2sim protocol core over glommio: io_uring, one executor per
//! core, nothing shared between them while serving.
//!
//! WIP
mod driver;
mod handler;
mod info;
mod listen;
mod runtime;
mod server;
mod shutdown;
pub mod tls;
mod transport;

pub use driver::{DriverOptions, Ending};
pub use handler::{DEFAULT_MAX_REQUEST_BODY, HandlerApp, Push, Reply, Request};
pub use info::{ConnectionInfo, TlsInfo};
pub use listen::{AddrError, HostPort, Scheme};
pub use runtime::{DEFAULT_IO_MEMORY, Executors, RuntimeError, parse_cpu_list, probe};
pub use server::{ListenerSpec, RunningServer, Server, ServerError, ServerOptions, ServerStats};
pub use shutdown::Shutdown;
