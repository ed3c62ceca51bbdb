//! `fetch` on glommio: the applications are `h2sim_proto::fetch`'s, run
//! over [`connect`](crate::connect) on the executors.

use h2sim_proto::fetch::{FetchRequest, Outcome, Shared};
use h2sim_proto::host::ClientError;

use crate::client::{self, ClientOptions};

/// Blocks while `requests` go to `target` over `options.connections`
/// connections dealt out over the executors, at most `in_flight` at a time
/// on each (HTTP/2 streams, or pipelined HTTP/1.1 requests); one result
/// per request, in order.
pub fn fetch(
    target: &str,
    mut options: ClientOptions,
    in_flight: usize,
    requests: Vec<FetchRequest>,
) -> Result<Vec<Outcome>, ClientError> {
    let (shared, in_flight) = Shared::prepare(requests, in_flight, &mut options.config);
    let apps = shared.clone();
    let outcomes = client::connect(target, options, move |_| apps.app(in_flight))?;
    Ok(shared.results_after(outcomes.iter().map(|o| o.error.as_ref())))
}
