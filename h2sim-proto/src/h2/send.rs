//! The application's commands and the output they become. Frames are built
//! only when the driver polls, so flow control and the peer's settings apply
//! at the moment bytes leave, and many frames share one buffer.

use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};

use super::control::Queues;
use super::fields;
use super::flow::RecvWindow;
use super::stream::{Input, Outgoing, State, Stream, TurnEnd, transition};
use super::{Session, Shutdown};
use crate::error::{UserError, Violation};
use crate::event::Event;
use crate::frame::{
    self, Frame, FrameDecoder, FrameKind, GoAway, HEADER_LEN, MAX_FRAME_SIZE_LIMIT, PREFACE, Ping,
    Reason, RstStream, Settings, StreamId, WindowUpdate, flags,
};
use crate::hpack::{FieldRef, HeaderField};
use crate::message::{RequestHead, ResponseHead};
use crate::role::Role;

/// The write buffer's size when a turn starts writing.
const WBUF_SIZE: usize = 16 * 1024;

/// Room below which a turn of output starts on a fresh [`WBUF_SIZE`] of
/// write buffer, rather than grow it write by write.
const WBUF_MIN_ROOM: usize = 2 * 1024;

/// A DATA payload up to this long is copied in behind its frame head
/// rather than handed out as a chunk of its own: a turn of small responses
/// then leaves in a few large chunks, so a vectored write takes it in one
/// call instead of one per 64 chunks or so (measured on the h2simple pair,
/// POST 1k: 11% less server CPU per request over tokio); copying a payload
/// this small costs less than the write's per-chunk work it saves.
const COPY_DATA: usize = 2048;

/// Output is handed out in chunks of about this size, so one poll does not
/// build an unbounded buffer while flow control would allow more.
const OUTPUT_BUDGET: usize = 64 * 1024;

impl Session {
    /// Client: queues a request and returns its stream id. It opens at once
    /// if the peer's MAX_CONCURRENT_STREAMS allows, else when a slot frees.
    pub(crate) fn send_request(
        &mut self,
        head: RequestHead,
        end_stream: bool,
    ) -> Result<StreamId, UserError> {
        if self.role != Role::Client {
            return Err(UserError::WrongRole);
        }
        if self.closed || self.peer_goaway.is_some() || self.shutdown != Shutdown::Running {
            return Err(UserError::GoingAway);
        }
        if !head.protocol.is_empty() {
            // RFC 8441 §4: only on CONNECT, and "a client MUST NOT send" it
            // unless the server's SETTINGS allowed it (§3).
            if head.method.as_ref() != b"CONNECT" {
                return Err(UserError::ProtocolWithoutConnect);
            }
            if !self.peer.enable_connect_protocol {
                return Err(UserError::ConnectProtocolNotEnabled);
            }
        }
        if self.waiting_to_open.len() >= self.config.limits.max_queued_streams {
            return Err(UserError::QueueFull);
        }
        self.fits_peer_limit(fields::request_size(&head))?;
        let id = self.store.allocate().ok_or(UserError::StreamIdsExhausted)?;
        let recv = RecvWindow::new(self.stream_recv_initial(), self.stream_recv_initial());
        let mut stream = Stream::new(id, State::Idle, self.peer.initial_window_size, recv);
        stream.known = true;
        stream.head_request = head.method.as_ref() == b"HEAD";
        stream.queue.push_back(Outgoing::Request {
            head: self.spares.boxed(head),
            end_stream,
        });
        self.store.insert(stream);
        self.waiting_to_open.push_back(id);
        self.open_waiting();
        Ok(id)
    }

    /// Opens queued streams of ours while the peer's limit allows.
    ///
    /// While the connection's window is spent, a request whose body is to
    /// follow waits to open, and the streams behind it with it (new stream
    /// ids go out in order, RFC 9113 §5.1.1): its HEADERS alone would be a
    /// write of their own, waking the peer for a request it cannot finish
    /// before the window opens (the peer returns the window for the bodies
    /// it took, not for new streams). It opens when a connection
    /// WINDOW_UPDATE comes, and its HEADERS leave with its first DATA.
    /// A client of 100 POSTs of 1 KiB against a peer with the default
    /// 64 KiB window made every other write over TLS such a write.
    pub(super) fn open_waiting(&mut self) {
        while self.store.active_local < self.peer.max_concurrent_streams {
            let Some(&id) = self.waiting_to_open.front() else {
                break;
            };
            let Some(stream) = self.store.get_mut(id) else {
                self.waiting_to_open.pop_front();
                continue;
            };
            if stream.sends_body() && self.send_window.available() == 0 {
                break;
            }
            self.waiting_to_open.pop_front();
            // Only idle and reserved (local) streams wait, and both may
            // send HEADERS; a stream the table would not open stays shut.
            let Ok(opened) = stream.opened() else {
                continue;
            };
            stream.state = opened;
            self.store.active_local += 1;
            self.make_ready(id);
        }
    }

