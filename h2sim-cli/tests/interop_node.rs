//! Interop with Node.js's `http2` and `http` modules, what JavaScript mocks
//! of network functions are written with (`tests/node/peer.js`): h2sim's
//! client against Node's server over HTTP/2 with prior knowledge, TLS
//! (ALPN, the certificate checked against the test CA) and HTTP/1.1 over
//! TLS, and Node's client against h2sim's server the same ways, on both
//! runtimes.
//!
//! Node's client counts what it has queued to send against its session's
//! `maxSessionMemory` (10 MB) and refuses its own new streams past it
//! (RST_STREAM ENHANCE_YOUR_CALM): 100 uploads of 100 KiB at once meet it
//! against a server whose connection window lets that much out (h2sim's
//! 8 MiB, and nghttpd given it too), not against 64 KiB (nghttpd's
//! default), which `--connection-window 64k` gives h2sim's server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use server_support::{
    PeerServer, Server, certs, client_succeeds_over, count, free_port, peer_client_runs, run_says,
    scratch_dir, served, verify_test_ca,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

fn peer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/peer.js")
}

#[test]
fn the_client_against_node() {
    let (plain, tls) = (free_port(), free_port());
    let certs = certs();
    let mut command = Command::new("node");
    command
        .arg(peer())
        .arg("server")
        .arg(certs.join("server-ec.crt"))
        .arg(certs.join("server-ec.key"))
        .arg(plain.to_string())
        .arg(tls.to_string());
    let _server = PeerServer::listening(command, &[plain, tls], "node (Debian's nodejs)");
    let verify = verify_test_ca();
    let url = |scheme: &str, port: u16, path: &str| format!("{scheme}://127.0.0.1:{port}{path}");
    let (small, up) = (url("http", plain, "/1k"), url("http", plain, "/up"));
    let (big_tls, small_tls) = (url("https", tls, "/big"), url("https", tls, "/1k"));
    let mut expected = 0;
    for runtime in RUNTIMES {
        for (args, n, data, protocol, made) in [
            (vec!["-P", "50", &small], 3_000, 3_072_000, "h2c", 1),
            (
                vec!["-m", "POST", "-e", "100k", "-P", "20", &up],
                300,
                307_200,
                "h2c",
                1,
            ),
            (
                vec!["-V", &verify, "-P", "10", &big_tls],
                100,
                30_720_000,
                "h2",
                1,
            ),
            (
                vec!["-P", "10", "--requests-per-connection", "50", &small],
                500,
                512_000,
                "h2c",
                10,
            ),
            (
                vec!["-1", "-V", &verify, "-P", "10", &small_tls],
                1_000,
                1_024_000,
                "http/1.1",
                1,
            ),
        ] {
            let report = client_succeeds_over(runtime, protocol, &args, n, data);
            assert_eq!(count(&report, "made"), made, "{report}");
            expected += n;
        }
    }
    let stats = url("http", plain, "/stats");
    assert_eq!(served(&["--http2-prior-knowledge"], &stats), expected);
}

#[test]
fn node_against_the_server() {
    let dir = scratch_dir("interop-node");
    let ca = certs().join("ca.crt");
    let (peer, ca) = (peer(), ca.to_str().unwrap());
    let peer = peer.to_str().unwrap();
    let runs = [
        ("https", "h2", 600),
        ("http", "h2c", 600),
        ("http", "http1", 300),
        ("https", "http1", 300),
    ];
    for runtime in RUNTIMES {
        peer_client_runs(runtime, dir.path(), &runs, |base, mode, n| {
            let n = n.to_string();
            run_says(
                "node",
                &[peer, "client", ca, base, &n, mode],
                &format!("ok {n}"),
            );
        });
    }
}

/// 100 uploads of 100 KiB at once from Node's client, answered at once
/// with 201 "ok", through a server whose connection window is nghttpd's
/// 64 KiB (`--connection-window 64k`). With h2sim's default 8 MiB, Node's
/// client refused 17 or 18 of its own 2,000 streams in each of three runs.
#[test]
fn node_uploads_at_once_within_a_small_connection_window() {
    let ca = certs().join("ca.crt");
    let peer = peer();
    for runtime in RUNTIMES {
        let rules = "--connection-window 64k -q -m POST -p /ok -s 201 -t ok";
        let server = Server::with_rules(runtime, rules);
        let (peer, ca) = (peer.to_str().unwrap(), ca.to_str().unwrap());
        let url = server.url("http");
        let args = [peer, "client", ca, url, "2000", "h2c", "100", "/ok"];
        run_says("node", &args, "ok 2000");
        let report = server.stop_report();
        assert_eq!(count(&report, "requests"), 2_000, "{runtime}: {report}");
    }
}
