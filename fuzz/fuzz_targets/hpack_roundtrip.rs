#![no_main]

// The shared file holds every target's body; this binary runs one of them.
#[allow(dead_code)]
#[path = "../targets.rs"]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| targets::hpack_roundtrip(data));