    /// Server: queues a response head (1xx any number of times, then one
    /// final) on a request or promised stream. A status no client could
    /// take (outside 100-599, or 101: RFC 9113 §8.6) is refused.
    ///
    /// A 2xx to a CONNECT leaves without `content-length` and
    /// `transfer-encoding`: "A server MUST NOT send any Transfer-Encoding
    /// or Content-Length header fields in a 2xx (Successful) response to
    /// CONNECT" (RFC 9110 §9.3.6). They are dropped, not refused, as the
    /// HTTP/1.1 server drops them: the stream becomes the tunnel either
    /// way, and an application that answers CONNECT and GET alike (with
    /// the length of a body it would send) need not tell them apart.
    pub(crate) fn send_response(
        &mut self,
        id: StreamId,
        mut head: ResponseHead,
        end_stream: bool,
    ) -> Result<(), UserError> {
        if self.role != Role::Server {
            return Err(UserError::WrongRole);
        }
        let max = self.peer.max_header_list_size;
        let stream = self
            .store
            .held_mut(id)
            .ok_or(UserError::UnknownStream(id))?;
        let interim = head.is_informational();
        if !head.is_sendable() {
            return Err(UserError::InvalidStatus(head.status));
        }
        if stream.final_head_sent || (interim && end_stream) {
            return Err(UserError::InvalidState(id));
        }
        if stream.connect && head.is_success() {
            head.fields.retain(|f| {
                !f.name.eq_ignore_ascii_case(b"content-length")
                    && !f.name.eq_ignore_ascii_case(b"transfer-encoding")
            });
        }
        // After the stream's own checks: a stream that is gone is
        // `UnknownStream` whatever the head would have been.
        fits_limit(fields::response_size(&head), max)?;
        let next = stream
            .after_queuing(Input::SendHeaders, end_stream)
            .map_err(|_| UserError::InvalidState(id))?;
        if !interim {
            stream.final_head_sent = true;
            stream.sends_no_content = stream.head_request || !head.may_have_content();
        }
        stream
            .queue
            .push_back(Outgoing::Response { head, end_stream });
        if stream.state == State::ReservedLocal {
            // A pushed response opens its stream: it waits for the client's
            // concurrency limit like any stream of ours.
            if !interim && stream.announced {
                self.waiting_to_open.push_back(id);
                self.open_waiting();
            }
            return Ok(());
        }
        stream.state = next;
        self.make_ready(id);
        Ok(())
    }

    /// Queues body bytes; they leave as flow control allows, without a copy.
    pub(crate) fn send_data(
        &mut self,
        id: StreamId,
        data: Bytes,
        end_stream: bool,
    ) -> Result<(), UserError> {
        self.queue(
            id,
            Outgoing::Data { data, end_stream },
            Input::SendData,
            end_stream,
        )
    }

    /// Queues trailers, which end the stream.
    pub(crate) fn send_trailers(
        &mut self,
        id: StreamId,
        fields: Vec<HeaderField>,
    ) -> Result<(), UserError> {
        self.queue(id, Outgoing::Trailers { fields }, Input::SendHeaders, true)
    }

    /// A head of `size` (RFC 9113 §6.5.2) is within the peer's
    /// SETTINGS_MAX_HEADER_LIST_SIZE: one above it would only be refused
    /// (§10.5.1), so the application hears of it instead.
    fn fits_peer_limit(&self, size: usize) -> Result<(), UserError> {
        fits_limit(size, self.peer.max_header_list_size)
    }

    /// Queues body bytes or trailers, after a final head on a server, while
    /// the stream's state lets our side send.
    ///
    /// A response to HEAD has no content (RFC 9110 §9.3.2: the server MUST
    /// NOT send it), nor has a 204 or 304 (§6.4.1), whatever the
    /// application gives, as the HTTP/1.1 server drops it (RFC 9112 §6.3):
    /// only END_STREAM is kept, on an empty DATA frame. Clients reset a
    /// stream whose DATA has a payload there (curl and nghttp with
    /// PROTOCOL_ERROR; RFC 9113 §8.1.1). Trailers follow
    /// content (RFC 9110 §6.5), so a response without any has none: they
    /// end the stream the same way, as HTTP/1.1 has no chunked trailer
    /// section to carry them, and are not held to the peer's header list
    /// limit since they never leave.
    fn queue(
        &mut self,
        id: StreamId,
        mut item: Outgoing,
        input: Input,
        end_stream: bool,
    ) -> Result<(), UserError> {
        let is_server = self.role == Role::Server;
        let max = self.peer.max_header_list_size;
        let stream = self
            .store
            .held_mut(id)
            .ok_or(UserError::UnknownStream(id))?;
        if is_server && !stream.final_head_sent {
            return Err(UserError::InvalidState(id));
        }
        let next = stream
            .after_queuing(input, end_stream)
            .map_err(|_| UserError::InvalidState(id))?;
        if is_server && stream.sends_no_content {
            item = match item {
                Outgoing::Trailers { fields } => {
                    self.spares.give_fields(fields);
                    Outgoing::Data {
                        data: Bytes::new(),
                        end_stream: true,
                    }
                }
                Outgoing::Data { end_stream, .. } => Outgoing::Data {
                    data: Bytes::new(),
                    end_stream,
                },
                other => other,
            };
        }
        // After the stream's own checks, as for a response head.
        if let Outgoing::Trailers { fields } = &item {
            fits_limit(fields::section_size(fields), max)?;
        }
        stream.state = next;
        // An empty DATA frame without END_STREAM says nothing, and peers
        // count such frames toward a flood (CVE-2019-9518): none is sent.
        if matches!(&item, Outgoing::Data { data, end_stream: false } if data.is_empty()) {
            return Ok(());
        }
        stream.queue.push_back(item);
        self.make_ready(id);
        Ok(())
    }

