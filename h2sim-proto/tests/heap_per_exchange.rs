//! Allocations per exchange under load, counted by a global allocator.
//!
//! A load generator and the server it measures each move a head out and a
//! head in per exchange. The vector a written head leaves serves the next
//! head decoded ([`Connection::recycle_fields`] and
//! [`Connection::spare_fields`] close the loop through the application),
//! so a steady load of requests with fields allocates no field vector or
//! boxed head per exchange: under load those were the allocator's slow
//! path, a hundred of one size at a time.
#![allow(clippy::unwrap_used)]

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::time::Instant;

use bytes::Bytes;
use h2sim_proto::pair::Pair;
use h2sim_proto::{Config, Connection, Event, HeaderField, Protocol, RequestHead, ResponseHead};

/// Allocation calls so far (`alloc` and `realloc`), by the allocator below.
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// A global allocator can only be written with `unsafe`; the crate's code
// stays free of it.
#[allow(unsafe_code)]
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::Ordering;

    use super::ALLOCATIONS;

    struct Counting;

    // SAFETY: every call is passed to `System` unchanged; only a counter is kept.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the caller's contract is `System`'s.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: the caller's contract is `System`'s.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the caller's contract is `System`'s.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;
}

/// Requests in flight per round over HTTP/2, as a load generator keeps
/// them; HTTP/1.1 has one at a time.
const WINDOW: usize = 100;

/// One round: `window` POSTs with three fields each, answered with two
/// fields and a body; both applications take their heads' vectors from
/// the connection and give back the ones they received.
fn round(pair: &mut Pair, window: usize) {
    for _ in 0..window {
        let mut fields = pair.client.spare_fields();
        fields.push(HeaderField::new("content-type", "application/json"));
        fields.push(HeaderField::new("accept", "application/json"));
        fields.push(HeaderField::new("content-length", "2"));
        // One path: a new one per request would add its decoded copy.
        let head = RequestHead {
            fields,
            ..RequestHead::new("POST", "http", "a", "/user/a")
        };
        let stream = pair.client.send_request(head, false).unwrap();
        pair.client
            .send_data(stream, Bytes::from_static(b"{}"), true)
            .unwrap();
    }
    pair.drive();
    while let Some(event) = pair.server.poll_event() {
        if let Event::Request { stream, head, .. } = event {
            pair.server.recycle_fields(head.fields);
            let mut fields = pair.server.spare_fields();
            fields.push(HeaderField::new("content-type", "application/json"));
            fields.push(HeaderField::new("server", "h2sim"));
            let head = ResponseHead {
                fields,
                ..ResponseHead::new(200)
            };
            pair.server
                .send_reply(stream, head, Bytes::from_static(b"{\"ok\":1}"))
                .unwrap();
        }
    }
    pair.drive();
    let mut responses = 0;
    while let Some(event) = pair.client.poll_event() {
        if let Event::Response { head, .. } = event {
            assert_eq!(head.fields.len(), 2);
            pair.client.recycle_fields(head.fields);
            responses += 1;
        }
    }
    assert_eq!(responses, window);
}

/// Measurements one at a time: the counter is the process's.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Allocation calls per exchange over `rounds` rounds, after a warm-up in
/// which the queues, tables and buffers reach their working size.
fn allocations_per_exchange(pair: &mut Pair, window: usize) -> f64 {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..3 {
        round(pair, window);
    }
    let rounds = 20;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..rounds {
        round(pair, window);
    }
    (ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / (rounds * window) as f64
}

// Four head vectors and (over HTTP/2) a boxed request head pass through
// each exchange: request and response, each built and decoded. With them
// recycled, what is left is the output's, a few per round.

#[test]
fn a_steady_http2_load_allocates_no_head_storage_per_exchange() {
    let mut pair = Pair::with_defaults(7);
    pair.connect();
    assert_eq!(pair.client.protocol(), Some(Protocol::Http2));
    let per_exchange = allocations_per_exchange(&mut pair, WINDOW);
    eprintln!("HTTP/2 allocations per exchange: {per_exchange:.2}");
    assert!(
        per_exchange < 0.5,
        "{per_exchange:.2} allocations per exchange"
    );
}

#[test]
fn a_steady_http1_load_allocates_no_head_storage_per_exchange() {
    let now = Instant::now();
    let client = Connection::client_http1(Config::default(), now);
    let server = Connection::server(Config::default(), now);
    let mut pair = Pair::join(client, server, now).split(7);
    let per_exchange = allocations_per_exchange(&mut pair, 1);
    assert_eq!(pair.server.protocol(), Some(Protocol::Http1));
    eprintln!("HTTP/1.1 allocations per exchange: {per_exchange:.2}");
    assert!(
        per_exchange < 0.5,
        "{per_exchange:.2} allocations per exchange"
    );
}
