//! One test per frame-layer rule of RFC 9113, checking the exact error code
//! and scope, plus the frames each rule must still accept.
#![allow(clippy::unwrap_used)]

use bytes::{BufMut, BytesMut};
use h2sim_proto::frame::{
    ErrorScope, Frame, FrameDecoder, FrameError, FrameErrorKind, FrameKind, Head, PrioritySpec,
    Reason, Setting, StreamId, flags,
};

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const PRIORITY: u8 = 0x2;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PUSH_PROMISE: u8 = 0x5;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const WINDOW_UPDATE: u8 = 0x8;
const CONTINUATION: u8 = 0x9;

/// A frame built byte by byte, so it can break any rule.
fn raw(kind: u8, frame_flags: u8, stream: u32, payload: &[u8]) -> BytesMut {
    let mut buf = BytesMut::new();
    Head {
        len: u32::try_from(payload.len()).unwrap(),
        kind: FrameKind::from(kind),
        flags: frame_flags,
        stream_id: StreamId::new(stream),
    }
    .encode(&mut buf);
    buf.put_slice(payload);
    buf
}

fn decode(mut buf: BytesMut) -> Result<Frame, FrameError> {
    let frame = FrameDecoder::default().decode(&mut buf)?.unwrap();
    assert!(buf.is_empty(), "frame not fully consumed");
    Ok(frame)
}

fn connection_error(buf: BytesMut, reason: Reason) -> FrameErrorKind {
    let err = decode(buf).unwrap_err();
    assert_eq!(err.scope, ErrorScope::Connection, "{err}");
    assert_eq!(err.reason, reason, "{err}");
    err.kind
}

/// Checks a stream error and that the decoder skipped the bad frame: a PING
/// appended after it must still decode.
fn stream_error(mut buf: BytesMut, stream: u32, reason: Reason) -> FrameErrorKind {
    buf.put_slice(&raw(PING, 0, 0, &[1; 8]));
    let mut decoder = FrameDecoder::default();
    let err = decoder.decode(&mut buf).unwrap_err();
    assert_eq!(
        err.scope,
        ErrorScope::Stream(StreamId::new(stream)),
        "{err}"
    );
    assert_eq!(err.reason, reason, "{err}");
    let next = decoder.decode(&mut buf).unwrap().unwrap();
    assert!(matches!(next, Frame::Ping(_)), "bad frame not consumed");
    assert!(buf.is_empty());
    err.kind
}

// §4.2: frame size limit.

#[test]
fn s4_2_frame_over_max_frame_size_is_connection_frame_size_error() {
    let payload = vec![0; 16_385];
    let kind = connection_error(raw(DATA, 0, 1, &payload), Reason::FRAME_SIZE_ERROR);
    assert_eq!(
        kind,
        FrameErrorKind::TooLarge {
            kind: FrameKind::Data,
            len: 16_385,
            max: 16_384
        }
    );
    // Exactly the limit is fine, and a raised limit applies.
    assert!(decode(raw(DATA, 0, 1, &payload[..16_384])).is_ok());
    let mut decoder = FrameDecoder::new(16_385);
    let mut buf = raw(DATA, 0, 1, &payload);
    assert!(matches!(decoder.decode(&mut buf), Ok(Some(Frame::Data(_)))));
}

#[test]
fn s4_2_oversized_frame_is_rejected_from_its_header_alone() {
    let mut buf = raw(HEADERS, flags::END_HEADERS, 1, &[]);
    buf[..3].copy_from_slice(&[0x01, 0x00, 0x00]); // 65536, no payload sent yet
    let err = FrameDecoder::default().decode(&mut buf).unwrap_err();
    assert_eq!(
        (err.scope, err.reason),
        (ErrorScope::Connection, Reason::FRAME_SIZE_ERROR)
    );
}

#[test]
fn s4_2_max_frame_size_applies_to_unknown_types() {
    let kind = connection_error(raw(0xbb, 0, 0, &[0; 16_385]), Reason::FRAME_SIZE_ERROR);
    assert!(matches!(
        kind,
        FrameErrorKind::TooLarge {
            kind: FrameKind::Unknown(0xbb),
            ..
        }
    ));
}

