//! One stream: its state (RFC 9113 §5.1), windows, and what waits to be sent.
//!
//! The state moves only through [`transition`], one exhaustive table of
//! (state, input) pairs in the manner of python-hyper/h2: every pair is
//! written out, and an illegal one returns the error the RFC prescribes for
//! it. Sends are applied when the application queues them (frames leave in
//! that order, so the wire catches up); received frames when they arrive.

use bytes::Bytes;

use super::flow::{RecvWindow, Window};
use crate::frame::{Reason, StreamId};
use crate::hpack::HeaderField;
use crate::message::{RequestHead, ResponseHead};
use crate::send_queue::SendQueue;

/// The states of RFC 9113 §5.1, Figure 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Ours, queued behind the peer's MAX_CONCURRENT_STREAMS; nothing sent
    /// yet. (Peer streams leave idle with the frame that names them.)
    Idle,
    /// We promised it (server push) and have not sent its HEADERS.
    ReservedLocal,
    /// The peer promised it; its HEADERS have not arrived.
    ReservedRemote,
    Open,
    HalfClosedLocal,
    HalfClosedRemote,
    /// Both sides ended; kept only while frames wait to be sent.
    Closed,
}

/// What can happen to a stream (RFC 9113 §5.1, the arrows of Figure 2 and
/// the frames its text allows or forbids per state). END_STREAM is an input
/// of its own, applied after the HEADERS or DATA that carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    SendHeaders,
    /// On the parent, it stays as it is; on the promised (idle) stream it
    /// reserves it.
    SendPushPromise,
    SendData,
    SendEndStream,
    RecvHeaders,
    /// As `SendPushPromise`, from the peer.
    RecvPushPromise,
    RecvData,
    RecvEndStream,
    RecvRstStream,
    RecvWindowUpdate,
}

impl Input {
    /// The END_STREAM flag riding on this input's frame, in its direction.
    fn end_stream(self) -> Input {
        match self {
            Input::SendHeaders
            | Input::SendPushPromise
            | Input::SendData
            | Input::SendEndStream => Input::SendEndStream,
            Input::RecvHeaders
            | Input::RecvPushPromise
            | Input::RecvData
            | Input::RecvEndStream
            | Input::RecvRstStream
            | Input::RecvWindowUpdate => Input::RecvEndStream,
        }
    }
}

/// Why an input may not happen in a state: the error RFC 9113 §5.1 (and
/// §6.6 for PUSH_PROMISE) has the receiver raise. For our own sends it is
/// what the peer would answer, and the application's command is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A stream error (§5.4.2): RST_STREAM with this code.
    Stream(Reason),
    /// A connection error (§5.4.1): GOAWAY with this code.
    Connection(Reason),
}

