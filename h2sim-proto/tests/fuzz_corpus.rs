//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the same
//! target bodies libFuzzer runs, so every input that once found a bug stays a
//! regression test under plain `cargo test`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../fuzz/targets.rs"]
mod targets;

use std::fs;
use std::path::PathBuf;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let entries = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fuzz corpus {} unreadable: {e}", dir.display()));
    let mut count = 0;
    for entry in entries {
        let path = entry.expect("corpus entry").path();
        let data = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        body(&data);
        count += 1;
    }
    assert!(count > 0, "fuzz corpus {} is empty", dir.display());
}

#[test]
fn frame_decoder_corpus() {
    replay("frame_decoder", targets::frame_decoder);
}

#[test]
fn hpack_decoder_corpus() {
    replay("hpack_decoder", targets::hpack_decoder);
}

#[test]
fn server_connection_corpus() {
    replay("server_connection", targets::server_connection);
}

#[test]
fn http1_connection_corpus() {
    replay("http1_connection", targets::http1_connection);
}

#[test]
fn hpack_roundtrip_corpus() {
    replay("hpack_roundtrip", targets::hpack_roundtrip);
}

#[test]
fn client_connection_corpus() {
    replay("client_connection", targets::client_connection);
}

#[test]
fn pair_operations_corpus() {
    replay("pair_operations", targets::pair_operations);
}
