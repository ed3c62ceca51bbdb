//! Capacity given back when a connection goes quiet.
//!
//! A busy moment grows a connection's queues (events, output chunks,
//! control frames); the capacity stays after they empty. A host holds
//! thousands of connections that mostly wait, so once one has nothing
//! open, what its queues grew to is given back and it costs its state
//! alone. Only empty containers are trimmed: one that still holds
//! something is in use.

use std::collections::{HashMap, VecDeque};

use bytes::BytesMut;

pub(crate) trait Trim {
    /// Frees the allocation if nothing is in it.
    fn trim(&mut self);
}

impl<T> Trim for VecDeque<T> {
    fn trim(&mut self) {
        if self.is_empty() && self.capacity() > 0 {
            *self = VecDeque::new();
        }
    }
}

impl<T> Trim for Vec<T> {
    fn trim(&mut self) {
        if self.is_empty() && self.capacity() > 0 {
            *self = Vec::new();
        }
    }
}

impl<K, V, S: Default> Trim for HashMap<K, V, S> {
    fn trim(&mut self) {
        if self.is_empty() && self.capacity() > 0 {
            *self = HashMap::default();
        }
    }
}

impl Trim for BytesMut {
    fn trim(&mut self) {
        if self.is_empty() && self.capacity() > 0 {
            *self = BytesMut::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_empty_containers_give_back_their_capacity() {
        let mut q: VecDeque<u8> = VecDeque::with_capacity(64);
        q.push_back(1);
        q.trim();
        assert!(q.capacity() >= 64);
        q.clear();
        q.trim();
        assert_eq!(q.capacity(), 0);
        let mut b = BytesMut::with_capacity(128);
        b.trim();
        assert_eq!(b.capacity(), 0);
    }
}
