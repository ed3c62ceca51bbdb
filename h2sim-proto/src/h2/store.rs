//! The streams of one connection and the id bookkeeping around them.

use std::collections::{HashMap, VecDeque};

use super::stream::Stream;
use crate::frame::StreamId;
use crate::hash::FastState;
use crate::trim::Trim;

/// Stream ids are 31 bits (RFC 9113 §5.1.1).
const MAX_STREAM_ID: u32 = (1 << 31) - 1;

type IdMap<V> = HashMap<StreamId, V, FastState>;

/// A bounded memory of stream ids, oldest forgotten first. Every stream
/// that ends is recorded but lookups happen only for frames on streams that
/// are no longer live (rare), so this is a ring: O(1) to record, a short
/// scan to look up.
#[derive(Debug, Default)]
pub(crate) struct RecentIds {
    order: VecDeque<StreamId>,
    capacity: usize,
}

impl RecentIds {
    pub(crate) fn new(capacity: usize) -> Self {
        RecentIds {
            // Grown as streams end, not reserved up front: an idle
            // connection should cost its state, not this ring.
            order: VecDeque::new(),
            capacity,
        }
    }

    pub(crate) fn insert(&mut self, id: StreamId) {
        if self.capacity == 0 {
            return;
        }
        if self.order.len() == self.capacity {
            self.order.pop_front();
        }
        self.order.push_back(id);
    }

    pub(crate) fn contains(&self, id: StreamId) -> bool {
        self.order.iter().rev().any(|&i| i == id)
    }
}

/// Stream boxes kept for the next streams (see [`Store::streams`]): the
/// streams of a window of requests in flight.
const SPARE_STREAMS: usize = 128;

/// What the caller learns of a stream it removed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Removed {
    /// The application had heard of the stream.
    pub(crate) known: bool,
    /// The peer had heard of it.
    pub(crate) announced: bool,
    /// A final head had been queued on it: on a stream the application
    /// no longer holds, the core's own answer (a 431, a 413), already
    /// reported.
    pub(crate) answered: bool,
}

/// All live streams plus what is needed to classify an id that is not live:
/// idle (never used), or closed (and how).
#[derive(Debug)]
pub(crate) struct Store {
    /// Boxed: a stream is about two hundred bytes, and the map moves its
    /// values on insertion and removal (a stream each way per request),
    /// so a box's pointer moves instead; the boxes of ended streams serve
    /// the next ones (`spare`), so no stream allocates under a steady load.
    streams: IdMap<Box<Stream>>,
    #[allow(clippy::vec_box, reason = "the boxes are what is kept")]
    spare: Vec<Box<Stream>>,
    /// The next id we will open (odd for clients, even for servers).
    pub(crate) next_local: u32,
    /// The highest id the peer opened or promised.
    pub(crate) last_peer: StreamId,
    /// Our streams counting toward the peer's MAX_CONCURRENT_STREAMS.
    pub(crate) active_local: u32,
    /// Peer streams counting toward ours.
    pub(crate) active_peer: u32,
    /// Streams we reset: late frames from the peer on them are expected and
    /// ignored (RFC 9113 §5.1, "closed").
    pub(crate) reset_locally: RecentIds,
    /// Streams the peer ended or reset: more DATA/HEADERS on them is
    /// STREAM_CLOSED (§5.1).
    pub(crate) ended_by_peer: RecentIds,
}

impl Store {
    pub(crate) fn new(is_client: bool, remembered: usize) -> Self {
        Store {
            streams: IdMap::default(),
            spare: Vec::new(),
            next_local: if is_client { 1 } else { 2 },
            last_peer: StreamId::ZERO,
            active_local: 0,
            active_peer: 0,
            reset_locally: RecentIds::new(remembered),
            ended_by_peer: RecentIds::new(remembered),
        }
    }

    /// Gives back the map's capacity, and the spare boxes, once no stream
    /// is live.
    pub(crate) fn trim(&mut self) {
        self.streams.trim();
        self.spare = Vec::new();
    }

    pub(crate) fn get(&self, id: StreamId) -> Option<&Stream> {
        self.streams.get(&id).map(|s| &**s)
    }

    pub(crate) fn get_mut(&mut self, id: StreamId) -> Option<&mut Stream> {
        self.streams.get_mut(&id).map(|s| &mut **s)
    }

    /// A stream the application holds (`Stream::known`): its commands act
    /// on no other, so one the core answers itself is gone to it.
    pub(crate) fn held(&self, id: StreamId) -> Option<&Stream> {
        self.get(id).filter(|s| s.known)
    }

    /// [`Store::held`], to change.
    pub(crate) fn held_mut(&mut self, id: StreamId) -> Option<&mut Stream> {
        self.get_mut(id).filter(|s| s.known)
    }

    pub(crate) fn insert(&mut self, stream: Stream) {
        let boxed = match self.spare.pop() {
            Some(mut spare) => {
                *spare = stream;
                spare
            }
            None => Box::new(stream),
        };
        self.streams.insert(boxed.id, boxed);
    }

    /// Removes a stream and gives back its concurrency slot; what it still
    /// had queued is dropped.
    pub(crate) fn remove(&mut self, id: StreamId, local: bool) -> Option<Removed> {
        let mut stream = self.streams.remove(&id)?;
        if stream.counted() {
            if local {
                self.active_local -= 1;
            } else {
                self.active_peer -= 1;
            }
        }
        let removed = Removed {
            known: stream.known,
            announced: stream.announced,
            answered: stream.final_head_sent,
        };
        if self.spare.len() < SPARE_STREAMS {
            stream.queue.clear();
            self.spare.push(stream);
        }
        Some(removed)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// The live streams' ids, lowest first. A walk that writes frames or
    /// queues events goes by these, so that its order follows the ids and
    /// not the map's seed, which differs from process to process: the same
    /// input gives the same output on every run.
    pub(crate) fn ids(&self) -> Vec<StreamId> {
        let mut ids: Vec<StreamId> = self.streams.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// The live streams in the map's order, which differs from process to
    /// process: only for changes whose order nothing can see.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Stream> {
        self.streams.values_mut().map(|s| &mut **s)
    }

    /// Allocates the next id of ours, or None once ids are exhausted.
    pub(crate) fn allocate(&mut self) -> Option<StreamId> {
        let id = self.next_local;
        if id > MAX_STREAM_ID {
            return None;
        }
        self.next_local += 2;
        Some(StreamId::new(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_ids_forget_oldest() {
        let mut r = RecentIds::new(2);
        for id in [1, 3, 5] {
            r.insert(StreamId::new(id));
        }
        assert!(!r.contains(StreamId::new(1)));
        assert!(r.contains(StreamId::new(3)) && r.contains(StreamId::new(5)));
    }

    #[test]
    fn ids_run_out_at_2_pow_31() {
        let mut s = Store::new(true, 0);
        s.next_local = (1 << 31) - 1;
        assert_eq!(s.allocate(), Some(StreamId::new((1 << 31) - 1)));
        assert_eq!(s.allocate(), None);
    }
}
