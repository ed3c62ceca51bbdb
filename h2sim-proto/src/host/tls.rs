//! TLS with rustls and its `ring` provider: PEM loading, trust stores with
//! CRLs, and the server and client configurations the listeners and
//! connectors use. Behind the `tls` feature: the protocol state machine
//! never sees TLS; a host drives rustls over its sockets and hands the
//! core the plaintext, and these builders are the same for every runtime.
//!
//! Both TLS 1.3 (preferred whenever the peer has it) and TLS 1.2 are on by
//! default, because 3GPP TS 33.210 §6.2 requires both. The `ring` provider's
//! suites are what the profile asks for: TLS 1.3's AES-GCM and ChaCha20
//! suites, and for TLS 1.2 the ECDHE suites with AES-GCM (and ChaCha20-Poly1305);
//! the profile's DHE suites are not in rustls. Key exchange includes
//! secp384r1, which the profile recommends. A client offers AES-128-GCM
//! first (see `suite_rank`).

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
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme, SupportedCipherSuite};
use rustls_pki_types::pem::{self, PemObject, SectionKind};
use rustls_pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime,
};

use super::info::{ALPN_H2, ALPN_HTTP1, ALPN_HTTP10};

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
    /// Only the peer's own (end-entity) certificate must be covered by a CRL
    /// and not revoked.
    EndEntity,
    /// Every certificate of the chain below the trust anchor is checked.
    FullChain,
}

/// The certificates (and CRLs) a peer's chain is verified against.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// A PEM file with one or more CA certificates (and possibly CRLs).
    pub file: Option<PathBuf>,
    /// A directory whose PEM files hold CA certificates and CRLs, such as
    /// OpenSSL's hashed layout (`*.0`, `*.r0`); other files are ignored.
    pub dir: Option<PathBuf>,
    /// More CRL files (PEM).
    pub crls: Vec<PathBuf>,
    /// Also the operating system's trust store (rustls-native-certs), as a
    /// browser or curl would use: for a client that verifies a server with
    /// a publicly issued certificate and was given no trust file.
    pub system_roots: bool,
    /// With `Revocation::Off` the CRLs found are not consulted at all (a
    /// trust directory usually holds some).
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

impl Identity {
    /// Reads the chain and key files.
    pub fn load(&self) -> Result<Certified, TlsError> {
        Ok(Certified {
            chain: load_certs(&self.chain)?,
            key: load_key(&self.key)?,
        })
    }

    /// `error` from building a configuration with this identity, with a
    /// key that does not match its certificate told by the two files:
    /// rustls says only `keys may not be consistent: KeyMismatch`.
    fn named(&self, error: TlsError) -> TlsError {
        use rustls::{Error, InconsistentKeys};
        match error {
            TlsError::Config(Error::InconsistentKeys(InconsistentKeys::KeyMismatch)) => {
                TlsError::KeyMismatch {
                    key: self.key.clone(),
                    chain: self.chain.clone(),
                }
            }
            error => error,
        }
    }
}

/// A certificate chain and its key in memory: read from an [`Identity`],
/// or generated with [`Certified::self_signed`].
#[derive(Debug)]
pub struct Certified {
    /// The end-entity certificate first, then intermediates.
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

impl Certified {
    /// A throw-away self-signed ECDSA P-256 certificate for `names` (host
    /// names or IP addresses, which become IP subject alternative names):
    /// lets an https listener start with no files, for clients that do not
    /// verify (h2sim's and h2simple's default) or that are told to trust it.
    pub fn self_signed(names: &[String]) -> Result<Certified, TlsError> {
        let generated =
            rcgen::generate_simple_self_signed(names.to_vec()).map_err(TlsError::Generate)?;
        let key = PrivateKeyDer::Pkcs8(generated.signing_key.serialize_der().into());
        Ok(Certified {
            chain: vec![generated.cert.der().clone()],
            key,
        })
    }

