//! TLS records on their way to the socket: a turn's output, handshake
//! flights, alerts, encrypted by rustls straight into this buffer.
//!
//! The memory comes from the thread's pool when records are sealed and
//! goes back as soon as the last of them is written, so a connection holds
//! no output buffer between turns. Buffers keep their initialized length
//! in the pool: rustls writes into initialized bytes, and zeroing a turn's
//! room once per buffer, not once per turn, keeps that off the write path.

use std::cell::RefCell;

/// Buffers a thread keeps for its connections' records.
const POOL_KEEP: usize = 8;
/// A buffer past this size (a turn of 256 KiB of plaintext is sealed in
/// about 257 KiB) is freed, not kept.
const POOL_MAX_BUFFER: usize = 512 * 1024;

thread_local! {
    static POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// `buf[sent..filled]` waits for the socket; `buf[filled..]` is
/// initialized room for the next records.
#[derive(Debug, Default)]
pub(crate) struct Sealed {
    buf: Vec<u8>,
    filled: usize,
    sent: usize,
}

impl Sealed {
    /// Records sealed and not yet written.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.buf[self.sent..self.filled]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.sent == self.filled
    }

    /// At least `n` bytes of room after the records (taken from the pool,
    /// or grown and zeroed); [`Sealed::commit`] says how much was used.
    pub(crate) fn room(&mut self, n: usize) -> &mut [u8] {
        if self.buf.is_empty() {
            self.buf = POOL.with_borrow_mut(Vec::pop).unwrap_or_default();
        }
        if self.buf.len() - self.filled < n {
            self.buf.resize(self.filled + n, 0);
        }
        &mut self.buf[self.filled..]
    }

    /// `n` bytes of the room now hold records.
    pub(crate) fn commit(&mut self, n: usize) {
        self.filled = (self.filled + n).min(self.buf.len());
    }

    /// `n` bytes were written; once all are, the buffer goes back to the
    /// pool.
    pub(crate) fn advance(&mut self, n: usize) {
        self.sent = (self.sent + n).min(self.filled);
        if self.sent == self.filled {
            self.release();
        }
    }

    /// Whether a buffer is held: not once everything was written.
    #[cfg(test)]
    pub(crate) fn holds_buffer(&self) -> bool {
        !self.buf.is_empty()
    }

    fn release(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        (self.filled, self.sent) = (0, 0);
        if buf.is_empty() || buf.len() > POOL_MAX_BUFFER {
            return;
        }
        POOL.with_borrow_mut(|pool| {
            if pool.len() < POOL_KEEP {
                pool.push(buf);
            }
        });
    }
}

impl Drop for Sealed {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_buffer_goes_back_to_the_pool_with_its_room() {
        let mut sealed = Sealed::default();
        sealed.room(100)[..3].copy_from_slice(b"abc");
        sealed.commit(3);
        assert_eq!(sealed.pending(), b"abc");
        sealed.advance(2);
        assert_eq!(sealed.pending(), b"c");
        sealed.advance(1);
        assert!(sealed.is_empty());
        assert!(!sealed.holds_buffer(), "a flushed session holds no buffer");
        let room = sealed.room(10);
        assert!(room.len() >= 100, "the pooled buffer, with its room");
    }
}
