//! Hostile peers against a real `h2sim server` process, on both runtimes:
//! each attack's connection is closed with the code RFC 9113 (or the
//! server's flood limits, `h2sim_proto::Limits`) names, or throttled; the
//! server's resident memory stays within [`RSS_BOUND_KIB`] of where it
//! started; and a well-behaved client on another connection is served
//! meanwhile. Each test prints one table row per attack (outcome, memory,
//! the good client's latency): `cargo nextest run -p h2sim-cli --test
//! hostile_server --no-capture`.
//!
//! Timers are short here (idle 2 s, head read 1 s, TLS handshake 1 s) so
//! the slow attacks end quickly; those run side by side (their memory
//! figures are of all of them together), then the floods one after
//! another, so each one's memory figure is its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hostile;
mod server_support;

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use h2sim_proto::Reason;

use hostile::peer::{Peer, Seen, name};
use hostile::wire::{self, END_HEADERS, END_STREAM, SETTINGS_INITIAL_WINDOW_SIZE};
use hostile::{RSS_BOUND_KIB, Raw, Row, good_get, rss_kib};
use server_support::Server;

/// Size of `/big`: larger than every window, so its streams stay open.
const BIG: &str = "4m";

fn start(runtime: &str) -> Server {
    let flags = [
        "-q",
        "--idle-timeout",
        "2s",
        "--head-read-timeout",
        "1s",
        "--handshake-timeout",
        "1s",
        "-S",
        "http://127.0.0.1:0",
        "-S",
        "https://127.0.0.1:0",
        "-m",
        "GET",
        "-p",
        "/big",
        "-e",
        BIG,
        "-m",
        "POST",
        "-t",
        "posted",
        "-m",
        "GET",
        "-t",
        "ok",
    ];
    Server::on_runtime(runtime, std::env::temp_dir().as_path(), &flags, 2)
}

fn addr_of(url: &str) -> SocketAddr {
    url.split_once("://").unwrap().1.parse().unwrap()
}

/// What an attack runs against, and where it records the good client's
/// latency and the server's memory while the attack is on.
struct Ctx {
    addr: SocketAddr,
    tls: SocketAddr,
    pid: u32,
    latency: Mutex<Option<Duration>>,
    peak_kib: Mutex<u64>,
}

impl Ctx {
    /// The good client, now: its latency and the server's memory at this
    /// moment of the attack are kept for the row.
    fn probe(&self) {
        let latency = good_get(self.addr, "/ok");
        *self.latency.lock().unwrap() = Some(latency);
        let rss = rss_kib(self.pid);
        let mut peak = self.peak_kib.lock().unwrap();
        *peak = (*peak).max(rss);
    }
}