    /// Reads a chain and a key from PEM text (certificates built into a
    /// program, for example).
    pub fn from_pem(chain: &[u8], key: &[u8]) -> Result<Certified, TlsError> {
        let pem_error = |error| TlsError::Pem {
            path: PathBuf::from("(in memory)"),
            error,
        };
        let chain = CertificateDer::pem_slice_iter(chain)
            .collect::<Result<Vec<_>, _>>()
            .map_err(pem_error)?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate {
                path: PathBuf::from("(in memory)"),
            });
        }
        let key = PrivateKeyDer::from_pem_slice(key).map_err(pem_error)?;
        Ok(Certified { chain, key })
    }
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
    /// Verified, and a failure told to the [`PassNotice`], but every
    /// client is accepted: h2simple's `-V pass`, for finding out what a
    /// peer presents.
    Pass(Trust, PassNotice),
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
    /// Verified against `Trust`, and a failure told to the
    /// [`PassNotice`], but accepted anyway (h2simple's `-V pass`).
    Pass(Trust, PassNotice),
    /// Anything is accepted (the handshake signature is still checked):
    /// only for test servers with throwaway certificates.
    Off,
}

/// A peer certificate `-V pass` accepted although it did not verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedAnyway {
    /// The name a client asked for, when it was a server's certificate.
    pub server_name: Option<String>,
    /// Why it did not verify, in plain words (see [`plain_words`]).
    pub why: String,
}

impl fmt::Display for AcceptedAnyway {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.server_name {
            Some(name) => write!(f, "{name}: {}", self.why),
            None => f.write_str(&self.why),
        }
    }
}

/// Where `-V pass` tells what it accepted anyway: the host's, which says
/// it in its own output. The core prints nothing itself: a line written
/// past the host (an `eprintln!` from a handshake) landed in the middle of
/// its progress bar and of the lines it queues. Called from the handshake,
/// on whichever thread drives it, so it should only hand the line over.
#[derive(Clone)]
pub struct PassNotice(Arc<dyn Fn(AcceptedAnyway) + Send + Sync>);

impl PassNotice {
    pub fn new(notice: impl Fn(AcceptedAnyway) + Send + Sync + 'static) -> Self {
        PassNotice(Arc::new(notice))
    }
}

impl fmt::Debug for PassNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PassNotice")
    }
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
    /// The key file holds an encrypted key (PKCS#8 `ENCRYPTED PRIVATE
    /// KEY`, or a legacy PEM key with `Proc-Type: 4,ENCRYPTED`): there is
    /// no way to give a passphrase, so it must be decrypted beforehand.
    EncryptedKey {
        path: PathBuf,
    },
    /// The private key in `key` is not the one of the certificate that
    /// begins `chain` (rustls's `KeyMismatch`).
    KeyMismatch {
        key: PathBuf,
        chain: PathBuf,
    },
    /// The trust settings name no CA certificate at all.
    NoTrustAnchors,
    /// Revocation checking was asked for but no CRL was found.
    NoCrl,
    /// A self-signed certificate could not be generated.
    Generate(rcgen::Error),
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
            TlsError::EncryptedKey { path } => write!(
                f,
                "{0}: the private key is encrypted, which is not supported: decrypt it \
                 with `openssl pkey -in {0} -out KEYFILE`",
                path.display()
            ),
            TlsError::KeyMismatch { key, chain } => write!(
                f,
                "the key in {} does not match the certificate in {}",
                key.display(),
                chain.display()
            ),
            TlsError::NoTrustAnchors => {
                f.write_str("no CA certificate found in the trust file or directory")
            }
            TlsError::NoCrl => {
                f.write_str("revocation checking is on but no CRL was found in the trust settings")
            }
            TlsError::Generate(e) => write!(f, "generating a self-signed certificate: {e}"),
            TlsError::BadTrustAnchor { error } => write!(f, "unusable CA certificate: {error}"),
            TlsError::Verifier(e) => write!(f, "certificate verifier: {e}"),
            TlsError::Config(e) => write!(f, "TLS configuration: {e}"),
        }
    }
}

impl std::error::Error for TlsError {}

