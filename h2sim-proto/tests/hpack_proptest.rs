//! Property tests: Encoder → Decoder round trips across many blocks with
//! table resizes in between, and a decoder fed arbitrary or mangled bytes
//! never panics. (Integer and Huffman properties are unit tests next to
//! that code, which is not public.)

#![allow(clippy::unwrap_used)]

use bytes::{Bytes, BytesMut};
use h2sim_proto::hpack::{
    Decoder, Encoder, HeaderField, IndexingPolicy, MAX_ENCODER_TABLE_SIZE, MIN_INDEXED_COOKIE_LEN,
};
use proptest::prelude::*;

/// Names biased towards ones that hit the static table, a few repeated
/// custom ones that hit the dynamic table, and arbitrary octets.
fn name() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        prop::sample::select(vec![
            ":method",
            ":path",
            ":status",
            "accept-encoding",
            "authorization",
            "cookie",
            "proxy-authorization",
            "content-length",
            "age",
            "set-cookie",
            "x-custom",
            "x-trace",
        ])
        .prop_map(|s: &'static str| Bytes::from_static(s.as_bytes())),
        prop::collection::vec(any::<u8>(), 0..12).prop_map(Bytes::from),
    ]
}

fn value() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "GET",
            "/",
            "200",
            "gzip, deflate",
            "abc",
            "a-longer-value-0123456789"
        ])
        .prop_map(|s: &'static str| Bytes::from_static(s.as_bytes())),
        prop::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from),
        // Long enough to be evicted quickly, or not to fit small tables.
        prop::collection::vec(any::<u8>(), 100..300).prop_map(Bytes::from),
    ]
}

fn field() -> impl Strategy<Value = HeaderField> {
    (name(), value(), prop::bool::weighted(0.1)).prop_map(|(name, value, sensitive)| HeaderField {
        name,
        value,
        sensitive,
    })
}

/// A block's fields and the table sizes (SETTINGS_HEADER_TABLE_SIZE
/// values) taking effect before it.
fn blocks() -> impl Strategy<Value = Vec<(Vec<usize>, Vec<HeaderField>)>> {
    let size = prop::sample::select(vec![0, 1, 64, 100, 256, 1000, 4096, 8192, 100_000]);
    let resizes = prop_oneof![
        6 => Just(Vec::new()),
        1 => prop::collection::vec(size, 1..4),
    ];
    prop::collection::vec((resizes, prop::collection::vec(field(), 0..12)), 1..12)
}

