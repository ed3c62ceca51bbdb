//! An independent witness of flow control: `WireObserver` decodes every byte
//! each direction of a connection carries and keeps its own account of the
//! windows of RFC 9113 §5.2 and §6.9, and `Link` joins a client and a server
//! `Connection` in memory (like `Pair`, on a virtual clock, bytes split at
//! random points) with an observer on the wire.
//!
//! The observer shares no code with the connection's flow control: it knows
//! only the frames. For each direction S→R it tracks what S may send:
//!
//! - the connection window: 65,535 (§6.9.2) plus every WINDOW_UPDATE on
//!   stream 0 that R sent and S has *read*, minus every DATA S has *written*;
//! - each stream's window: R's SETTINGS_INITIAL_WINDOW_SIZE as S knows it
//!   (the last value in a SETTINGS from R that S has read, §6.9.2), plus the
//!   WINDOW_UPDATEs on that stream S has read, minus the DATA S wrote on it;
//! - R's SETTINGS_MAX_FRAME_SIZE as S knows it (§4.2).
//!
//! Frames S writes are taken when S hands them out (`poll_transmit`), frames
//! S reads when they are delivered to it (`handle_input`), so the observer
//! sees exactly what S had seen when it built each frame, even while bytes
//! are in flight both ways. (A driver must therefore poll output until
//! `None` before it delivers more input: `Link` does.)
//!
//! Stream windows are kept as credit (updates read minus DATA written) on
//! top of the setting's current value: S applies every change of
//! SETTINGS_INITIAL_WINDOW_SIZE to all its streams (§6.9.2), so when a
//! stream came into being does not matter.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use h2sim_proto::frame::{
    DEFAULT_INITIAL_WINDOW_SIZE, DEFAULT_MAX_FRAME_SIZE, Frame, FrameDecoder, HEADER_LEN, Head,
    MAX_FRAME_SIZE_LIMIT, MAX_WINDOW_SIZE, PREFACE, Setting,
};
use h2sim_proto::{Config, Connection, StreamId};

use super::Rng;

/// One direction of the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    ClientToServer,
    ServerToClient,
}

impl Dir {
    pub fn reverse(self) -> Dir {
        match self {
            Dir::ClientToServer => Dir::ServerToClient,
            Dir::ServerToClient => Dir::ClientToServer,
        }
    }

    fn index(self) -> usize {
        match self {
            Dir::ClientToServer => 0,
            Dir::ServerToClient => 1,
        }
    }
}

/// A frame stream being decoded: bytes in, whole frames out.
#[derive(Debug)]
struct Reader {
    buf: BytesMut,
    decoder: FrameDecoder,
    /// Preface bytes still to skip (the client's direction only, §3.4).
    preface_left: usize,
    /// Set once the stream stopped decoding; nothing more is read.
    broken: bool,
}

impl Reader {
    fn new(preface: bool) -> Self {
        Reader {
            buf: BytesMut::new(),
            decoder: FrameDecoder::new(MAX_FRAME_SIZE_LIMIT),
            preface_left: if preface { PREFACE.len() } else { 0 },
            broken: false,
        }
    }

    /// Appends `bytes` and returns every frame now complete, with the length
    /// field of its header.
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<(Head, Frame)>, String> {
        let mut bytes = bytes;
        if self.preface_left > 0 {
            let n = self.preface_left.min(bytes.len());
            let start = PREFACE.len() - self.preface_left;
            if bytes[..n] != PREFACE[start..start + n] {
                self.broken = true;
                return Err("client preface corrupted".to_owned());
            }
            self.preface_left -= n;
            bytes = &bytes[n..];
        }
        if self.broken {
            return Ok(Vec::new());
        }
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        loop {
            let Some(head) = self.buf.first_chunk::<HEADER_LEN>().map(Head::parse) else {
                return Ok(out);
            };
            match self.decoder.decode(&mut self.buf) {
                Ok(Some(frame)) => out.push((head, frame)),
                Ok(None) => return Ok(out),
                Err(e) => {
                    self.broken = true;
                    return Err(format!("undecodable frame {head:?}: {e}"));
                }
            }
        }
    }
}

