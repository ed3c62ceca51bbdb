//! The client side: requests out in order, up to the pipelining depth
//! ahead of their responses, which arrive in the same order (RFC 9112 §9.3).

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};

use super::body::{BodyDecoder, BodyLimits, Decoded};
use super::encode::{self, Framing};
use super::parse;
use super::{Ids, Io, Outgoing};
use crate::close::CloseCause;
use crate::error::{ConnectionError, Http1Error, UserError, Violation};
use crate::event::Event;
use crate::frame::{Reason, StreamId};
use crate::message::{RequestHead, declares_length};
use crate::send_queue::SendQueue;
use crate::trim::Trim;

#[derive(Debug)]
pub(super) struct Client {
    ids: Ids,
    /// Requests whose exchange is not over, oldest first. The first
    /// `started` have been (or are being) written; only the last of those
    /// can still be writing, as messages do not interleave.
    exchanges: VecDeque<Exchange>,
    started: usize,
    /// Started exchanges whose response has not ended: the pipeline depth.
    awaiting: usize,
    read: Read,
    /// How far the head at the front of the input was scanned for its end.
    scanned: usize,
    /// No new request may be sent: we are going away, or the server said it
    /// closes after a response.
    no_new: bool,
    /// The response that ends the connection did not say so beforehand: its
    /// body is delimited by the close, with neither `connection: close` nor
    /// HTTP/1.0 without keep-alive. The server may then have processed the
    /// requests pipelined behind it (see [`Client::end_after_last`]).
    unannounced_close: bool,
}

/// What the input holds next.
#[derive(Debug)]
enum Read {
    Head,
    Body { id: StreamId, decoder: BodyDecoder },
}

#[derive(Debug)]
struct Exchange {
    id: StreamId,
    /// The response has no body whatever its fields say (RFC 9110 §9.3.2).
    head_request: bool,
    /// The method is idempotent (RFC 9110 §9.2.2): the request may be sent
    /// again automatically even if the server may have processed it.
    idempotent: bool,
    /// The head boxed, as HTTP/2 queues it: it is five times the size of
    /// the other items, and the queue and the exchange move as a whole.
    queue: SendQueue<Outgoing<Box<RequestHead>>>,
    framing: Framing,
    /// Everything of the request has been queued.
    send_ended: bool,
    /// The final response has been received completely.
    answered: bool,
    /// The connection ends after this exchange's response: our request or
    /// the response said `connection: close`.
    last: bool,
}

impl Client {
    /// Whether `id` has been given to a request.
    pub(super) fn issued(&self, id: StreamId) -> bool {
        self.ids.issued(id)
    }

    /// No exchange is under way.
    pub(super) fn is_idle(&self) -> bool {
        self.exchanges.is_empty()
    }

    /// Gives back the exchange queue's capacity once it is empty.
    pub(super) fn trim(&mut self) {
        self.exchanges.trim();
    }

    pub(super) fn new() -> Self {
        Client {
            ids: Ids::new(),
            exchanges: VecDeque::new(),
            started: 0,
            awaiting: 0,
            read: Read::Head,
            scanned: 0,
            no_new: false,
            unannounced_close: false,
        }
    }

    pub(super) fn send_request(
        &mut self,
        io: &mut Io,
        head: RequestHead,
        end_stream: bool,
    ) -> Result<StreamId, UserError> {
        if io.closed || self.no_new {
            return Err(UserError::GoingAway);
        }
        if self.exchanges.len() >= io.config.limits.max_queued_streams {
            return Err(UserError::QueueFull);
        }
        let id = self.ids.allocate().ok_or(UserError::StreamIdsExhausted)?;
        let mut queue = SendQueue::default();
        let head_request = head.method.as_ref() == b"HEAD";
        let idempotent = is_idempotent(&head.method);
        let head = io.spares.boxed(head);
        queue.push_back(Outgoing::Head { head, end_stream });
        self.exchanges.push_back(Exchange {
            id,
            head_request,
            idempotent,
            queue,
            framing: Framing::None,
            send_ended: end_stream,
            answered: false,
            last: false,
        });
        // Written when the driver polls, so a `go_away` before then still
        // puts `connection: close` on it.
        Ok(id)
    }

    /// Queues request body data or trailers.
    pub(super) fn send_data(
        &mut self,
        id: StreamId,
        item: Outgoing<Box<RequestHead>>,
    ) -> Result<(), UserError> {
        let ex = self
            .exchanges
            .iter_mut()
            .find(|ex| ex.id == id)
            .ok_or(UserError::UnknownStream(id))?;
        if ex.send_ended {
            return Err(UserError::InvalidState(id));
        }
        ex.send_ended = match &item {
            Outgoing::Data { end_stream, .. } => *end_stream,
            Outgoing::Head { .. } | Outgoing::Trailers(_) => true,
        };
        ex.queue.push_back(item);
        Ok(())
    }