/// The sensitivity the decoder reports: requested, or imposed by the
/// default policy (§7.1.3).
fn expected_sensitive(f: &HeaderField, policy: IndexingPolicy) -> bool {
    let is = |name: &str| f.name.eq_ignore_ascii_case(name.as_bytes());
    f.sensitive
        || (policy == IndexingPolicy::Selective
            && (is("authorization")
                || is("proxy-authorization")
                || (is("cookie") && f.value.len() < MIN_INDEXED_COOKIE_LEN)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn round_trip(
        blocks in blocks(),
        policy in prop::sample::select(vec![IndexingPolicy::Selective, IndexingPolicy::All]),
        huffman: bool,
    ) {
        let mut encoder = Encoder::new();
        encoder.set_indexing_policy(policy);
        encoder.set_huffman(huffman);
        let mut decoder = Decoder::new(4096);
        decoder.set_max_header_list_size(usize::MAX);
        for (i, (resizes, fields)) in blocks.iter().enumerate() {
            for &size in resizes {
                // As SETTINGS would: the peer's encoder learns the new
                // limit, and our decoder enforces it once acknowledged.
                encoder.set_max_table_size(size);
                decoder.set_max_table_size(size);
            }
            let mut block = BytesMut::new();
            encoder.encode(fields, &mut block);
            let mut out = Vec::new();
            decoder.decode(&block.freeze(), &mut out).unwrap();
            let expected: Vec<HeaderField> = fields
                .iter()
                .map(|f| HeaderField { sensitive: expected_sensitive(f, policy), ..f.clone() })
                .collect();
            prop_assert_eq!(out, expected, "block {}", i);
            prop_assert!(encoder.table_entries().eq(decoder.table_entries()), "block {}", i);
            prop_assert_eq!(encoder.table_size(), decoder.table_size());
            prop_assert!(encoder.table_capacity() <= MAX_ENCODER_TABLE_SIZE);
            prop_assert!(decoder.table_size() <= decoder.table_capacity());
        }
    }

    /// Heads repeat on a connection, whole or in part, and the encoder
    /// and decoder reuse their last block's work (RFC 7541 §2.3.2: the same
    /// fields under the same table encode and decode alike): an encoder
    /// and decoder that forget their last block before each one (`trim`)
    /// must produce the very same octets and fields.
    #[test]
    fn repeated_blocks_match_fresh_work(
        pool in prop::collection::vec(prop::collection::vec(field(), 0..8), 1..4),
        picks in prop::collection::vec(
            (0usize..4, 0usize..8, prop::bool::weighted(0.2), prop::bool::weighted(0.1)),
            1..40,
        ),
        policy in prop::sample::select(vec![IndexingPolicy::Selective, IndexingPolicy::All]),
    ) {
        let (mut memo_enc, mut fresh_enc) = (Encoder::new(), Encoder::new());
        memo_enc.set_indexing_policy(policy);
        fresh_enc.set_indexing_policy(policy);
        let (mut memo_dec, mut fresh_dec) = (Decoder::new(4096), Decoder::new(4096));
        for (i, &(pick, cut, tweak, resize)) in picks.iter().enumerate() {
            // A pooled block, or its first `cut` fields (blocks that share a
            // prefix with the last one), or with one value changed in
            // place (same name, same length).
            let whole = &pool[pick % pool.len()];
            let mut fields = if cut < whole.len() { whole[..cut].to_vec() } else { whole.clone() };
            if tweak && !fields.is_empty() {
                let at = cut % fields.len();
                let value: Vec<u8> = fields[at].value.iter().map(|b| b.wrapping_add(1)).collect();
                fields[at].value = Bytes::from(value);
            }
            if resize {
                for e in [&mut memo_enc, &mut fresh_enc] {
                    e.set_max_table_size(256);
                }
                for d in [&mut memo_dec, &mut fresh_dec] {
                    d.set_max_table_size(256);
                }
            }
            fresh_enc.trim();
            let (mut a, mut b) = (BytesMut::new(), BytesMut::new());
            memo_enc.encode(&fields, &mut a);
            fresh_enc.encode(&fields, &mut b);
            prop_assert_eq!(&a[..], &b[..], "block {}", i);
            let block = a.freeze();
            fresh_dec.trim();
            let (mut x, mut y) = (Vec::new(), Vec::new());
            let rx = memo_dec.decode(&block, &mut x);
            let ry = fresh_dec.decode(&block, &mut y);
            prop_assert_eq!(rx, ry, "block {}", i);
            prop_assert_eq!(x, y, "block {}", i);
        }
    }

    #[test]
    fn arbitrary_blocks_never_panic(
        blocks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 1..8),
        limit in prop::sample::select(vec![0, 100, 4096]),
        list_limit in prop::sample::select(vec![0, 64, usize::MAX]),
    ) {
        let mut decoder = Decoder::new(limit);
        decoder.set_max_header_list_size(list_limit);
        for block in blocks {
            let mut out = Vec::new();
            // Keep going even after fatal errors: misuse must not panic either.
            if decoder.decode(&Bytes::from(block), &mut out).is_ok() {
                prop_assert!(out.iter().map(HeaderField::size).sum::<usize>() <= list_limit);
            }
            prop_assert!(decoder.table_size() <= decoder.table_capacity());
        }
    }

    #[test]
    fn mangled_blocks_never_panic(
        fields in prop::collection::vec(field(), 1..10),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut encoder = Encoder::new();
        let mut block = BytesMut::new();
        encoder.encode(&fields, &mut block);
        let mut block = block.to_vec();
        for (at, byte) in edits {
            let at = at.index(block.len());
            block[at] = byte;
        }
        let keep = cut.index(block.len() + 1);
        block.truncate(keep);
        let mut out = Vec::new();
        let _ = Decoder::new(4096).decode(&Bytes::from(block), &mut out);
    }
}

#[test]
fn default_policy_never_indexes_credentials() {
    let fields = [
        HeaderField::new("authorization", "Basic dXNlcjpwYXNz"),
        HeaderField::new("proxy-authorization", "Basic dXNlcjpwYXNz"),
        HeaderField::new("cookie", "id=1234"),
        HeaderField::new("cookie", "session=0123456789abcdef0123456789"),
        HeaderField::new("x-api-key", "secret").sensitive(),
    ];
    let mut encoder = Encoder::new();
    let mut decoder = Decoder::new(4096);
    let mut block = BytesMut::new();
    encoder.encode(&fields, &mut block);
    let mut out = Vec::new();
    decoder.decode(&block.freeze(), &mut out).unwrap();
    let sensitive: Vec<bool> = out.iter().map(|f| f.sensitive).collect();
    assert_eq!(sensitive, [true, true, true, false, true]);
    // Only the long cookie went into the table.
    let names: Vec<&Bytes> = decoder.table_entries().map(|(n, _)| n).collect();
    assert_eq!(names, [&Bytes::from_static(b"cookie")]);
}

#[test]
fn size_updates_signal_smallest_then_final() {
    let mut encoder = Encoder::new();
    let mut block = BytesMut::new();
    encoder.encode(&[HeaderField::new("x", "1")], &mut block);
    encoder.set_max_table_size(100);
    encoder.set_max_table_size(3000);
    let mut block = BytesMut::new();
    encoder.encode([], &mut block);
    // 100 then 3000, each with the 001 pattern and a 5-bit prefix.
    assert_eq!(&block[..], b"\x3f\x45\x3f\x99\x17");
    // Setting the same size again changes nothing, so announces nothing.
    encoder.set_max_table_size(3000);
    let mut block = BytesMut::new();
    encoder.encode([], &mut block);
    assert!(block.is_empty());
    // The peer's limit is capped to what the encoder is willing to use.
    encoder.set_max_table_size(usize::MAX);
    assert_eq!(encoder.table_capacity(), MAX_ENCODER_TABLE_SIZE);
}
