//! Addresses as people write them: `host:port`, `[v6]:port`, or an
//! `http://`/`https://` URL. Parsing and the bookkeeping around a name
//! lookup live here; the lookup itself (DNS) does not, because it blocks
//! or needs a runtime: each adapter resolves with its own means and hands
//! the answer to [`HostPort::addresses`].

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

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
    /// The socket address when the host is an IP literal, which needs no
    /// lookup; `None` for a name.
    pub fn literal(&self) -> Option<SocketAddr> {
        let ip = self.host.parse::<IpAddr>().ok()?;
        Some(SocketAddr::new(ip, self.port))
    }

    /// What a lookup of this host gave, as the list to bind or connect to:
    /// the resolver may give an address more than once, and its order is
    /// its preference, so every repeat is dropped (not only adjacent ones:
    /// `[::1, 127.0.0.1, ::1]` would otherwise bind `::1` twice under
    /// `SO_REUSEPORT`) without sorting. An empty answer is an error that
    /// names the host.
    pub fn addresses(
        &self,
        resolved: impl IntoIterator<Item = SocketAddr>,
    ) -> io::Result<Vec<SocketAddr>> {
        let mut addrs: Vec<SocketAddr> = Vec::new();
        for addr in resolved {
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
        assert!(parse("[x]:1").is_err());
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
        for bad in ["localhost", ":80", "h:99999", "h:x"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn literals_need_no_lookup() {
        let a = parse("127.0.0.1:9").unwrap();
        assert_eq!(a.literal(), Some("127.0.0.1:9".parse().unwrap()));
        assert_eq!(parse("localhost:9").unwrap().literal(), None);
    }

    /// glommio's copy used `Vec::dedup`, which drops only adjacent
    /// repeats: this answer was bound twice per executor.
    #[test]
    fn every_repeat_is_dropped_in_the_resolver_order() {
        let a = parse("localhost:9").unwrap();
        let v6: SocketAddr = "[::1]:9".parse().unwrap();
        let v4: SocketAddr = "127.0.0.1:9".parse().unwrap();
        assert_eq!(a.addresses([v6, v4, v6]).unwrap(), [v6, v4]);
        let none = a.addresses([]).unwrap_err();
        assert_eq!(none.kind(), io::ErrorKind::NotFound);
        assert!(none.to_string().contains("localhost"), "{none}");
    }
}
