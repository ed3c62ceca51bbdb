//! Addresses (parsed by `h2sim_proto::host::addr`) resolved and bound.
//!
//! Binding goes through `socket2` because tokio cannot set `IPV6_V6ONLY`:
//! without it a listener on `[::]:p` also takes IPv4 and a second listener
//! on `0.0.0.0:p` fails, so "listen on both" would not work.

use std::io;
use std::net::SocketAddr;

use h2sim_proto::host::{HostPort, LISTEN_BACKLOG, UNSENT_LIMIT};

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
    TcpListener::from_std(socket.into())
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
        let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let _client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let limit = socket2::SockRef::from(&accepted).tcp_notsent_lowat();
        assert_eq!(limit.unwrap(), UNSENT_LIMIT);
        assert!(accepted.nodelay().unwrap());
    }

    #[tokio::test]
    async fn binds_v4_and_v6_on_one_port() {
        let v4 = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = v4.local_addr().unwrap().port();
        let v6 = bind(SocketAddr::new("::1".parse().unwrap(), port)).unwrap();
        assert_eq!(v6.local_addr().unwrap().port(), port);
    }
}
