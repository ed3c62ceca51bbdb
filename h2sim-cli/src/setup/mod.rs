//! What a run needs whatever the runtime: the core's configuration, the
//! server's and the client's parts built from their arguments, the targets
//! of a client run, and the reports out. `tokio_run` and `glommio_run`
//! build on this and on nothing of each other's.

pub mod client;
pub mod config;
pub mod listen;
pub mod output;
pub mod server;
pub mod token;
