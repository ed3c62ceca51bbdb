//! Scale past one machine (issue 14): N client processes, each with
//! `--json`, merged by `h2sim merge`, give the totals of their sum and the
//! percentiles of their combined latency histogram. Runs the shipped
//! `examples/scale/run-local.sh` as its README writes it, and the scripts
//! of its Kubernetes pods (`job.yaml`, `merge.yaml`) with `sh`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use std::path::Path;
use std::process::Command;

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use serde_json::Value;
use server_support::{BIN, Server, read_json, scratch_dir, text};

const PARTS: usize = 3;

fn histogram(latency: &Value) -> Histogram<u64> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(latency["histogram"].as_str().unwrap())
        .unwrap();
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .unwrap()
}

#[test]
fn merged_parts_give_the_sums_and_the_combined_percentiles() {
    let scratch = scratch_dir("scale");
    let dir = scratch.path();
    let args = [
        "server",
        "-S",
        "http://127.0.0.1:0",
        "-m",
        "GET",
        "-p",
        "/",
        "-s",
        "200",
        "-q",
    ];
    let server = Server::start(dir, &args, 1);
    let url = format!("{}/users/1", server.url("http"));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/scale/run-local.sh");
    let out_dir = dir.join("run");
    let out = Command::new("bash")
        .arg(script)
        .arg(PARTS.to_string())
        .arg(&out_dir)
        .args(["--", "-q", "-C", "300", "-P", "10", &url])
        .env("H2SIM", BIN)
        .output()
        .unwrap();
    let printed = text(&out);
    assert!(out.status.success(), "{printed}");

    let parts: Vec<Value> = (0..PARTS)
        .map(|i| read_json(&out_dir.join(format!("part-{i}.json"))))
        .collect();
    let merged = read_json(&out_dir.join("merged.json"));
    let sum = |pointer: &str| -> u64 {
        parts
            .iter()
            .map(|p| p.pointer(pointer).and_then(Value::as_u64).unwrap())
            .sum()
    };
    for pointer in [
        "/requests/total",
        "/requests/started",
        "/requests/done",
        "/requests/succeeded",
        "/requests/failed",
        "/connections",
        "/status_code_counts/200",
        "/traffic/bytes_received",
        "/traffic/bytes_sent",
        "/traffic/data_bytes_received",
        "/traffic/header_bytes_received",
        "/latency/request/count",
    ] {
        assert_eq!(
            merged.pointer(pointer).and_then(Value::as_u64),
            Some(sum(pointer)),
            "{pointer}"
        );
    }
    assert_eq!(sum("/requests/succeeded"), 3 * 300);

    // The merged percentiles are those of every request together.
    let mut combined = histogram(&parts[0]["latency"]["request"]);
    for part in &parts[1..] {
        combined
            .add(histogram(&part["latency"]["request"]))
            .unwrap();
    }
    let request = &merged["latency"]["request"];
    for (field, q) in [
        ("p50_us", 0.5),
        ("p90_us", 0.9),
        ("p99_us", 0.99),
        ("p99_9_us", 0.999),
    ] {
        assert_eq!(
            request[field].as_u64(),
            Some(combined.value_at_quantile(q)),
            "{field}"
        );
    }
    // Min and max are exact samples: the parts' extremes, within the
    // combined histogram's buckets of its own.
    let extreme = |field: &str| -> Vec<u64> {
        parts
            .iter()
            .map(|p| p["latency"]["request"][field].as_u64().unwrap())
            .collect()
    };
    let max = extreme("max_us").into_iter().max();
    let min = extreme("min_us").into_iter().min();
    assert_eq!(request["max_us"].as_u64(), max);
    assert_eq!(request["min_us"].as_u64(), min);
    assert!(combined.equivalent(max.unwrap(), combined.max()));
    assert!(combined.equivalent(min.unwrap(), combined.min()));
    // What the script printed is the merged report.
    assert!(printed.contains("900 succeeded"), "{printed}");
    let _ = server.stop();
}

/// The shell script of the one container of the Job in `file` (a
/// Kubernetes manifest in examples/scale), made to run here: `/results`
/// is `results`, `h2sim` the binary under test, the target `url`.
fn pod_script(file: &str, results: &Path, url: &str) -> String {
    use serde::Deserialize;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/scale/").to_owned() + file;
    let text = std::fs::read_to_string(&path).unwrap();
    let job = serde_norway::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).unwrap())
        .find(|doc| doc["kind"] == "Job")
        .unwrap_or_else(|| panic!("no Job in {path}"));
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        container["command"],
        serde_json::json!(["sh", "-c"]),
        "{path}"
    );
    container["args"][0]
        .as_str()
        .unwrap()
        .replace("/results", results.to_str().unwrap())
        .replace("h2sim client ", &format!("{BIN} client "))
        .replace("h2sim merge /", &format!("{BIN} merge /"))
        .replace(
            "http://nf-under-test:8080/nudm-sdm/v2/imsi-001010000000001/am-data",
            url,
        )
        .replace("-C 25000", "-C 50")
}

/// The Kubernetes example's pods run its scripts: a client whose requests
/// failed (here 404s) ran to its end, so its pod succeeds and the Job can
/// complete (`kubectl wait --for=condition=complete` returned only when
/// every request succeeded: the client exits 1 otherwise, and with
/// `backoffLimit: 0` one failed pod failed the Job); the merge pod
/// succeeds too, its last line the run's verdict. A bad option still
/// fails a pod.
#[test]
fn the_kubernetes_pods_complete_whatever_their_requests_and_the_merge_judges() {
    let scratch = scratch_dir("scale-kubernetes");
    let dir = scratch.path();
    let results = dir.join("results");
    std::fs::create_dir(&results).unwrap();
    let args = [
        "server",
        "-S",
        "http://127.0.0.1:0",
        "-m",
        "GET",
        "-p",
        "/ok",
        "-s",
        "200",
        "-q",
    ];
    let server = Server::start(dir, &args, 1);
    let pod = |script: &str, index: &str| {
        let out = Command::new("sh")
            .args(["-c", script])
            .env("JOB_COMPLETION_INDEX", index)
            .output()
            .unwrap();
        (out.status.code(), text(&out))
    };
    let ok = format!("{}/ok", server.url("http"));
    let missing = format!("{}/missing", server.url("http"));
    let merge = pod_script("merge.yaml", &results, "");
    for (url, verdict) in [
        (&ok, "the run passed"),
        (&missing, "the run failed: see the counts above"),
    ] {
        for index in ["0", "1"] {
            let (code, out) = pod(&pod_script("job.yaml", &results, url), index);
            assert_eq!(code, Some(0), "{url}: {out}");
            assert!(results.join(format!("part-{index}.json")).exists());
        }
        let (code, out) = pod(&merge, "");
        assert_eq!(code, Some(0), "{out}");
        assert_eq!(
            out.lines().last(),
            Some(format!("h2sim merge: {verdict}").as_str()),
            "{out}"
        );
    }
    let bad = pod_script("job.yaml", &results, &ok).replace("-C 50", "-C 0");
    let (code, out) = pod(&bad, "0");
    assert_eq!(code, Some(2), "{out}");
    let _ = server.stop();
}