/// A TLS error as a person reads it, `peer` ("server" or "client") being
/// whose certificate or answer it concerns. rustls's Display shows the
/// common failures in their Debug form (`invalid peer certificate:
/// Other(OtherError(CaUsedAsEndEntity))`, `received corrupt message of
/// type InvalidContentType`): those get plain words, with rustls's name
/// in parentheses for searching; the rest stay as rustls says them.
pub fn plain_words(error: &rustls::Error, peer: &str) -> String {
    use rustls::CertificateError as C;
    use rustls::{Error as E, InvalidMessage};
    let cert = |what: &str, code: &str| format!("the {peer}'s certificate {what} ({code})");
    match error {
        E::InvalidCertificate(C::UnknownIssuer) => {
            cert("is not signed by a trusted CA", "UnknownIssuer")
        }
        E::InvalidCertificate(C::NotValidForNameContext {
            expected,
            presented,
        }) => {
            let names = match presented.as_slice() {
                [] => "none".to_owned(),
                names => names
                    .iter()
                    .map(|n| presented_name(n))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let what = format!(
                "is not valid for {}, the name dialled: it names {names}",
                expected.to_str()
            );
            cert(&what, "NotValidForName")
        }
        E::InvalidCertificate(C::NotValidForName) => {
            cert("is not valid for the name dialled", "NotValidForName")
        }
        E::InvalidCertificate(C::Expired | C::ExpiredContext { .. }) => {
            cert("has expired", "Expired")
        }
        E::InvalidCertificate(C::NotValidYet | C::NotValidYetContext { .. }) => {
            cert("is not valid yet (is a clock wrong?)", "NotValidYet")
        }
        E::InvalidCertificate(C::Revoked) => cert("is revoked by a CRL", "Revoked"),
        E::InvalidCertificate(C::Other(other))
            if matches!(
                other.0.downcast_ref::<webpki::Error>(),
                Some(webpki::Error::CaUsedAsEndEntity)
            ) =>
        {
            let what = format!("is a CA's: the {peer} must present one the CA issued to it");
            cert(&what, "CaUsedAsEndEntity")
        }
        E::InvalidMessage(InvalidMessage::InvalidContentType) => {
            format!("the {peer} did not answer in TLS (a plain http:// port?)")
        }
        other => other.to_string(),
    }
}

/// A name rustls presents in its Debug form (`DnsName("localhost")`,
/// `IpAddress(127.0.0.1)`) as it was written in the certificate.
fn presented_name(debug: &str) -> &str {
    let inner = debug
        .strip_prefix("DnsName(\"")
        .and_then(|n| n.strip_suffix("\")"))
        .or_else(|| {
            debug
                .strip_prefix("IpAddress(")
                .and_then(|n| n.strip_suffix(')'))
        });
    inner.unwrap_or(debug)
}

/// The ring provider with every suite it has: all of them are in the 3GPP
/// profile (see the module docs), so there is nothing to remove. They are
/// offered in [`suite_rank`]'s order; a server takes the client's order.
fn provider() -> Arc<CryptoProvider> {
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites.sort_by_key(suite_rank);
    Arc::new(provider)
}

/// Where a suite stands in what a client offers: TLS 1.3 before 1.2, and
/// within each AES-128-GCM, then AES-256-GCM, then ChaCha20-Poly1305 (the
/// sort is stable, so ECDSA stays before RSA). ring lists AES-256 first;
/// AES-128-GCM is the suite every TLS 1.3 stack must have (RFC 8446 §9.1)
/// and one TS 33.210 requires, and it takes 10 AES rounds where AES-256
/// takes 14: an h2sim pair spends 3-6% less CPU per request on 4 KiB
/// bodies over TLS.
fn suite_rank(suite: &SupportedCipherSuite) -> (u8, u8) {
    use rustls::CipherSuite as S;
    let version = match suite {
        SupportedCipherSuite::Tls13(_) => 0,
        SupportedCipherSuite::Tls12(_) => 1,
    };
    let cipher = match suite.suite() {
        S::TLS13_AES_128_GCM_SHA256
        | S::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
        | S::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => 0,
        S::TLS13_AES_256_GCM_SHA384
        | S::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
        | S::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => 1,
        _ => 2,
    };
    (version, cipher)
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

/// The first private key in a PEM file. One that is there but encrypted
/// is told apart from none at all, since rustls reads past it unseen.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|error| {
        let encrypted = std::fs::read_to_string(path).is_ok_and(|text| {
            text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
                || text.contains("Proc-Type: 4,ENCRYPTED")
        });
        let path = path.to_owned();
        match error {
            _ if encrypted => TlsError::EncryptedKey { path },
            pem::Error::NoItemsFound => TlsError::NoPrivateKey { path },
            error => TlsError::Pem { path, error },
        }
    })
}

