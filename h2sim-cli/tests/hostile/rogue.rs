//! A misbehaving HTTP/2 server for the client's side of the attacks: it
//! accepts one connection, reads the client's preface and first request,
//! then runs a script of raw frames, and finally records what the client
//! sent until it closed (its GOAWAY code, above all).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::BytesMut;
use h2sim_proto::frame::{Frame, FrameDecoder, MAX_FRAME_SIZE_LIMIT, PREFACE};

use super::peer::{HANG, Seen};
use super::wire;

/// The accepted connection, as a script sees it.
pub struct Conn {
    pub tcp: TcpStream,
    buf: BytesMut,
    decoder: FrameDecoder,
    /// The client's frames read so far.
    pub seen: Seen,
    /// Acknowledge the client's SETTINGS as they come (after `hello`).
    acks: bool,
}

impl Conn {
    /// Writes `bytes`; false once the client is gone (or stopped reading
    /// for the write timeout).
    pub fn send(&mut self, bytes: &[u8]) -> bool {
        self.tcp.write_all(bytes).is_ok()
    }

    /// The server's preface, SETTINGS (RFC 9113 §3.4); from now on the
    /// client's SETTINGS are acknowledged.
    pub fn hello(&mut self) {
        self.send(&wire::settings(&[]));
        self.acks = true;
    }

    /// The client's next frame; `None` at EOF, an error or [`HANG`].
    pub fn next(&mut self) -> Option<Frame> {
        loop {
            match self.decoder.decode(&mut self.buf) {
                Ok(Some(frame)) => {
                    if let Frame::Settings(s) = &frame
                        && !s.ack
                        && self.acks
                    {
                        self.send(&wire::settings_ack());
                    }
                    self.seen.frames.push(frame.clone());
                    return Some(frame);
                }
                Ok(None) => {}
                Err(e) => {
                    self.seen.end = format!("bad frame: {e:?}");
                    return None;
                }
            }
            let mut chunk = [0u8; 16 * 1024];
            match self.tcp.read(&mut chunk) {
                Ok(0) => {
                    self.seen.end = "EOF".into();
                    return None;
                }
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) => {
                    self.seen.end = e.to_string();
                    return None;
                }
            }
        }
    }

    /// Reads until the client's first request; returns its stream, or
    /// `None` if the client closed first.
    pub fn request(&mut self) -> Option<u32> {
        loop {
            if let Frame::Headers(h) = self.next()? {
                return Some(h.stream_id.value());
            }
        }
    }

    /// Reads what is left until the client closes.
    fn drain(&mut self) {
        while self.next().is_some() {}
        self.seen.closed = true;
    }
}

/// A listener serving one connection with `script` on a thread.
pub struct Rogue {
    pub url: String,
    thread: JoinHandle<Seen>,
}

impl Rogue {
    pub fn start(script: fn(&mut Conn)) -> Rogue {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let thread = std::thread::spawn(move || {
            let (tcp, _) = listener.accept().unwrap();
            tcp.set_read_timeout(Some(HANG)).unwrap();
            tcp.set_write_timeout(Some(Duration::from_secs(3))).unwrap();
            tcp.set_nodelay(true).unwrap();
            let mut conn = Conn {
                tcp,
                buf: BytesMut::new(),
                decoder: FrameDecoder::new(MAX_FRAME_SIZE_LIMIT),
                seen: Seen::default(),
                acks: false,
            };
            let mut preface = [0u8; PREFACE.len()];
            conn.tcp
                .read_exact(&mut preface)
                .expect("the client's preface");
            assert_eq!(&preface, PREFACE);
            script(&mut conn);
            conn.drain();
            conn.seen
        });
        Rogue { url, thread }
    }

    /// What the client sent, once it closed.
    pub fn seen(self) -> Seen {
        self.thread.join().unwrap()
    }
}
