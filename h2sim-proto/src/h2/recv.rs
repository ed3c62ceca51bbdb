//! The peer's bytes and frames: preface, framing, field blocks, and each
//! frame kind against the stream states of RFC 9113 §5.1.

use std::time::Instant;

use bytes::{Bytes, BytesMut};

use super::echo::Echo;
use super::fields;
use super::flow::RecvWindow;
use super::limits::Rate;
use super::stream::{Input, Refusal, State, Stream, transition_frame};
use super::{BlockKind, KEEPALIVE_PING, PartialBlock, SHUTDOWN_PING, Session, Shutdown};
use crate::error::{Malformation, Violation};
use crate::event::{Event, RefusedWith};
use crate::frame::{
    Data, ErrorScope, Frame, FrameErrorKind, FrameKind, GoAway, HEADER_LEN, Head, Headers, PREFACE,
    Ping, PushPromise, Reason, RstStream, Setting, Settings, StreamId, WindowUpdate, flags,
};
use crate::hpack::HeaderField;
use crate::message::RequestHead;
use crate::role::Role;
use crate::timers::SessionTimer;

/// Frame type codes, for naming the frame in a violation.
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const WINDOW_UPDATE: u8 = 0x8;

/// How an HTTP/1.1 server's answer begins.
const HTTP1_ANSWER: &[u8] = b"HTTP/1.";

/// Whether `input` begins as a TLS record does (RFC 8446 §5.1): content
/// type alert (21) or handshake (22), then protocol version 3.x. Read as a
/// frame header, those bytes give a length above 1 MB, more than any first
/// frame may have (§4.2: 16,384 until SETTINGS says otherwise), so no
/// HTTP/2 server's answer is taken for one.
fn is_tls_record(input: &[u8]) -> bool {
    matches!(input, [0x15 | 0x16, 0x03, minor, ..] if *minor <= 0x04)
}

/// How an id that has no live stream relates to the connection's history.
enum Gone {
    /// Never used: the frame is out of order (§5.1, "idle").
    Idle,
    /// We reset it; late frames are expected and ignored.
    ResetByUs,
    /// The peer ended or reset it.
    EndedByPeer,
    /// Closed normally and forgotten.
    Closed,
}

impl Session {
    /// Takes bytes from the transport: frames from the front of `input`
    /// until `max_events` events wait to be polled; the rest (whole frames
    /// too, and any partial frame) stays in `input`.
    pub(crate) fn handle_input_until(
        &mut self,
        now: Instant,
        input: &mut BytesMut,
        max_events: usize,
    ) {
        if self.closed {
            input.clear();
            return;
        }
        if !input.is_empty() {
            self.keepalive_input(now);
        }
        if !self.preface_received {
            let n = input.len().min(PREFACE.len());
            if input[..n] != PREFACE[..n] {
                // §3.4: a connection error of type PROTOCOL_ERROR. The
                // GOAWAY "MAY be omitted", but a peer that meant HTTP/2
                // and got the preface wrong (or an HTTP/1.1 client at an
                // HTTP/2-only listener) learns why from it, as nghttpd's
                // answer tells it: our SETTINGS, then GOAWAY.
                input.clear();
                self.connection_error(Reason::PROTOCOL_ERROR, Violation::BadPreface);
                return;
            }
            if n < PREFACE.len() {
                return;
            }
            let _ = input.split_to(PREFACE.len());
            self.preface_received = true;
        }
        if let Some(violation) = self.first_frame_violation(input) {
            input.clear();
            self.connection_error(Reason::PROTOCOL_ERROR, violation);
            return;
        }
        while !self.closed && self.events.len() < max_events && !self.input_blocked() {
            match self.decoder.decode(input) {
                Ok(Some(frame)) => self.recv_frame(now, frame),
                Ok(None) => break,
                Err(e) => match e.scope {
                    ErrorScope::Stream(id) => {
                        if let FrameErrorKind::SelfDependency {
                            headers: Some(headers),
                            ..
                        } = e.kind
                        {
                            // Its field block must still pass through HPACK.
                            self.recv_headers(now, *headers, true);
                        } else if self.partial.is_some() {
                            // A stream error cannot interrupt a field block.
                            self.connection_error(Reason::PROTOCOL_ERROR, Violation::Frame(e.kind));
                        } else {
                            self.stream_error(now, id, e.reason, Violation::Frame(e.kind));
                        }
                    }
                    ErrorScope::Connection => {
                        self.connection_error(e.reason, Violation::Frame(e.kind));
                    }
                },
            }
        }
        if self.closed {
            if self.error.is_none() {
                self.answer_behind_close(now, input);
            }
            input.clear();
        }
    }

    /// A graceful end reached inside the input (the last response in after
    /// the peer's GOAWAY, the answer to our shutdown PING) leaves the frames
    /// behind it unread, and a PING or SETTINGS among them is still owed
    /// its ACK (§6.7, §6.5.3 "MUST immediately emit"): a peer that wrote
    /// them with its last frames waits for the answers. Nothing else there
    /// matters to a closed connection. The ACK-flood bound still applies.
    fn answer_behind_close(&mut self, now: Instant, input: &mut BytesMut) {
        while let Ok(Some(frame)) = self.decoder.decode(input) {
            match frame {
                Frame::Ping(p) if !p.ack => self.recv_ping(now, p),
                Frame::Settings(s) if !s.ack => self.recv_settings(s),
                _ => {}
            }
        }
    }

