//! Interop with Python's HTTP stack on the `h2` package (PyPI), which
//! network-function mocks are often written with: hypercorn (an ASGI
//! server) serving h2sim's client, and httpx (a client) against h2sim's
//! server, over HTTP/2 with prior knowledge, TLS with ALPN and HTTP/1.1,
//! on both runtimes.
//!
//! `h2` closes its side of a connection as soon as it receives a GOAWAY,
//! and takes any later frame for a PROTOCOL_ERROR (python-hyper/h2 issues
//! 1181 and 1199): a GOAWAY must be the last frame either side sends
//! before the other answers it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use server_support::{
    PeerServer, Server, certs, client_succeeds_over, count, free_port, h2_client, interrupt_after,
    moved_on, peer_client_runs, run_says, scratch_dir, spawn_client, verify_test_ca,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

fn python_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python")
}

/// hypercorn serving `asgi_app.py` on `plain` (HTTP/1.1 and HTTP/2 with
/// prior knowledge) and `tls` (the test CA's server certificate).
fn hypercorn(plain: u16, tls: u16) -> PeerServer {
    let certs = certs();
    let mut command = Command::new("python3");
    command
        .current_dir(python_dir())
        .args(["-m", "hypercorn", "--workers", "1"])
        .arg("--insecure-bind")
        .arg(format!("127.0.0.1:{plain}"))
        .arg("--bind")
        .arg(format!("127.0.0.1:{tls}"))
        .arg("--certfile")
        .arg(certs.join("server-ec.crt"))
        .arg("--keyfile")
        .arg(certs.join("server-ec.key"))
        .arg("asgi_app:app");
    PeerServer::listening(command, &[plain, tls], "hypercorn (pip install hypercorn)")
}

#[test]
fn the_client_against_hypercorn() {
    let (plain, tls) = (free_port(), free_port());
    let _server = hypercorn(plain, tls);
    let verify = verify_test_ca();
    let url = |port: u16, scheme: &str, path: &str| format!("{scheme}://127.0.0.1:{port}{path}");
    let (small, small_tls) = (url(plain, "http", "/1k"), url(tls, "https", "/1k"));
    let (up, big_tls) = (url(plain, "http", "/up"), url(tls, "https", "/big"));
    for runtime in RUNTIMES {
        // Fewer than 1,000 requests on an HTTP/2 connection: hypercorn ends
        // one there with a GOAWAY that names the streams in flight, then
        // never answers them (its h2 is closed once its GOAWAY is out).
        for (args, n, data, protocol, connections) in [
            (vec!["-P", "50", &small], 900, 921_600, "h2c", 1),
            (
                vec!["-m", "POST", "-e", "100k", "-P", "10", &up],
                300,
                307_200,
                "h2c",
                1,
            ),
            (
                vec!["-V", &verify, "-P", "50", &small_tls],
                900,
                921_600,
                "h2",
                1,
            ),
            (
                vec!["-V", &verify, "-P", "10", &big_tls],
                100,
                30_720_000,
                "h2",
                1,
            ),
            // Each connection ends with our GOAWAY, after its 50th answer.
            (
                vec!["-P", "10", "--requests-per-connection", "50", &small],
                500,
                512_000,
                "h2c",
                10,
            ),
        ] {
            let report = client_succeeds_over(runtime, protocol, &args, n, data);
            // Every connection ends by our GOAWAY alone: with a PING behind
            // it, hypercorn answered GOAWAY(PROTOCOL_ERROR), and the run
            // stopped at the first such end.
            let ends: Vec<&str> = report
                .lines()
                .filter(|l| l.contains(" DISCONNECTED "))
                .collect();
            assert_eq!(ends.len() as u64, connections, "a line each: {report}");
            for line in ends {
                assert!(
                    line.contains("DISCONNECTED by local GOAWAY:"),
                    "{line}\n{report}"
                );
            }
            assert_eq!(count(&report, "made"), connections, "{report}");
        }
        // hypercorn ends an HTTP/1.1 connection after 1,000 requests too.
        let report = client_succeeds_over(
            runtime,
            "http/1.1",
            &["-1", "-P", "10", &small],
            2_500,
            2_560_000,
        );
        moved_on(&report, 3);
    }
}

/// Ctrl-C with requests in flight: they finish before the client's
/// GOAWAY goes, which hypercorn could no longer answer after.
#[test]
fn ctrl_c_lets_hypercorn_answer_what_is_in_flight() {
    let (plain, tls) = (free_port(), free_port());
    let _server = hypercorn(plain, tls);
    let url = format!("http://127.0.0.1:{plain}/slow");
    for runtime in RUNTIMES {
        let child = spawn_client(&["-q", "-C", "100000", "-P", "20", "--runtime", runtime, &url]);
        // Two or three rounds of 20 are answered, one is in flight.
        let report = interrupt_after(child, Duration::from_millis(500));
        assert!(report.contains("interrupted"), "{report}");
        assert!(count(&report, "succeeded") >= 40, "{report}");
        assert_eq!(
            count(&report, "succeeded"),
            count(&report, "started"),
            "{runtime}: what was in flight finished: {report}"
        );
        assert!(report.contains("DISCONNECTED by local GOAWAY:"), "{report}");
    }
}

/// httpx against h2sim's server: `mode` is h2 (TLS), h2c (prior knowledge)
/// or http1; `n` requests, 50 at a time, of GET /1k, POST /up with
/// 100 KiB and GET /big, all of which must come back whole.
fn httpx_succeeds(base: &str, mode: &str, n: u64) {
    let version = if mode == "http1" {
        "HTTP/1.1"
    } else {
        "HTTP/2"
    };
    let script = python_dir().join("httpx_client.py");
    let ca = certs().join("ca.crt");
    let n = n.to_string();
    let (script, ca) = (script.to_str().unwrap(), ca.to_str().unwrap());
    let args = [script, mode, ca, base, &n, "50"];
    run_says("python3", &args, &format!("ok {n} over {version}"));
}

#[test]
fn httpx_against_the_server() {
    let runs = [
        ("https", "h2", 600),
        ("http", "h2c", 600),
        ("http", "http1", 300),
        ("https", "http1", 300),
    ];
    for runtime in RUNTIMES {
        let dir = scratch_dir("interop-httpx");
        peer_client_runs(runtime, dir.path(), &runs, httpx_succeeds);
    }
}

/// §6.8: a server's graceful shutdown (here its idle timeout) writes a
/// PING with its first GOAWAY, and then its final GOAWAY. Python's `h2`
/// closes its side on a GOAWAY and takes any later frame for a
/// PROTOCOL_ERROR, so the PING must come first: written after the GOAWAY,
/// it made every Python client raise `Invalid input RECV_PING in state
/// CLOSED` when the server went away.
#[test]
fn a_python_client_sees_the_server_go_away_cleanly() {
    for runtime in RUNTIMES {
        let server = Server::with_rules(runtime, "-m GET -p / -s 200 -e 1k --idle-timeout 1s");
        let said = h2_client(server.authority(), "request GET /a linger");
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(
            lines,
            [
                "response 1 200",
                "ended",
                "goaway 2147483647 0",
                "goaway 1 0",
                "closed"
            ],
            "{runtime}: {said}"
        );
        server.stop();
    }
}
