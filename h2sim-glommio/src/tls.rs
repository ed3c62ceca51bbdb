//! TLS configurations: rustls with its `ring` provider, TLS 1.3 and 1.2
//! (3GPP TS 33.210 asks for both), ALPN `h2` and `http/1.1`, certificates
//! and keys from PEM files, trust stores with CRLs.
//!
//! The public types are the tokio adapter's (`h2sim_tokio::tls`), so a
//! front end builds the same settings for either runtime. Nothing here
//! depends on a runtime; it lives in this crate only until both adapters
//! share one copy.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::DistinguishedName;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::{self, PemObject, SectionKind};
use rustls_pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime,
};

/// ALPN identifiers, in our order of preference.
pub(crate) const ALPN_H2: &[u8] = b"h2";
pub(crate) const ALPN_HTTP1: &[u8] = b"http/1.1";

/// Which TLS versions a configuration accepts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TlsVersions {
    /// TLS 1.3, falling back to TLS 1.2 for a peer without it.
    #[default]
    Tls12And13,
    Tls13Only,
    Tls12Only,
}

impl TlsVersions {
    fn list(self) -> &'static [&'static rustls::SupportedProtocolVersion] {
        static BOTH: [&rustls::SupportedProtocolVersion; 2] =
            [&rustls::version::TLS13, &rustls::version::TLS12];
        static TLS13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
        static TLS12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
        match self {
            TlsVersions::Tls12And13 => &BOTH,
            TlsVersions::Tls13Only => &TLS13,
            TlsVersions::Tls12Only => &TLS12,
        }
    }
}

/// How far revocation is checked against the CRLs of a [`Trust`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Revocation {
    /// CRLs are not consulted.
    #[default]
    Off,
    /// Only the peer's own certificate is checked.
    EndEntity,
    /// Every certificate of the chain below the trust anchor is checked.
    FullChain,
}

/// The certificates (and CRLs) a peer's chain is verified against.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// A PEM file with CA certificates (and possibly CRLs).
    pub file: Option<PathBuf>,
    /// A directory of PEM files (CA certificates, CRLs), such as OpenSSL's
    /// hashed layout; other sections in them are ignored.
    pub dir: Option<PathBuf>,
    /// More CRL files (PEM).
    pub crls: Vec<PathBuf>,
    pub revocation: Revocation,
}

/// A certificate chain and its private key, both PEM files.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The end-entity certificate first, then intermediates.
    pub chain: PathBuf,
    /// PKCS#8, PKCS#1 (RSA) or SEC1 (EC) key.
    pub key: PathBuf,
}

/// Whether a server asks for client certificates.
#[derive(Debug, Clone, Default)]
pub enum ClientAuth {
    #[default]
    None,
    /// Verified when sent; a client without one is still accepted.
    Optional(Trust),
    /// A client without a valid certificate fails the handshake.
    Required(Trust),
    /// Verified, and the outcome logged, but every client is accepted:
    /// h2simple's `-V pass`, for finding out what a peer presents.
    Pass(Trust),
}

/// Everything a TLS listener needs.
#[derive(Debug, Clone)]
pub struct ServerTls {
    pub identity: Identity,
    pub client_auth: ClientAuth,
    pub versions: TlsVersions,
}

/// How a client checks the server.
#[derive(Debug, Clone)]
pub enum ServerVerification {
    /// The chain must lead to `Trust` and name the host we asked for.
    Verify(Trust),
    /// Verified against `Trust`, and a failure logged, but accepted anyway
    /// (h2simple's `-V pass`).
    Pass(Trust),
    /// Any certificate is accepted (the handshake signature is still
    /// checked): only for test servers with throwaway certificates.
    Off,
}

/// Everything a TLS client needs.
#[derive(Debug, Clone)]
pub struct ClientTls {
    pub verification: ServerVerification,
    /// A certificate to present when the server asks for one.
    pub identity: Option<Identity>,
    pub versions: TlsVersions,
}

