//! Encoding then decoding any valid frame gives it back, however the bytes
//! are split on the way (RFC 9113 §4: frames are delimited only by their
//! length field).
#![allow(clippy::unwrap_used)]

use bytes::{Bytes, BytesMut};
use h2sim_proto::frame::{
    Continuation, Data, Frame, FrameDecoder, GoAway, Headers, MAX_FRAME_SIZE_LIMIT,
    MAX_WINDOW_SIZE, Ping, Priority, PrioritySpec, PushPromise, Reason, RstStream, Setting,
    Settings, StreamId, Unknown, WindowUpdate,
};
use proptest::collection::vec;
use proptest::prelude::*;

/// Payloads up to a few KiB; with padding and fixed fields every frame stays
/// under the default SETTINGS_MAX_FRAME_SIZE.
const MAX_PAYLOAD: usize = 4096;

fn config() -> ProptestConfig {
    // Failures are reported in the test output; nothing is written to disk.
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn stream() -> impl Strategy<Value = StreamId> {
    (1..=MAX_WINDOW_SIZE).prop_map(StreamId::new)
}

fn stream_or_zero() -> impl Strategy<Value = StreamId> {
    (0..=MAX_WINDOW_SIZE).prop_map(StreamId::new)
}

fn payload() -> impl Strategy<Value = Bytes> {
    vec(any::<u8>(), 0..MAX_PAYLOAD).prop_map(Bytes::from)
}

fn priority_spec() -> impl Strategy<Value = PrioritySpec> {
    (stream_or_zero(), any::<bool>(), any::<u8>()).prop_map(|(dependency, exclusive, weight)| {
        PrioritySpec {
            dependency,
            exclusive,
            weight,
        }
    })
}

fn setting() -> impl Strategy<Value = Setting> {
    prop_oneof![
        any::<u32>().prop_map(Setting::HeaderTableSize),
        any::<bool>().prop_map(Setting::EnablePush),
        any::<u32>().prop_map(Setting::MaxConcurrentStreams),
        (0..=MAX_WINDOW_SIZE).prop_map(Setting::InitialWindowSize),
        (16_384..=MAX_FRAME_SIZE_LIMIT).prop_map(Setting::MaxFrameSize),
        any::<u32>().prop_map(Setting::MaxHeaderListSize),
        any::<bool>().prop_map(Setting::EnableConnectProtocol),
        (any::<u16>(), any::<u32>())
            .prop_filter("known identifier", |(id, _)| !(1..=6).contains(id)
                && *id != 8)
            .prop_map(|(id, value)| Setting::Unknown { id, value }),
    ]
}

fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        (stream(), payload(), any::<bool>(), any::<Option<u8>>()).prop_map(
            |(stream_id, payload, end_stream, padding)| Frame::Data(Data {
                stream_id,
                payload,
                end_stream,
                padding
            })
        ),
        (
            stream(),
            payload(),
            any::<(bool, bool)>(),
            proptest::option::of(priority_spec()),
            any::<Option<u8>>()
        )
            .prop_filter("self-dependency", |(id, _, _, priority, _)| {
                priority.is_none_or(|p| p.dependency != *id)
            })
            .prop_map(
                |(stream_id, fragment, (end_stream, end_headers), priority, padding)| {
                    Frame::Headers(Headers {
                        stream_id,
                        fragment,
                        end_stream,
                        end_headers,
                        priority,
                        padding,
                    })
                }
            ),
        (stream(), priority_spec())
            .prop_filter("self-dependency", |(id, spec)| spec.dependency != *id)
            .prop_map(|(stream_id, spec)| Frame::Priority(Priority { stream_id, spec })),
        (stream(), any::<u32>()).prop_map(|(stream_id, code)| Frame::RstStream(RstStream {
            stream_id,
            reason: Reason(code)
        })),
        prop_oneof![
            Just(Settings {
                ack: true,
                values: Vec::new()
            }),
            vec(setting(), 0..12).prop_map(|values| Settings { ack: false, values }),
        ]
        .prop_map(Frame::Settings),
        (
            stream(),
            stream(),
            payload(),
            any::<bool>(),
            any::<Option<u8>>()
        )
            .prop_map(|(stream_id, promised_id, fragment, end_headers, padding)| {
                Frame::PushPromise(PushPromise {
                    stream_id,
                    promised_id,
                    fragment,
                    end_headers,
                    padding,
                })
            }),
        any::<(bool, [u8; 8])>().prop_map(|(ack, payload)| Frame::Ping(Ping { ack, payload })),
        (stream_or_zero(), any::<u32>(), payload()).prop_map(
            |(last_stream_id, code, debug_data)| Frame::GoAway(GoAway {
                last_stream_id,
                reason: Reason(code),
                debug_data
            })
        ),
        (stream_or_zero(), 1..=MAX_WINDOW_SIZE).prop_map(|(stream_id, increment)| {
            Frame::WindowUpdate(WindowUpdate {
                stream_id,
                increment,
            })
        }),
        (stream(), payload(), any::<bool>()).prop_map(|(stream_id, fragment, end_headers)| {
            Frame::Continuation(Continuation {
                stream_id,
                fragment,
                end_headers,
            })
        }),
        (10..=u8::MAX, any::<u8>(), stream_or_zero(), payload()).prop_map(
            |(kind, flags, stream_id, payload)| Frame::Unknown(Unknown {
                kind,
                flags,
                stream_id,
                payload
            })
        ),
    ]
}

