//! The report as JSON (`--json FILE`). Histograms travel as base64 of the
//! HdrHistogram V2 compressed encoding, which other HDR tools read too, so
//! runs from several machines can be merged into one distribution.

use std::time::Duration;

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde_json::{Value, json};

use super::{Latency, Notifications, Report, StepStats, StreamCap, Tls};

fn encode(latency: &Latency) -> String {
    let mut bytes = Vec::new();
    if V2DeflateSerializer::new()
        .serialize(&*latency.histogram(), &mut bytes)
        .is_err()
    {
        return String::new();
    }
    base64_encode(&bytes)
}

/// A distribution as `latency_json` wrote it: its histogram, and its
/// exact smallest and largest samples beside it.
fn decode(v: &Value) -> Option<Latency> {
    let bytes = base64_decode(v["histogram"].as_str()?)?;
    let histogram = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()?;
    let mut latency = Latency::default();
    if !latency.add(&histogram) {
        return None;
    }
    if let (Some(min), Some(max)) = (v["min_us"].as_u64(), v["max_us"].as_u64()) {
        latency.set_range(min, max);
    }
    Some(latency)
}

fn latency_json(latency: &Latency) -> Value {
    let h = latency.histogram();
    let us = |q: f64| latency.percentile(q).as_micros() as u64;
    json!({
        "count": latency.count(),
        "min_us": latency.min_micros(),
        "max_us": latency.max_micros(),
        "mean_us": latency.mean_micros(),
        "stdev_us": h.stdev(),
        "p50_us": us(50.0),
        "p90_us": us(90.0),
        "p99_us": us(99.0),
        "p99_9_us": us(99.9),
        "histogram": encode(latency),
    })
}

/// One step's figures as JSON.
fn step_json(s: &StepStats) -> Value {
    json!({
        "label": s.label,
        "started": s.started,
        "done": s.done,
        "succeeded": s.succeeded,
        "failed": s.failed,
        "unexpected_status": s.unexpected,
        "capture_failed": s.uncaptured,
        "errored": s.errored,
        "skipped": s.skipped,
        "latency": latency_json(&s.latency),
    })
}

fn step_from_json(v: &Value) -> Option<StepStats> {
    let n = |key: &str| count(&v[key]);
    Some(StepStats {
        label: v["label"].as_str().unwrap_or_default().to_owned(),
        started: n("started")?,
        done: n("done")?,
        succeeded: n("succeeded")?,
        failed: n("failed")?,
        unexpected: n("unexpected_status")?,
        uncaptured: n("capture_failed")?,
        errored: n("errored")?,
        skipped: n("skipped")?,
        latency: decode(&v["latency"])?,
    })
}

/// The report as a JSON document.
pub fn to_json(report: &Report) -> Value {
    let mut doc = core_json(report);
    if report.show_steps {
        doc["steps"] = report.steps.iter().map(step_json).collect();
    } else {
        // The steps' names alone, so that `h2sim merge` can tell reports
        // of different scenarios apart when their figures are not shown.
        doc["scenario"] = report.steps.iter().map(|s| json!(s.label)).collect();
    }
    if let Some(n) = &report.notifications {
        doc["notifications"] = json!({
            "received": n.received,
            "correlated": n.correlated,
            "delay": latency_json(&n.delay),
        });
    }
    doc
}

/// The figures every report has.
fn core_json(report: &Report) -> Value {
    let t = &report.traffic;
    let [c1, c2, c3, c4, c5] = report.status_classes();
    let codes: serde_json::Map<String, Value> = report
        .status_codes
        .iter()
        .map(|(code, n)| (code.to_string(), json!(n)))
        .collect();
    json!({
        "protocol": report.protocol,
        "tls": report.tls.as_ref().map(|t| json!({
            "protocol": t.protocol,
            "cipher": t.cipher,
            "server_temp_key": t.server_temp_key,
        })),
        "interrupted": report.interrupted,
        "elapsed_s": report.elapsed.as_secs_f64(),
        "requests_per_second": report.requests_per_second(),
        "requests": {
            "total": report.total,
            "started": report.started,
            "done": report.done,
            "succeeded": report.succeeded,
            "failed": report.failed,
            "errored": report.errored,
            "timeout": report.timed_out,
            "retried": report.retried,
            "resent_unprocessed": report.resent,
            "lost": report.lost,
            "skipped": report.skipped,
            "warmup": report.warmup,
            "missed": report.missed,
        },
        "status_codes": {
            "1xx": c1,
            "2xx": c2,
            "3xx": c3,
            "4xx": c4,
            "5xx": c5,
        },
        "status_code_counts": codes,
        "pushes": report.pushes,
        "connections": report.connections,
        "reconnects": report.reconnects,
        "unreachable": report.unreachable,
        "window_grown_to": report.window_grown_to,
        "window_held_at": report.window_held_at,
        "stream_cap": report.stream_cap.map(|c| json!({
            "limit": c.limit,
            "asked": c.asked,
        })),
        "connection_rps": report.connection_rps,
        "traffic": {
            "bytes_received": t.bytes_received,
            "bytes_sent": t.bytes_sent,
            "header_wire_bytes_received": t.header_wire_bytes_received,
            "header_bytes_received": t.header_bytes_received,
            "header_wire_bytes_sent": t.header_wire_bytes_sent,
            "header_bytes_sent": t.header_bytes_sent,
            "data_bytes_received": t.data_bytes_received,
            "data_bytes_sent": t.data_bytes_sent,
        },
        "latency": {
            "request": latency_json(&report.request_time),
            "connect": latency_json(&report.connect_time),
            "first_byte": latency_json(&report.first_byte),
            "request_first_byte": latency_json(&report.request_first_byte),
        },
    })
}

