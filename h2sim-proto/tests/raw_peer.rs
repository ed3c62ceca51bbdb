//! The raw peer's frame reader fails the test on output it cannot decode,
//! so the checks built on it ("no GOAWAY", say) cannot pass on garbage.

mod support;

use bytes::BytesMut;
use h2sim_proto::frame::FrameDecoder;

/// A SETTINGS frame whose length is not a multiple of 6 is a
/// FRAME_SIZE_ERROR (RFC 9113 §6.5): one good PING before it is kept, then
/// the bad frame fails, naming its bytes.
#[test]
#[should_panic(expected = "undecodable frame after 1 good ones")]
fn an_undecodable_frame_fails_the_test() {
    let mut bytes = BytesMut::from(
        &[
            0, 0, 8, 0x6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, // PING
            0, 0, 3, 0x4, 0, 0, 0, 0, 0, 1, 2, 3, // SETTINGS, length 3
        ][..],
    );
    support::decode_frames(&mut FrameDecoder::default(), &mut bytes);
}

/// Whole frames decode; a partial one stays for the next read.
#[test]
fn whole_frames_decode_and_a_partial_one_waits() {
    let mut bytes =
        BytesMut::from(&[0, 0, 8, 0x6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0][..]);
    let frames = support::decode_frames(&mut FrameDecoder::default(), &mut bytes);
    assert_eq!(frames.len(), 1);
    assert_eq!(&bytes[..], [0, 0]);
}
