//! The NF examples as they are meant to be used (issue 13): `h2sim client`
//! with `examples/X/client.yaml` against `h2sim server` with
//! `examples/X/rules.yaml`, the command lines of the files' own comments
//! (ports aside), on both runtimes. Every step must get its expected
//! status, every notification the server sends must reach the client's
//! `--listen` and be tied to its scenario, and what the scenarios delete
//! must leave the server's store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use serde_json::Value;
use server_support::{Server, client, free_port, read_json, scratch_dir, text};

/// Scenarios per run.
const SCENARIOS: u64 = 50;

fn example(name: &str, file: &str) -> String {
    format!("{}/examples/{name}/{file}", env!("CARGO_MANIFEST_DIR"))
}

/// The number after `label` in the server's summary line that has it.
fn summary_count(summary: &str, line_start: &str, label: &str) -> u64 {
    let line = summary
        .lines()
        .find(|l| l.trim_start().starts_with(line_start))
        .unwrap_or_else(|| panic!("no {line_start:?} line in:\n{summary}"));
    line.split(',')
        .flat_map(|part| {
            let words: Vec<&str> = part.split_whitespace().collect();
            words
                .windows(2)
                .filter(|w| w[1] == label)
                .filter_map(|w| w[0].parse().ok())
                .collect::<Vec<u64>>()
        })
        .next()
        .unwrap_or_else(|| panic!("no {label:?} in {line:?}"))
}

fn run(name: &str, runtime: &str, extra: &[&str]) {
    let dir = scratch_dir(&format!("nf-pair-{name}-{runtime}"));
    let server_args: Vec<String> = [
        "server",
        "--runtime",
        runtime,
        "-q",
        "-S",
        "http://127.0.0.1:0",
        "--rules",
        &example(name, "rules.yaml"),
    ]
    .map(String::from)
    .to_vec();
    let server = Server::start(dir.path(), &server_args, 1);
    let target = server.url("http").to_owned();
    let listen = format!("http://127.0.0.1:{}", free_port());
    let json = dir.path().join("run.json");
    let scenarios = SCENARIOS.to_string();
    let token_url = format!("{target}/oauth2/token");
    let scenario = example(name, "client.yaml");
    let mut args = vec![
        "--runtime",
        runtime,
        "--scenario",
        &scenario,
        &target,
        "--listen",
        &listen,
        "--listen-linger",
        "1s",
        "-C",
        &scenarios,
        "-P",
        "10",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ];
    let extra: Vec<&str> = extra
        .iter()
        .map(|a| {
            if *a == "TOKEN_URL" {
                token_url.as_str()
            } else {
                a
            }
        })
        .collect();
    args.extend(extra);
    let out = client(&args);
    let report = text(&out);
    let (code, summary) = server.stop();
    assert_eq!(out.status.code(), Some(0), "{name} {runtime}: {report}");
    assert_eq!(code, Some(0), "{summary}");

    let doc: Value = read_json(&json);
    let steps = doc["steps"].as_array().unwrap();
    assert!(steps.len() >= 5, "{name}: {report}");
    for step in steps {
        assert_eq!(step["succeeded"], SCENARIOS, "{name} {runtime}: {step}");
    }
    // One notification per scenario's subscription, each sent by the
    // server, received by the listener and tied to its scenario.
    assert_eq!(doc["notifications"]["received"], SCENARIOS, "{report}");
    assert_eq!(doc["notifications"]["correlated"], SCENARIOS, "{report}");
    assert_eq!(
        summary_count(&summary, "notifications:", "sent"),
        SCENARIOS,
        "{summary}"
    );
    assert_eq!(
        summary_count(&summary, "notifications:", "failed;"),
        0,
        "{summary}"
    );
}

/// UDM's subscriber data needs a bearer token from the UDM's own token
/// endpoint, as its client.yaml's comment says.
const UDM_TOKEN: &[&str] = &[
    "--token-url",
    "TOKEN_URL",
    "--nf-type",
    "AMF",
    "--scope",
    "nudm-sdm",
];

#[test]
fn nrf_example_pair_on_tokio() {
    run("nrf", "tokio", &[]);
}

#[test]
fn nrf_example_pair_on_glommio() {
    run("nrf", "glommio", &[]);
}

#[test]
fn udm_example_pair_on_tokio() {
    run("udm", "tokio", UDM_TOKEN);
}

#[test]
fn udm_example_pair_on_glommio() {
    run("udm", "glommio", UDM_TOKEN);
}