fn tls_from_json(v: &Value) -> Option<Tls> {
    let text = |key: &str| v[key].as_str().map(str::to_owned);
    Some(Tls {
        protocol: text("protocol")?,
        cipher: text("cipher")?,
        server_temp_key: text("server_temp_key")?,
    })
}

/// Counts past this are refused: JSON's exact integers end at 2^53, and
/// a thousand such reports still add up within a `u64`.
const MAX_COUNT: u64 = 1 << 53;

/// Runs longer than this (about 31 years) are refused, as no run lasts
/// that long and `Duration` takes no infinity.
const MAX_ELAPSED_S: f64 = 1e9;

/// A count as a report holds one: absent (a report of an earlier version
/// lacks the later ones) is 0; `None` when it is there and no count.
fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Null => Some(0),
        v => v.as_u64().filter(|&n| n <= MAX_COUNT),
    }
}

/// Reads a report written by `to_json` (for merging runs); what is not
/// one is named: the field whose value is out of place, or the part that
/// is missing. A count that is absent is 0 (a report of an earlier
/// version lacks the later ones); one that is there must be a count.
pub fn from_json(value: &Value) -> Result<Report, String> {
    if !value["requests"].is_object() {
        return Err("no requests object".to_owned());
    }
    // Every report since the first has these.
    for key in ["started", "done", "succeeded", "failed"] {
        if value["requests"][key].is_null() {
            return Err(format!("requests.{key}: missing"));
        }
    }
    let mut bad: Option<String> = None;
    let mut n = |path: &str| -> u64 {
        let v = path.split('.').fold(value, |v, key| &v[key]);
        count(v).unwrap_or_else(|| {
            bad.get_or_insert_with(|| format!("{path}: {v} is not a count"));
            0
        })
    };
    let mut report = Report {
        protocol: value["protocol"].as_str().map(str::to_owned),
        tls: tls_from_json(&value["tls"]),
        started: n("requests.started"),
        done: n("requests.done"),
        succeeded: n("requests.succeeded"),
        failed: n("requests.failed"),
        errored: n("requests.errored"),
        timed_out: n("requests.timeout"),
        retried: n("requests.retried"),
        resent: n("requests.resent_unprocessed"),
        warmup: n("requests.warmup"),
        missed: n("requests.missed"),
        lost: n("requests.lost"),
        interrupted: value["interrupted"].as_bool().unwrap_or(false),
        skipped: n("requests.skipped"),
        pushes: n("pushes"),
        connections: n("connections"),
        reconnects: n("reconnects"),
        unreachable: n("unreachable"),
        window_grown_to: n("window_grown_to"),
        window_held_at: n("window_held_at"),
        stream_cap: value["stream_cap"]["limit"]
            .as_u64()
            .map(|limit| StreamCap {
                limit,
                asked: n("stream_cap.asked"),
            }),
        connection_rps: value["connection_rps"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default(),
        ..Report::default()
    };
    // A report with no total (null) is of a run that asked for no count:
    // its total is what it got to, as `Report::settle` sets it.
    report.total = match value["requests"]["total"] {
        Value::Null => report.done + report.lost + report.skipped,
        _ => n("requests.total"),
    };
    let t = &mut report.traffic;
    for (key, field) in [
        ("bytes_received", &mut t.bytes_received),
        ("bytes_sent", &mut t.bytes_sent),
        (
            "header_wire_bytes_received",
            &mut t.header_wire_bytes_received,
        ),
        ("header_bytes_received", &mut t.header_bytes_received),
        ("header_wire_bytes_sent", &mut t.header_wire_bytes_sent),
        ("header_bytes_sent", &mut t.header_bytes_sent),
        ("data_bytes_received", &mut t.data_bytes_received),
        ("data_bytes_sent", &mut t.data_bytes_sent),
    ] {
        *field = n(&format!("traffic.{key}"));
    }
    if let Some(e) = bad {
        return Err(e);
    }
    let elapsed = &value["elapsed_s"];
    report.elapsed = match elapsed.as_f64() {
        Some(s) if (0.0..=MAX_ELAPSED_S).contains(&s) => Duration::from_secs_f64(s),
        None if elapsed.is_null() => Duration::ZERO,
        _ => return Err(format!("elapsed_s: {elapsed} is not a run's seconds")),
    };
    let codes = value["status_code_counts"]
        .as_object()
        .ok_or("status_code_counts: not an object")?;
    for (code, n) in codes {
        let parsed = code.parse::<u16>().ok().filter(|c| (100..600).contains(c));
        match (parsed, n.as_u64().filter(|&c| c <= MAX_COUNT)) {
            (Some(code), Some(n)) => {
                report.status_codes.insert(code, n);
            }
            _ => {
                return Err(format!(
                    "status_code_counts: \"{code}\": {n} is not a status's count"
                ));
            }
        }
    }
    let l = &value["latency"];
    let histogram = |key: &str| {
        decode(&l[key]).ok_or_else(|| format!("latency.{key}: not a latency histogram"))
    };
    report.request_time = histogram("request")?;
    report.connect_time = histogram("connect")?;
    report.first_byte = histogram("first_byte")?;
    report.request_first_byte = histogram("request_first_byte")?;
    let step = |(i, v): (usize, &Value)| {
        step_from_json(v).ok_or_else(|| format!("steps[{i}]: not a step's figures"))
    };
    if let Some(steps) = value.get("steps").and_then(Value::as_array) {
        report.steps = steps
            .iter()
            .enumerate()
            .map(step)
            .collect::<Result<_, _>>()?;
        report.show_steps = true;
    } else if let Some(labels) = value.get("scenario").and_then(Value::as_array) {
        let label = |v: &Value| v.as_str().map(|l| StepStats::new(l.to_owned()));
        report.steps = labels
            .iter()
            .map(label)
            .collect::<Option<_>>()
            .ok_or("scenario: not a list of step labels")?;
    }
    if let Some(n) = value.get("notifications") {
        let of = |key: &str| {
            count(&n[key]).ok_or_else(|| format!("notifications.{key}: {} is not a count", n[key]))
        };
        report.notifications = Some(Notifications {
            received: of("received")?,
            correlated: of("correlated")?,
            delay: decode(&n["delay"]).ok_or("notifications.delay: not a latency histogram")?,
        });
    }
    Ok(report)
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        for data in [&b""[..], b"f", b"fo", b"foo", b"foobar", &[0, 255, 128, 7]] {
            assert_eq!(base64_decode(&base64_encode(data)).unwrap(), data);
        }
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
    }

    /// Per-step figures and notifications go through JSON and merge step
    /// by step (`h2sim merge`); a report without them has no such keys.
    #[test]
    fn steps_and_notifications_merge() {
        let run = |ms: u64| {
            let mut r = Report {
                show_steps: true,
                skipped: 1,
                steps: vec![
                    StepStats::new("POST /s".into()),
                    StepStats::new("DELETE /s/__ID__".into()),
                ],
                notifications: Some(Notifications::default()),
                ..Report::default()
            };
            r.steps[0].started = 2;
            r.steps[0].done = 2;
            r.steps[0].succeeded = 1;
            r.steps[0].failed = 1;
            r.steps[0].unexpected = 1;
            r.steps[0].latency.record(Duration::from_millis(ms));
            r.steps[1].skipped = 1;
            if let Some(n) = r.notifications.as_mut() {
                n.received = 3;
                n.correlated = 2;
                n.delay.record(Duration::from_millis(ms));
            }
            from_json(&to_json(&r)).unwrap()
        };
        let mut merged = run(1);
        merged.merge(&run(50));
        assert_eq!(merged.steps.len(), 2);
        assert_eq!(merged.steps[0].label, "POST /s");
        assert_eq!(
            (
                merged.steps[0].done,
                merged.steps[0].unexpected,
                merged.steps[1].skipped
            ),
            (4, 2, 2)
        );
        assert_eq!(merged.steps[0].latency.count(), 2);
        assert!(merged.steps[0].latency.percentile(100.0) >= Duration::from_millis(49));
        assert_eq!(merged.skipped, 2);
        let n = merged.notifications.as_ref().unwrap();
        assert_eq!((n.received, n.correlated, n.delay.count()), (6, 4, 2));
        let text = merged.render();
        assert!(text.contains("  2 DELETE /s/__ID__: 0 started"), "{text}");
        assert!(
            text.contains("notifications: 6 received, 4 correlated"),
            "{text}"
        );
        let plain = to_json(&Report::default());
        assert!(plain.get("steps").is_none() && plain.get("notifications").is_none());
        // A single step's name travels without its figures, for merge to
        // compare, and comes back without a steps section to show.
        let single = Report {
            steps: vec![StepStats::new("1 GET /x".into())],
            ..Report::default()
        };
        let back = from_json(&to_json(&single)).unwrap();
        assert_eq!(back.steps.len(), 1);
        assert_eq!(back.steps[0].label, "1 GET /x");
        assert!(!back.show_steps && !back.render().contains("steps:"));
        assert!(!Report::default().render().contains("steps:"));
    }

    #[test]
    fn reports_from_two_machines_merge() {
        let mut a = Report {
            total: 2,
            started: 2,
            reconnects: 1,
            resent: 2,
            ..Report::default()
        };
        a.record_status(200);
        a.record_status(503);
        a.request_time.record(Duration::from_millis(1));
        a.request_time.record(Duration::from_millis(2));
        let mut b = Report {
            total: 1,
            started: 1,
            resent: 3,
            ..Report::default()
        };
        b.record_status(200);
        b.request_time.record(Duration::from_millis(100));
        a.capped(100, 200);
        b.capped(50, 64);
        let a2 = from_json(&to_json(&a)).unwrap();
        let b2 = from_json(&to_json(&b)).unwrap();
        let mut merged = a2;
        merged.merge(&b2);
        assert_eq!((merged.total, merged.done), (3, 3));
        assert_eq!(merged.status_codes.get(&200), Some(&2));
        assert_eq!(merged.status_codes.get(&503), Some(&1));
        assert_eq!(merged.reconnects, 1);
        assert_eq!(merged.resent, 5);
        // Merged runs held by stream limits: the tighter limit, the larger ask.
        let cap = StreamCap {
            limit: 50,
            asked: 200,
        };
        assert_eq!(merged.stream_cap, Some(cap));
        // A report whose total is null (no count asked) totals its done
        // and skipped, so that merged totals add up.
        let mut null = to_json(&b);
        null["requests"]["total"] = serde_json::Value::Null;
        assert_eq!(from_json(&null).unwrap().total, 1);
        // A merged report written again reads back the same.
        let again = from_json(&to_json(&merged)).unwrap();
        assert_eq!(to_json(&again), to_json(&merged));
        assert_eq!(merged.request_time.count(), 3);
        // Exact, through JSON twice, where the histogram's buckets say
        // 1,000-1,000 µs and 99,968-100,031 µs.
        let exact = &to_json(&again)["latency"]["request"];
        assert_eq!(
            (exact["min_us"].as_u64(), exact["max_us"].as_u64()),
            (Some(1_000), Some(100_000))
        );
        assert!(merged.request_time.percentile(100.0) >= Duration::from_millis(99));
    }

    /// What is not a report's is named, field and all, where a count of
    /// 2^64 - 1 overflowed the merge's sum, seconds of 1e308 panicked in
    /// `Duration`, and -5, "many" or a missing count were taken as 0.
    #[test]
    fn out_of_place_values_are_named() {
        let good = to_json(&Report::default());
        let bad = |edit: &dyn Fn(&mut Value)| {
            let mut v = good.clone();
            edit(&mut v);
            from_json(&v).unwrap_err()
        };
        assert_eq!(
            bad(&|v| v["requests"]["done"] = u64::MAX.into()),
            "requests.done: 18446744073709551615 is not a count"
        );
        assert_eq!(
            bad(&|v| v["requests"]["done"] = (-5).into()),
            "requests.done: -5 is not a count"
        );
        assert_eq!(
            bad(&|v| v["traffic"]["bytes_sent"] = "many".into()),
            "traffic.bytes_sent: \"many\" is not a count"
        );
        assert_eq!(
            bad(&|v| v["requests"] = json!({})),
            "requests.started: missing"
        );
        assert_eq!(
            bad(&|v| v["elapsed_s"] = 1e308.into()),
            "elapsed_s: 1e+308 is not a run's seconds"
        );
        assert_eq!(
            bad(&|v| v["status_code_counts"] = json!({"abc": 5})),
            "status_code_counts: \"abc\": 5 is not a status's count"
        );
        assert_eq!(
            bad(&|v| v["notifications"] = json!({"received": -1})),
            "notifications.received: -1 is not a count"
        );
        assert!(from_json(&good).is_ok());
    }
}
