//! `fetch` on tokio: the applications are `h2sim_proto::fetch`'s, run over
//! [`connect`](crate::connect).

use h2sim_proto::fetch::{self, FetchRequest, Outcome};
use h2sim_proto::host::ClientError;

use crate::client::{self, ClientOptions};

/// Sends `requests` to `target` over `options.connections` connections,
/// at most `in_flight` at a time on each (HTTP/2 streams, or pipelined
/// HTTP/1.1 requests), and returns one result per request, in order.
pub async fn fetch(
    target: &str,
    mut options: ClientOptions,
    in_flight: usize,
    requests: Vec<FetchRequest>,
) -> Result<Vec<Outcome>, ClientError> {
    let (apps, collect) = fetch::plan(requests, in_flight, &mut options);
    collect.results(client::connect(target, options, apps).await)
}