    /// §3.4: the peer's first frame is SETTINGS, not its ACK. Told from the
    /// frame's header before its length is checked, so a peer that does
    /// not speak HTTP/2 is named for what it sent: an HTTP/1.1 server's
    /// answer to our preface (a 400, as a rule) read as a frame of some
    /// 4 MB, a FRAME_SIZE_ERROR that said nothing of what happened.
    ///
    /// A TLS record (a server on a TLS port answering our cleartext
    /// preface, with an alert as a rule) is told from its first three
    /// bytes, since the alert is shorter than a frame header and the
    /// server closes behind it.
    fn first_frame_violation(&self, input: &[u8]) -> Option<Violation> {
        if self.settings_received {
            return None;
        }
        if self.role == Role::Client && is_tls_record(input) {
            return Some(Violation::TlsAnswer);
        }
        let head = Head::parse(input.first_chunk::<HEADER_LEN>()?);
        if head.kind == FrameKind::Settings && head.flags & flags::ACK == 0 {
            return None;
        }
        if self.role == Role::Client && input.starts_with(HTTP1_ANSWER) {
            let end = input.iter().position(|&b| b == b'\r' || b == b'\n');
            let line = &input[..end.unwrap_or(input.len()).min(64)];
            let status_line = Bytes::copy_from_slice(line);
            return Some(Violation::Http1Answer { status_line });
        }
        Some(Violation::FirstFrameNotSettings)
    }

    fn recv_frame(&mut self, now: Instant, frame: Frame) {
        if self.config.trace_frames {
            self.events.push_back(Event::Frame {
                outgoing: false,
                frame: frame.clone(),
            });
        }
        if let Some(partial) = &mut self.partial {
            let Frame::Continuation(c) = frame else {
                let got = frame_type(&frame);
                self.connection_error(
                    Reason::PROTOCOL_ERROR,
                    Violation::ContinuationExpected { got },
                );
                return;
            };
            if c.stream_id != partial.stream {
                let block = partial.stream;
                self.connection_error(
                    Reason::PROTOCOL_ERROR,
                    Violation::ContinuationStreamMismatch {
                        block,
                        got: c.stream_id,
                    },
                );
                return;
            }
            partial.continuations += 1;
            partial.fragments.extend_from_slice(&c.fragment);
            let (count, size) = (partial.continuations, partial.fragments.len());
            if count > self.config.limits.max_continuation_frames {
                self.connection_error(Reason::ENHANCE_YOUR_CALM, Violation::TooManyContinuations);
                return;
            }
            if size > self.config.limits.max_header_block_size {
                self.connection_error(
                    Reason::ENHANCE_YOUR_CALM,
                    Violation::HeaderBlockTooLarge { size },
                );
                return;
            }
            if c.fragment.is_empty() && !c.end_headers && !self.empty_frame(now) {
                self.connection_error(Reason::ENHANCE_YOUR_CALM, Violation::EmptyFrameFlood);
                return;
            }
            if c.end_headers
                && let Some(done) = self.partial.take()
            {
                let block = done.fragments.freeze();
                self.recv_block(now, done.stream, done.kind, &block);
            }
            return;
        }
        // A stream of ours whose HEADERS is not written yet is idle to the
        // peer, which cannot know it: only PRIORITY may name it (§5.1).
        let id = frame.stream_id();
        if self.is_local(id)
            && !matches!(frame, Frame::Priority(_) | Frame::Unknown(_))
            && self.store.get(id).is_some_and(|s| !s.announced)
        {
            let kind = frame_type(&frame);
            self.connection_error(
                Reason::PROTOCOL_ERROR,
                Violation::FrameOnIdleStream { kind, stream: id },
            );
            return;
        }
        match frame {
            Frame::Data(d) => self.recv_data(now, d),
            Frame::Headers(h) => self.recv_headers(now, h, false),
            Frame::Priority(_) | Frame::Unknown(_) => {} // §5.3.2, §5.5
            Frame::RstStream(r) => self.recv_reset(now, r),
            Frame::Settings(s) => self.recv_settings(s),
            Frame::PushPromise(p) => self.recv_push_promise(now, p),
            Frame::Ping(p) => self.recv_ping(now, p),
            Frame::GoAway(g) => self.recv_goaway(g),
            Frame::WindowUpdate(w) => self.recv_window_update(now, w),
            Frame::Continuation(_) => {
                self.connection_error(Reason::PROTOCOL_ERROR, Violation::UnexpectedContinuation);
            }
        }
    }

    /// Classifies an id with no live stream.
    fn gone(&self, id: StreamId) -> Gone {
        if self.store.reset_locally.contains(id) {
            return Gone::ResetByUs;
        }
        if self.store.ended_by_peer.contains(id) {
            return Gone::EndedByPeer;
        }
        if self.used(id) {
            Gone::Closed
        } else {
            Gone::Idle
        }
    }

    /// HEADERS; `self_dependent` ones (§5.3.1) are decoded, then their
    /// stream is reset.
    fn recv_headers(&mut self, now: Instant, h: Headers, self_dependent: bool) {
        let kind = BlockKind::Headers {
            end_stream: h.end_stream,
            self_dependent,
        };
        if h.end_headers {
            self.recv_block(now, h.stream_id, kind, &h.fragment);
        } else {
            self.start_block(now, h.stream_id, kind, h.fragment);
        }
    }

    fn start_block(&mut self, now: Instant, stream: StreamId, kind: BlockKind, first: Bytes) {
        if first.is_empty() && !self.empty_frame(now) {
            self.connection_error(Reason::ENHANCE_YOUR_CALM, Violation::EmptyFrameFlood);
            return;
        }
        let mut fragments = BytesMut::with_capacity(first.len() * 2);
        fragments.extend_from_slice(&first);
        self.partial = Some(Box::new(PartialBlock {
            stream,
            kind,
            fragments,
            continuations: 0,
        }));
    }