/// The stream state machine of RFC 9113 §5.1: where `input` takes a stream
/// in `state`, or the error it is. Every pair is listed; there is no
/// catch-all, so a new state or input does not compile until each of its
/// pairs is decided.
pub(crate) fn transition(state: State, input: Input) -> Result<State, Refusal> {
    use Input::*;
    use State::*;
    const PROTOCOL: Refusal = Refusal::Connection(Reason::PROTOCOL_ERROR);
    const STREAM_CLOSED: Refusal = Refusal::Stream(Reason::STREAM_CLOSED);
    const CLOSED_CONNECTION: Refusal = Refusal::Connection(Reason::STREAM_CLOSED);
    match (state, input) {
        // idle: HEADERS opens it, PUSH_PROMISE reserves it; anything else
        // received is a connection error PROTOCOL_ERROR.
        (Idle, SendHeaders | RecvHeaders) => Ok(Open),
        (Idle, SendPushPromise) => Ok(ReservedLocal),
        (Idle, RecvPushPromise) => Ok(ReservedRemote),
        (Idle, SendData | SendEndStream) => Err(PROTOCOL),
        (Idle, RecvData | RecvEndStream | RecvRstStream | RecvWindowUpdate) => Err(PROTOCOL),

        // reserved (local): we may send HEADERS (to half-closed (remote));
        // we may receive RST_STREAM (to closed) or WINDOW_UPDATE; any other
        // frame received is a connection error PROTOCOL_ERROR.
        (ReservedLocal, SendHeaders) => Ok(HalfClosedRemote),
        (ReservedLocal, SendPushPromise | SendData | SendEndStream) => Err(PROTOCOL),
        (ReservedLocal, RecvHeaders | RecvPushPromise | RecvData | RecvEndStream) => Err(PROTOCOL),
        (ReservedLocal, RecvRstStream) => Ok(Closed),
        (ReservedLocal, RecvWindowUpdate) => Ok(ReservedLocal),

        // reserved (remote): the peer's HEADERS half-closes it (local), its
        // RST_STREAM closes it; any other frame received is a connection
        // error PROTOCOL_ERROR, and we may send only RST_STREAM, PRIORITY
        // and WINDOW_UPDATE.
        (ReservedRemote, SendHeaders | SendPushPromise | SendData | SendEndStream) => Err(PROTOCOL),
        (ReservedRemote, RecvHeaders) => Ok(HalfClosedLocal),
        (ReservedRemote, RecvPushPromise | RecvData | RecvEndStream | RecvWindowUpdate) => {
            Err(PROTOCOL)
        }
        (ReservedRemote, RecvRstStream) => Ok(Closed),

        // open: either side may send any frame; END_STREAM half-closes it.
        (Open, SendHeaders | SendPushPromise | SendData) => Ok(Open),
        (Open, SendEndStream) => Ok(HalfClosedLocal),
        (Open, RecvHeaders | RecvPushPromise | RecvData | RecvWindowUpdate) => Ok(Open),
        (Open, RecvEndStream) => Ok(HalfClosedRemote),
        (Open, RecvRstStream) => Ok(Closed),

        // half-closed (local): we send only WINDOW_UPDATE, PRIORITY and
        // RST_STREAM (what the peer, half-closed (remote), would answer
        // with STREAM_CLOSED, and a PUSH_PROMISE with PROTOCOL_ERROR, §6.6);
        // we receive any frame, and END_STREAM or RST_STREAM closes it.
        (HalfClosedLocal, SendHeaders | SendData | SendEndStream) => Err(STREAM_CLOSED),
        (HalfClosedLocal, SendPushPromise) => Err(PROTOCOL),
        (HalfClosedLocal, RecvHeaders | RecvPushPromise | RecvData | RecvWindowUpdate) => {
            Ok(HalfClosedLocal)
        }
        (HalfClosedLocal, RecvEndStream | RecvRstStream) => Ok(Closed),

        // half-closed (remote): we send any frame, END_STREAM closes it;
        // received frames other than WINDOW_UPDATE, PRIORITY and RST_STREAM
        // are a stream error STREAM_CLOSED, a PUSH_PROMISE a connection
        // error PROTOCOL_ERROR (§6.6: only on open or half-closed (local)).
        (HalfClosedRemote, SendHeaders | SendPushPromise | SendData) => Ok(HalfClosedRemote),
        (HalfClosedRemote, SendEndStream) => Ok(Closed),
        (HalfClosedRemote, RecvHeaders | RecvData | RecvEndStream) => Err(STREAM_CLOSED),
        (HalfClosedRemote, RecvPushPromise) => Err(PROTOCOL),
        (HalfClosedRemote, RecvWindowUpdate) => Ok(HalfClosedRemote),
        (HalfClosedRemote, RecvRstStream) => Ok(Closed),

        // closed (both ends sent END_STREAM): nothing more may be sent;
        // frames received after the peer's END_STREAM are a connection error
        // STREAM_CLOSED, a PUSH_PROMISE one of PROTOCOL_ERROR (§6.6), and
        // WINDOW_UPDATE or RST_STREAM that crossed ours are ignored.
        (Closed, SendHeaders | SendData | SendEndStream) => Err(CLOSED_CONNECTION),
        (Closed, SendPushPromise | RecvPushPromise) => Err(PROTOCOL),
        (Closed, RecvHeaders | RecvData | RecvEndStream) => Err(CLOSED_CONNECTION),
        (Closed, RecvRstStream | RecvWindowUpdate) => Ok(Closed),
    }
}

/// A HEADERS or DATA frame's transition, then its END_STREAM's if it has one.
pub(crate) fn transition_frame(
    state: State,
    input: Input,
    end_stream: bool,
) -> Result<State, Refusal> {
    let next = transition(state, input)?;
    if end_stream {
        transition(next, input.end_stream())
    } else {
        Ok(next)
    }
}

/// What a stream has for the wire, in order. Header blocks are encoded only
/// when they leave, so HPACK state follows the order frames are written.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// Boxed: a request head is five times the size of the other items,
    /// and every item is moved into and out of the queue.
    Request {
        head: Box<RequestHead>,
        end_stream: bool,
    },
    Response {
        head: ResponseHead,
        end_stream: bool,
    },
    Data {
        data: Bytes,
        end_stream: bool,
    },
    Trailers {
        fields: Vec<HeaderField>,
    },
}