    /// Server: promises a response to `request` on a new stream associated
    /// with the client's stream `parent` (§8.4). Answer the promised stream
    /// with `send_response` like any other.
    pub(crate) fn push_promise(
        &mut self,
        parent: StreamId,
        request: RequestHead,
    ) -> Result<StreamId, UserError> {
        if self.role != Role::Server {
            return Err(UserError::WrongRole);
        }
        if !self.peer.enable_push {
            return Err(UserError::PushDisabled);
        }
        if self.closed || self.peer_goaway.is_some() {
            return Err(UserError::GoingAway);
        }
        let parent_ok = self.store.held(parent).is_some_and(|s| {
            s.id.is_client_initiated() && transition(s.state, Input::SendPushPromise).is_ok()
        });
        if !parent_ok {
            return Err(UserError::PushDisabled);
        }
        self.fits_peer_limit(fields::request_size(&request))?;
        let promised = self.store.allocate().ok_or(UserError::StreamIdsExhausted)?;
        let recv = RecvWindow::new(self.stream_recv_initial(), self.stream_recv_initial());
        let mut stream = Stream::new(
            promised,
            State::ReservedLocal,
            self.peer.initial_window_size,
            recv,
        );
        stream.known = true;
        stream.final_head_received = true;
        stream.head_request = request.method.as_ref() == b"HEAD";
        self.store.insert(stream);
        self.control
            .queues()
            .promises
            .push_back((parent, promised, request));
        Ok(promised)
    }

    /// Resets a stream (RST_STREAM), dropping whatever it still had to send.
    pub(crate) fn reset(&mut self, id: StreamId, reason: Reason) -> Result<(), UserError> {
        self.store.held(id).ok_or(UserError::UnknownStream(id))?;
        self.cut(id, reason)?;
        self.stream_gone();
        Ok(())
    }

    /// `reset` up to the stream's removal. What follows from that (see
    /// `stream_gone`) is the caller's, after it has told the application
    /// what it has to about the stream.
    fn cut(&mut self, id: StreamId, reason: Reason) -> Result<(), UserError> {
        let local = self.is_local(id);
        let stream = self
            .store
            .remove(id, local)
            .ok_or(UserError::UnknownStream(id))?;
        self.waiting_to_open.retain(|&w| w != id);
        self.drop_queued_events(id);
        if stream.announced {
            self.control.queues().resets.push_back((id, reason));
            self.store.reset_locally.insert(id);
        } else {
            // The peer never heard of it: drop it without a word, and its
            // promise with it.
            self.control.retain_promises(|promised| promised != id);
        }
        Ok(())
    }

    /// A stream left the store: a waiting one may open in its place, and a
    /// connection going away may be done. The application hears of the
    /// stream first, so that nothing about it follows the connection's
    /// `Closed`.
    pub(super) fn stream_gone(&mut self) {
        self.open_waiting();
        self.maybe_finish();
    }

    /// The application reset `id`: it hears nothing more of it, not even
    /// what arrived before the reset and is still queued (the pushed
    /// response read with its promise, say). The DATA those events carried
    /// is given back to the connection window, as polling them would have.
    fn drop_queued_events(&mut self, id: StreamId) {
        let mut unread: u32 = 0;
        self.events.retain(|event| match event {
            Event::Data { stream, data, .. } if *stream == id => {
                let n = u32::try_from(data.len()).unwrap_or(u32::MAX);
                unread = unread.saturating_add(n);
                false
            }
            Event::Response { stream, .. }
            | Event::Trailers { stream, .. }
            | Event::StreamReset { stream, .. }
            | Event::Retryable { stream }
            | Event::PushPromise {
                promised: stream, ..
            } => *stream != id,
            _ => true,
        });
        if unread > 0 {
            self.release(id, unread);
        }
    }

    /// Sends a PING; its acknowledgement comes back as `Event::Pong`.
    pub(crate) fn ping(&mut self, now: Instant) {
        self.ping_counter += 1;
        let payload = self.ping_counter.to_be_bytes();
        self.control.ping(payload, now);
    }

    /// Puts a stream with something to send at the back of the ready list
    /// (when [`Stream::join_ready`] lets it).
    pub(super) fn make_ready(&mut self, id: StreamId) {
        if self.store.get_mut(id).is_some_and(Stream::join_ready) {
            self.ready.push_back(id);
        }
    }

    /// Streams blocked by the connection's window, woken in order while
    /// the window has room for their next DATA frame. Waking all of them on
    /// every connection WINDOW_UPDATE had all but the first few block again
    /// at once: with a peer that returns the window a frame at a time, each
    /// update cost a pass over every blocked stream (10 connections x 100
    /// POSTs: a quarter of the client's time in re-queueing).
    pub(super) fn wake_conn_blocked(&mut self) {
        let max_frame = self.peer.max_frame_size;
        let mut room = self.send_window.available();
        while room > 0 {
            let Some(id) = self.conn_blocked.pop_front() else {
                break;
            };
            let next = self.store.get(id).map_or(0, |s| match s.queue.front() {
                Some(Outgoing::Data { data, .. }) => s.frame_allowance(data.len(), max_frame),
                _ => 0,
            });
            room = room.saturating_sub(next.max(1));
            self.make_ready(id);
        }
    }

    /// Every stream with something to send, after the peer raised windows.
    pub(super) fn wake_all(&mut self) {
        for id in self.store.ids() {
            self.make_ready(id);
        }
        self.conn_blocked.clear();
    }

    /// Forgets a finished stream and lets a waiting one open.
    pub(super) fn remove_stream(&mut self, id: StreamId) {
        let local = self.is_local(id);
        self.store.remove(id, local);
        self.stream_gone();
    }

    /// The next chunk of bytes to write, or None when there is nothing.
    pub(crate) fn poll_transmit(&mut self, now: Instant) -> Option<Bytes> {
        if self.out.is_empty() {
            self.client_goaway_when_done(now);
            self.build_output();
        }
        let Some(chunk) = self.out.pop_front() else {
            // The turn's output is all out: the write buffer goes with it
            // (freed once the transport has written that output), so a
            // connection between turns holds none, and the next turn, on
            // this connection or another, takes what malloc just freed.
            self.wbuf = BytesMut::new();
            return None;
        };
        if self.config.trace_frames {
            self.trace_sent(&chunk);
        }
        Some(chunk)
    }