    /// A complete field block. It is always decompressed first, whatever
    /// becomes of the stream, so the HPACK context stays in step (§4.3).
    fn recv_block(&mut self, now: Instant, id: StreamId, kind: BlockKind, block: &Bytes) {
        // Decoded into a vector kept between blocks, and kept empty: a
        // message takes only its ordinary fields out of it, so one with none
        // allocates nothing here.
        let mut fields = std::mem::take(&mut self.field_scratch);
        debug_assert!(fields.is_empty());
        self.stats.header_wire_bytes_received += block.len() as u64;
        let echo = self.echo(id, &kind, block);
        let decoded = match echo {
            Some(_) => Ok(()),
            None => {
                let decoded = self.hpack_decoder.decode(block, &mut fields);
                self.stats.header_bytes_received += fields::octets(&fields);
                decoded
            }
        };
        self.repeat_checked = self.fields_checked && self.hpack_decoder.repeated();
        self.fields_checked = false;
        let too_large = match decoded {
            Ok(()) => None,
            Err(e) if e.is_compression_error() => {
                self.connection_error(Reason::COMPRESSION_ERROR, Violation::Compression(e));
                return;
            }
            // The table stayed in step; only this message is refused.
            Err(crate::hpack::DecoderError::HeaderListTooLarge { size, max }) => {
                Some(Violation::HeaderListTooLarge { size, max })
            }
            Err(e) => Some(Violation::Compression(e)),
        };
        match kind {
            BlockKind::Headers {
                self_dependent: true,
                ..
            } => {
                if !self.is_local(id) && id > self.store.last_peer {
                    self.store.last_peer = id;
                }
                let kind = FrameErrorKind::SelfDependency {
                    stream_id: id,
                    headers: None,
                };
                self.stream_error(now, id, Reason::PROTOCOL_ERROR, Violation::Frame(kind));
            }
            BlockKind::Headers { end_stream, .. } => {
                self.recv_field_section(now, id, &mut fields, echo, end_stream, too_large);
            }
            BlockKind::PushPromise { promised } => {
                self.recv_promise(now, id, promised, &mut fields, too_large);
            }
        }
        crate::hpack::clear_fields(&mut fields);
        self.field_scratch = fields;
    }

    /// The head kept from the last block ([`Echoes`](super::echo::Echoes)),
    /// if `block` repeats it, that block's fields passed their checks, and
    /// this one goes where that head went: a new request on a server, a
    /// response head on a client. The block is then taken as decoded. The
    /// octets are compared only when a head is kept to hand out.
    fn echo(&mut self, id: StreamId, kind: &BlockKind, block: &[u8]) -> Option<Echo> {
        if !self.fields_checked
            || !matches!(
                kind,
                BlockKind::Headers {
                    self_dependent: false,
                    ..
                }
            )
        {
            return None;
        }
        let request = match self.role {
            Role::Server if self.store.get(id).is_none() => true,
            Role::Client if self.store.get(id).is_some_and(|s| !s.final_head_received) => false,
            _ => return None,
        };
        let memo_id = self.hpack_decoder.remembered()?.id;
        if !self.echoes.holds(memo_id) || !self.hpack_decoder.take_repeat(block) {
            return None;
        }
        let echo = if request {
            Echo::Request(self.echoes.request(memo_id)?)
        } else {
            Echo::Response(self.echoes.response(memo_id)?)
        };
        self.stats.header_bytes_received += self.echoes.octets();
        Some(echo)
    }

