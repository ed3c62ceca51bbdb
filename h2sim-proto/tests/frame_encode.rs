//! Encoders produce the wire layout of RFC 9113 §6, split field blocks
//! correctly (§4.3), and the decoder hands out payloads without copying.
#![allow(clippy::unwrap_used)]

use bytes::{BufMut, Bytes, BytesMut};
use h2sim_proto::frame::{
    Continuation, DEFAULT_MAX_FRAME_SIZE, Data, Frame, FrameDecoder, GoAway, Headers, Ping,
    PrioritySpec, PushPromise, Reason, RstStream, Setting, Settings, StreamId, Unknown,
    WindowUpdate, encode_data_head, encode_headers, encode_push_promise,
};

fn encoded(frame: impl Into<Frame>) -> Vec<u8> {
    let mut buf = BytesMut::new();
    frame.into().encode(&mut buf);
    buf.to_vec()
}

fn decode_all(mut wire: BytesMut, max_frame_size: u32) -> Vec<Frame> {
    let mut decoder = FrameDecoder::new(max_frame_size);
    let mut frames = Vec::new();
    while let Some(frame) = decoder.decode(&mut wire).unwrap() {
        frames.push(frame);
    }
    assert!(wire.is_empty());
    frames
}

// Wire layouts.

#[test]
fn s6_1_padded_data_layout() {
    let data = Data {
        stream_id: StreamId::new(1),
        payload: Bytes::from_static(b"ab"),
        end_stream: true,
        padding: Some(3),
    };
    assert_eq!(
        encoded(data),
        [
            0,
            0,
            6,
            0x0,
            0x08 | 0x01,
            0,
            0,
            0,
            1,
            3,
            b'a',
            b'b',
            0,
            0,
            0
        ]
    );
}

#[test]
fn s6_2_headers_with_padding_and_priority_layout() {
    let headers = Headers {
        stream_id: StreamId::new(3),
        fragment: Bytes::from_static(&[0x82]),
        end_stream: true,
        end_headers: true,
        priority: Some(PrioritySpec {
            dependency: StreamId::new(1),
            exclusive: true,
            weight: 15,
        }),
        padding: Some(1),
    };
    assert_eq!(
        encoded(headers),
        [
            0,
            0,
            8,
            0x1,
            0x20 | 0x08 | 0x04 | 0x01,
            0,
            0,
            0,
            3, // header
            1,
            0x80,
            0,
            0,
            1,
            15,
            0x82,
            0, // pad length, priority, fragment, padding
        ]
    );
}