    /// Reads our own output back into frames for the trace: a second
    /// decoder over a copy, so the send path stays as it is when tracing is off.
    fn trace_sent(&mut self, chunk: &Bytes) {
        let trace = self.sent_trace.get_or_insert_with(|| {
            Box::new((
                FrameDecoder::new(MAX_FRAME_SIZE_LIMIT),
                BytesMut::new(),
                self.role == Role::Client,
            ))
        });
        trace.1.extend_from_slice(chunk);
        if trace.2 {
            if trace.1.len() < PREFACE.len() {
                return;
            }
            let _ = trace.1.split_to(PREFACE.len());
            trace.2 = false;
        }
        while let Ok(Some(frame)) = trace.0.decode(&mut trace.1) {
            self.events.push_back(Event::Frame {
                outgoing: true,
                frame,
            });
        }
    }

    /// Room for `n` more bytes in the write buffer, asked for in one piece
    /// of at least `size` and never by growing it: what it holds goes out
    /// as a chunk first, so nothing is copied to a larger allocation. (When
    /// `BytesMut` reuses its allocation in place it grants exactly the room
    /// asked for, so leaving it to each write's reserve of a few bytes would
    /// make every later write reserve again, and allocate anew while output
    /// split off the buffer is still held.)
    fn wbuf_room(&mut self, n: usize, size: usize) {
        if self.wbuf.capacity() - self.wbuf.len() < n {
            self.flush_wbuf();
            self.wbuf.reserve(n.max(size));
        }
    }

    fn flush_wbuf(&mut self) {
        if !self.wbuf.is_empty() {
            self.out.push_back(self.wbuf.split().freeze());
        }
    }

    fn build_output(&mut self) {
        self.wbuf_room(WBUF_MIN_ROOM, WBUF_SIZE);
        if self.preface_owed {
            self.preface_owed = false;
            if self.role == Role::Client {
                self.wbuf.extend_from_slice(PREFACE);
            }
        }
        self.build_control();
        // A server sends no stream frames before the client's preface. Only
        // an h2c upgrade has a stream before it (stream 1, the upgrading
        // request): its answer waits for the preface, which RFC 7540 §3.2
        // has the client send as soon as it reads the 101. A client that
        // reads the 101 and the HTTP/2 bytes behind it in one read may hand
        // only part of them to its HTTP/2 side (JDK 17's HttpClient loses
        // what follows its first 16 KiB, a response cut mid-frame); what
        // comes after the preface it reads as HTTP/2 from the start. The
        // cost is one round trip before stream 1's answer.
        if !self.closed && self.preface_received {
            self.build_streams();
        }
        self.flush_wbuf();
    }

    /// Control frames first: they are small and the peer may be waiting on
    /// them. A server's PINGs go after its GOAWAYs: a graceful shutdown's
    /// PING times the round trip that follows the GOAWAY (RFC 9113 §6.8),
    /// so its answer proves the client saw the GOAWAY. A client's go
    /// before: its GOAWAY is the last frame it sends (see
    /// `client_goaway_when_done`). After an error GOAWAY nothing is read,
    /// so no PING goes out at all.
    fn build_control(&mut self) {
        let is_client = self.role == Role::Client;
        if let Some(q) = self.control.existing() {
            while let Some(settings) = q.settings.pop_front() {
                Frame::Settings(settings.frame(is_client)).encode(&mut self.wbuf);
            }
        }
        for _ in 0..std::mem::take(&mut self.settings_acks_owed) {
            Frame::Settings(Settings {
                ack: true,
                values: Vec::new(),
            })
            .encode(&mut self.wbuf);
        }
        if let Some(q) = self.control.existing() {
            while let Some(payload) = q.ping_acks.pop_front() {
                Frame::Ping(Ping { ack: true, payload }).encode(&mut self.wbuf);
            }
        }
        while let Some((stream_id, increment)) = self.window_updates.pop_front() {
            Frame::WindowUpdate(WindowUpdate {
                stream_id,
                increment,
            })
            .encode(&mut self.wbuf);
        }
        let Some(q) = self.control.existing() else {
            return;
        };
        while let Some((stream_id, reason)) = q.resets.pop_front() {
            Frame::RstStream(RstStream { stream_id, reason }).encode(&mut self.wbuf);
        }
        if self.closed {
            q.pings.clear();
        }
        // PINGs before GOAWAYs, whichever side we are: Python's `h2` and
        // Ruby's `http-2` close their side on a GOAWAY they receive and
        // take any later frame for a PROTOCOL_ERROR, and a server's
        // graceful shutdown sends a PING with its first GOAWAY (§6.8).
        // Written together, a peer that reads them in one go still sees
        // the GOAWAY before its answer to the PING leaves; one that opens
        // a stream between the two finds it above the final GOAWAY's last
        // stream, which it may retry (§6.8).
        encode_pings(q, &mut self.wbuf);
        while let Some((last_stream_id, reason, debug_data)) = q.goaways.pop_front() {
            Frame::GoAway(GoAway {
                last_stream_id,
                reason,
                debug_data,
            })
            .encode(&mut self.wbuf);
        }
    }

    /// Stream frames, round-robin: each turn a stream writes its head frames
    /// and at most one DATA frame, then goes to the back of the line.
    fn build_streams(&mut self) {
        self.write_promises();
        let mut budget = OUTPUT_BUDGET;
        while budget > 0 {
            if self.ready.is_empty() {
                // A woken stream may have sent less than its wake-up
                // counted on: what room is left goes to the next ones.
                self.wake_conn_blocked();
            }
            let Some(id) = self.ready.pop_front() else {
                break;
            };
            let (written, end) = self.write_stream_turn(id);
            budget = budget.saturating_sub(written);
            match end {
                TurnEnd::Finished => self.remove_stream(id),
                TurnEnd::OwnAnswerSent => self.end_own_answer(id),
                TurnEnd::Live | TurnEnd::Gone => {}
            }
        }
    }

