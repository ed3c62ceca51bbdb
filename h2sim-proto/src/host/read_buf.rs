//! The connection's input buffer, handed to the socket as room to read
//! into and to the core as the bytes read, and the pool it borrows its
//! memory from.

use std::cell::RefCell;

use bytes::buf::Limit;
use bytes::{Buf, BufMut, BytesMut};

use crate::application::BATCH;

/// Read room: a read gets at least `MIN_READ_ROOM`, and the buffer grows
/// by `READ_GROWTH` when less is left.
const READ_GROWTH: usize = 64 * 1024;
const MIN_READ_ROOM: usize = 8 * 1024;
/// Buffers a thread's pool keeps for its next reads; more are freed. Only
/// connections in the middle of a read hold one, so a few suffice.
const POOL_KEEP: usize = 16;
/// A buffer grown past this (a huge frame) is freed, not pooled.
const POOL_MAX_BUFFER: usize = 4 * READ_GROWTH;
/// The most a read takes while input comes in many small messages (see
/// [`ReadBuf::pace`]); as much as a TLS read takes.
const NARROW_READ: usize = 32 * 1024;

/// Read buffers that no connection holds, kept for the next read so that
/// a connection costs a buffer only while data is in flight, and a reused
/// buffer keeps the room it had zero-filled.
///
/// There is one pool per thread: a connection is driven on one thread at a
/// time (one glommio executor; one tokio worker per poll), so taking and
/// giving back is a push or pop on a thread-local list, without a lock,
/// and a buffer that moves with a task to another worker simply joins that
/// worker's pool. Nothing here blocks or needs a runtime.
#[derive(Debug, Default)]
pub struct ReadPool {
    free: Vec<BytesMut>,
}

thread_local! {
    static POOL: RefCell<ReadPool> = RefCell::default();
}

impl ReadPool {
    /// A pooled buffer (its length initialized room), or an empty one.
    fn take(&mut self) -> BytesMut {
        self.free.pop().unwrap_or_default()
    }

    /// Keeps `buf` for a later read, or frees it: when enough are kept,
    /// when it has grown large, or when too little room is left in it (the
    /// application still holds the bytes before it).
    fn give(&mut self, mut buf: BytesMut) {
        if self.free.len() >= POOL_KEEP || buf.capacity() > POOL_MAX_BUFFER {
            return;
        }
        // Room is what the buffer can still hold, initialized or not: a
        // buffer read through [`ReadBuf::spare`] comes back with none of it
        // initialized, and must be kept as it is, not freed.
        if buf.capacity() < MIN_READ_ROOM {
            // Little room is left after the input split off its front: take
            // the whole allocation back when the application has let go of
            // that input, as growing in place would, rather than free it
            // and allocate a new one for the next read. Its room is zeroed
            // by the next [`ReadBuf::room`], if one asks: a read into
            // [`ReadBuf::spare`] needs none.
            buf.clear();
            if !buf.try_reclaim(READ_GROWTH) {
                return;
            }
        }
        self.free.push(buf);
    }

    /// Buffers kept in this thread's pool.
    pub fn idle_buffers() -> usize {
        POOL.with(|p| p.borrow().free.len())
    }

    fn with<R>(f: impl FnOnce(&mut ReadPool) -> R) -> R {
        POOL.with(|p| f(&mut p.borrow_mut()))
    }
}

/// `[..filled]` is input the core has not taken yet (a partial frame);
/// `[filled..]` is initialized room for the next read. A read that is
/// cancelled or short commits only what it read, so no zero-filled byte
/// ever reaches the core; keeping the room initialized means zeroing it
/// once when a buffer grows, not before every read. A runtime that reads
/// into uninitialized memory reads into the spare capacity instead
/// ([`ReadBuf::spare`]) and nothing is zeroed. The bytes read become,
/// without a copy, the `Bytes` the core hands to the application
/// (`Connection::handle_input` splits them off the front).
///
/// The memory comes from the thread's [`ReadPool`] at the first read and
/// goes back when a read finds nothing to read ([`ReadBuf::release`]) and
/// no partial input waits, so an idle connection holds no buffer, or when
/// the connection ends (the `ReadBuf` is dropped).
#[derive(Debug, Default)]
pub struct ReadBuf {
    buf: BytesMut,
    filled: usize,
    /// Reads take at most [`NARROW_READ`].
    narrow: bool,
}