// Stream-level frames on stream 0: PROTOCOL_ERROR, connection error.

fn assert_stream_zero_rejected(kind: u8, frame_flags: u8, payload: &[u8]) {
    let err = connection_error(raw(kind, frame_flags, 0, payload), Reason::PROTOCOL_ERROR);
    assert_eq!(
        err,
        FrameErrorKind::StreamIdZero {
            kind: FrameKind::from(kind)
        }
    );
}

#[test]
fn s6_1_data_on_stream_zero_is_connection_protocol_error() {
    assert_stream_zero_rejected(DATA, 0, b"x");
}

#[test]
fn s6_2_headers_on_stream_zero_is_connection_protocol_error() {
    assert_stream_zero_rejected(HEADERS, flags::END_HEADERS, b"x");
}

#[test]
fn s6_3_priority_on_stream_zero_is_connection_protocol_error() {
    assert_stream_zero_rejected(PRIORITY, 0, &[0, 0, 0, 1, 16]);
    // Even with a bad length: the connection error wins over the stream one.
    assert_stream_zero_rejected(PRIORITY, 0, &[0, 0, 0, 1]);
}

#[test]
fn s6_4_rst_stream_on_stream_zero_is_connection_protocol_error() {
    assert_stream_zero_rejected(RST_STREAM, 0, &[0, 0, 0, 8]);
}

#[test]
fn s6_6_push_promise_on_stream_zero_is_connection_protocol_error() {
    assert_stream_zero_rejected(PUSH_PROMISE, flags::END_HEADERS, &[0, 0, 0, 2]);
}

#[test]
fn s6_10_continuation_on_stream_zero_is_connection_protocol_error() {
    assert_stream_zero_rejected(CONTINUATION, flags::END_HEADERS, b"x");
}

// Connection-level frames on a stream: PROTOCOL_ERROR, connection error.

fn assert_nonzero_stream_rejected(kind: u8, payload: &[u8]) {
    let err = connection_error(raw(kind, 0, 5, payload), Reason::PROTOCOL_ERROR);
    assert_eq!(
        err,
        FrameErrorKind::StreamIdNotZero {
            kind: FrameKind::from(kind),
            stream_id: StreamId::new(5)
        }
    );
}

#[test]
fn s6_5_settings_on_a_stream_is_connection_protocol_error() {
    assert_nonzero_stream_rejected(SETTINGS, &[]);
}

#[test]
fn s6_7_ping_on_a_stream_is_connection_protocol_error() {
    assert_nonzero_stream_rejected(PING, &[0; 8]);
}

#[test]
fn s6_8_goaway_on_a_stream_is_connection_protocol_error() {
    assert_nonzero_stream_rejected(GOAWAY, &[0; 8]);
}

// Padding: §6.1, §6.2, §6.6.

#[test]
fn s6_1_data_padding_as_long_as_payload_is_connection_protocol_error() {
    // Payload of 4: Pad Length 4 >= frame payload length.
    let kind = connection_error(
        raw(DATA, flags::PADDED, 1, &[4, 0, 0, 0]),
        Reason::PROTOCOL_ERROR,
    );
    assert_eq!(
        kind,
        FrameErrorKind::PaddingTooLong {
            kind: FrameKind::Data,
            padding: 4,
            available: 3
        }
    );
    // Pad Length 3 leaves an empty, valid DATA frame.
    let Frame::Data(data) = decode(raw(DATA, flags::PADDED, 1, &[3, 0, 0, 0])).unwrap() else {
        panic!("not DATA");
    };
    assert!(data.payload.is_empty());
    assert_eq!(data.padding, Some(3));
    assert_eq!(data.flow_controlled_len(), 4);
}