    /// The core's own answer (a 431, a 413) is out while the client is
    /// still sending: RST_STREAM(NO_ERROR) tells it that it may stop
    /// (RFC 9113 §8.1). Unlike the application's reset, this keeps the
    /// stream's events still queued: a body taken back from the
    /// application reaches it, then its `StreamReset`.
    fn end_own_answer(&mut self, id: StreamId) {
        if self.store.remove(id, self.is_local(id)).is_some() {
            self.control
                .queues()
                .resets
                .push_back((id, Reason::NO_ERROR));
            self.store.reset_locally.insert(id);
            self.stream_gone();
        }
    }

    /// Queues the core's own answer on `id`, a request stream the
    /// application does not hold: `status`, and for a `violation` that
    /// words it, a line saying why, as the HTTP/1.1 server's own answers
    /// have. It ends our side of the stream; the rest is `end_own_answer`'s
    /// once it is written.
    pub(super) fn queue_own_answer(&mut self, id: StreamId, status: u16, why: &Violation) {
        let Some(stream) = self.store.get_mut(id) else {
            return;
        };
        let body = if status == 431 {
            // A 431 is its head alone, as it has always been here: the
            // status names what to shrink.
            Bytes::new()
        } else {
            Bytes::from(format!("{why}\n"))
        };
        let mut head = ResponseHead::new(status);
        if !body.is_empty() {
            head = head.field("content-type", "text/plain");
        }
        let head = head.field("content-length", body.len().to_string());
        stream.final_head_sent = true;
        stream.sends_no_content = false;
        // Our side ends with the answer, whatever it was before: the
        // application's queued END_STREAM, if any, went with its queue.
        stream.state = match stream.state {
            State::Open => State::HalfClosedLocal,
            State::HalfClosedRemote => State::Closed,
            other => other,
        };
        let end_stream = body.is_empty();
        stream
            .queue
            .push_back(Outgoing::Response { head, end_stream });
        if !end_stream {
            stream.queue.push_back(Outgoing::Data {
                data: body,
                end_stream: true,
            });
        }
        self.make_ready(id);
    }

    /// PUSH_PROMISEs, in the order their ids were taken, ahead of stream
    /// frames so a promise precedes the parent's response (§8.4.1).
    fn write_promises(&mut self) {
        while let Some((parent, promised, head)) = self.control.pop_promise() {
            // The parent must still be open on our side: promised before
            // its END_STREAM went out (§6.6).
            let parent_open = self.store.get(parent).is_some_and(|p| {
                transition(p.state, Input::SendPushPromise).is_ok() || !p.queue.is_empty()
            });
            let too_large = self.fits_peer_limit(fields::request_size(&head)).is_err();
            if !self.peer.enable_push || !parent_open || too_large {
                // The client turned push off (§6.5.2), or lowered its
                // MAX_HEADER_LIST_SIZE below the promised request since it
                // was queued, or the parent ended: the promise cannot be
                // made, and the peer never heard of it.
                if self.store.remove(promised, true).is_some() {
                    self.events.push_back(Event::StreamReset {
                        stream: promised,
                        reason: Reason::REFUSED_STREAM,
                        remote: false,
                        violation: None,
                        status: None,
                    });
                    self.stream_gone();
                }
                continue;
            }
            self.write_block(
                parent,
                Some(promised),
                fields::request_section(&head),
                false,
            );
            if let Some(pushed) = self.store.get_mut(promised) {
                pushed.announced = true;
                if pushed.final_head_sent {
                    self.waiting_to_open.push_back(promised);
                    self.open_waiting();
                }
            }
        }
    }

    /// A head queued before the peer lowered its MAX_HEADER_LIST_SIZE below
    /// it is not sent (the queue-time check is `fits_peer_limit`): the
    /// stream is reset, with RST_STREAM(CANCEL) if the peer knows of it (a
    /// request never written just goes), and the application is told.
    fn drop_oversized(&mut self, id: StreamId) {
        if self.cut(id, Reason::CANCEL).is_ok() {
            self.events.push_back(Event::StreamReset {
                stream: id,
                reason: Reason::CANCEL,
                remote: false,
                violation: None,
                status: None,
            });
            self.stream_gone();
        }
    }

