//! One test per MUST of RFC 9113 that an endpoint enforces on its peer: a
//! raw peer writes the (often invalid) frames, and each test checks the exact
//! error code and whether it ended the stream or the connection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use h2sim_proto::frame::{
    Continuation, Frame, GoAway, Headers, Ping, PushPromise, RstStream, Setting, Settings,
    StreamId, WindowUpdate,
};
use h2sim_proto::hpack::HeaderField;
use h2sim_proto::{
    Config, ConnectionError, Event, Limits, Malformation, Reason, RefusedWith, ResponseHead,
    UserError, Violation,
};
use support::{GET, RawPeer, data, headers, sid};

/// A server that has completed the handshake with the raw peer.
fn server() -> RawPeer {
    server_with(Config::default())
}

fn server_with(config: Config) -> RawPeer {
    let mut peer = RawPeer::server(config);
    peer.handshake();
    peer
}

/// Opens stream `id` with a GET (no body unless `end_stream` is false).
fn open(peer: &mut RawPeer, id: u32, end_stream: bool) {
    let block = peer.block(GET);
    peer.send(headers(id, block, end_stream));
}

/// The GOAWAY the endpoint sent, if any.
fn goaway(frames: &[Frame]) -> Option<&GoAway> {
    frames.iter().find_map(|f| match f {
        Frame::GoAway(g) => Some(g),
        _ => None,
    })
}

/// Neither a stream nor the connection was reset.
fn assert_no_error(frames: &[Frame]) {
    assert!(
        !frames
            .iter()
            .any(|f| matches!(f, Frame::RstStream(_) | Frame::GoAway(_))),
        "{frames:?}"
    );
}

fn assert_connection_error(peer: &mut RawPeer, reason: Reason) {
    let frames = peer.frames();
    let g = goaway(&frames).unwrap_or_else(|| panic!("no GOAWAY in {frames:?}"));
    assert_eq!(g.reason, reason, "GOAWAY code; debug: {:?}", g.debug_data);
    assert!(peer.conn.is_closed() || peer.conn.poll_transmit(peer.now).is_none());
    let events = peer.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Closed { error: Some(err), .. } if err.reason() == reason)),
        "{events:?}"
    );
}

fn assert_stream_error(peer: &mut RawPeer, stream: u32, reason: Reason) {
    let frames = peer.frames();
    assert!(
        goaway(&frames).is_none(),
        "connection must survive: {frames:?}"
    );
    assert!(
        frames.iter().any(
            |f| matches!(f, Frame::RstStream(r) if r.stream_id == sid(stream) && r.reason == reason)
        ),
        "want RST_STREAM({reason}) on {stream}: {frames:?}"
    );
}