#[test]
fn s6_2_headers_padding_beyond_fragment_is_connection_protocol_error() {
    // PADDED | PRIORITY: 1 + 5 bytes of fields, 2 left, padding 3.
    let payload = [3, 0, 0, 0, 3, 16, 0xaa, 0xbb];
    let kind = connection_error(
        raw(
            HEADERS,
            flags::PADDED | flags::PRIORITY | flags::END_HEADERS,
            1,
            &payload,
        ),
        Reason::PROTOCOL_ERROR,
    );
    assert_eq!(
        kind,
        FrameErrorKind::PaddingTooLong {
            kind: FrameKind::Headers,
            padding: 3,
            available: 2
        }
    );
}

#[test]
fn s6_6_push_promise_padding_beyond_fragment_is_connection_protocol_error() {
    let payload = [2, 0, 0, 0, 2, 0xaa];
    let kind = connection_error(
        raw(
            PUSH_PROMISE,
            flags::PADDED | flags::END_HEADERS,
            1,
            &payload,
        ),
        Reason::PROTOCOL_ERROR,
    );
    assert!(matches!(
        kind,
        FrameErrorKind::PaddingTooLong {
            padding: 2,
            available: 1,
            ..
        }
    ));
}

#[test]
fn s4_2_padded_frame_without_pad_length_is_connection_frame_size_error() {
    for kind in [DATA, HEADERS, PUSH_PROMISE] {
        let err = connection_error(
            raw(kind, flags::PADDED | flags::END_HEADERS, 1, &[]),
            Reason::FRAME_SIZE_ERROR,
        );
        assert!(
            matches!(err, FrameErrorKind::TooShort { needed: 1, .. }),
            "{err:?}"
        );
    }
}

// HEADERS priority fields: §6.2, §5.3.

#[test]
fn s6_2_headers_too_short_for_priority_is_connection_frame_size_error() {
    let kind = connection_error(
        raw(
            HEADERS,
            flags::PRIORITY | flags::END_HEADERS,
            1,
            &[0, 0, 0, 3],
        ),
        Reason::FRAME_SIZE_ERROR,
    );
    assert!(matches!(
        kind,
        FrameErrorKind::TooShort {
            len: 4,
            needed: 5,
            ..
        }
    ));
}

#[test]
fn s5_3_2_headers_priority_fields_are_exposed() {
    let buf = raw(
        HEADERS,
        flags::PRIORITY | flags::END_HEADERS,
        3,
        &[0x80, 0, 0, 1, 255, 0x82],
    );
    let Frame::Headers(headers) = decode(buf).unwrap() else {
        panic!("not HEADERS")
    };
    assert_eq!(
        headers.priority,
        Some(PrioritySpec {
            dependency: StreamId::new(1),
            exclusive: true,
            weight: 255
        })
    );
    assert_eq!(&headers.fragment[..], &[0x82]);
}

#[test]
fn s5_3_1_headers_depending_on_itself_is_stream_protocol_error() {
    let buf = raw(
        HEADERS,
        flags::PRIORITY | flags::END_HEADERS | flags::END_STREAM,
        3,
        &[0, 0, 0, 3, 16, 0x82, 0x84],
    );
    let kind = stream_error(buf, 3, Reason::PROTOCOL_ERROR);
    let FrameErrorKind::SelfDependency {
        stream_id,
        headers: Some(headers),
    } = kind
    else {
        panic!("wrong kind {kind:?}");
    };
    // The field block is handed over so HPACK state can be kept in sync.
    assert_eq!(stream_id, StreamId::new(3));
    assert_eq!(&headers.fragment[..], &[0x82, 0x84]);
    assert!(headers.end_headers && headers.end_stream);
}

#[test]
fn s5_3_1_priority_depending_on_itself_is_stream_protocol_error() {
    let kind = stream_error(
        raw(PRIORITY, 0, 7, &[0x80, 0, 0, 7, 16]),
        7,
        Reason::PROTOCOL_ERROR,
    );
    assert_eq!(
        kind,
        FrameErrorKind::SelfDependency {
            stream_id: StreamId::new(7),
            headers: None
        }
    );
}

// Fixed lengths.

