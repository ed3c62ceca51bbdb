//! Interop with OkHttp (Debian's libokhttp-java, 3.13), the JVM's most
//! used HTTP client, whose HTTP/2 is its own: `tests/java/OkHttpPeer.java`,
//! run from source with Debian's jars, against h2sim's server on both
//! runtimes, over TLS (ALPN h2, the certificate checked against the test
//! CA), HTTP/2 with prior knowledge and HTTP/1.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::Path;

use server_support::{certs, peer_client_runs, run_says, scratch_dir};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// Debian's jars OkHttp runs with.
const JARS: [&str; 2] = ["/usr/share/java/okhttp.jar", "/usr/share/java/okio.jar"];

#[test]
fn okhttp_against_the_server() {
    for jar in JARS {
        assert!(
            Path::new(jar).exists(),
            "{jar} is missing: Debian's libokhttp-java is needed for this test"
        );
    }
    let classpath = JARS.join(":");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/OkHttpPeer.java");
    let ca = certs().join("ca.crt");
    let (source, ca) = (source.to_str().unwrap(), ca.to_str().unwrap());
    let dir = scratch_dir("interop-okhttp");
    let runs = [
        ("https", "h2", 600),
        ("http", "h2c", 600),
        ("https", "http1", 300),
    ];
    for runtime in RUNTIMES {
        peer_client_runs(runtime, dir.path(), &runs, |base, mode, n| {
            let over = match mode {
                "h2" => "h2",
                "h2c" => "h2_prior_knowledge",
                _ => "http/1.1",
            };
            let n = n.to_string();
            let args = ["-cp", &classpath, source, ca, base, &n, mode];
            run_says("java", &args, &format!("ok {n} over {over}"));
        });
    }
}
