//! A rustls session between the core's buffers and a socket's bytes: what
//! every runtime does to carry a connection over TLS, written once. The
//! runtime still owns the socket and its waits; it lends this the socket
//! as a `Read + Write` that answers `WouldBlock` when it would wait.
//!
//! rustls runs unbuffered: the session owns every buffer, so an idle
//! connection holds none (rustls's buffered connection keeps a 4 KiB
//! buffer for incoming records whether or not any come).
//!
//! Output: a turn's chunks from the outbox, up to about 256 KiB, are sealed
//! into records of 16 KiB, so small chunks share records: a chunk's whole
//! records are encrypted from the chunk itself, and only the pieces that
//! share a record are gathered first. The records go into a [`Sealed`]
//! buffer from the thread's pool and leave in one write.
//!
//! Input: ciphertext is read into one scratch buffer per thread, up to
//! 32 KiB at a time, and rustls decrypts the records there; the plaintext
//! is copied into the [`ReadBuf`]'s spare capacity (nothing zero-filled
//! first). A record the read cut short is kept by the session until the
//! next read, the only ciphertext it holds. The read size is a trade: a
//! read that takes less than what arrived splits the peer's burst over
//! more turns, each with its own write, and one that takes all of it holds
//! the next requests back until every answer read is handled. A client of
//! 100 streams over TLS, against rustls reading for itself: 128 KiB reads
//! cost POSTs 15% less CPU per request but GETs 9% more, at a sixth less
//! req/s; 32 KiB reads cost GETs about 5% less at 3-10% more req/s, POSTs
//! 1-3% less.

use std::cell::RefCell;
use std::io::{self, IoSlice, Read, Write};
use std::sync::Arc;

use rustls::client::UnbufferedClientConnection;
use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{
    ConnectionState, EncodeError, EncodeTlsData, EncryptError, UnbufferedStatus, WriteTraffic,
};
use rustls_pki_types::ServerName;

use super::sealed::Sealed;
use super::tls::take_server_name;
use super::{Outbox, ReadBuf, TlsInfo};

/// Plaintext sealed per turn, about: a burst of answers to 100 streams of
/// 1 KiB leaves in one write.
const TURN: usize = 256 * 1024;
/// Outbox chunks sealed per turn, at most.
const MAX_CHUNKS: usize = 256;
/// The plaintext of a full record (RFC 8446 §5.1: 2^14 octets).
const RECORD: usize = 16 * 1024;
/// What rustls adds to a record's plaintext, at most: the header, the
/// content type (TLS 1.3) or explicit nonce (TLS 1.2), and the tag.
const RECORD_OVERHEAD: usize = 5 + 8 + 16;
/// Ciphertext read from the socket per read.
const CIPHER_READ: usize = 32 * 1024;
/// Ciphertext read per read while the handshake runs. Records behind the
/// peer's last flight are application data (a client sends its requests,
/// and up to a window of upload, right behind its Finished), which the
/// session keeps until the first read; a read of at most 16 KiB bounds
/// that to 16 KiB. The rest stays in the socket.
const HANDSHAKE_READ: usize = 16 * 1024;

/// One connection's TLS session once the runtime has it: rustls, and the
/// bytes it holds for the socket and from it.
#[derive(Debug)]
pub struct TlsSession {
    conn: Side,
    /// Records waiting for the socket.
    sealed: Sealed,
    /// Ciphertext a read cut short (part of a record or of a handshake
    /// message); empty, and unallocated, between records.
    carried: Vec<u8>,
    /// Plaintext that came right behind the handshake, for the first read.
    early: Vec<u8>,
    /// Whether records still come.
    reading: Reading,
    /// The name a client asked for (SNI), on a server's session.
    server_name: Option<Box<str>>,
}

/// rustls's unbuffered connection, of either side.
enum Side {
    Client(UnbufferedClientConnection),
    Server(UnbufferedServerConnection),
}