    /// Writes what can go out: the rest of the request being written, then
    /// new requests while the pipeline has room. Runs when the driver polls
    /// output, and after a response or a command that frees the pipeline.
    pub(super) fn flush(&mut self, io: &mut Io) {
        let depth = io.config.http1.max_pipeline.max(1);
        // A response that closes the connection ends the pipeline: what is
        // not written by then is retryable. Only a connection that takes no
        // new request has such an exchange (`last` comes with `no_new`), so
        // others never scan for it; it is looked for once, then kept up as
        // requests start (a scan per request would make a flush of N
        // requests cost N² steps).
        let mut closing = self.no_new && self.exchanges.iter().take(self.started).any(|ex| ex.last);
        loop {
            if let Some(writing) = self
                .started
                .checked_sub(1)
                .and_then(|i| self.exchanges.get_mut(i))
            {
                write_queued(io, writing);
                if !writing.send_ended {
                    break;
                }
            }
            if self.awaiting >= depth || (closing && !self.exchanges.is_empty()) {
                break;
            }
            let last = self.no_new && self.started + 1 == self.exchanges.len();
            let Some(next) = self.exchanges.get_mut(self.started) else {
                break;
            };
            next.last = last;
            closing |= last;
            self.started += 1;
            self.awaiting += 1;
        }
        while self
            .exchanges
            .front()
            .is_some_and(|ex| ex.answered && ex.send_ended && ex.queue.is_empty())
        {
            self.exchanges.pop_front();
            self.started = self.started.saturating_sub(1);
        }
        if self.no_new && self.exchanges.is_empty() {
            io.close(None);
        }
    }

    /// The exchange the next response belongs to: the oldest unanswered,
    /// which must have been written.
    fn response_target(&self) -> Option<usize> {
        self.exchanges
            .iter()
            .take(self.started)
            .position(|ex| !ex.answered)
    }

    pub(super) fn handle_input(&mut self, io: &mut Io, input: &mut BytesMut) {
        let http1 = &io.config.http1;
        let limits = BodyLimits {
            // A client takes whatever body it asked for.
            max_body: u64::MAX,
            max_head_size: http1.max_head_size,
            max_headers: http1.max_headers,
        };
        while !io.closed {
            match &mut self.read {
                Read::Head => {
                    if parse::skip_empty_lines(input) {
                        self.scanned = 0;
                    }
                    if input.is_empty() {
                        break;
                    }
                    // A head with no request waiting is read whole, to
                    // tell a 408 from any other.
                    let at = self.response_target();
                    if let Err(e) = parse::check_response_start(input) {
                        self.fail(io, at, e);
                        break;
                    }
                    let max = limits.max_head_size;
                    let Some(end) = parse::find_head_end(input, &mut self.scanned) else {
                        if input.len() > max {
                            let size = input.len();
                            self.fail(io, at, Http1Error::HeadTooLarge { size, max });
                        }
                        break;
                    };
                    self.scanned = 0;
                    if end > max {
                        self.fail(io, at, Http1Error::HeadTooLarge { size: end, max });
                        break;
                    }
                    let head = input.split_to(end).freeze();
                    io.stats.header_wire_bytes_received += head.len() as u64;
                    match at {
                        Some(at) => self.on_head(io, at, &head),
                        None => {
                            self.on_unsolicited(io, &head);
                            input.clear();
                        }
                    }
                }
                Read::Body { id, decoder } => {
                    let id = *id;
                    match decoder.decode(input, &limits) {
                        Ok(Decoded::Incomplete) => break,
                        Ok(Decoded::Data { data, end }) => {
                            io.data(id, data, end);
                            if end {
                                self.response_done(io);
                            }
                        }
                        Ok(Decoded::End(fields)) => {
                            if fields.is_empty() {
                                io.data(id, Bytes::new(), true);
                            } else {
                                io.emit(Event::Trailers { stream: id, fields });
                            }
                            self.response_done(io);
                        }
                        Err(e) => {
                            let at = self.response_target();
                            self.fail(io, at, e);
                        }
                    }
                }
            }
        }
    }

