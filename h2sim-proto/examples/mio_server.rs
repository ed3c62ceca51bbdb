//! h2sim-proto on a third runtime, mio: a plain-TCP server that tells
//! HTTP/2 (prior knowledge) from HTTP/1.1 by the first bytes and answers
//! every request "hello". The core's `host::Driver` keeps each
//! connection's buffers, deadline and state; this file adds only mio's
//! sockets and its one timer (the poll timeout), and closes each socket
//! the way the driver asks (FIN, then the peer's rest read).
//!
//!     cargo run -p h2sim-proto --example mio_server -- 127.0.0.1:8080
//!
//! `tests/mio_example.rs` runs curl and h2load against [`serve`].

use std::collections::HashMap;
use std::io::{self, Read};
use std::net::Shutdown;
use std::time::Instant;

use h2sim_proto::handler::{HandlerApp, Reply, Request};
use h2sim_proto::host::{Driver, DriverOptions, LINGER, LINGER_BYTES, State};
use h2sim_proto::{Config, Connection, Endpoint};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Registry, Token};

type Hello = HandlerApp<fn(Request) -> Reply>;

fn main() -> io::Result<()> {
    let addr = std::env::args().nth(1);
    let addr = addr.as_deref().unwrap_or("127.0.0.1:8080").parse();
    let listener = TcpListener::bind(addr.map_err(io::Error::other)?)?;
    println!("listening on {}", listener.local_addr()?);
    serve(listener)
}

/// A connection whose core is done: our side is shut (FIN sent), and what
/// the peer still sends is read and dropped until it closes too, `LINGER`
/// passes or `LINGER_BYTES` came. Closed with input unread, the socket
/// would make the kernel send RST, which can destroy our last bytes (the
/// last answer, the GOAWAY) before the peer reads them (RFC 9112 §9.6).
struct Lingering {
    tcp: TcpStream,
    until: Instant,
    read: usize,
}

impl Lingering {
    /// Reads and drops what has come; false once the wait is over.
    fn drain(&mut self, now: Instant, sink: &mut [u8]) -> bool {
        while now < self.until && self.read < LINGER_BYTES {
            match self.tcp.read(sink) {
                Ok(0) => return false,
                Ok(n) => self.read += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        false
    }
}

/// Serves `listener`'s connections for ever.
pub fn serve(mut listener: TcpListener) -> io::Result<()> {
    let (mut poll, mut events) = (Poll::new()?, Events::with_capacity(256));
    poll.registry()
        .register(&mut listener, Token(0), Interest::READABLE)?;
    let mut conns: HashMap<Token, (TcpStream, Driver<Hello>)> = HashMap::new();
    let mut closing: HashMap<Token, Lingering> = HashMap::new();
    let mut sink = [0; 16 * 1024];
    let mut tokens = (1..).map(Token);
    loop {
        let now = Instant::now();
        let deadline = conns
            .values_mut()
            .filter_map(|(_, d)| d.deadline(now))
            .chain(closing.values().map(|l| l.until))
            .min();
        poll.poll(
            &mut events,
            deadline.map(|t| t.saturating_duration_since(now)),
        )?;
        while let (Ok((mut tcp, _)), Some(token)) = (listener.accept(), tokens.next()) {
            let interest = Interest::READABLE | Interest::WRITABLE;
            poll.registry().register(&mut tcp, token, interest)?;
            let now = Instant::now();
            let conn = Connection::server(Config::default(), now).map_err(io::Error::other)?;
            let app: Hello = HandlerApp::new(|_| Reply::new(200, "hello\n"));
            let driver = Driver::new(Endpoint::new(conn, app, now), DriverOptions::default());
            conns.insert(token, (tcp, driver));
        }
        // Every connection takes a turn (short for an example; a server
        // would turn only those with events or a due deadline). At
        // `State::Closed` the transport closes as the driver's docs say:
        // at once if the peer will send nothing more, else FIN first and
        // the peer's rest read (`Lingering`).
        let now = Instant::now();
        let mut ended = Vec::new();
        for (token, (tcp, driver)) in &mut conns {
            match driver.pump(now, tcp) {
                Ok(State::Closed(_)) => ended.push((*token, driver.finish(false))),
                Err(_) => ended.push((*token, false)),
                Ok(_) => {}
            }
        }
        for (token, linger) in ended {
            let Some((tcp, _)) = conns.remove(&token) else {
                continue;
            };
            if linger && tcp.shutdown(Shutdown::Write).is_ok() {
                let until = now + LINGER;
                closing.insert(
                    token,
                    Lingering {
                        tcp,
                        until,
                        read: 0,
                    },
                );
            } else {
                close(poll.registry(), tcp);
            }
        }
        let done: Vec<Token> = closing
            .iter_mut()
            .filter_map(|(token, l)| (!l.drain(now, &mut sink)).then_some(*token))
            .collect();
        for token in done {
            if let Some(lingering) = closing.remove(&token) {
                close(poll.registry(), lingering.tcp);
            }
        }
    }
}

/// Lets a socket go: mio forgets it, and dropping it closes it.
fn close(registry: &Registry, mut tcp: TcpStream) {
    let _ = registry.deregister(&mut tcp);
}
