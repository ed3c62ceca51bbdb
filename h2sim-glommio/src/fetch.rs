//! `fetch` on glommio: the applications are `h2sim_proto::fetch`'s, run
//! over [`connect`](crate::connect) on the executors.

use h2sim_proto::fetch::{self, FetchRequest, Outcome};
use h2sim_proto::host::ClientError;

use crate::client::{self, ClientOptions};

/// Blocks while `requests` go to `target` over `options.connections`
/// connections dealt out over the executors, at most `in_flight` at a time
/// on each (HTTP/2 streams, or pipelined HTTP/1.1 requests); one result
/// per request, in order.
pub fn fetch(
    target: &str,
    options: ClientOptions,
    in_flight: usize,
    requests: Vec<FetchRequest>,
) -> Result<Vec<Outcome>, ClientError> {
    fetch::run(requests, in_flight, options, |options, apps| {
        client::connect(target, options, apps)
    })
}
