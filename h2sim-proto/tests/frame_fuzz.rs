//! Whatever a peer sends, the decoder neither panics nor stalls: every frame
//! it returns or skips consumes at least a header, and it stops on missing
//! input or a connection error.
#![allow(clippy::unwrap_used)]

use bytes::{BufMut, BytesMut};
use h2sim_proto::frame::{
    DEFAULT_MAX_FRAME_SIZE, ErrorScope, FrameDecoder, FrameKind, HEADER_LEN, Head, StreamId,
};
use proptest::collection::vec;
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Decodes `input` until the decoder wants more bytes or reports a connection
/// error, checking progress on every step.
fn drain(input: &[u8], max_frame_size: u32) {
    let mut decoder = FrameDecoder::new(max_frame_size);
    let mut buf = BytesMut::from(input);
    loop {
        let before = buf.len();
        match decoder.decode(&mut buf) {
            Ok(Some(_)) => assert!(before - buf.len() >= HEADER_LEN, "no progress"),
            Ok(None) => {
                assert_eq!(buf.len(), before, "consumed without a frame");
                return;
            }
            Err(err) => {
                assert!(!err.to_string().is_empty());
                assert_eq!(err.reason, err.kind.reason());
                if err.scope == ErrorScope::Connection {
                    return;
                }
                assert!(
                    before - buf.len() >= HEADER_LEN,
                    "stream error without progress"
                );
            }
        }
    }
}

/// A frame with a header that matches its payload length, so decoding gets
/// past framing into each type's own checks; kinds 0..=11 cover all known
/// types and some unknown ones.
fn plausible_frame() -> impl Strategy<Value = Vec<u8>> {
    (0..=11u8, any::<u8>(), 0..16u32, vec(any::<u8>(), 0..64)).prop_map(
        |(kind, flags, stream, payload)| {
            let mut buf = BytesMut::new();
            Head {
                len: u32::try_from(payload.len()).unwrap(),
                kind: FrameKind::from(kind),
                flags,
                stream_id: StreamId::new(stream),
            }
            .encode(&mut buf);
            buf.put_slice(&payload);
            buf.to_vec()
        },
    )
}

proptest! {
    #![proptest_config(config(4000))]

    #[test]
    fn arbitrary_bytes_never_panic(input in vec(any::<u8>(), 0..2048)) {
        drain(&input, DEFAULT_MAX_FRAME_SIZE);
        drain(&input, 64);
    }

    #[test]
    fn plausible_frames_then_garbage_never_panic(
        frames in vec(plausible_frame(), 0..24),
        garbage in vec(any::<u8>(), 0..256),
    ) {
        let mut input = frames.concat();
        input.extend_from_slice(&garbage);
        drain(&input, DEFAULT_MAX_FRAME_SIZE);
        drain(&input, 32);
    }
}
