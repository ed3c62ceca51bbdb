//! Addresses as people write them (`host:port`, `[v6]:port`, optionally as
//! an `http://` or `https://` URL), resolved, and a port reserved for every
//! executor's listener.
//!
//! Each executor binds its own socket with `SO_REUSEPORT` (glommio's
//! `TcpListener::bind` sets it), so the kernel spreads incoming connections
//! over the executors with nothing shared between them. With port 0 every
//! socket would get a port of its own, so the port is chosen once, by a
//! socket that is bound but never listens (it receives no connections),
//! and held until every executor has bound that port.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::str::FromStr;

use socket2::{Domain, Socket, Type};

/// The scheme of an address written as a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

/// A host (name or IP address) and a port, as given by the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    /// A name or an IP address, without the brackets of an IPv6 literal.
    pub host: String,
    pub port: u16,
    /// `http` or `https` when the address was written as a URL.
    pub scheme: Option<Scheme>,
}

/// Why an address could not be understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddrError {
    pub input: String,
    pub reason: &'static str,
}

impl fmt::Display for AddrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid address {:?}: {}", self.input, self.reason)
    }
}

impl std::error::Error for AddrError {}

impl FromStr for HostPort {
    type Err = AddrError;

    /// Accepts `host:port`, `[v6]:port`, and `http://…`/`https://…` URLs
    /// whose port defaults to 80/443 and whose path is ignored.
    fn from_str(input: &str) -> Result<Self, AddrError> {
        let fail = |reason| AddrError {
            input: input.to_owned(),
            reason,
        };
        let (scheme, rest) = if let Some(rest) = input.strip_prefix("http://") {
            (Some(Scheme::Http), rest)
        } else if let Some(rest) = input.strip_prefix("https://") {
            (Some(Scheme::Https), rest)
        } else {
            (None, input)
        };
        let authority = match scheme {
            Some(_) => rest.split('/').next().unwrap_or(rest),
            None => rest,
        };
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (v6, after) = bracketed
                .split_once(']')
                .ok_or_else(|| fail("unclosed '[' in an IPv6 address"))?;
            if v6.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(fail("not an IPv6 address inside [ ]"));
            }
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p),
                None if after.is_empty() => None,
                None => return Err(fail("expected ':' after ']'")),
            };
            (v6, port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, _)) if h.contains(':') => {
                    return Err(fail("an IPv6 address needs brackets: [addr]:port"));
                }
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(fail("no host"));
        }
        let port = match (port, scheme) {
            (Some(p), _) => p
                .parse()
                .map_err(|_| fail("port is not a number 0-65535"))?,
            (None, Some(Scheme::Http)) => 80,
            (None, Some(Scheme::Https)) => 443,
            (None, None) => return Err(fail("no port (host:port)")),
        };
        Ok(HostPort {
            host: host.to_owned(),
            port,
            scheme,
        })
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl HostPort {
    /// Every socket address the host stands for: an IP literal is itself, a
    /// name is looked up (blocking: this runs before any executor starts).
    pub fn resolve(&self) -> io::Result<Vec<SocketAddr>> {
        if let Ok(ip) = self.host.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, self.port)]);
        }
        let mut addrs: Vec<SocketAddr> =
            (self.host.as_str(), self.port).to_socket_addrs()?.collect();
        addrs.dedup();
        if addrs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} resolves to no address", self.host),
            ));
        }
        Ok(addrs)
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(s: &str) -> Result<HostPort, AddrError> {
        s.parse()
    }

    #[test]
    fn host_port_forms() {
        let a = parse("127.0.0.1:8080").unwrap();
        assert_eq!(
            (a.host.as_str(), a.port, a.scheme),
            ("127.0.0.1", 8080, None)
        );
        let a = parse("[::1]:443").unwrap();
        assert_eq!((a.host.as_str(), a.port), ("::1", 443));
        assert_eq!(a.to_string(), "[::1]:443");
        let a = parse("https://example.com/some/path").unwrap();
        assert_eq!((a.port, a.scheme), (443, Some(Scheme::Https)));
        assert_eq!(parse("http://h").unwrap().port, 80);
    }

    #[test]
    fn rejects() {
        for bad in [
            "localhost",
            ":80",
            "h:99999",
            "h:x",
            "::1:443",
            "[::1:443",
            "[x]:1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolves_literals_and_names() {
        let a = parse("127.0.0.1:9").unwrap().resolve().unwrap();
        assert_eq!(a, ["127.0.0.1:9".parse().unwrap()]);
        let a = parse("localhost:9").unwrap().resolve().unwrap();
        assert!(a.iter().all(|a| a.ip().is_loopback()));
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