    /// A complete response head for the exchange at `at`.
    fn on_head(&mut self, io: &mut Io, at: usize, head: &Bytes) {
        let response =
            match parse::parse_response(head, io.config.http1.max_headers, io.spares.fields()) {
                Ok(response) => response,
                Err(e) => return self.fail(io, Some(at), e),
            };
        io.stats.header_bytes_received += response.field_octets;
        let Some(ex) = self.exchanges.get_mut(at) else {
            return;
        };
        let id = ex.id;
        let status = response.head.status;
        if status == 101 {
            // We never offer Upgrade, so no switch is ours to accept.
            return self.fail(io, Some(at), Http1Error::UnrequestedSwitch);
        }
        if (100..200).contains(&status) {
            io.emit(Event::Response {
                stream: id,
                head: response.head,
                end_stream: false,
            });
            return;
        }
        let kind = match response
            .controls
            .response_body(response.http10, status, ex.head_request)
        {
            Ok(kind) => kind,
            Err(e) => return self.fail(io, Some(at), e),
        };
        let decoder = BodyDecoder::new(kind);
        let closes = decoder.as_ref().is_some_and(BodyDecoder::ends_at_close);
        let persistent = response.controls.persistent(response.http10);
        if closes || !persistent {
            // `connection: close`, or HTTP/1.0 without keep-alive (RFC 9112
            // §9.3), tells that the server reads no request after this one;
            // a body that only the close ends tells nothing of the kind.
            self.unannounced_close = persistent;
            ex.last = true;
            self.no_new = true;
            // Only an announced close is the server's word; the other is
            // known when the connection's end comes (`handle_eof`).
            if !persistent {
                io.hint(CloseCause::GoAwayReceived {
                    reason: Reason::NO_ERROR,
                });
            }
        }
        io.emit(Event::Response {
            stream: id,
            head: response.head,
            end_stream: decoder.is_none(),
        });
        match decoder {
            Some(decoder) => self.read = Read::Body { id, decoder },
            None => self.response_done(io),
        }
    }

    /// A complete response head with no request waiting for it. A 408 is
    /// the server's notice that it closes a connection it found idle (RFC
    /// 9110 §15.5.9): an orderly end, its body discarded with the rest of
    /// the input; requests not written yet are retryable. Anything else
    /// answers nothing we asked (RFC 9112 §9.3).
    fn on_unsolicited(&mut self, io: &mut Io, head: &Bytes) {
        let response =
            match parse::parse_response(head, io.config.http1.max_headers, io.spares.fields()) {
                Ok(response) => response,
                Err(e) => return self.fail(io, None, e),
            };
        io.stats.header_bytes_received += response.field_octets;
        let status = response.head.status;
        io.spares.give_fields(response.head.fields);
        if status != 408 {
            return self.fail(io, None, Http1Error::UnexpectedResponse);
        }
        io.hint(CloseCause::GoAwayReceived {
            reason: Reason::NO_ERROR,
        });
        self.end(io, None, Reason::CANCEL, true);
    }

    /// The response being read is complete.
    fn response_done(&mut self, io: &mut Io) {
        self.read = Read::Head;
        let Some(ex) = self
            .response_target()
            .and_then(|at| self.exchanges.get_mut(at))
        else {
            return;
        };
        ex.answered = true;
        self.awaiting = self.awaiting.saturating_sub(1);
        if ex.last {
            self.end_after_last(io);
        } else {
            self.flush(io);
        }
    }

    /// A response that breaks the rules: its exchange is reset with the
    /// rule, and the connection ends.
    fn fail(&mut self, io: &mut Io, at: Option<usize>, error: Http1Error) {
        let violation = Violation::Http1(error.clone());
        if let Some(ex) = at.and_then(|at| self.exchanges.get_mut(at)) {
            io.reset(
                ex.id,
                Reason::PROTOCOL_ERROR,
                false,
                Some(violation.clone()),
            );
            ex.answered = true;
        }
        let error = ConnectionError::Local {
            reason: Reason::PROTOCOL_ERROR,
            violation,
        };
        self.end(io, Some(error), Reason::CANCEL, true);
    }

    /// The connection ends. Requests never written can be retried
    /// elsewhere (`Retryable`); requests written and not answered are lost
    /// (`StreamReset` with `reason`, `remote` as the cause was).
    fn end(&mut self, io: &mut Io, error: Option<ConnectionError>, reason: Reason, remote: bool) {
        for (i, ex) in self.exchanges.drain(..).enumerate() {
            if ex.answered {
                continue;
            }
            if i < self.started {
                io.reset(ex.id, reason, remote, None);
            } else {
                io.emit(Event::Retryable { stream: ex.id });
            }
        }
        self.started = 0;
        self.awaiting = 0;
        self.no_new = true;
        io.close(error);
    }

