//! The public face of the protocol core: one `Connection` for both roles.

use std::time::Instant;

use bytes::{Bytes, BytesMut};

use crate::config::Config;
use crate::error::UserError;
use crate::event::Event;
use crate::frame::{Reason, StreamId};
use crate::h2::{LocalSettings, Session};
use crate::hpack::HeaderField;
use crate::message::{RequestHead, ResponseHead};

/// Which end of the connection we are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

/// One HTTP/2 connection, client or server, with no I/O of its own.
///
/// The driver (an event loop, a test, a fuzzer) runs this loop:
///
/// 1. **Input**: bytes read from the transport go to [`handle_input`],
///    end of stream to [`handle_eof`], an expired deadline to
///    [`handle_timeout`].
/// 2. **Commands** from the application: [`send_request`], [`send_response`],
///    [`send_data`], [`send_trailers`], [`push_promise`], [`reset`], [`ping`],
///    [`go_away`].
/// 3. **Output**, in this order: [`poll_transmit`] until `None` (write the
///    chunks, ideally in one vectored write), [`poll_timeout`] for the next
///    deadline, [`poll_event`] until `None`.
///
/// Time is always passed in; the connection never reads a clock, so a test
/// can run it on a virtual one. Nothing the peer sends makes it panic: a
/// broken rule becomes RST_STREAM or GOAWAY with the RFC's code, queued for
/// sending, and an event that names the rule.
///
/// [`handle_input`]: Connection::handle_input
/// [`handle_eof`]: Connection::handle_eof
/// [`handle_timeout`]: Connection::handle_timeout
/// [`send_request`]: Connection::send_request
/// [`send_response`]: Connection::send_response
/// [`send_data`]: Connection::send_data
/// [`send_trailers`]: Connection::send_trailers
/// [`push_promise`]: Connection::push_promise
/// [`reset`]: Connection::reset
/// [`ping`]: Connection::ping
/// [`go_away`]: Connection::go_away
/// [`poll_transmit`]: Connection::poll_transmit
/// [`poll_timeout`]: Connection::poll_timeout
/// [`poll_event`]: Connection::poll_event
#[derive(Debug)]
pub struct Connection {
    session: Session,
}

impl Connection {
    /// A client connection: its preface and SETTINGS are the first output.
    pub fn client(config: Config, now: Instant) -> Self {
        Connection {
            session: Session::new(Role::Client, config, now),
        }
    }

    /// A server connection: it expects the client preface first.
    pub fn server(config: Config, now: Instant) -> Self {
        Connection {
            session: Session::new(Role::Server, config, now),
        }
    }

    pub fn role(&self) -> Role {
        self.session.role()
    }

    /// Takes bytes read from the transport. Whole frames are taken off the
    /// front of `input` (their payloads become the `Bytes` of events without
    /// a copy); a partial frame stays in `input` for the next read to extend.
    pub fn handle_input(&mut self, now: Instant, input: &mut BytesMut) {
        self.session.handle_input(now, input);
    }

    /// The peer closed its side of the transport.
    pub fn handle_eof(&mut self, _now: Instant) {
        self.session.handle_eof();
    }

    /// The deadline from [`Connection::poll_timeout`] has passed.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
    }

    /// Client: sends a request; `end_stream` when it has no body. Returns the
    /// stream id at once, even when the stream waits for a concurrency slot.
    pub fn send_request(
        &mut self,
        head: RequestHead,
        end_stream: bool,
    ) -> Result<StreamId, UserError> {
        self.session.send_request(head, end_stream)
    }

    /// Server: sends a response head (interim 1xx heads may come first).
    pub fn send_response(
        &mut self,
        stream: StreamId,
        head: ResponseHead,
        end_stream: bool,
    ) -> Result<(), UserError> {
        self.session.send_response(stream, head, end_stream)
    }

    /// Sends body bytes, without copying them, as flow control allows.
    pub fn send_data(
        &mut self,
        stream: StreamId,
        data: Bytes,
        end_stream: bool,
    ) -> Result<(), UserError> {
        self.session.send_data(stream, data, end_stream)
    }

    /// Sends trailers, ending the stream.
    pub fn send_trailers(
        &mut self,
        stream: StreamId,
        fields: Vec<HeaderField>,
    ) -> Result<(), UserError> {
        self.session.send_trailers(stream, fields)
    }

    /// Server: promises a pushed response to `request`, associated with the
    /// client's stream `parent`; answer the returned stream with
    /// [`Connection::send_response`]. Call before the parent's own response
    /// so the client learns of the push first.
    pub fn push_promise(
        &mut self,
        parent: StreamId,
        request: RequestHead,
    ) -> Result<StreamId, UserError> {
        self.session.push_promise(parent, request)
    }

    /// Resets a stream. A client refuses a pushed stream this way
    /// (`Reason::CANCEL` or `Reason::REFUSED_STREAM`).
    pub fn reset(&mut self, stream: StreamId, reason: Reason) -> Result<(), UserError> {
        self.session.reset(stream, reason)
    }

    /// Sends a PING; `Event::Pong` reports the round-trip time.
    pub fn ping(&mut self, now: Instant) {
        self.session.ping(now);
    }

    /// Begins a graceful shutdown: no new streams, open ones finish, then
    /// `Event::Closed` (RFC 9113 §6.8).
    pub fn go_away(&mut self, now: Instant) {
        self.session.go_away(now);
    }

    /// Advertises new settings mid-connection (SETTINGS). Larger sizes apply
    /// at once; smaller ones once the peer acknowledges them (RFC 9113 §6.5.3).
    pub fn update_settings(&mut self, now: Instant, settings: LocalSettings) {
        self.session.update_settings(now, settings);
    }

    /// The settings in force on our side now.
    pub fn local_settings(&self) -> LocalSettings {
        self.session.local_settings()
    }

    /// Ends the connection at once with GOAWAY(`reason`).
    pub fn abort(&mut self, reason: Reason) {
        self.session.abort(reason);
    }

    /// With `WindowPolicy::Manual`: the application is done with `n` bytes
    /// received on `stream`, so the peer may send that many more.
    pub fn release_capacity(&mut self, stream: StreamId, n: u32) -> Result<(), UserError> {
        if self.session.release_capacity(stream, n) {
            Ok(())
        } else {
            Err(UserError::ReleaseTooLarge)
        }
    }

    /// The next chunk of bytes to write to the transport.
    pub fn poll_transmit(&mut self, _now: Instant) -> Option<Bytes> {
        self.session.poll_transmit()
    }

    /// When [`Connection::handle_timeout`] must be called next, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.session.poll_timeout()
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.session.poll_event()
    }

    /// Over, and everything it had to say has been polled: close the transport.
    pub fn is_closed(&self) -> bool {
        self.session.is_closed()
    }
}