impl ReadBuf {
    /// Room for the next read: at least 8 KiB, initialized, from the pool
    /// or growing (and zeroing) if needed. Growing reuses the allocation
    /// when the core's earlier input is no longer referenced, so a steady
    /// connection does not allocate.
    pub fn room(&mut self) -> &mut [u8] {
        self.hold();
        if self.buf.len() - self.filled < MIN_READ_ROOM {
            self.grow(MIN_READ_ROOM);
            let capacity = self.buf.capacity();
            self.buf.resize(capacity, 0);
        }
        let end = self.buf.len().min(self.filled.saturating_add(self.limit()));
        &mut self.buf[self.filled..end]
    }

    /// Room for the next read as the buffer's spare capacity, at least
    /// 8 KiB of it, for a runtime that reads into uninitialized memory
    /// (tokio's `poll_read_buf` appends to it): zero-filling the room, as
    /// [`ReadBuf::room`] must for a read into a slice, cost a plain-TCP
    /// connection a 64 KiB memset every 56 KiB of input. After the read,
    /// [`ReadBuf::commit`] the bytes it appended.
    pub fn spare(&mut self) -> Limit<&mut BytesMut> {
        let limit = self.limit();
        self.spare_for(MIN_READ_ROOM).limit(limit)
    }

    /// Sizes the next reads by the last one, which handed the application
    /// `events` events. Once a read holds more than a batch of them
    /// ([`Endpoint::handle_input`] hands them over 64 at a time), reads
    /// take at most 32 KiB until one holds half a batch or less: the
    /// answers to the first batch then leave before the rest is read, so
    /// a peer that keeps many small messages in flight works on those
    /// while this side works on the next ones, instead of both sides
    /// taking turns on a whole window's worth. The h2sim pair (100 POSTs
    /// of 1 KiB in flight) ran twice as many requests a second at a
    /// quarter less CPU a request on both sides. Large messages keep whole
    /// reads: 32 KiB reads of 4 KiB POSTs cost that pair a fifth of its
    /// rate in more reads and writes.
    ///
    /// [`Endpoint::handle_input`]: crate::Endpoint::handle_input
    pub fn pace(&mut self, events: usize) {
        if events > BATCH {
            self.narrow = true;
        } else if events <= BATCH / 2 {
            self.narrow = false;
        }
    }

    fn limit(&self) -> usize {
        if self.narrow { NARROW_READ } else { usize::MAX }
    }

    /// The buffer, from the pool if none is held, with at least `min` bytes
    /// of spare capacity behind the input.
    fn spare_for(&mut self, min: usize) -> &mut BytesMut {
        self.hold();
        self.grow(min);
        &mut self.buf
    }

    /// A buffer from the pool, if none is held.
    fn hold(&mut self) {
        if self.buf.capacity() == 0 {
            self.buf = ReadPool::with(ReadPool::take);
        }
    }

    /// Drops the initialized room and makes the capacity behind the input
    /// at least `min`, growing by [`READ_GROWTH`] at a time (in place when
    /// the core's earlier input is no longer referenced). The capacity, not
    /// the initialized length, decides: a buffer read through
    /// [`ReadBuf::spare`] has room that was never initialized, and a slice
    /// reader that gets it zeroes that room instead of allocating anew.
    fn grow(&mut self, min: usize) {
        self.buf.truncate(self.filled);
        if self.buf.capacity() - self.filled < min {
            self.buf.reserve(min.max(READ_GROWTH));
        }
    }

    /// The connection went quiet (a read found nothing): the buffer goes
    /// back to the pool unless it holds input the core has not taken.
    pub fn release(&mut self) {
        if self.filled == 0 && self.buf.capacity() > 0 {
            let buf = std::mem::take(&mut self.buf);
            ReadPool::with(|pool| pool.give(buf));
        }
    }

    /// Lends a buffer from the thread's pool to one read of bytes that are
    /// only dropped (what a closing connection's peer still sends), and
    /// takes it back whatever the read did: a closing connection waits for
    /// its peer's end holding no buffer.
    pub fn discard<T>(read: impl FnOnce(&mut ReadBuf) -> T) -> T {
        // Dropped, the buffer goes back to the pool.
        read(&mut ReadBuf::default())
    }

    /// Whether a buffer is held (from the pool or grown here).
    pub fn holds_buffer(&self) -> bool {
        self.buf.capacity() > 0
    }

    /// `n` bytes were read into the room.
    pub fn commit(&mut self, n: usize) {
        self.filled = (self.filled + n).min(self.buf.len());
    }

