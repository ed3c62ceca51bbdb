//! The server side: requests in, responses out in request order
//! (RFC 9112 §9.3), each exchange under its own stream id.

use std::collections::VecDeque;
use std::num::NonZeroU32;

use bytes::{Buf, Bytes, BytesMut};

use super::body::{BodyDecoder, BodyLimits, Decoded};
use super::encode::{self, Framing};
use super::parse::BodyKind;
use super::parse::{self, ParsedRequest};
use super::upgrade::{self, SWITCHING_PROTOCOLS};
use super::{Ids, Io, Outgoing, Upgrade};
use crate::close::CloseCause;
use crate::config::Http1Config;
use crate::error::{ConnectionError, Http1Error, UserError, Violation};
use crate::event::{Event, RefusedWith};
use crate::frame::{Reason, StreamId};
use crate::message::{ResponseHead, declares_length};
use crate::send_queue::SendQueue;
use crate::trim::Trim;

/// Requests parsed ahead of their responses (`server_max_pipeline`, at
/// least one so that a request can be read at all).
fn read_ahead(http1: &Http1Config) -> usize {
    http1.server_max_pipeline.max(1)
}

/// Answers waiting to be written, in bytes, past which no further request
/// is read: a client that pipelines requests and does not read what they
/// bring leaves them in its socket instead of making us queue answers,
/// however the driver reads.
const ANSWERS_AHEAD: usize = 256 * 1024;

#[derive(Debug)]
pub(super) struct Server {
    ids: Ids,
    read: Read,
    /// Bytes of empty lines in front of the next request-line. They stay in
    /// the input until the head after them is complete: RFC 9112 §2.2 asks
    /// a server to ignore one, not an unbounded stream of them, so they are
    /// part of the head for the head-read timer (unread input is a head in
    /// progress) and for `Http1Config::max_head_size`. Dropped on arrival,
    /// a line dripped every few seconds would keep the connection open for
    /// ever, neither idle nor reading a head.
    blank: usize,
    /// How far the head after the empty lines was scanned for its end.
    scanned: usize,
    /// Requests whose responses are not completely written, oldest first.
    exchanges: VecDeque<Exchange>,
    /// No request after the current one will be read: the connection
    /// closes once the exchanges are done (RFC 9112 §9.6).
    last_request: bool,
    /// The client will send nothing more: the request in which it asked to
    /// close (RFC 9112 §9.6: no request may follow it) was read whole, or
    /// it closed its side.
    peer_done: bool,
    /// Why the connection ends, for `Event::Closed` once the responses
    /// before the error are out.
    error: Option<ConnectionError>,
    upgrade: Option<Upgrade>,
    /// The connection switched to HTTP/2: this session is done, without
    /// `Event::Closed`.
    upgraded: bool,
}

/// What the input holds next.
#[derive(Debug)]
enum Read {
    Head,
    Body {
        id: StreamId,
        decoder: BodyDecoder,
    },
    /// The CONNECT `id` awaits its answer: what follows its head is either
    /// the tunnel's (a 2xx) or the next request (RFC 9110 §9.3.6), so
    /// nothing is read until the application decides.
    Connect {
        id: StreamId,
    },
    /// The connection is the tunnel of the CONNECT `id`, answered with a
    /// 2xx: every byte the client sends is that stream's Data, until it
    /// closes its side (RFC 9110 §9.3.6, RFC 9112 §6.3 item 2).
    Tunnel {
        id: StreamId,
    },
    /// Nothing more is read.
    Stopped,
}