impl Outgoing {
    /// The field section size of a head (RFC 9113 §6.5.2); `None` for DATA.
    pub(crate) fn section_size(&self) -> Option<usize> {
        match self {
            Outgoing::Request { head, .. } => Some(super::fields::request_size(head)),
            Outgoing::Response { head, .. } => Some(super::fields::response_size(head)),
            Outgoing::Trailers { fields } => Some(super::fields::section_size(fields)),
            Outgoing::Data { .. } => None,
        }
    }

    /// Carries END_STREAM.
    fn ends_stream(&self) -> bool {
        match self {
            Outgoing::Request { end_stream, .. }
            | Outgoing::Response { end_stream, .. }
            | Outgoing::Data { end_stream, .. } => *end_stream,
            Outgoing::Trailers { .. } => true,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Stream {
    pub(crate) id: StreamId,
    pub(crate) state: State,
    pub(crate) send_window: Window,
    pub(crate) recv: RecvWindow,
    pub(crate) queue: SendQueue<Outgoing>,
    /// In the connection's ready list (so it is there once at most).
    pub(crate) ready: bool,
    /// The application holds it (it opened it, or had an event of it).
    /// False for a request the core answers itself: refused before
    /// delivery (a 431, RFC 9113 §10.5.1; a 413 for a declared length
    /// above `Config::max_request_body`), or taken back when its body grew
    /// past that limit. What else the peer sends on it goes nowhere, and
    /// the application's commands on it find no stream.
    pub(crate) known: bool,
    /// A final (non-1xx) head has been received.
    pub(crate) final_head_received: bool,
    /// A final head has been queued by the application.
    pub(crate) final_head_sent: bool,
    /// Declared content-length of the incoming message and bytes seen.
    pub(crate) expected_len: Option<u64>,
    pub(crate) received_len: u64,
    /// The request was HEAD, ours or the peer's: the response has no
    /// content whatever it declares (RFC 9110 §9.3.2), so a client reads
    /// none and a server sends none.
    pub(crate) head_request: bool,
    /// Server: the final response queued has no content, as it answers a
    /// HEAD or is a 204 or 304 (RFC 9110 §6.4.1): content and trailers the
    /// application gives after it are dropped, only END_STREAM is kept.
    pub(crate) sends_no_content: bool,
    /// The peer knows of the stream: it opened it, or our HEADERS (or for a
    /// push, our PUSH_PROMISE) has been written. Until then nothing else may
    /// be sent on it, a RST_STREAM least of all: the peer would see a frame
    /// on an idle stream (§5.1).
    pub(crate) announced: bool,
    /// The peer's request asked for `100 (Continue)` before its content
    /// (`expect: 100-continue`); the stream's next turn of output sends it,
    /// unless a final answer or the content came first.
    pub(crate) expects_continue: bool,
    /// Server: the peer's request is a CONNECT, whose DATA is a tunnel's
    /// bytes and not a body (RFC 9113 §8.5): no body limit holds it, and
    /// a 2xx to it says no length (RFC 9110 §9.3.6).
    pub(crate) connect: bool,
}

impl Stream {
    pub(crate) fn new(id: StreamId, state: State, send_window: u32, recv: RecvWindow) -> Self {
        Stream {
            id,
            state,
            send_window: Window::new(send_window),
            recv,
            queue: SendQueue::default(),
            ready: false,
            known: false,
            final_head_received: false,
            final_head_sent: false,
            expected_len: None,
            received_len: 0,
            head_request: false,
            sends_no_content: false,
            announced: false,
            expects_continue: false,
            connect: false,
        }
    }

    /// Ours and not opened yet (idle, or reserved (local) before its
    /// HEADERS): what the application queues waits, and is not sent, until
    /// `Session::open_waiting` gives it a concurrency slot.
    /// How much of a `len`-byte payload the stream's next DATA frame may
    /// carry: what its window and the peer's frame size allow (the
    /// connection's window aside).
    pub(crate) fn frame_allowance(&self, len: usize, max_frame: u32) -> u32 {
        u32::try_from(len)
            .unwrap_or(u32::MAX)
            .min(self.send_window.available())
            .min(max_frame)
    }

    pub(crate) fn waiting(&self) -> bool {
        matches!(self.state, State::Idle | State::ReservedLocal)
    }

    /// Counts toward a concurrency limit (ours for peer streams, the
    /// peer's for ours) until it is removed: opened, in either half-closed
    /// state, or closed with frames still to send (§5.1.2 counts open and
    /// half-closed streams; reserved and idle ones do not).
    pub(crate) fn counted(&self) -> bool {
        match self.state {
            State::Idle | State::ReservedLocal | State::ReservedRemote => false,
            State::Open | State::HalfClosedLocal | State::HalfClosedRemote | State::Closed => true,
        }
    }

    /// Where queuing a frame (`input`, with or without END_STREAM) takes
    /// the stream, or why the application may not queue it. A stream still
    /// waiting to open takes frames until one ends it; the table applies
    /// to them when it opens.
    pub(crate) fn after_queuing(&self, input: Input, end_stream: bool) -> Result<State, Refusal> {
        if self.waiting() {
            return match self.queue.back() {
                Some(last) if last.ends_stream() => Err(Refusal::Stream(Reason::STREAM_CLOSED)),
                _ => Ok(self.state),
            };
        }
        transition_frame(self.state, input, end_stream)
    }

    /// A request of ours whose body is to follow its head (see
    /// `Session::open_waiting`).
    pub(crate) fn sends_body(&self) -> bool {
        matches!(
            self.queue.front(),
            Some(Outgoing::Request {
                end_stream: false,
                ..
            })
        )
    }

    /// Where opening a waiting stream takes it: its HEADERS, and the
    /// END_STREAM of what the application queued, if any.
    pub(crate) fn opened(&self) -> Result<State, Refusal> {
        let end = self.queue.back().is_some_and(Outgoing::ends_stream);
        transition_frame(self.state, Input::SendHeaders, end)
    }

    /// Where a frame from the peer (`input`, with or without END_STREAM)
    /// takes the stream. A live idle stream is always ours (the peer's
    /// leave idle with the frame that names them), so the peer cannot have
    /// seen it: even the HEADERS that would open an idle stream of its own
    /// is a connection error here (§5.1, §5.1.1).
    pub(crate) fn on_recv(&self, input: Input, end_stream: bool) -> Result<State, Refusal> {
        if self.state == State::Idle {
            return Err(Refusal::Connection(Reason::PROTOCOL_ERROR));
        }
        transition_frame(self.state, input, end_stream)
    }

    /// Server: the final response has started on the wire (its head is
    /// queued and no longer in the queue), so no other status can take
    /// its place.
    pub(crate) fn response_started(&self) -> bool {
        self.final_head_sent
            && !self.queue.iter().any(
                |item| matches!(item, Outgoing::Response { head, .. } if !head.is_informational()),
            )
    }

    /// The peer may still send DATA or trailers.
    pub(crate) fn can_recv_body(&self) -> bool {
        transition(self.state, Input::RecvData).is_ok()
    }

    /// Done: closed and nothing left to send.
    pub(crate) fn is_finished(&self) -> bool {
        self.state == State::Closed && self.queue.is_empty()
    }

    /// Marks the stream ready and says whether it joins the back of the
    /// ready list: not when already on it, when it has nothing to send (a
    /// 100 (Continue) it owes counts), or while it waits to open (waiting
    /// streams join in the order they open, which keeps new stream ids
    /// increasing on the wire, §5.1.1).
    pub(crate) fn join_ready(&mut self) -> bool {
        if self.ready || self.waiting() || (self.queue.is_empty() && !self.expects_continue) {
            return false;
        }
        self.ready = true;
        true
    }

    /// Where a turn of output left the stream.
    pub(crate) fn turn_end(&self) -> TurnEnd {
        if self.is_finished() {
            TurnEnd::Finished
        } else if !self.known && self.queue.is_empty() && self.state == State::HalfClosedLocal {
            TurnEnd::OwnAnswerSent
        } else {
            TurnEnd::Live
        }
    }
}

/// Where a stream's turn of output left it, told by the turn so that the
/// send loop need not look the stream up again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TurnEnd {
    /// Still open, or with more to send.
    Live,
    /// Closed with nothing left to send: to be forgotten.
    Finished,
    /// The core's own answer (not the application's) is out while the
    /// peer is still sending.
    OwnAnswerSent,
    /// Reset and forgotten during the turn.
    Gone,
}

#[cfg(test)]
mod tests;