fn encode_all(frames: &[Frame]) -> BytesMut {
    let mut wire = BytesMut::new();
    for frame in frames {
        frame.encode(&mut wire);
    }
    wire
}

/// Feeds `chunks` to a decoder one after the other, decoding all whole frames
/// after each, and checks nothing is left over.
fn decode_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Frame> {
    let mut decoder = FrameDecoder::default();
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
    }
    assert!(buf.is_empty(), "{} bytes left undecoded", buf.len());
    frames
}

/// Cuts `wire` into pieces of the given sizes, the last piece taking the rest.
fn split<'a>(wire: &'a [u8], sizes: &[usize]) -> Vec<&'a [u8]> {
    let mut pieces = Vec::new();
    let mut rest = wire;
    for &size in sizes {
        let (piece, tail) = rest.split_at(size.min(rest.len()));
        pieces.push(piece);
        rest = tail;
    }
    pieces.push(rest);
    pieces
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_frame_round_trips(frame in frame()) {
        let mut wire = encode_all(std::slice::from_ref(&frame));
        let decoded = FrameDecoder::default().decode(&mut wire).unwrap();
        prop_assert_eq!(decoded, Some(frame));
        prop_assert!(wire.is_empty());
    }

    #[test]
    fn frames_split_at_random_points_decode_the_same(
        frames in vec(frame(), 1..8),
        sizes in vec(0..2048usize, 0..40),
    ) {
        let wire = encode_all(&frames);
        prop_assert_eq!(decode_chunks(split(&wire, &sizes)), frames);
    }
}

/// One small frame of each kind, with padding and priority.
fn small_frames() -> Vec<Frame> {
    let s1 = StreamId::new(1);
    vec![
        Frame::Settings(Settings {
            ack: false,
            values: vec![Setting::EnablePush(false), Setting::MaxFrameSize(1 << 20)],
        }),
        Frame::Headers(Headers {
            stream_id: s1,
            fragment: Bytes::from_static(b"\x82\x86"),
            end_stream: false,
            end_headers: false,
            priority: Some(PrioritySpec {
                dependency: StreamId::ZERO,
                exclusive: true,
                weight: 41,
            }),
            padding: Some(2),
        }),
        Frame::Continuation(Continuation {
            stream_id: s1,
            fragment: Bytes::from_static(b"\x84"),
            end_headers: true,
        }),
        Frame::Data(Data {
            stream_id: s1,
            payload: Bytes::from_static(b"body"),
            end_stream: true,
            padding: Some(1),
        }),
        Frame::Priority(Priority {
            stream_id: StreamId::new(3),
            spec: PrioritySpec {
                dependency: s1,
                exclusive: false,
                weight: 0,
            },
        }),
        Frame::RstStream(RstStream {
            stream_id: StreamId::new(3),
            reason: Reason::CANCEL,
        }),
        Frame::PushPromise(PushPromise {
            stream_id: s1,
            promised_id: StreamId::new(2),
            fragment: Bytes::from_static(b"\x82"),
            end_headers: true,
            padding: None,
        }),
        Frame::Ping(Ping {
            ack: true,
            payload: *b"pingpong",
        }),
        Frame::WindowUpdate(WindowUpdate {
            stream_id: StreamId::ZERO,
            increment: 1,
        }),
        Frame::Unknown(Unknown {
            kind: 0x10,
            flags: 0x3,
            stream_id: s1,
            payload: Bytes::from_static(b"u=1"),
        }),
        Frame::GoAway(GoAway {
            last_stream_id: s1,
            reason: Reason::NO_ERROR,
            debug_data: Bytes::from_static(b"bye"),
        }),
    ]
}

#[test]
fn small_frames_split_at_every_byte_boundary_decode_the_same() {
    let frames = small_frames();
    let wire = encode_all(&frames);
    for at in 0..=wire.len() {
        let (head, tail) = wire.split_at(at);
        assert_eq!(decode_chunks([head, tail]), frames, "split at {at}");
    }
}

#[test]
fn small_frames_fed_one_byte_at_a_time_decode_the_same() {
    let frames = small_frames();
    let wire = encode_all(&frames);
    assert_eq!(decode_chunks(wire.chunks(1)), frames);
}
