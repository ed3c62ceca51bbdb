//! What an idle connection keeps on the heap, counted by a global allocator:
//! the core's share of the memory a server pays per connection it holds.
//!
//! A simulator holds thousands of connections that mostly wait, so an idle
//! one should cost its state, not its buffers: after the HTTP/2 preface and
//! SETTINGS exchange (or one HTTP/1.1 exchange) and with every output polled,
//! the queues and scratch space of the busy moments are given back.

use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::BytesMut;
use h2sim_proto::{Config, Connection, Event, Protocol, ResponseHead};

/// Live heap bytes, kept by the global allocator below.
static LIVE: AtomicIsize = AtomicIsize::new(0);

// A global allocator can only be written with `unsafe`; the crate's code
// stays free of it.
#[allow(unsafe_code)]
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::Ordering;

    use super::LIVE;

    struct Counting;

    // SAFETY: every call is passed to `System` unchanged; only a counter is kept.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
            // SAFETY: the caller's contract is `System`'s.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
            // SAFETY: the caller's contract is `System`'s.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            LIVE.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
            // SAFETY: the caller's contract is `System`'s.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;
}

/// Connections measured together, so that one-off allocations (the test
/// harness's, the first `Config`'s) weigh little.
const N: usize = 200;

/// The client side of an idle HTTP/2 connection: preface, empty SETTINGS,
/// and the ACK of the server's SETTINGS.
const H2_CLIENT: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\
    \x00\x00\x00\x04\x00\x00\x00\x00\x00\
    \x00\x00\x00\x04\x01\x00\x00\x00\x00";

fn drain(conn: &mut Connection, now: Instant) {
    while conn.poll_transmit(now).is_some() {}
}

/// Measurements one at a time: the counter is the process's.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Bytes of heap per connection held by `open`, measured over N of them.
fn heap_per_connection(open: impl Fn(Instant) -> Connection) -> isize {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let now = Instant::now();
    // One connection first: lazily built statics are not the connections'.
    drop(open(now));
    let before = LIVE.load(Ordering::Relaxed);
    let held: Vec<Connection> = (0..N).map(|_| open(now)).collect();
    let after = LIVE.load(Ordering::Relaxed);
    let vec = (held.capacity() * size_of::<Connection>()) as isize;
    drop(held);
    (after - before - vec) / N as isize + size_of::<Connection>() as isize
}

fn idle_h2(config: &Arc<Config>, now: Instant) -> Connection {
    let mut conn = Connection::server(Arc::clone(config), now);
    drain(&mut conn, now);
    conn.handle_input(now, &mut BytesMut::from(H2_CLIENT));
    drain(&mut conn, now);
    while conn.poll_event().is_some() {}
    // The host's next read finds nothing: the connection is quiet.
    conn.trim();
    assert_eq!(conn.protocol(), Some(Protocol::Http2));
    conn
}

fn idle_h1(config: &Arc<Config>, now: Instant) -> Connection {
    let mut conn = Connection::server(Arc::clone(config), now);
    conn.handle_input(
        now,
        &mut BytesMut::from(&b"GET / HTTP/1.1\r\nhost: a\r\n\r\n"[..]),
    );
    let mut stream = None;
    while let Some(event) = conn.poll_event() {
        if let Event::Request { stream: id, .. } = event {
            stream = Some(id);
        }
    }
    let stream = stream.expect("the request arrives");
    conn.send_response(stream, ResponseHead::new(204), true)
        .expect("the response is taken");
    drain(&mut conn, now);
    while conn.poll_event().is_some() {}
    conn.trim();
    assert_eq!(conn.protocol(), Some(Protocol::Http1));
    conn
}

/// Budgets, a little above what one idle connection cost when they were
/// set (x86_64: HTTP/2 1,400 B, most of it the session's own struct;
/// HTTP/1.1 1,016 B).
const H2_BUDGET: isize = 1536;
const H1_BUDGET: isize = 1280;

/// Measures idle connections made by `open` against `budget`.
fn within_budget(what: &str, budget: isize, open: fn(&Arc<Config>, Instant) -> Connection) {
    let config = Arc::new(Config::default());
    let bytes = heap_per_connection(|now| open(&config, now));
    eprintln!("idle {what} server connection: {bytes} B");
    assert!(bytes <= budget, "an idle {what} connection holds {bytes} B");
}

#[test]
fn an_idle_http2_server_connection_holds_little_heap() {
    within_budget("HTTP/2", H2_BUDGET, idle_h2);
}

#[test]
fn an_idle_http1_server_connection_holds_little_heap() {
    within_budget("HTTP/1.1", H1_BUDGET, idle_h1);
}
