//! Moving bytes between a connection and its socket, plain or TLS, with
//! the buffers each connection reuses for its whole life.
//!
//! glommio's `TcpStream` has no vectored write (the trait's default writes
//! only the first slice), so plain output leaves by a `sendmsg` of our own
//! on the stream's socket, tried without waiting as glommio's own write
//! starts (on loopback and a healthy link it nearly always succeeds): the
//! core's chunks go straight from their `Bytes`, up to 64 of them per call
//! (the core copies small payloads in behind their frame heads, so a turn
//! of small responses is a few chunks). Only a full socket makes the write
//! go through glommio, which waits for room through io_uring. Over TLS a
//! staging buffer holds the records rustls encrypted (`write_tls`), so a
//! turn's output is still one `send`.
//!
//! Reads land in the core's [`ReadBuf`], whose spare room is kept initialized
//! and which comes from the executor's pool only while data is in flight (a
//! read that finds nothing gives it back; glommio's `TcpStream` tries the
//! `recv` first and waits for readiness through io_uring, so no buffer is
//! committed to a pending read and no provided-buffer ring is needed): the
//! bytes read become, without a copy, the `Bytes` the core hands to the
//! application (`Connection::handle_input` splits them off the front).
//! Over TLS, ciphertext is read into one scratch buffer per executor and
//! handed to rustls at once; rustls decrypts into its own buffer (`read_tls`,
//! `process_new_packets`) and the plaintext is copied once into the
//! `ReadBuf`.

use std::cell::RefCell;
use std::future::poll_fn;
use std::io::{self, BufRead, IoSlice, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::{AsyncRead, AsyncWrite};
use glommio::net::TcpStream;
use h2sim_proto::host::{Outbox, ReadBuf};

/// Chunks of the output handed to one `sendmsg`.
const MAX_IOV: usize = 64;
/// The TLS staging buffer is filled up to about this much per write.
const STAGE_TARGET: usize = 64 * 1024;
/// Ciphertext read from the socket per `recv` before rustls takes it.
const TLS_READ: usize = 32 * 1024;
/// The most plaintext one TLS record carries.
const MAX_RECORD: usize = 16 * 1024;

/// What one poll of the socket moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    /// Bytes that left for the socket.
    pub(crate) wrote: usize,
    /// Bytes that arrived (for TLS: records, maybe with no plaintext in
    /// them), 0 when the peer closed its side; `None`: nothing was read.
    pub(crate) read: Option<usize>,
}

/// A connection's socket, with TLS when it has it.
#[derive(Debug)]
pub(crate) struct Transport {
    tcp: TcpStream,
    tls: Option<Box<rustls::Connection>>,
    /// Bytes waiting for the socket; `[..sent]` have left.
    staged: Vec<u8>,
    sent: usize,
    /// TLS: small plaintext chunks gathered into one record's worth.
    plain: Vec<u8>,
    /// TLS: the peer closed the TLS session or the socket.
    tls_eof: bool,
}

impl Transport {
    pub(crate) fn plain(tcp: TcpStream) -> Self {
        Transport {
            tcp,
            tls: None,
            staged: Vec::new(),
            sent: 0,
            plain: Vec::new(),
            tls_eof: false,
        }
    }

    pub(crate) fn tls(tcp: TcpStream, mut tls: rustls::Connection) -> Self {
        // The outbox and the staging buffer bound what waits; rustls's own
        // limit would only make `write` accept part of a chunk.
        tls.set_buffer_limit(None);
        Transport {
            tls: Some(Box::new(tls)),
            ..Transport::plain(tcp)
        }
    }

    pub(crate) fn tls_session(&self) -> Option<&rustls::Connection> {
        self.tls.as_deref()
    }

    /// Output accepted but not yet written: staged bytes and, over TLS,
    /// what rustls holds.
    pub(crate) fn backlog(&self) -> usize {
        self.staged.len() - self.sent
    }

    /// Gives back the staging buffers once all they held has left: the
    /// connection is quiet, so the next burst may allocate them again.
    pub(crate) fn trim(&mut self) {
        if self.sent == self.staged.len() {
            self.staged = Vec::new();
            self.sent = 0;
        }
        self.plain = Vec::new();
    }

