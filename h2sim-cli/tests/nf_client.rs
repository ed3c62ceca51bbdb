//! `h2sim client` playing a network function against a small NRF/UDM peer
//! (`nf_peer.py`, on Python's `h2`) over real sockets, on both runtimes:
//! steps that capture what a response says and use it in the next
//! requests, expected statuses, notifications received on `--listen`, and
//! an OAuth2 token fetched and sent (issue 13, client side).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

mod server_support;

use server_support::{
    Server, client, free_port, kill, read_json, scratch_dir, spawn_client, text, wait,
};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// The peer, killed on drop; its counts are in `stats`.
struct Peer {
    child: Child,
    url: String,
    stats: PathBuf,
    /// The peer's and the test's files, removed after the peer is killed.
    dir: tempfile::TempDir,
}

impl Peer {
    fn start(name: &str, extra: &[&str]) -> Peer {
        let dir = scratch_dir(&format!("nf-{name}"));
        let stats = dir.path().join("stats.json");
        let port = free_port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nf_peer.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg(&stats)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 with the h2 module is needed for this test");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(
            line.trim(),
            "ready",
            "nf_peer.py did not start (is h2 installed?)"
        );
        Peer {
            child,
            url: format!("http://127.0.0.1:{port}"),
            stats,
            dir,
        }
    }

    fn authority(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    fn stats(&self) -> Value {
        read_json(&self.stats)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// POST a subscription → capture its id (body by JSON pointer, RFC 6901;
/// Location's last segment, RFC 9110 §10.2.2) → PATCH it → DELETE it, each
/// with its status checked; every instance has its own id.
#[test]
fn captured_ids_flow_into_the_next_steps() {
    for runtime in RUNTIMES {
        let peer = Peer::start(&format!("flow-{runtime}"), &[]);
        let json = peer.dir.path().join("run.json");
        let out = client(&[
            "--runtime",
            runtime,
            "--threads",
            "1",
            "-q",
            "-C",
            "6",
            "-P",
            "3",
            "-a",
            peer.authority(),
            "--json",
            json.to_str().unwrap(),
            "-m",
            "POST",
            "-p",
            "/nnrf-nfm/v1/subscriptions",
            "-x",
            "content-type=application/json",
            "-t",
            "{\"reqNotifEvents\":[\"NF_REGISTERED\"]}",
            "--expect",
            "201",
            "--capture",
            "__ID__=json:/subscriptionId",
            "--capture",
            "__LOC__=segment:location",
            "-m",
            "PATCH",
            "-p",
            "/nnrf-nfm/v1/subscriptions/__LOC__",
            "--expect",
            "200",
            "-m",
            "DELETE",
            "-p",
            "/nnrf-nfm/v1/subscriptions/__ID__",
            "--expect",
            "204",
        ]);
        let report = text(&out);
        assert_eq!(out.status.code(), Some(0), "{runtime}: {report}");
        assert!(
            report.contains("18 done, 18 succeeded, 0 failed"),
            "{report}"
        );
        let requests = strings(&peer.stats()["requests"]);
        for n in 1..=6 {
            for method in ["PATCH", "DELETE"] {
                let line = format!("{method} /nnrf-nfm/v1/subscriptions/sub-{n}");
                assert_eq!(
                    requests.iter().filter(|r| **r == line).count(),
                    1,
                    "{runtime}: {line} once in {requests:?}"
                );
            }
        }
        let steps = &read_json(&json)["steps"];
        for (i, label) in ["POST", "PATCH", "DELETE"].iter().enumerate() {
            assert!(steps[i]["label"].as_str().unwrap().starts_with(label));
            assert_eq!(steps[i]["succeeded"], 6, "{runtime}: {steps}");
            assert_eq!(steps[i]["latency"]["count"], 6, "{runtime}: {steps}");
        }
    }
}

/// A status other than the step's `--expect` fails that step (and the
/// run, exit 1); the scenario's later steps are skipped, not lost.
#[test]
fn an_unexpected_status_fails_its_step() {
    for runtime in RUNTIMES {
        let peer = Peer::start(&format!("expect-{runtime}"), &[]);
        let json = peer.dir.path().join("run.json");
        let out = client(&[
            "--runtime",
            runtime,
            "--threads",
            "1",
            "-q",
            "-C",
            "2",
            "-a",
            peer.authority(),
            "--json",
            json.to_str().unwrap(),
            "-m",
            "POST",
            "-p",
            "/nnrf-nfm/v1/subscriptions",
            "-t",
            "{}",
            "--expect",
            "200",
            "--capture",
            "__ID__=segment:location",
            "-m",
            "DELETE",
            "-p",
            "/nnrf-nfm/v1/subscriptions/__ID__",
        ]);
        let report = text(&out);
        assert_eq!(out.status.code(), Some(1), "{runtime}: {report}");
        assert!(report.contains("2 done, 0 succeeded, 2 failed"), "{report}");
        assert!(
            report
                .contains("2 failed (2 unexpected status, 0 capture failed, 0 errored), 0 skipped"),
            "{report}"
        );
        assert!(
            report
                .contains("0 failed (0 unexpected status, 0 capture failed, 0 errored), 2 skipped"),
            "{report}"
        );
        assert!(report.contains("0 lost"), "{report}");
        let doc = read_json(&json);
        assert_eq!(doc["requests"]["skipped"], 2);
        assert_eq!(doc["steps"][0]["unexpected_status"], 2);
        assert_eq!(doc["steps"][1]["skipped"], 2);
        let requests = strings(&peer.stats()["requests"]);
        assert!(
            !requests.iter().any(|r| r.starts_with("DELETE")),
            "{requests:?}"
        );
    }
}

/// A step that expects gets no answer (RST_STREAM, RFC 9113 §6.4): it
/// counts as errored and the scenario's later steps as skipped, not lost.
#[test]
fn a_reset_step_skips_the_rest_of_its_scenario() {
    let peer = Peer::start("reset", &[]);
    let out = client(&[
        "-q",
        "-C",
        "2",
        "-a",
        peer.authority(),
        "-m",
        "POST",
        "-p",
        "/reset/x",
        "-t",
        "{}",
        "--expect",
        "201",
        "-m",
        "DELETE",
        "-p",
        "/nnrf-nfm/v1/subscriptions/x",
    ]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("2 failed (0 unexpected status, 0 capture failed, 2 errored), 0 skipped"),
        "{report}"
    );
    assert!(
        report.contains("0 failed (0 unexpected status, 0 capture failed, 0 errored), 2 skipped"),
        "{report}"
    );
    assert!(report.contains("0 lost"), "{report}");
    assert_eq!(
        strings(&peer.stats()["requests"]),
        ["POST /reset/x", "POST /reset/x"]
    );
}

/// A capture that finds nothing fails its step too.
#[test]
fn a_capture_that_finds_nothing_fails_its_step() {
    let peer = Peer::start("nocapture", &[]);
    let out = client(&[
        "-q",
        "-a",
        peer.authority(),
        "-m",
        "POST",
        "-p",
        "/nnrf-nfm/v1/subscriptions",
        "-t",
        "{}",
        "--capture",
        "__ID__=json:/no/such",
        "-m",
        "DELETE",
        "-p",
        "/nnrf-nfm/v1/subscriptions/__ID__",
    ]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("1 failed (0 unexpected status, 1 capture failed, 0 errored), 0 skipped"),
        "{report}"
    );
}

/// `--listen`: the peer's notifications (sent on PATCH, naming the
/// captured subscription id) are answered 204, counted, and timed from
/// the PATCH of their scenario instance.
#[test]
fn notifications_are_received_and_timed() {
    for runtime in RUNTIMES {
        let peer = Peer::start(&format!("listen-{runtime}"), &[]);
        let json = peer.dir.path().join("run.json");
        let listen = format!("http://127.0.0.1:{}", free_port());
        let body = format!(
            "{{\"nfStatusNotificationUri\":\"{listen}/notify\",\"reqNotifEvents\":[\"NF_PROFILE_CHANGED\"]}}"
        );
        let out = client(&[
            "--runtime",
            runtime,
            "--threads",
            "1",
            "-q",
            "-C",
            "4",
            "-P",
            "2",
            "-a",
            peer.authority(),
            "--listen",
            &listen,
            "--json",
            json.to_str().unwrap(),
            "-m",
            "POST",
            "-p",
            "/nnrf-nfm/v1/subscriptions",
            "-t",
            &body,
            "--expect",
            "201",
            "--capture",
            "__ID__=segment:location",
            "-m",
            "PATCH",
            "-p",
            "/nnrf-nfm/v1/subscriptions/__ID__",
            "--expect",
            "200",
            "-m",
            "DELETE",
            "-p",
            "/nnrf-nfm/v1/subscriptions/__ID__",
            "--expect",
            "204",
        ]);
        let report = text(&out);
        assert_eq!(out.status.code(), Some(0), "{runtime}: {report}");
        assert!(
            report.contains("notifications: 4 received, 4 correlated"),
            "{runtime}: {report}"
        );
        assert!(report.contains("notification delay:"), "{report}");
        // The listener says what it is: the client's, not a server.
        assert!(
            report.contains(&format!("h2sim client --listen listening on {listen}")),
            "{runtime}: {report}"
        );
        let answers = &peer.stats()["notifications"];
        assert_eq!(
            answers,
            &serde_json::json!([204, 204, 204, 204]),
            "{runtime}"
        );
        let n = &read_json(&json)["notifications"];
        assert_eq!(
            (n["received"].as_u64(), n["correlated"].as_u64()),
            (Some(4), Some(4))
        );
        assert_eq!(n["delay"]["count"], 4);
    }
}

/// `--listen-rules FILE` answers notifications by the server's rules
/// instead of 204.
#[test]
fn notifications_are_answered_by_listen_rules() {
    let peer = Peer::start("listen-rules", &[]);
    let rules = peer.dir.path().join("notify.yaml");
    std::fs::write(
        &rules,
        "rule:\n  - method: POST\n    path: /notify\n    status: 200\n    text: ok\n",
    )
    .unwrap();
    let listen = format!("http://127.0.0.1:{}", free_port());
    let body = format!("{{\"nfStatusNotificationUri\":\"{listen}/notify\"}}");
    let out = client(&[
        "-q",
        "-C",
        "2",
        "-a",
        peer.authority(),
        "--listen",
        &listen,
        "--listen-rules",
        rules.to_str().unwrap(),
        "-m",
        "POST",
        "-p",
        "/nnrf-nfm/v1/subscriptions",
        "-t",
        &body,
        "--expect",
        "201",
        "--capture",
        "__ID__=segment:location",
        "-m",
        "PATCH",
        "-p",
        "/nnrf-nfm/v1/subscriptions/__ID__",
        "--expect",
        "200",
    ]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        report.contains("notifications: 2 received, 2 correlated"),
        "{report}"
    );
    assert_eq!(peer.stats()["notifications"], serde_json::json!([200, 200]));
}

/// RFC 6749 §4.4 / TS 33.501 §13.4.1: a token is fetched with a
/// form-encoded client-credentials request before the run, and every
/// request carries it as `authorization: Bearer` (RFC 6750 §2.1); the peer
/// refuses requests without one.
#[test]
fn a_token_is_fetched_and_sent() {
    for runtime in RUNTIMES {
        let peer = Peer::start(&format!("token-{runtime}"), &["--require-token"]);
        let token_url = format!("{}/oauth2/token", peer.url);
        let out = client(&[
            "--runtime",
            runtime,
            "--threads",
            "1",
            "-q",
            "-C",
            "3",
            "--token-url",
            &token_url,
            "--nf-instance-id",
            "5a7bd676-0001",
            "--nf-type",
            "AMF",
            "--target-nf-type",
            "NRF",
            "--scope",
            "nnrf-nfm nnrf-disc",
            "-a",
            peer.authority(),
            "-m",
            "POST",
            "-p",
            "/nnrf-nfm/v1/subscriptions",
            "-t",
            "{}",
            "--expect",
            "201",
        ]);
        let report = text(&out);
        assert_eq!(out.status.code(), Some(0), "{runtime}: {report}");
        let stats = peer.stats();
        assert_eq!(stats["tokens"], 1);
        assert_eq!(
            stats["token_forms"][0],
            serde_json::json!({"grant_type": "client_credentials", "nfInstanceId": "5a7bd676-0001",
                "nfType": "AMF", "targetNfType": "NRF", "scope": "nnrf-nfm nnrf-disc"})
        );
        assert_eq!(
            strings(&stats["bearers"]),
            vec!["Bearer tok-1"; 3],
            "{runtime}"
        );
    }
}

/// A token endpoint that refuses is a clear error before the run, which
/// fails as for a server that cannot be reached (exit 1).
#[test]
fn a_refused_token_stops_the_run_before_it_starts() {
    let peer = Peer::start("token-refused", &[]);
    let token_url = format!("{}/no-token-here", peer.url);
    let out = client(&[
        "-q",
        "--token-url",
        &token_url,
        "-a",
        peer.authority(),
        "-m",
        "GET",
        "-p",
        "/x",
    ]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    // The whole URL, path included, and nothing after the status.
    assert!(
        report.contains(&format!("--token-url {token_url}: refused with 404\n")),
        "{report}"
    );
    assert_eq!(strings(&peer.stats()["requests"]), ["POST /no-token-here"]);
}

/// A token endpoint that never answers stops the client after `--timeout`
/// with one line naming the whole URL, before any request of the run
/// (exit 1).
#[test]
fn an_unanswered_token_request_stops_the_run_after_the_timeout() {
    let server = Server::with_rules(
        "tokio",
        "-q -m POST -p /t5 --delay 60000 -t x -m GET -p / -t ok",
    );
    let token_url = format!("{}/t5", server.url("http"));
    let started = std::time::Instant::now();
    let out = client(&[
        "-q",
        "--timeout",
        "1s",
        "--token-url",
        &token_url,
        server.url("http"),
    ]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{report}"
    );
    assert_eq!(report.lines().count(), 1, "{report}");
    assert!(
        report.contains(&format!("--token-url {token_url}: no answer within 1s")),
        "{report}"
    );
}

/// A Ctrl-C while the first token is awaited ends the wait with one line
/// naming the token's URL, and the report and JSON of a run that sent
/// nothing, interrupted (exit 1), on both runtimes; the process died of
/// the signal with neither.
#[test]
fn a_ctrl_c_during_the_token_wait_ends_it_with_the_report() {
    for runtime in RUNTIMES {
        // A token endpoint that takes the connection and never answers.
        let endpoint = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let token_url = format!("http://{}/token", endpoint.local_addr().unwrap());
        let dir = scratch_dir(&format!("nf-client-token-ctrl-c-{runtime}"));
        let json = dir.path().join("report.json");
        let mut child = spawn_client(&[
            "-q",
            "--runtime",
            runtime,
            "--json",
            json.to_str().unwrap(),
            "--token-url",
            &token_url,
            "http://127.0.0.1:1/x",
        ]);
        // The token request came: the client is in its wait.
        let _held = endpoint.accept().unwrap();
        kill(&child, "-INT");
        let status = wait(&mut child, std::time::Duration::from_secs(5));
        let report = text(&child.wait_with_output().unwrap());
        assert_eq!(status.code(), Some(1), "{runtime}: {report}");
        assert!(
            report.contains(&format!(
                "h2sim client: interrupted (Ctrl-C) while waiting for the token from {token_url}: no request was sent\n"
            )),
            "{runtime}: {report}"
        );
        assert!(!report.contains("stopping"), "{runtime}: {report}");
        assert!(report.contains("requests: 0 total"), "{runtime}: {report}");
        let value: Value = read_json(&json);
        assert_eq!(value["interrupted"], true, "{runtime}: {value}");
        assert_eq!(value["requests"]["total"], 0, "{runtime}: {value}");
        assert_eq!(value["connections"], 0, "{runtime}: {value}");
    }
}

/// The examples' NRF and UDM scenarios, end to end on both runtimes: every
/// step's status as expected, one notification per instance received and
/// correlated (the example files' callback port replaced by the test's).
#[test]
fn the_nrf_and_udm_examples_run() {
    for example in ["nrf", "udm"] {
        for runtime in RUNTIMES {
            let peer = Peer::start(&format!("{example}-{runtime}"), &[]);
            let port = free_port();
            let scenario = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("examples/{example}/client.yaml"));
            let json = peer.dir.path().join("run.json");
            let out = client(&[
                "--runtime",
                runtime,
                "--threads",
                "1",
                "-q",
                "-C",
                "5",
                "-P",
                "2",
                "--scenario",
                scenario.to_str().unwrap(),
                &peer.url,
                "--listen",
                &format!("http://127.0.0.1:{port}"),
                "--json",
                json.to_str().unwrap(),
            ]);
            let report = text(&out);
            assert_eq!(out.status.code(), Some(0), "{example} {runtime}: {report}");
            let doc = read_json(&json);
            let steps = doc["steps"].as_array().unwrap();
            assert!(steps.len() >= 5, "{example}");
            for step in steps {
                assert_eq!(step["succeeded"], 5, "{example} {runtime}: {step}");
            }
            assert_eq!(
                doc["notifications"]["received"], 5,
                "{example} {runtime}: {report}"
            );
            assert_eq!(
                doc["notifications"]["correlated"], 5,
                "{example} {runtime}: {report}"
            );
            assert_eq!(peer.stats()["notifications"].as_array().unwrap().len(), 5);
        }
    }
}
