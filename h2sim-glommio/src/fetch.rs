//! Send a list of requests over N connections, up to M in flight on each,
//! and get every response back with its timing and the responses pushed
//! with it: the client side of the interop tests, and a small load tool.
//! The applications are `h2sim_proto::fetch`'s; this runs them on glommio.

use std::sync::Arc;

use h2sim_proto::fetch::Shared;
pub use h2sim_proto::fetch::{FetchRequest, Outcome, PushedResponse, RequestError, ResponseRecord};

use crate::client::{self, ClientError, ClientOptions};

/// Sends `requests` to `target` over `options.connections` connections,
/// at most `in_flight` at a time on each (HTTP/2 streams, or pipelined
/// HTTP/1.1 requests), and returns one result per request, in order.
/// Blocks until done.
pub fn fetch(
    target: &str,
    mut options: ClientOptions,
    in_flight: usize,
    requests: Vec<FetchRequest>,
) -> Result<Vec<Outcome>, ClientError> {
    let in_flight = in_flight.max(1);
    options.config.http1.max_pipeline = in_flight;
    let shared = Arc::new(Shared::new(requests));
    let for_apps = shared.clone();
    let outcomes = client::connect(target, options, move |_| for_apps.app(in_flight))?;
    let why = outcomes
        .iter()
        .find_map(|o| o.error.as_ref().map(ToString::to_string))
        .unwrap_or_else(|| "no connection was left to send it".to_owned());
    Ok(shared.results(&why))
}