    /// Nothing is waiting to be written, here or in `out`.
    pub(crate) fn is_flushed(&self, out: &Outbox) -> bool {
        out.is_empty()
            && self.sent == self.staged.len()
            && self.tls.as_ref().is_none_or(|t| !t.wants_write())
    }

    /// Writes what is queued and reads if allowed, both in the same poll so
    /// each registers its wake-up; ready when either made progress.
    pub(crate) fn poll_io(
        &mut self,
        cx: &mut Context<'_>,
        out: &mut Outbox,
        input: &mut ReadBuf,
        read: bool,
    ) -> Poll<io::Result<Progress>> {
        let wrote = match self.poll_write(cx, out) {
            Poll::Ready(Ok(n)) => n,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => 0,
        };
        if read {
            let polled = match self.tls {
                None => self.poll_read_plain(cx, input),
                Some(_) => self.poll_read_tls(cx, input),
            };
            if let Poll::Ready(n) = polled {
                let read = Some(n?);
                return Poll::Ready(Ok(Progress { wrote, read }));
            }
        }
        if wrote > 0 {
            Poll::Ready(Ok(Progress { wrote, read: None }))
        } else {
            Poll::Pending
        }
    }

    /// One write to the socket: `Ready(Ok(0))` when there was nothing to write.
    fn poll_write(&mut self, cx: &mut Context<'_>, out: &mut Outbox) -> Poll<io::Result<usize>> {
        let Some(tls) = self.tls.as_deref_mut() else {
            return self.poll_write_plain(cx, out);
        };
        if self.sent == self.staged.len() {
            self.staged.clear();
            self.sent = 0;
            stage(tls, &mut self.plain, &mut self.staged, out)?;
            if self.staged.is_empty() {
                return Poll::Ready(Ok(0));
            }
        }
        let written =
            std::task::ready!(Pin::new(&mut self.tcp).poll_write(cx, &self.staged[self.sent..]))?;
        if written == 0 {
            return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        self.sent += written;
        Poll::Ready(Ok(written))
    }

    /// Plain output: one `sendmsg` of the chunks at the front of `out`, tried
    /// without waiting; a full socket is left to glommio's write, which
    /// writes what fits of the first chunk or registers the wake-up.
    fn poll_write_plain(
        &mut self,
        cx: &mut Context<'_>,
        out: &mut Outbox,
    ) -> Poll<io::Result<usize>> {
        let mut iov = [IoSlice::new(&[]); MAX_IOV];
        let count = out.slices(&mut iov);
        if count == 0 {
            return Poll::Ready(Ok(0));
        }
        let sent = match send_now(&self.tcp, &iov[..count]) {
            Some(sent) => sent?,
            None => std::task::ready!(Pin::new(&mut self.tcp).poll_write(cx, &iov[0]))?,
        };
        if sent == 0 {
            return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        out.advance(sent);
        Poll::Ready(Ok(sent))
    }

    /// One read into `input`: the bytes read, 0 at the end of the stream.
    fn poll_read_plain(
        &mut self,
        cx: &mut Context<'_>,
        input: &mut ReadBuf,
    ) -> Poll<io::Result<usize>> {
        let room = input.room();
        let n = std::task::ready!(Pin::new(&mut self.tcp).poll_read(cx, room))?;
        input.commit(n);
        Poll::Ready(Ok(n))
    }

    /// Plaintext rustls already holds comes first; then the socket, whose
    /// records rustls decrypts. Returns the bytes moved (records read, or
    /// plaintext), 0 once the session or the socket ended and no plaintext
    /// is left.
    fn poll_read_tls(
        &mut self,
        cx: &mut Context<'_>,
        input: &mut ReadBuf,
    ) -> Poll<io::Result<usize>> {
        let Some(tls) = self.tls.as_deref_mut() else {
            return Poll::Pending;
        };
        let drained = drain_plaintext(tls, input)?;
        if drained.moved > 0 {
            return Poll::Ready(Ok(drained.moved));
        }
        self.tls_eof |= drained.closed;
        if self.tls_eof {
            return Poll::Ready(Ok(0));
        }
        let read = poll_cipher(&mut self.tcp, cx, |records| {
            (records.len(), feed(tls, records, input))
        });
        let Poll::Ready(read) = read else {
            return Poll::Pending;
        };
        let (n, fed) = read?;
        if fed.is_err() {
            // The alert rustls queued goes out if the socket takes it now.
            self.flush_alert(cx);
        }
        let plaintext = fed?;
        if n == 0 {
            // The socket ended: the plaintext it brought goes to the core
            // first, and the next read reports the end.
            self.tls_eof = true;
            return Poll::Ready(Ok(plaintext));
        }
        Poll::Ready(Ok(n))
    }

    /// Best effort: writes whatever rustls queued (an alert) without waiting.
    fn flush_alert(&mut self, cx: &mut Context<'_>) {
        if let Some(tls) = self.tls.as_deref_mut() {
            let mut alert = Vec::new();
            while tls.wants_write() && tls.write_tls(&mut alert).is_ok_and(|n| n > 0) {}
            if !alert.is_empty() {
                let _ = Pin::new(&mut self.tcp).poll_write(cx, &alert);
            }
        }
    }

    /// Runs the TLS handshake to its end, writing and reading as rustls
    /// asks. Application data the peer sent right behind it stays in
    /// rustls for the driver's first read.
    pub(crate) async fn handshake(&mut self) -> io::Result<()> {
        let Some(tls) = self.tls.as_deref_mut() else {
            return Ok(());
        };
        loop {
            while tls.wants_write() {
                self.staged.clear();
                tls.write_tls(&mut self.staged)?;
                write_all(&mut self.tcp, &self.staged).await?;
            }
            self.staged.clear();
            if !tls.is_handshaking() {
                return Ok(());
            }
            let tcp = &mut self.tcp;
            let (n, processed) = poll_fn(|cx| {
                poll_cipher(tcp, cx, |records| {
                    (records.len(), handshake_records(tls, records))
                })
            })
            .await?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the connection during the TLS handshake",
                ));
            }
            if let Err(e) = processed {
                let mut alert = Vec::new();
                while tls.wants_write() && tls.write_tls(&mut alert).is_ok_and(|n| n > 0) {}
                let _ = write_all(&mut self.tcp, &alert).await;
                return Err(e);
            }
        }
    }

    /// Ends our side: TLS close_notify, then TCP FIN, once all output left.
    pub(crate) async fn close_write(&mut self) -> io::Result<()> {
        if let Some(tls) = self.tls.as_deref_mut() {
            tls.send_close_notify();
            let mut records = Vec::new();
            while tls.wants_write() {
                tls.write_tls(&mut records)?;
            }
            write_all(&mut self.tcp, &records).await?;
        }
        let tcp = &mut self.tcp;
        poll_fn(|cx| Pin::new(&mut *tcp).poll_close(cx)).await
    }

    /// Reads and drops up to `limit` bytes until the peer closes.
    pub(crate) async fn discard_input(&mut self, limit: usize) {
        // A pooled buffer, not one on the stack: this future is part of
        // every connection task, idle or not.
        let mut sink = ReadBuf::default();
        let mut total = 0;
        while total < limit {
            let tcp = &mut self.tcp;
            let room = sink.room();
            match poll_fn(|cx| Pin::new(&mut *tcp).poll_read(cx, room)).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
        sink.release();
    }
}

