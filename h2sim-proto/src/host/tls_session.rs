//! A rustls session between the core's buffers and a socket's bytes: what
//! every runtime does to carry a connection over TLS, written once. The
//! runtime still owns the socket and its waits; it hands this the
//! ciphertext it read, and a writer for the records.
//!
//! Output: a turn's chunks from the outbox, up to about 256 KiB, go to
//! rustls in one vectored write, so they share records (rustls gathers
//! them into records of up to 16 KiB: one copy, into the record it
//! encrypts); the records go to the socket from rustls's own buffers, up
//! to 64 of them in one vectored write.
//!
//! Input: the runtime reads ciphertext into one scratch buffer per thread
//! ([`with_cipher_scratch`]), up to 32 KiB at a time, and hands it over at
//! once; rustls decrypts into its own buffer and the plaintext is copied
//! once, into the [`ReadBuf`]'s spare capacity (nothing zero-filled first).
//! rustls reading the socket itself would `recv` at most 4 KiB at a time.
//! The read size is a trade: a read that takes less than what arrived
//! splits the peer's burst over more turns, each with its own write, and
//! one that takes all of it holds the next requests back until every
//! answer read is handled. A client of 100 streams over TLS, against
//! rustls reading for itself: 128 KiB reads cost POSTs 15% less CPU per
//! request but GETs 9% more, at a sixth less req/s; 32 KiB reads cost
//! GETs about 5% less at 3-10% more req/s, POSTs 1-3% less.

use std::cell::RefCell;
use std::io::{self, BufRead, IoSlice, Write};

use super::{Outbox, ReadBuf};

/// Plaintext handed to rustls per turn, about: a burst of answers to 100
/// streams of 1 KiB leaves in one write.
const TURN: usize = 256 * 1024;
/// Outbox chunks handed to rustls per turn, at most.
const MAX_CHUNKS: usize = 256;
/// Ciphertext read from the socket per read before rustls takes it.
const CIPHER_READ: usize = 32 * 1024;

/// One connection's TLS session once the runtime has it: rustls, what it
/// holds for the socket, and whether the peer's side ended.
#[derive(Debug)]
pub struct TlsSession {
    conn: rustls::Connection,
    /// Bytes rustls holds for the socket, about: the plaintext of the turn
    /// it took less what has been written since (records carry a few
    /// bytes more than their plaintext).
    held: usize,
    /// The peer closed the TLS session or the socket.
    ended: bool,
}

impl TlsSession {
    pub fn new(conn: impl Into<rustls::Connection>) -> Self {
        let mut conn = conn.into();
        // The outbox and the turn bound what waits; rustls's own limit
        // would only make `write` accept part of a turn.
        conn.set_buffer_limit(None);
        TlsSession {
            conn,
            held: 0,
            ended: false,
        }
    }

    /// The rustls session, for what it negotiated.
    pub fn connection(&self) -> &rustls::Connection {
        &self.conn
    }

    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// Whether records wait for the socket (see [`TlsSession::write_to`]).
    pub fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// Bytes encrypted and not yet written, about: what a driver counts
    /// against its output bound besides the outbox.
    pub fn backlog(&self) -> usize {
        if self.conn.wants_write() {
            self.held
        } else {
            0
        }
    }

    /// Nothing is waiting to be written, here or in `out`.
    pub fn is_flushed(&self, out: &Outbox) -> bool {
        out.is_empty() && !self.conn.wants_write()
    }

    /// Encrypts the next turn's output from the front of `out`, once the
    /// last turn's records have all been written: a turn's output leaves
    /// in one write, and what waits stays in the outbox, where the driver
    /// bounds it.
    pub fn encrypt(&mut self, out: &mut Outbox) -> io::Result<()> {
        if self.conn.wants_write() || out.is_empty() {
            return Ok(());
        }
        let mut iov = [IoSlice::new(&[]); MAX_CHUNKS];
        let mut count = out.slices(&mut iov);
        let mut total = 0;
        for (i, slice) in iov[..count].iter().enumerate() {
            total += slice.len();
            if total >= TURN {
                count = i + 1;
                break;
            }
        }
        let n = self.conn.writer().write_vectored(&iov[..count])?;
        out.advance(n);
        self.held = n;
        Ok(())
    }