    /// The response that closes the connection is complete: an orderly
    /// end. Requests pipelined behind it were not processed when the
    /// server announced the close — a server that says `close` must not
    /// process further requests (RFC 9112 §9.6), and one answering in
    /// HTTP/1.0 without keep-alive closes after the current response
    /// (RFC 9112 §9.3) — so they are retryable, like the ones never
    /// written. Without that announcement the server may have processed
    /// them: only idempotent ones may be sent again automatically (RFC 9112
    /// §9.3.1, RFC 9110 §9.2.2); the others are lost as requests are when
    /// the connection closes unannounced.
    fn end_after_last(&mut self, io: &mut Io) {
        if self.unannounced_close {
            let started = self.started;
            let mut index = 0;
            let mut retried = 0;
            self.exchanges.retain(|ex| {
                let written = index < started;
                index += 1;
                if written && !ex.answered && ex.idempotent {
                    io.emit(Event::Retryable { stream: ex.id });
                    retried += 1;
                    return false;
                }
                true
            });
            self.started -= retried;
            let lost = self
                .exchanges
                .iter()
                .take(self.started)
                .any(|ex| !ex.answered);
            let error = lost.then_some(ConnectionError::TransportClosed);
            return self.end(io, error, Reason::CANCEL, true);
        }
        for ex in self.exchanges.drain(..) {
            if !ex.answered {
                io.emit(Event::Retryable { stream: ex.id });
            }
        }
        self.started = 0;
        self.awaiting = 0;
        self.no_new = true;
        io.close(None);
    }

    /// The server closed its side: a response delimited by the close is
    /// complete; one whose framing says more is to come is incomplete (RFC
    /// 9112 §8), a rule broken; anything else unanswered is lost.
    pub(super) fn handle_eof(&mut self, io: &mut Io) {
        if let Read::Body { id, decoder } = &self.read {
            let missing = match decoder {
                BodyDecoder::Close => {
                    io.data(*id, Bytes::new(), true);
                    self.response_done(io);
                    return;
                }
                BodyDecoder::Length { remaining } => Some(*remaining),
                BodyDecoder::Chunked { .. } => None,
            };
            let at = self.response_target();
            return self.fail(io, at, Http1Error::IncompleteMessage { missing });
        }
        let unanswered = self
            .exchanges
            .iter()
            .take(self.started)
            .any(|ex| !ex.answered);
        let error = unanswered.then_some(ConnectionError::TransportClosed);
        self.end(io, error, Reason::CANCEL, true);
    }

    /// Graceful close: requests already made go out and are answered, the
    /// last one says `connection: close` if it has not started yet.
    pub(super) fn go_away(&mut self, io: &mut Io) {
        self.no_new = true;
        self.flush(io);
    }

    /// A request not yet written is dropped; one on the wire can only be
    /// abandoned by closing the connection.
    pub(super) fn reset(&mut self, io: &mut Io, id: StreamId) -> Result<(), UserError> {
        let at = self
            .exchanges
            .iter()
            .position(|ex| ex.id == id)
            .ok_or(UserError::UnknownStream(id))?;
        self.exchanges.remove(at);
        if at < self.started {
            io.hint(CloseCause::Aborted {
                reason: Reason::CANCEL,
            });
            self.started -= 1;
            self.awaiting = self.awaiting.saturating_sub(1);
            self.end(io, None, Reason::CANCEL, false);
        } else {
            self.flush(io);
        }
        Ok(())
    }

    pub(super) fn abort(&mut self, io: &mut Io, reason: Reason) {
        self.end(io, None, reason, false);
    }
}

/// The methods RFC 9110 §9.2.2 defines as idempotent.
fn is_idempotent(method: &[u8]) -> bool {
    matches!(
        method,
        b"GET" | b"HEAD" | b"OPTIONS" | b"TRACE" | b"PUT" | b"DELETE"
    )
}

/// Encodes the exchange's queued request items.
fn write_queued(io: &mut Io, ex: &mut Exchange) {
    while let Some(item) = ex.queue.pop_front() {
        match item {
            Outgoing::Head { head, end_stream } => {
                let buf = io.out.buf();
                encode::put_request_line(buf, &head);
                encode::put_fields(buf, &head.fields, true);
                ex.framing = if declares_length(&head.fields) {
                    Framing::Length
                } else if end_stream {
                    if encode::method_expects_content(&head.method) {
                        encode::put_field(buf, b"content-length", b"0");
                    }
                    Framing::None
                } else {
                    encode::put_field(buf, b"transfer-encoding", b"chunked");
                    Framing::Chunked
                };
                if ex.last {
                    encode::put_field(buf, b"connection", b"close");
                }
                buf.extend_from_slice(b"\r\n");
                io.spares.give_head(head);
            }
            Outgoing::Data { data, end_stream } => io.out.data(ex.framing, data, end_stream),
            Outgoing::Trailers(fields) => {
                io.out.trailers(ex.framing, &fields);
                io.spares.give_fields(fields);
            }
        }
    }
}