/// One request and its response.
#[derive(Debug)]
struct Exchange {
    id: StreamId,
    /// The response has no body whatever its fields say (RFC 9110 §9.3.2).
    head_request: bool,
    /// A CONNECT: a 2xx answer opens a tunnel instead of carrying content.
    connect: bool,
    http10: bool,
    /// The request lets the connection persist after this exchange.
    persistent: bool,
    /// `100 Continue` is owed unless a final response comes first
    /// (RFC 9110 §10.1.1).
    expect_continue: bool,
    /// The application has taken the Request event.
    taken: bool,
    /// The request body has been read completely.
    request_done: bool,
    queue: SendQueue<Outgoing<ResponseHead>>,
    /// The size of the whole body the final response was given with
    /// (`Connection::send_reply`), for its head to say.
    length: Option<u64>,
    framing: Framing,
    final_queued: bool,
    final_written: bool,
    /// Everything of the response has been queued.
    send_ended: bool,
    /// The connection closes after this response.
    close_after: bool,
    /// The application no longer owns the exchange: it was never told of
    /// it (an error response to a bad request) or lost it to an error.
    detached: bool,
}

/// An exchange the application sends on, and whether its items are
/// written at once (see [`Server::outlet`]).
struct Outlet<'a> {
    ex: &'a mut Exchange,
    /// At the front of the line, nothing queued before.
    direct: bool,
    /// No request follows this one (see [`write_queued`]).
    closing: bool,
}

impl Outlet<'_> {
    fn put(&mut self, io: &mut Io, item: Outgoing<ResponseHead>) {
        if self.direct {
            write_item(io, self.ex, item, self.closing);
        } else {
            self.ex.queue.push_back(item);
        }
    }
}

impl Exchange {
    /// `connect`: a CONNECT without content, whose 2xx opens the tunnel
    /// (one with content was read as a request like others).
    fn new(id: StreamId, request: &ParsedRequest, request_done: bool, connect: bool) -> Self {
        Exchange {
            id,
            head_request: request.head.method.as_ref() == b"HEAD",
            connect,
            http10: request.http10,
            persistent: request.controls.persistent(request.http10),
            // An HTTP/1.0 client cannot understand 100 (RFC 9110 §10.1.1).
            expect_continue: request.controls.expect_continue && !request.http10 && !request_done,
            taken: false,
            request_done,
            queue: SendQueue::default(),
            length: None,
            framing: Framing::None,
            final_queued: false,
            final_written: false,
            send_ended: false,
            close_after: false,
            detached: false,
        }
    }

    /// Replaces whatever the response held with an error response that
    /// closes the connection.
    fn answer_error(&mut self, error: &Http1Error) {
        let (head, body) = encode::error_response(error.status(), format!("{error}\n"));
        self.queue.clear();
        self.queue.push_back(Outgoing::Head {
            head,
            end_stream: false,
        });
        self.queue.push_back(Outgoing::Data {
            data: body,
            end_stream: true,
        });
        self.expect_continue = false;
        self.final_queued = true;
        self.send_ended = true;
        self.close_after = true;
        self.detached = true;
    }

    /// Everything queued has been written and nothing more will be.
    fn finished(&self) -> bool {
        self.send_ended && self.queue.is_empty()
    }
}

impl Server {
    pub(super) fn new() -> Self {
        Server {
            ids: Ids::new(),
            read: Read::Head,
            blank: 0,
            scanned: 0,
            exchanges: VecDeque::new(),
            last_request: false,
            peer_done: false,
            error: None,
            upgrade: None,
            upgraded: false,
        }
    }

    /// See [`Server::peer_done`](Server).
    pub(super) fn peer_done(&self) -> bool {
        self.peer_done
    }

    pub(super) fn take_upgrade(&mut self) -> Option<Upgrade> {
        self.upgrade.take()
    }