    /// A HEADERS field section: opens a stream, or is a response head,
    /// interim head or trailers on a live one.
    fn recv_field_section(
        &mut self,
        now: Instant,
        id: StreamId,
        fields: &mut Vec<HeaderField>,
        echo: Option<Echo>,
        end_stream: bool,
        too_large: Option<Violation>,
    ) {
        let peer_streams_full =
            self.store.active_peer >= self.local.effective.max_concurrent_streams;
        let (echoed_request, echoed_response) = match echo {
            Some(Echo::Request(head)) => (Some(head), None),
            Some(Echo::Response(head)) => (None, Some(head)),
            None => (None, None),
        };
        let Some(stream) = self.store.get_mut(id) else {
            self.recv_new_stream(now, id, fields, echoed_request, end_stream, too_large);
            return;
        };
        let next = match stream.on_recv(Input::RecvHeaders, end_stream) {
            Ok(next) => next,
            Err(refusal) => {
                self.refuse(now, id, HEADERS, refusal);
                return;
            }
        };
        if !stream.known && stream.final_head_received && end_stream {
            // Trailers of a request the core answered itself (a 431, a
            // 413): as its body, they go nowhere.
            stream.state = next;
            self.after_recv_end(id);
            return;
        }
        if let Some(violation) = too_large {
            self.stream_error(now, id, Reason::PROTOCOL_ERROR, violation);
            return;
        }
        if stream.final_head_received {
            // Trailers (§8.1).
            if !end_stream {
                self.stream_error(
                    now,
                    id,
                    Reason::PROTOCOL_ERROR,
                    Violation::TrailersWithoutEndStream,
                );
                return;
            }
            match fields::trailers(fields, self.repeat_checked, &mut self.spares) {
                Ok(fields) => {
                    self.fields_checked = true;
                    if let Err(m) = check_length_at_end(stream) {
                        self.malformed(now, id, m);
                        return;
                    }
                    stream.state = next;
                    self.events
                        .push_back(Event::Trailers { stream: id, fields });
                    self.after_recv_end(id);
                }
                Err(m) => self.malformed(now, id, m),
            }
            return;
        }
        if stream.state == State::ReservedRemote && peer_streams_full {
            self.stream_error(
                now,
                id,
                Reason::REFUSED_STREAM,
                Violation::ConcurrencyExceeded,
            );
            return;
        }
        // A response head on one of our requests or a promised stream.
        if self.role == Role::Server {
            // The request head came when the stream opened: this is trailers
            // handled above, so a server never gets here with a live stream.
            self.malformed(now, id, Malformation::UnexpectedEndStream);
            return;
        }
        let built = match echoed_response {
            Some(head) => Ok(head),
            None => fields::response(fields, self.repeat_checked, &mut self.spares),
        };
        let head = match built {
            Ok(head) => {
                self.fields_checked = true;
                head
            }
            Err(m) => {
                self.malformed(now, id, m);
                return;
            }
        };
        let mut pushed_opened = false;
        if head.is_informational() {
            if end_stream {
                self.malformed(now, id, Malformation::UnexpectedEndStream);
                return;
            }
        } else {
            stream.final_head_received = true;
            let no_body = stream.head_request || !head.may_have_content();
            stream.expected_len = match fields::content_length(&head.fields) {
                Ok(_) if no_body => Some(0).filter(|_| !stream.head_request),
                Ok(len) => len,
                Err(m) => {
                    self.malformed(now, id, m);
                    return;
                }
            };
            if stream.head_request {
                stream.expected_len = None;
            }
            if end_stream && let Err(m) = check_length_at_end(stream) {
                self.malformed(now, id, m);
                return;
            }
            // A pushed response opens the stream (reserved (remote) to
            // half-closed (local)): it now counts toward our
            // MAX_CONCURRENT_STREAMS (§5.1.2).
            pushed_opened = !stream.counted();
            stream.state = next;
        }
        if pushed_opened {
            self.store.active_peer += 1;
        }
        self.events.push_back(Event::Response {
            stream: id,
            head,
            end_stream,
        });
        if end_stream {
            self.after_recv_end(id);
        }
    }

    /// HEADERS on an id with no live stream: a new request (server), or a
    /// late or bogus frame.
    fn recv_new_stream(
        &mut self,
        now: Instant,
        id: StreamId,
        fields: &mut Vec<HeaderField>,
        echo: Option<Box<RequestHead>>,
        end_stream: bool,
        too_large: Option<Violation>,
    ) {
        if self.role == Role::Client || !id.is_client_initiated() {
            match self.gone(id) {
                Gone::ResetByUs => {}
                Gone::EndedByPeer => self.connection_error(
                    Reason::STREAM_CLOSED,
                    Violation::StreamClosed {
                        kind: HEADERS,
                        stream: id,
                    },
                ),
                _ if !self.is_local(id) && self.role == Role::Server => self.connection_error(
                    Reason::PROTOCOL_ERROR,
                    Violation::StreamIdParity { stream: id },
                ),
                _ => self.connection_error(
                    Reason::PROTOCOL_ERROR,
                    Violation::FrameOnIdleStream {
                        kind: HEADERS,
                        stream: id,
                    },
                ),
            }
            return;
        }
        if id <= self.store.last_peer {
            match self.gone(id) {
                Gone::ResetByUs => {}
                Gone::EndedByPeer => self.connection_error(
                    Reason::STREAM_CLOSED,
                    Violation::StreamClosed {
                        kind: HEADERS,
                        stream: id,
                    },
                ),
                _ => self.connection_error(
                    Reason::PROTOCOL_ERROR,
                    Violation::StreamIdNotIncreasing {
                        stream: id,
                        last: self.store.last_peer,
                    },
                ),
            }
            return;
        }
        if self.refusing_new_streams(id) {
            // §6.8: after our final GOAWAY, newer streams are ignored, and so
            // are the frames that follow on them.
            self.store.reset_locally.insert(id);
            return;
        }
        self.store.last_peer = id;
        if self.store.active_peer >= self.local.effective.max_concurrent_streams {
            // §5.1.2: REFUSED_STREAM tells the client it may retry.
            self.stream_error(
                now,
                id,
                Reason::REFUSED_STREAM,
                Violation::ConcurrencyExceeded,
            );
            return;
        }
        if let Some(violation) = too_large {
            self.answer_in_place(now, id, end_stream, 431, violation);
            return;
        }
        let built = match echo {
            Some(head) => Ok(head),
            None => fields::request(
                fields,
                self.repeat_checked,
                self.local.effective.enable_connect_protocol,
                &mut self.spares,
            ),
        };
        let head = match built {
            Ok(head) => {
                self.fields_checked = true;
                head
            }
            Err(m) => {
                self.malformed(now, id, m);
                return;
            }
        };
        let expected_len = match fields::content_length(&head.fields) {
            Ok(len) => len,
            Err(m) => {
                self.malformed(now, id, m);
                return;
            }
        };
        let state = match transition_frame(State::Idle, Input::RecvHeaders, end_stream) {
            Ok(state) => state,
            Err(refusal) => {
                self.refuse(now, id, HEADERS, refusal);
                return;
            }
        };
        let connect = head.method.as_ref() == b"CONNECT";
        let recv = RecvWindow::new(self.stream_recv_initial(), self.stream_recv_initial());
        let mut stream = Stream::new(id, state, self.peer.initial_window_size, recv);
        stream.known = true;
        stream.announced = true;
        stream.final_head_received = true;
        stream.expected_len = expected_len;
        stream.head_request = head.method.as_ref() == b"HEAD";
        stream.connect = connect;
        stream.expects_continue = !end_stream && fields::expects_continue(&head.fields);
        if end_stream {
            if let Err(m) = check_length_at_end(&stream) {
                // Refused before the application heard of it.
                self.malformed(now, id, m);
                return;
            }
            // More HEADERS on it are STREAM_CLOSED, not a reused id (§5.1).
            self.store.ended_by_peer.insert(id);
        }
        let max = self.config.max_request_body;
        if let Some(size) = expected_len.filter(|&size| size > max && !connect) {
            // A body declared above the limit is refused before it comes,
            // as HTTP/1.1 refuses it.
            self.spares.give_head(head);
            let violation = Violation::BodyTooLarge { size, max };
            self.answer_in_place(now, id, end_stream, 413, violation);
            return;
        }
        let expects_continue = stream.expects_continue;
        self.store.insert(stream);
        self.store.active_peer += 1;
        self.events.push_back(Event::Request {
            stream: id,
            head,
            end_stream,
        });
        if expects_continue {
            self.make_ready(id);
        }
        self.request_taken();
    }