    /// One turn of one stream, taken off the ready list; returns the bytes
    /// written and where the turn left the stream, read while the stream is
    /// at hand so that the send loop needs no lookup of its own.
    fn write_stream_turn(&mut self, id: StreamId) -> (usize, TurnEnd) {
        let max_frame = self.peer.max_frame_size;
        let max_list = self.peer.max_header_list_size;
        let mut written = 0;
        loop {
            let Some(stream) = self.store.get_mut(id) else {
                return (written, TurnEnd::Gone);
            };
            stream.ready = false;
            // RFC 9110 §10.1.1: a request that expects 100-continue gets
            // either a final answer at once or a 100. The application has
            // seen the request by this turn; if it has not answered, and
            // the client has not sent content without waiting, the 100
            // goes first, written as any interim head.
            if std::mem::take(&mut stream.expects_continue)
                && !stream.final_head_sent
                && stream.received_len == 0
            {
                stream.queue.push_front(Outgoing::Response {
                    head: ResponseHead::new(100),
                    end_stream: false,
                });
            }
            let Some(item) = stream.queue.pop_front() else {
                return (written, stream.turn_end());
            };
            if max_list != u32::MAX && item.section_size().is_some_and(|n| n > max_list as usize) {
                // Reset, and so forgotten (the stream was live: the reset
                // finds it).
                self.drop_oversized(id);
                return (written, TurnEnd::Gone);
            }
            let start = self.wbuf.len();
            match item {
                Outgoing::Request { head, end_stream } => {
                    stream.announced = true;
                    self.write_block(id, None, fields::request_section(&head), end_stream);
                    self.spares.give_head(head);
                }
                Outgoing::Response { head, end_stream } => {
                    let status = fields::status_bytes(head.status);
                    let block = std::iter::once(FieldRef::new(&fields::STATUS, &status))
                        .chain(head.fields.iter().map(FieldRef::from));
                    self.write_block(id, None, block, end_stream);
                    self.spares.give_fields(head.fields);
                }
                Outgoing::Trailers { fields } => {
                    self.write_block(id, None, fields.iter().map(FieldRef::from), true);
                    self.spares.give_fields(fields);
                }
                Outgoing::Data {
                    mut data,
                    end_stream,
                } => {
                    let allowed = stream
                        .frame_allowance(data.len(), max_frame)
                        .min(self.send_window.available());
                    if allowed == 0 && !data.is_empty() {
                        // Blocked: by the stream's window (a WINDOW_UPDATE on it
                        // wakes it) or the connection's (any stream-0 update).
                        stream.queue.push_front(Outgoing::Data { data, end_stream });
                        if stream.send_window.available() > 0 {
                            self.conn_blocked.push_back(id);
                        }
                        return (written, TurnEnd::Live);
                    }
                    let chunk = data.split_to(allowed as usize);
                    let last = data.is_empty();
                    stream.send_window.consume(allowed);
                    self.send_window.consume(allowed);
                    if !last {
                        stream.queue.push_front(Outgoing::Data { data, end_stream });
                    }
                    // One DATA frame per turn keeps streams fair: a stream
                    // with more goes to the back of the ready list.
                    if stream.join_ready() {
                        self.ready.push_back(id);
                    }
                    let end = stream.turn_end();
                    frame::encode_data_head(id, allowed, end_stream && last, &mut self.wbuf);
                    self.stats.data_bytes_sent += u64::from(allowed);
                    // A stream the application does not hold carries only
                    // the core's own answer (see `Stream::known`).
                    if !stream.known {
                        self.stats.own_data_bytes_sent += u64::from(allowed);
                    }
                    if chunk.len() <= COPY_DATA {
                        // A turn that fills its buffer with payloads is a
                        // busy one: the next buffer holds a whole turn, so
                        // the turn leaves in one or two large chunks.
                        self.wbuf_room(chunk.len(), OUTPUT_BUDGET);
                        self.wbuf.extend_from_slice(&chunk);
                    } else {
                        self.flush_wbuf();
                        self.out.push_back(chunk);
                    }
                    written += HEADER_LEN + allowed as usize;
                    return (written, end);
                }
            }
            written += self.wbuf.len().saturating_sub(start);
        }
    }

    /// Encodes a field block straight into the output buffer behind a reserved
    /// frame header, so the common case (the block fits one frame) copies
    /// nothing; a larger block is re-framed as HEADERS plus CONTINUATIONs.
    fn write_block<'a>(
        &mut self,
        id: StreamId,
        promised: Option<StreamId>,
        fields: impl Iterator<Item = FieldRef<'a>>,
        end_stream: bool,
    ) {
        let max_frame = self.peer.max_frame_size;
        let (wbuf, encoder, stats) = (&mut self.wbuf, &mut self.hpack_encoder, &mut self.stats);
        let start = wbuf.len();
        let prefix = if promised.is_some() { 4 } else { 0 };
        wbuf.put_bytes(0, HEADER_LEN + prefix);
        stats.header_bytes_sent += encoder.encode_refs(fields, wbuf) as u64;
        let payload = wbuf.len() - start - HEADER_LEN;
        stats.header_wire_bytes_sent += (payload - prefix) as u64;
        if let Ok(len) = u32::try_from(payload)
            && len <= max_frame
        {
            let (kind, mut flags) = match promised {
                Some(_) => (FrameKind::PushPromise, flags::END_HEADERS),
                None => (FrameKind::Headers, flags::END_HEADERS),
            };
            if end_stream && promised.is_none() {
                flags |= flags::END_STREAM;
            }
            let [_, l0, l1, l2] = len.to_be_bytes();
            let [s0, s1, s2, s3] = id.value().to_be_bytes();
            wbuf[start..start + HEADER_LEN].copy_from_slice(&[
                l0,
                l1,
                l2,
                u8::from(kind),
                flags,
                s0,
                s1,
                s2,
                s3,
            ]);
            if let Some(promised) = promised {
                let at = start + HEADER_LEN;
                wbuf[at..at + 4].copy_from_slice(&promised.value().to_be_bytes());
            }
            return;
        }
        let block = wbuf.split_off(start + HEADER_LEN + prefix).freeze();
        wbuf.truncate(start);
        match promised {
            Some(promised) => frame::encode_push_promise(id, promised, &block, max_frame, wbuf),
            None => frame::encode_headers(id, &block, end_stream, max_frame, wbuf),
        }
    }
}

/// A head of `size` is within a SETTINGS_MAX_HEADER_LIST_SIZE of `max`.
fn fits_limit(size: usize, max: u32) -> Result<(), UserError> {
    let max = max as usize;
    if size > max {
        return Err(UserError::HeaderListTooLarge { size, max });
    }
    Ok(())
}