    pub(super) fn handle_input(&mut self, io: &mut Io, input: &mut BytesMut) {
        let http1 = &io.config.http1;
        let limits = BodyLimits {
            max_body: io.config.max_request_body,
            max_head_size: http1.max_head_size,
            max_headers: http1.max_headers,
        };
        loop {
            match &mut self.read {
                Read::Stopped => break,
                Read::Head => {
                    if self.pipeline_full(io) {
                        break;
                    }
                    let blank = parse::empty_lines_len(input, self.blank);
                    if blank > self.blank {
                        self.blank = blank;
                        self.scanned = 0;
                    }
                    let start = input.get(blank..).unwrap_or_default();
                    if let Err(e) = parse::check_request_start(start) {
                        self.reject(io, e);
                        break;
                    }
                    let max = limits.max_head_size;
                    let found = input
                        .get(blank..)
                        .and_then(|after| parse::find_head_end(after, &mut self.scanned));
                    let Some(end) = found else {
                        if input.len() > max {
                            self.reject(io, too_large(input, blank, input.len(), max));
                        }
                        break;
                    };
                    if blank + end > max {
                        self.reject(io, too_large(input, blank, blank + end, max));
                        break;
                    }
                    input.advance(blank);
                    self.blank = 0;
                    self.scanned = 0;
                    let head = input.split_to(end).freeze();
                    io.stats.header_wire_bytes_received += head.len() as u64;
                    self.on_head(io, &head);
                }
                Read::Connect { .. } => break,
                Read::Tunnel { id } => {
                    // What the application sends back waits here while the
                    // client does not read it: no more of the client's
                    // bytes are taken past ANSWERS_AHEAD of it, so a client
                    // that sends and never reads is no longer read from
                    // (the Connection holds the rest, then stops reading).
                    let id = *id;
                    if input.is_empty() || self.pipeline_full(io) {
                        break;
                    }
                    io.data(id, input.split().freeze(), false);
                }
                Read::Body { id, decoder } => {
                    let id = *id;
                    match decoder.decode(input, &limits) {
                        Ok(Decoded::Incomplete) => break,
                        Ok(Decoded::Data { data, end }) => {
                            io.data(id, data, end);
                            if end {
                                self.request_done(id);
                            }
                        }
                        Ok(Decoded::End(fields)) => {
                            if fields.is_empty() {
                                io.data(id, Bytes::new(), true);
                            } else {
                                io.emit(Event::Trailers { stream: id, fields });
                            }
                            self.request_done(id);
                        }
                        Err(e) => {
                            self.body_error(io, id, e);
                            break;
                        }
                    }
                }
            }
        }
        self.flush(io);
    }

    /// A complete request head arrived.
    fn on_head(&mut self, io: &mut Io, head: &Bytes) {
        let http1 = &io.config.http1;
        let fields = io.spares.fields();
        let request = match parse::parse_request(head, http1.max_headers, http1.secure, fields) {
            Ok(request) => request,
            Err(e) => return self.reject(io, e),
        };
        io.stats.header_bytes_received += request.field_octets;
        if self.exchanges.is_empty()
            && let Some(settings) = upgrade::h2c_settings(&request, http1)
        {
            io.out.buf().extend_from_slice(SWITCHING_PROTOCOLS);
            self.upgrade = Some(Upgrade {
                request: request.head,
                settings,
            });
            self.upgraded = true;
            self.read = Read::Stopped;
            return;
        }
        if let BodyKind::Length(size) = request.body
            && size > io.config.max_request_body
        {
            let max = io.config.max_request_body;
            return self.reject(io, Http1Error::BodyTooLarge { size, max });
        }
        let Some(id) = self.ids.allocate() else {
            // 2^30 requests on one connection: end it as if it said close.
            self.last_request = true;
            self.read = Read::Stopped;
            return;
        };
        let decoder = BodyDecoder::new(request.body);
        // A CONNECT without content leaves its stream open: what follows
        // is the tunnel's if the answer opens one (RFC 9110 §9.3.6), as an
        // HTTP/2 CONNECT's stream stays open for its DATA (RFC 9113 §8.5).
        let connect = decoder.is_none() && request.head.method.as_ref() == b"CONNECT";
        let end_stream = decoder.is_none() && !connect;
        let exchange = Exchange::new(id, &request, end_stream, connect);
        if !exchange.persistent {
            // RFC 9112 §9.6: no request after one that asked to close.
            self.last_request = true;
            self.peer_done = end_stream;
            io.hint(CloseCause::GoAwayReceived {
                reason: Reason::NO_ERROR,
            });
        } else if reaches_limit(id, io.config.max_requests) {
            // Its answer says `connection: close`, and what is pipelined
            // behind it stays unread (RFC 9112 §9.6).
            self.last_request = true;
            io.hint(CloseCause::RequestLimit);
        }
        self.exchanges.push_back(exchange);
        let head = io.spares.boxed(request.head);
        io.emit(Event::Request {
            stream: id,
            head,
            end_stream,
        });
        self.read = match decoder {
            Some(decoder) => Read::Body { id, decoder },
            None if connect => Read::Connect { id },
            None => self.next_read(),
        };
    }