/// What the observer knows about one direction S→R.
#[derive(Debug)]
pub struct DirState {
    /// Frames as S writes them.
    written: Reader,
    /// Frames as R reads them.
    read: Reader,
    /// S's connection send window (§6.9.1).
    pub conn_window: i64,
    /// Per stream: WINDOW_UPDATE credit S has read minus DATA S has written.
    pub stream_credit: BTreeMap<StreamId, i64>,
    /// R's SETTINGS_INITIAL_WINDOW_SIZE as S knows it.
    pub peer_initial_window: i64,
    /// R's SETTINGS_MAX_FRAME_SIZE as S knows it.
    pub peer_max_frame: u32,
    /// Flow-controlled DATA bytes S wrote and R read, in all and per stream.
    pub data_written: u64,
    pub data_read: u64,
    pub data_written_by_stream: BTreeMap<StreamId, u64>,
    pub data_read_by_stream: BTreeMap<StreamId, u64>,
    /// Streams S sent RST_STREAM on.
    pub resets_written: BTreeSet<StreamId>,
    /// Bytes S wrote and R read.
    pub bytes_written: u64,
    pub bytes_read: u64,
}

impl DirState {
    fn new(preface: bool) -> Self {
        DirState {
            written: Reader::new(preface),
            read: Reader::new(preface),
            conn_window: i64::from(DEFAULT_INITIAL_WINDOW_SIZE),
            stream_credit: BTreeMap::new(),
            peer_initial_window: i64::from(DEFAULT_INITIAL_WINDOW_SIZE),
            peer_max_frame: DEFAULT_MAX_FRAME_SIZE,
            data_written: 0,
            data_read: 0,
            data_written_by_stream: BTreeMap::new(),
            data_read_by_stream: BTreeMap::new(),
            resets_written: BTreeSet::new(),
            bytes_written: 0,
            bytes_read: 0,
        }
    }

    /// S's send window on `stream` now.
    pub fn stream_window(&self, stream: StreamId) -> i64 {
        self.peer_initial_window + self.stream_credit.get(&stream).copied().unwrap_or(0)
    }

    /// DATA bytes R read on `stream`.
    pub fn read_on(&self, stream: StreamId) -> u64 {
        self.data_read_by_stream.get(&stream).copied().unwrap_or(0)
    }
}

/// Decodes both directions and checks flow control; every breach is kept
/// in `violations` with the direction and the numbers.
#[derive(Debug)]
pub struct WireObserver {
    dirs: [DirState; 2],
    pub violations: Vec<String>,
}

impl Default for WireObserver {
    fn default() -> Self {
        WireObserver::new()
    }
}

impl WireObserver {
    pub fn new() -> Self {
        WireObserver {
            dirs: [DirState::new(true), DirState::new(false)],
            violations: Vec::new(),
        }
    }

    pub fn dir(&self, dir: Dir) -> &DirState {
        &self.dirs[dir.index()]
    }

    fn violation(&mut self, dir: Dir, what: String) {
        self.violations.push(format!("{dir:?}: {what}"));
    }

    /// S (the sender of `dir`) wrote `bytes`.
    pub fn written(&mut self, dir: Dir, bytes: &[u8]) {
        let d = &mut self.dirs[dir.index()];
        d.bytes_written += bytes.len() as u64;
        let frames = match d.written.push(bytes) {
            Ok(frames) => frames,
            Err(e) => {
                self.violation(dir, format!("sender wrote {e}"));
                return;
            }
        };
        for (head, frame) in frames {
            self.on_written(dir, &head, frame);
        }
    }

    /// R (the receiver of `dir`) is about to read `bytes`.
    pub fn read(&mut self, dir: Dir, bytes: &[u8]) {
        let d = &mut self.dirs[dir.index()];
        d.bytes_read += bytes.len() as u64;
        let frames = match d.read.push(bytes) {
            Ok(frames) => frames,
            Err(e) => {
                self.violation(dir, format!("receiver read {e}"));
                return;
            }
        };
        for (_, frame) in frames {
            self.on_read(dir, frame);
        }
    }