/// Our PINGs queued, into the write buffer.
fn encode_pings(q: &mut Queues, wbuf: &mut BytesMut) {
    while let Some(payload) = q.pings.pop_front() {
        Frame::Ping(Ping {
            ack: false,
            payload,
        })
        .encode(wbuf);
    }
}

#[cfg(test)]
mod tests {
    use bytes::{Bytes, BytesMut};

    use crate::frame::{self, Frame, StreamId, WindowUpdate};
    use crate::pair::Pair;
    use crate::{Config, ConnectionError, Event, Reason, RequestHead, ResponseHead, Violation};

    /// A client that refuses a push (RFC 9113 §8.4.2) on hearing of it hears
    /// nothing more of that stream, even when the pushed response arrived in
    /// the same read as the promise and its events were already queued; the
    /// DATA those events carried goes back to the connection window.
    /// (Found by the `client_connection` fuzz target.)
    #[test]
    fn events_queued_for_a_stream_the_application_resets_are_dropped() {
        // A connection window of the default 65,535 (RFC 9113 §6.9.2).
        let client = Config {
            connection_window_size: 65_535,
            ..Config::default()
        };
        let mut pair = Pair::new(client, Config::default(), 0);
        pair.connect();
        let head = RequestHead::new("GET", "http", "fuzz", "/");
        let parent = pair.client.send_request(head, true).unwrap();
        pair.drive();
        pair.server_events();
        let pushed = RequestHead::new("GET", "http", "fuzz", "/pushed");
        let promised = pair.server.push_promise(parent, pushed).unwrap();
        pair.server
            .send_response(promised, ResponseHead::new(200), false)
            .unwrap();
        // Not ended: the stream is still open when the client resets it.
        let body = Bytes::from(vec![b'x'; 40_000]);
        pair.server.send_data(promised, body, false).unwrap();
        pair.server
            .send_response(parent, ResponseHead::new(204), true)
            .unwrap();
        pair.drive();

        let first = pair.client.poll_event();
        assert!(
            matches!(first, Some(Event::PushPromise { promised: p, .. }) if p == promised),
            "{first:?}"
        );
        pair.client.reset(promised, Reason::CANCEL).unwrap();
        let rest = pair.client_events();
        let on_promised: Vec<_> = rest
            .iter()
            .filter(|e| {
                matches!(e,
                    Event::Response { stream, .. } | Event::Data { stream, .. }
                        if *stream == promised)
            })
            .collect();
        assert!(
            on_promised.is_empty(),
            "{} events on the reset stream",
            on_promised.len()
        );
        assert!(
            rest.iter()
                .any(|e| matches!(e, Event::Response { stream, .. } if *stream == parent))
        );
        // The 40,000 bytes dropped are the connection's again: two more
        // such downloads fit in the default 65,535 window only if they are.
        for _ in 0..2 {
            let head = RequestHead::new("GET", "http", "fuzz", "/again");
            let again = pair.client.send_request(head, true).unwrap();
            pair.drive();
            pair.server_events();
            pair.server
                .send_response(again, ResponseHead::new(200), false)
                .unwrap();
            let body = Bytes::from(vec![b'y'; 40_000]);
            pair.server.send_data(again, body, true).unwrap();
            pair.drive();
            let received: usize = pair
                .client_events()
                .iter()
                .map(|e| match e {
                    Event::Data { data, .. } => data.len(),
                    _ => 0,
                })
                .sum();
            assert_eq!(received, 40_000);
        }
    }

    /// A response on a request whose HEADERS we have not written yet is on a
    /// stream idle to the server, which cannot know it: a connection error
    /// PROTOCOL_ERROR (RFC 9113 §5.1), not a response the client takes.
    /// (Found by the `client_connection` fuzz target, where a GOAWAY then
    /// reported the answered request retryable.)
    #[test]
    fn a_response_on_a_request_not_yet_written_is_a_protocol_error() {
        let mut pair = Pair::with_defaults(0);
        pair.connect();
        let head = RequestHead::new("GET", "http", "fuzz", "/");
        let stream = pair.client.send_request(head, true).unwrap();
        assert_eq!(stream, StreamId::new(1));
        // `:status: 200` from the static table (RFC 7541 Appendix A).
        let mut wire = BytesMut::new();
        frame::encode_headers(stream, &[0x88], true, 16_384, &mut wire);
        let now = pair.now;
        pair.client.handle_input(now, &mut wire);
        let events = pair.client_events();
        assert!(
            !events.iter().any(|e| matches!(e, Event::Response { .. })),
            "{events:?}"
        );
        assert!(matches!(
            pair.client.error(),
            Some(ConnectionError::Local {
                reason: Reason::PROTOCOL_ERROR,
                violation: Violation::FrameOnIdleStream { .. },
            })
        ));
    }

