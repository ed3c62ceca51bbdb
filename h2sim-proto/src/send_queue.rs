//! What one stream (HTTP/2) or exchange (HTTP/1.1) has for the wire, in
//! order.

use std::collections::VecDeque;

/// A stream's or an exchange's queue of outgoing items. Nearly every one
/// queues a head and at most one body chunk before they leave (a request
/// and its body, a response and its body), so the first two items live in
/// the queue itself and only a longer queue allocates: a stream or an
/// exchange costs no allocation for its queue.
#[derive(Debug)]
pub(crate) struct SendQueue<T> {
    /// Invariant: the items are `first`, `second`, then `rest`, with no
    /// gap (`second` is empty if `first` is, `rest` if `second` is).
    first: Option<T>,
    second: Option<T>,
    rest: VecDeque<T>,
}

impl<T> Default for SendQueue<T> {
    fn default() -> Self {
        SendQueue {
            first: None,
            second: None,
            rest: VecDeque::new(),
        }
    }
}

impl<T> SendQueue<T> {
    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    pub(crate) fn front(&self) -> Option<&T> {
        self.first.as_ref()
    }

    pub(crate) fn back(&self) -> Option<&T> {
        self.rest
            .back()
            .or(self.second.as_ref())
            .or(self.first.as_ref())
    }

    pub(crate) fn push_back(&mut self, item: T) {
        if self.first.is_none() {
            self.first = Some(item);
        } else if self.second.is_none() {
            self.second = Some(item);
        } else {
            self.rest.push_back(item);
        }
    }

    /// Puts back an item taken from the front (the rest of a DATA chunk).
    pub(crate) fn push_front(&mut self, item: T) {
        if let Some(second) = self.second.take() {
            self.rest.push_front(second);
        }
        self.second = self.first.replace(item);
    }

    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let front = self.first.take()?;
        self.first = self.second.take();
        self.second = self.rest.pop_front();
        Some(front)
    }

    /// Drops every item (its overflow keeps its capacity).
    pub(crate) fn clear(&mut self) {
        self.first = None;
        self.second = None;
        self.rest.clear();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The queue keeps order across its inline slots and its overflow,
    /// with items put back at the front, against a plain `VecDeque`.
    #[test]
    fn send_queue_keeps_order_like_a_deque() {
        let mut queue = SendQueue::default();
        let mut model = VecDeque::new();
        let ops = [0u8, 0, 1, 0, 0, 2, 1, 1, 0, 2, 0, 0, 0, 1, 1, 1, 1, 1, 2, 1];
        for (n, op) in (1u8..).zip(ops) {
            match op {
                0 => {
                    queue.push_back(n);
                    model.push_back(n);
                }
                1 => assert_eq!(queue.pop_front(), model.pop_front()),
                _ => {
                    queue.push_front(n);
                    model.push_front(n);
                }
            }
            assert_eq!(queue.is_empty(), model.is_empty());
            if n == 15 {
                queue.clear();
                model.clear();
            }
            assert_eq!(queue.back(), model.back());
        }
        assert!(queue.rest.capacity() > 0, "the overflow was used");
    }
}