/// What went wrong building a TLS configuration, with the file concerned.
#[derive(Debug)]
pub enum TlsError {
    /// A file could not be read or is not valid PEM.
    Pem {
        path: PathBuf,
        error: pem::Error,
    },
    /// A directory could not be listed.
    Dir {
        path: PathBuf,
        error: io::Error,
    },
    NoCertificate {
        path: PathBuf,
    },
    NoPrivateKey {
        path: PathBuf,
    },
    /// The trust settings name no CA certificate at all.
    NoTrustAnchors,
    /// Revocation checking was asked for but no CRL was found.
    NoCrl,
    /// A CA certificate rustls cannot use as a trust anchor.
    BadTrustAnchor {
        error: rustls::Error,
    },
    /// The verifier refused the roots or a CRL.
    Verifier(rustls::server::VerifierBuilderError),
    /// rustls refused the configuration (e.g. key and certificate differ).
    Config(rustls::Error),
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsError::Pem { path, error } => write!(f, "{}: {error}", path.display()),
            TlsError::Dir { path, error } => write!(f, "{}: {error}", path.display()),
            TlsError::NoCertificate { path } => {
                write!(f, "{}: no CERTIFICATE in the file", path.display())
            }
            TlsError::NoPrivateKey { path } => {
                write!(f, "{}: no private key in the file", path.display())
            }
            TlsError::NoTrustAnchors => {
                f.write_str("no CA certificate found in the trust file or directory")
            }
            TlsError::NoCrl => {
                f.write_str("revocation checking is on but no CRL was found in the trust settings")
            }
            TlsError::BadTrustAnchor { error } => write!(f, "unusable CA certificate: {error}"),
            TlsError::Verifier(e) => write!(f, "certificate verifier: {e}"),
            TlsError::Config(e) => write!(f, "TLS configuration: {e}"),
        }
    }
}

impl std::error::Error for TlsError {}

/// The ring provider with all its suites, every one in the 3GPP profile.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Every certificate in a PEM file, in order.
pub fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|error| TlsError::Pem {
            path: path.to_owned(),
            error,
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_owned(),
        });
    }
    Ok(certs)
}

/// The first private key in a PEM file.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|error| match error {
        pem::Error::NoItemsFound => TlsError::NoPrivateKey {
            path: path.to_owned(),
        },
        error => TlsError::Pem {
            path: path.to_owned(),
            error,
        },
    })
}

/// CA certificates and CRLs gathered from a [`Trust`].
#[derive(Debug)]
struct Loaded {
    roots: RootCertStore,
    crls: Vec<CertificateRevocationListDer<'static>>,
}

impl Trust {
    fn load(&self) -> Result<Loaded, TlsError> {
        let mut loaded = Loaded {
            roots: RootCertStore::empty(),
            crls: Vec::new(),
        };
        let mut files: Vec<PathBuf> = self.file.iter().cloned().collect();
        if let Some(dir) = &self.dir {
            let dir_error = |error| TlsError::Dir {
                path: dir.clone(),
                error,
            };
            let mut in_dir = Vec::new();
            for entry in std::fs::read_dir(dir).map_err(dir_error)? {
                let path = entry.map_err(dir_error)?.path();
                if path.is_file() {
                    in_dir.push(path);
                }
            }
            // Sorted, so which file an error names does not depend on the
            // directory's order.
            in_dir.sort();
            files.extend(in_dir);
        }
        files.extend(self.crls.iter().cloned());
        for file in &files {
            loaded.add_file(file)?;
        }
        if loaded.roots.is_empty() {
            return Err(TlsError::NoTrustAnchors);
        }
        if self.revocation != Revocation::Off && loaded.crls.is_empty() {
            return Err(TlsError::NoCrl);
        }
        Ok(loaded)
    }
}

impl Loaded {
    /// Takes the certificates and CRLs of one PEM file.
    fn add_file(&mut self, path: &Path) -> Result<(), TlsError> {
        let pem_error = |error| TlsError::Pem {
            path: path.to_owned(),
            error,
        };
        for item in <(SectionKind, Vec<u8>)>::pem_file_iter(path).map_err(pem_error)? {
            match item.map_err(pem_error)? {
                (SectionKind::Certificate, der) => self
                    .roots
                    .add(CertificateDer::from(der))
                    .map_err(|error| TlsError::BadTrustAnchor { error })?,
                (SectionKind::Crl, der) => self.crls.push(CertificateRevocationListDer::from(der)),
                _ => {}
            }
        }
        Ok(())
    }
}

/// A rustls server configuration offering `h2` and `http/1.1` by ALPN.
pub fn server_config(tls: &ServerTls) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = provider();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(tls.versions.list())
        .map_err(TlsError::Config)?;
    let builder = match &tls.client_auth {
        ClientAuth::None => builder.with_no_client_auth(),
        ClientAuth::Optional(trust) | ClientAuth::Required(trust) | ClientAuth::Pass(trust) => {
            let loaded = trust.load()?;
            let mut verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(loaded.roots), provider);
            match trust.revocation {
                Revocation::Off => {}
                Revocation::EndEntity => {
                    verifier = verifier
                        .with_crls(loaded.crls)
                        .only_check_end_entity_revocation();
                }
                Revocation::FullChain => verifier = verifier.with_crls(loaded.crls),
            }
            if !matches!(tls.client_auth, ClientAuth::Required(_)) {
                verifier = verifier.allow_unauthenticated();
            }
            let verifier = verifier.build().map_err(TlsError::Verifier)?;
            if matches!(tls.client_auth, ClientAuth::Pass(_)) {
                builder.with_client_cert_verifier(Arc::new(PassClient(verifier)))
            } else {
                builder.with_client_cert_verifier(verifier)
            }
        }
    };
    let chain = load_certs(&tls.identity.chain)?;
    let key = load_key(&tls.identity.key)?;
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(TlsError::Config)?;
    config.alpn_protocols = vec![ALPN_H2.to_vec(), ALPN_HTTP1.to_vec()];
    Ok(Arc::new(config))
}

