//! One stream: its state (RFC 9113 §5.1), windows, and what waits to be sent.

use std::collections::VecDeque;

use bytes::Bytes;

use super::flow::{RecvWindow, Window};
use crate::frame::StreamId;
use crate::hpack::HeaderField;
use crate::message::{RequestHead, ResponseHead};

/// The states of RFC 9113 §5.1, Figure 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Ours, queued behind the peer's MAX_CONCURRENT_STREAMS; nothing sent yet.
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

/// What a stream has for the wire, in order. Header blocks are encoded only
/// when they leave, so HPACK state follows the order frames are written.
#[derive(Debug)]
pub(crate) enum Outgoing {
    Request {
        head: RequestHead,
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

#[derive(Debug)]
pub(crate) struct Stream {
    pub(crate) id: StreamId,
    pub(crate) state: State,
    pub(crate) send_window: Window,
    pub(crate) recv: RecvWindow,
    pub(crate) queue: VecDeque<Outgoing>,
    /// In the connection's ready list (so it is there once at most).
    pub(crate) ready: bool,
    /// The application has heard of it (it opened it, or had an event).
    pub(crate) known: bool,
    /// A final (non-1xx) head has been received.
    pub(crate) final_head_received: bool,
    /// A final head has been queued by the application.
    pub(crate) final_head_sent: bool,
    /// The application has ended its side (END_STREAM queued).
    pub(crate) send_ended: bool,
    /// Counts toward a concurrency limit (ours for peer streams, the peer's
    /// for ours) until it is removed.
    pub(crate) counted: bool,
    /// Declared content-length of the incoming message and bytes seen.
    pub(crate) expected_len: Option<u64>,
    pub(crate) received_len: u64,
    /// We sent HEAD: the response has no body whatever it declares.
    pub(crate) head_request: bool,
    /// The peer knows of the stream: it opened it, or our HEADERS (or for a
    /// push, our PUSH_PROMISE) has been written. Until then nothing else may
    /// be sent on it, a RST_STREAM least of all: the peer would see a frame
    /// on an idle stream (§5.1).
    pub(crate) announced: bool,
}

impl Stream {
    pub(crate) fn new(id: StreamId, state: State, send_window: u32, recv: RecvWindow) -> Self {
        Stream {
            id,
            state,
            send_window: Window::new(send_window),
            recv,
            queue: VecDeque::new(),
            ready: false,
            known: false,
            final_head_received: false,
            final_head_sent: false,
            send_ended: false,
            counted: false,
            expected_len: None,
            received_len: 0,
            head_request: false,
            announced: false,
        }
    }

    /// The peer ended its side (END_STREAM received).
    pub(crate) fn recv_end(&mut self) {
        self.state = match self.state {
            State::Open => State::HalfClosedRemote,
            State::HalfClosedLocal | State::ReservedRemote => State::Closed,
            other => other,
        };
    }

    /// We ended our side (END_STREAM queued).
    pub(crate) fn send_end(&mut self) {
        self.send_ended = true;
        self.state = match self.state {
            State::Open => State::HalfClosedLocal,
            State::HalfClosedRemote => State::Closed,
            other => other,
        };
    }

    /// The peer may still send DATA or trailers.
    pub(crate) fn can_recv_body(&self) -> bool {
        matches!(self.state, State::Open | State::HalfClosedLocal)
    }

    /// Done: closed and nothing left to send.
    pub(crate) fn is_finished(&self) -> bool {
        self.state == State::Closed && self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(state: State) -> Stream {
        Stream::new(StreamId::new(1), state, 10, RecvWindow::new(10, 10))
    }

    #[test]
    fn half_close_transitions_follow_figure_2() {
        let mut s = stream(State::Open);
        s.recv_end();
        assert_eq!(s.state, State::HalfClosedRemote);
        s.send_end();
        assert_eq!(s.state, State::Closed);

        let mut s = stream(State::Open);
        s.send_end();
        assert_eq!(s.state, State::HalfClosedLocal);
        assert!(s.can_recv_body());
        s.recv_end();
        assert_eq!(s.state, State::Closed);
        assert!(s.is_finished());
    }
}
