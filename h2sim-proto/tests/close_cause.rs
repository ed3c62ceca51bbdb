//! `Event::Closed` names what ended the connection, on both protocols and
//! both roles, including a server still detecting the protocol: what the
//! driver states (idle timeout, drain expiry, a transport failure), our
//! GOAWAY, the peer's, end of stream, and errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use bytes::BytesMut;
use h2sim_proto::{
    CloseCause, Config, Connection, ConnectionError, Event, Reason, RequestHead, ResponseHead,
    StreamId,
};
use support::Pair;

fn get(path: &str) -> RequestHead {
    RequestHead::new("GET", "http", "example.com", path.to_owned())
}

/// The cause of the `Closed` event among `events`, which must have one.
fn cause(events: &[Event]) -> CloseCause {
    events
        .iter()
        .find_map(|e| match e {
            Event::Closed { cause, .. } => Some(cause.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no Closed event in {events:?}"))
}

fn http1_pair(seed: u64) -> Pair {
    let mut pair = Pair::with_defaults(seed);
    pair.client = Connection::client_http1(Config::default(), pair.now).unwrap();
    pair
}

#[test]
fn h2_client_go_away_is_local_for_it_and_received_for_the_server() {
    let mut pair = Pair::with_defaults(1);
    pair.connect();
    pair.client.go_away(pair.now);
    pair.drive();
    assert_eq!(cause(&pair.client_events()), CloseCause::LocalGoAway);
    // The server hears the GOAWAY, then the end of stream.
    pair.server.handle_eof(pair.now);
    assert_eq!(
        cause(&pair.server_events()),
        CloseCause::GoAwayReceived {
            reason: Reason::NO_ERROR
        }
    );
}

/// A client going away from a server that has not sent its SETTINGS
/// closes at once, its GOAWAY written: it waited a second for the answer
/// to a PING that a server saying nothing never gives.
#[test]
fn h2_client_go_away_before_the_servers_settings_closes_at_once() {
    let now = Instant::now();
    let mut client = Connection::client(Config::default(), now).unwrap();
    client.go_away(now);
    let mut written = Vec::new();
    while let Some(bytes) = client.poll_transmit(now) {
        written.extend_from_slice(&bytes);
    }
    let events: Vec<Event> = std::iter::from_fn(|| client.poll_event()).collect();
    assert_eq!(cause(&events), CloseCause::LocalGoAway);
    // After the preface, SETTINGS (4), the connection's WINDOW_UPDATE (8)
    // and GOAWAY (7), no PING (6): each frame's type is the fourth octet
    // of its 9-octet head.
    let mut frames = Vec::new();
    let mut rest = &written[24..];
    while let [a, b, c, kind, ..] = *rest {
        frames.push(kind);
        let length = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
        rest = &rest[9 + length..];
    }
    assert_eq!(frames.last(), Some(&7), "{frames:?}");
    assert!(!frames.contains(&6), "{frames:?}");
}

#[test]
fn h2_idle_timeout_stated_by_the_driver_is_the_cause() {
    let mut pair = Pair::with_defaults(2);
    pair.connect();
    pair.server
        .go_away_because(pair.now, CloseCause::IdleTimeout);
    pair.drive();
    // The shutdown's round trip (RFC 9113 §6.8) completes on the PING ack.
    pair.advance(Duration::from_secs(2));
    pair.drive();
    assert_eq!(cause(&pair.server_events()), CloseCause::IdleTimeout);
    assert_eq!(
        cause(&pair.client_events()),
        CloseCause::GoAwayReceived {
            reason: Reason::NO_ERROR
        }
    );
}

/// `Config::max_requests`: the server names its limit as the cause, on
/// both protocols; the client hears a GOAWAY, or HTTP/1.1's `close`.
#[test]
fn a_request_limit_is_the_servers_cause() {
    for http1 in [false, true] {
        let mut pair = if http1 {
            http1_pair(4)
        } else {
            Pair::with_defaults(4)
        };
        pair.server = Connection::server(
            Config {
                max_requests: std::num::NonZeroU32::new(1),
                ..Config::default()
            },
            pair.now,
        )
        .unwrap();
        if !http1 {
            pair.connect();
        }
        let stream = pair.client.send_request(get("/one"), true).unwrap();
        pair.drive();
        let mut events = pair.server_events();
        let request = events.iter().find_map(|e| match e {
            Event::Request { stream, .. } => Some(*stream),
            _ => None,
        });
        pair.server
            .send_response(request.unwrap(), ResponseHead::new(200), true)
            .unwrap();
        pair.drive();
        events.extend(pair.server_events());
        assert_eq!(cause(&events), CloseCause::RequestLimit, "http1={http1}");
        let client = pair.client_events();
        assert!(
            client
                .iter()
                .any(|e| matches!(e, Event::Response { stream: s, .. } if *s == stream)),
            "http1={http1}: {client:?}"
        );
        assert_eq!(
            cause(&client),
            CloseCause::GoAwayReceived {
                reason: Reason::NO_ERROR
            },
            "http1={http1}"
        );
    }
}

#[test]
fn h2_drain_expiry_replaces_the_graceful_cause() {
    let mut pair = Pair::with_defaults(3);
    pair.connect();
    pair.client.send_request(get("/slow"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    pair.server
        .go_away_because(pair.now, CloseCause::IdleTimeout);
    pair.drive();
    pair.advance(Duration::from_secs(5));
    pair.server
        .abort_because(Reason::NO_ERROR, CloseCause::DrainExpired);
    assert_eq!(cause(&pair.server_events()), CloseCause::DrainExpired);
}

#[test]
fn h2_end_of_stream_is_peer_closed_with_or_without_loss() {
    let mut pair = Pair::with_defaults(4);
    pair.connect();
    pair.client.handle_eof(pair.now);
    let events = pair.client_events();
    assert_eq!(cause(&events), CloseCause::PeerClosed);
    assert!(events.contains(&Event::Closed {
        error: None,
        cause: CloseCause::PeerClosed
    }));

    let mut pair = Pair::with_defaults(5);
    pair.connect();
    pair.client.send_request(get("/"), true).unwrap();
    pair.drive();
    pair.client.handle_eof(pair.now);
    assert!(pair.client_events().contains(&Event::Closed {
        error: Some(ConnectionError::TransportClosed),
        cause: CloseCause::PeerClosed
    }));
}

#[test]
fn h2_transport_error_is_named() {
    let mut pair = Pair::with_defaults(6);
    pair.connect();
    pair.client
        .handle_transport_error(pair.now, "connection reset by peer");
    assert_eq!(
        cause(&pair.client_events()),
        CloseCause::TransportError("connection reset by peer".into())
    );
}

#[test]
fn h2_protocol_error_is_the_cause_on_both_sides() {
    let mut pair = Pair::with_defaults(7);
    pair.connect();
    // DATA on stream 0 is a connection error PROTOCOL_ERROR (RFC 9113 §6.1).
    let mut bad = BytesMut::from(&[0u8, 0, 0, 0x0, 0, 0, 0, 0, 0][..]);
    pair.client.handle_input(pair.now, &mut bad);
    let client = cause(&pair.client_events());
    assert!(
        matches!(&client, CloseCause::Error(ConnectionError::Local { reason, .. })
            if *reason == Reason::PROTOCOL_ERROR),
        "{client:?}"
    );
    pair.drive();
    // A server stays for the client's end of stream (RFC 9113 §6.8).
    pair.server.handle_eof(pair.now);
    assert_eq!(
        cause(&pair.server_events()),
        CloseCause::GoAwayReceived {
            reason: Reason::PROTOCOL_ERROR
        }
    );
}

/// The peer's `connection: close` as either end sees it.
const PEER_SAID_CLOSE: CloseCause = CloseCause::GoAwayReceived {
    reason: Reason::NO_ERROR,
};

/// An HTTP/1.1 pair (seeded `seed`) whose server went away, then answered
/// the client's GET / with `head`, which says `connection: close`.
fn h1_server_closing(seed: u64, head: ResponseHead, end_stream: bool) -> (Pair, StreamId) {
    let mut pair = http1_pair(seed);
    let id = pair.client.send_request(get("/"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    pair.server.go_away(pair.now);
    pair.server.send_response(id, head, end_stream).unwrap();
    pair.drive();
    (pair, id)
}

#[test]
fn h1_connection_close_from_the_peer_is_a_received_go_away() {
    // The server goes away: its response says `connection: close`.
    let (mut pair, _) = h1_server_closing(8, ResponseHead::new(200), true);
    assert_eq!(cause(&pair.server_events()), CloseCause::LocalGoAway);
    assert_eq!(cause(&pair.client_events()), PEER_SAID_CLOSE);

    // The client goes away: its request says `connection: close`.
    let mut pair = http1_pair(10);
    let id = pair.client.send_request(get("/"), true).unwrap();
    pair.client.go_away(pair.now);
    pair.drive();
    let _ = pair.server_events();
    pair.server
        .send_response(id, ResponseHead::new(200), true)
        .unwrap();
    pair.drive();
    assert_eq!(cause(&pair.server_events()), PEER_SAID_CLOSE);
    assert_eq!(cause(&pair.client_events()), CloseCause::LocalGoAway);
}

/// The peer's `connection: close` came first: a GOAWAY of ours once the
/// response is in (a client whose run ends, say) does not rename it,
/// whether the session has closed yet or still waits for the body.
#[test]
fn h1_a_local_go_away_after_the_peers_close_keeps_the_peers_cause() {
    // The session closed with the response; our GOAWAY comes before its
    // `Closed` event is taken.
    let (mut pair, _) = h1_server_closing(11, ResponseHead::new(200), true);
    pair.client.go_away(pair.now);
    assert_eq!(cause(&pair.client_events()), PEER_SAID_CLOSE);

    // The response's head said close and its body is still coming when
    // we go away.
    let head = ResponseHead::new(200).field("content-length", "2");
    let (mut pair, id) = h1_server_closing(12, head, false);
    let _ = pair.client_events();
    pair.client.go_away(pair.now);
    pair.server
        .send_data(id, bytes::Bytes::from_static(b"ok"), true)
        .unwrap();
    pair.drive();
    assert_eq!(cause(&pair.client_events()), PEER_SAID_CLOSE);
}

#[test]
fn h1_idle_timeout_and_local_go_away() {
    let mut pair = http1_pair(9);
    let id = pair.client.send_request(get("/"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    pair.server
        .send_response(id, ResponseHead::new(200), true)
        .unwrap();
    pair.drive();
    let _ = (pair.client_events(), pair.server_events());
    pair.server
        .go_away_because(pair.now, CloseCause::IdleTimeout);
    assert_eq!(cause(&pair.server_events()), CloseCause::IdleTimeout);
    pair.client.go_away(pair.now);
    assert_eq!(cause(&pair.client_events()), CloseCause::LocalGoAway);
}

#[test]
fn undecided_server_idle_timeout_and_end_of_stream() {
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    server.go_away_because(now, CloseCause::IdleTimeout);
    let events: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
    assert_eq!(cause(&events), CloseCause::IdleTimeout);

    let mut server = Connection::server(Config::default(), now).unwrap();
    server.handle_eof(now);
    let events: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
    assert_eq!(cause(&events), CloseCause::PeerClosed);
}

#[test]
fn causes_print_as_h2simple_lines_do() {
    assert_eq!(CloseCause::PeerClosed.to_string(), "by peer close");
    assert_eq!(CloseCause::IdleTimeout.to_string(), "by idle timeout");
    assert_eq!(
        CloseCause::GoAwayReceived {
            reason: Reason::PROTOCOL_ERROR
        }
        .to_string(),
        "by peer GOAWAY (PROTOCOL_ERROR)"
    );
}
