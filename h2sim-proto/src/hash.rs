//! A fast hasher for the core's small keys (stream ids, header names).
//!
//! std's SipHash costs more than the lookups it serves on the hot path. This
//! is an Fx-style multiply-rotate hash over 8-byte words, seeded once per
//! process from std's random keys so that a peer cannot precompute colliding
//! header names.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::LazyLock;

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

static SEED: LazyLock<u64> = LazyLock::new(|| RandomState::new().hash_one(0x0068_3273_696d_u64));

#[derive(Debug, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

/// Builds seeded [`FastHasher`]s; use as the `S` of a `HashMap`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FastState(u64);

impl Default for FastState {
    fn default() -> Self {
        FastState(*SEED)
    }
}

impl BuildHasher for FastState {
    type Hasher = FastHasher;

    #[inline]
    fn build_hasher(&self) -> FastHasher {
        FastHasher(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_equal_and_lengths_matter() {
        let s = FastState::default();
        assert_eq!(
            s.hash_one(b"content-type".as_slice()),
            s.hash_one(b"content-type".as_slice())
        );
        assert_ne!(s.hash_one(b"a".as_slice()), s.hash_one(b"a\0".as_slice()));
        assert_ne!(s.hash_one(1u32), s.hash_one(3u32));
    }
}