    /// A request refused before delivery for a limit of ours, answered
    /// with `status` by the core itself, so the client learns why instead
    /// of meeting only a RST_STREAM: a 431 for a field section above our
    /// MAX_HEADER_LIST_SIZE, which was still decoded to its end (the HPACK
    /// context is in step): "A server that receives a larger header
    /// section than it is willing to handle can send an HTTP 431 (Request
    /// Header Fields Too Large) status code" (RFC 9113 §10.5.1, RFC 6585
    /// §5); a 413 for a `content-length` above `Config::max_request_body`
    /// (RFC 9110 §15.5.14). The application hears of the stream only as
    /// `Refused`; a request body still to come is dropped, its window
    /// given back as it comes, and once the answer is written the stream
    /// is reset with NO_ERROR so the client stops sending it (§8.1).
    fn answer_in_place(
        &mut self,
        now: Instant,
        id: StreamId,
        end_stream: bool,
        status: u16,
        violation: Violation,
    ) {
        let Ok(state) = transition_frame(State::Idle, Input::RecvHeaders, end_stream) else {
            self.stream_error(now, id, Reason::PROTOCOL_ERROR, violation);
            return;
        };
        let recv = RecvWindow::new(self.stream_recv_initial(), self.stream_recv_initial());
        let mut stream = Stream::new(id, state, self.peer.initial_window_size, recv);
        stream.announced = true;
        stream.final_head_received = true;
        if end_stream {
            self.store.ended_by_peer.insert(id);
        }
        self.store.insert(stream);
        self.store.active_peer += 1;
        self.queue_own_answer(id, status, &violation);
        self.events.push_back(Event::Refused {
            stream: id,
            answer: RefusedWith::Status(status),
            violation,
        });
    }

    /// A request body that grew past `Config::max_request_body` after its
    /// head was delivered (it declared no length, HTTP/2 needing none):
    /// the application loses the stream, as over HTTP/1.1. Unless its
    /// response has started on the wire, the core answers 413 in its place
    /// (what it had queued is dropped) and, once the 413 is written,
    /// resets the stream with NO_ERROR if the client is still sending: "A
    /// server can send a complete response prior to the client sending an
    /// entire request ... the server MAY request that the client abort
    /// transmission of a request without error by sending a RST_STREAM
    /// with an error code of NO_ERROR" (RFC 9113 §8.1). A response already
    /// started cannot become a 413: the stream is reset with CANCEL, "the
    /// stream is no longer needed" (§7), which says the client did nothing
    /// wrong by the protocol (not PROTOCOL_ERROR) and nothing failed here
    /// (not INTERNAL_ERROR): only more was sent than this server takes.
    fn body_too_large(&mut self, now: Instant, id: StreamId, size: u64) {
        let max = self.config.max_request_body;
        let violation = Violation::BodyTooLarge { size, max };
        let Some(stream) = self.store.get_mut(id) else {
            return;
        };
        if stream.response_started() {
            self.stream_error(now, id, Reason::CANCEL, violation);
            return;
        }
        stream.known = false;
        stream.expects_continue = false;
        stream.queue.clear();
        self.queue_own_answer(id, 413, &violation);
        self.events.push_back(Event::StreamReset {
            stream: id,
            reason: Reason::NO_ERROR,
            remote: false,
            violation: Some(violation),
            status: Some(413),
        });
    }