    fn on_written(&mut self, dir: Dir, head: &Head, frame: Frame) {
        let d = &mut self.dirs[dir.index()];
        // §4.2: no frame may exceed the receiver's SETTINGS_MAX_FRAME_SIZE.
        if head.len > d.peer_max_frame {
            let max = d.peer_max_frame;
            self.violation(
                dir,
                format!(
                    "{:?} of {} bytes above the peer's SETTINGS_MAX_FRAME_SIZE {max}",
                    head.kind, head.len
                ),
            );
        }
        let d = &mut self.dirs[dir.index()];
        match frame {
            Frame::Data(data) => {
                let id = data.stream_id;
                let len = data.flow_controlled_len();
                let (conn, stream) = (d.conn_window, d.stream_window(id));
                *d.data_written_by_stream.entry(id).or_default() += u64::from(len);
                d.data_written += u64::from(len);
                d.conn_window -= i64::from(len);
                *d.stream_credit.entry(id).or_default() -= i64::from(len);
                // §6.9.1: "a sender MUST NOT send a flow-controlled frame with
                // a length that exceeds the space available in either of the
                // flow-control windows advertised by the receiver".
                if len > 0 && i64::from(len) > conn.min(stream) {
                    self.violation(
                        dir,
                        format!(
                            "DATA of {len} on stream {id:?} with connection window {conn} \
                             and stream window {stream}"
                        ),
                    );
                }
            }
            Frame::RstStream(r) => {
                d.resets_written.insert(r.stream_id);
            }
            _ => {}
        }
    }

    /// A frame of `dir` reaches R; WINDOW_UPDATE and SETTINGS from R change
    /// what R may *send*, so they act on the reverse direction.
    fn on_read(&mut self, dir: Dir, frame: Frame) {
        let max = i64::from(MAX_WINDOW_SIZE);
        match frame {
            Frame::Data(data) => {
                let d = &mut self.dirs[dir.index()];
                let len = u64::from(data.flow_controlled_len());
                d.data_read += len;
                *d.data_read_by_stream.entry(data.stream_id).or_default() += len;
            }
            Frame::WindowUpdate(w) => {
                let back = &mut self.dirs[dir.reverse().index()];
                let inc = i64::from(w.increment);
                let after = if w.stream_id.is_zero() {
                    back.conn_window += inc;
                    back.conn_window
                } else {
                    *back.stream_credit.entry(w.stream_id).or_default() += inc;
                    back.stream_window(w.stream_id)
                };
                // §6.9.1: a window may not exceed 2^31-1.
                if after > max {
                    self.violation(
                        dir,
                        format!(
                            "WINDOW_UPDATE on {:?} raised a window to {after}",
                            w.stream_id
                        ),
                    );
                }
            }
            Frame::Settings(s) if !s.ack => {
                let back = &mut self.dirs[dir.reverse().index()];
                for setting in s.values {
                    match setting {
                        // §6.9.2: the change applies to every stream window
                        // at once; the connection window is untouched.
                        Setting::InitialWindowSize(v) => back.peer_initial_window = i64::from(v),
                        Setting::MaxFrameSize(v) => back.peer_max_frame = v,
                        _ => {}
                    }
                }
                let worst = back
                    .stream_credit
                    .keys()
                    .map(|&id| back.stream_window(id))
                    .max()
                    .unwrap_or(0);
                if worst > max {
                    self.violation(dir, format!("SETTINGS raised a stream window to {worst}"));
                }
            }
            _ => {}
        }
    }
}

/// A client and a server joined in memory through a `WireObserver`.
///
/// The driver loop is the one `Connection` documents: after input, output is
/// polled until `None` (so frames are built and observed at the same
/// moment), and once an endpoint is closed and flushed its transport closes:
/// the peer gets `handle_eof`.
#[derive(Debug)]
pub struct Link {
    pub client: Connection,
    pub server: Connection,
    pub now: Instant,
    pub rng: Rng,
    pub observer: WireObserver,
    /// Written, not yet delivered, per direction.
    in_flight: [BytesMut; 2],
    /// The receiver's partial-frame buffer, per direction.
    inbox: [BytesMut; 2],
    /// End of stream delivered, per direction.
    eof: [bool; 2],
}

