//! The storage of heads that have left, kept for the heads that come next.
//!
//! Every exchange moves two heads: one leaves (a client's request, a
//! server's response), one arrives. A head that has been written is done
//! with its field vector and, for a request, the box it was queued in; a
//! head that arrives needs a vector for its ordinary fields. Handing the
//! first to the second saves an allocation and a free per head, and under
//! load those are glibc's slow path: a client keeps a hundred requests in
//! flight, so its vectors come and go in bursts of a hundred of one size,
//! more than the allocator's per-thread cache holds. What is kept is
//! bounded (`KEPT` of each, small vectors only) and given back when the
//! connection goes quiet, like its queues (see [`crate::trim`]).

use crate::hpack::HeaderField;
use crate::message::RequestHead;
use crate::trim::Trim;

/// Spare vectors and boxes kept at most: a burst of requests in flight
/// (a hundred is the usual window) comes back as a burst of responses.
pub(crate) const KEPT: usize = 128;

/// A vector with room for more fields than this is not kept: one large
/// head should not pin its room for every later one, and what a peer's
/// heads can leave here stays small (`KEPT` vectors of at most 16 fields,
/// about 150 KiB, until the connection goes quiet). Real request and
/// response heads have fewer ordinary fields.
const MAX_FIELDS: usize = 16;

#[derive(Debug, Default)]
pub(crate) struct Spares {
    /// Empty boxes (a default head), for queued request heads.
    #[allow(clippy::vec_box, reason = "the boxes are what is kept")]
    heads: Vec<Box<RequestHead>>,
    /// Empty vectors with room, for decoded ordinary fields.
    fields: Vec<Vec<HeaderField>>,
}

impl Spares {
    /// `head` in a box, a spare one if there is one.
    pub(crate) fn boxed(&mut self, head: RequestHead) -> Box<RequestHead> {
        match self.heads.pop() {
            Some(mut spare) => {
                *spare = head;
                spare
            }
            None => Box::new(head),
        }
    }

    /// Takes back a request head that has been written: its box and its
    /// field vector become spares.
    pub(crate) fn give_head(&mut self, mut head: Box<RequestHead>) {
        let fields = std::mem::take(&mut head.fields);
        self.give_fields(fields);
        if self.heads.len() < KEPT {
            *head = RequestHead::default();
            self.heads.push(head);
        }
    }

    /// Takes back a field vector whose fields have been written.
    pub(crate) fn give_fields(&mut self, mut fields: Vec<HeaderField>) {
        let room = fields.capacity();
        if room > 0 && room <= MAX_FIELDS && self.fields.len() < KEPT {
            crate::hpack::clear_fields(&mut fields);
            self.fields.push(fields);
        }
    }

    /// An empty vector to collect fields in: a spare one, or a new one.
    pub(crate) fn fields(&mut self) -> Vec<HeaderField> {
        self.fields.pop().unwrap_or_default()
    }
}

impl Trim for Spares {
    /// Unlike a queue, spares are all capacity: a quiet connection keeps
    /// none of them.
    fn trim(&mut self) {
        self.heads = Vec::new();
        self.fields = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_heads_box_and_vector_serve_the_next_heads() {
        let mut spares = Spares::default();
        let head = RequestHead::new("GET", "http", "a", "/x").field("accept", "*/*");
        let boxed = spares.boxed(head);
        let (box_at, fields_at) = (&*boxed as *const RequestHead, boxed.fields.as_ptr());
        spares.give_head(boxed);
        // The vector the request was written from collects the next
        // decoded fields, emptied.
        let fields = spares.fields();
        assert_eq!(fields.as_ptr(), fields_at);
        assert!(fields.is_empty() && fields.capacity() >= 1);
        // The box holds the next request, its old contents gone.
        let next = spares.boxed(RequestHead::new("POST", "http", "a", "/y"));
        assert_eq!(&*next as *const RequestHead, box_at);
        assert_eq!(next.path.as_ref(), b"/y");
        assert!(next.fields.is_empty());
        // None left: a new vector has no room yet.
        assert_eq!(spares.fields().capacity(), 0);
    }

    #[test]
    fn what_is_kept_is_bounded_and_given_back_when_quiet() {
        let mut spares = Spares::default();
        for _ in 0..KEPT + 10 {
            spares.give_fields(Vec::with_capacity(4));
            spares.give_head(Box::default());
        }
        assert_eq!(spares.fields.len(), KEPT);
        assert_eq!(spares.heads.len(), KEPT);
        // No room, or too much of it: not worth keeping.
        let mut quiet = Spares::default();
        quiet.give_fields(Vec::new());
        quiet.give_fields(Vec::with_capacity(MAX_FIELDS + 1));
        assert!(quiet.fields.is_empty());
        spares.trim();
        assert_eq!(spares.fields.capacity(), 0);
        assert_eq!(spares.heads.capacity(), 0);
    }
}
