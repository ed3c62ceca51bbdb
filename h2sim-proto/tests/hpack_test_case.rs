//! Interoperability against the hpack-test-case corpus: our decoder on
//! every other implementation's output, our encoder on the corpus's header
//! lists (checked by our decoder and by the `hpack` crate as an oracle),
//! and our compression against nghttp2's.

#![allow(clippy::unwrap_used)]

#[path = "hpack_corpus.rs"]
mod corpus;

use bytes::{Bytes, BytesMut};
use corpus::{RAW_DATA, Story};
use h2sim_proto::hpack::{Decoder, Encoder, HeaderField};

fn pairs(fields: &[HeaderField]) -> Vec<(&[u8], &[u8])> {
    fields.iter().map(|f| (&f.name[..], &f.value[..])).collect()
}

fn decode_story(story: &Story) {
    let mut decoder = Decoder::new(4096);
    for (seqno, case) in story.cases.iter().enumerate() {
        if let Some(size) = case.header_table_size {
            decoder.set_max_table_size(size);
        }
        let wire = case.wire.as_ref().unwrap();
        let mut out = Vec::new();
        decoder
            .decode(wire, &mut out)
            .unwrap_or_else(|e| panic!("{} case {seqno}: {e}", story.name));
        assert_eq!(
            pairs(&out),
            pairs(&case.headers),
            "{} case {seqno}",
            story.name
        );
    }
}

#[test]
fn every_encoders_stories_decode() {
    let dirs = corpus::encoder_directories();
    assert!(
        dirs.len() >= 14,
        "expected every encoder's directory, found {dirs:?}"
    );
    let mut cases = 0;
    for dir in &dirs {
        for story in corpus::load(dir) {
            decode_story(&story);
            cases += story.cases.len();
        }
    }
    assert!(cases > 40_000, "only {cases} cases decoded");
}

/// Encodes `stories` with our encoder and checks each block with our
/// decoder and, if `oracle`, with the `hpack` crate. The table size changes
/// to `size` before the first block and, if given, to each of `mid_story`
/// (as successive SETTINGS) half-way through.
fn round_trip(stories: &[Story], size: usize, mid_story: &[usize], oracle: bool) {
    for story in stories {
        let mut encoder = Encoder::new();
        let mut decoder = Decoder::new(4096);
        let mut oracle_decoder = hpack::Decoder::new();
        let resize = |encoder: &mut Encoder, decoder: &mut Decoder, size| {
            // The peer's encoder learns of the new limit from our SETTINGS;
            // our decoder enforces it once they are acknowledged, which in
            // this lock-step simulation is before the next block either way.
            encoder.set_max_table_size(size);
            decoder.set_max_table_size(size);
        };
        if size != 4096 {
            resize(&mut encoder, &mut decoder, size);
        }
        for (seqno, case) in story.cases.iter().enumerate() {
            if seqno == story.cases.len() / 2 {
                for &size in mid_story {
                    resize(&mut encoder, &mut decoder, size);
                }
            }
            let mut block = BytesMut::new();
            encoder.encode(&case.headers, &mut block);
            let block = block.freeze();
            let context = format!(
                "{} case {seqno}, table size {size}/{mid_story:?}",
                story.name
            );

            let mut out = Vec::new();
            decoder
                .decode(&block, &mut out)
                .unwrap_or_else(|e| panic!("{context}: {e}"));
            assert_eq!(pairs(&out), pairs(&case.headers), "{context}");
            assert!(
                encoder.table_entries().eq(decoder.table_entries()),
                "{context}: tables diverged"
            );
            assert_eq!(encoder.table_size(), decoder.table_size(), "{context}");

            if oracle {
                let oracle_out = oracle_decoder
                    .decode(&block)
                    .unwrap_or_else(|e| panic!("{context}: hpack crate: {e:?}"));
                let expected: Vec<(Vec<u8>, Vec<u8>)> = case
                    .headers
                    .iter()
                    .map(|f| (f.name.to_vec(), f.value.to_vec()))
                    .collect();
                assert_eq!(oracle_out, expected, "{context}: hpack crate");
            }
        }
    }
}

#[test]
fn our_encoder_round_trips_raw_data() {
    let stories = corpus::load(RAW_DATA);
    for size in [0, 256, 4096, 16384] {
        round_trip(&stories, size, &[], false);
    }
}

#[test]
fn our_encoder_round_trips_mid_story_resizes() {
    let stories = corpus::load(RAW_DATA);
    // Shrink, with a dip below the final size between two blocks.
    round_trip(&stories, 4096, &[512, 2048], false);
    // Grow from an empty table.
    round_trip(&stories, 0, &[8192], false);
    // Shrink to nothing.
    round_trip(&stories, 16384, &[0], false);
}

/// The `hpack` crate (only ever fed our valid output: it panics on some
/// invalid input) agrees on what our blocks mean. It is slow to decode
/// Huffman strings in debug builds, so this covers one configuration with
/// resizes rather than all of the above.
#[test]
fn hpack_crate_decodes_our_output() {
    round_trip(&corpus::load(RAW_DATA), 4096, &[512, 2048], true);
}

#[test]
fn compression_at_least_as_good_as_nghttp2() {
    let mut ours = 0;
    for story in corpus::load(RAW_DATA) {
        let mut encoder = Encoder::new();
        for case in &story.cases {
            let mut block = BytesMut::new();
            encoder.encode(&case.headers, &mut block);
            ours += block.len();
        }
    }
    let nghttp2 = corpus::wire_total(&corpus::load("nghttp2"));
    assert!(
        ours <= nghttp2,
        "our encoding takes {ours} bytes, nghttp2's {nghttp2}"
    );
}

#[test]
fn decoder_slices_raw_strings_from_the_block() {
    // haskell-http2-linear never Huffman-codes, so its first block's
    // literal values must be slices of the block, not copies.
    let stories = corpus::load("haskell-http2-linear");
    let block: &Bytes = stories[0].cases[0].wire.as_ref().unwrap();
    let mut out = Vec::new();
    Decoder::new(4096).decode(block, &mut out).unwrap();
    let range = block.as_ptr_range();
    let literal = out
        .iter()
        .find(|f| range.contains(&f.value.as_ptr()))
        .expect("haskell-http2-linear sends literals raw");
    assert!(!literal.value.is_empty());
}
