//! Requests per second of one HTTP/2 connection on one core, h2sim-proto
//! against the `h2` crate (hyper's HTTP/2), both client and server in memory.
//!
//! Two workloads, each a criterion group with one function per
//! implementation: `get_no_body` (GET, answered 200 with no body) and
//! `post_1k_1k` (POST of 1 KiB of JSON, answered 200 with 1 KiB). One
//! iteration is [`REQUESTS`] complete requests with [`CONCURRENCY`] of them in
//! flight (a new one starts as soon as one ends), so the throughput criterion
//! prints in elements/s is requests/s. The connection is set up once, outside
//! the timed loop: this measures steady-state requests, not handshakes.
//!
//! - `h2sim`: a client and a server [`Connection`] on the bench's own thread,
//!   no runtime, joined by the crate's test harness `h2sim_proto::pair::Pair`
//!   (feature `pair`) on its virtual clock: what one transmits is copied
//!   into the other's input buffer whole, as a socket read would. Both
//!   sides build their heads' fields in [`Connection::spare_fields`] and
//!   give received heads back ([`Connection::recycle_request`],
//!   [`Connection::recycle_fields`]), as the simulator's client and server
//!   do.
//! - `h2_crate`: an `h2` client and server on one current-thread tokio
//!   runtime (one core, like the other side), joined by
//!   `tokio::io::duplex`, windows and concurrency raised to h2sim's defaults.
//!
//! Every response's status is checked and every body byte counted; a wrong
//! count panics rather than report a rate that was not earned.
//!
//! Each request of an iteration has a path of its own, as a load's
//! subscriber ids do, so no HPACK table indexes them. The paths are built
//! once, before the timed loop, in each implementation's own type (`Bytes`
//! for h2sim, `http::Uri` for `h2`): formatting one per request cost h2sim
//! 8% of its instructions and `h2` more (formatted, then parsed), which
//! measured the harness rather than the protocol.
//!
//! HTTP/1.1 groups (`http1_get_no_body`, `http1_post_1k_1k`) run the same
//! workloads over one keep-alive HTTP/1.1 connection, with pipelining depth
//! 1 (each request waits for the previous response) and 16.
//!
//! ```text
//! cargo bench -p h2sim-proto --bench connection -- --warm-up-time 2 --measurement-time 5
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use h2sim_proto::pair::Pair;
use h2sim_proto::{Config, Connection, Event, HeaderField, RequestHead, ResponseHead};

/// Complete requests per iteration.
const REQUESTS: usize = 1000;
/// Requests in flight at once.
const CONCURRENCY: usize = 100;
/// Request and response body size of the POST workload.
const BODY_LEN: usize = 1024;
const AUTHORITY: &str = "bench.example";
const JSON: &str = "application/json";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Workload {
    /// GET, no request body, 200 with no body.
    Get,
    /// POST with 1 KiB, 200 with 1 KiB.
    Post,
}

impl Workload {
    fn body_len(self) -> usize {
        match self {
            Workload::Get => 0,
            Workload::Post => BODY_LEN,
        }
    }
}