#[test]
fn s6_3_to_s6_10_fixed_layouts() {
    let s1 = StreamId::new(1);
    assert_eq!(
        encoded(RstStream {
            stream_id: s1,
            reason: Reason::CANCEL
        }),
        [0, 0, 4, 0x3, 0, 0, 0, 0, 1, 0, 0, 0, 8]
    );
    assert_eq!(
        encoded(Settings {
            ack: false,
            values: vec![Setting::MaxFrameSize(1 << 14)]
        }),
        [0, 0, 6, 0x4, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0x40, 0]
    );
    assert_eq!(
        encoded(Settings {
            ack: true,
            values: Vec::new()
        }),
        [0, 0, 0, 0x4, 0x1, 0, 0, 0, 0]
    );
    assert_eq!(
        encoded(PushPromise {
            stream_id: s1,
            promised_id: StreamId::new(2),
            fragment: Bytes::from_static(&[0x82]),
            end_headers: true,
            padding: Some(0),
        }),
        [0, 0, 6, 0x5, 0x04 | 0x08, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0x82]
    );
    assert_eq!(
        encoded(Ping {
            ack: true,
            payload: [1, 2, 3, 4, 5, 6, 7, 8]
        }),
        [0, 0, 8, 0x6, 0x1, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
    );
    assert_eq!(
        encoded(GoAway {
            last_stream_id: StreamId::new(7),
            reason: Reason::PROTOCOL_ERROR,
            debug_data: Bytes::from_static(b"x"),
        }),
        [0, 0, 9, 0x7, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 1, b'x']
    );
    assert_eq!(
        encoded(WindowUpdate {
            stream_id: s1,
            increment: 0x7fff_ffff
        }),
        [0, 0, 4, 0x8, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff]
    );
    assert_eq!(
        encoded(Continuation {
            stream_id: s1,
            fragment: Bytes::from_static(&[0x84]),
            end_headers: false
        }),
        [0, 0, 1, 0x9, 0, 0, 0, 0, 1, 0x84]
    );
    assert_eq!(
        encoded(Unknown {
            kind: 0xa,
            flags: 0xff,
            stream_id: s1,
            payload: Bytes::new()
        }),
        [0, 0, 0, 0xa, 0xff, 0, 0, 0, 1]
    );
}

#[test]
fn data_head_then_caller_payload_decodes_as_data() {
    let body = Bytes::from(vec![7; 1000]);
    let mut wire = BytesMut::new();
    encode_data_head(StreamId::new(5), 1000, true, &mut wire);
    assert_eq!(wire.len(), 9);
    wire.put_slice(&body);
    assert_eq!(
        decode_all(wire, DEFAULT_MAX_FRAME_SIZE),
        [Frame::Data(Data {
            stream_id: StreamId::new(5),
            payload: body,
            end_stream: true,
            padding: None
        })]
    );
}

// Field block splitting, §4.3.

/// (kind, payload length, END_STREAM, END_HEADERS) of one frame.
type Summary = (&'static str, usize, bool, bool);

/// The [`Summary`] of each frame, and the reassembled block.
fn summarize(frames: &[Frame]) -> (Vec<Summary>, Vec<u8>) {
    let mut block = Vec::new();
    let summary = frames
        .iter()
        .map(|frame| match frame {
            Frame::Headers(h) => {
                assert!(h.priority.is_none() && h.padding.is_none());
                block.extend_from_slice(&h.fragment);
                ("HEADERS", h.fragment.len(), h.end_stream, h.end_headers)
            }
            Frame::PushPromise(p) => {
                assert_eq!(p.promised_id, StreamId::new(4));
                block.extend_from_slice(&p.fragment);
                ("PUSH_PROMISE", p.fragment.len() + 4, false, p.end_headers)
            }
            Frame::Continuation(c) => {
                block.extend_from_slice(&c.fragment);
                ("CONTINUATION", c.fragment.len(), false, c.end_headers)
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    (summary, block)
}

fn block(len: usize) -> Vec<u8> {
    (0..len).map(|i| i as u8).collect()
}

fn headers_frames(len: usize, end_stream: bool, max: u32) -> Vec<Summary> {
    let block = block(len);
    let mut wire = BytesMut::new();
    encode_headers(StreamId::new(1), &block, end_stream, max, &mut wire);
    let frames = decode_all(wire, max);
    assert!(frames.iter().all(|f| f.stream_id() == StreamId::new(1)));
    let (summary, reassembled) = summarize(&frames);
    assert_eq!(reassembled, block);
    summary
}

#[test]
fn encode_headers_empty_block_is_one_headers_frame() {
    assert_eq!(
        headers_frames(0, true, 16_384),
        [("HEADERS", 0, true, true)]
    );
}

#[test]
fn encode_headers_one_byte() {
    assert_eq!(
        headers_frames(1, false, 16_384),
        [("HEADERS", 1, false, true)]
    );
}

#[test]
fn encode_headers_exactly_max_fits_one_frame() {
    assert_eq!(
        headers_frames(16_384, true, 16_384),
        [("HEADERS", 16_384, true, true)]
    );
}

#[test]
fn encode_headers_max_plus_one_needs_a_continuation() {
    assert_eq!(
        headers_frames(16_385, true, 16_384),
        [
            ("HEADERS", 16_384, true, false),
            ("CONTINUATION", 1, false, true)
        ]
    );
}

#[test]
fn encode_headers_three_times_max() {
    assert_eq!(
        headers_frames(3 * 16_384, false, 16_384),
        [
            ("HEADERS", 16_384, false, false),
            ("CONTINUATION", 16_384, false, false),
            ("CONTINUATION", 16_384, false, true),
        ]
    );
}

#[test]
fn encode_headers_honours_small_frame_sizes() {
    assert_eq!(
        headers_frames(25, true, 10),
        [
            ("HEADERS", 10, true, false),
            ("CONTINUATION", 10, false, false),
            ("CONTINUATION", 5, false, true),
        ]
    );
}

fn push_promise_frames(len: usize, max: u32) -> Vec<Summary> {
    let block = block(len);
    let mut wire = BytesMut::new();
    encode_push_promise(StreamId::new(1), StreamId::new(4), &block, max, &mut wire);
    let (summary, reassembled) = summarize(&decode_all(wire, max));
    assert_eq!(reassembled, block);
    summary
}

#[test]
fn encode_push_promise_counts_the_promised_id_against_the_frame_size() {
    assert_eq!(
        push_promise_frames(0, 16_384),
        [("PUSH_PROMISE", 4, false, true)]
    );
    assert_eq!(
        push_promise_frames(16_380, 16_384),
        [("PUSH_PROMISE", 16_384, false, true)]
    );
    assert_eq!(
        push_promise_frames(16_381, 16_384),
        [
            ("PUSH_PROMISE", 16_384, false, false),
            ("CONTINUATION", 1, false, true)
        ]
    );
    assert_eq!(
        push_promise_frames(3 * 16_384, 16_384),
        [
            ("PUSH_PROMISE", 16_384, false, false),
            ("CONTINUATION", 16_384, false, false),
            ("CONTINUATION", 16_384, false, false),
            ("CONTINUATION", 4, false, true),
        ]
    );
}

// Zero copy.

/// Whether `inner` lies entirely inside the memory of `outer`.
fn points_into(inner: &[u8], outer: (usize, usize)) -> bool {
    let start = inner.as_ptr() as usize;
    !inner.is_empty() && start >= outer.0 && start + inner.len() <= outer.1
}

#[test]
fn decoded_payloads_are_slices_of_the_input_buffer() {
    let mut wire = BytesMut::new();
    Frame::from(Data {
        stream_id: StreamId::new(1),
        payload: Bytes::from(vec![0xab; 3000]),
        end_stream: false,
        padding: Some(10),
    })
    .encode(&mut wire);
    encode_headers(
        StreamId::new(3),
        &[0x82; 100],
        true,
        DEFAULT_MAX_FRAME_SIZE,
        &mut wire,
    );
    Frame::from(GoAway {
        last_stream_id: StreamId::new(3),
        reason: Reason::NO_ERROR,
        debug_data: Bytes::from_static(b"debug"),
    })
    .encode(&mut wire);
    let input = (wire.as_ptr() as usize, wire.as_ptr() as usize + wire.len());

    let frames = decode_all(wire, DEFAULT_MAX_FRAME_SIZE);
    let [
        Frame::Data(data),
        Frame::Headers(headers),
        Frame::GoAway(goaway),
    ] = &frames[..]
    else {
        panic!("unexpected frames {frames:?}");
    };
    assert_eq!(data.payload.len(), 3000);
    assert!(points_into(&data.payload, input), "DATA payload was copied");
    assert!(
        points_into(&headers.fragment, input),
        "HEADERS fragment was copied"
    );
    assert!(
        points_into(&goaway.debug_data, input),
        "GOAWAY debug data was copied"
    );
}