impl std::fmt::Debug for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = match self {
            Side::Client(_) => "Client",
            Side::Server(_) => "Server",
        };
        f.debug_struct(side)
            .field("handshaking", &self.common().is_handshaking())
            .finish_non_exhaustive()
    }
}

impl Side {
    fn common(&self) -> &rustls::CommonState {
        match self {
            Side::Client(conn) => conn,
            Side::Server(conn) => conn,
        }
    }

    /// One call into rustls over `records`, its state handled by `visit`.
    fn process(
        &mut self,
        records: &mut [u8],
        visit: &mut Visit<'_>,
    ) -> Result<Step, rustls::Error> {
        match self {
            Side::Client(conn) => visit.status(conn.process_tls_records(records)),
            Side::Server(conn) => visit.status(conn.process_tls_records(records)),
        }
    }
}

impl TlsSession {
    /// A client's session with the server `name`; its hello is sealed at
    /// once, ready for the socket.
    pub fn client(
        config: Arc<rustls::ClientConfig>,
        name: ServerName<'static>,
    ) -> Result<Self, rustls::Error> {
        UnbufferedClientConnection::new(config, name).map(|conn| Self::new(Side::Client(conn)))
    }

    /// A server's session, waiting for a client's hello.
    pub fn server(config: Arc<rustls::ServerConfig>) -> Result<Self, rustls::Error> {
        UnbufferedServerConnection::new(config).map(|conn| Self::new(Side::Server(conn)))
    }

    fn new(conn: Side) -> Self {
        let mut session = TlsSession {
            conn,
            sealed: Sealed::default(),
            carried: Vec::new(),
            early: Vec::new(),
            reading: Reading::Open,
            server_name: None,
        };
        // Sealing what rustls queued reads no peer input: it cannot fail,
        // and if it did, the handshake would meet the error again.
        let _ = session.pump(Job::Read);
        session
    }

    /// What the handshake agreed on.
    pub fn info(&self) -> TlsInfo {
        TlsInfo::new(self.conn.common(), self.server_name.as_deref())
    }

    pub fn is_handshaking(&self) -> bool {
        self.conn.common().is_handshaking()
    }

    /// Whether records wait for the socket (see [`TlsSession::write_to`]).
    pub fn wants_write(&self) -> bool {
        !self.sealed.is_empty()
    }

    /// Bytes sealed and not yet written: what a driver counts against its
    /// output bound besides the outbox.
    pub fn backlog(&self) -> usize {
        self.sealed.pending().len()
    }

    /// Nothing is waiting to be written, here or in `out`.
    pub fn is_flushed(&self, out: &Outbox) -> bool {
        out.is_empty() && self.sealed.is_empty()
    }