    /// One vectored write of the records rustls holds (a turn's output,
    /// handshake flights, an alert, close_notify) to `socket`, a runtime's
    /// adapter that answers `WouldBlock` when the socket is full. Returns
    /// the bytes written, 0 when nothing waited; a socket that takes
    /// nothing is `WriteZero`.
    pub fn write_to(&mut self, socket: &mut impl Write) -> io::Result<usize> {
        if !self.conn.wants_write() {
            return Ok(0);
        }
        let n = self.conn.write_tls(socket)?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        self.held = self.held.saturating_sub(n);
        Ok(n)
    }

    /// Queues close_notify (see [`TlsSession::write_to`]).
    pub fn close(&mut self) {
        self.conn.send_close_notify();
    }

    /// A read, before the socket is read: plaintext rustls already holds
    /// (it came behind the handshake, or a turn's records held more than
    /// was taken) goes into `input`. `Some(n)`: the read is done, `n` bytes
    /// of plaintext, or 0 when the session is over; `None`: read the socket.
    pub fn buffered(&mut self, input: &mut ReadBuf) -> io::Result<Option<usize>> {
        let drained = drain_plaintext(&mut self.conn, input)?;
        if drained.moved > 0 {
            return Ok(Some(drained.moved));
        }
        self.ended |= drained.closed;
        Ok(self.ended.then_some(0))
    }

    /// `records` read from the socket (empty: the socket ended) go to
    /// rustls, their plaintext into `input`. Returns what the read counts
    /// as: the bytes read, or at the socket's end the plaintext they
    /// brought (the next read reports the end). A bad record is an error,
    /// and rustls's alert waits to be written.
    pub fn received(&mut self, records: &[u8], input: &mut ReadBuf) -> io::Result<usize> {
        // Their plaintext is shorter than they are.
        input.reserve(records.len());
        let plaintext = feed(&mut self.conn, records, input)?;
        if records.is_empty() {
            self.ended = true;
            return Ok(plaintext);
        }
        Ok(records.len())
    }

    /// Handshake records read from the socket go to rustls, all of them
    /// unless it stops reading; its answer (or its alert, if they were
    /// bad) waits to be written.
    pub fn handshake_received(&mut self, mut records: &[u8]) -> io::Result<()> {
        while !records.is_empty() {
            if self.conn.read_tls(&mut records)? == 0 {
                break;
            }
            self.conn.process_new_packets().map_err(invalid)?;
        }
        Ok(())
    }
}

