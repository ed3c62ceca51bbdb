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
//! go through glommio, which waits for room through io_uring. Over TLS the
//! core's [`TlsSession`] encrypts a turn's output and its records leave the
//! same way, from rustls's buffers.
//!
//! Reads land in the core's [`ReadBuf`], whose spare room is kept initialized
//! and which comes from the executor's pool only while data is in flight (a
//! read that finds nothing gives it back; glommio's `TcpStream` tries the
//! `recv` first and waits for readiness through io_uring, so no buffer is
//! committed to a pending read and no provided-buffer ring is needed): the
//! bytes read become, without a copy, the `Bytes` the core hands to the
//! application (`Connection::handle_input` splits them off the front).
//! Over TLS the session reads the ciphertext through the same socket (see
//! [`TlsSession::read_from`]).

use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::{AsyncRead, AsyncWrite};
use glommio::net::TcpStream;
use h2sim_proto::host::{Outbox, ReadBuf, TlsSession};

/// Chunks of the output handed to one `sendmsg`.
const MAX_IOV: usize = 64;

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
    tls: Option<Box<TlsSession>>,
}

impl Transport {
    pub(crate) fn plain(tcp: TcpStream) -> Self {
        Transport { tcp, tls: None }
    }

    /// Over TLS, once [`handshake`] is done (application data that came
    /// behind it stays in `tls` for the first read).
    pub(crate) fn tls(tcp: TcpStream, tls: Box<TlsSession>) -> Self {
        Transport {
            tcp,
            tls: Some(tls),
        }
    }

    /// The connection runs over TLS.
    pub(crate) fn is_secure(&self) -> bool {
        self.tls.is_some()
    }

    /// Output accepted but not yet written: over TLS, the records rustls
    /// holds.
    pub(crate) fn backlog(&self) -> usize {
        self.tls.as_deref().map_or(0, TlsSession::backlog)
    }

    /// Nothing is waiting to be written, here or in `out`.
    pub(crate) fn is_flushed(&self, out: &Outbox) -> bool {
        self.tls
            .as_deref()
            .map_or(out.is_empty(), |t| t.is_flushed(out))
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
        tls.encrypt(out)?;
        if !tls.wants_write() {
            return Poll::Ready(Ok(0));
        }
        ready(tls.write_to(&mut Socket {
            tcp: &mut self.tcp,
            cx,
        }))
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

    /// One TLS read (see [`TlsSession::read_from`]): the bytes moved, 0
    /// once the session or the socket ended and no plaintext is left.
    fn poll_read_tls(
        &mut self,
        cx: &mut Context<'_>,
        input: &mut ReadBuf,
    ) -> Poll<io::Result<usize>> {
        let Some(tls) = self.tls.as_deref_mut() else {
            return Poll::Pending;
        };
        ready(tls.read_from(
            &mut Socket {
                tcp: &mut self.tcp,
                cx,
            },
            input,
        ))
    }

    /// Ends the TLS session, if any: close_notify, written out.
    pub(crate) async fn close_notify(&mut self) -> io::Result<()> {
        match self.tls.as_deref_mut() {
            Some(tls) => {
                tls.close();
                write_records(&mut self.tcp, tls).await
            }
            None => Ok(()),
        }
    }

    /// Ends our side: TLS close_notify, then TCP FIN, once all output left.
    pub(crate) async fn close_write(&mut self) -> io::Result<()> {
        self.close_notify().await?;
        let tcp = &mut self.tcp;
        poll_fn(|cx| Pin::new(&mut *tcp).poll_close(cx)).await
    }

    /// Reads and drops up to `limit` bytes until the peer closes.
    pub(crate) async fn discard_input(&mut self, limit: usize) {
        let mut total = 0;
        while total < limit {
            let tcp = &mut self.tcp;
            let read = poll_fn(|cx| {
                ReadBuf::discard(|sink| Pin::new(&mut *tcp).poll_read(cx, sink.room()))
            });
            match read.await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    }
}

/// Runs the TLS handshake over `tcp` to its end (see
/// [`TlsSession::handshake`]).
pub(crate) async fn handshake(tcp: &mut TcpStream, tls: &mut TlsSession) -> io::Result<()> {
    poll_fn(|cx| ready(tls.handshake(&mut Socket { tcp, cx }))).await
}

/// Writes all the records `tls` holds, waiting for the socket as needed.
async fn write_records(tcp: &mut TcpStream, tls: &mut TlsSession) -> io::Result<()> {
    while tls.wants_write() {
        poll_fn(|cx| ready(tls.write_to(&mut Socket { tcp, cx }))).await?;
    }
    Ok(())
}

/// A result of the TLS session's socket calls as a poll: `WouldBlock`
/// means the wake-up is registered.
fn ready<T>(result: io::Result<T>) -> Poll<io::Result<T>> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Poll::Pending,
        done => Poll::Ready(done),
    }
}

/// The socket as the TLS session reads and writes it: a read or write
/// that would wait is `WouldBlock`, with the wake-up registered through
/// glommio. Writes try one `sendmsg` without waiting first, as for plain
/// output.
struct Socket<'a, 'b> {
    tcp: &'a mut TcpStream,
    cx: &'a mut Context<'b>,
}

impl std::io::Read for Socket<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match Pin::new(&mut *self.tcp).poll_read(self.cx, buf) {
            Poll::Ready(done) => done,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl std::io::Write for Socket<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        if let Some(sent) = send_now(self.tcp, bufs) {
            return sent;
        }
        let first = bufs
            .iter()
            .find(|b| !b.is_empty())
            .map_or(&[][..], |b| &b[..]);
        match Pin::new(&mut *self.tcp).poll_write(self.cx, first) {
            Poll::Ready(done) => done,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
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