impl Link {
    pub fn new(client: Config, server: Config, seed: u64) -> Self {
        let now = Instant::now();
        Link {
            client: Connection::client(client, now),
            server: Connection::server_for(h2sim_proto::Protocol::Http2, server, now),
            now,
            rng: Rng::new(seed),
            observer: WireObserver::new(),
            in_flight: [BytesMut::new(), BytesMut::new()],
            inbox: [BytesMut::new(), BytesMut::new()],
            eof: [false, false],
        }
    }

    /// The endpoint that writes `dir`.
    fn sender(&mut self, dir: Dir) -> &mut Connection {
        match dir {
            Dir::ClientToServer => &mut self.client,
            Dir::ServerToClient => &mut self.server,
        }
    }

    /// The endpoint that reads `dir`.
    fn receiver(&mut self, dir: Dir) -> &mut Connection {
        self.sender(dir.reverse())
    }

    /// Takes everything the sender of `dir` has to write; true if any.
    pub fn collect(&mut self, dir: Dir) -> bool {
        let now = self.now;
        let mut chunks: Vec<Bytes> = Vec::new();
        while let Some(chunk) = self.sender(dir).poll_transmit(now) {
            chunks.push(chunk);
        }
        for chunk in &chunks {
            self.observer.written(dir, chunk);
            self.in_flight[dir.index()].extend_from_slice(chunk);
        }
        !chunks.is_empty()
    }

    /// Bytes written on `dir` and not yet delivered.
    pub fn in_flight(&self, dir: Dir) -> usize {
        self.in_flight[dir.index()].len()
    }

    /// Delivers up to `limit` bytes in flight on `dir`, in pieces of random
    /// size; true if any moved.
    pub fn deliver(&mut self, dir: Dir, limit: usize) -> bool {
        let i = dir.index();
        let mut left = limit.min(self.in_flight[i].len());
        let moved = left > 0;
        while left > 0 {
            let n = 1 + self.rng.below(left.min(4096));
            left -= n;
            let piece = self.in_flight[i].split_to(n);
            self.observer.read(dir, &piece);
            self.inbox[i].extend_from_slice(&piece);
            let now = self.now;
            let mut inbox = std::mem::take(&mut self.inbox[i]);
            self.receiver(dir).handle_input(now, &mut inbox);
            self.inbox[i] = inbox;
        }
        moved
    }

    /// Closes the transport of an endpoint that is over and flushed: its
    /// peer reads end of stream. True if that happened now.
    fn close_transports(&mut self) -> bool {
        let mut moved = false;
        for dir in [Dir::ClientToServer, Dir::ServerToClient] {
            let i = dir.index();
            let now = self.now;
            if !self.eof[i] && self.in_flight[i].is_empty() && self.sender(dir).is_closed() {
                self.eof[i] = true;
                self.receiver(dir).handle_eof(now);
                moved = true;
            }
        }
        moved
    }

    /// Exchanges bytes until neither side has anything to say; true if
    /// anything moved. Events are left for the caller.
    pub fn flush(&mut self) -> bool {
        let mut moved = false;
        for _ in 0..100_000 {
            let a = self.collect(Dir::ClientToServer);
            let b = self.deliver(Dir::ClientToServer, usize::MAX);
            let c = self.collect(Dir::ServerToClient);
            let d = self.deliver(Dir::ServerToClient, usize::MAX);
            let e = self.close_transports();
            if !(a || b || c || d || e) {
                return moved;
            }
            moved = true;
        }
        panic!("link did not settle");
    }

    /// Advances the virtual clock and fires due timers on both sides.
    pub fn advance(&mut self, by: Duration) {
        self.now += by;
        let now = self.now;
        for conn in [&mut self.client, &mut self.server] {
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                conn.handle_timeout(now);
            }
        }
    }

    /// The earliest timer of either side.
    pub fn next_timeout(&self) -> Option<Instant> {
        [self.client.poll_timeout(), self.server.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }
}