/// §3.4: "Clients and servers MUST treat an invalid connection preface as
/// a connection error (Section 5.4.1) of type PROTOCOL_ERROR." The GOAWAY
/// MAY be omitted; we send it after our SETTINGS, so an HTTP/1.1 client at
/// an HTTP/2-only listener hears why.
#[test]
fn s3_4_invalid_preface_is_goaway_protocol_error() {
    let mut peer = RawPeer::server(Config::default());
    peer.frames(); // our SETTINGS
    peer.send_bytes(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let frames = peer.frames();
    let g = goaway(&frames).unwrap_or_else(|| panic!("no GOAWAY in {frames:?}"));
    assert_eq!(g.reason, Reason::PROTOCOL_ERROR);
    assert_eq!(g.last_stream_id, sid(0));
    assert!(peer.conn.is_closed());
    assert!(matches!(
        peer.conn.error(),
        Some(ConnectionError::Local {
            violation: Violation::BadPreface,
            ..
        })
    ));
}

/// §3.3/§3.4: a client with prior knowledge whose server answers in
/// HTTP/1.1 (a 400, as nginx and h2o do on an HTTP/1.1-only port) ends
/// the connection with PROTOCOL_ERROR, naming the answer, rather than
/// reading "HTTP" as a frame of 4,740,180 octets (FRAME_SIZE_ERROR).
#[test]
fn s3_3_an_http1_answer_to_prior_knowledge_is_named() {
    let mut peer = RawPeer::client(Config::default());
    peer.frames(); // the preface and our SETTINGS
    peer.send_bytes(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
    assert!(peer.conn.is_closed() || closed(&peer.events()).is_some());
    let error = peer.conn.error().expect("a connection error");
    assert!(
        matches!(
            error,
            ConnectionError::Local {
                reason: Reason::PROTOCOL_ERROR,
                violation: Violation::Http1Answer { status_line },
                ..
            } if &status_line[..] == b"HTTP/1.1 400 Bad Request"
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("answered in HTTP/1.1"),
        "{error}"
    );
}

/// §3.2 (h2 over TLS is the "https" scheme's) and RFC 8446 §5.1: a client
/// that spoke h2c to a TLS port gets a TLS alert record, 7 bytes and then
/// the end, shorter than a frame header: it is named from its first three
/// bytes (alert, version 3.3), PROTOCOL_ERROR, not left waiting for a
/// frame the server will never finish.
#[test]
fn s3_2_a_tls_answer_to_cleartext_is_named() {
    for alert in [
        &b"\x15\x03\x03\x00\x02\x02\x46"[..],
        &b"\x15\x03\x01\x00\x02\x02\x32"[..],
    ] {
        let mut peer = RawPeer::client(Config::default());
        peer.frames(); // the preface and our SETTINGS
        peer.send_bytes(alert);
        let error = peer.conn.error().expect("a connection error");
        assert!(
            matches!(
                error,
                ConnectionError::Local {
                    reason: Reason::PROTOCOL_ERROR,
                    violation: Violation::TlsAnswer,
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(error.to_string().contains("answered in TLS"), "{error}");
    }
}

/// §3.4: the first frame is told by its header's type and flags, before
/// its length: a PING whose length field reads as a megabyte and a
/// SETTINGS ACK sent first are both "first frame not SETTINGS",
/// PROTOCOL_ERROR, not FRAME_SIZE_ERROR.
#[test]
fn s3_4_the_first_frame_is_judged_by_its_type_before_its_length() {
    let mut peer = RawPeer::client(Config::default());
    peer.frames();
    peer.send_bytes(b"\x10\x00\x00\x06\x00\x00\x00\x00\x00");
    assert!(
        matches!(
            peer.conn.error(),
            Some(ConnectionError::Local {
                reason: Reason::PROTOCOL_ERROR,
                violation: Violation::FirstFrameNotSettings,
                ..
            })
        ),
        "{:?}",
        peer.conn.error()
    );
    let mut peer = RawPeer::server(Config::default());
    peer.send_bytes(h2sim_proto::frame::PREFACE);
    peer.send(Frame::Settings(Settings {
        ack: true,
        values: Vec::new(),
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s3_4_first_frame_must_be_settings() {
    let mut peer = RawPeer::server(Config::default());
    peer.send_bytes(h2sim_proto::frame::PREFACE);
    peer.send(Frame::Ping(Ping {
        ack: false,
        payload: [0; 8],
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s4_2_frame_above_max_frame_size_is_frame_size_error() {
    let mut peer = server();
    open(&mut peer, 1, false);
    let big: &'static [u8] = Box::leak(vec![0u8; 16_385].into_boxed_slice());
    peer.send(data(1, big, false));
    assert_connection_error(&mut peer, Reason::FRAME_SIZE_ERROR);
}

#[test]
fn s4_3_undecodable_field_block_is_compression_error() {
    let mut peer = server();
    peer.send(headers(
        1,
        Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        true,
    ));
    assert_connection_error(&mut peer, Reason::COMPRESSION_ERROR);
}

#[test]
fn s5_1_data_on_idle_stream_is_protocol_error() {
    let mut peer = server();
    peer.send(data(1, b"x", true));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s5_1_rst_stream_on_idle_stream_is_protocol_error() {
    let mut peer = server();
    peer.send(Frame::RstStream(RstStream {
        stream_id: sid(3),
        reason: Reason::CANCEL,
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s5_1_window_update_on_idle_stream_is_protocol_error() {
    let mut peer = server();
    peer.send(Frame::WindowUpdate(WindowUpdate {
        stream_id: sid(5),
        increment: 1,
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s5_1_data_on_half_closed_remote_is_stream_closed() {
    let mut peer = server();
    open(&mut peer, 1, true);
    peer.send(data(1, b"late", false));
    assert_stream_error(&mut peer, 1, Reason::STREAM_CLOSED);
}

#[test]
fn s5_1_data_after_peer_reset_is_stream_closed() {
    let mut peer = server();
    open(&mut peer, 1, false);
    peer.send(Frame::RstStream(RstStream {
        stream_id: sid(1),
        reason: Reason::CANCEL,
    }));
    peer.send(data(1, b"x", false));
    let frames = peer.frames();
    let closed = goaway(&frames).map(|g| g.reason) == Some(Reason::STREAM_CLOSED)
        || frames
            .iter()
            .any(|f| matches!(f, Frame::RstStream(r) if r.reason == Reason::STREAM_CLOSED));
    assert!(closed, "{frames:?}");
}

#[test]
fn s5_1_frames_after_our_reset_are_ignored() {
    let mut peer = server();
    open(&mut peer, 1, false);
    peer.events();
    peer.conn.reset(sid(1), Reason::CANCEL).unwrap();
    peer.frames();
    peer.send(data(1, b"in flight", false));
    let frames = peer.frames();
    assert!(goaway(&frames).is_none(), "{frames:?}");
}

#[test]
fn s5_4_1_connection_error_is_sticky() {
    // §5.4.1: after a connection error the endpoint sends GOAWAY and
    // closes; what the peer sends after it is not processed, and the error
    // stays what the connection reports after `Closed` was polled.
    let mut peer = server();
    peer.send(data(1, b"x", true));
    assert!(goaway(&peer.frames()).is_some());
    let first = match closed(&peer.events()) {
        Some(Event::Closed { error: Some(e), .. }) => e.clone(),
        other => panic!("no error close: {other:?}"),
    };
    assert_eq!(peer.conn.error(), Some(&first));
    open(&mut peer, 1, true);
    peer.send(Frame::Ping(Ping {
        ack: false,
        payload: [7; 8],
    }));
    peer.send(data(3, b"y", true));
    assert!(peer.frames().is_empty(), "nothing answered after the error");
    assert!(peer.events().is_empty(), "nothing reported after the error");
    assert_eq!(peer.conn.error(), Some(&first));
}

#[test]
fn s5_1_1_even_stream_id_from_client_is_protocol_error() {
    let mut peer = server();
    open(&mut peer, 2, true);
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s5_1_1_decreasing_stream_id_is_protocol_error() {
    let mut peer = server();
    open(&mut peer, 5, true);
    open(&mut peer, 3, true);
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s5_1_2_streams_above_max_concurrent_are_refused() {
    let mut peer = server_with(Config {
        max_concurrent_streams: 2,
        ..Config::default()
    });
    for id in [1, 3, 5] {
        open(&mut peer, id, true);
    }
    assert_stream_error(&mut peer, 5, Reason::REFUSED_STREAM);
    let events = peer.events();
    let requests = events
        .iter()
        .filter(|e| matches!(e, Event::Request { .. }))
        .count();
    assert_eq!(requests, 2);
    // The application hears of the refusal too.
    assert_eq!(
        refusals(&events),
        [(
            5,
            RefusedWith::Reset(Reason::REFUSED_STREAM),
            Violation::ConcurrencyExceeded
        )]
    );
}

#[test]
fn s5_3_1_self_dependency_is_a_stream_error() {
    let mut peer = server();
    open(&mut peer, 1, false);
    peer.send(Frame::Priority(h2sim_proto::frame::Priority {
        stream_id: sid(1),
        spec: h2sim_proto::frame::PrioritySpec {
            dependency: sid(1),
            exclusive: false,
            weight: 16,
        },
    }));
    assert_stream_error(&mut peer, 1, Reason::PROTOCOL_ERROR);
}

#[test]
fn s6_2_headers_interrupted_by_another_frame_is_protocol_error() {
    let mut peer = server();
    let block = peer.block(GET);
    peer.send(Frame::Headers(Headers {
        stream_id: sid(1),
        fragment: block.slice(..2),
        end_stream: true,
        end_headers: false,
        priority: None,
        padding: None,
    }));
    peer.send(Frame::Ping(Ping {
        ack: false,
        payload: [1; 8],
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s6_10_continuation_on_another_stream_is_protocol_error() {
    let mut peer = server();
    let block = peer.block(GET);
    peer.send(Frame::Headers(Headers {
        stream_id: sid(1),
        fragment: block.slice(..2),
        end_stream: true,
        end_headers: false,
        priority: None,
        padding: None,
    }));
    peer.send(Frame::Continuation(Continuation {
        stream_id: sid(3),
        fragment: block.slice(2..),
        end_headers: true,
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s6_10_continuation_on_another_stream_names_both_streams() {
    // §6.10: a CONTINUATION for another stream than the open block's is a
    // connection error; the violation says which stream each one named.
    let mut peer = server();
    let block = peer.block(GET);
    peer.send(Frame::Headers(Headers {
        stream_id: sid(1),
        fragment: block.slice(..2),
        end_stream: true,
        end_headers: false,
        priority: None,
        padding: None,
    }));
    peer.send(Frame::Continuation(Continuation {
        stream_id: sid(3),
        fragment: block.slice(2..),
        end_headers: true,
    }));
    let frames = peer.frames();
    let g = goaway(&frames).unwrap_or_else(|| panic!("no GOAWAY in {frames:?}"));
    assert_eq!(g.reason, Reason::PROTOCOL_ERROR);
    let debug = String::from_utf8_lossy(&g.debug_data);
    assert!(
        debug.contains("stream 1") && debug.contains("stream 3"),
        "{debug}"
    );
    let events = peer.events();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Closed {
                error: Some(ConnectionError::Local {
                    reason: Reason::PROTOCOL_ERROR,
                    violation: Violation::ContinuationStreamMismatch { block, got },
                }),
                ..
            } if *block == sid(1) && *got == sid(3)
        )),
        "{events:?}"
    );
}

#[test]
fn s6_10_field_block_split_over_continuations_is_accepted() {
    let mut peer = server_with(Config {
        limits: Limits {
            max_continuation_frames: 64,
            ..Limits::default()
        },
        ..Config::default()
    });
    let block = peer.block(GET);
    peer.send(Frame::Headers(Headers {
        stream_id: sid(1),
        fragment: block.slice(..1),
        end_stream: true,
        end_headers: false,
        priority: None,
        padding: Some(3),
    }));
    for i in 1..block.len() {
        peer.send(Frame::Continuation(Continuation {
            stream_id: sid(1),
            fragment: block.slice(i..i + 1),
            end_headers: i + 1 == block.len(),
        }));
    }
    assert!(
        peer.events()
            .iter()
            .any(|e| matches!(e, Event::Request { .. }))
    );
}

#[test]
fn s6_10_unexpected_continuation_is_protocol_error() {
    let mut peer = server();
    open(&mut peer, 1, false);
    peer.send(Frame::Continuation(Continuation {
        stream_id: sid(1),
        fragment: Bytes::new(),
        end_headers: true,
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s6_5_settings_ack_with_payload_is_frame_size_error() {
    let mut peer = server();
    // An ACK flag with a payload: encode by hand (type 4, flags ACK, length 6).
    peer.send_bytes(&[0, 0, 6, 4, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
    assert_connection_error(&mut peer, Reason::FRAME_SIZE_ERROR);
}

#[test]
fn s6_5_2_initial_window_size_above_max_is_flow_control_error() {
    let mut peer = server();
    // SETTINGS_INITIAL_WINDOW_SIZE = 2^31.
    peer.send_bytes(&[0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 4, 0x80, 0, 0, 0]);
    assert_connection_error(&mut peer, Reason::FLOW_CONTROL_ERROR);
}

#[test]
fn s6_5_2_server_enabling_push_is_protocol_error() {
    let mut peer = RawPeer::client(Config::default());
    peer.send(Frame::Settings(Settings {
        ack: false,
        values: vec![Setting::EnablePush(true)],
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s6_5_3_settings_acknowledged_once_each() {
    let mut peer = server();
    peer.send(Frame::Settings(Settings {
        ack: false,
        values: vec![Setting::MaxFrameSize(20_000)],
    }));
    let acks = peer
        .frames()
        .iter()
        .filter(|f| matches!(f, Frame::Settings(s) if s.ack))
        .count();
    assert_eq!(acks, 1);
}

#[test]
fn s6_5_3_unacknowledged_settings_time_out() {
    let mut peer = RawPeer::server(Config::default());
    peer.send_bytes(h2sim_proto::frame::PREFACE);
    peer.send(Frame::Settings(Settings {
        ack: false,
        values: vec![],
    }));
    peer.frames();
    peer.now += Duration::from_secs(11);
    let deadline = peer.conn.poll_timeout().expect("a settings deadline");
    assert!(deadline <= peer.now);
    peer.conn.handle_timeout(peer.now);
    assert_connection_error(&mut peer, Reason::SETTINGS_TIMEOUT);
}

#[test]
fn s6_7_ping_is_answered_with_the_same_payload() {
    let mut peer = server();
    peer.send(Frame::Ping(Ping {
        ack: false,
        payload: *b"12345678",
    }));
    let frames = peer.frames();
    assert!(
        frames.contains(&Frame::Ping(Ping {
            ack: true,
            payload: *b"12345678"
        })),
        "{frames:?}"
    );
}

#[test]
fn s6_8_goaway_from_client_stops_new_pushes() {
    let mut peer = server();
    open(&mut peer, 1, true);
    peer.send(Frame::GoAway(GoAway {
        last_stream_id: sid(0),
        reason: Reason::NO_ERROR,
        debug_data: Bytes::new(),
    }));
    assert!(
        peer.conn
            .push_promise(
                sid(1),
                h2sim_proto::RequestHead::new("GET", "http", "a", "/p")
            )
            .is_err()
    );
    // The open stream can still be answered.
    peer.events();
    peer.conn
        .send_response(sid(1), ResponseHead::new(200), true)
        .unwrap();
    let frames = peer.frames();
    assert!(
        frames
            .iter()
            .any(|f| matches!(f, Frame::Headers(h) if h.stream_id == sid(1)))
    );
}

#[test]
fn s6_9_zero_increment_on_stream_is_stream_error() {
    let mut peer = server();
    open(&mut peer, 1, false);
    peer.send_bytes(&[0, 0, 4, 8, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
    assert_stream_error(&mut peer, 1, Reason::PROTOCOL_ERROR);
}

#[test]
fn s6_9_zero_increment_on_connection_is_connection_error() {
    let mut peer = server();
    peer.send_bytes(&[0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s6_9_1_connection_window_overflow_is_flow_control_error() {
    let mut peer = server();
    peer.send(Frame::WindowUpdate(WindowUpdate {
        stream_id: sid(0),
        increment: (1 << 31) - 1,
    }));
    assert_connection_error(&mut peer, Reason::FLOW_CONTROL_ERROR);
}

#[test]
fn s6_9_1_stream_window_overflow_is_stream_error() {
    let mut peer = server();
    open(&mut peer, 1, false);
    peer.send(Frame::WindowUpdate(WindowUpdate {
        stream_id: sid(1),
        increment: (1 << 31) - 1,
    }));
    assert_stream_error(&mut peer, 1, Reason::FLOW_CONTROL_ERROR);
}

#[test]
fn s6_9_1_data_beyond_the_window_is_flow_control_error() {
    // Before our SETTINGS are acknowledged the stream window is 65,535.
    let mut peer = RawPeer::server(Config {
        max_frame_size: 65_535,
        ..Config::default()
    });
    peer.send_bytes(h2sim_proto::frame::PREFACE);
    peer.send(Frame::Settings(Settings {
        ack: false,
        values: vec![],
    }));
    peer.send(Frame::Settings(Settings {
        ack: true,
        values: vec![],
    }));
    peer.frames();
    let mut peer = peer;
    open(&mut peer, 1, false);
    let chunk: &'static [u8] = Box::leak(vec![0u8; 65_535].into_boxed_slice());
    // Our stream window is 1 MiB after the ACK, the connection's 8 MiB:
    // exceed the stream window only.
    for _ in 0..17 {
        peer.send(data(1, chunk, false));
    }
    assert_stream_error(&mut peer, 1, Reason::FLOW_CONTROL_ERROR);
}

#[test]
fn s6_9_2_initial_window_change_can_make_a_window_negative() {
    let mut peer = server();
    open(&mut peer, 1, true);
    peer.events();
    peer.conn
        .send_response(sid(1), ResponseHead::new(200), false)
        .unwrap();
    peer.conn
        .send_data(sid(1), Bytes::from(vec![7u8; 70_000]), true)
        .unwrap();
    let sent: usize = peer
        .frames()
        .iter()
        .map(|f| match f {
            Frame::Data(d) => d.payload.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(sent, 65_535, "the default stream window");
    // Shrink the window by 10,000: the stream now owes 10,000 bytes.
    peer.send(Frame::Settings(Settings {
        ack: false,
        values: vec![Setting::InitialWindowSize(55_535)],
    }));
    peer.send(Frame::WindowUpdate(WindowUpdate {
        stream_id: sid(0),
        increment: 1 << 20,
    }));
    peer.send(Frame::WindowUpdate(WindowUpdate {
        stream_id: sid(1),
        increment: 10_000,
    }));
    let sent: usize = peer
        .frames()
        .iter()
        .map(|f| match f {
            Frame::Data(d) => d.payload.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(sent, 0, "window back at zero, nothing may be sent");
    peer.send(Frame::WindowUpdate(WindowUpdate {
        stream_id: sid(1),
        increment: 4_465,
    }));
    let sent: usize = peer
        .frames()
        .iter()
        .map(|f| match f {
            Frame::Data(d) => d.payload.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(sent, 4_465);
}

/// Streams held by a window of 0 resume when SETTINGS raises it (§6.9.2),
/// oldest first: the order of what a walk over the streams writes follows
/// their ids, not the seed of the map that holds them, so a run replays
/// the same for the same input.
#[test]
fn s6_9_2_streams_a_raised_initial_window_wakes_resume_in_id_order() {
    let mut peer = server();
    peer.send(Frame::Settings(Settings {
        ack: false,
        values: vec![Setting::InitialWindowSize(0)],
    }));
    let ids: Vec<u32> = (0..16).map(|n| 2 * n + 1).collect();
    for &id in &ids {
        open(&mut peer, id, true);
    }
    peer.events();
    for &id in &ids {
        peer.conn
            .send_response(sid(id), ResponseHead::new(200), false)
            .unwrap();
        peer.conn
            .send_data(sid(id), Bytes::from_static(b"body"), true)
            .unwrap();
    }
    let held = peer.frames();
    assert!(
        !held.iter().any(|f| matches!(f, Frame::Data(_))),
        "{held:?}"
    );
    peer.send(Frame::Settings(Settings {
        ack: false,
        values: vec![Setting::InitialWindowSize(100)],
    }));
    let resumed: Vec<u32> = peer
        .frames()
        .iter()
        .filter_map(|f| match f {
            Frame::Data(d) => Some(d.stream_id.value()),
            _ => None,
        })
        .collect();
    assert_eq!(resumed, ids);
}

/// A receiver that lowers SETTINGS_INITIAL_WINDOW_SIZE below what a stream
/// already took leaves that stream's window negative (§6.9.2); an empty
/// DATA frame with END_STREAM may still be sent into it ("Frames with zero
/// length with the END_STREAM flag set ... MAY be sent if there is no
/// available space", §6.9.1), and ends the request. Found by
/// `random_operations_keep_the_invariants` (h2_proptest.rs), whose server
/// reset such a stream with FLOW_CONTROL_ERROR. The application releases
/// bytes itself here, so the byte taken is not given back first.
#[test]
fn s6_9_1_an_empty_data_frame_ends_a_stream_whose_window_went_negative() {
    let mut peer = server_with(Config {
        window_policy: h2sim_proto::WindowPolicy::Manual,
        ..Config::default()
    });
    let mut fields = GET.to_vec();
    fields[0] = (":method", "POST");
    let block = peer.block(&fields);
    peer.send(headers(1, block, false));
    peer.send(data(1, b"x", false));
    let mut settings = peer.conn.local_settings().unwrap();
    settings.initial_window_size = 0;
    peer.conn.update_settings(peer.now, settings).unwrap();
    peer.frames();
    peer.send(Frame::Settings(Settings {
        ack: true,
        values: vec![],
    }));
    peer.events();
    peer.send(data(1, b"", true));
    let frames = peer.frames();
    assert_no_error(&frames);
    let events = peer.events();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Data { stream, end_stream: true, .. } if *stream == sid(1)
        )),
        "{events:?}"
    );
}

#[test]
fn s8_1_trailers_without_end_stream_are_malformed() {
    let mut peer = server();
    open(&mut peer, 1, false);
    let block = peer.block(&[("x-trailer", "1")]);
    peer.send(headers(1, block, false));
    assert_stream_error(&mut peer, 1, Reason::PROTOCOL_ERROR);
}

#[test]
fn s8_1_1_content_length_mismatch_is_malformed() {
    let mut peer = server();
    let mut fields = GET.to_vec();
    fields[0] = (":method", "POST");
    fields.push(("content-length", "10"));
    let block = peer.block(&fields);
    peer.send(headers(1, block, false));
    peer.send(data(1, b"short", true));
    assert_stream_error(&mut peer, 1, Reason::PROTOCOL_ERROR);
}

/// The `Refused` events: what the application hears of the streams the
/// core turned down before it had them.
fn refusals(events: &[Event]) -> Vec<(u32, RefusedWith, Violation)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Refused {
                stream,
                answer,
                violation,
            } => Some((stream.value(), *answer, violation.clone())),
            _ => None,
        })
        .collect()
}

/// A malformed request head on stream 1 (§8.1.1: "Malformed requests or
/// responses that are detected MUST be treated as a stream error of type
/// PROTOCOL_ERROR"): reset, never a `Request`, and reported to the
/// application once as `Refused` naming the malformation.
fn malformed_request(extra: &[(&str, &str)]) -> Malformation {
    let mut peer = server();
    let mut fields = GET.to_vec();
    fields.extend_from_slice(extra);
    let block = peer.block(&fields);
    peer.send(headers(1, block, true));
    assert_stream_error(&mut peer, 1, Reason::PROTOCOL_ERROR);
    let events = peer.events();
    assert!(!events.iter().any(|e| matches!(e, Event::Request { .. })));
    match &refusals(&events)[..] {
        [(1, RefusedWith::Reset(Reason::PROTOCOL_ERROR), Violation::Malformed(m))] => m.clone(),
        other => panic!("want one refusal of stream 1 as malformed: {other:?}"),
    }
}

/// The application hears of every stream the core resets because of the
/// peer, also one it never saw (§8.1.1, §8.2.1, §8.2.2): the server's
/// application can name what its client got wrong, and the next request
/// is taken as usual.
#[test]
fn s8_1_1_a_malformed_request_reaches_the_application_as_refused() {
    let mut peer = server();
    let mut upper = GET.to_vec();
    upper.push(("Bad-Name", "v"));
    let mut connection = GET.to_vec();
    connection.push(("connection", "close"));
    for (id, fields) in [(1, &upper), (3, &connection), (5, &GET.to_vec())] {
        let block = peer.block(fields);
        peer.send(headers(id, block, true));
    }
    assert_stream_error(&mut peer, 1, Reason::PROTOCOL_ERROR);
    let events = peer.events();
    let refused = refusals(&events);
    let named: Vec<(u32, String, String)> = refused
        .iter()
        .map(|(id, answer, v)| (*id, answer.to_string(), v.to_string()))
        .collect();
    assert_eq!(
        named,
        [
            (
                1,
                "PROTOCOL_ERROR".into(),
                "malformed message: uppercase field name (RFC 9113 §8.2.1)".into()
            ),
            (
                3,
                "PROTOCOL_ERROR".into(),
                "malformed message: connection-specific field (RFC 9113 §8.2.2)".into()
            ),
        ]
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Request { stream, .. } if *stream == sid(5))),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::StreamReset { .. }))
    );
}

/// §8.1.1: a request whose content-length promises a body it ends without
/// is malformed on its HEADERS already, before the application has it.
#[test]
fn s8_1_1_content_length_on_an_ended_head_is_refused_before_delivery() {
    let mut peer = server();
    let mut fields = GET.to_vec();
    fields.push(("content-length", "10"));
    let block = peer.block(&fields);
    peer.send(headers(1, block, true));
    assert_stream_error(&mut peer, 1, Reason::PROTOCOL_ERROR);
    let events = peer.events();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Request { .. } | Event::StreamReset { .. })),
        "{events:?}"
    );
    assert!(matches!(
        &refusals(&events)[..],
        [(
            1,
            _,
            Violation::Malformed(Malformation::ContentLengthMismatch {
                declared: 10,
                received: 0
            })
        )]
    ));
}

#[test]
fn s8_2_1_uppercase_field_name_is_malformed() {
    assert_eq!(
        malformed_request(&[("X-Upper", "1")]),
        Malformation::UppercaseFieldName
    );
}

/// §8.2.1 holds for every block, also one that repeats the last one octet
/// for octet (the decoder hands back the same fields without decoding
/// them again): a malformed head is refused each time, a valid one is
/// taken each time.
#[test]
fn s8_2_1_repeated_blocks_are_checked_like_any_other() {
    for (extra, valid) in [(("x-fine", "1"), true), (("X-Upper", "1"), false)] {
        let mut peer = server();
        let mut fields = GET.to_vec();
        fields.push(extra);
        // The first block indexes its fields; the next ones only refer to
        // them, so they leave the table as it is and repeat exactly.
        let first = peer.block(&fields);
        let again = peer.block(&fields);
        peer.send(headers(1, first, true));
        for id in [3, 5, 7, 9] {
            peer.send(headers(id, again.clone(), true));
        }
        let requests = peer
            .events()
            .iter()
            .filter(|e| matches!(e, Event::Request { .. }))
            .count();
        if valid {
            assert_eq!(requests, 5);
        } else {
            assert_eq!(requests, 0);
            let frames = peer.frames();
            for id in [1, 3, 5, 7, 9] {
                assert!(
                    frames.iter().any(|f| matches!(f, Frame::RstStream(r)
                        if r.stream_id == sid(id) && r.reason == Reason::PROTOCOL_ERROR)),
                    "stream {id}: {frames:?}"
                );
            }
        }
    }
}

#[test]
fn s8_2_1_field_value_with_newline_is_malformed() {
    assert_eq!(
        malformed_request(&[("x", "a\r\nb")]),
        Malformation::InvalidFieldValue
    );
}

#[test]
fn s8_2_2_connection_specific_field_is_malformed() {
    for field in [
        ("connection", "keep-alive"),
        ("transfer-encoding", "chunked"),
        ("te", "gzip"),
    ] {
        assert_eq!(
            malformed_request(&[field]),
            Malformation::ConnectionSpecificField
        );
    }
}

#[test]
fn s8_3_pseudo_header_after_field_is_malformed() {
    assert_eq!(
        malformed_request(&[("x", "1"), (":foo", "bar")]),
        Malformation::PseudoHeaderAfterField
    );
}

#[test]
fn s8_3_1_duplicate_or_missing_pseudo_headers_are_malformed() {
    assert_eq!(
        malformed_request(&[(":path", "/again")]),
        Malformation::DuplicatePseudoHeader
    );
    let mut peer = server();
    let block = peer.block(&[(":method", "GET"), (":scheme", "http")]);
    peer.send(headers(1, block, true));
    assert_stream_error(&mut peer, 1, Reason::PROTOCOL_ERROR);
}

/// A request head that §8.3.1 makes malformed (§8.1.1) on stream 1: the
/// stream is reset, the connection lives on, and stream 3's request, the
/// same with valid pseudo-header fields, is taken.
fn malformed_head_then_a_valid_one(fields: &[(&str, &str)]) {
    let mut peer = server();
    let block = peer.block(fields);
    peer.send(headers(1, block, true));
    assert_stream_error(&mut peer, 1, Reason::PROTOCOL_ERROR);
    let block = peer.block(&[
        (":method", "M-SEARCH"),
        (":scheme", "http"),
        (":authority", "a"),
        (":path", "/"),
    ]);
    peer.send(headers(3, block, true));
    let requests: Vec<_> = peer
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Request { stream, head, .. } => Some((stream, head.method)),
            _ => None,
        })
        .collect();
    assert_eq!(requests, [(sid(3), "M-SEARCH".into())], "{fields:?}");
}

/// §8.3.1: ":method" carries the HTTP method (RFC 9110 §9), a token
/// (§9.1). A method with a space, a slash or a non-ASCII octet is
/// malformed.
#[test]
fn s8_3_1_a_method_that_is_not_a_token_is_malformed() {
    for method in ["GE T", "GET/1", "GÉT", "GET\"", "{}"] {
        malformed_head_then_a_valid_one(&[
            (":method", method),
            (":scheme", "http"),
            (":authority", "a"),
            (":path", "/"),
        ]);
    }
}

/// §8.3.1: ":scheme", ":authority" and ":path" are parts of the target URI
/// (RFC 3986): a scheme with a space, an authority with a space or with
/// userinfo (which "http" and "https" must not carry), and for those
/// schemes a path that is neither absolute nor "*" for OPTIONS, are
/// malformed, as nghttp2 also has it.
#[test]
fn s8_3_1_uri_parts_outside_rfc3986_are_malformed() {
    for (scheme, authority, path) in [
        ("ht tp", "a", "/"),
        ("http", "a b", "/"),
        ("https", "user:pw@a", "/"),
        ("http", "a", "abc"),
        ("http", "a", "*"),
        ("http", "a", "/\x01"),
    ] {
        malformed_head_then_a_valid_one(&[
            (":method", "GET"),
            (":scheme", scheme),
            (":authority", authority),
            (":path", path),
        ]);
    }
}

#[test]
fn s8_3_2_response_pseudo_header_in_request_is_malformed() {
    assert_eq!(
        malformed_request(&[(":status", "200")]),
        Malformation::UnknownPseudoHeader
    );
}

#[test]
fn s8_4_push_promise_from_client_is_protocol_error() {
    let mut peer = server();
    open(&mut peer, 1, false);
    let block = peer.block(GET);
    peer.send(Frame::PushPromise(PushPromise {
        stream_id: sid(1),
        promised_id: sid(2),
        fragment: block,
        end_headers: true,
        padding: None,
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn s8_4_push_to_client_that_disabled_it_is_protocol_error() {
    let mut peer = RawPeer::client_with(Config {
        enable_push: false,
        ..Config::default()
    });
    peer.handshake();
    peer.conn
        .send_request(h2sim_proto::RequestHead::new("GET", "http", "a", "/"), true)
        .unwrap();
    peer.frames();
    let block = peer.block(GET);
    peer.send(Frame::PushPromise(PushPromise {
        stream_id: sid(1),
        promised_id: sid(2),
        fragment: block,
        end_headers: true,
        padding: None,
    }));
    assert_connection_error(&mut peer, Reason::PROTOCOL_ERROR);
}

#[test]
fn limit_rapid_reset_ends_with_enhance_your_calm() {
    let mut peer = server_with(Config {
        limits: Limits {
            max_resets_per_period: 10,
            ..Limits::default()
        },
        ..Config::default()
    });
    for i in 0..20 {
        let id = 1 + 2 * i;
        open(&mut peer, id, false);
        peer.send(Frame::RstStream(RstStream {
            stream_id: sid(id),
            reason: Reason::CANCEL,
        }));
    }
    assert_connection_error(&mut peer, Reason::ENHANCE_YOUR_CALM);
}

/// §8.1: a server may send a complete response before the request is
/// complete and then RST_STREAM with NO_ERROR, so that the client stops
/// sending (nginx does, for every request body it did not read). Those
/// resets end streams the client opened, which the rapid-reset limit is
/// not about: 20 of them at a limit of 10 a period left the client
/// connection ended with ENHANCE_YOUR_CALM, and a POST run against nginx
/// with it. A client still counts resets of the pushes the server opened.
#[test]
fn s8_1_a_server_may_reset_each_request_with_no_error_after_its_response() {
    let mut peer = RawPeer::client_with(Config {
        limits: Limits {
            max_resets_per_period: 10,
            ..Limits::default()
        },
        ..Config::default()
    });
    peer.handshake();
    for i in 0..20 {
        let id = peer
            .conn
            .send_request(
                h2sim_proto::RequestHead::new("POST", "http", "a", "/"),
                false,
            )
            .unwrap();
        assert_eq!(id, sid(1 + 2 * i));
        peer.conn
            .send_data(id, Bytes::from_static(b"body"), false)
            .unwrap();
        peer.frames();
        let block = peer.block(&[(":status", "200")]);
        peer.send(headers(id.value(), block, true));
        peer.send(Frame::RstStream(RstStream {
            stream_id: id,
            reason: Reason::NO_ERROR,
        }));
    }
    let frames = peer.frames();
    assert!(
        !frames.iter().any(|f| matches!(f, Frame::GoAway(_))),
        "{frames:?}"
    );
    let events = peer.events();
    let answered = events
        .iter()
        .filter(|e| matches!(e, Event::Response { .. }))
        .count();
    assert_eq!(answered, 20, "{events:?}");
    assert!(!events.iter().any(|e| matches!(e, Event::Closed { .. })));
}

/// The other side of the test above: streams the server opened (pushes)
/// and reset at once still count against a client's rapid-reset limit.
#[test]
fn limit_a_server_resetting_its_pushes_rapidly_ends_with_enhance_your_calm() {
    let mut peer = RawPeer::client_with(Config {
        limits: Limits {
            max_resets_per_period: 10,
            ..Limits::default()
        },
        ..Config::default()
    });
    peer.handshake();
    peer.conn
        .send_request(h2sim_proto::RequestHead::new("GET", "http", "a", "/"), true)
        .unwrap();
    peer.frames();
    for i in 1..=20 {
        let promised = sid(2 * i);
        let fragment = peer.block(GET);
        peer.send(Frame::PushPromise(PushPromise {
            stream_id: sid(1),
            promised_id: promised,
            fragment,
            end_headers: true,
            padding: None,
        }));
        peer.send(Frame::RstStream(RstStream {
            stream_id: promised,
            reason: Reason::CANCEL,
        }));
    }
    assert_connection_error(&mut peer, Reason::ENHANCE_YOUR_CALM);
}

/// §5.1.2: until the peer acknowledged our SETTINGS it may open as many
/// streams as it likes, in one write too: those past our limit are refused
/// (REFUSED_STREAM, not counted against the reset rate limit), the others
/// served. The refusals wait in a bounded queue (`max_pending_resets`);
/// once it is full no frame is taken until it was written. So a burst
/// larger than the queue is refused a queue at a time (it ended the
/// connection with ENHANCE_YOUR_CALM, the answers owed to the admitted
/// streams with it: 2,000 GETs in one write did), and a peer that never
/// reads its refusals is no longer read from, its queue bounded.
#[test]
fn s5_1_2_a_burst_past_the_stream_limit_before_the_settings_ack_is_refused_in_turn() {
    let config = || Config {
        max_concurrent_streams: 2,
        limits: Limits {
            max_pending_resets: 10,
            max_local_resets_per_period: 5,
            ..Limits::default()
        },
        ..Config::default()
    };
    let unacknowledged = |config| {
        let mut peer = RawPeer::server(config);
        peer.send_bytes(h2sim_proto::frame::PREFACE);
        peer.send(Frame::Settings(Settings {
            ack: false,
            values: vec![],
        }));
        peer
    };
    let refused = |frames: &[Frame]| {
        frames
            .iter()
            .filter(|f| matches!(f, Frame::RstStream(r) if r.reason == Reason::REFUSED_STREAM))
            .count()
    };
    let requests = |events: &[Event]| {
        events
            .iter()
            .filter(|e| matches!(e, Event::Request { .. }))
            .count()
    };

    let mut burst = unacknowledged(config());
    let mut write = BytesMut::new();
    for i in 0..40 {
        let block = burst.block(GET);
        headers(1 + 2 * i, block, true).encode(&mut write);
    }
    burst.send_bytes(&write);
    let frames = burst.frames();
    assert!(goaway(&frames).is_none(), "{frames:?}");
    assert_eq!(refused(&frames), 38, "{frames:?}");
    assert_eq!(requests(&burst.events()), 2);

    let mut reading = unacknowledged(config());
    for i in 0..40 {
        open(&mut reading, 1 + 2 * i, false);
        let frames = reading.frames();
        assert!(goaway(&frames).is_none(), "{frames:?}");
    }

    let mut deaf = unacknowledged(config());
    for i in 0..40 {
        open(&mut deaf, 1 + 2 * i, false);
        assert!(deaf.conn.wants_input());
    }
    // What it wrote before reading on: the SETTINGS and one queue's worth.
    let first = deaf.conn.poll_transmit(deaf.now).unwrap();
    let mut first = BytesMut::from(&first[..]);
    let first = support::decode_frames(
        &mut h2sim_proto::frame::FrameDecoder::new(16_777_215),
        &mut first,
    );
    assert_eq!(refused(&first), 10, "{first:?}");
    let rest = deaf.frames();
    assert!(goaway(&rest).is_none(), "{rest:?}");
    assert_eq!(refused(&first) + refused(&rest), 38);
}

#[test]
fn limit_ping_flood_without_reading_ends_with_enhance_your_calm() {
    let mut peer = server();
    for i in 0..1100u32 {
        peer.send(Frame::Ping(Ping {
            ack: false,
            payload: u64::from(i).to_be_bytes(),
        }));
    }
    assert_connection_error(&mut peer, Reason::ENHANCE_YOUR_CALM);
}

/// §6.7: every PING gets its ACK. A hundred in one write, as a peer
/// measuring round trips may send them, are all answered: the ack limit
/// (a flood's, which counts within one read) was 64, and cut such a peer
/// off with ENHANCE_YOUR_CALM though it read everything.
#[test]
fn s6_7_a_burst_of_pings_in_one_read_is_all_acknowledged() {
    let mut peer = server();
    let mut burst = BytesMut::new();
    for i in 0..100u64 {
        Frame::Ping(Ping {
            ack: false,
            payload: i.to_be_bytes(),
        })
        .encode(&mut burst);
    }
    peer.send_bytes(&burst);
    let frames = peer.frames();
    let acks = frames
        .iter()
        .filter(|f| matches!(f, Frame::Ping(p) if p.ack))
        .count();
    assert_eq!(acks, 100, "{:?}", frames.last());
}

#[test]
fn limit_continuation_flood_ends_with_enhance_your_calm() {
    let mut peer = server();
    let block = peer.block(GET);
    peer.send(Frame::Headers(Headers {
        stream_id: sid(1),
        fragment: block,
        end_stream: true,
        end_headers: false,
        priority: None,
        padding: None,
    }));
    for _ in 0..100 {
        peer.send(Frame::Continuation(Continuation {
            stream_id: sid(1),
            fragment: Bytes::from_static(b"\x00"),
            end_headers: false,
        }));
    }
    assert_connection_error(&mut peer, Reason::ENHANCE_YOUR_CALM);
}

#[test]
fn limit_empty_data_flood_ends_with_enhance_your_calm() {
    let mut peer = server();
    open(&mut peer, 1, false);
    for _ in 0..200 {
        peer.send(data(1, b"", false));
    }
    assert_connection_error(&mut peer, Reason::ENHANCE_YOUR_CALM);
}

/// A server whose limit is 200 bytes, and a request field section above it.
fn too_large_request(peer: &mut RawPeer) -> Bytes {
    let long = "v".repeat(300);
    let mut fields = GET.to_vec();
    fields.push(("x-long", &long));
    peer.block(&fields)
}

fn small_limit_server() -> RawPeer {
    server_with(Config {
        max_header_list_size: 200,
        ..Config::default()
    })
}

/// The `:status` of the response HEADERS on `stream` among `frames`, and
/// whether it ended the stream.
fn response_status(peer: &mut RawPeer, frames: &[Frame], stream: u32) -> Option<(String, bool)> {
    frames.iter().find_map(|f| match f {
        Frame::Headers(h) if h.stream_id == sid(stream) => {
            let fields = peer.decode_block(&h.fragment);
            let status = fields.iter().find(|f| &f.name[..] == b":status")?;
            Some((
                String::from_utf8_lossy(&status.value).into_owned(),
                h.end_stream,
            ))
        }
        _ => None,
    })
}

/// §10.5.1: "A server that receives a larger header section than it is
/// willing to handle can send an HTTP 431 (Request Header Fields Too Large)
/// status code". The block was decoded, so the HPACK context stayed in step
/// and the stream gets a complete 431 response, not only a RST_STREAM.
#[test]
fn s10_5_1_header_list_above_our_limit_gets_431_for_that_stream_only() {
    let mut peer = small_limit_server();
    let block = too_large_request(&mut peer);
    peer.send(headers(1, block, true));
    let frames = peer.frames();
    assert_eq!(
        response_status(&mut peer, &frames, 1),
        Some(("431".to_owned(), true)),
        "{frames:?}"
    );
    assert_no_error(&frames);
    // The application hears of it only as refused, with its 431.
    assert!(
        matches!(
            &refusals(&peer.events())[..],
            [(
                1,
                RefusedWith::Status(431),
                Violation::HeaderListTooLarge { .. }
            )]
        ),
        "431 not reported"
    );
    // The HPACK context stayed in step: the next request decodes fine.
    open(&mut peer, 3, true);
    let events = peer.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Request { stream, .. } if *stream == sid(3))),
        "{events:?}"
    );
}

/// A too-large request with a body to come: the 431 ends our side, the body
/// is dropped (its window returned), and RST_STREAM(NO_ERROR) after the
/// complete response asks the client to stop sending (§8.1: "a server MAY
/// request that the client abort transmission of a request without error by
/// sending a RST_STREAM with an error code of NO_ERROR after sending a
/// complete response").
#[test]
fn s10_5_1_too_large_request_with_a_body_gets_431_then_reset_no_error() {
    let mut peer = small_limit_server();
    let block = too_large_request(&mut peer);
    peer.send(headers(1, block, false));
    peer.send(data(1, b"body bytes", false));
    let frames = peer.frames();
    assert_eq!(refusals(&peer.events()).len(), 1);
    let status_at = frames
        .iter()
        .position(|f| matches!(f, Frame::Headers(h) if h.stream_id == sid(1)));
    let reset_at = frames.iter().position(
        |f| matches!(f, Frame::RstStream(r) if r.stream_id == sid(1) && r.reason == Reason::NO_ERROR),
    );
    assert!(
        matches!((status_at, reset_at), (Some(h), Some(r)) if h < r),
        "431 HEADERS, then RST_STREAM(NO_ERROR): {frames:?}"
    );
    assert_eq!(
        response_status(&mut peer, &frames, 1),
        Some(("431".to_owned(), true))
    );
    // Late DATA on the reset stream is ignored (§5.1 "closed"), and the
    // application hears of nothing more.
    peer.send(data(1, b"more", true));
    assert!(goaway(&peer.frames()).is_none());
    assert!(peer.events().is_empty());
    assert_eq!(peer.conn.stats().data_bytes_received, 14);
}

/// A server that takes request bodies of 100 bytes at most
/// (`Config::max_request_body`), with a connection window of 65,535.
fn small_body_server() -> RawPeer {
    server_with(Config {
        max_request_body: 100,
        connection_window_size: 65_535,
        ..Config::default()
    })
}

/// A POST on `id`, with `content-length` when `declared` says one.
fn post(peer: &mut RawPeer, id: u32, declared: Option<&str>) {
    let mut fields = vec![
        (":method", "POST"),
        (":scheme", "http"),
        (":authority", "example.com"),
        (":path", "/upload"),
    ];
    fields.extend(declared.map(|len| ("content-length", len)));
    let block = peer.block(&fields);
    peer.send(headers(id, block, false));
}

/// A DATA frame of `len` bytes on `id`.
fn body(id: u32, len: usize, end_stream: bool) -> Frame {
    Frame::Data(h2sim_proto::frame::Data {
        stream_id: sid(id),
        payload: Bytes::from(vec![b'x'; len]),
        end_stream,
        padding: None,
    })
}

/// The RST_STREAM codes among `frames` on stream `id`, in order.
fn resets_on(frames: &[Frame], id: u32) -> Vec<Reason> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::RstStream(r) if r.stream_id == sid(id) => Some(r.reason),
            _ => None,
        })
        .collect()
}

/// What the response on `id` carried in DATA, and whether it ended the
/// stream.
fn response_body(frames: &[Frame], id: u32) -> (Vec<u8>, bool) {
    let mut got = Vec::new();
    let mut ended = false;
    for f in frames {
        if let Frame::Data(d) = f
            && d.stream_id == sid(id)
        {
            got.extend_from_slice(&d.payload);
            ended |= d.end_stream;
        }
    }
    (got, ended)
}

/// RFC 9110 §15.5.14 (413 Content Too Large: "the request content is
/// larger than the server is willing or able to process"), as HTTP/1.1
/// refuses a declared length above `Config::max_request_body`: the core
/// answers 413 before the application hears of the request, drops the
/// body as it comes and gives its flow-control credit back to the
/// connection (RFC 9113 §6.9: DATA counts against the connection's window
/// whatever becomes of it, so dropped bytes not given back would starve
/// every other stream), resets the stream with NO_ERROR once its complete
/// answer is out (§8.1), and other streams go on.
#[test]
fn s8_1_declared_body_above_the_limit_gets_413_then_reset_no_error() {
    let mut peer = small_body_server();
    post(&mut peer, 1, Some("65535"));
    // The whole connection window, on the refused stream, before the
    // server wrote anything: dropped as it came.
    for len in [16_384, 16_384, 16_384, 16_383] {
        peer.send(body(1, len, false));
    }
    let frames = peer.frames();
    assert_eq!(
        response_status(&mut peer, &frames, 1),
        Some(("413".to_owned(), false)),
        "{frames:?}"
    );
    let (why, ended) = response_body(&frames, 1);
    assert_eq!(why, b"body of 65535 bytes above the limit of 100\n");
    assert!(ended, "the 413 ends our side: {frames:?}");
    // Written, and counted as the core's own: the application gave none.
    let stats = peer.conn.stats();
    assert_eq!(stats.own_data_bytes_sent, why.len() as u64);
    assert_eq!(stats.data_bytes_sent, stats.own_data_bytes_sent);
    assert_eq!(resets_on(&frames, 1), [Reason::NO_ERROR], "{frames:?}");
    let credit: u64 = frames
        .iter()
        .filter_map(|f| match f {
            Frame::WindowUpdate(w) if w.stream_id == StreamId::ZERO => Some(u64::from(w.increment)),
            _ => None,
        })
        .sum();
    assert_eq!(credit, 65_535, "the dropped body's credit: {frames:?}");
    let events = peer.events();
    assert_eq!(
        refusals(&events),
        [(
            1,
            RefusedWith::Status(413),
            Violation::BodyTooLarge {
                size: 65_535,
                max: 100
            }
        )]
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Request { .. } | Event::Data { .. })),
        "the application never hears of it: {events:?}"
    );
    // Another stream uses the window the refused body had taken.
    post(&mut peer, 3, Some("100"));
    peer.send(body(3, 100, true));
    let frames = peer.frames();
    assert!(goaway(&frames).is_none(), "{frames:?}");
    let events = peer.events();
    assert!(
        events.iter().any(|e| matches!(e,
            Event::Data { stream, data, end_stream: true } if *stream == sid(3) && data.len() == 100)),
        "a body at the limit is delivered: {events:?}"
    );
}

/// A body that declares no length (HTTP/2 needs none, RFC 9113 §8.1.1)
/// and grows past the limit after its head was delivered: the
/// application loses the stream (`StreamReset` with the 413 the client
/// got), the core answers 413 in its place and then RST_STREAM(NO_ERROR)
/// (§8.1: "the server MAY request that the client abort transmission of a
/// request without error by sending a RST_STREAM with an error code of
/// NO_ERROR after sending a complete response"); what more comes goes
/// nowhere, and the application's commands on the stream fail.
#[test]
fn s8_1_body_past_the_limit_gets_413_then_reset_no_error() {
    let mut peer = small_body_server();
    post(&mut peer, 1, None);
    peer.send(body(1, 60, false));
    let events = peer.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Data { data, .. } if data.len() == 60)),
        "{events:?}"
    );
    // The application has queued its answer, not yet written: the 413
    // takes its place.
    peer.conn
        .send_response(sid(1), ResponseHead::new(200), false)
        .unwrap();
    peer.send(body(1, 60, false));
    let frames = peer.frames();
    assert_eq!(
        response_status(&mut peer, &frames, 1),
        Some(("413".to_owned(), false)),
        "{frames:?}"
    );
    assert_eq!(
        response_body(&frames, 1),
        (b"body of 120 bytes above the limit of 100\n".to_vec(), true)
    );
    assert_eq!(resets_on(&frames, 1), [Reason::NO_ERROR], "{frames:?}");
    let events = peer.events();
    assert_eq!(
        events,
        [Event::StreamReset {
            stream: sid(1),
            reason: Reason::NO_ERROR,
            remote: false,
            violation: Some(Violation::BodyTooLarge {
                size: 120,
                max: 100
            }),
            status: Some(413),
        }]
    );
    assert!(matches!(
        peer.conn
            .send_data(sid(1), Bytes::from_static(b"late"), true),
        Err(UserError::UnknownStream(_))
    ));
    peer.send(body(1, 60, true));
    assert!(peer.frames().is_empty());
    assert!(peer.events().is_empty());
}

/// The same with the crossing DATA ending the request: the 413 is the
/// complete answer and the stream is over, with nothing to reset (§8.1).
#[test]
fn s8_1_body_past_the_limit_with_its_end_gets_413_without_a_reset() {
    let mut peer = small_body_server();
    post(&mut peer, 1, None);
    peer.send(body(1, 101, true));
    let frames = peer.frames();
    assert_eq!(
        response_status(&mut peer, &frames, 1),
        Some(("413".to_owned(), false)),
        "{frames:?}"
    );
    assert!(response_body(&frames, 1).1);
    assert_no_error(&frames);
    assert!(peer.events().iter().any(|e| matches!(
        e,
        Event::StreamReset {
            status: Some(413),
            ..
        }
    )));
}

/// A response already on the wire cannot become a 413: the stream is
/// reset with CANCEL (§7: "the stream is no longer needed"; the client
/// broke no rule of the protocol, and nothing failed here), and the
/// application hears of it without a status.
#[test]
fn s8_1_body_past_the_limit_after_the_response_started_is_cancelled() {
    let mut peer = small_body_server();
    post(&mut peer, 1, None);
    peer.send(body(1, 60, false));
    peer.events();
    peer.conn
        .send_response(sid(1), ResponseHead::new(200), false)
        .unwrap();
    let frames = peer.frames();
    assert_eq!(
        response_status(&mut peer, &frames, 1),
        Some(("200".to_owned(), false))
    );
    peer.send(body(1, 60, false));
    let frames = peer.frames();
    assert_eq!(resets_on(&frames, 1), [Reason::CANCEL], "{frames:?}");
    assert!(response_status(&mut peer, &frames, 1).is_none());
    let events = peer.events();
    assert!(
        matches!(
            &events[..],
            [Event::StreamReset {
                reason: Reason::CANCEL,
                violation: Some(Violation::BodyTooLarge {
                    size: 120,
                    max: 100
                }),
                status: None,
                ..
            }]
        ),
        "{events:?}"
    );
}

/// A body of exactly the limit is taken, declared or not.
#[test]
fn a_body_of_exactly_the_limit_is_delivered() {
    let mut peer = small_body_server();
    post(&mut peer, 1, None);
    peer.send(body(1, 40, false));
    peer.send(body(1, 60, true));
    post(&mut peer, 3, Some("100"));
    peer.send(body(3, 100, true));
    assert_no_error(&peer.frames());
    let events = peer.events();
    let delivered: usize = events
        .iter()
        .map(|e| match e {
            Event::Data { data, .. } => data.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(delivered, 200, "{events:?}");
    assert!(refusals(&events).is_empty(), "{events:?}");
}

/// A CONNECT's DATA is its tunnel's bytes, not a body (§8.5): no body
/// limit holds it.
#[test]
fn s8_5_a_tunnel_is_not_held_to_the_body_limit() {
    let mut peer = small_body_server();
    let block = peer.block(&[(":method", "CONNECT"), (":authority", "example.com:443")]);
    peer.send(headers(1, block, false));
    peer.send(body(1, 1000, false));
    assert_no_error(&peer.frames());
    let events = peer.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Data { data, .. } if data.len() == 1000)),
        "{events:?}"
    );
}

/// RFC 9110 §9.3.6: "A server MUST NOT send any Transfer-Encoding or
/// Content-Length header fields in a 2xx (Successful) response to
/// CONNECT". The core drops them from the application's head, as the
/// HTTP/1.1 server does; a CONNECT's other answers, and a GET's 2xx,
/// keep theirs.
#[test]
fn a_2xx_to_connect_says_no_length() {
    let mut peer = server();
    let connect = [(":method", "CONNECT"), (":authority", "example.com:443")];
    for id in [1, 3] {
        let block = peer.block(&connect);
        peer.send(headers(id, block, false));
    }
    open(&mut peer, 5, true);
    peer.events();
    let tunnel = ResponseHead::new(200)
        .field("content-length", "2")
        .field("transfer-encoding", "chunked")
        .field("x-kept", "yes");
    peer.conn.send_response(sid(1), tunnel, false).unwrap();
    let not_found = ResponseHead::new(404).field("content-length", "0");
    peer.conn.send_response(sid(3), not_found, true).unwrap();
    peer.conn
        .send_response(
            sid(5),
            ResponseHead::new(200).field("content-length", "0"),
            true,
        )
        .unwrap();
    let frames = peer.frames();
    let names = |peer: &mut RawPeer, id: u32| -> Vec<String> {
        let block = frames
            .iter()
            .find_map(|f| match f {
                Frame::Headers(h) if h.stream_id == sid(id) => Some(h.fragment.clone()),
                _ => None,
            })
            .expect("a response head");
        peer.decode_block(&block)
            .iter()
            .map(|f| String::from_utf8_lossy(&f.name).into_owned())
            .collect()
    };
    assert_eq!(names(&mut peer, 1), [":status", "x-kept"]);
    assert_eq!(names(&mut peer, 3), [":status", "content-length"]);
    assert_eq!(names(&mut peer, 5), [":status", "content-length"]);
}

/// The GOAWAY frames among `frames`.
fn goaways(frames: &[Frame]) -> Vec<GoAway> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::GoAway(g) => Some(g.clone()),
            _ => None,
        })
        .collect()
}

fn closed(events: &[Event]) -> Option<&Event> {
    events.iter().find(|e| matches!(e, Event::Closed { .. }))
}

#[test]
fn s6_8_server_shutdown_is_ping_and_goaway_max_then_final_goaway() {
    // §6.8: a server shutting down gracefully sends GOAWAY with the last
    // stream 2^31-1, waits at least one round trip (timed by a PING
    // written with it), then a final GOAWAY with the last stream it took.
    // The PING goes first: Python's `h2` takes a PING after a GOAWAY for
    // a PROTOCOL_ERROR.
    let mut peer = server();
    open(&mut peer, 1, false);
    peer.frames();
    peer.conn.go_away(peer.now);
    let frames = peer.frames();
    let order: Vec<&str> = frames
        .iter()
        .filter_map(|f| match f {
            Frame::GoAway(g) if g.last_stream_id == StreamId::MAX => Some("GOAWAY(max)"),
            Frame::GoAway(_) => Some("GOAWAY(last)"),
            Frame::Ping(p) if !p.ack => Some("PING"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["PING", "GOAWAY(max)"], "{frames:?}");
    let ping = frames
        .iter()
        .find_map(|f| match f {
            Frame::Ping(p) if !p.ack => Some(p.payload),
            _ => None,
        })
        .unwrap();
    peer.send(Frame::Ping(Ping {
        ack: true,
        payload: ping,
    }));
    let last = goaways(&peer.frames());
    assert_eq!(last.len(), 1, "{last:?}");
    assert_eq!(last[0].last_stream_id, sid(1));
    assert_eq!(last[0].reason, Reason::NO_ERROR);
}

/// A server going away whose last stream is a promise it can no longer
/// make (the parent was reset before the promise left) closes once the
/// promise is dropped: nothing else is left to wait for (§6.8).
#[test]
fn s6_8_a_server_going_away_closes_when_its_last_promise_is_dropped() {
    let mut peer = server();
    open(&mut peer, 1, true);
    peer.events();
    peer.conn.go_away(peer.now);
    let ping = peer
        .frames()
        .iter()
        .find_map(|f| match f {
            Frame::Ping(p) if !p.ack => Some(p.payload),
            _ => None,
        })
        .unwrap();
    peer.conn
        .push_promise(
            sid(1),
            h2sim_proto::RequestHead::new("GET", "http", "a", "/p"),
        )
        .unwrap();
    peer.send(Frame::RstStream(RstStream {
        stream_id: sid(1),
        reason: Reason::CANCEL,
    }));
    peer.send(Frame::Ping(Ping {
        ack: true,
        payload: ping,
    }));
    let frames = peer.frames();
    assert!(
        !frames.iter().any(|f| matches!(f, Frame::PushPromise(_))),
        "{frames:?}"
    );
    let events = peer.events();
    assert!(
        matches!(closed(&events), Some(Event::Closed { error: None, .. })),
        "{events:?}"
    );
}

/// What `frames` are, as far as a going-away test cares: GOAWAY, PING
/// (ours, not an acknowledgement) or other.
fn kinds(frames: &[Frame]) -> Vec<&'static str> {
    frames
        .iter()
        .map(|f| match f {
            Frame::GoAway(_) => "GOAWAY",
            Frame::Ping(p) if !p.ack => "PING",
            _ => "other",
        })
        .collect()
}

/// Our client, past the handshake, with a GET in flight on stream 1.
fn client_with_get() -> RawPeer {
    let mut peer = RawPeer::client(Config::default());
    peer.handshake();
    let request = h2sim_proto::RequestHead::new("GET", "http", "example.com", "/");
    peer.conn.send_request(request, true).unwrap();
    peer.frames();
    peer
}

#[test]
fn s6_8_a_client_goaway_is_the_last_frame_it_sends() {
    // The client's PING, which times the end of the connection, goes just
    // before its GOAWAY, and nothing after it: Python's `h2` (hypercorn)
    // and Ruby's `http-2` take any frame after a GOAWAY they received for
    // a PROTOCOL_ERROR (python-hyper/h2 issues 1181 and 1199).
    let mut peer = RawPeer::client(Config::default());
    peer.handshake();
    peer.conn.go_away(peer.now);
    let frames = peer.frames();
    assert_eq!(kinds(&frames), ["PING", "GOAWAY"], "{frames:?}");
}

#[test]
fn s6_8_a_client_going_away_waits_for_its_answers_before_its_goaway() {
    // A client going away with a request in flight sends no GOAWAY yet: a
    // server on Python's `h2` could no longer answer (it closes its side
    // on a GOAWAY it receives). The answer comes, then PING and GOAWAY.
    let mut peer = client_with_get();
    peer.conn.go_away(peer.now);
    assert!(
        peer.conn
            .send_request(
                h2sim_proto::RequestHead::new("GET", "http", "example.com", "/2"),
                true
            )
            .is_err(),
        "a client going away opens no more streams"
    );
    let frames = peer.frames();
    assert!(
        frames.is_empty(),
        "nothing while the answer is owed: {frames:?}"
    );
    let block = peer.block(&[(":status", "200")]);
    peer.send(headers(1, block, true));
    let events = peer.events();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Response {
                end_stream: true,
                ..
            }
        )),
        "{events:?}"
    );
    assert!(closed(&events).is_none(), "{events:?}");
    let frames = peer.frames();
    assert_eq!(kinds(&frames), ["PING", "GOAWAY"], "{frames:?}");
    let Some(Frame::Ping(ping)) = frames.first() else {
        unreachable!()
    };
    peer.send(Frame::Ping(Ping {
        ack: true,
        payload: ping.payload,
    }));
    assert!(matches!(
        closed(&peer.events()),
        Some(Event::Closed { error: None, .. })
    ));
}

#[test]
fn s6_8_client_goaway_names_no_unpushed_stream() {
    // §6.8: a client's GOAWAY names the last server-initiated stream it
    // may act on: 0 when nothing was pushed, and never 2^31-1 (nghttp2
    // answers that with PROTOCOL_ERROR, "invalid last_stream_id").
    let mut peer = RawPeer::client(Config::default());
    peer.handshake();
    peer.conn.go_away(peer.now);
    let frames = peer.frames();
    let sent = goaways(&frames);
    assert_eq!(sent.len(), 1, "one GOAWAY from a client: {frames:?}");
    assert_eq!(sent[0].last_stream_id, sid(0));
    assert_eq!(sent[0].reason, Reason::NO_ERROR);
    // Its PING is answered after whatever the server says about the
    // frames before it: the connection waits for it before it closes.
    let ping = frames
        .iter()
        .find_map(|f| match f {
            Frame::Ping(p) if !p.ack => Some(p.payload),
            _ => None,
        })
        .expect("a PING with the GOAWAY");
    assert!(closed(&peer.events()).is_none(), "closed before the reply");
    peer.send(Frame::Ping(Ping {
        ack: true,
        payload: ping,
    }));
    assert!(matches!(
        closed(&peer.events()),
        Some(Event::Closed { error: None, .. })
    ));
}

#[test]
fn s6_8_client_goaway_names_the_last_accepted_push() {
    let mut peer = client_with_get();
    let block = peer.block(GET);
    peer.send(Frame::PushPromise(PushPromise {
        stream_id: sid(1),
        promised_id: sid(2),
        fragment: block,
        end_headers: true,
        padding: None,
    }));
    assert!(
        peer.events()
            .iter()
            .any(|e| matches!(e, Event::PushPromise { .. }))
    );
    peer.conn.go_away(peer.now);
    // The GOAWAY waits for both streams, the request and the push.
    for stream in [1, 2] {
        assert!(goaways(&peer.frames()).is_empty());
        let block = peer.block(&[(":status", "200")]);
        peer.send(headers(stream, block, true));
        peer.events();
    }
    let sent = goaways(&peer.frames());
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].last_stream_id, sid(2));
}

#[test]
fn s6_8_error_goaway_in_reply_to_ours_is_reported() {
    let mut peer = RawPeer::client(Config::default());
    peer.handshake();
    peer.conn.go_away(peer.now);
    peer.frames();
    peer.send(Frame::GoAway(GoAway {
        last_stream_id: sid(0),
        reason: Reason::PROTOCOL_ERROR,
        debug_data: Bytes::from_static(b"invalid last_stream_id"),
    }));
    let events = peer.events();
    assert!(
        matches!(
            closed(&events),
            Some(Event::Closed { error: Some(e), .. }) if e.reason() == Reason::PROTOCOL_ERROR
        ),
        "{events:?}"
    );
}

#[test]
fn s6_8_client_goaway_reply_wait_is_bounded() {
    let mut peer = RawPeer::client(Config::default());
    peer.handshake();
    peer.conn.go_away(peer.now);
    peer.frames();
    assert!(closed(&peer.events()).is_none());
    let deadline = peer.conn.poll_timeout().expect("a reply deadline");
    assert!(deadline <= peer.now + Duration::from_secs(1));
    peer.now = deadline;
    peer.conn.handle_timeout(peer.now);
    assert!(matches!(
        closed(&peer.events()),
        Some(Event::Closed { error: None, .. })
    ));
}

/// Our client with a GET in flight on stream 1 and stream 2 promised on it.
fn client_with_promise() -> RawPeer {
    let mut peer = client_with_get();
    let block = peer.block(GET);
    peer.send(Frame::PushPromise(PushPromise {
        stream_id: sid(1),
        promised_id: sid(2),
        fragment: block,
        end_headers: true,
        padding: None,
    }));
    assert!(
        peer.events()
            .iter()
            .any(|e| matches!(e, Event::PushPromise { .. }))
    );
    peer
}

#[test]
fn s5_1_client_sends_nothing_but_rst_on_a_reserved_remote_stream() {
    // §5.1 reserved (remote): an endpoint MAY send RST_STREAM, PRIORITY or
    // WINDOW_UPDATE, nothing else; DATA there is the peer's PROTOCOL_ERROR.
    let mut peer = client_with_promise();
    assert_eq!(
        peer.conn.send_data(sid(2), Bytes::from_static(b"x"), true),
        Err(h2sim_proto::UserError::InvalidState(sid(2)))
    );
    assert_eq!(
        peer.conn.send_trailers(sid(2), vec![]),
        Err(h2sim_proto::UserError::InvalidState(sid(2)))
    );
    assert!(
        !peer
            .frames()
            .iter()
            .any(|f| matches!(f, Frame::Data(d) if d.stream_id == sid(2))),
        "DATA went out on a reserved (remote) stream"
    );
}

/// RFC 9110 §9.3.2 and §6.5: a response to HEAD has no content, so
/// trailers on it are the server's mistake, but a harmless one: our
/// client takes them (be liberal in what it accepts), and the
/// content-length, which says what a GET would have had, is no mismatch
/// (RFC 9113 §8.1.1).
#[test]
fn s8_1_client_takes_trailers_on_a_response_to_head() {
    let mut peer = RawPeer::client(Config::default());
    peer.handshake();
    let request = h2sim_proto::RequestHead::new("HEAD", "http", "example.com", "/");
    let id = peer.conn.send_request(request, true).unwrap();
    peer.frames();
    let head = peer.block(&[(":status", "200"), ("content-length", "5")]);
    let trailers = peer.block(&[("x-checksum", "abc")]);
    for (fragment, end_stream) in [(head, false), (trailers, true)] {
        peer.send(Frame::Headers(Headers {
            stream_id: id,
            fragment,
            end_stream,
            end_headers: true,
            priority: None,
            padding: None,
        }));
    }
    let frames = peer.frames();
    assert_no_error(&frames);
    let events = peer.events();
    assert!(
        matches!(&events[..], [
            Event::Response { stream: a, end_stream: false, .. },
            Event::Trailers { stream: b, fields },
        ] if *a == id && *b == id && fields[0].value == "abc"),
        "{events:?}"
    );
}

#[test]
fn s8_1_1_pushed_response_shorter_than_its_content_length_resets_only_the_push() {
    // §8.1.1: a content-length that the END_STREAM contradicts is malformed,
    // a stream error; the promised stream never counted toward our limit
    // (§5.1.2), so resetting it must leave the count intact.
    let mut peer = client_with_promise();
    let block = peer.block(&[(":status", "200"), ("content-length", "5")]);
    peer.send(Frame::Headers(Headers {
        stream_id: sid(2),
        fragment: block,
        end_stream: true,
        end_headers: true,
        priority: None,
        padding: None,
    }));
    let frames = peer.frames();
    assert!(frames.iter().any(|f| matches!(f,
        Frame::RstStream(r) if r.stream_id == sid(2) && r.reason == Reason::PROTOCOL_ERROR)));
    assert!(goaways(&frames).is_empty());
    // The connection still takes pushes and responses.
    let block = peer.block(GET);
    peer.send(Frame::PushPromise(PushPromise {
        stream_id: sid(1),
        promised_id: sid(4),
        fragment: block,
        end_headers: true,
        padding: None,
    }));
    let block = peer.block(&[(":status", "200")]);
    peer.send(Frame::Headers(Headers {
        stream_id: sid(4),
        fragment: block,
        end_stream: true,
        end_headers: true,
        priority: None,
        padding: None,
    }));
    let events = peer.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Response { stream, .. } if *stream == sid(4))),
        "{events:?}"
    );
}

/// A plain listener's two modes (`ServerOptions::plain_protocol`): HTTP/2
/// only answers an HTTP/1.1 request with SETTINGS and GOAWAY(PROTOCOL_ERROR)
/// (RFC 9113 §3.4, "the connection preface ... MUST be ... the string
/// PRI * HTTP/2.0"), detection (the default) with an HTTP/1.1 response.
#[test]
fn s3_4_http2_only_listener_refuses_http1_detection_answers_it() {
    use h2sim_proto::Protocol;
    use h2sim_proto::host::info::server_connection;
    let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let now = std::time::Instant::now();

    let mut only = server_connection(Some(Protocol::Http2), Config::default(), now).unwrap();
    let mut input = bytes::BytesMut::from(&request[..]);
    only.handle_input(now, &mut input);
    let mut out = bytes::BytesMut::new();
    while let Some(chunk) = only.poll_transmit(now) {
        out.extend_from_slice(&chunk);
    }
    let frames =
        support::decode_frames(&mut h2sim_proto::frame::FrameDecoder::new(16_384), &mut out);
    assert!(
        matches!(frames.first(), Some(Frame::Settings(s)) if !s.ack),
        "{frames:?}"
    );
    let g = goaway(&frames).unwrap_or_else(|| panic!("no GOAWAY in {frames:?}"));
    assert_eq!(g.reason, Reason::PROTOCOL_ERROR);
    assert!(only.is_closed());

    let mut detect = server_connection(None, Config::default(), now).unwrap();
    let mut input = bytes::BytesMut::from(&request[..]);
    detect.handle_input(now, &mut input);
    assert_eq!(detect.protocol(), Some(Protocol::Http1));
    let events: Vec<Event> = std::iter::from_fn(|| detect.poll_event()).collect();
    assert!(
        events.iter().any(|e| matches!(e, Event::Request { .. })),
        "{events:?}"
    );
}

/// The client's answers to what came with its last response: a PING ACK
/// (RFC 9113 §6.7: "Receivers of a PING frame that does not include an
/// ACK flag MUST send a PING frame with the ACK flag set in response") and
/// a SETTINGS ACK (§6.5.3: "Upon receiving ... SETTINGS ... the recipient
/// MUST immediately emit a SETTINGS frame with the ACK flag set").
fn assert_answered_first(frames: &[Frame], ping: [u8; 8]) {
    let ack_at = frames
        .iter()
        .position(|f| matches!(f, Frame::Ping(p) if p.ack && p.payload == ping))
        .unwrap_or_else(|| panic!("no PING ACK for {ping:?} in {frames:?}"));
    let settings_ack_at = frames
        .iter()
        .position(|f| matches!(f, Frame::Settings(s) if s.ack))
        .unwrap_or_else(|| panic!("no SETTINGS ACK in {frames:?}"));
    // A peer waiting for "the next PING" (or SETTINGS) must not meet one
    // of ours without the ACK flag first.
    let own_ping_at = frames
        .iter()
        .position(|f| matches!(f, Frame::Ping(p) if !p.ack));
    let own_settings_at = frames
        .iter()
        .position(|f| matches!(f, Frame::Settings(s) if !s.ack));
    assert!(own_ping_at.is_none_or(|own| ack_at < own), "{frames:?}");
    assert!(
        own_settings_at.is_none_or(|own| settings_ack_at < own),
        "{frames:?}"
    );
}

/// A client with request 1 sent and answered by the raw peer in one
/// write: `before` frames, the response, then a PING and a SETTINGS.
fn client_answered(before: Vec<Frame>, ping: [u8; 8]) -> RawPeer {
    let mut peer = client_with_get();
    let status = peer.block(&[(":status", "200")]);
    let mut frames = before;
    frames.push(headers(1, status, true));
    frames.push(Frame::Ping(Ping {
        ack: false,
        payload: ping,
    }));
    frames.push(Frame::Settings(Settings {
        ack: false,
        values: vec![Setting::MaxConcurrentStreams(10)],
    }));
    let mut bytes = bytes::BytesMut::new();
    for frame in frames {
        frame.encode(&mut bytes);
    }
    peer.send_bytes(&bytes);
    peer
}

/// A client that goes away as soon as its last response is in (what
/// `h2sim client` does at the end of a run) still acknowledges the PING
/// and SETTINGS that came behind that response, before its own shutdown
/// PING (§6.7, §6.5.3, §6.8).
#[test]
fn s6_7_client_ending_after_its_last_response_acks_the_peer_first() {
    let ping = *b"peer-png";
    let mut peer = client_answered(Vec::new(), ping);
    assert!(peer.events().iter().any(|e| matches!(
        e,
        Event::Response {
            end_stream: true,
            ..
        }
    )));
    peer.conn.go_away(peer.now);
    let frames = peer.frames();
    assert_answered_first(&frames, ping);
    // And a PING behind the peer's answer to our shutdown PING, which
    // ends the connection, is still acknowledged.
    let ours = frames
        .iter()
        .find_map(|f| match f {
            Frame::Ping(p) if !p.ack => Some(p.payload),
            _ => None,
        })
        .expect("the shutdown PING");
    let mut bytes = bytes::BytesMut::new();
    for frame in [
        Frame::Ping(Ping {
            ack: true,
            payload: ours,
        }),
        Frame::Ping(Ping {
            ack: false,
            payload: *b"late-png",
        }),
        Frame::Settings(Settings {
            ack: false,
            values: vec![],
        }),
    ] {
        frame.encode(&mut bytes);
    }
    peer.send_bytes(&bytes);
    let frames = peer.frames();
    assert_answered_first(&frames, *b"late-png");
    assert!(peer.conn.is_closed());
}

/// The server went away first: the client's last response ends the
/// connection (nothing more may be asked), and the PING and SETTINGS
/// written behind that response are still acknowledged (§6.7, §6.5.3).
#[test]
fn s6_7_client_closed_by_its_last_response_still_acks_the_peer() {
    let ping = *b"peer-png";
    let goaway = Frame::GoAway(GoAway {
        last_stream_id: sid(1),
        reason: Reason::NO_ERROR,
        debug_data: Bytes::new(),
    });
    let mut peer = client_answered(vec![goaway], ping);
    let frames = peer.frames();
    assert_answered_first(&frames, ping);
    assert!(peer.conn.is_closed());
}

/// A head with a field that makes its section about 300 bytes.
fn long_field() -> Vec<HeaderField> {
    vec![HeaderField::new(
        Bytes::from_static(b"x-long"),
        Bytes::from("v".repeat(300)),
    )]
}

fn settings_limit(max: u32) -> Frame {
    Frame::Settings(Settings {
        ack: false,
        values: vec![Setting::MaxHeaderListSize(max)],
    })
}

/// A server whose client has said SETTINGS_MAX_HEADER_LIST_SIZE = `max`,
/// with our SETTINGS acknowledged.
fn server_with_peer_limit(max: u32) -> RawPeer {
    let mut peer = RawPeer::server(Config::default());
    peer.send_bytes(h2sim_proto::frame::PREFACE);
    peer.send(settings_limit(max));
    peer.send(Frame::Settings(Settings {
        ack: true,
        values: vec![],
    }));
    peer
}

fn no_headers_on(frames: &[Frame], stream: u32) -> bool {
    !frames.iter().any(|f| {
        matches!(f, Frame::Headers(h) if h.stream_id == sid(stream))
            || matches!(f, Frame::Continuation(c) if c.stream_id == sid(stream))
    })
}

/// §6.5.2/§10.5.1: the peer's SETTINGS_MAX_HEADER_LIST_SIZE is honoured for
/// our responses: one above it is refused to the application with
/// `UserError::HeaderListTooLarge` and never reaches the peer; a smaller
/// one on the same stream goes out.
#[test]
fn s6_5_2_server_response_above_the_peers_header_list_size_is_an_error() {
    let mut peer = server_with_peer_limit(200);
    open(&mut peer, 1, true);
    peer.frames();
    let mut head = ResponseHead::new(200);
    head.fields = long_field();
    let err = peer.conn.send_response(sid(1), head, true).unwrap_err();
    assert!(
        matches!(err, UserError::HeaderListTooLarge { size, max: 200 } if size > 300),
        "{err:?}"
    );
    assert!(no_headers_on(&peer.frames(), 1));
    peer.conn
        .send_response(sid(1), ResponseHead::new(204), true)
        .unwrap();
    assert!(!no_headers_on(&peer.frames(), 1));
}

/// A response (or trailers) on a stream that is gone is `UnknownStream`
/// whatever its size: the stream is checked before the peer's limit, so
/// an application that meets both learns the stream is over, not that it
/// could retry with a smaller head.
#[test]
fn s6_5_2_an_oversized_response_on_a_reset_stream_is_unknown_stream() {
    let mut peer = server_with_peer_limit(200);
    open(&mut peer, 1, false);
    peer.send(Frame::RstStream(RstStream {
        stream_id: sid(1),
        reason: Reason::CANCEL,
    }));
    peer.frames();
    let mut head = ResponseHead::new(200);
    head.fields = long_field();
    let err = peer.conn.send_response(sid(1), head, true).unwrap_err();
    assert_eq!(err, UserError::UnknownStream(sid(1)));
    let err = peer.conn.send_trailers(sid(1), long_field()).unwrap_err();
    assert_eq!(err, UserError::UnknownStream(sid(1)));
}

/// The same for a client's requests.
#[test]
fn s6_5_2_client_request_above_the_peers_header_list_size_is_an_error() {
    let mut peer = RawPeer::client(Config::default());
    peer.send(settings_limit(200));
    peer.frames();
    let mut head = h2sim_proto::RequestHead::new("GET", "http", "example.com", "/");
    head.fields = long_field();
    let err = peer.conn.send_request(head, true).unwrap_err();
    assert!(
        matches!(err, UserError::HeaderListTooLarge { max: 200, .. }),
        "{err:?}"
    );
    assert!(no_headers_on(&peer.frames(), 1));
}

/// The same while our client goes away (§6.8), with that request its last
/// stream: the application hears of the reset before the connection's
/// close, not after it, when it may no longer be listening. Found by
/// `random_operations_keep_the_invariants` (h2_proptest.rs), whose client
/// saw a clean close with a request that had no outcome: the reset that
/// dropped it ended the connection before its event was queued.
#[test]
fn s6_5_2_a_request_dropped_for_a_lower_limit_is_reported_before_the_close() {
    let mut peer = RawPeer::client(Config::default());
    let mut head = h2sim_proto::RequestHead::new("GET", "http", "example.com", "/");
    head.fields = long_field();
    let stream = peer.conn.send_request(head, true).unwrap();
    peer.conn.go_away(peer.now);
    peer.send(settings_limit(200));
    let frames = peer.frames();
    assert!(no_headers_on(&frames, 1), "{frames:?}");
    // With the request gone, the GOAWAY went out; its round trip passes
    // unanswered.
    assert!(
        frames.iter().any(|f| matches!(f, Frame::GoAway(_))),
        "{frames:?}"
    );
    peer.now += Duration::from_secs(1);
    peer.conn.handle_timeout(peer.now);
    let events = peer.events();
    let reset = events.iter().position(|e| {
        matches!(e, Event::StreamReset { stream: s, reason: Reason::CANCEL, .. } if *s == stream)
    });
    let closed = events
        .iter()
        .position(|e| matches!(e, Event::Closed { error: None, .. }));
    assert!(
        matches!((reset, closed), (Some(r), Some(c)) if r < c),
        "the reset, then a clean close: {events:?}"
    );
}

/// A request queued while the limit allowed it, then the peer's SETTINGS
/// lowers the limit below it before it is written: it is not sent, and
/// the application hears the stream was reset.
#[test]
fn s6_5_2_request_queued_before_a_lower_limit_is_not_sent() {
    let mut peer = RawPeer::client(Config::default());
    let mut head = h2sim_proto::RequestHead::new("GET", "http", "example.com", "/");
    head.fields = long_field();
    let stream = peer.conn.send_request(head, true).unwrap();
    peer.send(settings_limit(200));
    let frames = peer.frames();
    assert_eq!(stream, sid(1));
    assert!(no_headers_on(&frames, 1), "{frames:?}");
    assert!(
        !frames.iter().any(|f| matches!(f, Frame::RstStream(_))),
        "the peer never heard of the stream: {frames:?}"
    );
    let events = peer.events();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::StreamReset { stream: s, reason: Reason::CANCEL, remote: false, .. } if *s == stream
        )),
        "{events:?}"
    );
}

/// A PUT that expects `100 (Continue)` (RFC 9110 §10.1.1), its HEADERS
/// without END_STREAM, with the field's value as `expect` says it; the
/// events it gave the server.
fn put_expecting(peer: &mut RawPeer, id: u32, expect: &str) -> Vec<Event> {
    let block = peer.block(&[
        (":method", "PUT"),
        (":scheme", "http"),
        (":authority", "example.com"),
        (":path", "/f"),
        ("expect", expect),
        ("content-length", "3"),
    ]);
    peer.send(headers(id, block, false));
    peer.events()
}

/// The `:status` of each HEADERS on `stream` in `frames`, with its
/// END_STREAM flag.
fn statuses(peer: &mut RawPeer, frames: &[Frame], stream: u32) -> Vec<(String, bool)> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::Headers(h) if h.stream_id == sid(stream) => Some(h),
            _ => None,
        })
        .map(|h| {
            let fields = peer.decode_block(&h.fragment);
            let status = fields.iter().find(|f| f.name == ":status").unwrap();
            (
                String::from_utf8_lossy(&status.value).into_owned(),
                h.end_stream,
            )
        })
        .collect()
}

/// RFC 9110 §10.1.1: "Upon receiving an HTTP/1.1 (or later) request that
/// has a method, target URI, and complete header section that contains a
/// 100-continue expectation and an indication that request content will
/// follow, an origin server MUST send either: an immediate response with a
/// final status code ... or an immediate 100 (Continue) response". A
/// client that waits for it (Java's HttpClient with `expectContinue`)
/// otherwise never sends its content. The 100 goes once; the final answer
/// follows the content.
#[test]
fn rfc9110_10_1_1_a_request_expecting_100_continue_gets_it() {
    let mut peer = server();
    let events = put_expecting(&mut peer, 1, "100-Continue");
    assert!(
        matches!(
            &events[..],
            [Event::Request {
                end_stream: false,
                ..
            }]
        ),
        "{events:?}"
    );
    let frames = peer.frames();
    assert_eq!(
        statuses(&mut peer, &frames, 1),
        [("100".to_owned(), false)],
        "{frames:?}"
    );
    assert!(peer.frames().is_empty(), "one 100");
    peer.send(data(1, b"abc", true));
    peer.events();
    peer.conn
        .send_response(sid(1), ResponseHead::new(201), true)
        .unwrap();
    let frames = peer.frames();
    assert_eq!(statuses(&mut peer, &frames, 1), [("201".to_owned(), true)]);
}

/// No 100 where it says nothing: a final answer given as soon as the
/// request was seen (the client need not send its content), content the
/// client sent without waiting, or no expectation.
#[test]
fn rfc9110_10_1_1_no_100_after_a_final_answer_or_the_content() {
    let mut peer = server();
    put_expecting(&mut peer, 1, "100-continue");
    peer.conn
        .send_response(sid(1), ResponseHead::new(417), true)
        .unwrap();
    let frames = peer.frames();
    assert_eq!(statuses(&mut peer, &frames, 1), [("417".to_owned(), true)]);

    let block = peer.block(&[
        (":method", "PUT"),
        (":scheme", "http"),
        (":authority", "example.com"),
        (":path", "/f"),
        ("expect", "100-continue"),
    ]);
    peer.send(headers(3, block, false));
    peer.send(data(3, b"abc", true));
    peer.events();
    let frames = peer.frames();
    assert!(statuses(&mut peer, &frames, 3).is_empty(), "{frames:?}");

    put_expecting(&mut peer, 5, "something-else");
    let frames = peer.frames();
    assert!(statuses(&mut peer, &frames, 5).is_empty(), "{frames:?}");
}
