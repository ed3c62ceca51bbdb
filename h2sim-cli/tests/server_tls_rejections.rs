//! A server that requires client certificates (`-V verify`) logs each
//! rejected handshake once, with the reason, as h2svr did (RFC 8446 §4.4.2:
//! the client sent no certificate the server can accept).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use server_support::{BIN, Server, certs, run};

#[test]
fn a_client_without_a_certificate_is_logged_once_with_the_reason() {
    let certs = certs();
    for runtime in ["tokio", "glommio"] {
        let flags = [
            "-k",
            "server-ec.key",
            "-c",
            "server-ec.crt",
            "-V",
            "verify,trust_dir=trust",
            "-S",
            "https://127.0.0.1:0",
            "-m",
            "GET",
            "-t",
            "ok",
        ];
        let server = Server::on_runtime(runtime, &certs, &flags, 1);
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
