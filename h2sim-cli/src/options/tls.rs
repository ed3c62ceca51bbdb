//! `-k KEY -c CERT -V VERIFY`: TLS material and peer verification, in
//! h2simple's vocabulary.

use std::path::PathBuf;

use super::{UsageError, usage};

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
    /// `purpose`: the certificate must be meant for its use (server or client auth).
    pub purpose: bool,
}

impl Verify {
    /// Parses comma-separated tokens: `none`, `verify`/`peer`, `pass`,
    /// `trust_file=PEM`, `trust_dir=DIR`, `crl`, `crl_all`, `purpose`.
    pub fn parse(spec: &str) -> Result<Verify, UsageError> {
        let mut v = Verify::default();
        for token in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            match token.split_once('=') {
                Some(("trust_file", path)) if !path.is_empty() => v.trust_file = Some(path.into()),
                Some(("trust_dir", path)) if !path.is_empty() => v.trust_dir = Some(path.into()),
                None if token == "none" => v.mode = VerifyMode::None,
                None if token == "verify" || token == "peer" => v.mode = VerifyMode::Verify,
                None if token == "pass" => v.mode = VerifyMode::Pass,
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
        if v.mode != VerifyMode::None && v.trust_file.is_none() && v.trust_dir.is_none() {
            return Err(usage(format!(
                "-V {spec:?}: verification needs trust_file=PEM or trust_dir=DIR"
            )));
        }
        Ok(v)
    }
}

/// Key, certificate and verification for one side of TLS.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsFiles {
    pub key: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub verify: Verify,
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
        assert!(Verify::parse("verify").is_err(), "no trust anchors");
        assert!(Verify::parse("bogus").is_err());
        assert!(Verify::parse("trust_file=").is_err());
    }
}
