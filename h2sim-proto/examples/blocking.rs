//! h2sim-proto driven by plain blocking `std::net` sockets, no async runtime:
//! a server thread answering every request, and a client that sends a batch
//! of requests over one connection and times them.
//!
//!     cargo run --release -p h2sim-proto --example blocking -- [REQUESTS]

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

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

fn serve(mut sock: TcpStream) -> io::Result<()> {
    sock.set_nodelay(true)?;
    let mut conn = Connection::server(Config::default(), Instant::now());
    let mut buf = BytesMut::new();
    while !conn.is_closed() {
        flush(&mut conn, &mut sock)?;
        if !read(&mut conn, &mut sock, &mut buf)? {
            break;
        }
        while let Some(event) = conn.poll_event() {
            if let Event::Closed { error: Some(e), .. } = &event {
                eprintln!("server closed: {e}");
            }
            if let Event::Request { stream, head, .. } = event {
                let body = Bytes::from(format!(
                    "you asked for {}\n",
                    String::from_utf8_lossy(&head.path)
                ));
                let response = ResponseHead::new(200).field("content-type", "text/plain");
                let sent = conn.send_response(stream, response, false);
                sent.and_then(|()| conn.send_data(stream, body, true))
                    .map_err(io::Error::other)?;
            }
        }
    }
    flush(&mut conn, &mut sock)
}

fn main() -> io::Result<()> {
    let requests: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    std::thread::spawn(move || {
        if let Err(e) = listener.accept().and_then(|(sock, _)| serve(sock)) {
            eprintln!("server: {e}");
        }
    });

    let mut sock = TcpStream::connect(addr)?;
    sock.set_nodelay(true)?;
    let started = Instant::now();
    let mut conn = Connection::client(Config::default(), started);
    for i in 0..requests {
        let head = RequestHead::new("GET", "http", addr.to_string(), format!("/item/{i}"));
        conn.send_request(head, true).map_err(io::Error::other)?;
    }
    let (mut done, mut bytes, mut buf) = (0, 0, BytesMut::new());
    while done < requests {
        flush(&mut conn, &mut sock)?;
        if !read(&mut conn, &mut sock, &mut buf)? {
            break;
        }
        while let Some(event) = conn.poll_event() {
            match event {
                Event::Data {
                    data, end_stream, ..
                } => {
                    bytes += data.len();
                    done += usize::from(end_stream);
                }
                Event::StreamReset { .. } | Event::Closed { .. } => {
                    return Err(io::Error::other(format!("{event:?}")));
                }
                _ => {}
            }
        }
    }
    let elapsed = started.elapsed();
    conn.go_away(Instant::now());
    flush(&mut conn, &mut sock)?;
    println!(
        "{done} of {requests} requests answered over one HTTP/2 connection on {addr}: \
         {bytes} body bytes in {:.3} s, {:.0} requests/s",
        elapsed.as_secs_f64(),
        done as f64 / elapsed.as_secs_f64()
    );
    Ok(())
}
