//! What one stream has for the wire, in order.

use std::collections::VecDeque;

use super::stream::Outgoing;

/// A stream's queue of [`Outgoing`] items. Nearly every stream queues a
/// head and at most one body chunk before they leave (a request and its
/// body, a response and its body), so the first two items live in the
/// stream itself and only a longer queue allocates: a stream costs no
/// allocation for its queue.
#[derive(Debug, Default)]
pub(crate) struct SendQueue {
    /// Invariant: the items are `first`, `second`, then `rest`, with no
    /// gap (`second` is empty if `first` is, `rest` if `second` is).
    first: Option<Outgoing>,
    second: Option<Outgoing>,
    rest: VecDeque<Outgoing>,
}

impl SendQueue {
    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    pub(crate) fn back(&self) -> Option<&Outgoing> {
        self.rest
            .back()
            .or(self.second.as_ref())
            .or(self.first.as_ref())
    }

    pub(crate) fn push_back(&mut self, item: Outgoing) {
        if self.first.is_none() {
            self.first = Some(item);
        } else if self.second.is_none() {
            self.second = Some(item);
        } else {
            self.rest.push_back(item);
        }
    }

    /// Puts back an item taken from the front (the rest of a DATA chunk).
    pub(crate) fn push_front(&mut self, item: Outgoing) {
        if let Some(second) = self.second.take() {
            self.rest.push_front(second);
        }
        self.second = self.first.replace(item);
    }

    pub(crate) fn pop_front(&mut self) -> Option<Outgoing> {
        let front = self.first.take()?;
        self.first = self.second.take();
        self.second = self.rest.pop_front();
        Some(front)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use bytes::Bytes;

    fn data(n: u8) -> Outgoing {
        Outgoing::Data {
            data: Bytes::from(vec![n]),
            end_stream: false,
        }
    }

    fn number(item: &Outgoing) -> u8 {
        match item {
            Outgoing::Data { data, .. } => data[0],
            _ => unreachable!(),
        }
    }

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
                    queue.push_back(data(n));
                    model.push_back(n);
                }
                1 => assert_eq!(queue.pop_front().map(|i| number(&i)), model.pop_front()),
                _ => {
                    queue.push_front(data(n));
                    model.push_front(n);
                }
            }
            assert_eq!(queue.is_empty(), model.is_empty());
            assert_eq!(queue.back().map(number), model.back().copied());
        }
        assert!(queue.rest.capacity() > 0, "the overflow was used");
    }
}