    /// What to read after a complete request.
    fn next_read(&self) -> Read {
        if self.last_request {
            Read::Stopped
        } else {
            Read::Head
        }
    }

    fn request_done(&mut self, id: StreamId) {
        if let Some(ex) = self.exchange_mut(id) {
            ex.request_done = true;
            ex.expect_continue = false;
            if !ex.persistent {
                self.peer_done = true;
            }
        }
        self.read = self.next_read();
    }

    /// A bad request head: answered with an error status after the
    /// responses before it, then the connection closes. The application
    /// hears of the request only as `Refused`, as of one HTTP/2 refuses.
    fn reject(&mut self, io: &mut Io, error: Http1Error) {
        self.stop_reading(&error);
        if let Some(id) = self.ids.allocate() {
            let mut ex = Exchange {
                id,
                head_request: false,
                connect: false,
                http10: false,
                persistent: false,
                expect_continue: false,
                taken: true,
                request_done: true,
                queue: SendQueue::default(),
                length: None,
                framing: Framing::None,
                final_queued: false,
                final_written: false,
                send_ended: false,
                close_after: false,
                detached: false,
            };
            ex.answer_error(&error);
            self.exchanges.push_back(ex);
            io.emit(Event::Refused {
                stream: id,
                answer: RefusedWith::Status(error.status()),
                violation: Violation::Http1(error),
            });
        }
        self.flush(io);
    }

    /// A bad request body (a broken chunk, or growing past the limit): the
    /// application loses the exchange (`StreamReset`), and the error status
    /// replaces its response if that has not started on the wire. The
    /// event carries that status, as it is what the client got (there is no
    /// RST_STREAM in HTTP/1.1), but stays a reset, not `Refused`: the
    /// application holds the request.
    fn body_error(&mut self, io: &mut Io, id: StreamId, error: Http1Error) {
        self.stop_reading(&error);
        let mut status = None;
        if let Some(ex) = self.exchange_mut(id) {
            if ex.final_written {
                // Too late for a status: the response stops where it is.
                ex.detached = true;
                ex.send_ended = true;
                ex.queue.clear();
                ex.close_after = true;
            } else {
                ex.answer_error(&error);
                status = Some(error.status());
            }
        }
        io.emit(Event::StreamReset {
            stream: id,
            reason: Reason::PROTOCOL_ERROR,
            remote: false,
            violation: Some(Violation::Http1(error)),
            status,
        });
    }

    fn stop_reading(&mut self, error: &Http1Error) {
        self.read = Read::Stopped;
        self.last_request = true;
        self.error = Some(ConnectionError::Local {
            reason: Reason::PROTOCOL_ERROR,
            violation: Violation::Http1(error.clone()),
        });
    }

    fn exchange_mut(&mut self, id: StreamId) -> Option<&mut Exchange> {
        self.exchanges.iter_mut().find(|ex| ex.id == id)
    }

    /// Whether `id` has been given to a request.
    pub(super) fn issued(&self, id: StreamId) -> bool {
        self.ids.issued(id)
    }

    /// The exchange the application may act on.
    fn owned(&mut self, id: StreamId) -> Result<&mut Exchange, UserError> {
        self.exchange_mut(id)
            .filter(|ex| !ex.detached)
            .ok_or(UserError::UnknownStream(id))
    }

