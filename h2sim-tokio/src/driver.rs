//! The loop that runs one connection over any tokio byte stream, so plain
//! TCP and TLS share it.
//!
//! Each turn takes the core's output into an outbox (up to a bound), then
//! waits for whichever comes first: the shutdown signal (→ `go_away`), the
//! socket accepting bytes (one vectored write of everything queued) or
//! giving bytes (→ `handle_input`), or the deadline (→ `handle_timeout`):
//! the core's (idle, drain, head read, its protocol timers), the
//! application's, or the final flush once the core is closed.
//!
//! Reading goes on while a write is pending, so two endpoints that both
//! write at once cannot deadlock on full socket buffers. It pauses while the
//! outbox is over its bound: a peer that sends requests but does not read
//! the answers then meets TCP backpressure instead of growing our memory.

use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use h2sim_proto::Application;
use h2sim_proto::Endpoint;
use h2sim_proto::host::{DriverOptions, Ending, FinalFlush, Outbox};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::shutdown::Shutdown;

/// Slices handed to one `write_vectored` call (Linux takes up to 1024).
const MAX_IOV: usize = 64;
/// Read buffer growth step; a read asks for at least `MIN_READ_SPACE`.
const READ_BUFFER: usize = 64 * 1024;
const MIN_READ_SPACE: usize = 8 * 1024;
/// How long closing waits for the peer to close too (see `close`).
const LINGER: Duration = Duration::from_millis(500);
/// Bytes read and dropped while lingering, at most.
const LINGER_BYTES: usize = 1 << 20;

/// Runs `endpoint` over `io` until the connection is over, then closes the
/// transport. A transport error is also handed to the core as end of
/// stream, so the application always hears how its connection ended.
pub(crate) async fn run<S, A>(
    mut io: S,
    endpoint: &mut Endpoint<A>,
    shutdown: &Shutdown,
    options: &DriverOptions,
) -> io::Result<Ending>
where
    S: AsyncRead + AsyncWrite + Unpin,
    A: Application,
{
    match drive(&mut io, endpoint, shutdown, options).await {
        Ok(ending) => {
            close(&mut io).await;
            Ok(ending)
        }
        Err(e) => {
            endpoint.handle_transport_error(Instant::now(), e.to_string());
            Err(e)
        }
    }
}

async fn drive<S, A>(
    io: &mut S,
    endpoint: &mut Endpoint<A>,
    shutdown: &Shutdown,
    options: &DriverOptions,
) -> io::Result<Ending>
where
    S: AsyncRead + AsyncWrite + Unpin,
    A: Application,
{
    let mut rbuf = BytesMut::with_capacity(READ_BUFFER);
    let mut out = Outbox::default();
    let mut flush_owed = false;
    let mut reading = true;
    let mut peer_closed = false;
    let mut shutdown_seen = false;
    let mut flush = FinalFlush::default();
    loop {
        let now = Instant::now();
        out.fill(endpoint, now, options.max_output_backlog);
        if out.is_empty() && !flush_owed && endpoint.is_closed() {
            return Ok(if peer_closed {
                Ending::PeerClosed
            } else {
                Ending::Finished
            });
        }
        let deadline = flush.deadline(endpoint, now);
        // The core may hold back input it cannot take yet (an HTTP/1.1
        // pipeline waiting for answers): then stop reading, so a client that
        // pipelines without reading cannot make us buffer without bound.
        let read_now = reading
            && !endpoint.is_closed()
            && out.len() < options.max_output_backlog
            && endpoint.connection().wants_input();
        tokio::select! {
            biased;
            () = shutdown.triggered(), if !shutdown_seen => {
                shutdown_seen = true;
                endpoint.go_away(now);
            }
            progress = poll_fn(|cx| poll_io(cx, io, &mut out, &mut flush_owed, &mut rbuf, read_now)) => {
                let now = Instant::now();
                match progress? {
                    Progress::Read => endpoint.handle_input(now, &mut rbuf),
                    Progress::Eof => {
                        reading = false;
                        peer_closed = true;
                        endpoint.handle_eof(now);
                    }
                    Progress::Wrote => flush.wrote(now),
                }
            }
            () = sleep_until(deadline), if deadline.is_some() => {
                let now = Instant::now();
                if flush.expired(now) {
                    return Ok(Ending::FlushExpired);
                }
                endpoint.handle_timeout(now);
            }
        }
    }
}

/// Waits until `deadline`; with none, forever (the branch is disabled then).
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(t) => tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await,
        None => std::future::pending().await,
    }
}

/// What one poll of the socket achieved.
#[derive(Debug, Clone, Copy)]
enum Progress {
    /// Bytes were written (or flushed) and nothing was read.
    Wrote,
    /// Bytes were read into the buffer.
    Read,
    /// The peer closed its side.
    Eof,
}