/// CA certificates and CRLs gathered from a [`Trust`].
#[derive(Debug)]
struct Loaded {
    roots: RootCertStore,
    crls: Vec<CertificateRevocationListDer<'static>>,
}

impl Trust {
    /// Reads every file the trust settings name.
    fn load(&self) -> Result<Loaded, TlsError> {
        let mut loaded = Loaded {
            roots: RootCertStore::empty(),
            crls: Vec::new(),
        };
        if let Some(file) = &self.file {
            loaded.add_file(file)?;
        }
        if let Some(dir) = &self.dir {
            let dir_error = |error| TlsError::Dir {
                path: dir.clone(),
                error,
            };
            let mut paths = Vec::new();
            for entry in std::fs::read_dir(dir).map_err(dir_error)? {
                let path = entry.map_err(dir_error)?.path();
                if path.is_file() {
                    paths.push(path);
                }
            }
            // The same CA may sit there twice (`ca.crt` and its hash link):
            // adding it twice is harmless, and sorting keeps errors stable.
            paths.sort();
            for path in paths {
                loaded.add_file(&path)?;
            }
        }
        for crl in &self.crls {
            loaded.add_file(crl)?;
        }
        if self.system_roots {
            // A store with some unreadable entries is still useful; with
            // none readable, the NoTrustAnchors below says so.
            let native = rustls_native_certs::load_native_certs();
            loaded.roots.add_parsable_certificates(native.certs);
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
    /// Takes the certificates and CRLs of one PEM file; other sections (a
    /// key that happens to be there) are ignored.
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
    server_config_for(tls.identity.load()?, &tls.client_auth, tls.versions)
        .map_err(|e| tls.identity.named(e))
}

/// [`server_config`] with the identity already in memory (a generated or
/// built-in certificate).
pub fn server_config_for(
    identity: Certified,
    client_auth: &ClientAuth,
    versions: TlsVersions,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = provider();
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions.list())
        .map_err(TlsError::Config)?;
    let builder = match client_auth {
        ClientAuth::None => builder.with_no_client_auth(),
        ClientAuth::Optional(trust) | ClientAuth::Required(trust) | ClientAuth::Pass(trust, _) => {
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
            if !matches!(client_auth, ClientAuth::Required(_)) {
                verifier = verifier.allow_unauthenticated();
            }
            let verifier = verifier.build().map_err(TlsError::Verifier)?;
            match client_auth {
                ClientAuth::Pass(_, notice) => builder
                    .with_client_cert_verifier(Arc::new(PassClient(verifier, notice.clone()))),
                _ => builder.with_client_cert_verifier(verifier),
            }
        }
    };
    let mut config = builder
        .with_single_cert(identity.chain, identity.key)
        .map_err(TlsError::Config)?;
    config.alpn_protocols = vec![ALPN_H2.to_vec(), ALPN_HTTP1.to_vec(), ALPN_HTTP10.to_vec()];
    Ok(Arc::new(config))
}

/// A rustls client configuration; the connector sets ALPN per connection
/// kind (see `client::Protocol`).
pub fn client_config(tls: &ClientTls) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let provider = provider();
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(tls.versions.list())
        .map_err(TlsError::Config)?;
    let builder = match &tls.verification {
        ServerVerification::Verify(trust) => {
            builder.with_webpki_verifier(server_verifier(trust, provider.clone())?)
        }
        ServerVerification::Pass(trust, notice) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(PassServer(
                server_verifier(trust, provider.clone())?,
                notice.clone(),
            ))),
        ServerVerification::Off => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification {
                algorithms: provider.signature_verification_algorithms,
            })),
    };
    let config = match &tls.identity {
        Some(identity) => builder
            .with_client_auth_cert(load_certs(&identity.chain)?, load_key(&identity.key)?)
            .map_err(|e| identity.named(TlsError::Config(e)))?,
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
/// told to the notice, then accepted; handshake signatures are still
/// checked.
#[derive(Debug)]
struct PassServer(Arc<WebPkiServerVerifier>, PassNotice);

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
            (self.1.0)(AcceptedAnyway {
                server_name: Some(server_name.to_str().into_owned()),
                why: plain_words(e, "server"),
            });
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
/// told to the notice, then accepted; so is a client without one.
#[derive(Debug)]
struct PassClient(Arc<dyn ClientCertVerifier>, PassNotice);

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
            (self.1.0)(AcceptedAnyway {
                server_name: None,
                why: plain_words(&e, "client"),
            });
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

/// Accepts any server certificate, for `ServerVerification::Off`. The
/// handshake signatures are still verified, so the connection is at least
/// with whoever holds the presented key.
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

    fn trust_dir(revocation: Revocation) -> Trust {
        Trust {
            dir: Some(certs().join("trust")),
            revocation,
            ..Trust::default()
        }
    }

    #[test]
    fn loads_ec_and_rsa_identities() {
        for name in ["server-ec", "server-rsa"] {
            let tls = ServerTls {
                identity: Identity {
                    chain: certs().join(format!("{name}.crt")),
                    key: certs().join(format!("{name}.key")),
                },
                client_auth: ClientAuth::Required(trust_dir(Revocation::FullChain)),
                versions: TlsVersions::default(),
            };
            let config = server_config(&tls).unwrap();
            assert_eq!(
                config.alpn_protocols,
                [b"h2".to_vec(), b"http/1.1".to_vec(), b"http/1.0".to_vec()]
            );
        }
    }

    #[test]
    fn self_signed_identity_serves_its_names() {
        let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let identity = Certified::self_signed(&names).unwrap();
        assert_eq!(identity.chain.len(), 1);
        let config =
            server_config_for(identity, &ClientAuth::None, TlsVersions::default()).unwrap();
        assert_eq!(config.alpn_protocols.len(), 3);
    }

    #[test]
    fn pem_in_memory_matches_the_files() {
        let chain = std::fs::read(certs().join("server-ec.crt")).unwrap();
        let key = std::fs::read(certs().join("server-ec.key")).unwrap();
        let from_memory = Certified::from_pem(&chain, &key).unwrap();
        let from_files = Identity {
            chain: certs().join("server-ec.crt"),
            key: certs().join("server-ec.key"),
        }
        .load()
        .unwrap();
        assert_eq!(from_memory.chain, from_files.chain);
        assert!(Certified::from_pem(b"", &key).is_err());
    }

    /// The machine's trust store (ca-certificates here) is read when asked for.
    #[test]
    fn system_roots_are_loaded() {
        let trust = Trust {
            system_roots: true,
            ..Trust::default()
        };
        assert!(!trust.load().unwrap().roots.is_empty());
    }

    #[test]
    fn trust_dir_has_ca_and_crl() {
        let loaded = trust_dir(Revocation::EndEntity).load().unwrap();
        assert!(!loaded.roots.is_empty());
        assert!(!loaded.crls.is_empty());
    }

    #[test]
    fn revocation_without_crl_is_refused() {
        let trust = Trust {
            file: Some(certs().join("ca.crt")),
            revocation: Revocation::EndEntity,
            ..Trust::default()
        };
        assert!(matches!(trust.load(), Err(TlsError::NoCrl)));
        let trust = Trust {
            crls: vec![certs().join("ca.crl")],
            ..trust
        };
        trust.load().unwrap();
    }

    /// The handshake failures one meets most read as plain words with
    /// rustls's name for them; the rest stay as rustls says them. The
    /// certificate checks are RFC 5280 §6.1.3 (validity, issuer) and
    /// RFC 6125 §6 (the name); a peer that answers not in TLS breaks
    /// RFC 8446 §5.1 (the record's content type).
    #[test]
    fn handshake_errors_in_plain_words() {
        use rustls::CertificateError as C;
        use rustls::Error as E;
        let words = |e: E| plain_words(&e, "server");
        assert_eq!(
            words(E::InvalidCertificate(C::UnknownIssuer)),
            "the server's certificate is not signed by a trusted CA (UnknownIssuer)"
        );
        let wrong_name = C::NotValidForNameContext {
            expected: ServerName::try_from("wrong.example").unwrap(),
            presented: vec![
                "DnsName(\"localhost\")".to_owned(),
                "IpAddress(127.0.0.1)".to_owned(),
            ],
        };
        assert_eq!(
            words(E::InvalidCertificate(wrong_name)),
            "the server's certificate is not valid for wrong.example, the name dialled: \
             it names localhost, 127.0.0.1 (NotValidForName)"
        );
        assert_eq!(
            words(E::InvalidCertificate(C::Expired)),
            "the server's certificate has expired (Expired)"
        );
        assert_eq!(
            words(E::InvalidCertificate(C::NotValidYet)),
            "the server's certificate is not valid yet (is a clock wrong?) (NotValidYet)"
        );
        let ca = C::Other(rustls::OtherError(Arc::new(
            webpki::Error::CaUsedAsEndEntity,
        )));
        assert_eq!(
            words(E::InvalidCertificate(ca)),
            "the server's certificate is a CA's: the server must present one the CA \
             issued to it (CaUsedAsEndEntity)"
        );
        assert_eq!(
            words(E::InvalidMessage(
                rustls::InvalidMessage::InvalidContentType
            )),
            "the server did not answer in TLS (a plain http:// port?)"
        );
        let other = E::General("something else".to_owned());
        assert_eq!(words(other.clone()), other.to_string());
    }

    #[test]
    fn missing_and_wrong_files_name_the_file() {
        let err = load_certs(&certs().join("nope.crt")).unwrap_err();
        assert!(err.to_string().contains("nope.crt"), "{err}");
        let err = load_key(&certs().join("ca.crt")).unwrap_err();
        assert!(matches!(err, TlsError::NoPrivateKey { .. }), "{err}");
        let err = Trust::default().load().unwrap_err();
        assert!(matches!(err, TlsError::NoTrustAnchors));
    }

    /// RFC 5280 §4.1.2.7: the certificate carries the public key of the
    /// private key that must go with it; when they differ, both files are
    /// named, on a server as on a client presenting its certificate.
    #[test]
    fn a_key_that_does_not_match_names_both_files() {
        let identity = Identity {
            chain: certs().join("server-ec.crt"),
            key: certs().join("server-rsa.key"),
        };
        let wanted = format!(
            "the key in {} does not match the certificate in {}",
            identity.key.display(),
            identity.chain.display()
        );
        let err = server_config(&ServerTls {
            identity: identity.clone(),
            client_auth: ClientAuth::None,
            versions: TlsVersions::default(),
        })
        .unwrap_err();
        assert_eq!(err.to_string(), wanted);
        let err = client_config(&ClientTls {
            verification: ServerVerification::Off,
            identity: Some(identity),
            versions: TlsVersions::default(),
        })
        .unwrap_err();
        assert_eq!(err.to_string(), wanted);
    }

    /// RFC 5958 §3 (EncryptedPrivateKeyInfo) and RFC 1421's legacy
    /// `Proc-Type: 4,ENCRYPTED`: an encrypted key is named as such, not
    /// as a file without a key.
    #[test]
    fn an_encrypted_key_is_not_a_missing_one() {
        let dir = std::env::temp_dir().join(format!("h2sim-enc-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pkcs8 = dir.join("pkcs8.key");
        std::fs::write(
            &pkcs8,
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGjMF8GCSqGSIb3DQEFDTBSMDEGCSqGSIb3\n\
             -----END ENCRYPTED PRIVATE KEY-----\n",
        )
        .unwrap();
        let legacy = dir.join("legacy.key");
        std::fs::write(
            &legacy,
            "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\
             DEK-Info: AES-256-CBC,0123456789ABCDEF0123456789ABCDEF\n\nAAAA\n\
             -----END EC PRIVATE KEY-----\n",
        )
        .unwrap();
        for path in [pkcs8, legacy] {
            let err = load_key(&path).unwrap_err();
            assert!(matches!(err, TlsError::EncryptedKey { .. }), "{err}");
            assert!(err.to_string().contains("is encrypted"), "{err}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
