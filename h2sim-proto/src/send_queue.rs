//! What one stream (HTTP/2) or exchange (HTTP/1.1) has for the wire, in
//! order.

use std::collections::VecDeque;

/// A stream's or an exchange's queue of outgoing items. Nearly every one
/// queues a head and at most one body chunk before they leave (a request
/// and its body, a response and its body), so the first two items live in
/// the queue itself and only a longer queue allocates: a stream or an
/// exchange costs no allocation for its queue. The overflow is boxed, so a
/// queue that never needs it is a pointer wider than its two slots and
/// dropping it looks at that pointer only.
#[derive(Debug)]
pub(crate) struct SendQueue<T> {
    /// Invariant: the items are `inline[head]`, `inline[head ^ 1]`, then
    /// `rest`, with no gap (the second slot is empty if the first is, `rest`
    /// if the second is). Taking the front flips `head` instead of moving
    /// the second item into the first slot.
    inline: [Option<T>; 2],
    head: usize,
    #[allow(
        clippy::box_collection,
        reason = "boxed for the size and the drop of a queue that never overflows"
    )]
    rest: Option<Box<VecDeque<T>>>,
}

impl<T> Default for SendQueue<T> {
    fn default() -> Self {
        SendQueue {
            inline: [None, None],
            head: 0,
            rest: None,
        }
    }
}

impl<T> SendQueue<T> {
    pub(crate) fn is_empty(&self) -> bool {
        self.inline[self.head].is_none()
    }

    pub(crate) fn front(&self) -> Option<&T> {
        self.inline[self.head].as_ref()
    }

    pub(crate) fn back(&self) -> Option<&T> {
        self.rest
            .as_ref()
            .and_then(|rest| rest.back())
            .or(self.inline[self.head ^ 1].as_ref())
            .or(self.inline[self.head].as_ref())
    }

    pub(crate) fn push_back(&mut self, item: T) {
        if self.inline[self.head].is_none() {
            self.inline[self.head] = Some(item);
        } else if self.inline[self.head ^ 1].is_none() {
            self.inline[self.head ^ 1] = Some(item);
        } else {
            self.rest.get_or_insert_with(Box::default).push_back(item);
        }
    }

    /// Puts back an item taken from the front (the rest of a DATA chunk).
    pub(crate) fn push_front(&mut self, item: T) {
        if let Some(second) = self.inline[self.head ^ 1].take() {
            self.rest
                .get_or_insert_with(Box::default)
                .push_front(second);
        }
        self.head ^= 1;
        self.inline[self.head] = Some(item);
    }

    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let front = self.inline[self.head].take()?;
        if let Some(rest) = &mut self.rest {
            self.inline[self.head] = rest.pop_front();
        }
        self.head ^= 1;
        Some(front)
    }

    /// The items, front first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.inline[self.head]
            .iter()
            .chain(self.inline[self.head ^ 1].iter())
            .chain(self.rest.iter().flat_map(|rest| rest.iter()))
    }

    /// Drops every item (its overflow keeps its capacity).
    pub(crate) fn clear(&mut self) {
        self.inline = [None, None];
        if let Some(rest) = &mut self.rest {
            rest.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use proptest::prelude::*;

    use super::*;

    /// Applies `ops` (0: push back, 1: pop front, 2: push front, 3:
    /// clear) to the queue and to a plain `VecDeque`, which must agree
    /// after each.
    fn agrees_with_a_deque(ops: &[u8]) -> SendQueue<usize> {
        let mut queue = SendQueue::default();
        let mut model = VecDeque::new();
        for (n, &op) in ops.iter().enumerate() {
            match op {
                0 => {
                    queue.push_back(n);
                    model.push_back(n);
                }
                1 => assert_eq!(queue.pop_front(), model.pop_front()),
                2 => {
                    queue.push_front(n);
                    model.push_front(n);
                }
                _ => {
                    queue.clear();
                    model.clear();
                }
            }
            assert_eq!(queue.is_empty(), model.is_empty());
            assert_eq!(queue.front(), model.front());
            assert_eq!(queue.back(), model.back());
        }
        queue
    }

    /// The queue keeps order across its inline slots and its overflow,
    /// with items put back at the front.
    #[test]
    fn send_queue_keeps_order_like_a_deque() {
        let ops = [
            0u8, 0, 1, 0, 0, 2, 1, 1, 0, 2, 0, 0, 0, 1, 3, 0, 1, 1, 1, 1, 2, 1,
        ];
        let queue = agrees_with_a_deque(&ops);
        assert!(
            queue.rest.is_some_and(|rest| rest.capacity() > 0),
            "the overflow was used"
        );
    }

    proptest! {
        #[test]
        fn any_sequence_keeps_order_like_a_deque(ops in prop::collection::vec(0u8..4, 0..64)) {
            agrees_with_a_deque(&ops);
        }
    }
}
