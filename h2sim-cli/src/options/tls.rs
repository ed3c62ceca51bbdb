//! `-k KEY -c CERT -V VERIFY`: TLS material and peer verification, in
//! h2simple's vocabulary, and the rustls configurations built from them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use h2sim_proto::host::tls::{
    self, Certified, ClientAuth, ClientTls, Identity, Revocation, ServerTls, ServerVerification,
    TlsError, Trust,
};

use super::{UsageError, usage};
use crate::trace::errln;

/// How the peer's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VerifyMode {
    /// `none`: no check (the default, as in h2simple).
    #[default]
    None,
    /// `verify` (alias `peer`): a bad certificate fails the handshake.
    Verify,
    /// `pass`: verify and log the outcome, but accept anyway.
    Pass,
}

/// The parsed `-V` value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verify {
    pub mode: VerifyMode,
    pub trust_file: Option<PathBuf>,
    pub trust_dir: Option<PathBuf>,
    /// `crl`: check the end certificate against CRLs found with the trust anchors.
    pub crl: bool,
    /// `crl_all`: check every certificate of the chain.
    pub crl_all: bool,
    /// `purpose`: h2simple's token for the check that the certificate is
    /// meant for its use (its extended key usage allows server or client
    /// authentication). Every verification here makes that check (rustls's
    /// webpki, as OpenSSL by default), and none should skip it: a
    /// certificate issued for another use does not authenticate this one.
    /// So the token changes nothing, and is accepted because h2simple's
    /// command lines are h2sim's; under mode none it is pointed out, as
    /// the trust settings are.
    pub purpose: bool,
}

impl Verify {
    /// Parses comma-separated tokens: `none`, `verify`/`peer`, `pass`,
    /// `trust_file=PEM`, `trust_dir=DIR`, `crl`, `crl_all`, `purpose`.
    ///
    /// The mode is `none` unless `verify`, `peer` or `pass` is given (as in
    /// h2simple), so trust settings without one verify nothing: that is
    /// said once, on stderr. Two different modes are an error rather than
    /// the last one silently winning.
    pub fn parse(spec: &str) -> Result<Verify, UsageError> {
        let mut v = Verify::default();
        let mut mode: Option<(&str, VerifyMode)> = None;
        let mut set_mode = |token, wanted| match mode {
            Some((first, had)) if had != wanted => Err(usage(format!(
                "-V {spec}: the modes {first} and {token} conflict (give one of none, verify, pass)"
            ))),
            _ => {
                mode = Some((token, wanted));
                Ok(wanted)
            }
        };
        for token in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            match token.split_once('=') {
                Some(("trust_file", path)) if !path.is_empty() => v.trust_file = Some(path.into()),
                Some(("trust_dir", path)) if !path.is_empty() => v.trust_dir = Some(path.into()),
                None if token == "none" => v.mode = set_mode(token, VerifyMode::None)?,
                None if token == "verify" || token == "peer" => {
                    v.mode = set_mode(token, VerifyMode::Verify)?;
                }
                None if token == "pass" => v.mode = set_mode(token, VerifyMode::Pass)?,
                None if token == "crl" => v.crl = true,
                None if token == "crl_all" => v.crl_all = true,
                None if token == "purpose" => v.purpose = true,
                _ => {
                    return Err(usage(format!(
                        "-V {spec:?}: unknown token {token:?} (none, verify, peer, pass, trust_file=PEM, trust_dir=DIR, crl, crl_all, purpose)"
                    )));
                }
            }
        }
        // Verification without trust_file or trust_dir uses the system's
        // trust store (see `trust`).
        if let Some(warning) = v.unused() {
            errln!("h2sim: -V {spec}: {warning}");
        }
        Ok(v)
    }

    /// The settings given that mode `none` does not use, and what to do.
    fn unused(&self) -> Option<String> {
        if self.mode != VerifyMode::None {
            return None;
        }
        let given: Vec<&str> = [
            ("trust_file", self.trust_file.is_some()),
            ("trust_dir", self.trust_dir.is_some()),
            ("crl", self.crl),
            ("crl_all", self.crl_all),
            ("purpose", self.purpose),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect();
        (!given.is_empty()).then(|| {
            format!(
                "{} given but the mode is none: the peer is not verified; add verify (or pass)",
                given.join(", ")
            )
        })
    }

    /// The trust paths taken from `dir` when relative.
    pub fn relative_to(mut self, dir: &Path) -> Verify {
        self.trust_file = self.trust_file.map(|p| dir.join(p));
        self.trust_dir = self.trust_dir.map(|p| dir.join(p));
        self
    }
}

