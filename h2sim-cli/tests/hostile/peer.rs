//! An HTTP/2 peer over a real socket that writes whatever bytes it is given
//! and records what the other side sends back, read on a thread of its own
//! so a flood never stalls on a full receive buffer unless the attack wants
//! it to (a peer that does not read starts its reader late).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use h2sim_proto::Reason;
use h2sim_proto::frame::{Frame, FrameDecoder, MAX_FRAME_SIZE_LIMIT, PREFACE};

use super::wire;

/// The most any single read or wait may take: only a bound on a hang.
pub const HANG: Duration = Duration::from_secs(20);

/// What the other side sent, as frames (DATA payloads counted, not kept).
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub frames: Vec<Frame>,
    pub data_bytes: u64,
    /// The stream ended (EOF or reset) or a frame did not decode.
    pub closed: bool,
    /// Why reading ended, for failure messages.
    pub end: String,
}

impl Seen {
    pub fn goaway(&self) -> Option<Reason> {
        self.frames.iter().find_map(|f| match f {
            Frame::GoAway(g) => Some(g.reason),
            _ => None,
        })
    }

    pub fn resets(&self) -> impl Iterator<Item = (u32, Reason)> + '_ {
        self.frames.iter().filter_map(|f| match f {
            Frame::RstStream(r) => Some((r.stream_id.value(), r.reason)),
            _ => None,
        })
    }

    /// Streams whose response ended (END_STREAM on HEADERS or DATA).
    pub fn ended(&self, stream: u32) -> bool {
        self.frames.iter().any(|f| match f {
            Frame::Headers(h) => h.stream_id.value() == stream && h.end_stream,
            Frame::Data(d) => d.stream_id.value() == stream && d.end_stream,
            _ => false,
        })
    }

    /// The `:status` of each response, by stream, decoding every field
    /// block in order (they share one HPACK table; CONTINUATION is not
    /// expected from our server).
    pub fn statuses(&self) -> Vec<(u32, String)> {
        let mut decoder = h2sim_proto::hpack::Decoder::new(4096);
        let mut out = Vec::new();
        for f in &self.frames {
            if let Frame::Headers(h) = f {
                let mut fields = Vec::new();
                decoder
                    .decode(&h.fragment, &mut fields)
                    .expect("our server's HPACK");
                if let Some(status) = fields.iter().find(|f| &f.name[..] == b":status") {
                    let status = String::from_utf8_lossy(&status.value).into_owned();
                    out.push((h.stream_id.value(), status));
                }
            }
        }
        out
    }

    /// "GOAWAY(ENHANCE_YOUR_CALM)", "RST_STREAM(PROTOCOL_ERROR) x3", … for
    /// the report.
    pub fn outcome(&self) -> String {
        let mut parts = Vec::new();
        let resets: Vec<Reason> = self.resets().map(|(_, r)| r).collect();
        if let Some(first) = resets.first() {
            parts.push(format!("RST_STREAM({}) x{}", name(*first), resets.len()));
        }
        if let Some(reason) = self.goaway() {
            parts.push(format!("GOAWAY({})", name(reason)));
        }
        parts.push(if self.closed { "closed" } else { "open" }.to_owned());
        parts.join(", ")
    }
}

pub fn name(reason: Reason) -> String {
    reason
        .name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("0x{:x}", reason.0))
}

/// One attacking (or probing) HTTP/2 connection.
pub struct Peer {
    tcp: TcpStream,
    seen: Arc<Mutex<Seen>>,
    reader: Option<JoinHandle<()>>,
    /// Bytes read during the handshake, past the server's SETTINGS.
    early: BytesMut,
}

impl Peer {
    /// Connects, sends the preface and `settings`, reads the server's
    /// SETTINGS and acknowledges them, then starts reading (unless
    /// `reading` is false: see [`Peer::start_reading`]).
    pub fn h2(addr: SocketAddr, settings: &[(u16, u32)], reading: bool) -> Peer {
        let mut tcp = TcpStream::connect(addr).expect("connect");
        tcp.set_nodelay(true).unwrap();
        tcp.set_read_timeout(Some(HANG)).unwrap();
        // A server that stops reading a flood throttles it: the flood ends.
        tcp.set_write_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut hello = PREFACE.to_vec();
        hello.extend(wire::settings(settings));
        tcp.write_all(&hello).unwrap();
        let mut early = BytesMut::new();
        let mut decoder = FrameDecoder::new(MAX_FRAME_SIZE_LIMIT);
        loop {
            match decoder.decode(&mut early) {
                Ok(Some(Frame::Settings(s))) if !s.ack => break,
                Ok(Some(_)) => continue,
                Ok(None) => {}
                Err(e) => panic!("server's first frames: {e:?}"),
            }
            let mut chunk = [0u8; 4096];
            let n = tcp.read(&mut chunk).expect("read the server's SETTINGS");
            assert!(n > 0, "server closed before its SETTINGS");
            early.extend_from_slice(&chunk[..n]);
        }
        tcp.write_all(&wire::settings_ack()).unwrap();
        let mut peer = Peer {
            tcp,
            seen: Arc::default(),
            reader: None,
            early,
        };
        if reading {
            peer.start_reading();
        }
        peer
    }

