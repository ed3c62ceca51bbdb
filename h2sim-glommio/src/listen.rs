//! Addresses (parsed by `h2sim_proto::host::addr`) resolved, and a port
//! reserved for every executor's listener.
//!
//! Each executor binds its own socket with `SO_REUSEPORT` (glommio's
//! `TcpListener::bind` sets it), so the kernel spreads incoming connections
//! over the executors with nothing shared between them. With port 0 every
//! socket would get a port of its own, so the port is chosen once, by a
//! socket that is bound but never listens (it receives no connections),
//! and held until every executor has bound that port.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

use h2sim_proto::host::{DEFER_ACCEPT_SECS, HostPort, LISTEN_BACKLOG, UNSENT_LIMIT};

use socket2::{Domain, Socket, Type};

/// Every socket address `addr` stands for: an IP literal is itself, a
/// name is looked up (blocking: this runs before any executor starts),
/// every repeat dropped (`HostPort::addresses`).
pub(crate) fn resolve(addr: &HostPort) -> io::Result<Vec<SocketAddr>> {
    if let Some(literal) = addr.literal() {
        return Ok(vec![literal]);
    }
    addr.addresses((addr.host.as_str(), addr.port).to_socket_addrs()?)
}

/// This executor's listener on `addr`: `SO_REUSEPORT` as glommio's own
/// `TcpListener::bind` sets it, but with a listen queue of
/// [`LISTEN_BACKLOG`] instead of glommio's fixed 1024, which a burst of
/// 10,000 connects overflowed (the kernel dropped SYNs, counted in
/// `ListenOverflows`). Its connections hold at most [`UNSENT_LIMIT`]
/// unsent bytes and send without Nagle's delay.
pub(crate) fn bind(addr: SocketAddr) -> io::Result<glommio::net::TcpListener> {
    use std::os::fd::{FromRawFd, IntoRawFd};
    let socket = listening(addr)?;
    // SAFETY: the descriptor is a bound, listening TCP socket that
    // `into_raw_fd` gives up, so the listener is its only owner (glommio
    // offers no safe way to build a listener from a socket).
    #[allow(unsafe_code)]
    let listener = unsafe { glommio::net::TcpListener::from_raw_fd(socket.into_raw_fd()) };
    Ok(listener)
}

/// The socket of [`bind`], listening, before glommio takes it.
fn listening(addr: SocketAddr) -> io::Result<Socket> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_port(true)?;
    socket.set_reuse_address(true)?;
    socket.set_tcp_notsent_lowat(UNSENT_LIMIT)?;
    // Accepted connections inherit it: without it small frames wait for
    // ACKs (Nagle), and each connection would set it with a system call.
    socket.set_tcp_nodelay(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    defer_accept(&socket)?;
    Ok(socket)
}

/// A bound, never listening socket that holds a port for the executors'
/// listeners: it takes part in no accept, so no connection waits on it.
#[derive(Debug)]
pub(crate) struct Reservation {
    socket: Socket,
    addr: SocketAddr,
}

impl Reservation {
    /// Binds `addr` (port 0 picks one) with the options the executors'
    /// listeners will have, so they may bind the same port after it.
    pub(crate) fn new(addr: SocketAddr) -> io::Result<Self> {
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
        socket.set_reuse_port(true)?;
        socket.set_reuse_address(true)?;
        socket.bind(&addr.into())?;
        let addr = socket
            .local_addr()?
            .as_socket()
            .ok_or_else(|| io::Error::other("bound socket has no IP address"))?;
        Ok(Reservation { socket, addr })
    }

    /// The address with the port actually reserved.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Gives the port up, once every executor listens on it.
    pub(crate) fn release(self) {
        drop(self.socket);
    }
}

/// Holds each new connection back until its first bytes arrive
/// ([`DEFER_ACCEPT_SECS`]), so its first wake-up has a request to read.
#[cfg(target_os = "linux")]
fn defer_accept(socket: &Socket) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let secs: libc::c_int = DEFER_ACCEPT_SECS;
    // SAFETY: `setsockopt` reads the `c_int` it is given the address and
    // size of, a live local, on the socket's own open descriptor.
    #[allow(unsafe_code)]
    let done = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            (&raw const secs).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write;
    use std::time::{Duration, Instant};

    #[test]
    fn resolves_literals_and_names() {
        let a = resolve(&"127.0.0.1:9".parse().unwrap()).unwrap();
        assert_eq!(a, ["127.0.0.1:9".parse().unwrap()]);
        let a = resolve(&"localhost:9".parse().unwrap()).unwrap();
        assert!(a.iter().all(|a| a.ip().is_loopback()));
    }

    /// A connection takes the unsent limit and `TCP_NODELAY` from the
    /// listener it came from (the kernel copies the listener's options
    /// into it), so the server sets neither per connection.
    #[test]
    fn accepted_connections_have_the_unsent_limit_and_no_delay() {
        let listener = listening("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap().as_socket().unwrap();
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        client.write_all(b"x").unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert_eq!(accepted.tcp_notsent_lowat().unwrap(), UNSENT_LIMIT);
        assert!(accepted.tcp_nodelay().unwrap());
    }

    /// A connection is accepted once its first bytes have come, not at
    /// its handshake (`TCP_DEFER_ACCEPT`).
    #[test]
    fn a_connection_is_accepted_when_its_first_bytes_come() {
        let listener = listening("127.0.0.1:0".parse().unwrap()).unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap().as_socket().unwrap();
        let mut client = std::net::TcpStream::connect(addr).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let quiet = listener.accept().map(|_| ()).unwrap_err();
        assert_eq!(quiet.kind(), io::ErrorKind::WouldBlock);
        client.write_all(b"GET / HTTP/1.1\r\n").unwrap();
        let start = Instant::now();
        while let Err(e) = listener.accept() {
            assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
            assert!(start.elapsed() < Duration::from_millis(500), "not accepted");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// What the executors rely on: a second `SO_REUSEPORT` socket (as
    /// glommio binds it) takes the reserved port while the reservation holds it.
    #[test]
    fn reserved_port_can_be_shared() {
        let r = Reservation::new("127.0.0.1:0".parse().unwrap()).unwrap();
        assert_ne!(r.addr().port(), 0);
        let listeners: Vec<Socket> = (0..2)
            .map(|_| {
                let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
                s.set_reuse_port(true).unwrap();
                s.bind(&r.addr().into()).unwrap();
                s.listen(8).unwrap();
                s
            })
            .collect();
        r.release();
        assert_eq!(listeners.len(), 2);
    }
}
