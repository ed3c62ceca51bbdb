//! Interop with Netty's HTTP/2 (Debian's libnetty-java): the codec that
//! gRPC-java, Vert.x and Reactor Netty, and with them many Java network
//! functions, run on. `tests/java/NettyPeer.java` is built with javac
//! against Debian's jars and meets h2sim over cleartext HTTP/2 with prior
//! knowledge, in both directions, on both runtimes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use server_support::{
    PeerServer, Server, client_succeeds_at, count, run, scratch_dir, served, text,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// Debian's Netty jars the peer needs (netty-all.jar only names them).
const JARS: [&str; 8] = [
    "buffer",
    "codec",
    "codec-http",
    "codec-http2",
    "common",
    "handler",
    "resolver",
    "transport",
];

/// Builds the peer into `dir` and returns the classpath that runs it; a
/// missing JDK or Netty fails the test.
fn build_peer(dir: &Path) -> String {
    let mut classpath: Vec<PathBuf> = JARS
        .iter()
        .map(|jar| PathBuf::from(format!("/usr/share/java/netty-{jar}.jar")))
        .collect();
    for jar in &classpath {
        assert!(
            jar.exists(),
            "{} is missing: Debian's libnetty-java is needed for this test",
            jar.display()
        );
    }
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/NettyPeer.java");
    let out = Command::new("javac")
        .arg("-cp")
        .arg(std::env::join_paths(&classpath).unwrap())
        .arg("-d")
        .arg(dir)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("javac (openjdk-17-jdk-headless) is needed: {e}"));
    assert!(out.status.success(), "javac: {}", text(&out));
    classpath.push(dir.to_owned());
    std::env::join_paths(&classpath)
        .unwrap()
        .into_string()
        .unwrap()
}

/// Netty's client against h2sim's server: 250 requests at once on one
/// connection, a third each GET 1 KiB, POST 100 KiB answered with 1 KiB
/// and GET 300 KiB, each answer checked by Netty's side; the server's
/// report counts one connection and every request.
#[test]
fn netty_client_against_the_server() {
    let dir = scratch_dir("interop-netty-client");
    let classpath = build_peer(dir.path());
    for runtime in RUNTIMES {
        let server = Server::interop(runtime, dir.path(), &["http://127.0.0.1:0"]);
        let (code, out) = run(
            "java",
            &[
                "-cp",
                &classpath,
                "NettyPeer",
                "client",
                server.authority(),
                "250",
            ],
        );
        assert_eq!((code, out.trim()), (Some(0), "ok 250"), "{runtime}");
        let report = server.stop_report();
        assert_eq!(
            (count(&report, "connections"), count(&report, "requests")),
            (1, 250),
            "{runtime}: {report}"
        );
    }
}

/// h2sim's client against Netty's server: GETs of 1 KiB at 100 streams on
/// two connections, 100 KiB uploads echoed back, 300 KiB answers.
#[test]
fn the_client_against_a_netty_server() {
    let dir = scratch_dir("interop-netty-server");
    let classpath = build_peer(dir.path());
    let mut command = Command::new("java");
    command.args(["-cp", &classpath, "NettyPeer", "server"]);
    let server = PeerServer::start(command, "java (Debian's openjdk-17-jdk-headless)");
    let base = format!("http://127.0.0.1:{}", server.port);
    let mut expected = 0;
    for runtime in RUNTIMES {
        for (args, n, data) in [
            (&["-S", "2", "-P", "100", "/1k"][..], 4_000, 4_096_000),
            (
                &["-P", "20", "-m", "POST", "-e", "100k", "/echo"][..],
                400,
                40_960_000,
            ),
            (&["-P", "10", "/big"][..], 300, 92_160_000),
        ] {
            let report = client_succeeds_at(&base, &["--runtime", runtime], args, n, data);
            assert!(report.contains("Application protocol: h2c"), "{report}");
            expected += n;
        }
    }
    let stats = format!("{base}/stats");
    assert_eq!(served(&["--http2-prior-knowledge"], &stats), expected);
}