/// A rustls client configuration; the connector sets ALPN per
/// [`crate::ClientProtocol`].
pub fn client_config(tls: &ClientTls) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let provider = provider();
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(tls.versions.list())
        .map_err(TlsError::Config)?;
    let builder = match &tls.verification {
        ServerVerification::Verify(trust) => {
            builder.with_webpki_verifier(server_verifier(trust, provider.clone())?)
        }
        ServerVerification::Pass(trust) => {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(PassServer(server_verifier(
                    trust,
                    provider.clone(),
                )?)))
        }
        ServerVerification::Off => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification {
                algorithms: provider.signature_verification_algorithms,
            })),
    };
    let config = match &tls.identity {
        Some(identity) => builder
            .with_client_auth_cert(load_certs(&identity.chain)?, load_key(&identity.key)?)
            .map_err(TlsError::Config)?,
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// The standard verifier of a server's chain against `trust`, with its CRLs.
fn server_verifier(
    trust: &Trust,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, TlsError> {
    let loaded = trust.load()?;
    let mut verifier =
        WebPkiServerVerifier::builder_with_provider(Arc::new(loaded.roots), provider);
    match trust.revocation {
        Revocation::Off => {}
        Revocation::EndEntity => {
            verifier = verifier
                .with_crls(loaded.crls)
                .only_check_end_entity_revocation();
        }
        Revocation::FullChain => verifier = verifier.with_crls(loaded.crls),
    }
    verifier.build().map_err(TlsError::Verifier)
}

/// `-V pass` on a client: the server's chain is verified and a failure
/// logged, then accepted; handshake signatures are still checked.
#[derive(Debug)]
struct PassServer(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for PassServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let outcome =
            self.0
                .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now);
        if let Err(e) = &outcome {
            eprintln!(
                "h2sim: TLS: server certificate of {server_name:?} not valid ({e}); accepted anyway (pass)"
            );
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `-V pass` on a server: a client certificate is verified and a failure
/// logged, then accepted; so is a client without one.
#[derive(Debug)]
struct PassClient(Arc<dyn ClientCertVerifier>);

impl ClientCertVerifier for PassClient {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.0.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if let Err(e) = self.0.verify_client_cert(end_entity, intermediates, now) {
            eprintln!("h2sim: TLS: client certificate not valid ({e}); accepted anyway (pass)");
        }
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// Accepts any server certificate, for [`ServerVerification::Off`]; the
/// handshake signatures are still verified.
#[derive(Debug)]
struct NoVerification {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn certs() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../certs")
    }

    #[test]
    fn builds_server_and_client_configs() {
        let trust = Trust {
            dir: Some(certs().join("trust")),
            revocation: Revocation::FullChain,
            ..Trust::default()
        };
        for name in ["server-ec", "server-rsa"] {
            let config = server_config(&ServerTls {
                identity: Identity {
                    chain: certs().join(format!("{name}.crt")),
                    key: certs().join(format!("{name}.key")),
                },
                client_auth: ClientAuth::Required(trust.clone()),
                versions: TlsVersions::default(),
            })
            .unwrap();
            assert_eq!(
                config.alpn_protocols,
                [b"h2".to_vec(), b"http/1.1".to_vec()]
            );
        }
        client_config(&ClientTls {
            verification: ServerVerification::Verify(trust),
            identity: Some(Identity {
                chain: certs().join("client-ec.crt"),
                key: certs().join("client-ec.key"),
            }),
            versions: TlsVersions::Tls13Only,
        })
        .unwrap();
    }

    #[test]
    fn errors_name_the_file() {
        let err = load_certs(&certs().join("nope.crt")).unwrap_err();
        assert!(err.to_string().contains("nope.crt"), "{err}");
        let err = load_key(&certs().join("ca.crt")).unwrap_err();
        assert!(matches!(err, TlsError::NoPrivateKey { .. }), "{err}");
        assert!(matches!(
            Trust::default().load(),
            Err(TlsError::NoTrustAnchors)
        ));
        let no_crl = Trust {
            file: Some(certs().join("ca.crt")),
            revocation: Revocation::EndEntity,
            ..Trust::default()
        };
        assert!(matches!(no_crl.load(), Err(TlsError::NoCrl)));
    }
}