    fn recv_data(&mut self, now: Instant, d: Data) {
        let flow_len = d.flow_controlled_len();
        let kept = u32::try_from(d.payload.len()).unwrap_or(u32::MAX);
        // The connection window counts every DATA frame, whatever its stream.
        if let Err(window) = self.recv_window.receive(flow_len, kept) {
            self.connection_error(
                Reason::FLOW_CONTROL_ERROR,
                Violation::FlowControlExceeded {
                    window,
                    received: flow_len,
                },
            );
            return;
        }
        if d.payload.is_empty() && !d.end_stream && !self.empty_frame(now) {
            self.connection_error(Reason::ENHANCE_YOUR_CALM, Violation::EmptyFrameFlood);
            return;
        }
        self.stats.data_bytes_received += u64::from(kept);
        let id = d.stream_id;
        let Some(stream) = self.store.get_mut(id) else {
            self.release(id, kept);
            match self.gone(id) {
                Gone::ResetByUs => {}
                Gone::Idle => self.connection_error(
                    Reason::PROTOCOL_ERROR,
                    Violation::FrameOnIdleStream {
                        kind: DATA,
                        stream: id,
                    },
                ),
                Gone::EndedByPeer | Gone::Closed => self.connection_error(
                    Reason::STREAM_CLOSED,
                    Violation::StreamClosed {
                        kind: DATA,
                        stream: id,
                    },
                ),
            }
            return;
        };
        let next = match stream.on_recv(Input::RecvData, d.end_stream) {
            Ok(next) => next,
            Err(refusal) => {
                self.release(id, kept);
                self.refuse(now, id, DATA, refusal);
                return;
            }
        };
        if let Err(window) = stream.recv.receive(flow_len, kept) {
            self.release(id, kept);
            self.stream_error(
                now,
                id,
                Reason::FLOW_CONTROL_ERROR,
                Violation::FlowControlExceeded {
                    window,
                    received: flow_len,
                },
            );
            return;
        }
        if !stream.final_head_received {
            self.release(id, kept);
            self.malformed(now, id, Malformation::DataBeforeHeaders);
            return;
        }
        stream.received_len += u64::from(kept);
        let over = stream
            .expected_len
            .is_some_and(|declared| stream.received_len > declared);
        if (over || d.end_stream)
            && let Err(m) = check_length_at_end(stream)
        {
            self.release(id, kept);
            self.malformed(now, id, m);
            return;
        }
        stream.state = next;
        if !stream.known {
            // A request the core answered itself (a 431, a 413): its body
            // goes nowhere, and its window comes back at once.
            self.release(id, kept);
            if d.end_stream {
                self.after_recv_end(id);
            }
            return;
        }
        if self.role == Role::Server
            && !stream.connect
            && stream.received_len > self.config.max_request_body
        {
            // These bytes go nowhere either: the application loses the
            // stream (see `body_too_large`).
            let size = stream.received_len;
            self.release(id, kept);
            self.body_too_large(now, id, size);
            if d.end_stream {
                self.after_recv_end(id);
            }
            return;
        }
        if kept < flow_len {
            // Padding was released at once; it may have made an update due.
            if let Some(inc) = stream.recv.take_update() {
                self.window_updates.push_back((id, inc));
            }
            if let Some(inc) = self.recv_window.take_update() {
                self.window_updates.push_back((StreamId::ZERO, inc));
            }
        }
        self.events.push_back(Event::Data {
            stream: id,
            data: d.payload,
            end_stream: d.end_stream,
        });
        if d.end_stream {
            self.after_recv_end(id);
        }
    }

    /// The peer finished its side of a stream: forget it if we are done too.
    fn after_recv_end(&mut self, id: StreamId) {
        self.store.ended_by_peer.insert(id);
        if self.store.get(id).is_some_and(Stream::is_finished) {
            self.remove_stream(id);
        }
    }

    fn recv_reset(&mut self, now: Instant, r: RstStream) {
        let id = r.stream_id;
        // Rapid reset (CVE-2023-44487) is a peer opening streams and
        // resetting them at once, each leaving us work it started: only
        // resets of streams the peer opened count. One of ours reset costs
        // us nothing but the request we chose to make, and a server may
        // end each of them so after its complete response (RFC 9113 §8.1:
        // RST_STREAM with NO_ERROR for a request body it did not read, as
        // nginx does on every such POST), however many a second.
        if !self.is_local(id)
            && !self
                .peer_resets
                .hit(now, Rate::peer_resets(&self.config.limits))
        {
            self.connection_error(Reason::ENHANCE_YOUR_CALM, Violation::ResetFlood);
            return;
        }
        let Some(allowed) = self
            .store
            .get(id)
            .map(|s| s.on_recv(Input::RecvRstStream, false))
        else {
            if let Gone::Idle = self.gone(id) {
                self.connection_error(
                    Reason::PROTOCOL_ERROR,
                    Violation::FrameOnIdleStream {
                        kind: RST_STREAM,
                        stream: id,
                    },
                );
            }
            return;
        };
        if let Err(refusal) = allowed {
            // Reset of a stream we only queued: impossible from a correct peer.
            self.refuse(now, id, RST_STREAM, refusal);
            return;
        }
        let Some(stream) = self.store.remove(id, self.is_local(id)) else {
            return;
        };
        self.store.ended_by_peer.insert(id);
        if stream.known {
            self.events.push_back(Event::StreamReset {
                stream: id,
                reason: r.reason,
                remote: true,
                violation: None,
                status: None,
            });
        }
        self.stream_gone();
    }

    fn recv_settings(&mut self, s: Settings) {
        if s.ack {
            let before = self.local.effective;
            if self.local.ack() {
                self.arm_settings_ack();
                self.apply_local(before);
            }
            return;
        }
        if self.settings_acks_owed + self.control.ping_acks_owed()
            >= self.config.limits.max_pending_acks
        {
            self.connection_error(Reason::ENHANCE_YOUR_CALM, Violation::AckFlood);
            return;
        }
        if let Err((reason, violation)) = self.apply_peer_settings(s.values) {
            self.connection_error(reason, violation);
            return;
        }
        self.settings_acks_owed += 1;
        if !self.settings_received {
            self.settings_received = true;
            self.events.push_back(Event::Connected);
        }
        self.open_waiting();
    }