    /// Seals the next turn's output from the front of `out`, once the last
    /// turn's records have all been written: a turn's output leaves in one
    /// write, and what waits stays in the outbox, where the driver bounds
    /// it. Nothing is sealed before the handshake lets it.
    pub fn encrypt(&mut self, out: &mut Outbox) -> io::Result<()> {
        if self.wants_write() || out.is_empty() {
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
        let taken = iov[..count].iter().map(|s| s.len()).sum();
        if self.pump(Job::Seal(&iov[..count]))? == Fed::Sealed {
            out.advance(taken);
        }
        Ok(())
    }

    /// One write of the records waiting (a turn's output, handshake
    /// flights, an alert, close_notify) to `socket`, a runtime's adapter
    /// that answers `WouldBlock` when the socket is full. Returns the bytes
    /// written, 0 when nothing waited; a socket that takes nothing is
    /// `WriteZero`.
    pub fn write_to(&mut self, socket: &mut impl Write) -> io::Result<usize> {
        if self.sealed.is_empty() {
            return Ok(0);
        }
        let n = socket.write(self.sealed.pending())?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        self.sealed.advance(n);
        Ok(n)
    }

    /// Seals close_notify (see [`TlsSession::write_to`]); during the
    /// handshake there is no session to close, and nothing is sent.
    pub fn close(&mut self) {
        let _ = self.pump(Job::CloseNotify);
    }

    /// One read: plaintext that came behind the handshake goes into `input`
    /// first; else one read of `socket` into the thread's scratch, whose
    /// records rustls decrypts into `input`. Returns the bytes moved
    /// (records read, or plaintext), 0 once the session or the socket ended.
    /// A bad record is an error, after rustls's alert was written if the
    /// socket took it at once.
    pub fn read_from<S: Read + Write>(
        &mut self,
        socket: &mut S,
        input: &mut ReadBuf,
    ) -> io::Result<usize> {
        if !self.early.is_empty() {
            let early = std::mem::take(&mut self.early);
            input.push(&early);
            return Ok(early.len());
        }
        match self.reading {
            Reading::Open => {}
            Reading::Ended => return Ok(0),
            Reading::Failed => return Err(failed()),
        }
        let received: io::Result<usize> = with_cipher_scratch(|cipher| {
            let records = self.read_records(socket, cipher, CIPHER_READ)?;
            if records.is_empty() {
                self.reading = Reading::Ended;
                return Ok(0);
            }
            // Their plaintext is shorter than they are.
            input.reserve(records.len());
            let read = records.len() - self.carried.len();
            self.feed(records, Job::Read, Some(input))?;
            Ok(read)
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
    /// sealed, reads the peer's, and so on. `Ok` once the handshake is over
    /// and its last records are written; `WouldBlock` when the socket would
    /// wait (call again once the wake-up comes). Application data the
    /// peer sent right behind the handshake stays here for the first
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

    /// One read of handshake records from `socket`, all of them to rustls;
    /// its answer (or its alert, if they were bad) waits to be written.
    /// The socket's end is `UnexpectedEof`.
    fn handshake_read_from(&mut self, socket: &mut impl Read) -> io::Result<()> {
        if self.reading != Reading::Open {
            return Err(failed());
        }
        with_cipher_scratch(|cipher| {
            let records = self.read_records(socket, cipher, HANDSHAKE_READ)?;
            if records.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the connection during the TLS handshake",
                ));
            }
            self.feed(records, Job::Read, None).map(drop)
        })
    }

    /// One read of up to `size` bytes from `socket` into `cipher`, behind
    /// the ciphertext carried from the last read; returns the records to
    /// give rustls, empty at the socket's end.
    fn read_records<'c>(
        &self,
        socket: &mut impl Read,
        cipher: &'c mut Vec<u8>,
        size: usize,
    ) -> io::Result<&'c mut [u8]> {
        let carried = self.carried.len();
        if cipher.len() < carried + size {
            cipher.resize(carried + size, 0);
        }
        let n = socket.read(&mut cipher[carried..carried + size])?;
        if n == 0 {
            return Ok(&mut []);
        }
        cipher[..carried].copy_from_slice(&self.carried);
        Ok(&mut cipher[..carried + n])
    }

    /// Runs rustls over what a read cut short, the only records it may
    /// still index into (a handshake message's first records stay where
    /// they were read until the rest come), to seal what it sends and do
    /// `job`.
    fn pump(&mut self, job: Job<'_>) -> io::Result<Fed> {
        if self.reading == Reading::Failed {
            return Ok(Fed::Blocked);
        }
        let mut carried = std::mem::take(&mut self.carried);
        self.feed(&mut carried, job, None)
    }

    /// Runs rustls over `records` until it needs more of them, sealing
    /// what it sends and doing `job` once it may; plaintext goes to
    /// `input`, or is kept for the first read when there is none (it came
    /// behind the handshake). What rustls has not done with, a record not
    /// yet whole, is carried to the next read. A bad record is an error,
    /// with rustls's alert sealed.
    fn feed(
        &mut self,
        records: &mut [u8],
        job: Job<'_>,
        input: Option<&mut ReadBuf>,
    ) -> io::Result<Fed> {
        let mut visit = Visit {
            sealed: &mut self.sealed,
            plaintext: match input {
                Some(input) => Plaintext::Input(input),
                None => Plaintext::Early(&mut self.early),
            },
            job,
            discard: 0,
        };
        let mut at = 0;
        let fed = loop {
            let step = self.conn.process(&mut records[at..], &mut visit);
            at = (at + std::mem::take(&mut visit.discard)).min(records.len());
            if matches!(self.conn, Side::Server(_))
                && self.server_name.is_none()
                && self.conn.common().is_handshaking()
            {
                self.server_name = take_server_name();
            }
            match step {
                Ok(Step::Again) => {}
                Ok(Step::Blocked) => break Ok(Fed::Blocked),
                Ok(Step::Sealed) => break Ok(Fed::Sealed),
                Ok(Step::Ended) => {
                    // Nothing after close_notify counts.
                    self.reading = Reading::Ended;
                    at = records.len();
                    break Ok(Fed::Blocked);
                }
                Err(e) => {
                    // rustls queued its alert: seal it. Each call hands
                    // over what it queued before it reads the records
                    // again, which would fail again: stop once it is all
                    // out, and call rustls no more.
                    visit.job = Job::Read;
                    while self.conn.common().wants_write()
                        && let Ok(Step::Again) = self.conn.process(&mut records[at..], &mut visit)
                    {
                    }
                    self.reading = Reading::Failed;
                    at = records.len();
                    break Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
            }
        };
        let rest = &records[at..];
        self.carried.clear();
        if rest.is_empty() {
            self.carried = Vec::new();
        } else {
            self.carried.extend_from_slice(rest);
        }
        fed
    }
}

