//! The stream slots of one connection (`-P N`): what is in flight on each,
//! found by slot or by stream.

use h2sim_proto::{StreamId, StreamMap};

/// `N` slots, each empty or holding one flight `F` on one stream. The free
/// slots are kept on a stack and the busy ones are counted, so that taking
/// a free slot, finding a stream's flight and telling whether any is busy
/// cost the same with 1 slot or 1,000: the client asks all three for every
/// request. A slot's memory is taken the first time it is used: `-P` can
/// be far more than a server lets be in flight (`-P 100000000` took all
/// of it up front and did not start).
#[derive(Debug)]
pub struct Slots<F> {
    /// The slots used so far, all below `len`.
    flights: Vec<Option<F>>,
    /// Slots there are.
    len: usize,
    /// Empty slots among those used, the lowest on top, so a connection
    /// reuses the first slots (the `par_idx` of dumps) as h2simple does;
    /// with none, the next slot not yet used is the free one.
    free: Vec<usize>,
    by_stream: StreamMap<usize>,
}

impl<F> Slots<F> {
    pub fn new(n: usize) -> Self {
        Slots {
            flights: Vec::new(),
            len: n,
            free: Vec::new(),
            by_stream: StreamMap::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds an empty slot and returns it.
    pub fn grow(&mut self) -> usize {
        self.len += 1;
        self.len - 1
    }

    /// An empty slot, if any (it stays empty until [`Slots::fill`]): the
    /// lowest.
    pub fn free(&self) -> Option<usize> {
        let unused = self.flights.len();
        self.free
            .last()
            .copied()
            .or_else(|| (unused < self.len).then_some(unused))
    }

    /// Slots holding a flight.
    pub fn busy(&self) -> usize {
        self.flights.len() - self.free.len()
    }

    /// Whether no slot is busy.
    pub fn is_idle(&self) -> bool {
        self.busy() == 0
    }

    /// Puts `flight` on the empty `slot`, for `stream`.
    pub fn fill(&mut self, slot: usize, stream: StreamId, flight: F) {
        if let Some(i) = self.free.iter().rposition(|&s| s == slot) {
            self.free.remove(i);
        }
        // A slot not used before is the next one (see `Slots::free`).
        if slot == self.flights.len() {
            self.flights.push(None);
        }
        self.by_stream.insert(stream, slot);
        self.flights[slot] = Some(flight);
    }

    /// The slot and flight of `stream`.
    pub fn get(&self, stream: StreamId) -> Option<(usize, &F)> {
        let &slot = self.by_stream.get(&stream)?;
        self.flights[slot].as_ref().map(|f| (slot, f))
    }

    pub fn get_mut(&mut self, stream: StreamId) -> Option<&mut F> {
        let &slot = self.by_stream.get(&stream)?;
        self.flights[slot].as_mut()
    }

    /// Empties the slot of `stream`; returns the slot and its flight.
    pub fn remove(&mut self, stream: StreamId) -> Option<(usize, F)> {
        let slot = self.by_stream.remove(&stream)?;
        let flight = self.flights[slot].take()?;
        self.release(slot);
        Some((slot, flight))
    }

    /// The flights with their streams, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (StreamId, &F)> {
        self.by_stream
            .iter()
            .filter_map(|(&stream, &slot)| Some((stream, self.flights[slot].as_ref()?)))
    }

    /// Empties every slot; returns the flights in slot order.
    pub fn drain(&mut self) -> Vec<F> {
        self.by_stream.clear();
        self.free.clear();
        self.flights.drain(..).flatten().collect()
    }

    /// `slot` is empty again: back on the stack, below any lower slot so
    /// that the lowest free slot stays on top.
    fn release(&mut self, slot: usize) {
        let at = self.free.partition_point(|&s| s > slot);
        self.free.insert(at, slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hand_out_the_lowest_free_one_and_find_flights_by_stream() {
        let mut slots = Slots::new(3);
        assert!(slots.is_idle());
        assert_eq!(slots.free(), Some(0));
        slots.fill(0, StreamId::new(1), "a");
        slots.fill(1, StreamId::new(3), "b");
        assert_eq!(slots.free(), Some(2));
        assert_eq!(slots.get(StreamId::new(3)), Some((1, &"b")));
        assert_eq!(slots.remove(StreamId::new(1)), Some((0, "a")));
        assert_eq!(slots.remove(StreamId::new(1)), None);
        assert_eq!(slots.free(), Some(0));
        slots.fill(2, StreamId::new(5), "c");
        assert_eq!(slots.free(), Some(0));
        let mut flying: Vec<_> = slots.iter().map(|(s, f)| (s.value(), *f)).collect();
        flying.sort_unstable();
        assert_eq!(flying, [(3, "b"), (5, "c")]);
        assert_eq!(slots.grow(), 3);
        assert_eq!(slots.free(), Some(0));
        assert!(!slots.is_idle());
        assert_eq!(slots.drain(), vec!["b", "c"]);
        assert!(slots.is_idle());
        assert_eq!(slots.free(), Some(0));
        assert_eq!(slots.get(StreamId::new(3)), None);
    }

    /// A slot takes memory once used: a million of them cost nothing
    /// until the requests come (`-P 100000000` took gigabytes up front).
    #[test]
    fn slots_take_memory_as_they_are_used() {
        let mut slots = Slots::new(1_000_000);
        assert_eq!(slots.len(), 1_000_000);
        for n in 0..3 {
            let slot = slots.free().unwrap();
            assert_eq!(slot, n);
            slots.fill(slot, StreamId::new(2 * n as u32 + 1), n);
        }
        assert_eq!(slots.busy(), 3);
        assert_eq!(slots.remove(StreamId::new(3)), Some((1, 1)));
        assert_eq!(slots.free(), Some(1));
        assert!(slots.flights.capacity() < 1000 && slots.free.capacity() < 1000);
        let mut full = Slots::new(1);
        full.fill(0, StreamId::new(1), ());
        assert_eq!(full.free(), None);
        assert_eq!(full.grow(), 1);
        assert_eq!(full.free(), Some(1));
    }
}