    /// Copies `data` in after what is there (plaintext a TLS session
    /// decrypted into its own buffer). The copy goes into the spare
    /// capacity, as a read through [`ReadBuf::spare`] does: zeroing room
    /// that the copy overwrites at once would cost a 64 KiB memset every
    /// time the buffer grows.
    pub fn push(&mut self, data: &[u8]) {
        self.spare_for(data.len()).extend_from_slice(data);
        self.commit(data.len());
    }

    /// Makes room for `n` more bytes of [`ReadBuf::push`] at once: a TLS
    /// read's plaintext arrives record by record, and growing the buffer
    /// between records would copy what the earlier ones brought.
    pub fn reserve(&mut self, n: usize) {
        self.spare_for(n);
    }

    /// Drops the input held, keeping the buffer: bytes read only to be
    /// thrown away (what a closing connection's peer still sends).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.filled = 0;
    }

    /// Input read and not yet taken by the core.
    pub fn pending(&self) -> usize {
        self.filled
    }

    /// Hands the unread input to `take` (the core), which splits whole
    /// frames off its front; the rest stays for the next read to extend.
    pub fn take_input(&mut self, take: impl FnOnce(&mut BytesMut)) {
        let room = self.buf.split_off(self.filled);
        take(&mut self.buf);
        self.filled = self.buf.len();
        // The input and the room are one allocation, side by side: joining
        // them again is O(1).
        self.buf.unsplit(room);
    }
}

