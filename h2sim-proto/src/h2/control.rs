//! Connection-level frames waiting to be written or answered: our
//! SETTINGS, PING acknowledgements owed, our PINGs (queued and in flight),
//! RST_STREAMs, GOAWAYs and PUSH_PROMISEs.
//!
//! They are busy at a connection's start and end and rare between, so
//! the queues live in a box made when one is first needed and dropped
//! when a quiet connection finds them all empty (`Session::trim`): an idle
//! connection carries a pointer, not seven queue headers.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;

use super::settings::LocalSettings;
use crate::frame::{Reason, StreamId};
use crate::message::RequestHead;

#[derive(Debug, Default)]
pub(crate) struct Queues {
    /// Our SETTINGS frames not yet written.
    pub(crate) settings: VecDeque<LocalSettings>,
    /// PING payloads the peer sent, to acknowledge.
    pub(crate) ping_acks: VecDeque<[u8; 8]>,
    /// Our PINGs in flight: payload and when sent (for the RTT).
    pub(crate) pings_sent: VecDeque<([u8; 8], Instant)>,
    pub(crate) pings: VecDeque<[u8; 8]>,
    pub(crate) resets: VecDeque<(StreamId, Reason)>,
    pub(crate) goaways: VecDeque<(StreamId, Reason, Bytes)>,
    /// PUSH_PROMISEs to write: parent, promised stream, request. One queue
    /// for the connection, so promised ids go out in increasing order
    /// whatever their parents (RFC 9113 §5.1.1).
    pub(crate) promises: VecDeque<(StreamId, StreamId, RequestHead)>,
}

impl Queues {
    fn is_empty(&self) -> bool {
        self.settings.is_empty()
            && self.ping_acks.is_empty()
            && self.pings_sent.is_empty()
            && self.pings.is_empty()
            && self.resets.is_empty()
            && self.goaways.is_empty()
            && self.promises.is_empty()
    }
}

/// The queues, boxed when first needed.
#[derive(Debug, Default)]
pub(crate) struct Control(Option<Box<Queues>>);

impl Control {
    /// The queues, made if there are none yet: for adding to them.
    pub(crate) fn queues(&mut self) -> &mut Queues {
        self.0.get_or_insert_with(Box::default)
    }

    /// The queues if any exist: for taking from them without making them.
    pub(crate) fn existing(&mut self) -> Option<&mut Queues> {
        self.0.as_deref_mut()
    }

    pub(crate) fn get(&self) -> Option<&Queues> {
        self.0.as_deref()
    }

    pub(crate) fn ping_acks_owed(&self) -> usize {
        self.get().map_or(0, |q| q.ping_acks.len())
    }

    /// Queues a PING of ours, noting when it left for its round trip.
    pub(crate) fn ping(&mut self, payload: [u8; 8], now: Instant) {
        let q = self.queues();
        q.pings.push_back(payload);
        q.pings_sent.push_back((payload, now));
    }

    pub(crate) fn go_away(&mut self, last: StreamId, reason: Reason, debug: Bytes) {
        self.queues().goaways.push_back((last, reason, debug));
    }

    /// Forgets the promises `keep` refuses.
    pub(crate) fn retain_promises(&mut self, mut keep: impl FnMut(StreamId) -> bool) {
        if let Some(q) = self.existing() {
            q.promises.retain(|(_, promised, _)| keep(*promised));
        }
    }

    pub(crate) fn pop_promise(&mut self) -> Option<(StreamId, StreamId, RequestHead)> {
        self.existing()?.promises.pop_front()
    }

    /// Drops the box once every queue in it is empty.
    pub(crate) fn trim(&mut self) {
        if self.get().is_some_and(Queues::is_empty) {
            self.0 = None;
        }
    }
}
