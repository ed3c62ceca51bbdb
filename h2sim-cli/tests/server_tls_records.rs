//! Records after the handshake, against OpenSSL (Python's `ssl`) as the
//! peer, on both runtimes: a record that does not decrypt ends the
//! connection with a `bad_record_mac` alert (RFC 8446 §5.2: "If the
//! decryption fails, the receiver MUST terminate the connection with a
//! bad_record_mac alert"), and the server goes on serving others.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::process::Command;

use server_support::{Server, client, text};

/// Connects with TLS 1.3 and ALPN h2, sends the HTTP/2 preface and a
/// SETTINGS frame, then 45 bytes of garbage as an application-data record
/// on the raw socket, under the TLS layer; prints what the session saw.
const BAD_RECORD: &str = r#"
import os, socket, ssl, sys
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["h2"])
host, port = sys.argv[1].rsplit(":", 1)
s = ctx.wrap_socket(socket.create_connection((host, int(port))), server_hostname="localhost")
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
raw = socket.socket(fileno=os.dup(s.fileno()))
raw.sendall(bytes([23, 3, 3, 0, 40]) + b"\xab" * 40)
s.settimeout(10)
try:
    while s.recv(65536):
        pass
    print("closed without an alert")
except ssl.SSLError as e:
    print("alert", e.reason)
"#;

#[test]
fn a_record_that_does_not_decrypt_gets_bad_record_mac() {
    for runtime in ["tokio", "glommio"] {
        let server = Server::tls(runtime, "server-rsa.key", "server-rsa.crt", &["-q"]);
        let url = server.url("https").to_owned();
        let authority = url.trim_start_matches("https://");
        let out = Command::new("python3")
            .args(["-c", BAD_RECORD, authority])
            .output()
            .expect("python3 is needed (scripts/test.sh installs it)");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{runtime}: {said}{}", text(&out));
        assert_eq!(said.trim(), "alert SSLV3_ALERT_BAD_RECORD_MAC", "{runtime}");
        // Only that connection ended.
        let out = client(&["-q", &format!("{url}/x")]);
        assert!(out.status.success(), "{runtime}: {}", text(&out));
        let (code, out) = server.stop();
        assert_eq!(code, Some(0), "{runtime}: {out}");
    }
}
