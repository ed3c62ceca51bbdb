//! h2sim-proto on a third runtime, mio: a plain-TCP server that tells
//! HTTP/2 (prior knowledge) from HTTP/1.1 by the first bytes and answers
//! every request "hello". The core's `host::Driver` keeps each
//! connection's buffers, deadline and state; this file adds only mio's
//! sockets and its one timer (the poll timeout).
//!
//!     cargo run -p h2sim-proto --example mio_server -- 127.0.0.1:8080
//!
//! `tests/mio_example.rs` runs curl and h2load against [`serve`].

use std::collections::HashMap;
use std::io;
use std::time::Instant;

use h2sim_proto::handler::{HandlerApp, Reply, Request};
use h2sim_proto::host::{Driver, DriverOptions, State};
use h2sim_proto::{Config, Connection, Endpoint};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

type Hello = HandlerApp<fn(Request) -> Reply>;

fn main() -> io::Result<()> {
    let addr = std::env::args().nth(1);
    let addr = addr.as_deref().unwrap_or("127.0.0.1:8080").parse();
    let listener = TcpListener::bind(addr.map_err(io::Error::other)?)?;
    println!("listening on {}", listener.local_addr()?);
    serve(listener)
}

/// Serves `listener`'s connections for ever.
pub fn serve(mut listener: TcpListener) -> io::Result<()> {
    let (mut poll, mut events) = (Poll::new()?, Events::with_capacity(256));
    poll.registry()
        .register(&mut listener, Token(0), Interest::READABLE)?;
    let mut conns: HashMap<Token, (TcpStream, Driver<Hello>)> = HashMap::new();
    let mut tokens = (1..).map(Token);
    loop {
        let now = Instant::now();
        let deadline = conns
            .values_mut()
            .filter_map(|(_, d)| d.deadline(now))
            .min();
        poll.poll(
            &mut events,
            deadline.map(|t| t.saturating_duration_since(now)),
        )?;
        while let (Ok((mut tcp, _)), Some(token)) = (listener.accept(), tokens.next()) {
            let interest = Interest::READABLE | Interest::WRITABLE;
            poll.registry().register(&mut tcp, token, interest)?;
            let conn = Connection::server(Config::default(), now).map_err(io::Error::other)?;
            let app: Hello = HandlerApp::new(|_| Reply::new(200, "hello\n"));
            let driver = Driver::new(Endpoint::new(conn, app, now), DriverOptions::default());
            conns.insert(token, (tcp, driver));
        }
        // Every connection takes a turn (short for an example; a server
        // would turn only those with events or a due deadline).
        conns.retain(|_, (tcp, driver)| match driver.pump(Instant::now(), tcp) {
            Ok(State::Closed(_)) | Err(_) => {
                let _ = poll.registry().deregister(tcp);
                false
            }
            Ok(_) => true,
        });
    }
}