    /// Starts the reader thread: it decodes frames until EOF, an error, or
    /// [`HANG`] without input.
    pub fn start_reading(&mut self) {
        if self.reader.is_some() {
            return;
        }
        let mut tcp = self.tcp.try_clone().unwrap();
        let seen = self.seen.clone();
        let mut buf = std::mem::take(&mut self.early);
        self.reader = Some(std::thread::spawn(move || {
            let mut decoder = FrameDecoder::new(MAX_FRAME_SIZE_LIMIT);
            let mut chunk = vec![0u8; 64 * 1024];
            let end = loop {
                loop {
                    match decoder.decode(&mut buf) {
                        Ok(Some(frame)) => record(&seen, frame),
                        Ok(None) => break,
                        Err(e) => {
                            let mut s = seen.lock().unwrap();
                            s.closed = true;
                            s.end = format!("bad frame: {e:?}");
                            return;
                        }
                    }
                }
                match tcp.read(&mut chunk) {
                    Ok(0) => break "EOF".to_owned(),
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    Err(e) => break e.to_string(),
                }
            };
            let mut s = seen.lock().unwrap();
            s.closed = true;
            s.end = end;
        }));
    }

    /// Writes `bytes`; an error (the server closed) is returned, not fatal.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.tcp.write_all(bytes)
    }

    /// Writes the frames `make(i)` for `i` in `0..count`, batched, and
    /// stops at the first write error. Returns how many were written.
    pub fn flood(&mut self, count: usize, mut make: impl FnMut(usize) -> Vec<u8>) -> usize {
        let mut batch = Vec::with_capacity(64 * 1024);
        let mut sent = 0;
        for i in 0..count {
            batch.extend(make(i));
            if batch.len() >= 32 * 1024 || i + 1 == count {
                if self.tcp.write_all(&batch).is_err() {
                    return sent;
                }
                sent = i + 1;
                batch.clear();
            }
        }
        sent
    }

    /// What was received so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }

    /// Waits until `done(seen)` holds or reading ended; returns what was seen.
    pub fn wait(&mut self, done: impl Fn(&Seen) -> bool) -> Seen {
        self.start_reading();
        let start = Instant::now();
        loop {
            let seen = self.seen();
            if done(&seen) || seen.closed || start.elapsed() > HANG {
                return seen;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits until the server closed the connection.
    pub fn wait_closed(&mut self) -> Seen {
        self.start_reading();
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        self.seen()
    }

    /// A PING answered: the server still reads and serves this connection.
    pub fn alive(&mut self) -> bool {
        let payload = *b"alive?!!";
        if self.send(&wire::ping(false, payload)).is_err() {
            return false;
        }
        let seen = self.wait(|s| {
            s.frames
                .iter()
                .any(|f| matches!(f, Frame::Ping(p) if p.ack && p.payload == payload))
        });
        !seen.closed
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.tcp.shutdown(std::net::Shutdown::Both);
    }
}

/// The frames in `bytes`, as a closed connection's [`Seen`].
pub fn decode(bytes: &[u8]) -> Seen {
    let seen = Mutex::new(Seen::default());
    let mut buf = BytesMut::from(bytes);
    let mut decoder = FrameDecoder::new(MAX_FRAME_SIZE_LIMIT);
    while let Ok(Some(frame)) = decoder.decode(&mut buf) {
        record(&seen, frame);
    }
    let mut seen = seen.into_inner().unwrap();
    seen.closed = true;
    seen
}

fn record(seen: &Mutex<Seen>, frame: Frame) {
    let mut s = seen.lock().unwrap();
    match frame {
        Frame::Data(mut d) => {
            s.data_bytes += d.payload.len() as u64;
            d.payload = Bytes::new();
            s.frames.push(Frame::Data(d));
        }
        other => s.frames.push(other),
    }
}
