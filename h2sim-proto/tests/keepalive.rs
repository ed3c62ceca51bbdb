//! `Config::keepalive` on the virtual clock: a quiet HTTP/2 connection
//! sends PING (RFC 9113 §6.7) and ends when the answer does not come;
//! HTTP/1.1 has no PING and sets no keep-alive timer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use h2sim_proto::frame::Frame;
use h2sim_proto::{CloseCause, Config, Connection, ConnectionError, Event};
use support::{Pair, RawPeer};

const EVERY: Duration = Duration::from_secs(5);

fn with_keepalive() -> Config {
    Config {
        keepalive: Some(EVERY),
        ..Config::default()
    }
}

fn pings(frames: &[Frame]) -> usize {
    frames
        .iter()
        .filter(|f| matches!(f, Frame::Ping(p) if !p.ack))
        .count()
}

#[test]
fn a_quiet_connection_is_pinged_and_lives_while_answered() {
    let mut pair = Pair::new(with_keepalive(), Config::default(), 1);
    pair.connect();
    for _ in 0..6 {
        pair.advance(EVERY);
        pair.drive();
    }
    let events = pair.client_events();
    assert!(
        !events.iter().any(|e| matches!(e, Event::Closed { .. })),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Pong { .. })),
        "keep-alive answers are not the application's"
    );
    assert!(!pair.client.is_closed());
}

#[test]
fn an_unanswered_ping_ends_the_connection() {
    let mut peer = RawPeer::client_with(with_keepalive());
    peer.handshake();
    // Nothing before the keep-alive time.
    peer.now += EVERY - Duration::from_millis(1);
    assert!(peer.conn.poll_timeout().is_some_and(|t| t > peer.now));
    peer.now += Duration::from_millis(1);
    peer.conn.handle_timeout(peer.now);
    assert_eq!(pings(&peer.frames()), 1);
    assert!(peer.events().is_empty());
    // No answer within the same time again: GOAWAY and the end.
    peer.now = peer.conn.poll_timeout().expect("the answer's deadline");
    peer.conn.handle_timeout(peer.now);
    let frames = peer.frames();
    assert!(
        frames.iter().any(|f| matches!(f, Frame::GoAway(_))),
        "{frames:?}"
    );
    assert!(peer.events().contains(&Event::Closed {
        error: Some(ConnectionError::KeepaliveTimeout),
        cause: CloseCause::KeepaliveTimeout,
    }));
}

/// A client's GOAWAY is the last frame it sends (servers on Python's
/// `h2` take any frame after it for a PROTOCOL_ERROR): no keep-alive PING
/// follows it while the connection waits for the answer to its own PING.
#[test]
fn no_keepalive_ping_follows_a_clients_goaway() {
    let mut peer = RawPeer::client_with(Config {
        keepalive: Some(Duration::from_millis(100)),
        ..Config::default()
    });
    peer.handshake();
    peer.conn.go_away(peer.now);
    let frames = peer.frames();
    assert!(
        matches!(frames.last(), Some(Frame::GoAway(_))),
        "{frames:?}"
    );
    peer.now += Duration::from_millis(150);
    peer.conn.handle_timeout(peer.now);
    assert_eq!(peer.frames(), [], "nothing after the GOAWAY");
}

#[test]
fn input_postpones_the_ping() {
    let mut peer = RawPeer::client_with(with_keepalive());
    peer.handshake();
    peer.now += EVERY / 2;
    peer.send(Frame::Ping(h2sim_proto::frame::Ping {
        ack: false,
        payload: *b"anything",
    }));
    peer.frames();
    peer.now += EVERY / 2;
    assert!(peer.conn.poll_timeout().is_some_and(|t| t > peer.now));
}

#[test]
fn http1_has_no_keepalive_timer() {
    // Without the idle timer, which HTTP/1.1 has too (see `timers.rs`).
    let config = Config {
        idle_timeout: None,
        ..with_keepalive()
    };
    let conn = Connection::client_http1(config, Instant::now()).unwrap();
    assert_eq!(conn.poll_timeout(), None);
}
