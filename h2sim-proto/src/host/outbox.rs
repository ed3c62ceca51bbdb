//! Output taken from the core and waiting for the socket.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::time::Instant;

use bytes::{Buf, Bytes};

use crate::trim::Trim;
use crate::{Application, Endpoint};

/// The core's output between `poll_transmit` and the socket: the chunks
/// are the core's own `Bytes` (DATA payloads among them), so they are
/// written as they are, without a copy, by one vectored write (see
/// [`Outbox::slices`]) or from the front chunk ([`Outbox::front`]). Its
/// length is what a driver bounds to stop reading from a peer that does
/// not read our answers.
#[derive(Debug, Default)]
pub struct Outbox {
    chunks: VecDeque<Bytes>,
    len: usize,
}

impl Outbox {
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Gives back the chunk queue's capacity if it is empty, as
    /// [`Connection::trim`](crate::Connection::trim) does for the core's.
    pub fn trim(&mut self) {
        self.chunks.trim();
    }

    /// Bytes waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Takes the core's output until it has no more or `limit` bytes wait;
    /// returns whether the core ran out (the bound held nothing back).
    pub fn fill<A: Application>(
        &mut self,
        endpoint: &mut Endpoint<A>,
        now: Instant,
        limit: usize,
    ) -> bool {
        while self.len < limit {
            let Some(chunk) = endpoint.poll_transmit(now) else {
                return true;
            };
            self.push(chunk);
        }
        false
    }

    /// Queues `chunk` behind what waits (empty chunks are dropped).
    pub fn push(&mut self, chunk: Bytes) {
        if !chunk.is_empty() {
            self.len += chunk.len();
            self.chunks.push_back(chunk);
        }
    }

    /// The chunk to write first.
    pub fn front(&self) -> Option<&Bytes> {
        self.chunks.front()
    }

    /// Points `iov` at the first chunks, as many as fit; returns how many.
    pub fn slices<'a>(&'a self, iov: &mut [IoSlice<'a>]) -> usize {
        self.slices_within(iov, usize::MAX)
    }

    /// [`Outbox::slices`] of at most `limit` bytes in all, the last slice
    /// cut short where the limit falls inside a chunk.
    pub fn slices_within<'a>(&'a self, iov: &mut [IoSlice<'a>], limit: usize) -> usize {
        let mut count = 0;
        let mut left = limit;
        for (slot, chunk) in iov.iter_mut().zip(&self.chunks) {
            if left == 0 {
                break;
            }
            let take = chunk.len().min(left);
            *slot = IoSlice::new(&chunk[..take]);
            left -= take;
            count += 1;
        }
        count
    }

    /// Drops `n` written bytes from the front.
    pub fn advance(&mut self, mut n: usize) {
        self.len -= n.min(self.len);
        while n > 0 {
            let Some(front) = self.chunks.front_mut() else {
                break;
            };
            if n < front.len() {
                front.advance(n);
                return;
            }
            n -= front.len();
            self.chunks.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn outbox_advances_across_chunks() {
        let mut out = Outbox::default();
        for c in [&b"abc"[..], b"de", b"fghij"] {
            out.push(Bytes::copy_from_slice(c));
        }
        out.advance(4);
        assert_eq!(out.len(), 6);
        assert_eq!(&out.front().unwrap()[..], b"e");
        let mut iov = [IoSlice::new(&[]); 64];
        assert_eq!(out.slices(&mut iov), 2);
        assert_eq!(&*iov[1], b"fghij");
        assert_eq!(out.slices_within(&mut iov, 3), 2);
        assert_eq!((&*iov[0], &*iov[1]), (&b"e"[..], &b"fg"[..]));
        assert_eq!(out.slices_within(&mut iov, 1), 1);
        out.advance(6);
        assert!(out.is_empty());
        assert_eq!(out.len(), 0);
    }
}