/// Writes what is queued and reads if allowed, both in the same poll so
/// each registers its wake-up; ready when either made progress.
fn poll_io<S>(
    cx: &mut Context<'_>,
    io: &mut S,
    out: &mut Outbox,
    flush_owed: &mut bool,
    rbuf: &mut BytesMut,
    read: bool,
) -> Poll<io::Result<Progress>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut wrote = false;
    if !out.is_empty() {
        let mut iov = [IoSlice::new(&[]); MAX_IOV];
        let count = out.slices(&mut iov);
        match Pin::new(&mut *io).poll_write_vectored(cx, &iov[..count]) {
            Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
            Poll::Ready(Ok(n)) => {
                out.advance(n);
                *flush_owed = true;
                wrote = true;
            }
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => {}
        }
    }
    // TLS buffers records inside the session; a flush pushes them out once
    // the outbox is empty (for TCP this is a no-op).
    if out.is_empty() && *flush_owed {
        match Pin::new(&mut *io).poll_flush(cx) {
            Poll::Ready(Ok(())) => {
                *flush_owed = false;
                wrote = true;
            }
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => {}
        }
    }
    if read {
        if rbuf.capacity() - rbuf.len() < MIN_READ_SPACE {
            rbuf.reserve(READ_BUFFER);
        }
        match tokio_util::io::poll_read_buf(Pin::new(&mut *io), cx, rbuf) {
            Poll::Ready(Ok(0)) => return Poll::Ready(Ok(Progress::Eof)),
            Poll::Ready(Ok(_)) => return Poll::Ready(Ok(Progress::Read)),
            // A TLS peer that closes TCP without close_notify: for HTTP the
            // framing tells whether anything was cut short, so this is the
            // end of stream like any other (as most HTTP stacks treat it).
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Poll::Ready(Ok(Progress::Eof));
            }
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => {}
        }
    }
    if wrote {
        Poll::Ready(Ok(Progress::Wrote))
    } else {
        Poll::Pending
    }
}

/// Closes our side (TLS close_notify, TCP FIN), then reads until the peer
/// closes too, for a short while. Closing a socket with unread input makes
/// the kernel send RST, which can destroy our last bytes (the GOAWAY or the
/// last response) before the peer reads them.
async fn close<S>(io: &mut S)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let linger = async {
        if io.shutdown().await.is_err() {
            return;
        }
        let mut sink = [0u8; 4096];
        let mut total = 0;
        while total < LINGER_BYTES {
            match io.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(n) => total += n,
            }
        }
    };
    // Whatever the peer does, the connection is over after `LINGER`.
    let _ = tokio::time::timeout(LINGER, linger).await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use h2sim_proto::handler::{HandlerApp, Reply};
    use h2sim_proto::{Config, Connection, Protocol};

    /// HEADERS frames for GET requests (END_STREAM) on streams `first,
    /// first+2, …`: HPACK from the static table, a literal `:authority`,
    /// and a 1000-byte `x-pad` field so a read holds only a few requests.
    fn requests(first: u32, count: u32) -> Vec<u8> {
        let mut block = vec![0x82, 0x86, 0x84, 0x01, 0x01, b'a'];
        // Literal without indexing, new name; 1000 = 127 + 873 (RFC 7541 §5.1).
        block.extend_from_slice(&[0x00, 0x05]);
        block.extend_from_slice(b"x-pad");
        block.extend_from_slice(&[0x7f, 0xe9, 0x06]);
        block.extend_from_slice(&[b'p'; 1000]);
        let len = u32::try_from(block.len()).unwrap().to_be_bytes();
        let mut out = Vec::new();
        for i in 0..count {
            out.extend_from_slice(&[len[1], len[2], len[3], 0x1, 0x5]);
            out.extend_from_slice(&(first + 2 * i).to_be_bytes());
            out.extend_from_slice(&block);
        }
        out
    }

    /// A peer that opens the windows wide, sends requests and never reads:
    /// the server answers until its output backlog is full, then stops
    /// reading, so the peer's writes block instead of the server's memory
    /// growing.
    #[tokio::test]
    async fn a_peer_that_does_not_read_is_throttled() {
        let (ours, theirs) = tokio::io::duplex(16 * 1024);
        let now = Instant::now();
        let conn = Connection::server_for(Protocol::Http2, Config::default(), now);
        let app = HandlerApp::new(|_| Reply::new(200, vec![b'z'; 16 * 1024]));
        let mut endpoint = Endpoint::new(conn, app, now);
        let options = DriverOptions {
            max_output_backlog: 64 * 1024,
        };
        let server =
            tokio::spawn(async move { run(ours, &mut endpoint, &Shutdown::new(), &options).await });
        let (mut their_read, mut their_write) = tokio::io::split(theirs);
        let mut hello = h2sim_proto::frame::PREFACE.to_vec();
        // SETTINGS_INITIAL_WINDOW_SIZE = 2^31-1, and the connection window
        // raised as far: flow control never holds the answers back.
        hello.extend_from_slice(&[0, 0, 6, 0x4, 0, 0, 0, 0, 0, 0, 0x4, 0x7f, 0xff, 0xff, 0xff]);
        hello.extend_from_slice(&[0, 0, 4, 0x8, 0, 0, 0, 0, 0, 0x7f, 0xff, 0, 0]);
        their_write.write_all(&hello).await.unwrap();

        let mut next = 1;
        let mut written = 0;
        loop {
            let batch = requests(next, 2);
            let write =
                tokio::time::timeout(Duration::from_millis(300), their_write.write_all(&batch));
            match write.await {
                Ok(result) => result.unwrap(),
                Err(_) => break,
            }
            next += 4;
            written += batch.len();
            // An unbounded server would let us write for ever.
            assert!(written < 1024 * 1024, "the server kept reading");
        }
        // The backlog (64 KiB) and the pipes (16 KiB each way) hold a few
        // 16 KiB answers and a few 1 KiB requests.
        assert!(written < 64 * 1024, "{written} bytes of requests taken");

        // Reading again lets everything flow: the stalled write completes.
        let reader = tokio::spawn(async move {
            let mut sink = vec![0u8; 64 * 1024];
            while their_read.read(&mut sink).await.is_ok_and(|n| n > 0) {}
        });
        tokio::time::timeout(
            Duration::from_secs(5),
            their_write.write_all(&requests(next, 40)),
        )
        .await
        .expect("writing resumed once the answers were read")
        .unwrap();
        drop(their_write);
        server.abort();
        reader.abort();
    }
}
