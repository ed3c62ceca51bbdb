//! A fast hasher for the core's small keys (stream ids, header names).
//!
//! std's SipHash costs more than the lookups it serves on the hot path. This
//! is an Fx-style multiply-rotate hash over 8-byte words, started from a
//! seed drawn once per process from std's random keys.
//!
//! It is not collision resistant, and the seed does not make it so: the
//! seed only enters the first step, and the low bits a hash table picks its
//! bucket by depend, in the last step, on the low bits of the last word
//! alone. Keys of one length that differ only in the high bytes of their
//! last word (`x-hdr-abcdefgh`, `x-hdr-abcdefgz`) share those bits under
//! every seed, so a peer can make them crowd one probe sequence. That is
//! tolerable only because every map keyed with it is bounded: the streams
//! of one connection (the peer's by our `max_concurrent_streams`; ours are
//! ids we hand out in order), and the HPACK encoder's table index (bounded
//! by `encoder_table_size`, and keyed by what we send). Keep it off any map
//! a peer can grow.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::LazyLock;

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

static SEED: LazyLock<u64> = LazyLock::new(|| RandomState::new().hash_one(0x0068_3273_696d_u64));

#[derive(Debug, Clone, Copy)]
pub struct FastHasher(u64);

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
pub struct FastState(u64);

/// A map from stream id to an application's state of the stream, with the
/// core's hasher: an application looks its streams up on every event, and
/// SipHash would cost more than the lookup. Safe for the reason above as
/// long as the application, like the core, removes a stream's entry when
/// the stream ends, so the peer cannot grow it past its stream limit.
pub type StreamMap<V> = HashMap<crate::StreamId, V, FastState>;

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