    /// The exchange `id` the application owns, with where its items go:
    /// straight to the output when it is at the front of the line with
    /// nothing queued (a response given in request order, nearly every
    /// one), or to its queue for [`Server::flush`]. Written at once, an
    /// item leaves exactly as the flush that follows every send would have
    /// written it, without being moved into the queue and out again.
    fn outlet(&mut self, id: StreamId) -> Result<Outlet<'_>, UserError> {
        let closing = self.last_request && self.exchanges.len() == 1;
        let at_front = self.exchanges.front().is_some_and(|ex| ex.id == id);
        let ex = self.owned(id)?;
        Ok(Outlet {
            direct: at_front && ex.queue.is_empty(),
            closing,
            ex,
        })
    }

    /// Waiting for a request head it would read now.
    pub(super) fn reading_head(&self, io: &Io) -> bool {
        matches!(self.read, Read::Head) && !self.upgraded && !self.pipeline_full(io)
    }

    /// Requests are waiting for their responses up to the pipelining cap
    /// (`Http1Config::server_max_pipeline`), or answers for the transport
    /// up to [`ANSWERS_AHEAD`]: more input is left unread until some are
    /// answered, or written. A CONNECT waiting for its answer takes
    /// nothing; its tunnel takes input while what goes back is below
    /// `ANSWERS_AHEAD`, whatever the pipelining cap, which counts requests
    /// and has none behind a tunnel.
    pub(super) fn pipeline_full(&self, io: &Io) -> bool {
        match self.read {
            Read::Connect { .. } => true,
            Read::Tunnel { .. } => io.out.len() >= ANSWERS_AHEAD,
            _ => {
                self.exchanges.len() >= read_ahead(&io.config.http1)
                    || io.out.len() >= ANSWERS_AHEAD
            }
        }
    }

    /// No exchange is under way, and no request is being read.
    pub(super) fn is_idle(&self) -> bool {
        self.exchanges.is_empty() && matches!(self.read, Read::Head)
    }

    /// Gives back the exchange queue's capacity once it is empty.
    pub(super) fn trim(&mut self) {
        self.exchanges.trim();
    }

    pub(super) fn request_taken(&mut self, id: StreamId) {
        if let Some(ex) = self.exchange_mut(id) {
            ex.taken = true;
        }
    }

    /// `100 Continue` for the exchange on the wire, if its request asked
    /// for it, the application has seen the request and has not answered
    /// it yet (RFC 9110 §10.1.1).
    pub(super) fn before_transmit(&mut self, io: &mut Io) {
        if let Some(ex) = self.exchanges.front_mut()
            && ex.expect_continue
            && ex.taken
            && !ex.final_queued
        {
            ex.expect_continue = false;
            let buf = io.out.buf();
            encode::put_status_line(buf, 100);
            buf.extend_from_slice(b"\r\n");
        }
    }

    /// Queues a response head and writes what can go.
    pub(super) fn send_response(
        &mut self,
        io: &mut Io,
        id: StreamId,
        head: ResponseHead,
        end_stream: bool,
    ) -> Result<(), UserError> {
        self.queue_response(io, id, head, end_stream, None)?;
        self.flush(io);
        Ok(())
    }

    /// Queues a final head with its whole body (`Connection::send_reply`),
    /// its length known for the head to say, and writes what can go: one
    /// pass over the queues for the two, where a head and then a body
    /// made two.
    pub(super) fn send_reply(
        &mut self,
        io: &mut Io,
        id: StreamId,
        head: ResponseHead,
        body: Bytes,
    ) -> Result<(), UserError> {
        let empty = body.is_empty() || !head.may_have_content();
        self.queue_response(io, id, head, empty, Some(body))?;
        self.flush(io);
        Ok(())
    }

    /// Queues a response head, and after a final one the whole body when
    /// `whole` has it (which it ends unless `end_stream` already did: a
    /// body the head cannot have is dropped).
    fn queue_response(
        &mut self,
        io: &mut Io,
        id: StreamId,
        head: ResponseHead,
        end_stream: bool,
        whole: Option<Bytes>,
    ) -> Result<(), UserError> {
        let mut out = self.outlet(id)?;
        let ex = &mut *out.ex;
        let interim = head.is_informational();
        if !head.is_sendable() {
            return Err(UserError::InvalidStatus(head.status));
        }
        if ex.final_queued || (interim && end_stream) {
            return Err(UserError::InvalidState(id));
        }
        let mut abandon_body = false;
        if interim {
            if head.status == 100 {
                ex.expect_continue = false;
            }
        } else {
            ex.final_queued = true;
            ex.length = whole.as_ref().map(|body| body.len() as u64);
            if ex.expect_continue {
                // Answered before the body was asked for: the client may
                // never send it, so the connection cannot be reused
                // (RFC 9110 §10.1.1).
                ex.expect_continue = false;
                ex.close_after = true;
                abandon_body = true;
            }
        }
        let tunnel = !interim && ex.connect && head.is_success();
        ex.send_ended = end_stream;
        out.put(io, Outgoing::Head { head, end_stream });
        if let Some(data) = whole.filter(|_| !interim && !end_stream) {
            out.ex.send_ended = true;
            out.put(
                io,
                Outgoing::Data {
                    data,
                    end_stream: true,
                },
            );
        }
        if !interim && matches!(self.read, Read::Connect { id: waiting } if waiting == id) {
            if tunnel {
                self.read = Read::Tunnel { id };
            } else {
                // No tunnel: the CONNECT was all of the request, and the
                // connection goes on with the next one.
                io.data(id, Bytes::new(), true);
                self.request_done(id);
            }
        }
        if abandon_body {
            self.last_request = true;
            if matches!(self.read, Read::Body { id: reading, .. } if reading == id) {
                self.read = Read::Stopped;
            }
        }
        Ok(())
    }

    /// Queues body data or trailers.
    pub(super) fn send_body(
        &mut self,
        io: &mut Io,
        id: StreamId,
        item: Outgoing<ResponseHead>,
    ) -> Result<(), UserError> {
        let mut out = self.outlet(id)?;
        if !out.ex.final_queued || out.ex.send_ended {
            return Err(UserError::InvalidState(id));
        }
        out.ex.send_ended = match &item {
            Outgoing::Data { end_stream, .. } => *end_stream,
            Outgoing::Head { .. } | Outgoing::Trailers(_) => true,
        };
        out.put(io, item);
        self.flush(io);
        Ok(())
    }

    /// Writes what the exchanges at the front of the line have queued, in
    /// request order, and ends the connection once nothing is left to do.
    fn flush(&mut self, io: &mut Io) {
        loop {
            let closing = self.last_request && self.exchanges.len() == 1;
            let Some(ex) = self.exchanges.front_mut() else {
                break;
            };
            write_queued(io, ex, closing);
            if ex.close_after {
                self.last_request = true;
                if matches!(self.read, Read::Head) {
                    self.read = Read::Stopped;
                }
            }
            if !ex.finished() {
                break;
            }
            if let Some(done) = self.exchanges.pop_front()
                && done.close_after
            {
                self.cut(io, None);
            }
        }
        if !self.upgraded
            && self.last_request
            && self.exchanges.is_empty()
            && !matches!(self.read, Read::Body { .. })
        {
            self.read = Read::Stopped;
            io.close(self.error.take());
        }
    }

    /// Ends every exchange left, except `except`, with `StreamReset`: the
    /// connection closes before their responses can go out.
    fn cut(&mut self, io: &mut Io, except: Option<StreamId>) {
        for ex in self.exchanges.drain(..) {
            if !ex.detached && Some(ex.id) != except {
                io.reset(ex.id, Reason::CANCEL, false, None);
            }
        }
        self.last_request = true;
        self.read = Read::Stopped;
    }

    /// The client closed its side. Complete requests are still answered (it
    /// may only have half-closed); a request cut short is lost.
    pub(super) fn handle_eof(&mut self, io: &mut Io) {
        if self.upgraded {
            return;
        }
        self.peer_done = true;
        if let Read::Connect { id } | Read::Tunnel { id } = self.read {
            // The client ended its side of the tunnel (or of a CONNECT not
            // yet answered): its stream ends, and ours still may send until
            // the application ends it.
            io.data(id, Bytes::new(), true);
            self.request_done(id);
        } else if let Read::Body { id, .. } = self.read {
            io.reset(id, Reason::CANCEL, true, None);
            if self
                .exchanges
                .back()
                .is_some_and(|ex| ex.id == id && !ex.send_ended)
            {
                self.exchanges.pop_back();
            }
            self.error = Some(ConnectionError::TransportClosed);
        }
        self.read = Read::Stopped;
        self.last_request = true;
        self.flush(io);
    }

    /// Graceful close: no new request is read; the last response says
    /// `connection: close` if it has not started yet.
    pub(super) fn go_away(&mut self, io: &mut Io) {
        self.last_request = true;
        if matches!(self.read, Read::Head) {
            self.read = Read::Stopped;
        }
        self.flush(io);
    }

    /// Closes the connection after the responses that are complete, up to
    /// `id`; the unfinished ones from there on are cut.
    pub(super) fn reset(
        &mut self,
        io: &mut Io,
        id: StreamId,
        reason: Reason,
    ) -> Result<(), UserError> {
        let at = self
            .exchanges
            .iter()
            .position(|ex| ex.id == id && !ex.detached)
            .ok_or(UserError::UnknownStream(id))?;
        let first_unfinished = self.exchanges.iter().position(|ex| !ex.send_ended);
        let cut_at = first_unfinished.map_or(at, |first| first.min(at));
        io.hint(CloseCause::Aborted { reason });
        let cut: Vec<Exchange> = self.exchanges.drain(cut_at..).collect();
        for ex in cut {
            if !ex.detached && ex.id != id {
                io.reset(ex.id, reason, false, None);
            }
        }
        self.last_request = true;
        self.read = Read::Stopped;
        self.flush(io);
        Ok(())
    }

    pub(super) fn abort(&mut self, io: &mut Io, reason: Reason) {
        for ex in self.exchanges.drain(..) {
            if !ex.detached {
                io.reset(ex.id, reason, false, None);
            }
        }
        self.read = Read::Stopped;
        self.last_request = true;
        io.close(None);
    }
}