type Attack = fn(&Ctx) -> String;

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Runs `attack`, probing the good client during it (unless the attack
/// did) and measuring memory before and after.
fn measure(server: &Server, attack: &'static str, run: Attack) -> Row {
    let ctx = Ctx {
        addr: addr_of(server.url("http")),
        tls: addr_of(server.url("https")),
        pid: server.pid(),
        latency: Mutex::new(None),
        peak_kib: Mutex::new(0),
    };
    let before = rss_kib(ctx.pid);
    let mut outcome = match std::panic::catch_unwind(|| run(&ctx)) {
        Ok(outcome) => outcome,
        Err(panic) => format!("FAILED: {}", panic_text(&panic)),
    };
    let probed = ctx.latency.lock().unwrap().is_some();
    if !probed && let Err(panic) = std::panic::catch_unwind(|| ctx.probe()) {
        outcome = format!("FAILED: {outcome}; good client: {}", panic_text(&panic));
    }
    let after = rss_kib(ctx.pid).max(*ctx.peak_kib.lock().unwrap());
    Row {
        attack,
        outcome,
        rss_before_kib: before,
        rss_after_kib: after,
        good_latency: *ctx.latency.lock().unwrap(),
    }
}

fn assert_goaway(attack: &str, seen: &Seen, reason: Reason) {
    assert_eq!(
        seen.goaway(),
        Some(reason),
        "{attack}: GOAWAY({}) expected, saw {} ({})",
        name(reason),
        seen.outcome(),
        seen.end
    );
    assert!(seen.closed, "{attack}: the connection stays open");
}

/// CVE-2019-9511: stream windows of one byte, credit returned a byte at a
/// time on a hundred streams of a big response. The server sends no more
/// than the credit (RFC 9113 §6.9.1) and queues nothing beyond it.
fn data_dribble(ctx: &Ctx) -> String {
    let streams = 100u32;
    let rounds = 20u32;
    let mut p = Peer::h2(ctx.addr, &[(SETTINGS_INITIAL_WINDOW_SIZE, 1)], true);
    p.flood(streams as usize, |i| {
        wire::request(1 + 2 * i as u32, "GET", "/big", true)
    });
    for _ in 0..rounds {
        p.flood(streams as usize, |i| {
            wire::window_update(1 + 2 * i as u32, 1)
        });
    }
    let credit = u64::from(streams * (rounds + 1));
    ctx.probe();
    let seen = p.wait(|s| s.data_bytes >= credit);
    assert_eq!(seen.data_bytes, credit, "dribble: {}", seen.outcome());
    assert!(p.alive(), "dribble: {}", p.seen().outcome());
    format!("throttled to the credit ({credit} B), open")
}

/// Floods `p` with `count` frames `make(i)`, probes the good client, and
/// expects the server to close the connection with
/// GOAWAY(ENHANCE_YOUR_CALM), the code of every limit in
/// `h2sim_proto::Limits`.
fn flood_to_calm(
    ctx: &Ctx,
    mut p: Peer,
    count: usize,
    make: impl FnMut(usize) -> Vec<u8>,
    what: &str,
) -> String {
    let sent = p.flood(count, make);
    ctx.probe();
    let seen = p.wait_closed();
    assert_goaway(what, &seen, Reason::ENHANCE_YOUR_CALM);
    format!("{} after {sent} {what}", seen.outcome())
}

/// CVE-2019-9512: PINGs while never reading their ACKs.
fn ping_flood(ctx: &Ctx) -> String {
    let p = Peer::h2(ctx.addr, &[], false);
    let ping = |i: usize| wire::ping(false, (i as u64).to_be_bytes());
    flood_to_calm(ctx, p, 500_000, ping, "PINGs")
}

/// CVE-2019-9515: empty SETTINGS while never reading their ACKs.
fn settings_flood(ctx: &Ctx) -> String {
    let p = Peer::h2(ctx.addr, &[], false);
    let settings = |_| wire::settings(&[]);
    flood_to_calm(ctx, p, 500_000, settings, "SETTINGS")
}

/// CVE-2019-9513: PRIORITY frames reshuffling a thousand streams' tree
/// again and again. Priority signals are parsed and not acted on (RFC 9113
/// §5.3.2), so they cost nothing to keep: the connection stays usable.
fn priority_churn(ctx: &Ctx) -> String {
    let mut p = Peer::h2(ctx.addr, &[], true);
    let n = 200_000;
    let sent = p.flood(n, |i| {
        let stream = 1 + 2 * (i as u32 % 1000);
        let on = 1 + 2 * ((i as u32 * 7 + 3) % 1000);
        wire::priority(stream, if on == stream { 0 } else { on }, i as u8)
    });
    ctx.probe();
    assert!(p.alive(), "priority churn: {}", p.seen().outcome());
    format!("{sent} PRIORITY frames ignored, open")
}

/// CVE-2019-9514: requests the server must reset (no `:path`, RFC 9113
/// §8.3.1), while never reading the resets.
fn reset_flood(ctx: &Ctx) -> String {
    let p = Peer::h2(ctx.addr, &[], false);
    let bad = wire::block(&[(":method", "GET"), (":scheme", "http"), (":authority", "x")]);
    let flags = END_HEADERS | END_STREAM;
    let request = |i: usize| wire::frame(wire::HEADERS, flags, 1 + 2 * i as u32, &bad);
    flood_to_calm(ctx, p, 5_000, request, "bad requests")
}

/// CVE-2019-9516: field blocks of thousands of empty fields, each counting
/// 32 octets towards SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113 §6.5.2).
fn zero_length_headers(ctx: &Ctx) -> String {
    let mut p = Peer::h2(ctx.addr, &[], true);
    let mut block = wire::request_block("GET", "/ok").to_vec();
    for _ in 0..5000 {
        // Literal without indexing, new name: empty name, empty value.
        block.extend_from_slice(&[0x00, 0x00, 0x00]);
    }
    let streams = 300;
    let sent = p.flood(streams, |i| {
        wire::frame(
            wire::HEADERS,
            END_HEADERS | END_STREAM,
            1 + 2 * i as u32,
            &block,
        )
    });
    ctx.probe();
    let seen = p.wait(|s| s.goaway().is_some());
    let served = seen.statuses();
    assert!(
        served.iter().all(|(_, s)| s == "431") && seen.resets().count() + served.len() > 0,
        "zero-length headers: {} {served:?}",
        seen.outcome()
    );
    format!(
        "{} ({} x 431) after {sent} blocks",
        seen.outcome(),
        served.len()
    )
}

/// CVE-2019-9517: big responses on every stream with the windows wide
/// open, and the peer never reads: the server must not buffer them.
fn no_reading(ctx: &Ctx) -> String {
    let mut p = Peer::h2(
        ctx.addr,
        &[(SETTINGS_INITIAL_WINDOW_SIZE, (1 << 31) - 1)],
        false,
    );
    p.send(&wire::window_update(0, (1 << 31) - 1 - 65_535))
        .unwrap();
    let streams = 200;
    p.flood(streams, |i| {
        wire::request(1 + 2 * i as u32, "GET", "/big", true)
    });
    std::thread::sleep(Duration::from_millis(500));
    ctx.probe();
    std::thread::sleep(Duration::from_millis(500));
    ctx.probe();
    format!("{streams} x {BIG} requested, unread: held by TCP")
}

/// CVE-2019-9517 on HTTP/1.1: a thousand pipelined requests for the big
/// response, never reading. The server reads ahead only
/// `Http1Config::server_max_pipeline` requests and writes only what TCP
/// takes.
fn no_reading_http1(ctx: &Ctx) -> String {
    let mut raw = Raw::connect(ctx.addr);
    raw.tcp
        .set_write_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let request = b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n";
    let mut sent = 0;
    for _ in 0..1000 {
        if raw.send(request).is_err() {
            break;
        }
        sent += 1;
    }
    std::thread::sleep(Duration::from_millis(500));
    ctx.probe();
    format!("{sent} pipelined requests for {BIG}, unread: held by TCP")
}

/// CVE-2019-9518: DATA frames without payload or END_STREAM.
fn empty_frames(ctx: &Ctx) -> String {
    let mut p = Peer::h2(ctx.addr, &[], true);
    p.send(&wire::request(1, "POST", "/post", false)).unwrap();
    let empty = |_| wire::frame(wire::DATA, 0, 1, &[]);
    flood_to_calm(ctx, p, 100_000, empty, "empty DATA")
}

/// CVE-2023-44487: each request cancelled right after it was sent.
fn rapid_reset(ctx: &Ctx) -> String {
    let p = Peer::h2(ctx.addr, &[], true);
    let cancelled = |i: usize| {
        let stream = 1 + 2 * i as u32;
        let mut pair = wire::request(stream, "GET", "/big", true);
        pair.extend(wire::rst_stream(stream, Reason::CANCEL.0));
        pair
    };
    let what = "HEADERS+RST_STREAM";
    flood_to_calm(ctx, p, 100_000, cancelled, what)
}

/// CVE-2024-27316 and its kin: a field block that never ends, one
/// CONTINUATION after another (RFC 9113 §6.10).
fn continuation_flood(ctx: &Ctx) -> String {
    let mut p = Peer::h2(ctx.addr, &[], true);
    let mut start = wire::request_block("GET", "/ok").to_vec();
    // A literal whose value claims 100 MB: every CONTINUATION adds to it.
    start.extend_from_slice(&[0x00, 0x01, b'x']);
    wire::hpack_int(100_000_000, 7, 0, &mut start);
    p.send(&wire::frame(wire::HEADERS, END_STREAM, 1, &start))
        .unwrap();
    let chunk = vec![b'a'; 1000];
    let more = |_| wire::frame(wire::CONTINUATION, 0, 1, &chunk);
    flood_to_calm(ctx, p, 100_000, more, "CONTINUATION")
}

/// An HPACK bomb: one 4 KB entry put into the table, then blocks of
/// one-octet references to it that decode to 60 MB each, far past
/// SETTINGS_MAX_HEADER_LIST_SIZE (RFC 7541 §7.3).
fn hpack_bomb(ctx: &Ctx) -> String {
    let mut p = Peer::h2(ctx.addr, &[], true);
    let mut first = wire::request_block("GET", "/ok").to_vec();
    wire::indexed_literal(b"x-bomb", &[b'a'; 4000], &mut first);
    p.send(&wire::frame(
        wire::HEADERS,
        END_HEADERS | END_STREAM,
        1,
        &first,
    ))
    .unwrap();
    let mut bomb = wire::request_block("GET", "/ok").to_vec();
    // Index 62: the newest dynamic entry (RFC 7541 §2.3.3).
    bomb.extend(std::iter::repeat_n(0x80 | 62, 15_000));
    let streams = 100;
    let sent = p.flood(streams, |i| {
        wire::frame(
            wire::HEADERS,
            END_HEADERS | END_STREAM,
            3 + 2 * i as u32,
            &bomb,
        )
    });
    ctx.probe();
    let bombs = (1..=streams as u32).map(|i| 1 + 2 * i);
    let seen = p.wait(|s| bombs.clone().all(|id| answered(s, id)));
    let served: Vec<_> = seen
        .statuses()
        .into_iter()
        .filter(|(id, _)| *id > 1)
        .collect();
    assert!(
        bombs.clone().all(|id| answered(&seen, id)) && served.iter().all(|(_, s)| s == "431"),
        "HPACK bomb: {} {served:?}",
        seen.outcome()
    );
    assert!(p.alive(), "HPACK bomb: {}", p.seen().outcome());
    format!(
        "{} ({} x 431) after {sent} bombs",
        seen.outcome(),
        served.len()
    )
}

/// HPACK table entries pinning read buffers: each request adds an entry
/// to the table (a raw literal, RFC 7541 §6.2.1) and is followed by 64 KiB
/// of frames of an unknown type (ignored, RFC 9113 §5.5), so that the next
/// one arrives in another read buffer. An entry sharing its block's
/// buffer would keep each of those buffers alive as long as it stays in
/// the table: the server grew by 230 MB over these connections when
/// entries did; holding copies, by nothing measurable.
fn table_pinning(ctx: &Ctx) -> String {
    const CONNECTIONS: usize = 32;
    const REQUESTS: u32 = 100;
    let filler: Vec<u8> = (0..4)
        .flat_map(|_| wire::frame(0x20, 0, 0, &[b'z'; 16 * 1024]))
        .collect();
    let mut peers: Vec<Peer> = (0..CONNECTIONS)
        .map(|_| Peer::h2(ctx.addr, &[], true))
        .collect();
    for i in 0..REQUESTS {
        let mut block = wire::request_block("GET", "/ok").to_vec();
        wire::indexed_literal(format!("x-pin-{i}").as_bytes(), b"v", &mut block);
        let request = wire::frame(wire::HEADERS, END_HEADERS | END_STREAM, 1 + 2 * i, &block);
        for p in &mut peers {
            p.send(&request).unwrap();
            p.send(&filler).unwrap();
        }
    }
    let last = 1 + 2 * (REQUESTS - 1);
    for p in &mut peers {
        let seen = p.wait(|s| s.ended(last));
        assert!(seen.ended(last), "table pinning: {}", seen.outcome());
    }
    // Measured with every connection open and its entries in the table.
    ctx.probe();
    format!("{CONNECTIONS} connections x {REQUESTS} indexed requests answered")
}

/// Whether the server ended `stream` one way or another.
fn answered(seen: &Seen, stream: u32) -> bool {
    seen.ended(stream) || seen.resets().any(|(s, _)| s == stream)
}

/// Stream-id exhaustion: a request on the last stream id, 2^31-1, is
/// served; any request after it can only reuse a lower id, a connection
/// error PROTOCOL_ERROR (RFC 9113 §5.1.1).
fn stream_ids_exhausted(ctx: &Ctx) -> String {
    let mut p = Peer::h2(ctx.addr, &[], true);
    let last = (1u32 << 31) - 1;
    p.send(&wire::request(last, "GET", "/ok", true)).unwrap();
    let seen = p.wait(|s| s.ended(last));
    assert!(seen.ended(last), "the last stream id: {}", seen.outcome());
    let _ = p.send(&wire::request(1, "GET", "/ok", true));
    ctx.probe();
    let seen = p.wait_closed();
    assert_goaway("stream ids", &seen, Reason::PROTOCOL_ERROR);
    format!("stream 2^31-1 served, then {}", seen.outcome())
}

/// WINDOW_UPDATE past 2^31-1: on the connection a connection error, on a
/// stream a stream error, FLOW_CONTROL_ERROR both (RFC 9113 §6.9.1).
fn window_overflow(ctx: &Ctx) -> String {
    let max = (1u32 << 31) - 1;
    let mut stream = Peer::h2(ctx.addr, &[], true);
    stream.send(&wire::request(1, "GET", "/big", true)).unwrap();
    stream.send(&wire::window_update(1, max)).unwrap();
    stream.send(&wire::window_update(1, max)).unwrap();
    let seen = stream.wait(|s| s.resets().any(|(id, _)| id == 1));
    let reset: Vec<_> = seen.resets().collect();
    assert_eq!(
        reset,
        [(1, Reason::FLOW_CONTROL_ERROR)],
        "stream window: {}",
        seen.outcome()
    );
    assert!(stream.alive(), "a stream error leaves the connection");
    let mut conn = Peer::h2(ctx.addr, &[], true);
    conn.send(&wire::window_update(0, max)).unwrap();
    let _ = conn.send(&wire::window_update(0, max));
    ctx.probe();
    let seen = conn.wait_closed();
    assert_goaway("connection window", &seen, Reason::FLOW_CONTROL_ERROR);
    format!(
        "stream: RST_STREAM(FLOW_CONTROL_ERROR); connection: {}",
        seen.outcome()
    )
}

/// How a trickle ended.
struct Trickle {
    /// What the server wrote on the first connection.
    text: String,
    /// Connections the server closed while bytes were still to come.
    cut: usize,
    /// Connections the server closed in the end.
    closed: usize,
    /// From the first connect to the last close.
    took: Duration,
}

/// Opens `conns` connections and writes `head` on each, then `bytes` one
/// at a time every `every` on each still open (the server's closes are
/// read on a thread per connection), probing the good client meanwhile;
/// then waits for the closes.
fn trickle(ctx: &Ctx, conns: usize, head: &[u8], bytes: &[u8], every: Duration) -> Trickle {
    let start = Instant::now();
    let mut open: Vec<_> = (0..conns)
        .map(|_| {
            let mut raw = Raw::connect(ctx.addr);
            raw.send(head).unwrap();
            let mut reader = Raw {
                tcp: raw.tcp.try_clone().unwrap(),
            };
            (raw, std::thread::spawn(move || reader.read_to_close()))
        })
        .collect();
    for (i, b) in bytes.iter().enumerate() {
        for (raw, read) in &mut open {
            if !read.is_finished() {
                let _ = raw.send(&[*b]);
            }
        }
        if i == 2 {
            ctx.probe();
        }
        std::thread::sleep(every);
    }
    let cut = open.iter().filter(|(_, read)| read.is_finished()).count();
    let ends: Vec<(String, bool)> = open.into_iter().map(|(_, r)| r.join().unwrap()).collect();
    Trickle {
        text: ends[0].0.clone(),
        cut,
        closed: ends.iter().filter(|(_, closed)| *closed).count(),
        took: start.elapsed(),
    }
}

/// Slowloris: a hundred heads that never complete, a byte every 100 ms
/// each. The head read timeout (1 s here) ends them long before the
/// trickle would.
fn slowloris_head(ctx: &Ctx) -> String {
    let conns = 100;
    let t = trickle(
        ctx,
        conns,
        b"GET /ok HTTP/1.1\r\nhost: x\r\n",
        &[b'x'; 50],
        Duration::from_millis(100),
    );
    assert_eq!(
        (t.cut, t.closed),
        (conns, conns),
        "slowloris head: {:?} after {:?}",
        t.text,
        t.took
    );
    format!(
        "{conns} connections cut by the head read timeout: {:?}",
        first_line(&t.text)
    )
}

/// Slowloris on the body: complete heads, then bodies that trickle. A
/// body has no deadline of its own (as nginx's `client_body_timeout`, only
/// silence is bounded): a connection costs what arrived, and the idle
/// timeout (2 s here) ends it once its trickle stops, after the drain
/// time (5 s) granted to the request in progress.
fn slowloris_body(ctx: &Ctx) -> String {
    let conns = 100;
    let t = trickle(
        ctx,
        conns,
        b"POST /post HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n",
        &[b'x'; 20],
        Duration::from_millis(100),
    );
    assert_eq!(
        t.closed, conns,
        "slowloris body: {:?} after {:?}",
        t.text, t.took
    );
    format!(
        "{conns} connections held while bytes came ({} cut), all closed {:.1} s after the heads",
        t.cut,
        t.took.as_secs_f64()
    )
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// Request smuggling (RFC 9112 §6.1, §6.3, §5.2, §2.2): each ambiguous
/// framing gets 400 and the connection closes, and the request hidden
/// behind it is never answered.
fn smuggling(ctx: &Ctx) -> String {
    let hidden = "GET /smuggled HTTP/1.1\r\nhost: x\r\n\r\n";
    let cases: [(&str, String); 5] = [
        (
            "CL+TE",
            format!(
                "POST /post HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n{hidden}"
            ),
        ),
        (
            "duplicate CL",
            format!(
                "POST /post HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\ncontent-length: 40\r\n\r\n{hidden}"
            ),
        ),
        (
            "obs-fold",
            format!("GET /ok HTTP/1.1\r\nhost: x\r\nx-a: b\r\n c\r\n\r\n{hidden}"),
        ),
        ("bare LF", format!("GET /ok HTTP/1.1\nhost: x\n\n{hidden}")),
        (
            "bare CR",
            format!("GET /ok HTTP/1.1\r\nhost: x\rx-a: b\r\n\r\n{hidden}"),
        ),
    ];
    let mut out = Vec::new();
    for (case, request) in cases {
        let mut raw = Raw::connect(ctx.addr);
        raw.send(request.as_bytes()).unwrap();
        let (text, closed) = raw.read_to_close();
        out.push(format!(
            "{case}: {} {}",
            first_line(&text),
            if closed { "closed" } else { "open" }
        ));
        assert!(
            text.starts_with("HTTP/1.1 400") && closed && text.matches("HTTP/1.1").count() == 1,
            "{case}: {text:?} closed={closed}"
        );
    }
    ctx.probe();
    out.join("; ")
}

/// An h2c upgrade (RFC 7540 §3.2.1) with a hostile HTTP2-Settings: not
/// base64url, twice, an invalid setting (SETTINGS_ENABLE_PUSH = 2, a
/// connection error PROTOCOL_ERROR by RFC 9113 §6.5.2), larger than the
/// head limit. Never an upgrade with the bad settings in force.
fn hostile_upgrade(ctx: &Ctx) -> String {
    let long = "A".repeat(100_000);
    let cases: [(&str, String); 4] = [
        ("not base64", "http2-settings: !!!*not*base64\r\n".into()),
        (
            "twice",
            "http2-settings: AAMAAABk\r\nhttp2-settings: AAMAAABk\r\n".into(),
        ),
        // 0x0002 = 2, base64url without padding.
        ("ENABLE_PUSH=2", "http2-settings: AAIAAAAC\r\n".into()),
        ("100 KB", format!("http2-settings: {long}\r\n")),
    ];
    let mut out = Vec::new();
    for (case, settings) in cases {
        let mut raw = Raw::connect(ctx.addr);
        let mut request = format!(
            "GET /ok HTTP/1.1\r\nhost: x\r\nconnection: Upgrade, HTTP2-Settings\r\nupgrade: h2c\r\n{settings}\r\n"
        )
        .into_bytes();
        request.extend_from_slice(h2sim_proto::frame::PREFACE);
        request.extend(wire::settings(&[]));
        let _ = raw.send(&request);
        let (bytes, closed) = raw.read_bytes_to_close();
        let text = String::from_utf8_lossy(&bytes);
        let status = first_line(&text).to_owned();
        let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n");
        let after = match head_end {
            Some(end) if status.contains(" 101 ") => {
                let seen = hostile::peer::decode(&bytes[end + 4..]);
                assert_eq!(
                    seen.goaway(),
                    Some(Reason::PROTOCOL_ERROR),
                    "{case}: upgraded, then {}",
                    seen.outcome()
                );
                format!(" then {}", seen.outcome())
            }
            _ => String::new(),
        };
        assert!(
            status.contains(" 101 ")
                || status.starts_with("HTTP/1.1 4")
                || status.starts_with("HTTP/1.1 200"),
            "{case}: {text:?}"
        );
        let end = match (after.is_empty(), closed) {
            (false, _) => after,
            (true, true) => " closed".to_owned(),
            (true, false) => " open".to_owned(),
        };
        out.push(format!("{case}: {status}{end}"));
    }
    ctx.probe();
    out.join("; ")
}

/// h2c upgrades that never send the client preface, which RFC 7540 §3.2
/// has the client send as soon as it reads the 101, a hundred of them,
/// each asking for the 4 MiB answer. The answer waits for the preface, so
/// none of it is written, and each connection ends with a GOAWAY: the idle
/// timeout's (2 s here, NO_ERROR), else the SETTINGS timeout's (10 s,
/// SETTINGS_TIMEOUT: our SETTINGS are never acknowledged).
fn upgrade_without_preface(ctx: &Ctx) -> String {
    let conns = 100;
    let start = Instant::now();
    let mut raws: Vec<Raw> = (0..conns)
        .map(|_| {
            let mut raw = Raw::connect(ctx.addr);
            raw.send(
                b"GET /big HTTP/1.1\r\nhost: x\r\nconnection: Upgrade, HTTP2-Settings\r\n\
                  upgrade: h2c\r\nhttp2-settings: AAMAAABk\r\n\r\n",
            )
            .unwrap();
            raw
        })
        .collect();
    ctx.probe();
    let ends: Vec<(Vec<u8>, bool)> = raws.iter_mut().map(Raw::read_bytes_to_close).collect();
    let took = start.elapsed();
    let mut outcomes: Vec<String> = ends
        .iter()
        .map(|(bytes, closed)| {
            let text = String::from_utf8_lossy(bytes);
            let end = bytes.windows(4).position(|w| w == b"\r\n\r\n");
            let (Some(end), true) = (end, text.starts_with("HTTP/1.1 101 ") && *closed) else {
                panic!("upgrade without preface: {text:?} closed={closed} after {took:?}");
            };
            let seen = hostile::peer::decode(&bytes[end + 4..]);
            assert!(
                matches!(
                    seen.goaway(),
                    Some(Reason::NO_ERROR | Reason::SETTINGS_TIMEOUT)
                ) && seen.data_bytes == 0,
                "upgrade without preface: {} bytes of DATA, then {}",
                seen.data_bytes,
                seen.outcome()
            );
            seen.outcome()
        })
        .collect();
    outcomes.dedup();
    format!(
        "{conns} connections, no answer written, closed after {:.1} s: {}",
        took.as_secs_f64(),
        outcomes.join(" / ")
    )
}

/// A TLS handshake that stops after the first bytes of a ClientHello: the
/// handshake timeout (1 s here) drops it.
fn tls_stall(ctx: &Ctx) -> String {
    let mut raw = Raw::connect(ctx.tls);
    let start = Instant::now();
    raw.send(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01]).unwrap();
    let (_, closed) = raw.read_to_close();
    let took = start.elapsed();
    ctx.probe();
    assert!(closed, "TLS stall: still open after {took:?}");
    format!("dropped after {:.1} s", took.as_secs_f64())
}

/// Clients that connect and send nothing, a hundred of them: the idle
/// timeout (2 s here) ends them all.
fn silent(ctx: &Ctx) -> String {
    let conns = 100;
    let start = Instant::now();
    let mut raws: Vec<Raw> = (0..conns).map(|_| Raw::connect(ctx.addr)).collect();
    ctx.probe();
    let ends: Vec<(String, bool)> = raws.iter_mut().map(Raw::read_to_close).collect();
    let took = start.elapsed();
    let closed = ends.iter().filter(|(_, closed)| *closed).count();
    let said: usize = ends.iter().map(|(text, _)| text.len()).sum();
    assert_eq!(closed, conns, "silent clients: open after {took:?}");
    format!(
        "{conns} connections closed by the idle timeout, {said} bytes written to them, after {:.1} s",
        took.as_secs_f64()
    )
}

/// The floods, one after another.
const FLOODS: &[(&str, Attack)] = &[
    ("data dribble (CVE-2019-9511)", data_dribble),
    ("ping flood (CVE-2019-9512)", ping_flood),
    ("priority churn (CVE-2019-9513)", priority_churn),
    ("reset flood (CVE-2019-9514)", reset_flood),
    ("settings flood (CVE-2019-9515)", settings_flood),
    ("zero-length headers (CVE-2019-9516)", zero_length_headers),
    ("peer not reading (CVE-2019-9517)", no_reading),
    (
        "peer not reading, HTTP/1.1 (CVE-2019-9517)",
        no_reading_http1,
    ),
    ("empty frames (CVE-2019-9518)", empty_frames),
    ("rapid reset (CVE-2023-44487)", rapid_reset),
    ("CONTINUATION flood (CVE-2024-27316)", continuation_flood),
    ("HPACK bomb", hpack_bomb),
    ("HPACK entries pinning read buffers", table_pinning),
    ("stream-id exhaustion", stream_ids_exhausted),
    ("WINDOW_UPDATE overflow", window_overflow),
    ("request smuggling", smuggling),
    ("hostile h2c upgrade", hostile_upgrade),
];

/// The attacks that wait for a timer, side by side.
const SLOW: &[(&str, Attack)] = &[
    ("slowloris head", slowloris_head),
    ("slowloris body", slowloris_body),
    ("TLS handshake stall", tls_stall),
    ("silent client", silent),
    ("h2c upgrade without a preface", upgrade_without_preface),
];

fn attack_all(runtime: &str) {
    let server = start(runtime);
    // The slow attacks first, side by side (their memory figures overlap),
    // then the floods one by one, each from the memory the last one left.
    let mut rows: Vec<Row> = std::thread::scope(|scope| {
        let slow: Vec<_> = SLOW
            .iter()
            .map(|(attack, run)| {
                let server = &server;
                scope.spawn(move || measure(server, attack, *run))
            })
            .collect();
        slow.into_iter().map(|h| h.join().unwrap()).collect()
    });
    rows.extend(
        FLOODS
            .iter()
            .map(|(attack, run)| measure(&server, attack, *run)),
    );
    println!("| runtime | attack | outcome | server RSS | good client |");
    for row in &rows {
        row.print(runtime);
    }
    let failed: Vec<_> = rows
        .iter()
        .filter(|r| {
            r.outcome.starts_with("FAILED") || r.rss_after_kib >= r.rss_before_kib + RSS_BOUND_KIB
        })
        .map(|r| r.attack)
        .collect();
    let (code, out) = server.stop();
    assert!(failed.is_empty(), "{runtime}: {failed:?} (see the table)");
    assert_eq!(code, Some(0), "{out}");
}

#[test]
fn tokio_server_withstands_hostile_peers() {
    attack_all("tokio");
}

#[test]
fn glommio_server_withstands_hostile_peers() {
    attack_all("glommio");
}