#[test]
fn s6_3_priority_length_not_5_is_stream_frame_size_error() {
    for len in [0, 4, 6] {
        let kind = stream_error(
            raw(PRIORITY, 0, 9, &vec![0; len]),
            9,
            Reason::FRAME_SIZE_ERROR,
        );
        assert!(matches!(
            kind,
            FrameErrorKind::BadLength { expected: 5, .. }
        ));
    }
}

#[test]
fn s6_4_rst_stream_length_not_4_is_connection_frame_size_error() {
    for len in [0, 3, 5] {
        let kind = connection_error(
            raw(RST_STREAM, 0, 1, &vec![0; len]),
            Reason::FRAME_SIZE_ERROR,
        );
        assert!(matches!(
            kind,
            FrameErrorKind::BadLength { expected: 4, .. }
        ));
    }
}

#[test]
fn s6_4_rst_stream_keeps_unknown_error_codes() {
    let Frame::RstStream(rst) = decode(raw(RST_STREAM, 0, 1, &[0xff, 0, 0, 1])).unwrap() else {
        panic!("not RST_STREAM");
    };
    assert_eq!(rst.reason, Reason(0xff00_0001));
}

#[test]
fn s6_5_settings_length_not_multiple_of_6_is_connection_frame_size_error() {
    let kind = connection_error(
        raw(SETTINGS, 0, 0, &[0, 1, 0, 0, 0x10, 0, 0]),
        Reason::FRAME_SIZE_ERROR,
    );
    assert_eq!(kind, FrameErrorKind::SettingsLength { len: 7 });
}

#[test]
fn s6_5_settings_ack_with_payload_is_connection_frame_size_error() {
    let kind = connection_error(
        raw(SETTINGS, flags::ACK, 0, &[0, 1, 0, 0, 0x10, 0]),
        Reason::FRAME_SIZE_ERROR,
    );
    assert_eq!(kind, FrameErrorKind::SettingsAckWithPayload { len: 6 });
    let Frame::Settings(ack) = decode(raw(SETTINGS, flags::ACK, 0, &[])).unwrap() else {
        panic!("not SETTINGS");
    };
    assert!(ack.ack && ack.values.is_empty());
}

fn setting(id: u16, value: u32) -> BytesMut {
    let mut payload = BytesMut::new();
    payload.put_u16(id);
    payload.put_u32(value);
    raw(SETTINGS, 0, 0, &payload)
}

#[test]
fn s6_5_2_enable_push_not_0_or_1_is_connection_protocol_error() {
    let kind = connection_error(setting(0x2, 2), Reason::PROTOCOL_ERROR);
    assert_eq!(
        kind,
        FrameErrorKind::InvalidSetting {
            id: Setting::ENABLE_PUSH,
            value: 2
        }
    );
    for (value, enabled) in [(0, false), (1, true)] {
        let Frame::Settings(settings) = decode(setting(0x2, value)).unwrap() else {
            panic!("not SETTINGS");
        };
        assert_eq!(settings.values, [Setting::EnablePush(enabled)]);
    }
}

/// RFC 8441 §3: "The value of the parameter MUST be 0 or 1."
#[test]
fn rfc8441_s3_enable_connect_protocol_not_0_or_1_is_connection_protocol_error() {
    let kind = connection_error(setting(0x8, 2), Reason::PROTOCOL_ERROR);
    assert_eq!(
        kind,
        FrameErrorKind::InvalidSetting {
            id: Setting::ENABLE_CONNECT_PROTOCOL,
            value: 2
        }
    );
    for (value, enabled) in [(0, false), (1, true)] {
        let Frame::Settings(settings) = decode(setting(0x8, value)).unwrap() else {
            panic!("not SETTINGS");
        };
        assert_eq!(settings.values, [Setting::EnableConnectProtocol(enabled)]);
    }
}

#[test]
fn s6_5_2_initial_window_size_over_2_31_minus_1_is_connection_flow_control_error() {
    let kind = connection_error(setting(0x4, 1 << 31), Reason::FLOW_CONTROL_ERROR);
    assert_eq!(
        kind,
        FrameErrorKind::InvalidSetting {
            id: Setting::INITIAL_WINDOW_SIZE,
            value: 1 << 31
        }
    );
    assert!(decode(setting(0x4, (1 << 31) - 1)).is_ok());
}