/// What a head of `size` bytes over `max` is, `input` holding it after
/// `blank` bytes of empty lines: a request-line that alone does not fit
/// (its end not even received within the limit) is a request-target too
/// long to parse, answered 414 (RFC 9112 §3, RFC 9110 §15.5.15); else the
/// header fields are too large, 431 (RFC 6585 §5).
fn too_large(input: &[u8], blank: usize, size: usize, max: usize) -> Http1Error {
    let after = input.get(blank..).unwrap_or_default();
    let line = memchr::memchr(b'\n', after).map_or(after.len(), |lf| lf + 1);
    if blank + line > max {
        Http1Error::RequestLineTooLong {
            size: blank + line,
            max,
        }
    } else {
        Http1Error::HeadTooLarge { size, max }
    }
}

/// Whether the request numbered `id` (1, 3, 5, ... as HTTP/2's would be)
/// is the last one `Config::max_requests` lets a connection take.
fn reaches_limit(id: StreamId, max: Option<NonZeroU32>) -> bool {
    max.is_some_and(|max| id.value().div_ceil(2) >= max.get())
}

/// Encodes the exchange's queued items. `closing`: no request follows this
/// one, so its final response says `connection: close`.
fn write_queued(io: &mut Io, ex: &mut Exchange, closing: bool) {
    while let Some(item) = ex.queue.pop_front() {
        write_item(io, ex, item, closing);
    }
}

