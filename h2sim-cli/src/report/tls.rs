//! The report's TLS lines, named as h2load (through OpenSSL) names them,
//! so that a run over TLS reads the same from either tool.

use h2sim_proto::host::TlsInfo;
use rustls::{CipherSuite, NamedGroup, ProtocolVersion};

/// What the handshake of a run's first TLS connection agreed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    /// `TLS Protocol:`, e.g. `TLSv1.3`.
    pub protocol: String,
    /// `Cipher:`, e.g. `TLS_AES_128_GCM_SHA256` or `ECDHE-RSA-AES128-GCM-SHA256`.
    pub cipher: String,
    /// `Server Temp Key:`, e.g. `X25519 253 bits`; a group OpenSSL has no
    /// line for (a post-quantum hybrid) by its IANA name.
    pub server_temp_key: String,
}

impl Tls {
    pub fn from_info(info: &TlsInfo) -> Self {
        Tls {
            protocol: info.version.map_or_else(String::new, protocol),
            cipher: info.cipher_suite.map_or_else(String::new, cipher),
            server_temp_key: info.key_exchange.map_or_else(String::new, temp_key),
        }
    }

    /// h2load's three lines, before `Application protocol:`.
    pub fn lines(&self) -> String {
        format!(
            "TLS Protocol: {}\nCipher: {}\nServer Temp Key: {}\n",
            self.protocol, self.cipher, self.server_temp_key
        )
    }
}

fn protocol(version: ProtocolVersion) -> String {
    match version {
        ProtocolVersion::TLSv1_3 => "TLSv1.3".into(),
        ProtocolVersion::TLSv1_2 => "TLSv1.2".into(),
        other => format!("{other:?}"),
    }
}

/// TLS 1.3's suites keep their IANA names in OpenSSL; TLS 1.2's take
/// OpenSSL's own.
fn cipher(suite: CipherSuite) -> String {
    let openssl = match suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => {
            "ECDHE-ECDSA-CHACHA20-POLY1305"
        }
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256",
        CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384",
        CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305",
        other => return format!("{other:?}"),
    };
    openssl.into()
}

/// OpenSSL's `Server Temp Key:` wording: the key type, the curve for
/// ECDH by OpenSSL's short name (`prime256v1`, not NIST's `P-256`, as
/// h2load prints it with OpenSSL 3), and the key's bits.
fn temp_key(group: NamedGroup) -> String {
    let known = match group {
        NamedGroup::X25519 => "X25519 253 bits",
        NamedGroup::X448 => "X448 448 bits",
        NamedGroup::secp256r1 => "ECDH prime256v1 256 bits",
        NamedGroup::secp384r1 => "ECDH secp384r1 384 bits",
        NamedGroup::secp521r1 => "ECDH secp521r1 521 bits",
        other => return format!("{other:?}"),
    };
    known.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_as_h2load_names_them() {
        let info = TlsInfo {
            alpn: Some(b"h2".to_vec()),
            server_name: None,
            version: Some(ProtocolVersion::TLSv1_3),
            cipher_suite: Some(CipherSuite::TLS13_AES_128_GCM_SHA256),
            key_exchange: Some(NamedGroup::X25519),
            peer_certificates: Vec::new(),
        };
        assert_eq!(
            Tls::from_info(&info).lines(),
            "TLS Protocol: TLSv1.3\nCipher: TLS_AES_128_GCM_SHA256\nServer Temp Key: X25519 253 bits\n"
        );
        assert_eq!(
            cipher(CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
            "ECDHE-RSA-AES128-GCM-SHA256"
        );
        // h2load 1.x on OpenSSL 3 against `openssl s_server -groups P-256`
        // (and P-384, P-521) prints these.
        assert_eq!(temp_key(NamedGroup::secp256r1), "ECDH prime256v1 256 bits");
        assert_eq!(temp_key(NamedGroup::secp384r1), "ECDH secp384r1 384 bits");
        assert_eq!(temp_key(NamedGroup::secp521r1), "ECDH secp521r1 521 bits");
        assert_eq!(protocol(ProtocolVersion::TLSv1_2), "TLSv1.2");
    }
}