#[test]
fn s6_5_2_max_frame_size_out_of_range_is_connection_protocol_error() {
    for value in [0, 16_383, 1 << 24, u32::MAX] {
        let kind = connection_error(setting(0x5, value), Reason::PROTOCOL_ERROR);
        assert_eq!(
            kind,
            FrameErrorKind::InvalidSetting {
                id: Setting::MAX_FRAME_SIZE,
                value
            }
        );
    }
    for value in [16_384, (1 << 24) - 1] {
        assert!(decode(setting(0x5, value)).is_ok());
    }
}

#[test]
fn s6_5_2_unknown_settings_are_kept_in_order() {
    let mut payload = BytesMut::new();
    for (id, value) in [(0x4, 10), (0xff, 7), (0x4, 20), (0x1, 0)] {
        payload.put_u16(id);
        payload.put_u32(value);
    }
    let Frame::Settings(settings) = decode(raw(SETTINGS, 0, 0, &payload)).unwrap() else {
        panic!("not SETTINGS");
    };
    assert_eq!(
        settings.values,
        [
            Setting::InitialWindowSize(10),
            Setting::Unknown { id: 0xff, value: 7 },
            Setting::InitialWindowSize(20),
            Setting::HeaderTableSize(0),
        ]
    );
}

#[test]
fn s6_7_ping_length_not_8_is_connection_frame_size_error() {
    for (frame_flags, len) in [(0, 7), (0, 9), (flags::ACK, 0), (flags::ACK, 16)] {
        let kind = connection_error(
            raw(PING, frame_flags, 0, &vec![0; len]),
            Reason::FRAME_SIZE_ERROR,
        );
        assert!(matches!(
            kind,
            FrameErrorKind::BadLength { expected: 8, .. }
        ));
    }
    let err = decode(raw(PING, 0, 0, &[0; 7])).unwrap_err();
    assert_eq!(
        err.kind.to_string(),
        "PING frame with length 7, must be 8 (RFC 9113 §6.7)"
    );
}

#[test]
fn s6_8_goaway_shorter_than_8_is_connection_frame_size_error() {
    let kind = connection_error(raw(GOAWAY, 0, 0, &[0; 7]), Reason::FRAME_SIZE_ERROR);
    assert!(matches!(
        kind,
        FrameErrorKind::TooShort {
            len: 7,
            needed: 8,
            ..
        }
    ));
    let Frame::GoAway(goaway) = decode(raw(
        GOAWAY,
        0,
        0,
        &[0x80, 0, 0, 5, 0, 0, 0, 0xb, b'h', b'i'],
    ))
    .unwrap() else {
        panic!("not GOAWAY");
    };
    assert_eq!(goaway.last_stream_id, StreamId::new(5));
    assert_eq!(goaway.reason, Reason::ENHANCE_YOUR_CALM);
    assert_eq!(&goaway.debug_data[..], b"hi");
}

#[test]
fn s6_9_window_update_length_not_4_is_connection_frame_size_error() {
    for stream in [0, 1] {
        for len in [0, 3, 5] {
            let kind = connection_error(
                raw(WINDOW_UPDATE, 0, stream, &vec![0; len]),
                Reason::FRAME_SIZE_ERROR,
            );
            assert!(matches!(
                kind,
                FrameErrorKind::BadLength { expected: 4, .. }
            ));
        }
    }
}

#[test]
fn s6_9_zero_increment_on_a_stream_is_stream_protocol_error() {
    let kind = stream_error(raw(WINDOW_UPDATE, 0, 3, &[0; 4]), 3, Reason::PROTOCOL_ERROR);
    assert_eq!(
        kind,
        FrameErrorKind::ZeroWindowIncrement {
            stream_id: StreamId::new(3)
        }
    );
}

