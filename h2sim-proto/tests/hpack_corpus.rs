//! Loader for the hpack-test-case corpus (github.com/http2jp/hpack-test-case),
//! expected at `/work/shared/hpack-test-case` (`../../shared/hpack-test-case`
//! from this crate's manifest).
//!
//! Shared, through `#[path]`, by the `hpack_test_case` tests, the `hpack`
//! bench and the `hpack_ratio` example, so it holds no tests of its own.
//! A missing corpus is a hard failure, never a skip: a silently skipped
//! interoperability test is worse than none.

// Each including target uses a different subset of the loader.
#![allow(dead_code, clippy::unwrap_used)]

use std::fs;
use std::path::PathBuf;

use bytes::Bytes;
use h2sim_proto::hpack::HeaderField;
use serde_json::Value;

/// The directory holding only header lists, no encodings.
pub const RAW_DATA: &str = "raw-data";

/// One story: a sequence of header blocks sharing one compression context.
#[derive(Debug)]
pub struct Story {
    /// `directory/story_NN.json`, for messages.
    pub name: String,
    pub cases: Vec<Case>,
}

#[derive(Debug)]
pub struct Case {
    /// SETTINGS_HEADER_TABLE_SIZE set and acknowledged before this block.
    pub header_table_size: Option<usize>,
    /// The encoded block; `None` in `raw-data`.
    pub wire: Option<Bytes>,
    pub headers: Vec<HeaderField>,
}

pub fn root() -> PathBuf {
    let root = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/hpack-test-case"
    ));
    assert!(
        root.join(RAW_DATA).is_dir(),
        "hpack-test-case corpus not found at {} (expected a checkout of \
         github.com/http2jp/hpack-test-case with its raw-data directory)",
        root.display()
    );
    root
}

/// Every encoder's directory, i.e. all but `raw-data`, sorted.
pub fn encoder_directories() -> Vec<String> {
    let mut dirs: Vec<String> = fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|name| name != RAW_DATA)
        .collect();
    dirs.sort();
    dirs
}

/// All stories of `dir`, in file name order.
pub fn load(dir: &str) -> Vec<Story> {
    let path = root().join(dir);
    let mut files: Vec<PathBuf> = fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no stories in {}", path.display());
    files
        .iter()
        .map(|file| {
            let name = format!("{dir}/{}", file.file_name().unwrap().to_string_lossy());
            let json: Value = serde_json::from_slice(&fs::read(file).unwrap())
                .unwrap_or_else(|e| panic!("{name}: bad JSON: {e}"));
            let cases = json["cases"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: no cases"))
                .iter()
                .map(|case| parse_case(&name, case))
                .collect();
            Story { name, cases }
        })
        .collect()
}

fn parse_case(story: &str, case: &Value) -> Case {
    let header_table_size = case
        .get("header_table_size")
        .and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap());
    let wire = case
        .get("wire")
        .and_then(Value::as_str)
        .map(|hex| Bytes::from(decode_hex(hex).unwrap_or_else(|| panic!("{story}: bad hex"))));
    let headers = case["headers"]
        .as_array()
        .unwrap_or_else(|| panic!("{story}: no headers"))
        .iter()
        .flat_map(|h| h.as_object().unwrap())
        .map(|(name, value)| {
            HeaderField::new(
                Bytes::copy_from_slice(name.as_bytes()),
                Bytes::copy_from_slice(value.as_str().unwrap().as_bytes()),
            )
        })
        .collect();
    Case {
        header_table_size,
        wire,
        headers,
    }
}

pub fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    let digits = hex.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| {
            let hi = char::from(pair[0]).to_digit(16)?;
            let lo = char::from(pair[1]).to_digit(16)?;
            u8::try_from(hi << 4 | lo).ok()
        })
        .collect()
}

/// Sum of the wire lengths of every case of `stories`.
pub fn wire_total(stories: &[Story]) -> usize {
    stories
        .iter()
        .flat_map(|s| &s.cases)
        .map(|c| c.wire.as_ref().map_or(0, Bytes::len))
        .sum()
}
