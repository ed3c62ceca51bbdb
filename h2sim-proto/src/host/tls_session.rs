//! A rustls session between the core's buffers and a socket's bytes: what
//! every runtime does to carry a connection over TLS, written once. The
//! runtime still owns the socket and its waits; it lends this the socket
//! as a `Read + Write` that answers `WouldBlock` when it would wait, the way
//! rustls's own `read_tls`/`write_tls` take one.
//!
//! Output: a turn's chunks from the outbox, up to about 256 KiB, go to
//! rustls in one vectored write, so they share records (rustls gathers
//! them into records of up to 16 KiB: one copy, into the record it
//! encrypts); the records go to the socket from rustls's own buffers, up
//! to 64 of them in one vectored write.
//!
//! Input: ciphertext is read into one scratch buffer per thread, up to
//! 32 KiB at a time, and handed to rustls at once; rustls decrypts into its own buffer and the plaintext is copied
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
use std::io::{self, BufRead, IoSlice, Read, Write};

use super::{Outbox, ReadBuf};

/// Plaintext handed to rustls per turn, about: a burst of answers to 100
/// streams of 1 KiB leaves in one write.
const TURN: usize = 256 * 1024;
/// Outbox chunks handed to rustls per turn, at most.
const MAX_CHUNKS: usize = 256;
/// Ciphertext read from the socket per read before rustls takes it.
const CIPHER_READ: usize = 32 * 1024;
/// Ciphertext read per read while the handshake runs. Records behind the
/// peer's last flight are application data (a client sends its requests,
/// and up to a window of upload, right behind its Finished) whose
/// plaintext rustls keeps until the first read of the connection; past
/// 16 KiB of it rustls refuses more records. A read of at most 16 KiB
/// cannot bring more plaintext than that; the rest stays in the socket.
const HANDSHAKE_READ: usize = 16 * 1024;

/// One connection's TLS session once the runtime has it: rustls, and what
/// it holds for the socket. Whether the peer's side ended is rustls's own
/// state (its reader reports close_notify or the socket's end each time).
#[derive(Debug)]
pub struct TlsSession {
    conn: rustls::Connection,
    /// Bytes rustls holds for the socket, about: the plaintext of the turn
    /// it took less what has been written since (records carry a few
    /// bytes more than their plaintext).
    held: usize,
}

impl TlsSession {
    pub fn new(conn: impl Into<rustls::Connection>) -> Self {
        let mut conn = conn.into();
        // The outbox and the turn bound what waits; rustls's own limit
        // would only make `write` accept part of a turn.
        conn.set_buffer_limit(None);
        TlsSession { conn, held: 0 }
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
        // A turn may end inside a chunk, the rest of it left for the next:
        // rustls encrypts all it is given at once (its limit is off), and a
        // 200 MiB body handed whole was 200 MiB of records held at once.
        let mut iov = [IoSlice::new(&[]); MAX_CHUNKS];
        let count = out.slices_within(&mut iov, TURN);
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

    /// One read: plaintext rustls already holds (it came behind the
    /// handshake, or a read's records held more than was taken) goes into
    /// `input` first; else one read of `socket` into the thread's scratch,
    /// whose records rustls decrypts into `input`. Returns the bytes moved
    /// (records read, or plaintext), 0 once the session or the socket ended
    /// and no plaintext is left. A bad record is an error, after rustls's
    /// alert was written if the socket took it at once.
    pub fn read_from<S: Read + Write>(
        &mut self,
        socket: &mut S,
        input: &mut ReadBuf,
    ) -> io::Result<usize> {
        let drained = drain_plaintext(&mut self.conn, input)?;
        if drained.moved > 0 || drained.closed {
            return Ok(drained.moved);
        }
        let received = with_cipher_scratch(|cipher| {
            let n = socket.read(cipher)?;
            self.received(&cipher[..n], input)
        });
        if received
            .as_ref()
            .is_err_and(|e| e.kind() != io::ErrorKind::WouldBlock)
        {
            let _ = self.write_to(socket);
        }
        received
    }

    /// Takes the handshake as far as `socket` lets it: writes the flights
    /// rustls has, reads the peer's, and so on. `Ok` once the handshake is
    /// over and its last records are written; `WouldBlock` when the socket
    /// would wait (call again once the wake-up comes). Application data
    /// the peer sent right behind the handshake stays here for the first
    /// [`TlsSession::read_from`]. Records that are not a handshake are an
    /// error, after rustls's alert was written if the socket took it at
    /// once; the socket's end is `UnexpectedEof`.
    pub fn handshake<S: Read + Write>(&mut self, socket: &mut S) -> io::Result<()> {
        loop {
            while self.wants_write() {
                self.write_to(socket)?;
            }
            if !self.is_handshaking() {
                return Ok(());
            }
            if let Err(e) = self.handshake_read_from(socket) {
                if e.kind() != io::ErrorKind::WouldBlock {
                    let _ = self.write_to(socket);
                }
                return Err(e);
            }
        }
    }

    /// One read of handshake records from `socket`, all of them to rustls
    /// unless it stops reading; its answer (or its alert, if they were
    /// bad) waits to be written. The socket's end is `UnexpectedEof`.
    fn handshake_read_from(&mut self, socket: &mut impl Read) -> io::Result<()> {
        with_cipher_scratch(|cipher| {
            let n = socket.read(&mut cipher[..HANDSHAKE_READ])?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the connection during the TLS handshake",
                ));
            }
            let mut records = &cipher[..n];
            while !records.is_empty() {
                if self.conn.read_tls(&mut records)? == 0 {
                    break;
                }
                self.conn.process_new_packets().map_err(invalid)?;
            }
            Ok(())
        })
    }

    /// `records` read from the socket (empty: the socket ended) go to
    /// rustls, their plaintext into `input`. Returns what the read counts
    /// as: the bytes read, or at the socket's end the plaintext they
    /// brought (the next read reports the end).
    fn received(&mut self, records: &[u8], input: &mut ReadBuf) -> io::Result<usize> {
        if records.is_empty() {
            return feed(&mut self.conn, records, input);
        }
        // Their plaintext is shorter than they are.
        input.reserve(records.len());
        feed(&mut self.conn, records, input)?;
        Ok(records.len())
    }
}