/// Whether the peer's records still come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    Open,
    /// close_notify came, or the socket ended.
    Ended,
    /// A record was bad: rustls is not called again.
    Failed,
}

/// The error of every read after a bad record.
fn failed() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "the TLS session failed")
}

/// What [`TlsSession::feed`] came to.
#[derive(Debug, PartialEq, Eq)]
enum Fed {
    /// rustls needs more records (or, for the job, the handshake's end).
    Blocked,
    /// The job's records are sealed.
    Sealed,
}

/// What to do once rustls lets the session send application data.
#[derive(Clone, Copy)]
enum Job<'a> {
    /// Nothing: only read, and seal what rustls sends by itself.
    Read,
    /// Seal these chunks.
    Seal(&'a [IoSlice<'a>]),
    /// Seal close_notify.
    CloseNotify,
}

/// Where plaintext goes.
enum Plaintext<'a> {
    Input(&'a mut ReadBuf),
    /// Kept for the first read: it came behind the handshake.
    Early(&'a mut Vec<u8>),
}

/// What one of rustls's states asked for, once handled.
enum Step {
    /// Call rustls again.
    Again,
    /// rustls needs more records (or the handshake to end, for the job).
    Blocked,
    /// The job is done.
    Sealed,
    /// The peer's side ended (close_notify).
    Ended,
}

/// Handles rustls's states for [`TlsSession::feed`].
struct Visit<'a> {
    sealed: &'a mut Sealed,
    plaintext: Plaintext<'a>,
    job: Job<'a>,
    /// Bytes of the records rustls is done with, to drop from their front.
    discard: usize,
}