thread_local! {
    /// Ciphertext scratch for every TLS read on this thread: a read's
    /// records go to rustls at once, so one buffer serves all the thread's
    /// connections instead of one held by each.
    static CIPHER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Lends the thread's ciphertext scratch to `read`, which reads the socket
/// into it and hands what it read to [`TlsSession::received`].
pub fn with_cipher_scratch<T>(read: impl FnOnce(&mut [u8]) -> T) -> T {
    CIPHER.with_borrow_mut(|cipher| {
        if cipher.is_empty() {
            cipher.resize(CIPHER_READ, 0);
        }
        read(cipher)
    })
}

fn invalid(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Gives rustls the records in `data` (empty: the socket's end of stream),
/// moving the plaintext into `input` as it comes so rustls's buffer never
/// fills up; returns the plaintext bytes moved.
fn feed(conn: &mut rustls::Connection, mut data: &[u8], input: &mut ReadBuf) -> io::Result<usize> {
    let mut moved = 0;
    loop {
        let n = match conn.read_tls(&mut data) {
            Ok(n) => n,
            // rustls's plaintext buffer is full: empty it and go on.
            Err(e) if e.kind() == io::ErrorKind::Other => {
                moved += drain_plaintext(conn, input)?.moved;
                continue;
            }
            Err(e) => return Err(e),
        };
        conn.process_new_packets().map_err(invalid)?;
        moved += drain_plaintext(conn, input)?.moved;
        // 0: end of stream, or close_notify came and rustls reads no more.
        if n == 0 || data.is_empty() {
            return Ok(moved);
        }
    }
}

/// What moving rustls's plaintext found.
#[derive(Debug, Clone, Copy, Default)]
struct Drained {
    /// Plaintext bytes moved.
    moved: usize,
    /// The TLS session is over (close_notify, or the socket ended).
    closed: bool,
}

/// Moves the plaintext rustls holds into `input`.
fn drain_plaintext(conn: &mut rustls::Connection, input: &mut ReadBuf) -> io::Result<Drained> {
    let mut drained = Drained::default();
    loop {
        let mut reader = conn.reader();
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(drained),
            // The peer closed the socket without close_notify: for HTTP the
            // framing tells whether anything was cut short, so this is an
            // end of stream like any other (as most HTTP stacks treat it).
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                drained.closed = true;
                return Ok(drained);
            }
            Err(e) => return Err(e),
        };
        // Empty without an error: close_notify was received.
        if chunk.is_empty() {
            drained.closed = true;
            return Ok(drained);
        }
        let n = chunk.len();
        input.push(chunk);
        reader.consume(n);
        drained.moved += n;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::host::tls::{
        Certified, ClientAuth, ClientTls, ServerVerification, TlsVersions, client_config,
        server_config_for,
    };
    use bytes::Bytes;
    use rustls_pki_types::ServerName;

    /// A client and a server session, handshake not yet run.
    fn sessions() -> (TlsSession, TlsSession) {
        let identity = Certified::self_signed(&["localhost".into()]).unwrap();
        let server = server_config_for(identity, &ClientAuth::None, TlsVersions::default());
        let server = rustls::ServerConnection::new(server.unwrap()).unwrap();
        let client = client_config(&ClientTls {
            verification: ServerVerification::Off,
            identity: None,
            versions: TlsVersions::default(),
        });
        let name = ServerName::try_from("localhost").unwrap();
        let client = rustls::ClientConnection::new(client.unwrap(), name).unwrap();
        (TlsSession::new(client), TlsSession::new(server))
    }

    /// All the records `from` holds, as one socket would take them.
    fn records(from: &mut TlsSession) -> Vec<u8> {
        let mut socket = Vec::new();
        while from.write_to(&mut socket).unwrap() > 0 {}
        socket
    }

    fn handshake() -> (TlsSession, TlsSession) {
        let (mut client, mut server) = sessions();
        while client.is_handshaking() || server.is_handshaking() {
            server.handshake_received(&records(&mut client)).unwrap();
            client.handshake_received(&records(&mut server)).unwrap();
        }
        (client, server)
    }

    /// Carries all of `out` from `from` to `to` in turns; returns the
    /// turns, the bytes of records and the plaintext read.
    fn carry(
        from: &mut TlsSession,
        out: &mut Outbox,
        to: &mut TlsSession,
    ) -> (usize, usize, Vec<u8>) {
        let mut input = ReadBuf::default();
        let (mut turns, mut bytes) = (0, 0);
        while !from.is_flushed(out) {
            from.encrypt(out).unwrap();
            let turn = records(from);
            turns += 1;
            bytes += turn.len();
            assert_eq!(to.received(&turn, &mut input).unwrap(), turn.len());
        }
        let mut plaintext = Vec::new();
        input.take_input(|got| plaintext.extend_from_slice(&got.split()));
        (turns, bytes, plaintext)
    }

    #[test]
    fn small_chunks_share_records_and_large_ones_arrive_whole() {
        let (mut client, mut server) = handshake();
        let mut out = Outbox::default();
        let mut expected = Vec::new();
        for i in 0..50u8 {
            let chunk = vec![i; 9];
            expected.extend_from_slice(&chunk);
            out.push(Bytes::from(chunk));
        }
        let (turns, bytes, plaintext) = carry(&mut client, &mut out, &mut server);
        assert_eq!(plaintext, expected);
        // 450 bytes in one record (a TLS 1.3 record's overhead is 22
        // bytes), not 50 records.
        assert_eq!((turns, bytes), (1, 450 + 22));

        let large: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        out.push(Bytes::from(large.clone()));
        let (turns, _, plaintext) = carry(&mut server, &mut out, &mut client);
        assert_eq!(plaintext, large);
        assert_eq!(turns, 1, "a chunk is taken whole");
        assert_eq!(server.backlog(), 0);
    }

    #[test]
    fn a_turn_takes_about_256_kib_and_the_next_waits_for_its_records() {
        const CHUNK: usize = 16 * 1024;
        let (mut client, _) = handshake();
        let mut out = Outbox::default();
        for _ in 0..20 {
            out.push(Bytes::from(vec![7u8; CHUNK]));
        }
        client.encrypt(&mut out).unwrap();
        assert_eq!(out.len(), 4 * CHUNK);
        assert_eq!(client.backlog(), 16 * CHUNK);
        // A socket that takes 1000 bytes, then is full.
        let mut socket = Socket {
            room: 1000,
            took: 0,
        };
        assert_eq!(client.write_to(&mut socket).unwrap(), 1000);
        let full = client.write_to(&mut socket).unwrap_err();
        assert_eq!(full.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(client.backlog(), 16 * CHUNK - 1000);
        // Until the turn's records have left, no more is encrypted.
        client.encrypt(&mut out).unwrap();
        assert_eq!(out.len(), 4 * CHUNK);
        socket.room = usize::MAX;
        while client.write_to(&mut socket).unwrap() > 0 {}
        assert_eq!(client.backlog(), 0);
        // Sixteen full records.
        assert_eq!(socket.took, 16 * (CHUNK + 22));
        client.encrypt(&mut out).unwrap();
        assert!(out.is_empty());
    }

    /// A socket with room for `room` more bytes.
    struct Socket {
        room: usize,
        took: usize,
    }

    impl Write for Socket {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.took += n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn plaintext_behind_the_handshake_waits_for_the_first_read() {
        let (mut client, mut server) = sessions();
        server.handshake_received(&records(&mut client)).unwrap();
        client.handshake_received(&records(&mut server)).unwrap();
        assert!(!client.is_handshaking());
        // The client's Finished and its first request leave together.
        let mut out = Outbox::default();
        out.push(Bytes::from_static(b"GET / HTTP/1.1\r\n\r\n"));
        let mut flight = records(&mut client);
        client.encrypt(&mut out).unwrap();
        flight.extend_from_slice(&records(&mut client));
        server.handshake_received(&flight).unwrap();
        assert!(!server.is_handshaking());
        let mut input = ReadBuf::default();
        assert_eq!(server.buffered(&mut input).unwrap(), Some(18));
        assert_eq!(server.buffered(&mut input).unwrap(), None);
    }

    #[test]
    fn close_notify_or_the_sockets_end_ends_the_reads() {
        let (mut client, mut server) = handshake();
        let mut input = ReadBuf::default();
        client.close();
        let close_notify = records(&mut client);
        assert!(!close_notify.is_empty());
        let n = server.received(&close_notify, &mut input).unwrap();
        assert_eq!(n, close_notify.len());
        assert_eq!(server.buffered(&mut input).unwrap(), Some(0));

        // Without close_notify: the socket's end is the session's.
        let (mut client, mut server) = handshake();
        let mut out = Outbox::default();
        out.push(Bytes::from_static(b"last words"));
        client.encrypt(&mut out).unwrap();
        server.received(&records(&mut client), &mut input).unwrap();
        assert_eq!(server.received(&[], &mut input).unwrap(), 0);
        assert_eq!(server.buffered(&mut input).unwrap(), Some(0));
        assert_eq!(input.pending(), 10);
    }

    #[test]
    fn a_bad_record_is_an_error_and_leaves_an_alert_to_send() {
        let (_, mut server) = handshake();
        let mut input = ReadBuf::default();
        // An application-data record that does not decrypt.
        let mut bad = vec![23, 3, 3, 0, 40];
        bad.extend_from_slice(&[0xab; 40]);
        let error = server.received(&bad, &mut input).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(!records(&mut server).is_empty(), "the alert waits");

        // Garbage during the handshake likewise.
        let (_, mut server) = sessions();
        let error = server
            .handshake_received(b"GET / HTTP/1.1\r\n\r\n")
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(!records(&mut server).is_empty());
    }

    #[test]
    fn the_scratch_is_lent_at_its_read_size() {
        assert_eq!(with_cipher_scratch(|buf| buf.len()), CIPHER_READ);
    }
}
