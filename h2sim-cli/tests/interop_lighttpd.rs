//! Interop with lighttpd (Debian's lighttpd), a server whose HTTP/2 is its
//! own (neither nghttp2's nor Go's): h2sim's client fetches its static
//! files over HTTP/2 with prior knowledge, over TLS with ALPN (lighttpd's
//! certificate checked against the test CA), and over HTTP/1.1 with 10
//! requests pipelined, on both runtimes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::Path;
use std::process::Command;

use server_support::{
    PeerServer, certs, client_succeeds_over, free_port, moved_on, scratch_dir, verify_test_ca,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// lighttpd in the foreground serving `dir`/www on `plain` (HTTP/1.1 and
/// HTTP/2 with prior knowledge) and `tls`.
fn lighttpd(dir: &Path, plain: u16, tls: u16) -> PeerServer {
    let certs = certs();
    let pem = dir.join("server.pem");
    let mut both = std::fs::read(certs.join("server-ec.crt")).unwrap();
    both.extend(std::fs::read(certs.join("server-ec.key")).unwrap());
    std::fs::write(&pem, both).unwrap();
    let www = dir.join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("1k"), [b'a'; 1024]).unwrap();
    std::fs::write(www.join("big"), vec![b'b'; 300 * 1024]).unwrap();
    let config = format!(
        "server.document-root = \"{}\"\n\
         server.bind = \"127.0.0.1\"\nserver.port = {plain}\n\
         server.errorlog = \"{}\"\n\
         server.modules += (\"mod_openssl\")\n\
         server.feature-flags += (\"server.h2proto\" => \"enable\", \"server.h2c\" => \"enable\")\n\
         $SERVER[\"socket\"] == \"127.0.0.1:{tls}\" {{\n    ssl.engine = \"enable\"\n    \
         ssl.pemfile = \"{}\"\n}}\n",
        www.display(),
        dir.join("error.log").display(),
        pem.display()
    );
    let file = dir.join("lighttpd.conf");
    std::fs::write(&file, config).unwrap();
    let mut command = Command::new("lighttpd");
    // -D: in the foreground.
    command.arg("-D").arg("-f").arg(&file);
    PeerServer::listening(command, &[plain, tls], "lighttpd (Debian's lighttpd)")
}

#[test]
fn the_client_against_lighttpd() {
    let dir = scratch_dir("interop-lighttpd");
    let (plain, tls) = (free_port(), free_port());
    let _server = lighttpd(dir.path(), plain, tls);
    let verify = verify_test_ca();
    let small = format!("http://127.0.0.1:{plain}/1k");
    let small_tls = format!("https://127.0.0.1:{tls}/1k");
    let big_tls = format!("https://127.0.0.1:{tls}/big");
    for runtime in RUNTIMES {
        // lighttpd ends a keep-alive connection after 1,000 requests
        // (server.max-keep-alive-requests): the HTTP/1.1 run goes past it,
        // and the requests pipelined behind the 1,000th go again.
        for (args, n, data, protocol) in [
            (vec!["-S", "2", "-P", "50", &small], 4_000, 4_096_000, "h2c"),
            (
                vec!["-V", &verify, "-P", "50", &small_tls],
                2_000,
                2_048_000,
                "h2",
            ),
            (
                vec!["-V", &verify, "-P", "10", &big_tls],
                300,
                92_160_000,
                "h2",
            ),
            (vec!["-1", "-P", "10", &small], 2_500, 2_560_000, "http/1.1"),
        ] {
            let report = client_succeeds_over(runtime, protocol, &args, n, data);
            if protocol == "http/1.1" {
                moved_on(&report, 3);
            }
        }
    }
}
