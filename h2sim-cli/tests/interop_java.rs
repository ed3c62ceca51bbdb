//! Interop with Java's HTTP stack (Debian's openjdk-17-jdk-headless): the
//! JDK's `java.net.http.HttpClient`, an HTTP/2 client that shares no code
//! with h2sim's, nghttp2's or Go's, and the one Java network functions and
//! their test tools use; and the JDK's HTTP/1.1 server. `tests/java/
//! Peer.java` runs from source (`java Peer.java`), on both runtimes:
//! - Java's client against h2sim's server over TLS (ALPN h2, h2sim's
//!   certificate checked against the test CA) and over cleartext, where it
//!   upgrades its first request's connection to HTTP/2 (RFC 7540 §3.2);
//! - h2sim's HTTP/1.1 client, pipelining, against the JDK's server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use server_support::{
    PeerServer, Server, certs, client_succeeds_at, count, run_says, scratch_dir, served,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// Requests the Java client sends at once after its first: under h2sim's
/// default SETTINGS_MAX_CONCURRENT_STREAMS (256), since JDK 17's client
/// fails a request past the server's limit ("too many concurrent
/// streams") instead of holding it.
const AT_ONCE: &str = "200";

/// Connections Java upgrades over cleartext, one after the other, each
/// with a request answered with 300 KiB: before the server held the answer
/// for the client's preface, JDK 17 lost part of it on about one upgrade
/// in six (a frame read from the middle of a DATA payload), so 20 of them
/// meet it nearly always (1 - (5/6)^20 = 97%).
const COLD_UPGRADES: &str = "20";

fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/Peer.java")
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Java's client against h2sim's server: over TLS, one request that opens
/// the connection and then 200 at once on it, a third each GET 1 KiB,
/// POST 100 KiB answered with 1 KiB and GET 300 KiB; over cleartext, 20
/// connections upgraded by a GET of 300 KiB, then 200 GETs at once on the
/// last. Java checks each answer's protocol (HTTP/2), status and length;
/// the server's report counts the connections: one over TLS, one for
/// each upgrade.
#[test]
fn java_client_against_the_server() {
    let dir = scratch_dir("interop-java-client");
    let certs = certs();
    let ca = certs.join("ca.crt");
    let source = source();
    for runtime in RUNTIMES {
        let server = Server::interop(
            runtime,
            dir.path(),
            &["https://127.0.0.1:0", "http://127.0.0.1:0"],
        );
        let tls = server.url("https").to_owned();
        let plain = server.url("http").to_owned();
        for args in [
            vec!["client", path(&ca), &tls, AT_ONCE],
            vec!["upgrade", &plain, COLD_UPGRADES, AT_ONCE],
        ] {
            let mut all = vec![path(&source)];
            all.extend_from_slice(&args);
            run_says("java", &all, "ok 200");
        }
        let report = server.stop_report();
        assert_eq!(
            (count(&report, "connections"), count(&report, "requests")),
            (1 + 20, 201 + 20 + 200),
            "{runtime}: {report}"
        );
    }
}

/// h2sim's HTTP/1.1 client against the JDK's server: GETs of 1 KiB and
/// 100 KiB uploads echoed back, 10 requests pipelined on each connection
/// (one request at a time would meet the JDK server's Nagle delay: it
/// writes the head and the body apart, without TCP_NODELAY, so each
/// answer waits for the client's delayed ACK, about 40 ms, as it does for
/// curl, h2load and wrk).
#[test]
fn the_http1_client_against_a_java_server() {
    let mut command = Command::new("java");
    command.arg(source()).arg("server");
    let server = PeerServer::start(command, "java (Debian's openjdk-17-jdk-headless)");
    let base = format!("http://127.0.0.1:{}", server.port);
    let mut expected = 0;
    for runtime in RUNTIMES {
        for (args, n, data) in [
            (&["/1k"][..], 2_000, 2_048_000),
            (&["-m", "POST", "-e", "100k", "/echo"][..], 200, 20_480_000),
        ] {
            let leading = ["--runtime", runtime, "-1", "-P", "10"];
            client_succeeds_at(&base, &leading, args, n, data);
            expected += n;
        }
    }
    assert_eq!(served(&[], &format!("{base}/stats")), expected);
}
