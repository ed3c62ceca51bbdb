//! HPACK throughput on the hpack-test-case corpus.
//!
//! - decode: every `nghttp2` story (3384 blocks, fresh decoder per story),
//!   reported per wire byte and per decoded header field;
//! - encode: every `raw-data` story (the same header lists, fresh encoder
//!   per story), reported per raw octet (name + value) and per field.
//!
//! Run with `cargo bench -p h2sim-proto --bench hpack`.

#![allow(clippy::unwrap_used)]

#[path = "../tests/hpack_corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::time::Duration;

use bytes::BytesMut;
use corpus::Story;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use h2sim_proto::hpack::{Decoder, Encoder, HeaderField};

fn decode_all(stories: &[Story], out: &mut Vec<HeaderField>) {
    for story in stories {
        let mut decoder = Decoder::new(4096);
        for case in &story.cases {
            if let Some(size) = case.header_table_size {
                decoder.set_max_table_size(size);
            }
            out.clear();
            decoder.decode(case.wire.as_ref().unwrap(), out).unwrap();
            black_box(&*out);
        }
    }
}

fn encode_all(stories: &[Story], dst: &mut BytesMut) {
    for story in stories {
        let mut encoder = Encoder::new();
        for case in &story.cases {
            dst.clear();
            encoder.encode(&case.headers, dst);
            black_box(&*dst);
        }
    }
}

fn field_count(stories: &[Story]) -> u64 {
    stories
        .iter()
        .flat_map(|s| &s.cases)
        .map(|c| c.headers.len() as u64)
        .sum()
}

fn bench(c: &mut Criterion) {
    let nghttp2 = corpus::load("nghttp2");
    let raw = corpus::load(corpus::RAW_DATA);
    let wire_bytes = corpus::wire_total(&nghttp2) as u64;
    let raw_bytes: u64 = raw
        .iter()
        .flat_map(|s| &s.cases)
        .flat_map(|c| &c.headers)
        .map(|f| (f.name.len() + f.value.len()) as u64)
        .sum();

    let mut group = c.benchmark_group("hpack");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    let mut out = Vec::new();
    group.throughput(Throughput::Bytes(wire_bytes));
    group.bench_function("decode nghttp2 stories (wire bytes)", |b| {
        b.iter(|| decode_all(&nghttp2, &mut out));
    });
    group.throughput(Throughput::Elements(field_count(&nghttp2)));
    group.bench_function("decode nghttp2 stories (header fields)", |b| {
        b.iter(|| decode_all(&nghttp2, &mut out));
    });
    let mut dst = BytesMut::new();
    group.throughput(Throughput::Bytes(raw_bytes));
    group.bench_function("encode raw-data stories (raw bytes)", |b| {
        b.iter(|| encode_all(&raw, &mut dst));
    });
    group.throughput(Throughput::Elements(field_count(&raw)));
    group.bench_function("encode raw-data stories (header fields)", |b| {
        b.iter(|| encode_all(&raw, &mut dst));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
