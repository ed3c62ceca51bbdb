//! The stream slots of one connection (`-P N`): what is in flight on each,
//! found by slot or by stream.

use h2sim_proto::{StreamId, StreamMap};

/// `N` slots, each empty or holding one flight `F` on one stream. The free
/// slots are kept on a stack and the busy ones are counted, so that taking
/// a free slot, finding a stream's flight and telling whether any is busy
/// cost the same with 1 slot or 1,000: the client asks all three for every
/// request.
#[derive(Debug)]
pub struct Slots<F> {
    flights: Vec<Option<F>>,
    /// Empty slots; the lowest on top, so a connection reuses the first
    /// slots (the `par_idx` of dumps) as h2simple does.
    free: Vec<usize>,
    by_stream: StreamMap<usize>,
}

impl<F> Slots<F> {
    pub fn new(n: usize) -> Self {
        Slots {
            flights: (0..n).map(|_| None).collect(),
            free: (0..n).rev().collect(),
            by_stream: StreamMap::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.flights.len()
    }

    /// Adds an empty slot and returns it.
    pub fn grow(&mut self) -> usize {
        self.flights.push(None);
        self.free.insert(0, self.flights.len() - 1);
        self.flights.len() - 1
    }

    /// An empty slot, if any (it stays empty until [`Slots::fill`]).
    pub fn free(&self) -> Option<usize> {
        self.free.last().copied()
    }

    /// Slots holding a flight.
    pub fn busy(&self) -> usize {
        self.flights.len() - self.free.len()
    }

    /// Whether no slot is busy.
    pub fn is_idle(&self) -> bool {
        self.free.len() == self.flights.len()
    }

    /// Puts `flight` on the empty `slot`, for `stream`.
    pub fn fill(&mut self, slot: usize, stream: StreamId, flight: F) {
        if let Some(i) = self.free.iter().rposition(|&s| s == slot) {
            self.free.swap_remove(i);
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
        self.free = (0..self.flights.len()).rev().collect();
        self.flights.iter_mut().filter_map(Option::take).collect()
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
}
