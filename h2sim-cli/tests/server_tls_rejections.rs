//! A server that requires client certificates (`-V verify`) logs each
//! rejected handshake once, with the reason, as h2svr did (RFC 8446 §4.4.2:
//! the client sent no certificate the server can accept).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use server_support::{BIN, Server, run};

#[test]
fn a_client_without_a_certificate_is_logged_once_with_the_reason() {
    for runtime in ["tokio", "glommio"] {
        let verify = ["-V", "verify,trust_dir=trust"];
        let server = Server::tls(runtime, "server-ec.key", "server-ec.crt", &verify);
        let url = format!("{}/x", server.url("https"));
        let (code, out) = run(BIN, &["client", "-q", &url]);
        assert_eq!(code, Some(1), "{runtime}: refused: {out}");
        let (code, out) = server.stop();
        assert_eq!(code, Some(0), "{out}");
        let rejected: Vec<_> = out
            .lines()
            .filter(|l| l.contains("127.0.0.1") && l.to_ascii_lowercase().contains("certificate"))
            .collect();
        assert_eq!(
            rejected.len(),
            1,
            "{runtime}: one line with the reason: {out}"
        );
    }
}
