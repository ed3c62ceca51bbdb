//! Compression ratio of our HPACK encoder on the hpack-test-case corpus,
//! next to the encoders whose output the corpus records.
//!
//! Run with `cargo run -p h2sim-proto --example hpack_ratio`.
//!
//! "Raw" is the sum of name and value lengths of every field of every
//! `raw-data` story (3384 header lists): the header octets with no framing
//! at all. The §4.1 total adds RFC 7541's 32 bytes per field, the unit of
//! SETTINGS_MAX_HEADER_LIST_SIZE. Percentages are encoded size / raw.

#![allow(clippy::unwrap_used)]

#[path = "../tests/hpack_corpus.rs"]
mod corpus;

use bytes::BytesMut;
use h2sim_proto::hpack::{Encoder, IndexingPolicy};

fn main() {
    let stories = corpus::load(corpus::RAW_DATA);
    let fields = stories
        .iter()
        .flat_map(|s| &s.cases)
        .flat_map(|c| &c.headers);
    let field_count = fields.clone().count();
    let raw: usize = fields.clone().map(|f| f.name.len() + f.value.len()).sum();
    let rfc_size: usize = fields.map(|f| f.size()).sum();
    let blocks: usize = stories.iter().map(|s| s.cases.len()).sum();

    println!(
        "raw-data: {} stories, {blocks} header lists, {field_count} fields",
        stories.len()
    );
    println!("{:<44} {:>10}", "raw (name + value octets)", raw);
    println!(
        "{:<44} {:>10}",
        "RFC 7541 §4.1 size (name + value + 32)", rfc_size
    );
    println!();
    println!("{:<44} {:>10} {:>8}", "encoder", "bytes", "% raw");
    let row = |label: &str, bytes: usize| {
        println!(
            "{label:<44} {bytes:>10} {:>7.2}%",
            100.0 * bytes as f64 / raw as f64
        );
    };

    let ours = |table_size: usize, policy: IndexingPolicy, huffman: bool| -> usize {
        let mut total = 0;
        for story in &stories {
            let mut encoder = Encoder::new();
            encoder.set_indexing_policy(policy);
            encoder.set_huffman(huffman);
            if table_size != 4096 {
                encoder.set_max_table_size(table_size);
            }
            for case in &story.cases {
                let mut block = BytesMut::new();
                encoder.encode(&case.headers, &mut block);
                total += block.len();
            }
        }
        total
    };
    row(
        "h2sim (table 4096, default)",
        ours(4096, IndexingPolicy::Selective, true),
    );
    for size in [0, 256, 16384] {
        row(
            &format!("h2sim (table {size}, default)"),
            ours(size, IndexingPolicy::Selective, true),
        );
    }
    row(
        "h2sim (table 4096, index all)",
        ours(4096, IndexingPolicy::All, true),
    );
    row(
        "h2sim (table 4096, no Huffman)",
        ours(4096, IndexingPolicy::Selective, false),
    );

    println!();
    for dir in corpus::encoder_directories() {
        let recorded = corpus::load(&dir);
        let note = if recorded.len() == stories.len() {
            String::new()
        } else {
            format!(" ({} of {} stories)", recorded.len(), stories.len())
        };
        row(&format!("{dir}{note}"), corpus::wire_total(&recorded));
    }
}