    /// Applies the peer's settings in order (§6.5.3). Also used for the
    /// HTTP2-Settings of an h2c upgrade, which count as the client's first
    /// SETTINGS (RFC 7540 §3.2.1).
    pub(super) fn apply_peer_settings(
        &mut self,
        values: Vec<Setting>,
    ) -> Result<(), (Reason, Violation)> {
        for setting in values {
            match setting {
                Setting::HeaderTableSize(size) => {
                    let size = size.min(self.config.encoder_table_size);
                    self.hpack_encoder.set_max_table_size(size as usize);
                }
                Setting::EnablePush(on) => {
                    if on && self.role == Role::Client {
                        return Err((Reason::PROTOCOL_ERROR, Violation::ServerEnabledPush));
                    }
                    self.peer.enable_push = on;
                }
                Setting::MaxConcurrentStreams(n) => self.peer.max_concurrent_streams = n,
                Setting::InitialWindowSize(size) => {
                    let delta = i64::from(size) - i64::from(self.peer.initial_window_size);
                    self.peer.initial_window_size = size;
                    let mut overflow = false;
                    for stream in self.store.iter_mut() {
                        overflow |= stream.send_window.adjust(delta).is_err();
                    }
                    if overflow {
                        return Err((Reason::FLOW_CONTROL_ERROR, Violation::WindowOverflow));
                    }
                    if delta > 0 {
                        self.wake_all();
                    }
                }
                Setting::MaxFrameSize(size) => self.peer.max_frame_size = size,
                Setting::MaxHeaderListSize(size) => self.peer.max_header_list_size = size,
                // A server's permission to send `:protocol` (RFC 8441 §3);
                // a client's value means nothing, as only servers accept
                // extended CONNECT.
                Setting::EnableConnectProtocol(on) => {
                    self.peer.enable_connect_protocol = on && self.role == Role::Client;
                }
                Setting::Unknown { .. } => {}
            }
        }
        Ok(())
    }

    fn recv_ping(&mut self, now: Instant, p: Ping) {
        if p.ack {
            if let Some(sent) = self.control.existing().map(|q| &mut q.pings_sent)
                && let Some(at) = sent.iter().position(|(payload, _)| *payload == p.payload)
                && let Some((payload, sent)) = sent.remove(at)
            {
                if payload == KEEPALIVE_PING {
                    self.keepalive_answered(now);
                } else if payload == SHUTDOWN_PING {
                    if self.shutdown == Shutdown::Draining {
                        self.finish_shutdown();
                    } else if self.timers.is_set(SessionTimer::ReplyWait) {
                        self.timers.stop(SessionTimer::ReplyWait);
                        self.maybe_finish();
                    }
                } else {
                    self.events.push_back(Event::Pong {
                        rtt: now.saturating_duration_since(sent),
                    });
                }
            }
            return;
        }
        if self.settings_acks_owed + self.control.ping_acks_owed()
            >= self.config.limits.max_pending_acks
        {
            self.connection_error(Reason::ENHANCE_YOUR_CALM, Violation::AckFlood);
            return;
        }
        self.control.queues().ping_acks.push_back(p.payload);
    }

    fn recv_goaway(&mut self, g: GoAway) {
        let last = g.last_stream_id;
        // A later GOAWAY may only lower the last id (§6.8).
        let last = self.peer_goaway.map_or(last, |prev| prev.min(last));
        self.peer_goaway = Some(last);
        self.events.push_back(Event::GoAway {
            last_stream_id: last,
            reason: g.reason,
            debug_data: g.debug_data.clone(),
        });
        // Our streams above `last` were never processed, and the ones the
        // peer never heard of may no longer be opened: all are retryable
        // (§6.8, §8.7), each reported once.
        let doomed: Vec<StreamId> = self
            .store
            .ids()
            .into_iter()
            .filter(|&id| self.is_local(id))
            .filter(|&id| id > last || self.store.get(id).is_some_and(|s| !s.announced))
            .collect();
        for id in doomed {
            if let Some(stream) = self.store.remove(id, true)
                && stream.known
            {
                self.events.push_back(Event::Retryable { stream: id });
            }
        }
        self.waiting_to_open
            .retain(|id| self.store.get(*id).is_some());
        let store = &self.store;
        self.control
            .retain_promises(|promised| store.get(promised).is_some());
        if g.reason != Reason::NO_ERROR && self.role == Role::Client && self.store.is_empty() {
            let cause = crate::close::CloseCause::GoAwayReceived { reason: g.reason };
            let error = crate::error::ConnectionError::Remote {
                reason: g.reason,
                debug_data: g.debug_data,
            };
            self.close(Some(error), cause);
            return;
        }
        self.maybe_finish();
    }

    fn recv_window_update(&mut self, now: Instant, w: WindowUpdate) {
        let delta = i64::from(w.increment);
        if w.stream_id.is_zero() {
            if self.send_window.adjust(delta).is_err() {
                self.connection_error(Reason::FLOW_CONTROL_ERROR, Violation::WindowOverflow);
                return;
            }
            self.wake_conn_blocked();
            self.open_waiting();
            return;
        }
        let id = w.stream_id;
        let Some(stream) = self.store.get_mut(id) else {
            if let Gone::Idle = self.gone(id) {
                self.connection_error(
                    Reason::PROTOCOL_ERROR,
                    Violation::FrameOnIdleStream {
                        kind: WINDOW_UPDATE,
                        stream: id,
                    },
                );
            }
            return;
        };
        if let Err(refusal) = stream.on_recv(Input::RecvWindowUpdate, false) {
            self.refuse(now, id, WINDOW_UPDATE, refusal);
            return;
        }
        if stream.send_window.adjust(delta).is_err() {
            self.stream_error(
                now,
                id,
                Reason::FLOW_CONTROL_ERROR,
                Violation::WindowOverflow,
            );
            return;
        }
        self.make_ready(id);
    }

