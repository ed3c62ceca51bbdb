//! The connection's way out on a virtual clock: the idle timer (HTTP/2,
//! HTTP/1.1, a server still detecting the protocol), GOAWAY → the drain
//! deadline → cut, the HTTP/1.1 head-read timer against slowloris, and
//! the SETTINGS acknowledgement timeout (RFC 9113 §6.5.3). The keep-alive
//! PING has its own file (`keepalive.rs`). Nothing here sleeps: time is
//! what the test passes in, and every deadline is the one `poll_timeout`
//! names.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use bytes::BytesMut;
use h2sim_proto::frame::PREFACE;
use h2sim_proto::{
    CloseCause, Config, Connection, ConnectionError, Event, Protocol, Reason, RequestHead,
    ResponseHead, Violation,
};

const IDLE: Duration = Duration::from_secs(10);
const DRAIN: Duration = Duration::from_secs(3);
const HEAD: Duration = Duration::from_secs(5);

/// A server config with only the timers a test names.
fn server_config(idle: Option<Duration>, head: Option<Duration>) -> Config {
    Config {
        idle_timeout: idle,
        drain_timeout: DRAIN,
        head_read_timeout: head,
        ..Config::default()
    }
}

/// A client that keeps no timers of its way out, so only the server's act.
fn quiet_client() -> Config {
    Config {
        idle_timeout: None,
        ..Config::default()
    }
}

fn get(path: &str) -> RequestHead {
    RequestHead::new("GET", "http", "example.com", path.to_owned())
}

/// Moves what `from` has to write into `to`; whether anything moved.
fn pump(from: &mut Connection, to: &mut Connection, now: Instant) -> bool {
    let mut wire = BytesMut::new();
    while let Some(chunk) = from.poll_transmit(now) {
        wire.extend_from_slice(&chunk);
    }
    let moved = !wire.is_empty();
    if moved {
        to.handle_input(now, &mut wire);
    }
    moved
}

/// Pumps both ways until nothing moves, keeping each side's events.
fn settle(
    client: &mut Connection,
    server: &mut Connection,
    now: Instant,
    log: &mut (Vec<Event>, Vec<Event>),
) {
    loop {
        let a = pump(client, server, now);
        let b = pump(server, client, now);
        log.0.extend(std::iter::from_fn(|| client.poll_event()));
        log.1.extend(std::iter::from_fn(|| server.poll_event()));
        if !a && !b {
            return;
        }
    }
}

/// Runs the clock from deadline to deadline until `conn` is closed, with
/// `peer` answering; returns when it closed. Panics if it never does.
fn run_until_closed(
    conn: &mut Connection,
    peer: &mut Connection,
    mut now: Instant,
    log: &mut (Vec<Event>, Vec<Event>),
    conn_is_server: bool,
) -> Instant {
    for _ in 0..100 {
        if conn.is_closed() {
            return now;
        }
        let next = [conn.poll_timeout(), peer.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("a connection not closed has a deadline");
        now = now.max(next);
        conn.handle_timeout(now);
        peer.handle_timeout(now);
        if conn_is_server {
            settle(peer, conn, now, log);
        } else {
            settle(conn, peer, now, log);
        }
    }
    panic!("the connection never closed");
}

/// The cause of the one `Closed` event among `events`.
fn closed(events: &[Event]) -> (Option<ConnectionError>, CloseCause) {
    let mut found = events.iter().filter_map(|e| match e {
        Event::Closed { error, cause } => Some((error.clone(), cause.clone())),
        _ => None,
    });
    let first = found
        .next()
        .unwrap_or_else(|| panic!("no Closed in {events:?}"));
    assert!(found.next().is_none(), "Closed twice: {events:?}");
    first
}

fn events_of(conn: &mut Connection) -> Vec<Event> {
    std::iter::from_fn(|| conn.poll_event()).collect()
}

fn output_of(conn: &mut Connection, now: Instant) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(chunk) = conn.poll_transmit(now) {
        out.extend_from_slice(&chunk);
    }
    out
}