thread_local! {
    /// Ciphertext scratch for every TLS read on this thread: a read's
    /// records go to rustls at once, so one buffer serves all the thread's
    /// connections instead of one held by each.
    static CIPHER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Lends the thread's ciphertext scratch to `read`.
fn with_cipher_scratch<T>(read: impl FnOnce(&mut [u8]) -> T) -> T {
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
        sessions_of(TlsVersions::default())
    }

    /// [`sessions`] whose client offers only `versions`.
    fn sessions_of(versions: TlsVersions) -> (TlsSession, TlsSession) {
        let identity = Certified::self_signed(&["localhost".into()]).unwrap();
        let server = server_config_for(identity, &ClientAuth::None, TlsVersions::default());
        let server = rustls::ServerConnection::new(server.unwrap()).unwrap();
        let client = client_config(&ClientTls {
            verification: ServerVerification::Off,
            identity: None,
            versions,
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

    /// The other end of a connection: what it sent is read (then
    /// `WouldBlock`, or the end once `closed`), and what is written to it
    /// is kept.
    #[derive(Default)]
    struct Wire {
        sent: Vec<u8>,
        at: usize,
        closed: bool,
        got: Vec<u8>,
    }

    impl Wire {
        fn sending(sent: Vec<u8>) -> Self {
            Wire {
                sent,
                ..Wire::default()
            }
        }
    }

    impl Read for Wire {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let rest = &self.sent[self.at..];
            if rest.is_empty() && !self.closed {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            self.at += n;
            Ok(n)
        }
    }

    impl Write for Wire {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.got.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Hands `from`'s pending records to `to` as one handshake read.
    fn flight(from: &mut TlsSession, to: &mut TlsSession) {
        let records = records(from);
        to.handshake_read_from(&mut records.as_slice()).unwrap();
    }

    fn handshake() -> (TlsSession, TlsSession) {
        handshake_of(sessions())
    }

    fn handshake_of(
        (mut client, mut server): (TlsSession, TlsSession),
    ) -> (TlsSession, TlsSession) {
        while client.is_handshaking() || server.is_handshaking() {
            flight(&mut client, &mut server);
            flight(&mut server, &mut client);
        }
        (client, server)
    }

    /// Reads all that `wire` sends; returns the bytes the reads moved.
    fn read_all(to: &mut TlsSession, wire: &mut Wire, input: &mut ReadBuf) -> usize {
        let mut moved = 0;
        while wire.at < wire.sent.len() {
            moved += to.read_from(wire, input).unwrap();
        }
        moved
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
            let mut wire = Wire::sending(turn);
            assert_eq!(read_all(to, &mut wire, &mut input), wire.sent.len());
        }
        let mut plaintext = Vec::new();
        input.take_input(|got| plaintext.extend_from_slice(&got.split()));
        (turns, bytes, plaintext)
    }

    /// `-V pass`: a server certificate that does not verify is told to
    /// the host's notice, with the name asked for and why, and the
    /// handshake goes on; the core writes nothing itself.
    #[test]
    fn pass_tells_the_host_what_it_accepted_anyway() {
        use crate::host::tls::{PassNotice, Trust};
        use std::sync::{Arc, Mutex};
        // A trust anchor the server's certificate does not lead to.
        let stranger = rcgen::generate_simple_self_signed(vec!["stranger".into()]).unwrap();
        let anchor =
            std::env::temp_dir().join(format!("h2sim-pass-anchor-{}.pem", std::process::id()));
        std::fs::write(&anchor, stranger.cert.pem()).unwrap();
        let told = Arc::new(Mutex::new(Vec::new()));
        let notice = {
            let told = Arc::clone(&told);
            PassNotice::new(move |accepted| told.lock().unwrap().push(accepted))
        };
        let trust = Trust {
            file: Some(anchor.clone()),
            ..Trust::default()
        };
        let client = client_config(&ClientTls {
            verification: ServerVerification::Pass(trust, notice),
            identity: None,
            versions: TlsVersions::default(),
        });
        std::fs::remove_file(&anchor).unwrap();
        let name = ServerName::try_from("localhost").unwrap();
        let client = rustls::ClientConnection::new(client.unwrap(), name).unwrap();
        let identity = Certified::self_signed(&["localhost".into()]).unwrap();
        let server = server_config_for(identity, &ClientAuth::None, TlsVersions::default());
        let server = rustls::ServerConnection::new(server.unwrap()).unwrap();
        let (client, _) = handshake_of((TlsSession::new(client), TlsSession::new(server)));
        assert!(!client.is_handshaking());
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].server_name.as_deref(), Some("localhost"));
        // rcgen's certificates share their issuer's name: the anchor is
        // taken for the issuer, and its signature does not match.
        assert!(told[0].why.contains("BadSignature"), "{told:?}");
        assert_eq!(told[0].to_string(), format!("localhost: {}", told[0].why));
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
        assert_eq!(turns, 1, "a chunk within a turn is taken whole");
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

    /// A body larger than a turn, in one chunk (an HTTP/1.1 answer's
    /// body is one): each turn encrypts a turn of it, so what rustls
    /// holds stays about a turn. It took the chunk whole: a 200 MiB body
    /// was 200 MiB of records at once.
    #[test]
    fn a_chunk_larger_than_a_turn_is_taken_a_turn_at_a_time() {
        let (mut client, mut server) = handshake();
        let large: Vec<u8> = (0..4 * TURN + 1000).map(|i| (i % 251) as u8).collect();
        let mut out = Outbox::default();
        out.push(Bytes::from(large.clone()));
        client.encrypt(&mut out).unwrap();
        assert_eq!(client.backlog(), TURN);
        assert_eq!(out.len(), 3 * TURN + 1000);
        let (turns, _, plaintext) = carry(&mut client, &mut out, &mut server);
        assert_eq!(turns, 5);
        assert_eq!(plaintext, large);
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
        flight(&mut client, &mut server);
        flight(&mut server, &mut client);
        assert!(!client.is_handshaking());
        // The client's Finished and its first request leave together.
        let mut out = Outbox::default();
        out.push(Bytes::from_static(b"GET / HTTP/1.1\r\n\r\n"));
        let mut flight = records(&mut client);
        client.encrypt(&mut out).unwrap();
        flight.extend_from_slice(&records(&mut client));
        server.handshake_read_from(&mut flight.as_slice()).unwrap();
        assert!(!server.is_handshaking());
        // The first read takes it without reading the socket, the next
        // reads the socket.
        let mut input = ReadBuf::default();
        let mut wire = Wire::default();
        assert_eq!(server.read_from(&mut wire, &mut input).unwrap(), 18);
        let quiet = server.read_from(&mut wire, &mut input).unwrap_err();
        assert_eq!(quiet.kind(), io::ErrorKind::WouldBlock);
    }

    /// A client's Finished with 100 KiB of application data behind it in
    /// the socket (requests and an upload), in records of 1 KiB: the
    /// handshake ends, and every byte of the data is read after it.
    #[test]
    fn data_right_behind_the_handshake_is_read_after_it() {
        let (mut client, mut server) = sessions();
        flight(&mut client, &mut server);
        flight(&mut server, &mut client);
        let mut sent = records(&mut client);
        let data: Vec<u8> = (0..100 * 1024u32).map(|i| (i % 251) as u8).collect();
        for chunk in data.chunks(1024) {
            let mut out = Outbox::default();
            out.push(Bytes::copy_from_slice(chunk));
            client.encrypt(&mut out).unwrap();
            sent.extend_from_slice(&records(&mut client));
        }
        let mut wire = Wire::sending(sent);
        wire.closed = true;
        server.handshake(&mut wire).unwrap();
        let mut input = ReadBuf::default();
        read_all(&mut server, &mut wire, &mut input);
        while server.read_from(&mut wire, &mut input).unwrap() > 0 {}
        assert_eq!(input.pending(), data.len());
    }

    #[test]
    fn close_notify_or_the_sockets_end_ends_the_reads() {
        let (mut client, mut server) = handshake();
        let mut input = ReadBuf::default();
        client.close();
        let close_notify = records(&mut client);
        assert!(!close_notify.is_empty());
        let n = close_notify.len();
        let mut wire = Wire::sending(close_notify);
        assert_eq!(server.read_from(&mut wire, &mut input).unwrap(), n);
        // The end, without reading the socket again.
        assert_eq!(server.read_from(&mut wire, &mut input).unwrap(), 0);
        assert_eq!(server.read_from(&mut wire, &mut input).unwrap(), 0);

        // Without close_notify: the socket's end is the session's.
        let (mut client, mut server) = handshake();
        let mut out = Outbox::default();
        out.push(Bytes::from_static(b"last words"));
        client.encrypt(&mut out).unwrap();
        let mut wire = Wire::sending(records(&mut client));
        wire.closed = true;
        read_all(&mut server, &mut wire, &mut input);
        assert_eq!(server.read_from(&mut wire, &mut input).unwrap(), 0);
        assert_eq!(server.read_from(&mut wire, &mut input).unwrap(), 0);
        assert_eq!(input.pending(), 10);
    }

    #[test]
    fn a_bad_record_is_an_error_and_its_alert_is_sent() {
        let (_, mut server) = handshake();
        let mut input = ReadBuf::default();
        // An application-data record that does not decrypt.
        let mut bad = vec![23, 3, 3, 0, 40];
        bad.extend_from_slice(&[0xab; 40]);
        let mut wire = Wire::sending(bad);
        let error = server.read_from(&mut wire, &mut input).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(!wire.got.is_empty(), "the alert went out");

        // Garbage during the handshake: the alert waits for the caller.
        let (_, mut server) = sessions();
        let error = server
            .handshake_read_from(&mut &b"GET / HTTP/1.1\r\n\r\n"[..])
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(!records(&mut server).is_empty());
    }

    /// Both ends run `handshake` over wires that say `WouldBlock` when
    /// empty, handing each other what was written, until both are done;
    /// records that are not TLS end it with an error and an alert.
    #[test]
    fn handshake_runs_to_its_end_over_a_socket_that_would_block() {
        let (mut client, mut server) = sessions();
        let (mut to_server, mut to_client) = (Wire::default(), Wire::default());
        for _ in 0..10 {
            let c = client.handshake(&mut to_server);
            to_client.sent.extend(std::mem::take(&mut to_server.got));
            let s = server.handshake(&mut to_client);
            to_server.sent.extend(std::mem::take(&mut to_client.got));
            if c.is_ok() && s.is_ok() {
                break;
            }
            for r in [c, s] {
                if let Err(e) = r {
                    assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
                }
            }
        }
        assert!(!client.is_handshaking() && !server.is_handshaking());

        let (_, mut server) = sessions();
        let mut wire = Wire::sending(b"GET / HTTP/1.1\r\n\r\n".to_vec());
        let error = server.handshake(&mut wire).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(!wire.got.is_empty(), "the alert went out");
        let mut ended = Wire {
            closed: true,
            ..Wire::default()
        };
        let error = sessions().1.handshake(&mut ended).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn the_scratch_is_lent_at_its_read_size() {
        assert_eq!(with_cipher_scratch(|buf| buf.len()), CIPHER_READ);
    }

    /// Two h2sim ends agree on AES-128-GCM, in TLS 1.3 and in TLS 1.2: the
    /// client offers it first and the server takes the client's order.
    #[test]
    fn both_ends_agree_on_aes_128_gcm() {
        for (versions, suite) in [
            (
                TlsVersions::Tls13Only,
                rustls::CipherSuite::TLS13_AES_128_GCM_SHA256,
            ),
            (
                TlsVersions::Tls12Only,
                rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            ),
        ] {
            let (client, server) = handshake_of(sessions_of(versions));
            for end in [&client, &server] {
                let negotiated = end.connection().negotiated_cipher_suite().unwrap();
                assert_eq!(negotiated.suite(), suite, "{versions:?}");
            }
        }
    }
}
