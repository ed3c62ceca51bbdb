//! What a host knows about a connection before it starts, and the choice
//! it makes from that: ALPN → protocol → [`Connection`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{Config, Connection, Protocol, UserError};

/// ALPN identifier of HTTP/2 (RFC 9113 §3.2), our first preference.
pub const ALPN_H2: &[u8] = b"h2";
/// ALPN identifier of HTTP/1.1 (RFC 7301 §6).
pub const ALPN_HTTP1: &[u8] = b"http/1.1";
/// ALPN identifier of HTTP/1.0 (RFC 7301 §6), which a server also accepts
/// (last) and serves as HTTP/1.1, as it does an HTTP/1.0 request on a plain
/// listener: `curl -0 https://…` offers only this one, and a server that
/// refused it would fail the handshake (`no_application_protocol`).
pub const ALPN_HTTP10: &[u8] = b"http/1.0";

/// One connection's transport facts, handed to the application factory so
/// an application can act on them (log the peer, pick rules per listener,
/// identify a network function by its client certificate).
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    pub peer: SocketAddr,
    pub local: SocketAddr,
    /// The protocol fixed before any byte was exchanged (prior knowledge,
    /// HTTP/1.1 by choice, or ALPN); `None` for a server connection that
    /// tells HTTP/2 from HTTP/1.1 by its first bytes.
    pub protocol: Option<Protocol>,
    #[cfg(feature = "tls")]
    pub tls: Option<TlsInfo>,
    /// How long the transport took to set up: TCP connect plus TLS handshake
    /// on a client, the TLS handshake on a server (zero for plain TCP).
    pub connect_time: Duration,
    /// Client: 0 for the first connection of a slot, then one more per
    /// reconnection. Server: always 0.
    pub attempt: u32,
    /// The event-loop thread the connection runs on (0-based): glommio's
    /// executor; always 0 on a runtime whose tasks move between threads.
    pub executor: usize,
}

impl ConnectionInfo {
    /// A plain connection between `local` and `peer`, protocol still open.
    pub fn new(peer: SocketAddr, local: SocketAddr) -> Self {
        ConnectionInfo {
            peer,
            local,
            protocol: None,
            #[cfg(feature = "tls")]
            tls: None,
            connect_time: Duration::ZERO,
            attempt: 0,
            executor: 0,
        }
    }
}

/// The outcome of a TLS handshake.
#[cfg(feature = "tls")]
#[derive(Debug, Clone)]
pub struct TlsInfo {
    /// The ALPN protocol agreed on, if any.
    pub alpn: Option<Vec<u8>>,
    /// Server: the name the client asked for (SNI).
    pub server_name: Option<String>,
    pub version: Option<rustls::ProtocolVersion>,
    pub cipher_suite: Option<rustls::CipherSuite>,
    /// The key exchange's group (the server's temporary key).
    pub key_exchange: Option<rustls::NamedGroup>,
    /// The peer's certificate chain, end entity first (empty when it sent none).
    pub peer_certificates: Vec<rustls_pki_types::CertificateDer<'static>>,
}

#[cfg(feature = "tls")]
impl TlsInfo {
    /// Reads the negotiated parameters off a finished handshake, a
    /// server's with the SNI name it got.
    pub fn from_connection(conn: &rustls::Connection) -> Self {
        let server_name = match conn {
            rustls::Connection::Server(server) => server.server_name(),
            rustls::Connection::Client(_) => None,
        };
        let session: &rustls::CommonState = conn;
        TlsInfo {
            alpn: session.alpn_protocol().map(<[u8]>::to_vec),
            server_name: server_name.map(str::to_owned),
            version: session.protocol_version(),
            cipher_suite: session.negotiated_cipher_suite().map(|s| s.suite()),
            key_exchange: session.negotiated_key_exchange_group().map(|g| g.name()),
            peer_certificates: session
                .peer_certificates()
                .map(|c| c.iter().map(|c| c.clone().into_owned()).collect())
                .unwrap_or_default(),
        }
    }
}

#[cfg(feature = "tls")]
impl ConnectionInfo {
    /// Completes a server connection's info once its TLS handshake agreed
    /// on what `tls` tells, `took` after it began: the protocol follows
    /// the ALPN result.
    pub fn server_handshake_done(&mut self, tls: TlsInfo, took: Duration) {
        self.protocol = server_protocol(tls.alpn.as_deref());
        self.tls = Some(tls);
        self.connect_time = took;
    }
}

/// The local address of every connection a listener bound to `listener`
/// accepts: the listener's own, so no connection asks the kernel for it
/// (`getsockname`), unless it is a wildcard address, whose connections
/// each have their own.
pub fn accepted_local(listener: SocketAddr) -> Option<SocketAddr> {
    Some(listener).filter(|addr| !addr.ip().is_unspecified())
}