/// An HTTP/2 server idle for `Config::idle_timeout` sends GOAWAY(NO_ERROR)
/// (RFC 9113 §6.8) and closes, naming the idle timeout; bytes moving in
/// either direction start the timer over.
#[test]
fn h2_idle_connection_goes_away_and_closes() {
    let t0 = Instant::now();
    let mut client = Connection::client(quiet_client(), t0).unwrap();
    let mut server =
        Connection::server_for(Protocol::Http2, server_config(Some(IDLE), None), t0).unwrap();
    let mut log = Default::default();
    settle(&mut client, &mut server, t0, &mut log);
    assert_eq!(server.poll_timeout(), Some(t0 + IDLE));

    // A request and its answer at t0 + 4s: the idle time runs from there.
    let t1 = t0 + Duration::from_secs(4);
    let stream = client.send_request(get("/"), true).unwrap();
    settle(&mut client, &mut server, t1, &mut log);
    server
        .send_response(stream, ResponseHead::new(200), true)
        .unwrap();
    settle(&mut client, &mut server, t1, &mut log);
    assert_eq!(server.poll_timeout(), Some(t1 + IDLE));
    server.handle_timeout(t1 + IDLE - Duration::from_millis(1));
    assert!(output_of(&mut server, t1).is_empty(), "nothing before time");

    let ended = run_until_closed(&mut server, &mut client, t1 + IDLE, &mut log, true);
    assert!(ended < t1 + IDLE + DRAIN, "closed gracefully, not cut");
    assert!(
        log.0
            .iter()
            .any(|e| matches!(e, Event::GoAway { reason, .. } if *reason == Reason::NO_ERROR)),
        "{:?}",
        log.0
    );
    assert_eq!(closed(&log.1), (None, CloseCause::IdleTimeout));
}

/// An idle HTTP/1.1 server connection closes (no `connection: close` to
/// send when no response is under way, RFC 9112 §9.6), naming the idle
/// timeout.
#[test]
fn h1_idle_connection_closes() {
    let t0 = Instant::now();
    let mut client = Connection::client_http1(quiet_client(), t0).unwrap();
    let mut server =
        Connection::server_for(Protocol::Http1, server_config(Some(IDLE), None), t0).unwrap();
    let mut log = Default::default();
    let stream = client.send_request(get("/"), true).unwrap();
    settle(&mut client, &mut server, t0, &mut log);
    server
        .send_response(stream, ResponseHead::new(204), true)
        .unwrap();
    let t1 = t0 + Duration::from_secs(2);
    settle(&mut client, &mut server, t1, &mut log);
    assert_eq!(server.poll_timeout(), Some(t1 + IDLE));
    let ended = run_until_closed(&mut server, &mut client, t1, &mut log, true);
    assert_eq!(ended, t1 + IDLE);
    assert_eq!(closed(&log.1), (None, CloseCause::IdleTimeout));
}

/// A server still waiting for the bytes that tell HTTP/2 from HTTP/1.1 has
/// the same idle timer: a connection that never says anything is closed
/// (with no head-read timeout, which would close it first when shorter).
#[test]
fn undecided_server_idle_connection_closes() {
    let t0 = Instant::now();
    let mut server = Connection::server(server_config(Some(IDLE), None), t0).unwrap();
    assert_eq!(server.protocol(), None);
    assert_eq!(server.poll_timeout(), Some(t0 + IDLE));
    server.handle_timeout(t0 + IDLE);
    let events = events_of(&mut server);
    assert_eq!(closed(&events), (None, CloseCause::IdleTimeout));
    assert!(output_of(&mut server, t0 + IDLE).is_empty());
    assert!(server.is_closed());
    assert_eq!(server.poll_timeout(), None);
}