impl Visit<'_> {
    fn status<Data>(
        &mut self,
        status: UnbufferedStatus<'_, '_, Data>,
    ) -> Result<Step, rustls::Error> {
        self.discard += status.discard;
        match status.state? {
            ConnectionState::ReadTraffic(mut traffic) => {
                while let Some(record) = traffic.next_record() {
                    let record = record?;
                    self.discard += record.discard;
                    match &mut self.plaintext {
                        Plaintext::Input(input) => input.push(record.payload),
                        Plaintext::Early(early) => early.extend_from_slice(record.payload),
                    }
                }
                Ok(Step::Again)
            }
            ConnectionState::EncodeTlsData(mut data) => {
                encode(&mut data, self.sealed)?;
                Ok(Step::Again)
            }
            ConnectionState::TransmitTlsData(data) => {
                // The records stay sealed until the socket takes them.
                data.done();
                Ok(Step::Again)
            }
            ConnectionState::WriteTraffic(mut traffic) => match self.job {
                Job::Read => Ok(Step::Blocked),
                Job::Seal(chunks) => {
                    seal(&mut traffic, chunks, self.sealed)?;
                    Ok(Step::Sealed)
                }
                Job::CloseNotify => {
                    seal_with(self.sealed, RECORD_OVERHEAD, |room| {
                        traffic.queue_close_notify(room)
                    })?;
                    Ok(Step::Sealed)
                }
            },
            ConnectionState::BlockedHandshake => Ok(Step::Blocked),
            ConnectionState::PeerClosed | ConnectionState::Closed => Ok(Step::Ended),
            // Early data is never accepted (`max_early_data_size` 0).
            _ => Err(rustls::Error::General(
                "TLS early data, which this session does not take".into(),
            )),
        }
    }
}

/// Seals a handshake record (or an alert) rustls made.
fn encode<Data>(
    data: &mut EncodeTlsData<'_, Data>,
    sealed: &mut Sealed,
) -> Result<(), rustls::Error> {
    let need = match data.encode(&mut []) {
        Ok(n) => {
            sealed.commit(n);
            return Ok(());
        }
        Err(EncodeError::InsufficientSize(size)) => size.required_size,
        Err(EncodeError::AlreadyEncoded) => return Ok(()),
    };
    let n = data
        .encode(sealed.room(need))
        .map_err(|e| rustls::Error::General(e.to_string()))?;
    sealed.commit(n);
    Ok(())
}