/// Encodes one item of the exchange's response.
fn write_item(io: &mut Io, ex: &mut Exchange, item: Outgoing<ResponseHead>, closing: bool) {
    match item {
        // "A server MUST NOT send a 1xx response to an HTTP/1.0
        // client" (RFC 9110 §15.2).
        Outgoing::Head { head, .. } if head.is_informational() && ex.http10 => {}
        Outgoing::Head { head, .. } if head.is_informational() => {
            let buf = io.out.buf();
            encode::put_status_line(buf, head.status);
            encode::put_fields(buf, &head.fields, false);
            buf.extend_from_slice(b"\r\n");
            io.spares.give_fields(head.fields);
        }
        Outgoing::Head { head, end_stream } => {
            write_final_head(io, ex, &head, end_stream, closing);
            io.spares.give_fields(head.fields);
        }
        // A detached exchange's queue holds only the core's own error
        // answer (see `Exchange::answer_error`), counted apart.
        Outgoing::Data { data, end_stream } if ex.detached => {
            let before = io.out.body_bytes();
            io.out.data(ex.framing, data, end_stream);
            io.stats.own_data_bytes_sent += io.out.body_bytes() - before;
        }
        Outgoing::Data { data, end_stream } => io.out.data(ex.framing, data, end_stream),
        Outgoing::Trailers(fields) => {
            io.out.trailers(ex.framing, &fields);
            io.spares.give_fields(fields);
        }
    }
}