/// After our GOAWAY (RFC 9113 §6.8) the final one names the last stream,
/// but a stream the application never answers does not hold the
/// connection for ever: at the drain deadline it is cut, with
/// `CloseCause::DrainExpired` and the loss as the error, and the client
/// learns of it.
#[test]
fn h2_drain_deadline_cuts_open_streams() {
    let t0 = Instant::now();
    let mut client = Connection::client(quiet_client(), t0).unwrap();
    let mut server =
        Connection::server_for(Protocol::Http2, server_config(None, None), t0).unwrap();
    let mut log = Default::default();
    client.send_request(get("/never"), true).unwrap();
    settle(&mut client, &mut server, t0, &mut log);
    server.go_away(t0);
    settle(&mut client, &mut server, t0, &mut log);
    // The shutdown PING's answer came: the final GOAWAY is out, the
    // stream stays open, and the drain deadline is what is left.
    let goaways = log
        .0
        .iter()
        .filter(|e| matches!(e, Event::GoAway { .. }))
        .count();
    assert_eq!(goaways, 2, "{:?}", log.0);
    assert!(!server.is_closed());
    assert_eq!(server.poll_timeout(), Some(t0 + DRAIN));

    let ended = run_until_closed(&mut server, &mut client, t0, &mut log, true);
    assert_eq!(ended, t0 + DRAIN);
    assert_eq!(
        closed(&log.1),
        (
            Some(ConnectionError::DrainExpired),
            CloseCause::DrainExpired
        )
    );
    // The driver then closes the transport: the client's open stream is
    // lost, and it hears so.
    client.handle_eof(ended);
    let (error, _) = closed(&events_of(&mut client));
    assert_eq!(error, Some(ConnectionError::TransportClosed));
}

/// One timeline for HTTP/1.1 too: idle → `connection: close` pending on a
/// request the application holds → the drain deadline → cut.
#[test]
fn h1_idle_then_drain_deadline_cuts_an_unanswered_request() {
    let t0 = Instant::now();
    let mut client = Connection::client_http1(quiet_client(), t0).unwrap();
    let mut server =
        Connection::server_for(Protocol::Http1, server_config(Some(IDLE), None), t0).unwrap();
    let mut log = Default::default();
    client.send_request(get("/slow"), true).unwrap();
    settle(&mut client, &mut server, t0, &mut log);
    assert!(log.1.iter().any(|e| matches!(e, Event::Request { .. })));
    // Nothing moves: idle at t0 + IDLE, then the drain time runs.
    server.handle_timeout(t0 + IDLE);
    assert!(!server.is_closed(), "the request is still open");
    assert_eq!(server.poll_timeout(), Some(t0 + IDLE + DRAIN));
    let ended = run_until_closed(&mut server, &mut client, t0 + IDLE, &mut log, true);
    assert_eq!(ended, t0 + IDLE + DRAIN);
    // The idle timer started the end; the drain deadline cut it short.
    assert_eq!(closed(&log.1).1, CloseCause::DrainExpired);
}

/// Idle → GOAWAY → drain → cut on HTTP/2 with a stream open and nothing
/// moving: the idle timer's GOAWAY starts the drain time.
#[test]
fn h2_idle_then_drain_deadline_cuts_an_open_stream() {
    let t0 = Instant::now();
    let mut client = Connection::client(quiet_client(), t0).unwrap();
    let mut server =
        Connection::server_for(Protocol::Http2, server_config(Some(IDLE), None), t0).unwrap();
    let mut log = Default::default();
    client.send_request(get("/slow"), true).unwrap();
    settle(&mut client, &mut server, t0, &mut log);
    let ended = run_until_closed(&mut server, &mut client, t0, &mut log, true);
    assert_eq!(ended, t0 + IDLE + DRAIN);
    assert_eq!(
        closed(&log.1),
        (
            Some(ConnectionError::DrainExpired),
            CloseCause::DrainExpired
        )
    );
}

