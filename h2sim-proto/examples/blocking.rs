//! h2sim-proto driven by plain blocking `std::net` sockets, no async runtime:
//! a server thread answering every request, and a client that sends a batch
//! of requests over one connection and times them.
//!
//!     cargo run --release -p h2sim-proto --example blocking -- [REQUESTS]
//!
//! Both sides run the same loop, [`drive`]; `tests/blocking_example.rs`
//! runs this file's [`serve`] against pipelined HTTP/1.1 requests.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use h2sim_proto::{Config, Connection, Event, RequestHead, ResponseHead};

/// Writes everything the connection has to send, in one vectored write
/// per batch, and fires its timer if due.
fn flush(conn: &mut Connection, sock: &mut TcpStream) -> io::Result<()> {
    let now = Instant::now();
    if conn.poll_timeout().is_some_and(|t| t <= now) {
        conn.handle_timeout(now);
    }
    let chunks: Vec<Bytes> = std::iter::from_fn(|| conn.poll_transmit(now)).collect();
    let mut slices: Vec<io::IoSlice> = chunks.iter().map(|c| io::IoSlice::new(c)).collect();
    let mut slices = &mut slices[..];
    while !slices.is_empty() {
        let n = sock.write_vectored(slices)?;
        io::IoSlice::advance_slices(&mut slices, n);
    }
    Ok(())
}

/// Reads once (blocking) into the connection; false at end of stream.
fn read(conn: &mut Connection, sock: &mut TcpStream, buf: &mut BytesMut) -> io::Result<bool> {
    buf.reserve(64 * 1024);
    let start = buf.len();
    buf.resize(buf.capacity(), 0);
    let n = sock.read(&mut buf[start..])?;
    buf.truncate(start + n);
    if n == 0 {
        conn.handle_eof(Instant::now());
        return Ok(false);
    }
    conn.handle_input(Instant::now(), buf);
    Ok(true)
}

/// Runs `conn` over `sock` until it is closed, handing every event to
/// `on_event`, then closes the socket cleanly.
///
/// It reads only when there is nothing else to do: writing can raise new
/// events (an HTTP/1.1 server holds pipelined requests past its read-ahead
/// and releases them as earlier answers go out), and blocking in `read`
/// before handling them would wait for a peer that waits for us.
///
/// The close sends FIN first and then reads to the peer's end: closing a
/// socket with unread bytes in it (a last WINDOW_UPDATE, the peer's
/// GOAWAY) makes the kernel send RST, and the peer sees "connection reset"
/// instead of an orderly end.
fn drive(
    conn: &mut Connection,
    sock: &mut TcpStream,
    mut on_event: impl FnMut(&mut Connection, Event) -> io::Result<()>,
) -> io::Result<()> {
    let mut buf = BytesMut::new();
    let mut peer_closed = false;
    loop {
        flush(conn, sock)?;
        let mut handled = false;
        while let Some(event) = conn.poll_event() {
            handled = true;
            on_event(conn, event)?;
        }
        if handled {
            // The answers may release more events: write them out first.
            continue;
        }
        if conn.is_closed() || peer_closed {
            break;
        }
        peer_closed = !read(conn, sock, &mut buf)?;
    }
    sock.shutdown(Shutdown::Write)?;
    let mut rest = [0u8; 16 * 1024];
    while !peer_closed {
        peer_closed = sock.read(&mut rest)? == 0;
    }
    Ok(())
}

/// The server side: answers every request with its path.
pub fn serve(mut sock: TcpStream) -> io::Result<()> {
    sock.set_nodelay(true)?;
    let mut conn =
        Connection::server(Config::default(), Instant::now()).map_err(io::Error::other)?;
    drive(&mut conn, &mut sock, |conn, event| {
        match event {
            Event::Closed { error: Some(e), .. } => eprintln!("server closed: {e}"),
            Event::Request { stream, head, .. } => {
                let body = Bytes::from(format!(
                    "you asked for {}\n",
                    String::from_utf8_lossy(&head.path)
                ));
                let response = ResponseHead::new(200).field("content-type", "text/plain");
                let sent = conn.send_response(stream, response, false);
                sent.and_then(|()| conn.send_data(stream, body, true))
                    .map_err(io::Error::other)?;
            }
            _ => {}
        }
        Ok(())
    })
}

fn main() -> io::Result<()> {
    let requests: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    println!("{}", run(requests)?);
    Ok(())
}

/// Serves one connection on a thread, sends `requests` to it as the
/// client, and says how it went; an error from either side is an error.
pub fn run(requests: usize) -> io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let server = std::thread::spawn(move || listener.accept().and_then(|(sock, _)| serve(sock)));

    let mut sock = TcpStream::connect(addr)?;
    sock.set_nodelay(true)?;
    let started = Instant::now();
    let mut conn = Connection::client(Config::default(), started).map_err(io::Error::other)?;
    for i in 0..requests {
        let head = RequestHead::new("GET", "http", addr.to_string(), format!("/item/{i}"));
        conn.send_request(head, true).map_err(io::Error::other)?;
    }
    if requests == 0 {
        conn.go_away(started);
    }
    let (mut done, mut bytes, mut elapsed) = (0, 0, Duration::ZERO);
    drive(&mut conn, &mut sock, |conn, event| {
        match event {
            Event::Data {
                data, end_stream, ..
            } => {
                bytes += data.len();
                done += usize::from(end_stream);
                if done == requests {
                    // The clock stops at the last response; then we go away.
                    elapsed = started.elapsed();
                    conn.go_away(Instant::now());
                }
            }
            Event::Closed { error: None, .. } if done == requests => {}
            Event::StreamReset { .. } | Event::Closed { .. } => {
                return Err(io::Error::other(format!("{event:?}")));
            }
            _ => {}
        }
        Ok(())
    })?;
    match server.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(io::Error::other(format!("server: {e}"))),
        Err(_) => return Err(io::Error::other("server: panicked")),
    }
    Ok(format!(
        "{done} of {requests} requests answered over one HTTP/2 connection on {addr}: \
         {bytes} body bytes in {:.3} s, {:.0} requests/s",
        elapsed.as_secs_f64(),
        done as f64 / elapsed.as_secs_f64()
    ))
}
