//! Interop with Jetty's HTTP/2 server (Debian's libjetty9-java, 9.4), the
//! servlet container many Java services run in, with an HTTP/2 and HPACK
//! of its own: `tests/java/JettyPeer.java`, run from source with Debian's
//! jars, serving h2sim's client on both runtimes over HTTP/2 with prior
//! knowledge (GETs, 100 KiB uploads, 300 KiB answers, connections of 50
//! requests each) and HTTP/1.1 with 10 requests pipelined.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::Path;
use std::process::Command;

use server_support::{PeerServer, client_succeeds_at, count, served};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// Debian's jars Jetty's server runs with.
const JARS: [&str; 8] = [
    "jetty9-server",
    "jetty9-http",
    "jetty9-io",
    "jetty9-util",
    "jetty9-http2-server",
    "jetty9-http2-common",
    "jetty9-http2-hpack",
    "servlet-api",
];

fn jetty() -> PeerServer {
    let jars: Vec<String> = JARS
        .iter()
        .map(|jar| format!("/usr/share/java/{jar}.jar"))
        .collect();
    for jar in &jars {
        assert!(
            Path::new(jar).exists(),
            "{jar} is missing: Debian's libjetty9-java is needed for this test"
        );
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/JettyPeer.java");
    let mut command = Command::new("java");
    command.arg("-cp").arg(jars.join(":")).arg(source);
    PeerServer::start(command, "java (Debian's openjdk-17-jdk-headless)")
}

#[test]
fn the_client_against_jetty() {
    let server = jetty();
    let base = format!("http://127.0.0.1:{}", server.port);
    let mut expected = 0;
    for runtime in RUNTIMES {
        // Flags, then path and step flags; requests, answer bytes, the
        // protocol spoken and the connections made.
        for (leading, args, n, data, protocol, made) in [
            (&["-P", "50"][..], &["/1k"][..], 3_000, 3_072_000, "h2c", 1),
            (
                &["-P", "20"][..],
                &["-m", "POST", "-e", "100k", "/up"][..],
                300,
                307_200,
                "h2c",
                1,
            ),
            (&["-P", "10"][..], &["/big"][..], 100, 30_720_000, "h2c", 1),
            (
                &["-P", "10", "--requests-per-connection", "50"][..],
                &["/1k"][..],
                500,
                512_000,
                "h2c",
                10,
            ),
            (
                &["-1", "-P", "10"][..],
                &["/1k"][..],
                2_000,
                2_048_000,
                "http/1.1",
                1,
            ),
        ] {
            let leading = [&["--runtime", runtime][..], leading].concat();
            let report = client_succeeds_at(&base, &leading, args, n, data);
            assert!(
                report.contains(&format!("Application protocol: {protocol}\n")),
                "{report}"
            );
            assert_eq!(count(&report, "made"), made, "{report}");
            expected += n;
        }
    }
    assert_eq!(served(&[], &format!("{base}/stats")), expected);
}
