//! An independent witness of flow control: `WireObserver` decodes every byte
//! each direction of a connection carries and keeps its own account of the
//! windows of RFC 9113 §5.2 and §6.9, and a `Link` is a `Pair` (a client and
//! a server `Connection` in memory, on a virtual clock, bytes split at random
//! points) with an observer on the wire.
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
//! `None` before it delivers more input: `Pair` does.)
//!
//! Stream windows are kept as credit (updates read minus DATA written) on
//! top of the setting's current value: S applies every change of
//! SETTINGS_INITIAL_WINDOW_SIZE to all its streams (§6.9.2), so when a
//! stream came into being does not matter.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use bytes::BytesMut;
use h2sim_proto::frame::{
    DEFAULT_INITIAL_WINDOW_SIZE, DEFAULT_MAX_FRAME_SIZE, Frame, FrameDecoder, HEADER_LEN, Head,
    MAX_FRAME_SIZE_LIMIT, MAX_WINDOW_SIZE, PREFACE, Setting,
};
use h2sim_proto::pair::{Dir, Observer, Pair};
use h2sim_proto::{Config, Connection, StreamId};

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
}

impl Observer for WireObserver {
    /// S (the sender of `dir`) wrote `bytes`.
    fn written(&mut self, dir: Dir, bytes: &[u8]) {
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
    fn read(&mut self, dir: Dir, bytes: &[u8]) {
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
}

impl WireObserver {
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
pub type Link = Pair<Connection, Connection, WireObserver>;

/// Our client against our HTTP/2 server, deliveries split by `seed`, the
/// observer on the wire from the first byte.
pub fn link(client: Config, server: Config, seed: u64) -> Link {
    let now = Instant::now();
    Pair::join(
        Connection::client(client, now).unwrap(),
        Connection::server_for(h2sim_proto::Protocol::Http2, server, now).unwrap(),
        now,
    )
    .split(seed)
    .observed(WireObserver::new())
}