/// The protocol a server connection speaks after a TLS handshake: the
/// ALPN result, or (without one) the first bytes decide, as on a plain
/// listener.
pub fn server_protocol(alpn: Option<&[u8]>) -> Option<Protocol> {
    match alpn {
        Some(ALPN_H2) => Some(Protocol::Http2),
        Some(ALPN_HTTP1 | ALPN_HTTP10) => Some(Protocol::Http1),
        _ => None,
    }
}

/// A server connection for `protocol`, or one that tells it from the
/// first bytes; `Err` for a configuration [`Config::check`] refuses.
pub fn server_connection(
    protocol: Option<Protocol>,
    config: impl Into<Arc<Config>>,
    now: Instant,
) -> Result<Connection, UserError> {
    match protocol {
        Some(protocol) => Connection::server_for(protocol, config, now),
        None => Connection::server(config, now),
    }
}

/// The configuration a server's connections share, built once when it
/// starts: plain connections take one, TLS connections the same with
/// `http1.secure` set. A connection then costs a reference count, not a
/// copy of the configuration.
#[derive(Debug, Clone)]
pub struct ServerConfigs {
    plain: Arc<Config>,
    secure: Arc<Config>,
}

impl ServerConfigs {
    /// `plain_protocol` is what plain listeners speak (see
    /// [`ServerOptions::plain_protocol`]). Fixed to HTTP/1.1, they stay
    /// HTTP/1.1: a request's `Upgrade: h2c` is ignored (RFC 9110 §7.8
    /// lets a server ignore an upgrade) and answered in HTTP/1.1, so a
    /// client that always asks for h2c (Java's `HttpClient` does) can be
    /// tested on its HTTP/1.1 path.
    ///
    /// `config` is checked here ([`Config::check`]), once for all the
    /// server's connections: a server whose settings no client accepts
    /// does not start.
    ///
    /// [`ServerOptions::plain_protocol`]: super::ServerOptions::plain_protocol
    pub fn new(config: &Config, plain_protocol: Option<Protocol>) -> Result<Self, UserError> {
        config.check()?;
        let mut plain = config.clone();
        if plain_protocol == Some(Protocol::Http1) {
            plain.http1.allow_h2c_upgrade = false;
        }
        let mut secure = config.clone();
        secure.http1.secure = true;
        Ok(ServerConfigs {
            plain: Arc::new(plain),
            secure: Arc::new(secure),
        })
    }

    /// A server connection for `protocol` (see [`server_connection`]),
    /// over TLS or not.
    pub fn connection(&self, protocol: Option<Protocol>, tls: bool, now: Instant) -> Connection {
        let config = if tls { &self.secure } else { &self.plain };
        Connection::server_checked(protocol, Arc::clone(config), now)
    }
}

/// A client connection for `protocol` (HTTP/2 unless told HTTP/1.1);
/// `Err` for a configuration [`Config::check`] refuses.
pub fn client_connection(
    protocol: Option<Protocol>,
    config: impl Into<Arc<Config>>,
    now: Instant,
) -> Result<Connection, UserError> {
    match protocol {
        Some(Protocol::Http1) => Connection::client_http1(config, now),
        _ => Connection::client(config, now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_wildcard_listener_leaves_the_local_address_open() {
        let one: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert_eq!(accepted_local(one), Some(one));
        assert_eq!(accepted_local("0.0.0.0:80".parse().unwrap()), None);
        assert_eq!(accepted_local("[::]:80".parse().unwrap()), None);
    }

    /// Only plain listeners fixed to HTTP/1.1 turn the h2c upgrade off;
    /// TLS connections never take it anyway.
    #[test]
    fn a_plain_listener_fixed_to_http1_ignores_the_h2c_upgrade() {
        let upgrades = |protocol| {
            let configs = ServerConfigs::new(&Config::default(), protocol).unwrap();
            (
                configs.plain.http1.allow_h2c_upgrade,
                configs.secure.http1.secure,
            )
        };
        assert_eq!(upgrades(Some(Protocol::Http1)), (false, true));
        assert_eq!(upgrades(None), (true, true));
        assert_eq!(upgrades(Some(Protocol::Http2)), (true, true));
    }

    #[test]
    fn alpn_picks_the_server_protocol() {
        assert_eq!(server_protocol(Some(b"h2")), Some(Protocol::Http2));
        assert_eq!(server_protocol(Some(b"http/1.1")), Some(Protocol::Http1));
        assert_eq!(server_protocol(Some(b"http/1.0")), Some(Protocol::Http1));
        assert_eq!(server_protocol(Some(b"spdy/3")), None);
        assert_eq!(server_protocol(None), None);
    }
}
