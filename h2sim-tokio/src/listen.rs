//! Addresses (parsed by `h2sim_proto::host::addr`) resolved and bound.
//!
//! Binding goes through `socket2` because tokio cannot set `IPV6_V6ONLY`:
//! without it a listener on `[::]:p` also takes IPv4 and a second listener
//! on `0.0.0.0:p` fails, so "listen on both" would not work.

use std::io;
use std::net::SocketAddr;

use h2sim_proto::host::{DEFER_ACCEPT_SECS, HostPort, LISTEN_BACKLOG, UNSENT_LIMIT};

use socket2::{Domain, Socket, Type};
use tokio::net::TcpListener;

/// Every socket address `addr` stands for: an IP literal is itself, a
/// name is looked up by tokio's resolver (`localhost` may give both
/// 127.0.0.1 and ::1), repeats dropped (`HostPort::addresses`).
pub(crate) async fn resolve(addr: &HostPort) -> io::Result<Vec<SocketAddr>> {
    if let Some(literal) = addr.literal() {
        return Ok(vec![literal]);
    }
    addr.addresses(tokio::net::lookup_host((addr.host.as_str(), addr.port)).await?)
}

/// A listening socket on `addr`: IPv6 sockets take IPv6 only, so the same
/// port can be bound on IPv4 too; `SO_REUSEADDR` lets a restarted server
/// bind while old connections linger in TIME_WAIT; its connections hold
/// at most [`UNSENT_LIMIT`] unsent bytes and send without Nagle's delay.
pub(crate) fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.set_tcp_notsent_lowat(UNSENT_LIMIT)?;
    // Accepted connections inherit it: without it small frames wait for
    // ACKs (Nagle), and each connection would set it with a system call.
    socket.set_tcp_nodelay(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    defer_accept(&socket)?;
    TcpListener::from_std(socket.into())
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

/// Other systems have no such option: connections are accepted at once.
#[cfg(not(target_os = "linux"))]
fn defer_accept(_: &Socket) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn resolves_literals_and_names() {
        let a = resolve(&"127.0.0.1:9".parse().unwrap()).await.unwrap();
        assert_eq!(a, ["127.0.0.1:9".parse().unwrap()]);
        let a = resolve(&"localhost:9".parse().unwrap()).await.unwrap();
        assert!(a.iter().all(|a| a.ip().is_loopback()));
    }

    /// A connection takes the unsent limit and `TCP_NODELAY` from the
    /// listener it came from (the kernel copies the listener's options
    /// into it), so the server sets neither per connection.
    #[tokio::test]
    async fn accepted_connections_have_the_unsent_limit_and_no_delay() {
        use tokio::io::AsyncWriteExt;
        let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let mut client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        client.write_all(b"x").await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let limit = socket2::SockRef::from(&accepted).tcp_notsent_lowat();
        assert_eq!(limit.unwrap(), UNSENT_LIMIT);
        assert!(accepted.nodelay().unwrap());
    }

    /// A connection is accepted once its first bytes have come, not at
    /// its handshake (`TCP_DEFER_ACCEPT`).
    #[tokio::test]
    async fn a_connection_is_accepted_when_its_first_bytes_come() {
        use std::time::Duration;
        use tokio::io::AsyncWriteExt;
        let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let mut client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let quiet = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
        assert!(quiet.is_err(), "accepted before any byte came");
        client.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        let accepted = tokio::time::timeout(Duration::from_millis(500), listener.accept()).await;
        assert!(accepted.unwrap().is_ok());
    }

    #[tokio::test]
    async fn binds_v4_and_v6_on_one_port() {
        let v4 = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = v4.local_addr().unwrap().port();
        let v6 = bind(SocketAddr::new("::1".parse().unwrap(), port)).unwrap();
        assert_eq!(v6.local_addr().unwrap().port(), port);
    }
}