/// Key, certificate and verification for one side of TLS.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsFiles {
    pub key: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub verify: Verify,
    /// No key and certificate files: generate a throw-away self-signed
    /// certificate for these names at start (an https listener given no
    /// `-k`/`-c` and finding no `eckey.pem`/`eccert.pem`).
    pub self_signed_for: Vec<String>,
}

/// The trust anchors `-V` names; none named means the system's store.
fn trust(verify: &Verify) -> Trust {
    Trust {
        file: verify.trust_file.clone(),
        dir: verify.trust_dir.clone(),
        crls: Vec::new(),
        revocation: if verify.crl_all {
            Revocation::FullChain
        } else if verify.crl {
            Revocation::EndEntity
        } else {
            Revocation::Off
        },
        system_roots: verify.trust_file.is_none() && verify.trust_dir.is_none(),
    }
}

/// `-V pass`'s line for a certificate it accepted anyway, on standard
/// error through the output queue, as every other line of ours.
fn pass_notice() -> tls::PassNotice {
    tls::PassNotice::new(|accepted| errln!("h2sim: TLS: {accepted}; accepted anyway (pass)"))
}

/// A listener's TLS configuration: its files, or a generated certificate.
pub fn server_tls_files(files: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, UsageError> {
    let client_auth = match files.verify.mode {
        VerifyMode::None => ClientAuth::None,
        VerifyMode::Verify => ClientAuth::Required(trust(&files.verify)),
        VerifyMode::Pass => ClientAuth::Pass(trust(&files.verify), pass_notice()),
    };
    let versions = tls::TlsVersions::default();
    let config = match (&files.key, &files.cert) {
        // Built from the files, so that an error names them.
        (Some(key), Some(cert)) => tls::server_config(&ServerTls {
            identity: Identity {
                chain: cert.clone(),
                key: key.clone(),
            },
            client_auth,
            versions,
        }),
        _ if !files.self_signed_for.is_empty() => {
            errln!(
                "h2sim: no -k/-c and no ./eckey.pem, ./eccert.pem: using a throw-away self-signed certificate for {}",
                files.self_signed_for.join(", ")
            );
            Certified::self_signed(&files.self_signed_for)
                .and_then(|identity| tls::server_config_for(identity, &client_auth, versions))
        }
        _ => return Err(usage("an https listener needs -k KEY and -c CERT")),
    };
    config.map_err(|e| by_flag(&e, files))
}

/// The client's TLS configuration.
pub fn client_tls(files: &TlsFiles) -> Result<Arc<rustls::ClientConfig>, UsageError> {
    let verification = match files.verify.mode {
        VerifyMode::None => ServerVerification::Off,
        VerifyMode::Verify => ServerVerification::Verify(trust(&files.verify)),
        VerifyMode::Pass => ServerVerification::Pass(trust(&files.verify), pass_notice()),
    };
    let identity = match (&files.key, &files.cert) {
        (Some(key), Some(cert)) => Some(Identity {
            chain: cert.clone(),
            key: key.clone(),
        }),
        _ => None,
    };
    let config = ClientTls {
        verification,
        identity,
        versions: tls::TlsVersions::default(),
    };
    tls::client_config(&config).map_err(|e| by_flag(&e, files))
}

/// A TLS error named by the flag whose file it is about: `-k`, `-c`, or
/// `-V`'s trust files (the error names the file, which left a user to
/// work out which flag gave it).
fn by_flag(error: &TlsError, files: &TlsFiles) -> UsageError {
    let (is_key, is_cert) = (
        |path: &PathBuf| files.key.as_ref() == Some(path),
        |path: &PathBuf| files.cert.as_ref() == Some(path),
    );
    // The certificates are read before the key: a file given to both
    // that cannot be read is told as -c's. An error about one file begins
    // with its name, after which the flag goes; others get a colon.
    let flag = match error {
        TlsError::KeyMismatch { .. } => "-k/-c:",
        TlsError::NoCertificate { path } | TlsError::Pem { path, .. } if is_cert(path) => "-c",
        TlsError::NoPrivateKey { path }
        | TlsError::EncryptedKey { path }
        | TlsError::Pem { path, .. }
            if is_key(path) =>
        {
            "-k"
        }
        TlsError::NoCertificate { .. } | TlsError::Pem { .. } | TlsError::Dir { .. } => "-V",
        TlsError::NoTrustAnchors | TlsError::NoCrl | TlsError::BadTrustAnchor { .. } => "-V:",
        _ => return usage(error.to_string()),
    };
    usage(format!("{flag} {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h2simple_tokens() {
        let v = Verify::parse("verify,trust_dir=certs,crl,crl_all,purpose").unwrap();
        assert_eq!(v.mode, VerifyMode::Verify);
        assert_eq!(v.trust_dir, Some("certs".into()));
        assert!(v.crl && v.crl_all && v.purpose);
        assert_eq!(
            Verify::parse("peer,trust_file=ca.pem").unwrap().mode,
            VerifyMode::Verify
        );
        assert_eq!(Verify::parse("none").unwrap(), Verify::default());
        // Issue 10 item 8: no trust_file/trust_dir means the system's store.
        let system = Verify::parse("verify").unwrap();
        assert_eq!(system.mode, VerifyMode::Verify);
        assert!(trust(&system).system_roots);
        assert!(!trust(&v).system_roots);
        assert!(Verify::parse("bogus").is_err());
        assert!(Verify::parse("trust_file=").is_err());
    }

    /// h2simple's semantics stay (the mode is none unless named), but trust
    /// settings that mode ignores are pointed out.
    #[test]
    fn trust_without_a_mode_is_pointed_out() {
        let v = Verify::parse("trust_file=ca.crt,crl").unwrap();
        assert_eq!(v.mode, VerifyMode::None);
        assert_eq!(
            v.unused().unwrap(),
            "trust_file, crl given but the mode is none: the peer is not verified; \
             add verify (or pass)"
        );
        assert_eq!(
            Verify::parse("verify,trust_file=ca.crt").unwrap().unused(),
            None
        );
        assert_eq!(
            Verify::parse("pass,trust_dir=certs").unwrap().unused(),
            None
        );
        assert_eq!(Verify::parse("none").unwrap().unused(), None);
        // `purpose` asks for a check that only verification makes.
        assert_eq!(
            Verify::parse("purpose").unwrap().unused().unwrap(),
            "purpose given but the mode is none: the peer is not verified; add verify (or pass)"
        );
    }

    /// Two different modes are a bad option, not the last one winning;
    /// `verify` and its alias `peer` are one mode.
    #[test]
    fn conflicting_modes_are_refused() {
        for spec in ["none,verify", "verify,pass", "pass,none", "peer,none"] {
            let err = Verify::parse(spec).unwrap_err().to_string();
            assert!(err.contains("conflict"), "{spec}: {err}");
            assert!(err.contains(spec), "{spec}: {err}");
        }
        assert_eq!(
            Verify::parse("verify,peer").unwrap().mode,
            VerifyMode::Verify
        );
    }

    /// A TLS file that cannot be used is named with its flag: the line
    /// named the file alone.
    #[test]
    fn tls_file_errors_name_their_flag() {
        let certs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../certs");
        let files = |key: &str, cert: &str| TlsFiles {
            key: Some(certs.join(key)),
            cert: Some(certs.join(cert)),
            ..TlsFiles::default()
        };
        for ((key, cert), flag) in [
            (("client-ec.key", "missing.crt"), "-c "),
            (("missing.key", "client-ec.crt"), "-k "),
            (("client-ec.crt", "client-ec.crt"), "-k "),
            (("client-ec.key", "client-ec.key"), "-c "),
            (("client-rsa.key", "client-ec.crt"), "-k/-c: "),
        ] {
            let error = client_tls(&files(key, cert)).unwrap_err().0;
            assert!(error.starts_with(flag), "{key} {cert}: {error}");
        }
    }
}