    fn recv_push_promise(&mut self, now: Instant, p: PushPromise) {
        // §8.4: only servers push, and only to clients that allow it.
        if self.role == Role::Server || !self.local.effective.enable_push {
            self.connection_error(Reason::PROTOCOL_ERROR, Violation::PushNotAllowed);
            return;
        }
        let kind = BlockKind::PushPromise {
            promised: p.promised_id,
        };
        if p.end_headers {
            self.recv_block(now, p.stream_id, kind, &p.fragment);
        } else {
            self.start_block(now, p.stream_id, kind, p.fragment);
        }
    }

    /// A complete PUSH_PROMISE (§6.6, §8.4).
    fn recv_promise(
        &mut self,
        now: Instant,
        parent: StreamId,
        promised: StreamId,
        fields: &mut Vec<HeaderField>,
        too_large: Option<Violation>,
    ) {
        if !promised.is_server_initiated() || promised <= self.store.last_peer {
            self.connection_error(
                Reason::PROTOCOL_ERROR,
                Violation::StreamIdNotIncreasing {
                    stream: promised,
                    last: self.store.last_peer,
                },
            );
            return;
        }
        if self.refusing_new_streams(promised) {
            // §6.8: a promise above the last stream of our GOAWAY crossed
            // it; the server treats it as never processed, and so do we,
            // with the frames that follow on it.
            self.store.reset_locally.insert(promised);
            return;
        }
        self.store.last_peer = promised;
        match self
            .store
            .get(parent)
            .map(|s| s.on_recv(Input::RecvPushPromise, false))
        {
            Some(Ok(_)) => {}
            Some(Err(refusal)) => {
                self.refuse_as(now, parent, refusal, Violation::PushNotAllowed);
                return;
            }
            None if self.store.reset_locally.contains(parent) => {
                // We reset the parent; the promise crossed it. Refuse it.
                self.stream_error(now, promised, Reason::CANCEL, Violation::PushRefused);
                return;
            }
            None => {
                self.connection_error(Reason::PROTOCOL_ERROR, Violation::PushNotAllowed);
                return;
            }
        }
        if let Some(violation) = too_large {
            self.stream_error(now, promised, Reason::PROTOCOL_ERROR, violation);
            return;
        }
        // A promised request is a GET or HEAD: never an extended CONNECT.
        let request = match fields::request(fields, self.repeat_checked, false, &mut self.spares) {
            Ok(head) => {
                self.fields_checked = true;
                head
            }
            Err(m) => {
                self.malformed(now, promised, m);
                return;
            }
        };
        if !matches!(request.method.as_ref(), b"GET" | b"HEAD") {
            self.malformed(now, promised, Malformation::UnsafePushMethod);
            return;
        }
        let recv = RecvWindow::new(self.stream_recv_initial(), self.stream_recv_initial());
        let mut stream = Stream::new(
            promised,
            State::ReservedRemote,
            self.peer.initial_window_size,
            recv,
        );
        stream.known = true;
        stream.announced = true;
        stream.head_request = request.method.as_ref() == b"HEAD";
        self.store.insert(stream);
        self.events.push_back(Event::PushPromise {
            parent,
            promised,
            request,
        });
    }

    /// A frame of type `kind` the stream's state does not allow (§5.1):
    /// STREAM_CLOSED names a stream the peer had ended, PROTOCOL_ERROR one
    /// it cannot have seen open.
    fn refuse(&mut self, now: Instant, id: StreamId, kind: u8, refusal: Refusal) {
        let (Refusal::Stream(reason) | Refusal::Connection(reason)) = refusal;
        let violation = if reason == Reason::STREAM_CLOSED {
            Violation::StreamClosed { kind, stream: id }
        } else {
            Violation::FrameOnIdleStream { kind, stream: id }
        };
        self.refuse_as(now, id, refusal, violation);
    }

    /// Raises the error the state table chose, naming `violation`.
    fn refuse_as(&mut self, now: Instant, id: StreamId, refusal: Refusal, violation: Violation) {
        match refusal {
            Refusal::Stream(reason) => self.stream_error(now, id, reason, violation),
            Refusal::Connection(reason) => self.connection_error(reason, violation),
        }
    }

    fn malformed(&mut self, now: Instant, id: StreamId, m: Malformation) {
        self.stream_error(now, id, Reason::PROTOCOL_ERROR, Violation::Malformed(m));
    }
}

/// At END_STREAM, the body must have matched content-length (§8.1.1).
fn check_length_at_end(stream: &Stream) -> Result<(), Malformation> {
    match stream.expected_len {
        Some(declared) if declared != stream.received_len => {
            Err(Malformation::ContentLengthMismatch {
                declared,
                received: stream.received_len,
            })
        }
        _ => Ok(()),
    }
}

fn frame_type(frame: &Frame) -> u8 {
    match frame {
        Frame::Data(_) => 0x0,
        Frame::Headers(_) => 0x1,
        Frame::Priority(_) => 0x2,
        Frame::RstStream(_) => 0x3,
        Frame::Settings(_) => 0x4,
        Frame::PushPromise(_) => 0x5,
        Frame::Ping(_) => 0x6,
        Frame::GoAway(_) => 0x7,
        Frame::WindowUpdate(_) => 0x8,
        Frame::Continuation(_) => 0x9,
        Frame::Unknown(u) => u.kind,
    }
}
