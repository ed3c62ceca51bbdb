//! What `h2sim` says when TLS goes wrong at the start of a client run (and
//! for the key files, of a server's): a cleartext client at a TLS port, a
//! certificate that does not verify, a key that is not the certificate's,
//! and `-V` settings that verify nothing or contradict each other.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use server_support::{BIN, Server, certs, run};

/// RFC 9113 §3.2 and RFC 8446 §5.1: `http://` at a TLS port gets a TLS
/// alert for its preface; the run names that, on a `h2sim client:` line.
#[test]
fn http_at_a_tls_port_says_the_server_answered_in_tls() {
    for runtime in ["tokio", "glommio"] {
        let server = Server::tls(runtime, "server-ec.key", "server-ec.crt", &[]);
        let url = server.url("https").replacen("https://", "http://", 1);
        let (code, out) = run(BIN, &["client", "--runtime", runtime, "-q", &url]);
        assert_eq!(code, Some(1), "{runtime}: {out}");
        let cause = out
            .lines()
            .find(|l| l.starts_with(&format!("h2sim client: {url}")))
            .unwrap_or_else(|| panic!("{runtime}: no cause line: {out}"));
        assert!(cause.contains("the server answered in TLS"), "{cause}");
    }
}

/// RFC 5280 §4.2.1.9: a CA certificate is not a server's own; the run says
/// so in plain words, with `-V none` as the way past the check.
#[test]
fn a_ca_certificate_as_the_servers_is_named() {
    let server = Server::tls("tokio", "ca.key", "ca.crt", &[]);
    let ca = certs().join("ca.crt");
    let verify = format!("verify,trust_file={}", ca.display());
    let (code, out) = run(BIN, &["client", "-q", "-V", &verify, server.url("https")]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("the server's certificate is a CA's") && out.contains("; -V none"),
        "{out}"
    );
}

/// RFC 5280 §4.1.2.7: the key must be the certificate's; both files are
/// named, with their flags, on a server and on a client that presents them
/// (exit 2).
#[test]
fn a_key_that_is_not_the_certificates_names_both_files() {
    let certs = certs();
    let (key, cert) = (certs.join("server-rsa.key"), certs.join("server-ec.crt"));
    let (key, cert) = (key.to_str().unwrap(), cert.to_str().unwrap());
    let wanted = format!("-k/-c: the key in {key} does not match the certificate in {cert}");
    let server = ["server", "-k", key, "-c", cert, "-S", "https://127.0.0.1:0"];
    let client = ["client", "-k", key, "-c", cert, "https://127.0.0.1:19749/"];
    for args in [&server[..], &client[..]] {
        let (code, out) = run(BIN, args);
        assert_eq!(code, Some(2), "{args:?}: {out}");
        assert_eq!(out.trim(), format!("h2sim: {wanted}"), "{args:?}");
    }
}

/// `-V` keeps h2simple's meaning (no check unless verify, peer or pass),
/// but trust settings that mode ignores get one warning, and two modes
/// are a bad option.
#[test]
fn v_without_a_mode_warns_and_two_modes_are_refused() {
    let server = Server::tls("tokio", "server-ec.key", "server-ec.crt", &[]);
    let (code, out) = run(
        BIN,
        &[
            "client",
            "-q",
            "-V",
            "trust_file=ca.crt",
            server.url("https"),
        ],
    );
    assert_eq!(code, Some(0), "{out}");
    let warnings: Vec<_> = out.lines().filter(|l| l.contains("mode is none")).collect();
    assert_eq!(
        warnings,
        [
            "h2sim: -V trust_file=ca.crt: trust_file given but the mode is none: the peer is \
          not verified; add verify (or pass)"
        ],
        "{out}"
    );
    let (code, out) = run(BIN, &["client", "-V", "none,verify", server.url("https")]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("-V none,verify") && out.contains("conflict"),
        "{out}"
    );
}

/// RFC 5280 §4.2.1.12: a certificate whose extended key usage does not
/// allow server authentication (the dev client certificate) does not
/// authenticate a server, with h2simple's `purpose` token or without it:
/// the check is part of every verification, as `--help` says.
#[test]
fn a_certificate_for_another_use_does_not_verify_with_purpose_or_without() {
    let server = Server::tls("tokio", "client-ec.key", "client-ec.crt", &[]);
    let url = server.url("https").replacen("127.0.0.1", "localhost", 1);
    let ca = certs().join("ca.crt");
    for spec in ["verify", "verify,purpose", "peer"] {
        let verify = format!("{spec},trust_file={}", ca.display());
        let (code, out) = run(BIN, &["client", "-q", "-V", &verify, &url]);
        assert_eq!(code, Some(1), "{spec}: {out}");
        assert!(
            out.contains("does not allow extended key usage for server authentication"),
            "{spec}: {out}"
        );
    }
}

/// RFC 8446 §4.4.2.4: over TLS 1.3 the server checks the client's
/// certificate after the client's handshake is over, so a server that
/// requires one and refuses ours (none, or one for another use) says so
/// with an alert at the client's first read. The connection never came
/// up: it is a failed one (0 made, 1 unreachable) whose line names the
/// alert, over either protocol, on both runtimes; it was counted as made
/// and its DISCONNECTED line said "by transport error".
#[test]
fn a_client_certificate_refused_after_the_handshake_is_a_failed_connection() {
    let server = Server::tls(
        "tokio",
        "server-ec.key",
        "server-ec.crt",
        &["-V", "verify,trust_file=ca.crt", "-q"],
    );
    let certs = certs();
    let (key, cert) = (certs.join("server-ec.key"), certs.join("server-ec.crt"));
    let (key, cert) = (key.to_str().unwrap(), cert.to_str().unwrap());
    for runtime in ["tokio", "glommio"] {
        let (required, refused) = (
            ("CertificateRequired", "; -k KEY -c CERT present one"),
            (
                "UnsupportedCertificate",
                "; it did not take the client certificate of -c",
            ),
        );
        for (extra, (alert, hint)) in [
            (&[][..], required),
            (&["-1"][..], required),
            (&["-k", key, "-c", cert][..], refused),
        ] {
            let mut args = vec!["client", "-q", "--runtime", runtime];
            args.extend_from_slice(extra);
            args.push(server.url("https"));
            let (code, out) = run(BIN, &args);
            let case = format!("{runtime} {extra:?}");
            assert_eq!(code, Some(1), "{case}: {out}");
            let line = format!(
                "h2sim client: {}: TLS handshake failed: the server sent the alert {alert} once \
                 it was over on our side (TLS 1.3 refuses a client certificate only then){hint}\n",
                server.url("https")
            );
            assert!(out.contains(&line), "{case}: {out}");
            assert!(
                out.contains("connections: 0 made, 0 reconnects, 1 unreachable"),
                "{case}: {out}"
            );
            assert!(!out.contains("DISCONNECTED"), "{case}: {out}");
        }
    }
}