#[test]
fn s6_9_zero_increment_on_the_connection_is_connection_protocol_error() {
    // The reserved bit does not count towards the increment.
    let kind = connection_error(
        raw(WINDOW_UPDATE, 0, 0, &[0x80, 0, 0, 0]),
        Reason::PROTOCOL_ERROR,
    );
    assert_eq!(
        kind,
        FrameErrorKind::ZeroWindowIncrement {
            stream_id: StreamId::ZERO
        }
    );
    let Frame::WindowUpdate(update) = decode(raw(WINDOW_UPDATE, 0, 0, &[0xff; 4])).unwrap() else {
        panic!("not WINDOW_UPDATE");
    };
    assert_eq!(update.increment, (1 << 31) - 1);
}

#[test]
fn s6_6_push_promise_promising_stream_zero_is_connection_protocol_error() {
    // The reserved bit is stripped first, so 0x8000_0000 promises stream 0.
    let kind = connection_error(
        raw(PUSH_PROMISE, flags::END_HEADERS, 1, &[0x80, 0, 0, 0, 0x82]),
        Reason::PROTOCOL_ERROR,
    );
    assert_eq!(kind, FrameErrorKind::PromisedIdZero);
    let Frame::PushPromise(promise) = decode(raw(
        PUSH_PROMISE,
        flags::END_HEADERS,
        1,
        &[0x80, 0, 0, 2, 0x82],
    ))
    .unwrap() else {
        panic!("not PUSH_PROMISE");
    };
    assert_eq!(promise.promised_id, StreamId::new(2));
    assert_eq!(&promise.fragment[..], &[0x82]);
}

#[test]
fn s4_2_push_promise_too_short_for_promised_id_is_connection_frame_size_error() {
    let kind = connection_error(
        raw(PUSH_PROMISE, flags::PADDED, 1, &[0, 0, 0, 2]),
        Reason::FRAME_SIZE_ERROR,
    );
    assert!(matches!(
        kind,
        FrameErrorKind::TooShort {
            len: 4,
            needed: 5,
            ..
        }
    ));
}

// §4.1, §5.5: what is ignored rather than rejected.

#[test]
fn s5_5_unknown_frame_types_decode_to_unknown() {
    let Frame::Unknown(unknown) = decode(raw(0x0a, 0xff, 0x8000_0003, b"alt")).unwrap() else {
        panic!("not Unknown");
    };
    assert_eq!(unknown.kind, 0x0a);
    assert_eq!(unknown.flags, 0xff);
    assert_eq!(unknown.stream_id, StreamId::new(3));
    assert_eq!(&unknown.payload[..], b"alt");
}

#[test]
fn s4_1_unknown_flags_are_ignored() {
    let Frame::Data(data) = decode(raw(DATA, 0xf6, 1, b"x")).unwrap() else {
        panic!("not DATA");
    };
    assert!(!data.end_stream && data.padding.is_none());
    assert_eq!(&data.payload[..], b"x");
    let Frame::Ping(ping) = decode(raw(PING, 0xfe, 0, &[0; 8])).unwrap() else {
        panic!("not PING");
    };
    assert!(!ping.ack);
    assert!(decode(raw(RST_STREAM, 0xff, 1, &[0; 4])).is_ok());
    assert!(decode(raw(WINDOW_UPDATE, 0xff, 1, &[0, 0, 0, 1])).is_ok());
}

#[test]
fn s4_1_reserved_stream_bit_is_ignored() {
    let frame = decode(raw(CONTINUATION, flags::END_HEADERS, 0x8000_0005, b"x")).unwrap();
    assert_eq!(frame.stream_id(), StreamId::new(5));
    // With only the reserved bit set, the stream is 0.
    connection_error(raw(DATA, 0, 0x8000_0000, b""), Reason::PROTOCOL_ERROR);
}

#[test]
fn incomplete_frames_consume_nothing() {
    let full = raw(DATA, 0, 1, b"hello");
    let mut decoder = FrameDecoder::default();
    for len in 0..full.len() {
        let mut buf = BytesMut::from(&full[..len]);
        assert_eq!(decoder.decode(&mut buf), Ok(None));
        assert_eq!(buf.len(), len);
    }
}