/// Slowloris: a request head sent a few bytes at a time keeps the idle
/// timer from firing, but not the head-read timer, which runs from the
/// head's first byte; the connection is cut with
/// `CloseCause::HeadReadTimeout`.
#[test]
fn h1_slowloris_head_is_cut_at_the_head_read_deadline() {
    let t0 = Instant::now();
    let idle = Duration::from_secs(2);
    let mut server =
        Connection::server_for(Protocol::Http1, server_config(Some(idle), Some(HEAD)), t0).unwrap();
    // One byte a second, well within the idle time each: the idle timer
    // never fires, and the head is still incomplete at the head deadline.
    assert_eq!(events_of(&mut server), [Event::Connected]);
    let mut now = t0;
    let mut input = BytesMut::new();
    let head_deadline = t0 + Duration::from_secs(1) + HEAD;
    for byte in b"GET /" {
        now += Duration::from_secs(1);
        input.extend_from_slice(&[*byte]);
        server.handle_input(now, &mut input);
        assert_eq!(server.poll_timeout(), Some((now + idle).min(head_deadline)));
        assert!(events_of(&mut server).is_empty());
    }
    assert!(now + idle > t0 + Duration::from_secs(1) + HEAD);
    server.handle_timeout(t0 + Duration::from_secs(1) + HEAD);
    let events = events_of(&mut server);
    assert_eq!(closed(&events).1, CloseCause::HeadReadTimeout);
    output_of(&mut server, now);
    assert!(server.is_closed());
}

/// Empty lines dripped in front of a request-line (CRLF, or a bare LF,
/// every 0.3 s) keep the idle timer from firing; RFC 9112 §2.2 lets a
/// server ignore at least one, not an endless stream, so they begin a head
/// and the head-read timer, running from the first of them, cuts the
/// connection.
#[test]
fn h1_dripped_empty_lines_are_cut_at_the_head_read_deadline() {
    for line in [&b"\r\n"[..], b"\n"] {
        let t0 = Instant::now();
        let idle = Duration::from_secs(2);
        let mut server = Connection::server(server_config(Some(idle), Some(HEAD)), t0).unwrap();
        let first = t0 + Duration::from_millis(300);
        let mut now = t0;
        let mut events = Vec::new();
        let mut input = BytesMut::new();
        while !server.is_closed() {
            now += Duration::from_millis(300);
            if let Some(deadline) = server.poll_timeout().filter(|d| *d <= now) {
                assert_eq!(deadline, first + HEAD, "{line:?}");
                server.handle_timeout(deadline);
                events.extend(events_of(&mut server));
                output_of(&mut server, deadline);
                continue;
            }
            assert!(now < first + HEAD, "{line:?}: still open at {:?}", now - t0);
            input.extend_from_slice(line);
            server.handle_input(now, &mut input);
            events.extend(events_of(&mut server));
            output_of(&mut server, now);
        }
        assert_eq!(closed(&events).1, CloseCause::HeadReadTimeout, "{line:?}");
    }
}

/// A connection that never sends a byte is cut at the head-read timeout
/// from its start, as nginx's `client_header_timeout` counts from the
/// accept: without an idle timeout (h2sim's default) it held its
/// descriptor for good. Whatever the protocol was set to; and a first
/// byte restarts the time, as for any head.
#[test]
fn a_silent_connection_is_cut_at_the_head_read_deadline() {
    let t0 = Instant::now();
    for protocol in [None, Some(Protocol::Http1), Some(Protocol::Http2)] {
        let config = server_config(None, Some(HEAD));
        let mut server = match protocol {
            None => Connection::server(config, t0).unwrap(),
            Some(p) => Connection::server_for(p, config, t0).unwrap(),
        };
        assert_eq!(server.poll_timeout(), Some(t0 + HEAD), "{protocol:?}");
        server.handle_timeout(t0 + HEAD);
        let events = events_of(&mut server);
        assert_eq!(
            closed(&events).1,
            CloseCause::HeadReadTimeout,
            "{protocol:?}"
        );
        // A server still telling the protocol apart heard nothing to
        // connect on: it closes without a `Connected`.
        if protocol.is_none() {
            assert!(!events.contains(&Event::Connected), "{events:?}");
        }
    }
    let mut server = Connection::server(server_config(None, Some(HEAD)), t0).unwrap();
    server.handle_eof(t0);
    let events = events_of(&mut server);
    assert_eq!(closed(&events).1, CloseCause::PeerClosed);
    assert!(!events.contains(&Event::Connected), "{events:?}");
    let mut server = Connection::server(server_config(None, Some(HEAD)), t0).unwrap();
    let t1 = t0 + Duration::from_secs(3);
    let mut input = BytesMut::from(&b"GE"[..]);
    server.handle_input(t1, &mut input);
    assert_eq!(
        server.poll_timeout(),
        Some(t1 + HEAD),
        "from the first byte"
    );
}