/// Fills the (empty) staging buffer `staged` with the records rustls
/// encrypted from the chunks at the front of `out`; `plain` gathers small
/// chunks first.
fn stage(
    tls: &mut rustls::Connection,
    plain: &mut Vec<u8>,
    staged: &mut Vec<u8>,
    out: &mut Outbox,
) -> io::Result<()> {
    // rustls makes at least one record of every `write`: small chunks are
    // gathered first, so a turn's frames share records (and their 22-byte
    // overhead and AEAD pass).
    while staged.len() < STAGE_TARGET {
        plain.clear();
        match out.front() {
            Some(front) if front.len() >= MAX_RECORD => {
                let n = front.len();
                tls.writer().write_all(front)?;
                out.advance(n);
            }
            _ => {
                while let Some(front) = out.front()
                    && plain.len() < MAX_RECORD
                {
                    let take = front.len().min(MAX_RECORD - plain.len());
                    plain.extend_from_slice(&front[..take]);
                    out.advance(take);
                }
                if !plain.is_empty() {
                    tls.writer().write_all(plain)?;
                }
            }
        }
        if !tls.wants_write() {
            break;
        }
        while tls.wants_write() {
            tls.write_tls(staged)?;
        }
    }
    Ok(())
}

thread_local! {
    /// Ciphertext scratch for every TLS read on this thread (one executor):
    /// a read's records go to rustls at once, and glommio's `recv` holds no
    /// buffer while it waits for readiness, so one buffer serves all the
    /// executor's connections instead of one held by each.
    static CIPHER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// One read of ciphertext into the thread's scratch buffer; `take` gets the
/// records read (none at end of stream) while the buffer is lent.
fn poll_cipher<T>(
    tcp: &mut TcpStream,
    cx: &mut Context<'_>,
    take: impl FnOnce(&[u8]) -> T,
) -> Poll<io::Result<T>> {
    CIPHER.with_borrow_mut(|cipher| {
        if cipher.is_empty() {
            cipher.resize(TLS_READ, 0);
        }
        let n = std::task::ready!(Pin::new(tcp).poll_read(cx, cipher))?;
        Poll::Ready(Ok(take(&cipher[..n])))
    })
}

/// Handshake records to rustls, all of them unless it stops reading.
fn handshake_records(tls: &mut rustls::Connection, mut records: &[u8]) -> io::Result<()> {
    while !records.is_empty() {
        if tls.read_tls(&mut records)? == 0 {
            break;
        }
        tls.process_new_packets()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    }
    Ok(())
}

/// Gives rustls the records in `data` (empty: the socket's end of stream),
/// moving the plaintext into `input` as it comes so rustls's buffer never
/// fills up; returns the plaintext bytes moved.
fn feed(tls: &mut rustls::Connection, mut data: &[u8], input: &mut ReadBuf) -> io::Result<usize> {
    let mut moved = 0;
    loop {
        let n = match tls.read_tls(&mut data) {
            Ok(n) => n,
            // rustls's plaintext buffer is full: empty it and go on.
            Err(e) if e.kind() == io::ErrorKind::Other => {
                moved += drain_plaintext(tls, input)?.moved;
                continue;
            }
            Err(e) => return Err(e),
        };
        tls.process_new_packets()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        moved += drain_plaintext(tls, input)?.moved;
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
fn drain_plaintext(tls: &mut rustls::Connection, input: &mut ReadBuf) -> io::Result<Drained> {
    let mut drained = Drained::default();
    loop {
        let mut reader = tls.reader();
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

/// Writes all of `data`, waiting for the socket as needed.
async fn write_all(tcp: &mut TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        let n = poll_fn(|cx| Pin::new(&mut *tcp).poll_write(cx, data)).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        data = &data[n..];
    }
    Ok(())
}

/// One non-blocking `sendmsg` of `iov` on the stream's socket: `None` when
/// the socket has no room (nothing was written).
fn send_now(tcp: &TcpStream, iov: &[IoSlice<'_>]) -> Option<io::Result<usize>> {
    use std::os::fd::{AsRawFd, BorrowedFd};
    // SAFETY: the descriptor belongs to `tcp`, which is borrowed for the
    // whole life of `fd`, so it stays open (glommio lends its sockets only
    // as raw descriptors, without a safe borrowed handle).
    #[allow(unsafe_code)]
    let fd = unsafe { BorrowedFd::borrow_raw(tcp.as_raw_fd()) };
    let flags = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
    match socket2::SockRef::from(&fd).send_vectored_with_flags(iov, flags) {
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) =>
        {
            None
        }
        other => Some(other),
    }
}