/// A connection that ends gives its buffer back as a quiet one does
/// ([`ReadBuf::release`]), with whatever input it still held, which ends
/// with it: dropping the buffer instead cost every short connection a new
/// 64 KiB allocation at its first read (and on glommio, which reads into
/// initialized room, a 64 KiB zero fill).
impl Drop for ReadBuf {
    fn drop(&mut self) {
        if self.buf.capacity() == 0 {
            return;
        }
        self.buf.advance(self.filled);
        self.filled = 0;
        let buf = std::mem::take(&mut self.buf);
        // A buffer dropped while the thread ends, or while the pool is
        // busy, is simply freed.
        let _ = POOL.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut() {
                pool.give(buf);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bytes::Bytes;

    #[test]
    fn read_buf_keeps_partial_input_and_reuses_memory() {
        let mut rb = ReadBuf::default();
        let room = rb.room();
        assert!(room.len() >= READ_GROWTH);
        room[..5].copy_from_slice(b"hello");
        rb.commit(5);
        // The core takes three bytes and leaves a partial frame.
        let mut taken = Bytes::new();
        rb.take_input(|input| taken = input.split_to(3).freeze());
        assert_eq!(&taken[..], b"hel");
        rb.push(b" world");
        rb.take_input(|input| assert_eq!(&input[..], b"lo world"));
        drop(taken);
        // Room is left behind the input without allocating again.
        let before = rb.buf.capacity();
        rb.take_input(|input| input.clear());
        assert_eq!(rb.filled, 0);
        assert!(rb.room().len() >= MIN_READ_ROOM);
        assert!(rb.buf.capacity() <= before);
    }

    /// Random reads through a `ReadBuf` into an HTTP/1.1 server whose
    /// pipeline fills, so the core holds input back and re-reads it: every
    /// request must parse (no bytes lost, moved or repeated on the way).
    #[test]
    fn read_buf_feeds_a_pipelining_server_intact() {
        use crate::{Application, Config, Connection, Endpoint, Event};
        struct Check(usize);
        impl Application for Check {
            fn on_event(&mut self, _: std::time::Instant, event: Event, conn: &mut Connection) {
                match event {
                    Event::Request { stream, .. } => {
                        self.0 += 1;
                        let head = crate::ResponseHead::new(200);
                        let _ = conn.send_response(stream, head, true);
                    }
                    Event::Closed { error: Some(e), .. } => {
                        panic!("{e:?} after {} requests", self.0)
                    }
                    _ => {}
                }
            }
        }
        let request = format!("GET /{} HTTP/1.1\r\nhost: a\r\n\r\n", "p".repeat(4096));
        let stream = request.as_bytes().repeat(600);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut random = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let now = std::time::Instant::now();
        let conn = Connection::server(Config::default(), now).unwrap();
        let mut endpoint = Endpoint::new(conn, Check(0), now);
        let mut input = ReadBuf::default();
        let mut at = 0;
        while at < stream.len() {
            if endpoint.connection().wants_input() && random(3) != 0 {
                let room = input.room();
                let n = (1 + random(room.len() as u64) as usize).min(stream.len() - at);
                room[..n].copy_from_slice(&stream[at..at + n]);
                input.commit(n);
                at += n;
                input.take_input(|bytes| {
                    endpoint.handle_input(now, bytes);
                });
            } else {
                for _ in 0..random(40) {
                    if endpoint.poll_transmit(now).is_none() {
                        break;
                    }
                }
                endpoint.handle_input(now, &mut BytesMut::new());
            }
        }
        while endpoint.poll_transmit(now).is_some() {}
        endpoint.handle_input(now, &mut BytesMut::new());
        while endpoint.poll_transmit(now).is_some() {}
        assert_eq!(endpoint.application().0, 600);
    }

    /// Reads appended to the spare capacity (as tokio's `poll_read_buf`
    /// does) reach the core whole, partial input included, with nothing
    /// zero-filled: the buffer's length is only what was read.
    #[test]
    fn reads_into_the_spare_capacity_keep_input_and_zero_nothing() {
        use bytes::BufMut;
        let mut rb = ReadBuf::default();
        let mut spare = rb.spare();
        assert_eq!(spare.get_ref().len(), 0);
        assert!(spare.get_ref().capacity() >= MIN_READ_ROOM);
        spare.put_slice(b"hello");
        rb.commit(5);
        let mut taken = Bytes::new();
        rb.take_input(|input| taken = input.split_to(3).freeze());
        assert_eq!(&taken[..], b"hel");
        // The partial input stays in front of the next read.
        let mut spare = rb.spare();
        assert_eq!(&spare.get_ref()[..], b"lo");
        spare.put_slice(b" world");
        rb.commit(6);
        rb.take_input(|input| assert_eq!(&input[..], b"lo world"));
        drop(taken);
        rb.take_input(|input| input.clear());
        // With the input let go, the memory is reused, not grown.
        let capacity = rb.buf.capacity();
        let spare = rb.spare();
        assert_eq!(spare.get_ref().len(), 0);
        assert!(spare.get_ref().capacity() <= capacity.max(READ_GROWTH));
        // A slice reader after a spare one gets zeroed room, none of it input.
        assert!(rb.room().iter().all(|&b| b == 0));
    }

    /// Bytes read only to be dropped (a closing connection's lingering
    /// reads) go through the spare capacity: the buffer is neither zeroed
    /// nor grown, however much is read.
    #[test]
    fn cleared_reads_reuse_the_buffer_uninitialized() {
        use bytes::BufMut;
        let mut rb = ReadBuf::default();
        let capacity = rb.spare().get_ref().capacity();
        for _ in 0..10 {
            let mut spare = rb.spare();
            assert_eq!(spare.get_ref().len(), 0, "nothing initialized");
            spare.put_slice(&[7; MIN_READ_ROOM]);
            rb.clear();
            assert_eq!(rb.pending(), 0);
        }
        assert_eq!(rb.buf.capacity(), capacity);
    }

    #[test]
    fn a_short_read_leaves_no_zero_filled_bytes() {
        let mut rb = ReadBuf::default();
        let room = rb.room();
        assert!(room.len() >= MIN_READ_ROOM);
        room[..3].copy_from_slice(b"abc");
        rb.commit(3);
        // A read that was cancelled commits nothing.
        let _ = rb.room();
        rb.commit(0);
        let mut seen = Vec::new();
        rb.take_input(|input| {
            seen.extend_from_slice(input);
            let _ = input.split_to(1);
        });
        assert_eq!(seen, b"abc");
        assert_eq!(rb.pending(), 2);
        rb.push(b"de");
        rb.take_input(|input| {
            assert_eq!(&input[..], b"bcde");
            input.clear();
        });
        assert_eq!(rb.pending(), 0);
    }

    /// Plaintext pushed in lands in spare capacity: nothing past it is
    /// zeroed, however the buffer grows, and the bytes arrive in order.
    #[test]
    fn pushed_plaintext_zeroes_no_room() {
        let mut rb = ReadBuf::default();
        let record = [7u8; 16 * 1024];
        for _ in 0..10 {
            rb.push(&record);
            assert_eq!(
                rb.buf.len(),
                rb.filled,
                "room past the input was initialized"
            );
        }
        assert!(rb.buf.capacity() >= 10 * record.len());
        rb.take_input(|input| {
            assert_eq!(input.len(), 10 * record.len());
            assert!(input.iter().all(|&b| b == 7));
            input.clear();
        });
        // A slice reader after it still gets initialized room.
        assert!(rb.room().len() >= MIN_READ_ROOM);
    }

    /// Room reserved for a TLS read's plaintext takes all its records
    /// without the buffer moving (which would copy the earlier records).
    #[test]
    fn reserved_room_takes_a_reads_records_in_place() {
        let mut rb = ReadBuf::default();
        let record = [7u8; 16 * 1024];
        rb.reserve(8 * record.len());
        let at = rb.buf.as_ptr();
        for _ in 0..8 {
            rb.push(&record);
        }
        assert_eq!(rb.buf.as_ptr(), at, "the buffer grew between records");
        assert_eq!(rb.pending(), 8 * record.len());
    }

    /// A connection whose read found nothing gives its buffer to the
    /// thread's pool, and the next read anywhere on the thread takes it
    /// from there instead of allocating.
    #[test]
    fn a_quiet_read_buf_gives_its_buffer_back() {
        let before = ReadPool::idle_buffers();
        let mut rb = ReadBuf::default();
        assert!(!rb.holds_buffer(), "nothing is allocated before a read");
        rb.room()[..4].copy_from_slice(b"ping");
        rb.commit(4);
        rb.take_input(|input| input.clear());
        rb.release();
        assert!(!rb.holds_buffer());
        assert_eq!(ReadPool::idle_buffers(), before + 1);
        let mut other = ReadBuf::default();
        assert!(other.room().len() >= MIN_READ_ROOM);
        assert_eq!(ReadPool::idle_buffers(), before);
    }

    /// A buffer whose room the input used up goes back to the pool whole
    /// once the application has let go of that input, instead of being
    /// freed and a new one allocated and zeroed for the next read; while
    /// the input is still held it is freed.
    #[test]
    fn a_used_up_buffer_is_reclaimed_for_the_pool() {
        let before = ReadPool::idle_buffers();
        let fill = |rb: &mut ReadBuf| {
            let n = rb.room().len() - MIN_READ_ROOM / 2;
            rb.commit(n);
            let mut taken = None;
            rb.take_input(|input| taken = Some(input.split().freeze()));
            taken.unwrap()
        };
        let mut rb = ReadBuf::default();
        drop(fill(&mut rb));
        rb.release();
        assert_eq!(ReadPool::idle_buffers(), before + 1, "reclaimed and pooled");
        let mut again = ReadBuf::default();
        assert!(
            again.room().len() >= READ_GROWTH,
            "the whole allocation is room again"
        );
        let held = fill(&mut again);
        again.release();
        assert_eq!(ReadPool::idle_buffers(), before, "input still held: freed");
        drop(held);
    }

    /// Reads narrow to 32 KiB once one held more than a batch of events,
    /// stay narrow while reads hold more than half a batch, and widen
    /// again after one that held half a batch or less.
    #[test]
    fn reads_narrow_while_input_comes_in_many_events() {
        let mut rb = ReadBuf::default();
        let wide = rb.room().len();
        assert!(
            wide > NARROW_READ,
            "a buffer has more room than a narrow read"
        );
        rb.pace(BATCH);
        assert_eq!(rb.room().len(), wide);
        rb.pace(BATCH + 1);
        assert_eq!(rb.room().len(), NARROW_READ);
        assert_eq!(rb.spare().remaining_mut(), NARROW_READ);
        rb.pace(BATCH / 2 + 1);
        assert_eq!(rb.room().len(), NARROW_READ, "more than half a batch");
        rb.pace(BATCH / 2);
        assert_eq!(rb.room().len(), wide);
        assert!(rb.spare().remaining_mut() > NARROW_READ);
    }

    /// A buffer read through its spare capacity goes back to the pool with
    /// what capacity it has left as room, even while the application holds
    /// the input read before (a server holding a request body): freeing it
    /// would cost every quiet moment of a connection a new allocation.
    #[test]
    fn a_spare_read_buffer_is_pooled_while_its_input_is_held() {
        use bytes::BufMut;
        let before = ReadPool::idle_buffers();
        let mut rb = ReadBuf::default();
        rb.spare().put_slice(b"request");
        rb.commit(7);
        let mut held = Bytes::new();
        rb.take_input(|input| held = input.split().freeze());
        rb.release();
        assert_eq!(ReadPool::idle_buffers(), before + 1, "pooled as it is");
        let mut next = ReadBuf::default();
        assert!(next.spare().get_ref().capacity() >= READ_GROWTH - 7);
        assert_eq!(ReadPool::idle_buffers(), before);
        assert_eq!(&held[..], b"request");
    }

    /// A slice reader that gets a buffer read through its spare capacity
    /// (plain and TLS connections share a thread's pool) zeroes the room
    /// it has instead of allocating a new buffer while the input before it
    /// is still held.
    #[test]
    fn a_slice_reader_uses_the_room_a_spare_reader_left() {
        use bytes::BufMut;
        let mut rb = ReadBuf::default();
        rb.spare().put_slice(&[b'i'; 10 * 1024]);
        rb.commit(10 * 1024);
        let mut held = Bytes::new();
        rb.take_input(|input| held = input.split().freeze());
        let left = rb.buf.capacity();
        assert!((MIN_READ_ROOM..READ_GROWTH).contains(&left));
        rb.release();
        let mut next = ReadBuf::default();
        let room = next.room();
        assert_eq!(room.len(), left, "the same memory, not a new buffer");
        assert!(room.iter().all(|&b| b == 0));
        assert!(held.iter().all(|&b| b == b'i'));
    }

    /// Partial input (a frame cut by the read) keeps the buffer through a
    /// quiet spell, and the bytes are intact when the rest comes.
    #[test]
    fn partial_input_keeps_its_buffer_intact() {
        let mut rb = ReadBuf::default();
        rb.room()[..6].copy_from_slice(b"header");
        rb.commit(6);
        // The core takes "he" and waits for the rest of the frame.
        rb.take_input(|input| {
            let _ = input.split_to(2);
        });
        rb.release();
        assert!(rb.holds_buffer());
        assert_eq!(rb.pending(), 4);
        rb.push(b"-and-body");
        rb.take_input(|input| assert_eq!(&input[..], b"ader-and-body"));
    }

    /// A buffer back from the pool still holds an earlier connection's
    /// bytes in its room; none of them reaches the core, only what the new
    /// read committed (and after a short read, no zero fill either).
    #[test]
    fn a_pooled_buffer_shows_only_what_was_read() {
        let mut first = ReadBuf::default();
        let room = first.room();
        room.fill(b'#');
        let n = room.len();
        first.commit(n);
        first.take_input(|input| input.clear());
        first.release();
        let mut second = ReadBuf::default();
        second.room()[..2].copy_from_slice(b"ok");
        second.commit(2);
        second.take_input(|input| {
            assert_eq!(&input[..], b"ok");
            input.clear();
        });
        second.release();
    }

    /// A read buffer dropped with its connection goes back to the pool,
    /// partial input and all, and the next connection sees none of that
    /// input: a connection per request then reuses one buffer.
    #[test]
    fn a_dropped_read_buf_gives_its_buffer_back() {
        let before = ReadPool::idle_buffers();
        let mut ended = ReadBuf::default();
        ended.room()[..7].copy_from_slice(b"partial");
        ended.commit(7);
        ended.take_input(|input| {
            let _ = input.split_to(3);
        });
        assert_eq!(ended.pending(), 4);
        let at = ended.buf.as_ptr();
        drop(ended);
        assert_eq!(ReadPool::idle_buffers(), before + 1);
        let mut next = ReadBuf::default();
        assert_eq!(next.pending(), 0, "the dropped input is gone");
        assert!(next.room().len() >= MIN_READ_ROOM);
        assert_eq!(next.buf.as_ptr(), at.wrapping_add(4), "the same memory");
        next.room()[..2].copy_from_slice(b"ok");
        next.commit(2);
        next.take_input(|input| assert_eq!(&input[..], b"ok"));
    }

    /// Reads that only drop what they read share one pooled buffer, held
    /// for the read alone.
    #[test]
    fn discarding_reads_share_a_pooled_buffer() {
        let first = ReadBuf::discard(|sink| sink.room().as_ptr());
        assert_eq!(ReadPool::idle_buffers(), 1);
        let again = ReadBuf::discard(|sink| {
            let room = sink.room().as_ptr();
            assert_eq!(ReadPool::idle_buffers(), 0, "lent");
            room
        });
        assert_eq!(first, again);
        assert_eq!(ReadPool::idle_buffers(), 1);
    }

    /// The pool keeps a few buffers, not every one given back.
    #[test]
    fn the_pool_is_bounded() {
        let mut bufs: Vec<ReadBuf> = (0..POOL_KEEP + 4).map(|_| ReadBuf::default()).collect();
        for rb in &mut bufs {
            let _ = rb.room();
        }
        for rb in &mut bufs {
            rb.release();
        }
        assert_eq!(ReadPool::idle_buffers(), POOL_KEEP);
    }
}