/// Seals `chunks` in records of [`RECORD`]: each chunk's whole records
/// straight from it, the pieces that share a record gathered first.
fn seal<Data>(
    traffic: &mut WriteTraffic<'_, Data>,
    chunks: &[IoSlice<'_>],
    sealed: &mut Sealed,
) -> Result<(), rustls::Error> {
    GATHER.with_borrow_mut(|gather| {
        gather.clear();
        for chunk in chunks {
            let mut rest: &[u8] = chunk;
            if !gather.is_empty() {
                let take = (RECORD - gather.len()).min(rest.len());
                gather.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if gather.len() == RECORD {
                    seal_plaintext(traffic, gather, sealed)?;
                    gather.clear();
                }
            }
            let whole = rest.len() - rest.len() % RECORD;
            if whole > 0 {
                seal_plaintext(traffic, &rest[..whole], sealed)?;
            }
            gather.extend_from_slice(&rest[whole..]);
        }
        if !gather.is_empty() {
            seal_plaintext(traffic, gather, sealed)?;
            gather.clear();
        }
        Ok(())
    })
}

/// Encrypts `plaintext` into records behind what `sealed` holds.
fn seal_plaintext<Data>(
    traffic: &mut WriteTraffic<'_, Data>,
    plaintext: &[u8],
    sealed: &mut Sealed,
) -> Result<(), rustls::Error> {
    let room = plaintext.len() + plaintext.len().div_ceil(RECORD) * RECORD_OVERHEAD;
    seal_with(sealed, room, |room| traffic.encrypt(plaintext, room))
}

/// Runs `encrypt` on at least `room` bytes of room in `sealed`, and on as
/// much as it says it needs if that was too little.
fn seal_with(
    sealed: &mut Sealed,
    room: usize,
    mut encrypt: impl FnMut(&mut [u8]) -> Result<usize, EncryptError>,
) -> Result<(), rustls::Error> {
    let n = match encrypt(sealed.room(room)) {
        Err(EncryptError::InsufficientSize(size)) => encrypt(sealed.room(size.required_size)),
        done => done,
    }
    .map_err(|e| rustls::Error::General(e.to_string()))?;
    sealed.commit(n);
    Ok(())
}

thread_local! {
    /// Ciphertext scratch for every TLS read on this thread: rustls
    /// decrypts a read's records in it at once, so one buffer serves all
    /// the thread's connections instead of one held by each.
    static CIPHER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// Plaintext pieces gathered into one record (see [`seal`]).
    static GATHER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Lends the thread's ciphertext scratch to `read`.
fn with_cipher_scratch<T>(read: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    CIPHER.with_borrow_mut(read)
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
        let server = TlsSession::server(server.unwrap()).unwrap();
        let client = client_config(&ClientTls {
            verification: ServerVerification::Off,
            identity: None,
            versions,
        });
        let name = ServerName::try_from("localhost").unwrap();
        let client = TlsSession::client(client.unwrap(), name).unwrap();
        (client, server)
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
        /// Bytes a read returns at most (0: no limit).
        per_read: usize,
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
            let mut n = rest.len().min(buf.len());
            if self.per_read > 0 {
                n = n.min(self.per_read);
            }
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
        // Sixteen full records, each 22 bytes over its plaintext.
        const SEALED: usize = 16 * (CHUNK + 22);
        assert_eq!(client.backlog(), SEALED);
        // A socket that takes 1000 bytes, then is full.
        let mut socket = Socket {
            room: 1000,
            took: 0,
        };
        assert_eq!(client.write_to(&mut socket).unwrap(), 1000);
        let full = client.write_to(&mut socket).unwrap_err();
        assert_eq!(full.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(client.backlog(), SEALED - 1000);
        // Until the turn's records have left, no more is encrypted.
        client.encrypt(&mut out).unwrap();
        assert_eq!(out.len(), 4 * CHUNK);
        socket.room = usize::MAX;
        while client.write_to(&mut socket).unwrap() > 0 {}
        assert_eq!(client.backlog(), 0);
        assert_eq!(socket.took, SEALED);
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
                assert_eq!(end.info().cipher_suite, Some(suite), "{versions:?}");
            }
        }
    }

    /// Records cut anywhere by the reads arrive whole: the session carries
    /// a record's first part to the next read, and holds no buffer once
    /// the records are read, nor once its output is written.
    #[test]
    fn records_cut_by_reads_are_carried_and_an_idle_session_holds_no_buffer() {
        let (mut client, mut server) = handshake();
        let data: Vec<u8> = (0..70_000u32).map(|i| (i % 253) as u8).collect();
        for per_read in [1, 7, 1000, 16_400, 40_000] {
            let mut out = Outbox::default();
            out.push(Bytes::from(data.clone()));
            client.encrypt(&mut out).unwrap();
            let records = records(&mut client);
            assert!(!client.sealed.holds_buffer(), "written: the buffer is back");
            let mut wire = Wire::sending(records.clone());
            wire.per_read = per_read;
            let mut input = ReadBuf::default();
            let mut moved = 0;
            while wire.at < wire.sent.len() {
                moved += server.read_from(&mut wire, &mut input).unwrap();
            }
            assert_eq!(moved, records.len(), "{per_read}");
            let mut plaintext = Vec::new();
            input.take_input(|got| plaintext.extend_from_slice(&got.split()));
            assert_eq!(plaintext, data, "{per_read}");
            assert_eq!(server.carried.capacity(), 0, "{per_read}");
            assert_eq!(server.early.capacity(), 0);
            assert!(server.sealed.is_empty());
        }
    }

    /// A server's session tells the name the client asked for (SNI).
    #[test]
    fn the_server_learns_the_name_the_client_asked_for() {
        let (client, server) = handshake();
        assert_eq!(server.info().server_name.as_deref(), Some("localhost"));
        assert_eq!(client.info().server_name, None);
        assert_eq!(server.info().alpn, None);
    }
}
