//! CONNECT over HTTP/2: the plain one of RFC 9113 §8.5 and the extended
//! one of RFC 8441 (`:protocol`, which WebSockets over HTTP/2 use), each
//! test naming the rule it checks. A raw peer writes the frames.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use h2sim_proto::frame::{Frame, Setting, Settings};
use h2sim_proto::{
    Config, Event, Malformation, Reason, RefusedWith, RequestHead, ResponseHead, UserError,
    Violation,
};
use support::{Pair, RawPeer, data, headers, sid};

/// The request a WebSocket client opens over HTTP/2 (RFC 8441 §5).
const WEBSOCKET: &[(&str, &str)] = &[
    (":method", "CONNECT"),
    (":protocol", "websocket"),
    (":scheme", "http"),
    (":path", "/chat"),
    (":authority", "example.com"),
    ("sec-websocket-version", "13"),
];

fn enabled() -> Config {
    Config {
        enable_connect_protocol: true,
        ..Config::default()
    }
}

/// A server with `config` past the handshake, and what it sent in it.
fn server(config: Config) -> (RawPeer, Vec<Frame>) {
    let mut peer = RawPeer::server(config);
    let frames = peer.handshake();
    (peer, frames)
}

/// Whether the server's first SETTINGS said ENABLE_CONNECT_PROTOCOL = 1.
fn advertises(frames: &[Frame]) -> bool {
    frames.iter().any(|f| {
        matches!(f, Frame::Settings(s) if !s.ack
            && s.values.contains(&Setting::EnableConnectProtocol(true)))
    })
}

/// The malformation stream 1's request was refused for, after checking
/// it was reset with PROTOCOL_ERROR (RFC 9113 §8.1.1) and never reached
/// the application as a request.
fn refused(peer: &mut RawPeer) -> Malformation {
    let frames = peer.frames();
    assert!(
        frames.iter().any(|f| matches!(f, Frame::RstStream(r)
            if r.stream_id == sid(1) && r.reason == Reason::PROTOCOL_ERROR)),
        "want RST_STREAM(PROTOCOL_ERROR) on 1: {frames:?}"
    );
    assert!(!frames.iter().any(|f| matches!(f, Frame::GoAway(_))));
    let events = peer.events();
    assert!(!events.iter().any(|e| matches!(e, Event::Request { .. })));
    events
        .into_iter()
        .find_map(|e| match e {
            Event::Refused {
                answer: RefusedWith::Reset(Reason::PROTOCOL_ERROR),
                violation: Violation::Malformed(m),
                ..
            } => Some(m),
            _ => None,
        })
        .expect("a Refused event naming the malformation")
}

/// The stream's DATA payloads the endpoint wrote, and whether one ended it.
fn stream_data(frames: &[Frame], stream: u32) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    let mut ended = false;
    for f in frames {
        if let Frame::Data(d) = f
            && d.stream_id == sid(stream)
        {
            bytes.extend_from_slice(&d.payload);
            ended |= d.end_stream;
        }
    }
    (bytes, ended)
}

/// Serves the request on stream 1 as a tunnel: a 2xx without END_STREAM,
/// then what the client sends is echoed, and its end is ours. Returns the
/// request head.
fn tunnel(peer: &mut RawPeer) -> RequestHead {
    let events = peer.events();
    let head = match &events[..] {
        [
            Event::Request {
                stream,
                head,
                end_stream: false,
            },
        ] if *stream == sid(1) => (**head).clone(),
        other => panic!("want the CONNECT as an open request: {other:?}"),
    };
    peer.conn
        .send_response(sid(1), ResponseHead::new(200), false)
        .unwrap();
    let frames = peer.frames();
    assert!(
        frames
            .iter()
            .any(|f| matches!(f, Frame::Headers(h) if h.stream_id == sid(1) && !h.end_stream)),
        "a 2xx that leaves the tunnel open: {frames:?}"
    );
    peer.send(data(1, b"hello", false));
    peer.send(data(1, b" tunnel", true));
    for event in peer.events() {
        if let Event::Data {
            stream,
            data,
            end_stream,
        } = event
        {
            peer.conn.send_data(stream, data, end_stream).unwrap();
        }
    }
    let frames = peer.frames();
    assert_eq!(stream_data(&frames, 1), (b"hello tunnel".to_vec(), true));
    assert!(
        !frames
            .iter()
            .any(|f| matches!(f, Frame::RstStream(_) | Frame::GoAway(_)))
    );
    head
}

/// RFC 8441 §3, §4: a server that sent SETTINGS_ENABLE_CONNECT_PROTOCOL
/// = 1 takes a CONNECT with `:protocol`, `:scheme` and `:path` as a
/// request ("the :scheme and :path pseudo-header fields MUST be
/// included"); §5's WebSocket then runs on the stream's DATA both ways.
#[test]
fn rfc8441_s4_extended_connect_is_a_request_once_advertised() {
    let (mut peer, frames) = server(enabled());
    assert!(advertises(&frames), "{frames:?}");
    let block = peer.block(WEBSOCKET);
    peer.send(headers(1, block, false));
    let head = tunnel(&mut peer);
    assert_eq!(head.method, "CONNECT");
    assert_eq!(head.protocol, "websocket");
    assert_eq!(head.scheme, "http");
    assert_eq!(head.path, "/chat");
    assert_eq!(head.authority, "example.com");
    assert_eq!(head.get(b"sec-websocket-version").unwrap(), "13");
}