/// The same for a server still telling the protocol apart: bytes that
/// could still be the HTTP/2 preface, trickled in, are a head in progress.
#[test]
fn undecided_server_trickled_preface_is_cut_at_the_head_read_deadline() {
    let t0 = Instant::now();
    let mut server = Connection::server(server_config(Some(IDLE), Some(HEAD)), t0).unwrap();
    let mut input = BytesMut::from(&PREFACE[..8]);
    server.handle_input(t0, &mut input);
    assert_eq!(server.protocol(), None);
    assert_eq!(server.poll_timeout(), Some(t0 + HEAD));
    server.handle_timeout(t0 + HEAD);
    let events = events_of(&mut server);
    assert_eq!(closed(&events).1, CloseCause::HeadReadTimeout);
    output_of(&mut server, t0 + HEAD);
    assert!(server.is_closed());
}

/// Heads that complete in time stop the timer, and each new head gets its
/// own time, even when every read ends in the middle of the next head (a
/// pipelining client).
#[test]
fn h1_heads_read_in_time_are_not_cut() {
    let t0 = Instant::now();
    let mut server =
        Connection::server_for(Protocol::Http1, server_config(None, Some(HEAD)), t0).unwrap();
    let mut input = BytesMut::from(&b"GET /1 HTTP/1.1\r\nhost: a\r\n\r\nGET /2 HT"[..]);
    server.handle_input(t0, &mut input);
    assert_eq!(server.poll_timeout(), Some(t0 + HEAD));
    let t1 = t0 + Duration::from_secs(4);
    input.extend_from_slice(b"TP/1.1\r\nhost: a\r\n\r\nGET /3 H");
    server.handle_input(t1, &mut input);
    assert_eq!(
        server.poll_timeout(),
        Some(t1 + HEAD),
        "a new head, a new time"
    );
    let t2 = t1 + Duration::from_secs(4);
    input.extend_from_slice(b"TTP/1.1\r\nhost: a\r\n\r\n");
    server.handle_input(t2, &mut input);
    assert!(input.is_empty());
    assert_eq!(server.poll_timeout(), None, "no head in progress");
    let requests = events_of(&mut server)
        .into_iter()
        .filter(|e| matches!(e, Event::Request { .. }))
        .count();
    assert_eq!(requests, 3);
    assert!(!server.is_closed());
}

/// RFC 9113 §6.5.3: SETTINGS not acknowledged within
/// `Config::settings_timeout` end the connection with SETTINGS_TIMEOUT.
#[test]
fn unacknowledged_settings_end_the_connection() {
    let t0 = Instant::now();
    let config = server_config(None, None);
    let timeout = config.settings_timeout;
    let mut server = Connection::server_for(Protocol::Http2, config, t0).unwrap();
    // The peer's preface and empty SETTINGS, and never an ACK of ours.
    let mut input = BytesMut::from(&PREFACE[..]);
    input.extend_from_slice(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
    server.handle_input(t0, &mut input);
    output_of(&mut server, t0);
    assert_eq!(server.poll_timeout(), Some(t0 + timeout));
    server.handle_timeout(t0 + timeout);
    let events = events_of(&mut server);
    let (error, cause) = closed(&events);
    let expected = ConnectionError::Local {
        reason: Reason::SETTINGS_TIMEOUT,
        violation: Violation::SettingsTimeout,
    };
    assert_eq!(error.as_ref(), Some(&expected));
    assert_eq!(cause, CloseCause::Error(expected));
    // GOAWAY(SETTINGS_TIMEOUT) is queued: type 0x7, error code 0x4.
    let out = output_of(&mut server, t0 + timeout);
    assert_eq!(out[3], 0x7);
    assert_eq!(&out[13..17], &[0, 0, 0, 0x4]);
}