/// The final response head, with the framing and persistence fields this
/// layer owns (RFC 9112 §6.1, §6.2, §9.6). An application Content-Length
/// is trusted: body bytes that do not add up to it break the framing, as
/// they would for any sender. A body whose size is known goes by that
/// length; only one streamed in pieces of unknown total is chunked.
fn write_final_head(
    io: &mut Io,
    ex: &mut Exchange,
    head: &ResponseHead,
    end_stream: bool,
    closing: bool,
) {
    let buf = io.out.buf();
    if ex.connect && head.is_success() {
        // "A server MUST NOT send any Transfer-Encoding or Content-Length
        // header fields in a 2xx (Successful) response to CONNECT" (RFC
        // 9110 §9.3.6, §8.6): the connection is the tunnel from here on,
        // its bytes written as given, and it ends when the tunnel does.
        encode::put_status_line(buf, head.status);
        encode::put_fields_without_length(buf, &head.fields);
        buf.extend_from_slice(b"\r\n");
        ex.framing = Framing::Close;
        ex.close_after = true;
        ex.final_written = true;
        return;
    }
    let no_body = ex.head_request || !head.may_have_content();
    let declared = declares_length(&head.fields);
    encode::put_status_line(buf, head.status);
    encode::put_fields(buf, &head.fields, false);
    ex.framing = if no_body {
        // An answer to HEAD may say the size of the GET's content (RFC
        // 9110 §9.3.2, §8.6), which is the body it was given; given none,
        // that size is not known here. A 204 must not say one, a 304
        // cannot know it (§8.6).
        if ex.head_request
            && head.may_have_content()
            && !declared
            && let Some(length) = ex.length.filter(|&n| n > 0)
        {
            encode::put_content_length(buf, length);
        }
        Framing::None
    } else if declared {
        Framing::Length
    } else if let Some(length) = ex.length {
        encode::put_content_length(buf, length);
        Framing::Length
    } else if end_stream {
        encode::put_field(buf, b"content-length", b"0");
        Framing::None
    } else if !ex.http10 {
        encode::put_field(buf, b"transfer-encoding", b"chunked");
        Framing::Chunked
    } else {
        // An HTTP/1.0 client knows no chunked coding (RFC 9112 §6.1): the
        // body ends when we close.
        Framing::Close
    };
    if closing || !ex.persistent || ex.framing == Framing::Close {
        ex.close_after = true;
    }
    if ex.close_after {
        encode::put_field(buf, b"connection", b"close");
    } else if ex.http10 {
        encode::put_field(buf, b"connection", b"keep-alive");
    }
    buf.extend_from_slice(b"\r\n");
    ex.final_written = true;
}