/// RFC 8441 §3: the setting's absence means 0, so `:protocol` is one
/// pseudo-header this server does not define, and the request is
/// malformed (RFC 9113 §8.3: "MUST treat ... as malformed").
#[test]
fn rfc8441_s3_protocol_without_the_setting_is_malformed() {
    let (mut peer, frames) = server(Config::default());
    assert!(!advertises(&frames), "{frames:?}");
    let block = peer.block(WEBSOCKET);
    peer.send(headers(1, block, false));
    assert_eq!(refused(&mut peer), Malformation::ProtocolNotEnabled);
}

/// RFC 8441 §4: `:protocol` belongs to CONNECT; on a GET it is an
/// invalid pseudo-header (RFC 9113 §8.3), even where it is enabled.
#[test]
fn rfc8441_s4_protocol_on_another_method_is_malformed() {
    let (mut peer, _) = server(enabled());
    let mut fields = WEBSOCKET.to_vec();
    fields[0] = (":method", "GET");
    let block = peer.block(&fields);
    peer.send(headers(1, block, true));
    assert_eq!(refused(&mut peer), Malformation::ProtocolWithoutConnect);
}

/// RFC 8441 §4: "On requests bearing the :protocol pseudo-header, the
/// :scheme and :path pseudo-header fields MUST be included."
#[test]
fn rfc8441_s4_extended_connect_needs_scheme_and_path() {
    for missing in [":scheme", ":path"] {
        let (mut peer, _) = server(enabled());
        let fields: Vec<_> = WEBSOCKET
            .iter()
            .copied()
            .filter(|(name, _)| *name != missing)
            .collect();
        let block = peer.block(&fields);
        peer.send(headers(1, block, false));
        assert_eq!(
            refused(&mut peer),
            Malformation::MissingPseudoHeader(missing)
        );
    }
    let (mut peer, _) = server(enabled());
    let mut fields = WEBSOCKET.to_vec();
    fields[1] = (":protocol", "");
    let block = peer.block(&fields);
    peer.send(headers(1, block, false));
    assert_eq!(refused(&mut peer), Malformation::InvalidProtocol);
}

/// RFC 9113 §8.5: a plain CONNECT has `:method` and `:authority` only; it
/// opens a tunnel whose bytes are the stream's DATA, in both directions,
/// after a 2xx, and the client's END_STREAM ends its half. Enabling the
/// extended form leaves it as it was.
#[test]
fn rfc9113_s8_5_plain_connect_tunnels_data() {
    for config in [Config::default(), enabled()] {
        let (mut peer, _) = server(config);
        let block = peer.block(&[(":method", "CONNECT"), (":authority", "upstream:443")]);
        peer.send(headers(1, block, false));
        let head = tunnel(&mut peer);
        assert_eq!(head.authority, "upstream:443");
        assert!(head.protocol.is_empty() && head.path.is_empty() && head.scheme.is_empty());
    }
}

/// RFC 8441 §4: "a client MUST NOT send" `:protocol` to a server that has
/// not advertised SETTINGS_ENABLE_CONNECT_PROTOCOL = 1: the request is
/// refused with a `UserError` and nothing is sent; once the server says
/// 1, it goes out, and the server sees the protocol. `:protocol` on any
/// other method is refused whatever the server said.
#[test]
fn rfc8441_s4_a_client_sends_protocol_only_where_allowed() {
    let websocket =
        || RequestHead::new("CONNECT", "https", "example.com", "/chat").protocol("websocket");
    let mut pair = Pair::new(Config::default(), Config::default(), 7);
    pair.connect();
    assert_eq!(
        pair.client.send_request(websocket(), false),
        Err(UserError::ConnectProtocolNotEnabled)
    );
    pair.drive();
    assert!(
        !pair
            .server_events()
            .iter()
            .any(|e| matches!(e, Event::Request { .. } | Event::Refused { .. }))
    );

    let mut pair = Pair::new(Config::default(), enabled(), 7);
    pair.connect();
    let get = RequestHead::new("GET", "https", "example.com", "/").protocol("websocket");
    assert_eq!(
        pair.client.send_request(get, true),
        Err(UserError::ProtocolWithoutConnect)
    );
    let stream = pair.client.send_request(websocket(), false).unwrap();
    pair.drive();
    let events = pair.server_events();
    let head = events
        .iter()
        .find_map(|e| match e {
            Event::Request {
                stream: s, head, ..
            } if *s == stream => Some(head),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no request in {events:?}"));
    assert_eq!(head.protocol, "websocket");
    assert_eq!(head.path, "/chat");
}

/// RFC 8441 §3: a client's SETTINGS_ENABLE_CONNECT_PROTOCOL says nothing
/// (only a server accepts extended CONNECT), so a server that did not
/// advertise it still refuses `:protocol` from a client that sent 1.
#[test]
fn rfc8441_s3_a_clients_setting_enables_nothing() {
    let mut peer = RawPeer::server(Config::default());
    peer.send_bytes(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    peer.send(Frame::Settings(Settings {
        ack: false,
        values: vec![Setting::EnableConnectProtocol(true)],
    }));
    peer.frames();
    let block = peer.block(WEBSOCKET);
    peer.send(headers(1, block, false));
    assert_eq!(refused(&mut peer), Malformation::ProtocolNotEnabled);
}
