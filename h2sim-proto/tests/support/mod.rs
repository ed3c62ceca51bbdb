//! Test harnesses for the connection: `Pair` (our client against our server
//! in memory, on a virtual clock, bytes split at random points; the crate's
//! own `h2sim_proto::pair`, re-exported) and `RawPeer` (hand-built frames
//! against one of our endpoints).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]
pub mod observer;

use std::time::Instant;

use bytes::{Bytes, BytesMut};
use h2sim_proto::frame::{Data, Frame, FrameDecoder, Headers, PREFACE, Settings};
use h2sim_proto::hpack::{self, HeaderField};
use h2sim_proto::{Config, Connection, Event, RequestHead, StreamId};

#[allow(unused_imports)] // not every test file uses both
pub use h2sim_proto::pair::{Pair, Rng};

/// `n` GETs, of `/0`, `/1`, …, sent by the client of `pair`: their streams.
pub fn send_gets(pair: &mut Pair, n: usize) -> Vec<StreamId> {
    (0..n)
        .map(|i| {
            let head = RequestHead::new("GET", "http", "sim", format!("/{i}"));
            pair.client.send_request(head, true).unwrap()
        })
        .collect()
}

/// The streams `events` name as retryable, in order.
pub fn retryable(events: &[Event]) -> Vec<StreamId> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Retryable { stream } => Some(*stream),
            _ => None,
        })
        .collect()
}

/// Stream `n`.
pub fn sid(n: u32) -> StreamId {
    StreamId::new(n)
}

/// A HEADERS frame carrying the whole field block `block`.
pub fn headers(stream: u32, block: Bytes, end_stream: bool) -> Frame {
    Frame::Headers(Headers {
        stream_id: sid(stream),
        fragment: block,
        end_stream,
        end_headers: true,
        priority: None,
        padding: None,
    })
}

/// A DATA frame without padding.
pub fn data(stream: u32, payload: &'static [u8], end_stream: bool) -> Frame {
    Frame::Data(Data {
        stream_id: sid(stream),
        payload: Bytes::from_static(payload),
        end_stream,
        padding: None,
    })
}

/// A hand-driven peer: writes frames we build (valid or not) to one of our
/// endpoints and decodes what it answers.
pub struct RawPeer {
    pub conn: Connection,
    pub now: Instant,
    pub encoder: hpack::Encoder,
    decoder: FrameDecoder,
    hpack_decoder: hpack::Decoder,
    inbox: BytesMut,
    received: BytesMut,
}

impl RawPeer {
    /// Our server, with the raw peer as client (preface not yet sent).
    pub fn server(config: Config) -> Self {
        let now = Instant::now();
        RawPeer {
            conn: Connection::server_for(h2sim_proto::Protocol::Http2, config, now).unwrap(),
            now,
            encoder: hpack::Encoder::new(),
            decoder: FrameDecoder::new(16_777_215),
            hpack_decoder: hpack::Decoder::new(4096),
            inbox: BytesMut::new(),
            received: BytesMut::new(),
        }
    }

    /// Our client, with the raw peer as server.
    pub fn client(config: Config) -> Self {
        let mut peer = RawPeer::server(config);
        peer.conn = Connection::client(Config::default(), peer.now).unwrap();
        peer
    }

    pub fn client_with(config: Config) -> Self {
        let mut peer = RawPeer::server(Config::default());
        peer.conn = Connection::client(config, peer.now).unwrap();
        peer
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.inbox.extend_from_slice(bytes);
        self.conn.handle_input(self.now, &mut self.inbox);
    }

    pub fn send(&mut self, frame: Frame) {
        let mut buf = BytesMut::new();
        frame.encode(&mut buf);
        self.send_bytes(&buf);
    }

    /// Preface (when facing a server) and an empty SETTINGS, then the ACK of
    /// our endpoint's SETTINGS; returns what the endpoint sent meanwhile.
    pub fn handshake(&mut self) -> Vec<Frame> {
        if self.conn.role() == h2sim_proto::Role::Server {
            self.send_bytes(PREFACE);
        }
        self.send(Frame::Settings(Settings {
            ack: false,
            values: vec![],
        }));
        self.send(Frame::Settings(Settings {
            ack: true,
            values: vec![],
        }));
        let frames = self.frames();
        let _ = self.events();
        frames
    }

    /// Every frame the endpoint has written since the last call.
    pub fn frames(&mut self) -> Vec<Frame> {
        while let Some(chunk) = self.conn.poll_transmit(self.now) {
            self.received.extend_from_slice(&chunk);
        }
        if self.conn.role() == h2sim_proto::Role::Client && self.received.starts_with(PREFACE) {
            let _ = self.received.split_to(PREFACE.len());
        }
        let frames = decode_frames(&mut self.decoder, &mut self.received);
        assert!(
            self.received.is_empty(),
            "our endpoint's output ends inside a frame: {:02x?}",
            &self.received[..]
        );
        frames
    }

    pub fn events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.conn.poll_event()).collect()
    }

    /// Encodes a field block with the peer's HPACK context.
    pub fn block(&mut self, fields: &[(&str, &str)]) -> Bytes {
        let fields: Vec<HeaderField> = fields
            .iter()
            .map(|(n, v)| {
                HeaderField::new(
                    Bytes::copy_from_slice(n.as_bytes()),
                    Bytes::copy_from_slice(v.as_bytes()),
                )
            })
            .collect();
        let mut buf = BytesMut::new();
        self.encoder.encode(fields.iter(), &mut buf);
        buf.freeze()
    }

    /// Decodes a field block our endpoint sent.
    pub fn decode_block(&mut self, block: &Bytes) -> Vec<HeaderField> {
        let mut out = Vec::new();
        self.hpack_decoder
            .decode(block, &mut out)
            .expect("our endpoint's HPACK decodes");
        out
    }
}

/// Decodes every whole frame in `bytes`, leaving an incomplete one there.
/// A frame that does not decode fails the test with the decoder's error and
/// the frame's first bytes: stopping there instead would let a check for
/// what is absent (no GOAWAY, no RST_STREAM) pass on garbled output.
pub fn decode_frames(decoder: &mut FrameDecoder, bytes: &mut BytesMut) -> Vec<Frame> {
    let mut frames = Vec::new();
    loop {
        let start = bytes[..bytes.len().min(32)].to_vec();
        match decoder.decode(bytes) {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => return frames,
            Err(e) => panic!(
                "undecodable frame after {} good ones: {e}; it begins {start:02x?}",
                frames.len()
            ),
        }
    }
}

/// The request fields of a simple GET.
pub const GET: &[(&str, &str)] = &[
    (":method", "GET"),
    (":scheme", "http"),
    (":authority", "example.com"),
    (":path", "/"),
];
