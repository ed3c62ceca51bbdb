//! Addresses as people write them (`host:port`, `[v6]:port`, optionally as
//! an `http://` or `https://` URL), resolved and bound.
//!
//! Binding goes through `socket2` because tokio cannot set `IPV6_V6ONLY`:
//! without it a listener on `[::]:p` also takes IPv4 and a second listener
//! on `0.0.0.0:p` fails, so "listen on both" would not work.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use socket2::{Domain, Socket, Type};
use tokio::net::TcpListener;

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
        // A URL may carry a path; the authority ends at the first '/'.
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
                // A bare IPv6 address has colons but no port.
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
    /// name is looked up (`localhost` may give both 127.0.0.1 and ::1).
    pub async fn resolve(&self) -> io::Result<Vec<SocketAddr>> {
        if let Ok(ip) = self.host.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, self.port)]);
        }
        let mut addrs: Vec<SocketAddr> = Vec::new();
        // The resolver may give an address more than once; its order is
        // its preference, so duplicates are dropped without sorting.
        for addr in tokio::net::lookup_host((self.host.as_str(), self.port)).await? {
            if !addrs.contains(&addr) {
                addrs.push(addr);
            }
        }
        if addrs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} resolves to no address", self.host),
            ));
        }
        Ok(addrs)
    }
}

/// A listening socket on `addr`: IPv6 sockets take IPv6 only, so the same
/// port can be bound on IPv4 too; `SO_REUSEADDR` lets a restarted server
/// bind while old connections linger in TIME_WAIT.
pub(crate) fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    TcpListener::from_std(socket.into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(s: &str) -> Result<HostPort, AddrError> {
        s.parse()
    }

    #[test]
    fn host_and_port() {
        let a = parse("127.0.0.1:8080").unwrap();
        assert_eq!(
            (a.host.as_str(), a.port, a.scheme),
            ("127.0.0.1", 8080, None)
        );
        let a = parse("localhost:0").unwrap();
        assert_eq!((a.host.as_str(), a.port), ("localhost", 0));
    }

    #[test]
    fn bracketed_ipv6() {
        let a = parse("[::1]:443").unwrap();
        assert_eq!((a.host.as_str(), a.port), ("::1", 443));
        assert_eq!(a.to_string(), "[::1]:443");
        assert!(parse("::1:443").is_err());
        assert!(parse("[::1:443").is_err());
        assert!(parse("[nothost]:443").is_err());
        assert!(parse("[::1]443").is_err());
    }

    #[test]
    fn urls() {
        let a = parse("https://example.com/some/path").unwrap();
        assert_eq!(
            (a.host.as_str(), a.port, a.scheme),
            ("example.com", 443, Some(Scheme::Https))
        );
        let a = parse("http://[::1]:8000/").unwrap();
        assert_eq!(
            (a.host.as_str(), a.port, a.scheme),
            ("::1", 8000, Some(Scheme::Http))
        );
        assert_eq!(parse("http://h").unwrap().port, 80);
    }

    #[test]
    fn rejects() {
        assert!(parse("localhost").is_err());
        assert!(parse(":80").is_err());
        assert!(parse("h:99999").is_err());
        assert!(parse("h:x").is_err());
    }

    #[tokio::test]
    async fn binds_v4_and_v6_on_one_port() {
        let v4 = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = v4.local_addr().unwrap().port();
        let v6 = bind(SocketAddr::new("::1".parse().unwrap(), port)).unwrap();
        assert_eq!(v6.local_addr().unwrap().port(), port);
    }
}
