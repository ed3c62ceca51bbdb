//! What an application factory learns about a connection before it starts.

use std::net::SocketAddr;

use h2sim_proto::Protocol;

/// ALPN identifiers, in our order of preference.
pub(crate) const ALPN_H2: &[u8] = b"h2";
pub(crate) const ALPN_HTTP1: &[u8] = b"http/1.1";
use rustls_pki_types::CertificateDer;

/// One connection's transport facts, handed to the application factory so
/// an application can act on them (log the peer, pick rules per listener,
/// identify a network function by its client certificate).
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    pub peer: SocketAddr,
    pub local: SocketAddr,
    /// The protocol fixed before any byte was exchanged (prior knowledge,
    /// HTTP/1.1 by choice, or ALPN); `None` for a plain server connection
    /// that tells HTTP/2 from HTTP/1.1 by its first bytes.
    pub protocol: Option<Protocol>,
    pub tls: Option<TlsInfo>,
    /// How long the transport took to set up: TCP connect plus TLS handshake
    /// on a client, the TLS handshake on a server (zero for plain TCP).
    pub connect_time: std::time::Duration,
    /// Client: 0 for the first connection of a slot, then one more per
    /// reconnection. Server: always 0.
    pub attempt: u32,
    /// The executor the connection runs on (0-based).
    pub executor: usize,
}

/// The outcome of a TLS handshake.
#[derive(Debug, Clone)]
pub struct TlsInfo {
    /// The ALPN protocol agreed on, if any.
    pub alpn: Option<Vec<u8>>,
    /// Server: the name the client asked for (SNI).
    pub server_name: Option<String>,
    pub version: Option<rustls::ProtocolVersion>,
    pub cipher_suite: Option<rustls::CipherSuite>,
    /// The peer's certificate chain, end entity first (empty when it sent none).
    pub peer_certificates: Vec<CertificateDer<'static>>,
}

impl TlsInfo {
    /// Reads the negotiated parameters off a finished handshake.
    pub(crate) fn from_connection(conn: &rustls::Connection) -> Self {
        let server_name = match conn {
            rustls::Connection::Server(s) => s.server_name().map(str::to_owned),
            rustls::Connection::Client(_) => None,
        };
        TlsInfo {
            alpn: conn.alpn_protocol().map(<[u8]>::to_vec),
            server_name,
            version: conn.protocol_version(),
            cipher_suite: conn.negotiated_cipher_suite().map(|s| s.suite()),
            peer_certificates: conn
                .peer_certificates()
                .map(|c| c.iter().map(|c| c.clone().into_owned()).collect())
                .unwrap_or_default(),
        }
    }
}