/// A JSON body of exactly [`BODY_LEN`] bytes, shared by every request and
/// response without a copy.
fn json_body() -> Bytes {
    let mut body = br#"{"user":"01092000123","data":""#.to_vec();
    body.resize(BODY_LEN - 2, b'x');
    body.extend_from_slice(br#""}"#);
    Bytes::from(body)
}

/// The paths of an iteration's requests, like `/user1k/01092000123`.
fn paths() -> Vec<String> {
    (0..REQUESTS)
        .map(|n| format!("/user1k/{:011}", 1_092_000_000 + n))
        .collect()
}

/// h2sim's client and server, joined in memory.
struct SimPair {
    pair: Pair,
    body: Bytes,
    paths: Vec<Bytes>,
    sent: usize,
}

impl SimPair {
    /// Both ends with default settings (256 streams, 1 MiB / 8 MiB windows),
    /// connected: prefaces and SETTINGS exchanged and acknowledged.
    fn connect() -> Self {
        let now = Instant::now();
        let pair = SimPair::joined(Connection::client(Config::default(), now).unwrap(), now);
        for conn in [&pair.pair.client, &pair.pair.server] {
            assert_eq!(conn.protocol(), Some(h2sim_proto::Protocol::Http2));
        }
        pair
    }

    /// An HTTP/1.1 client writing up to `depth` requests ahead of their
    /// responses (1: plain keep-alive), against a server that detects it.
    fn connect_http1(depth: usize) -> Self {
        let now = Instant::now();
        let mut config = Config::default();
        config.http1.max_pipeline = depth;
        SimPair::joined(Connection::client_http1(config, now).unwrap(), now)
    }

    /// `client` joined to a server that tells the protocol from its bytes.
    fn joined(client: Connection, now: Instant) -> Self {
        let server = Connection::server(Config::default(), now).unwrap();
        let mut pair = Pair::join(client, server, now);
        pair.drive();
        // HTTP/1.1 has nothing to exchange before the first request, so its
        // server is not up yet; an HTTP/2 one is.
        for events in [pair.client_events(), pair.server_events()] {
            assert!(
                events.is_empty() || events == [Event::Connected],
                "{events:?}"
            );
        }
        SimPair {
            pair,
            body: json_body(),
            paths: paths().into_iter().map(Bytes::from).collect(),
            sent: 0,
        }
    }

    fn send_request(&mut self, workload: Workload) {
        let path = self.paths[self.sent % REQUESTS].clone();
        let head = RequestHead::new("GET", "http", AUTHORITY, path);
        match workload {
            Workload::Get => {
                self.pair.client.send_request(head, true).unwrap();
            }
            Workload::Post => {
                let mut fields = self.pair.client.spare_fields();
                fields.push(HeaderField::new("content-type", JSON));
                let head = RequestHead {
                    method: Bytes::from_static(b"POST"),
                    fields,
                    ..head
                };
                let stream = self.pair.client.send_request(head, false).unwrap();
                self.pair
                    .client
                    .send_data(stream, self.body.clone(), true)
                    .unwrap();
            }
        }
        self.sent += 1;
    }

    /// Runs `n` requests to completion, `CONCURRENCY` at a time.
    fn run(&mut self, workload: Workload, n: usize) {
        let (mut started, mut done) = (0, 0);
        let (mut request_bytes, mut response_bytes) = (0, 0);
        while started < n.min(CONCURRENCY) {
            self.send_request(workload);
            started += 1;
        }
        while done < n {
            assert!(self.pair.step(), "stalled at {done} of {n} requests");
            while let Some(event) = self.pair.server.poll_event() {
                let (stream, finished) = match event {
                    Event::Request {
                        stream,
                        head,
                        end_stream,
                    } => {
                        self.pair.server.recycle_request(head);
                        (stream, end_stream)
                    }
                    Event::Data {
                        stream,
                        data,
                        end_stream,
                    } => {
                        request_bytes += data.len();
                        (stream, end_stream)
                    }
                    Event::Connected => continue,
                    other => panic!("server: unexpected {other:?}"),
                };
                if !finished {
                    continue;
                }
                match workload {
                    Workload::Get => self
                        .pair
                        .server
                        .send_response(stream, ResponseHead::new(200), true)
                        .unwrap(),
                    Workload::Post => {
                        let mut fields = self.pair.server.spare_fields();
                        fields.push(HeaderField::new("content-type", JSON));
                        let head = ResponseHead {
                            fields,
                            ..ResponseHead::new(200)
                        };
                        self.pair.server.send_response(stream, head, false).unwrap();
                        self.pair
                            .server
                            .send_data(stream, self.body.clone(), true)
                            .unwrap();
                    }
                }
            }
            self.pair.step();
            while let Some(event) = self.pair.client.poll_event() {
                let finished = match event {
                    Event::Response {
                        head, end_stream, ..
                    } => {
                        assert_eq!(head.status, 200);
                        self.pair.client.recycle_fields(head.fields);
                        end_stream
                    }
                    Event::Data {
                        data, end_stream, ..
                    } => {
                        response_bytes += data.len();
                        end_stream
                    }
                    other => panic!("client: unexpected {other:?}"),
                };
                if finished {
                    done += 1;
                    if started < n {
                        self.send_request(workload);
                        started += 1;
                    }
                }
            }
        }
        assert_eq!(done, n);
        assert_eq!(request_bytes, n * workload.body_len());
        assert_eq!(response_bytes, n * workload.body_len());
    }
}

/// The `h2` crate's client and server on one current-thread runtime.
mod h2_crate {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use bytes::Bytes;
    use h2::RecvStream;
    use h2::client::SendRequest;
    use http::{Method, Request, Response, StatusCode, Uri};
    use tokio::runtime::Runtime;

    use super::{AUTHORITY, CONCURRENCY, JSON, Workload, json_body, paths};

    pub struct H2Pair {
        rt: Runtime,
        client: SendRequest<Bytes>,
        body: Bytes,
        uris: Arc<[Uri]>,
    }

    /// Reads a body to its end, releasing its flow control capacity;
    /// returns its length.
    async fn drain(mut body: RecvStream) -> usize {
        let mut len = 0;
        while let Some(chunk) = body.data().await {
            let chunk = chunk.unwrap();
            len += chunk.len();
            body.flow_control().release_capacity(chunk.len()).unwrap();
        }
        len
    }

    impl H2Pair {
        /// A server answering every request, and a client connected to it;
        /// both tasks live on the runtime across iterations.
        pub fn connect(workload: Workload) -> Self {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            let body = json_body();
            let server_body = body.clone();
            let client = rt.block_on(async move {
                let (client_io, server_io) = tokio::io::duplex(1 << 20);
                tokio::spawn(async move {
                    let mut conn = h2::server::Builder::new()
                        .max_concurrent_streams(256)
                        .initial_window_size(1 << 20)
                        .initial_connection_window_size(8 << 20)
                        .handshake::<_, Bytes>(server_io)
                        .await
                        .unwrap();
                    while let Some(request) = conn.accept().await {
                        let (request, mut respond) = request.unwrap();
                        let body = server_body.clone();
                        tokio::spawn(async move {
                            let received = drain(request.into_body()).await;
                            assert_eq!(received, workload.body_len());
                            match workload {
                                Workload::Get => {
                                    let head = Response::new(());
                                    respond.send_response(head, true).unwrap();
                                }
                                Workload::Post => {
                                    let head = Response::builder()
                                        .header("content-type", JSON)
                                        .body(())
                                        .unwrap();
                                    let mut send = respond.send_response(head, false).unwrap();
                                    send.send_data(body, true).unwrap();
                                }
                            }
                        });
                    }
                });
                let (client, conn) = h2::client::Builder::new()
                    .initial_window_size(1 << 20)
                    .initial_connection_window_size(8 << 20)
                    .handshake(client_io)
                    .await
                    .unwrap();
                tokio::spawn(async move { conn.await.unwrap() });
                client.ready().await.unwrap()
            });
            let uris = paths()
                .iter()
                .map(|path| format!("http://{AUTHORITY}{path}").parse().unwrap())
                .collect();
            H2Pair {
                rt,
                client,
                body,
                uris,
            }
        }

        /// Runs `n` requests to completion, `CONCURRENCY` at a time: each
        /// of `CONCURRENCY` tasks sends its share one after the other.
        pub fn run(&mut self, workload: Workload, n: usize) -> Duration {
            let start = Instant::now();
            let done: usize = self.rt.block_on(async {
                let workers: Vec<_> = (0..CONCURRENCY)
                    .map(|w| {
                        let client = self.client.clone();
                        let body = self.body.clone();
                        let share = (w..n).step_by(CONCURRENCY);
                        let uris = Arc::clone(&self.uris);
                        tokio::spawn(worker(client, workload, body, share, uris))
                    })
                    .collect();
                let mut done = 0;
                for w in workers {
                    done += w.await.unwrap();
                }
                done
            });
            let elapsed = start.elapsed();
            assert_eq!(done, n);
            elapsed
        }
    }

    /// Sends the requests numbered `requests` one at a time; returns how
    /// many were answered 200 with the expected body.
    async fn worker(
        mut client: SendRequest<Bytes>,
        workload: Workload,
        body: Bytes,
        requests: impl Iterator<Item = usize>,
        uris: Arc<[Uri]>,
    ) -> usize {
        let mut done = 0;
        for n in requests {
            let uri = uris[n % uris.len()].clone();
            let request = match workload {
                Workload::Get => Request::get(uri).body(()),
                Workload::Post => Request::builder()
                    .method(Method::POST)
                    .uri(uri)
                    .header("content-type", JSON)
                    .body(()),
            }
            .unwrap();
            client = client.ready().await.unwrap();
            let get = workload == Workload::Get;
            let (response, mut send) = client.send_request(request, get).unwrap();
            if !get {
                send.send_data(body.clone(), true).unwrap();
            }
            let response = response.await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            assert_eq!(drain(response.into_body()).await, workload.body_len());
            done += 1;
        }
        done
    }
}

fn bench_workload(c: &mut Criterion, name: &str, workload: Workload) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(REQUESTS as u64));

    let mut sim = SimPair::connect();
    group.bench_function("h2sim", |b| b.iter(|| sim.run(workload, REQUESTS)));

    let mut h2 = h2_crate::H2Pair::connect(workload);
    group.bench_function("h2_crate", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += h2.run(workload, REQUESTS);
            }
            total
        })
    });
    group.finish();
}

/// HTTP/1.1 rows: the same workloads over one keep-alive connection,
/// waiting for each response (depth 1) or pipelining 16 requests.
fn bench_http1(c: &mut Criterion, name: &str, workload: Workload) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(REQUESTS as u64));
    for depth in [1, 16] {
        let mut sim = SimPair::connect_http1(depth);
        group.bench_function(format!("h2sim_depth{depth}"), |b| {
            b.iter(|| sim.run(workload, REQUESTS))
        });
    }
    group.finish();
}

fn connection(c: &mut Criterion) {
    bench_workload(c, "get_no_body", Workload::Get);
    bench_workload(c, "post_1k_1k", Workload::Post);
    bench_http1(c, "http1_get_no_body", Workload::Get);
    bench_http1(c, "http1_post_1k_1k", Workload::Post);
}

criterion_group!(benches, connection);
criterion_main!(benches);