    /// Sends `n` GETs and returns the streams the server heard them on.
    fn requests(pair: &mut Pair, n: usize) -> Vec<StreamId> {
        for _ in 0..n {
            let head = RequestHead::new("GET", "http", "a", "/");
            pair.client.send_request(head, true).unwrap();
        }
        pair.drive();
        pair.server_events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Request { stream, .. } => Some(stream),
                _ => None,
            })
            .collect()
    }

    /// The write buffer is held only while a turn's output is built: the
    /// output handed out, the buffer goes with it (freed once the transport
    /// has written that output), whether streams are still open or not. A
    /// thousand connections each waiting on one response then hold no
    /// write buffer between turns, and their turns reuse what malloc just
    /// freed.
    #[test]
    fn the_write_buffer_goes_with_its_turns_output() {
        let mut pair = Pair::with_defaults(0);
        pair.connect();
        let wbuf = |pair: &Pair| pair.server.h2_session().map(|s| s.wbuf.capacity());
        let responses = |pair: &mut Pair| {
            pair.client_events()
                .iter()
                .filter(|e| matches!(e, Event::Response { .. }))
                .count()
        };
        // One stream stays open throughout, its response head sent.
        let [open] = requests(&mut pair, 1)[..] else {
            panic!("one request")
        };
        pair.server
            .send_response(open, ResponseHead::new(200), false)
            .unwrap();
        pair.drive();
        assert_eq!(responses(&mut pair), 1);
        assert_eq!(wbuf(&pair), Some(0), "given back with a stream open");

        // Small turns, and a busy one (20 bodies, past the buffer's size).
        for count in [1, 1, 20] {
            let streams = requests(&mut pair, count);
            assert_eq!(streams.len(), count);
            for stream in streams {
                let body = Bytes::from(vec![b'x'; 1024]);
                pair.server
                    .send_response(stream, ResponseHead::new(200), false)
                    .unwrap();
                pair.server.send_data(stream, body, true).unwrap();
            }
            pair.drive();
            assert_eq!(responses(&mut pair), count);
            assert_eq!(wbuf(&pair), Some(0), "given back after {count}");
        }
        pair.server.send_data(open, Bytes::new(), true).unwrap();
        pair.drive();
        assert!(pair.server.is_idle());
    }

    /// A connection WINDOW_UPDATE wakes only the streams blocked on the
    /// connection's window that its room can take a frame of, in order
    /// (RFC 9113 §6.9.1): the rest stay blocked instead of each being
    /// tried and queued again.
    #[test]
    fn a_connection_window_update_wakes_what_it_has_room_for() {
        let mut pair = window_bound_pair();
        for _ in 0..20 {
            post_4k(&mut pair);
        }
        pair.drive();
        let queued = |pair: &Pair| {
            let s = pair.client.h2_session().unwrap();
            (s.ready.len(), s.conn_blocked.len())
        };
        let (ready, blocked) = queued(&pair);
        assert!(blocked >= 4, "{blocked} streams blocked on 64 KiB");
        assert_eq!(ready, 0);
        // Room for one 4 KiB frame.
        let now = pair.now;
        pair.client
            .handle_input(now, &mut connection_window_update(4096));
        assert_eq!(queued(&pair), (1, blocked - 1));
    }

    /// A pair whose server returns no connection window by itself: the
    /// client has the default 65,535 octets until a test hands it a
    /// WINDOW_UPDATE.
    fn window_bound_pair() -> Pair {
        let server = Config {
            window_policy: crate::config::WindowPolicy::Manual,
            connection_window_size: 65_535,
            ..Config::default()
        };
        let mut pair = Pair::new(Config::default(), server, 0);
        pair.connect();
        pair
    }

    /// Queues a POST of 4 KiB on the client.
    fn post_4k(pair: &mut Pair) -> StreamId {
        let head = RequestHead::new("POST", "http", "a", "/");
        let stream = pair.client.send_request(head, false).unwrap();
        let body = Bytes::from(vec![b'x'; 4096]);
        pair.client.send_data(stream, body, true).unwrap();
        stream
    }

    /// The wire form of a WINDOW_UPDATE on stream 0.
    fn connection_window_update(increment: u32) -> BytesMut {
        let mut update = BytesMut::new();
        Frame::WindowUpdate(WindowUpdate {
            stream_id: StreamId::ZERO,
            increment,
        })
        .encode(&mut update);
        update
    }

    /// While the connection's window is spent, a new request with a body
    /// waits to open: nothing is written for it (its HEADERS alone would
    /// be a write of their own), and when a connection WINDOW_UPDATE comes
    /// its HEADERS leave with its DATA, behind the stream that was blocked
    /// first. A GET queued behind it waits too: stream ids go out in
    /// order (RFC 9113 §5.1.1).
    #[test]
    fn a_request_whose_body_waits_for_the_connection_window_opens_with_it() {
        let mut pair = window_bound_pair();
        // 16 bodies of 4 KiB: the window's 65,535 octets and one more.
        let first: Vec<_> = (0..16).map(|_| post_4k(&mut pair)).collect();
        pair.drive();
        assert_eq!(pair.client.h2_session().unwrap().send_window.available(), 0);
        let heard = |pair: &mut Pair| {
            pair.server_events()
                .into_iter()
                .filter(|e| matches!(e, Event::Request { .. }))
                .count()
        };
        assert_eq!(heard(&mut pair), 16);

        let waiting = post_4k(&mut pair);
        let head = RequestHead::new("GET", "http", "a", "/");
        let behind = pair.client.send_request(head, true).unwrap();
        let now = pair.now;
        assert_eq!(pair.client.poll_transmit(now), None, "nothing written");

        // Room for the blocked octet and the waiting body.
        pair.client
            .handle_input(now, &mut connection_window_update(8192));
        let mut wire = BytesMut::new();
        while let Some(chunk) = pair.client.poll_transmit(now) {
            wire.extend_from_slice(&chunk);
        }
        let mut decoder = frame::FrameDecoder::new(frame::DEFAULT_MAX_FRAME_SIZE);
        let mut sent = Vec::new();
        while let Some(f) = decoder.decode(&mut wire).unwrap() {
            sent.push(match f {
                Frame::Headers(h) => ("HEADERS", h.stream_id, h.end_stream),
                Frame::Data(d) => ("DATA", d.stream_id, d.end_stream),
                other => panic!("unexpected {other:?}"),
            });
        }
        assert_eq!(
            sent,
            [
                ("DATA", first[15], true),
                ("HEADERS", waiting, false),
                ("DATA", waiting, true),
                ("HEADERS", behind, true),
            ]
        );
    }
}
