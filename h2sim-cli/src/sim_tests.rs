//! The whole simulator in memory: the client application on a client
//! connection against the server application on a server connection, on a
//! virtual clock (the core's `Pair`), with no sockets and no runtime.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2sim_proto::pair::Pair;
use h2sim_proto::{Application, Config, Connection, Endpoint, HeaderField};

use crate::client::app::{ClientApp, Plan};
use crate::client::scenario::Step;
use crate::client::symbol::Symbol;
use crate::report::Report;
use crate::server::app::{ServerApp, Shared, Totals};
use crate::server::files::{Files, NotServed};
use crate::server::rules::{Body, Delay, Push, Reply, Rule};
use crate::trace::{Memory, Trace};

fn peer() -> SocketAddr {
    "127.0.0.1:40000".parse().unwrap()
}

fn step(method: &str, path: &str, body: &str) -> Step {
    Step {
        method: Bytes::copy_from_slice(method.as_bytes()),
        scheme: "http".into(),
        authority: "nf.example:8080".into(),
        path: Bytes::copy_from_slice(path.as_bytes()),
        headers: vec![HeaderField::new("content-type", "application/json")],
        body: Bytes::copy_from_slice(body.as_bytes()),
        ..Step::default()
    }
}

fn plan(steps: Vec<Step>, scenarios: u64, slots: usize) -> Plan {
    let mut plan = Plan::new(steps, Some(scenarios), slots);
    plan.set_symbols(vec![Symbol::parse("__MDN__=01092%06d").unwrap()]);
    plan
}

fn shared(rules: Vec<Rule>, trace: Option<Arc<dyn Trace>>) -> Arc<Shared> {
    Arc::new(Shared::new(rules, trace, None))
}

/// Runs client against server until the client's connection is closed,
/// moving bytes and advancing the virtual clock to the next deadline; a
/// client that wants a new connection gets one (and the server a fresh
/// connection too), as the adapters do.
fn run(plan: Arc<Plan>, shared: Arc<Shared>, http1: bool) -> (Report, Totals, Duration) {
    let (report, totals, elapsed, _) = run_with(plan, shared, http1, |_| {});
    (report, totals, elapsed)
}

/// `run`, with `configure` applied to both cores, and the connections the
/// client used.
fn run_with(
    plan: Arc<Plan>,
    shared: Arc<Shared>,
    http1: bool,
    configure: impl Fn(&mut Config),
) -> (Report, Totals, Duration, u32) {
    let start = Instant::now();
    let mut now = start;
    let mut app = Some(ClientApp::new(
        plan.clone(),
        Duration::from_micros(50),
        Bytes::from_static(b"nf.example:8080"),
    ));
    let mut connections = 0;
    while let Some(client_app) = app.take() {
        connections += 1;
        assert!(connections <= 1000, "reconnects bounded");
        let mut config = Config::default();
        configure(&mut config);
        let conn = if http1 {
            Connection::client_http1(config.clone(), now).unwrap()
        } else {
            Connection::client(config.clone(), now).unwrap()
        };
        let client = Endpoint::new(conn, client_app, now);
        let server = Endpoint::new(
            Connection::server(config, now).unwrap(),
            ServerApp::new(shared.clone(), peer()),
            now,
        );
        // Whole deliveries, as a socket read of everything written would
        // be; a server that closes closes its transport, and the client
        // reads end of stream.
        let mut pair = Pair::join(client, server, now);
        for _ in 0..100_000 {
            pair.drive();
            if pair.client.is_closed() || pair.jump().is_none() {
                break;
            }
        }
        now = pair.now;
        // The server read the end of the client's transport in `drive`.
        let (client, _) = pair.into_sides();
        assert!(client.is_closed(), "the client finished and closed");
        let (_, mut client_app) = client.into_parts();
        if client_app.wants_reconnect() {
            app = Some(client_app);
        } else {
            let mut report = client_app.into_report();
            report.add_latencies(&plan.latencies.take());
            let totals = shared.totals.lock().unwrap().clone();
            assert_eq!(report.done, report.succeeded + report.failed);
            // Every answered request's time, once (its step's latency).
            let answered = report.done - report.errored;
            assert_eq!(report.request_time.count(), answered);
            return (report, totals, now - start, connections);
        }
    }
    unreachable!("the loop returns")
}

fn rule(method: &str, prefix: &str, status: u16, body: Body) -> Rule {
    Rule {
        path_prefix: Some(prefix.into()),
        reply: Reply {
            status,
            headers: vec![HeaderField::new("content-type", "application/json")],
            body,
        },
        ..Rule::new(method)
    }
}

#[test]
fn symbol_replacement_reaches_path_header_and_body() {
    let trace = Arc::new(Memory::default());
    let mut s = step("POST", "/user/__MDN__", r#"{ "USER_MDN" : "__MDN__" }"#);
    s.headers.push(HeaderField::new("x-mdn", "__MDN__"));
    let rules = vec![rule(
        "POST",
        "/user/",
        201,
        Body::from_text(r#"{"id":"${suffix}"}"#),
    )];
    for http1 in [false, true] {
        let (report, totals, _) = run(
            Arc::new(plan(vec![s.clone()], 3, 1)),
            shared(rules.clone(), Some(trace.clone())),
            http1,
        );
        assert_eq!(
            (report.started, report.done, report.succeeded, report.failed),
            (3, 3, 3, 0)
        );
        assert_eq!(report.status_classes()[1], 3);
        assert_eq!(totals.rule_hits, vec![3]);
        assert!(report.traffic.bytes_sent > 0 && report.traffic.data_bytes_received > 0);
    }
    let lines = trace.lines().join("\n");
    for n in 0..3 {
        let mdn = format!("0109200000{n}");
        assert!(lines.contains(&format!("POST /user/{mdn}")), "{lines}");
        assert!(
            lines.contains(&format!("x-mdn = {mdn}")),
            "headers kept with -R: {lines}"
        );
        assert!(
            lines.contains(&format!(r#"{{ "USER_MDN" : "{mdn}" }}"#)),
            "{lines}"
        );
        assert!(lines.contains(&format!(r#"{{"id":"{mdn}"}}"#)), "{lines}");
    }
}

#[test]
fn three_step_scenarios_run_in_order_on_their_slot() {
    let trace = Arc::new(Memory::default());
    let steps = vec![
        step("POST", "/user/__MDN__", "{}"),
        step("GET", "/user/__MDN__", ""),
        step("DELETE", "/user/__MDN__", ""),
    ];
    let rules = vec![
        rule("POST", "/user/", 200, Body::Empty),
        rule("GET", "/user/", 200, Body::Empty),
        rule("DELETE", "/user/", 200, Body::Empty),
    ];
    let (report, totals, _) = run(
        Arc::new(plan(steps, 4, 2)),
        shared(rules, Some(trace.clone())),
        false,
    );
    assert_eq!(report.done, 12);
    assert_eq!(totals.rule_hits, vec![4, 4, 4]);
    let lines = trace.lines();
    for n in 0..4 {
        let mdn = format!("/user/0109200000{n}");
        let order: Vec<&str> = lines
            .iter()
            .filter(|l| l.starts_with("REQUEST") && l.contains(&mdn))
            .map(|l| {
                l.split(": ")
                    .nth(1)
                    .unwrap_or("")
                    .split(' ')
                    .next()
                    .unwrap_or("")
            })
            .collect();
        assert_eq!(order, ["POST", "GET", "DELETE"], "scenario {n}");
    }
}

#[test]
fn pushes_are_received_and_counted() {
    let mut r = rule(
        "GET",
        "/user1k/",
        200,
        Body::Fixed(crate::body::sized("1k").unwrap()),
    );
    r.pushes = vec![
        Push {
            path: "/user1k/name1".into(),
            reply: Reply {
                body: Body::from_text("1k_name1"),
                ..Reply::default()
            },
        },
        Push {
            path: "/user1k/name2".into(),
            reply: Reply {
                body: Body::from_text("1k_name2"),
                ..Reply::default()
            },
        },
    ];
    let (report, totals, _) = run(
        Arc::new(plan(vec![step("GET", "/user1k/nobody", "")], 5, 5)),
        shared(vec![r], None),
        false,
    );
    assert_eq!(report.done, 5);
    assert_eq!(report.pushes, 10);
    assert_eq!(totals.pushes, 10);
    assert_eq!(report.traffic.data_bytes_received, 5 * (1024 + 16));
}

#[test]
fn unmatched_requests_get_404_and_fail_the_run() {
    let (report, totals, _) = run(
        Arc::new(plan(vec![step("GET", "/nothing/here", "")], 2, 1)),
        shared(vec![rule("GET", "/user/", 200, Body::Empty)], None),
        false,
    );
    assert_eq!(
        (report.done, report.failed, report.status_classes()[3]),
        (2, 2, 2)
    );
    assert_eq!(totals.not_found, 2);
    assert!(!report.is_success());
}

/// A reply head above the client's SETTINGS_MAX_HEADER_LIST_SIZE cannot
/// be sent (RFC 9113 §10.5.1): the server resets the stream, and the
/// client counts a failure instead of waiting for ever.
#[test]
fn a_reply_above_the_clients_header_list_size_resets_the_stream() {
    let mut r = rule("GET", "/user/", 200, Body::Empty);
    r.reply
        .headers
        .push(HeaderField::new("x-large", "v".repeat(400)));
    let (report, totals, _, _) = run_with(
        Arc::new(plan(vec![step("GET", "/user/1", "")], 3, 1)),
        shared(vec![r], None),
        false,
        |config| config.max_header_list_size = 300,
    );
    assert_eq!((report.done, report.failed), (3, 3));
    assert_eq!((totals.resets, totals.responses), (3, 0));
}

#[test]
fn delays_hold_responses_back_on_the_virtual_clock() {
    let mut r = rule("GET", "/slow/", 200, Body::Empty);
    r.delay = Delay::parse("40-60");
    let (report, _, elapsed) = run(
        Arc::new(plan(vec![step("GET", "/slow/x", "")], 4, 4)),
        shared(vec![r], None),
        false,
    );
    assert_eq!(report.done, 4);
    let p50 = report.request_time.percentile(50.0);
    assert!(
        p50 >= Duration::from_millis(40) && p50 <= Duration::from_millis(61),
        "{p50:?}"
    );
    assert!(elapsed >= Duration::from_millis(40));
}

#[test]
fn fixed_rate_runs_measure_from_the_intended_start() {
    let mut p = plan(vec![step("GET", "/slow/x", "")], 10, 1);
    // 100 per second, but every response takes 50 ms and there is one slot
    // that may not grow: each request starts late, and its latency counts
    // the wait.
    p.interval = Some(Duration::from_millis(10));
    let mut r = rule("GET", "/slow/", 200, Body::Empty);
    r.delay = Delay::parse("50");
    let (report, _, elapsed) = run(Arc::new(p), shared(vec![r], None), false);
    assert_eq!(report.done, 10);
    assert!(
        elapsed >= Duration::from_millis(500),
        "one at a time: {elapsed:?}"
    );
    let max = report.request_time.percentile(100.0);
    assert!(
        max >= Duration::from_millis(400),
        "latency from the intended send time, not the actual: {max:?}"
    );
}

/// Issue 10 item 1: a server faster than one send interval left every slot
/// idle between sends, and the client went away after the first response.
#[test]
fn fixed_rate_waits_for_the_next_send_time_instead_of_leaving() {
    for http1 in [false, true] {
        let mut p = plan(vec![step("GET", "/user/x", "")], 20, 4);
        p.interval = Some(Duration::from_millis(10));
        let (report, _, elapsed) = run(
            Arc::new(p),
            shared(vec![rule("GET", "/user/", 200, Body::Empty)], None),
            http1,
        );
        assert_eq!(
            (report.started, report.done, report.succeeded),
            (20, 20, 20),
            "http1={http1}"
        );
        assert!(
            elapsed >= Duration::from_millis(190),
            "paced at 100/s: {elapsed:?}"
        );
        assert!(report.is_success());
    }
}

/// When -P is below rate × latency the window grows (to a bound), so the
/// rate is kept and latency stays the server's.
#[test]
fn fixed_rate_grows_the_window_when_the_rate_needs_it() {
    let mut p = plan(vec![step("GET", "/slow/x", "")], 20, 1);
    p.interval = Some(Duration::from_millis(10));
    p.max_slots = 16;
    let mut r = rule("GET", "/slow/", 200, Body::Empty);
    r.delay = Delay::parse("50");
    let (report, _, elapsed) = run(Arc::new(p), shared(vec![r], None), false);
    assert_eq!(report.done, 20);
    assert!(
        elapsed < Duration::from_millis(300),
        "rate kept: {elapsed:?}"
    );
    assert!(report.request_time.percentile(100.0) < Duration::from_millis(60));
    // 50 ms answers at one send per 10 ms: about 6 in flight, at most 16.
    assert!(
        (5..=16).contains(&report.window_grown_to),
        "{}",
        report.window_grown_to
    );
    assert!(
        report.render().contains(&format!(
            "growing the in-flight window to {}",
            report.window_grown_to
        )),
        "{}",
        report.render()
    );
}

/// A saturated fixed-rate `--duration` run reports the sends it never made.
#[test]
fn fixed_rate_duration_reports_missed_sends() {
    let mut p = Plan::new(vec![step("GET", "/slow/x", "")], None, 1);
    p.interval = Some(Duration::from_millis(10));
    let start = Instant::now();
    p.stop_at = Some(start + Duration::from_secs(1));
    let mut r = rule("GET", "/slow/", 200, Body::Empty);
    r.delay = Delay::parse("50");
    let (report, _, _) = run(Arc::new(p), shared(vec![r], None), false);
    // One slot, 50 ms each: about 20 of the 100 intended sends happen.
    assert!((19..=21).contains(&report.started), "{}", report.started);
    assert_eq!(report.started + report.missed, 100, "{report:?}");
    assert!(!report.is_success(), "a rate not kept fails the run");
    assert!(
        report
            .render()
            .contains(&format!("{} sends missed", report.missed))
    );
}

/// A paced `--duration` run of GET /user/x (answered at once) that
/// started `started_ago` before the client first runs: one send every
/// `interval` for `duration`, up to `max_slots` in flight. Returns what
/// was (started, missed, succeeded), and whether the run counts as a
/// success.
fn late_paced_run(
    interval_ms: u64,
    started_ago_ms: u64,
    duration_ms: u64,
    max_slots: usize,
    http1: bool,
) -> ((u64, u64, u64), bool) {
    let mut p = Plan::new(vec![step("GET", "/user/x", "")], None, 1);
    p.interval = Some(Duration::from_millis(interval_ms));
    p.max_slots = max_slots;
    let run_start = Instant::now()
        .checked_sub(Duration::from_millis(started_ago_ms))
        .unwrap();
    p.paced_from = Some(run_start);
    p.stop_at = Some(run_start + Duration::from_millis(duration_ms));
    let (report, _, _) = run(
        Arc::new(p),
        shared(vec![rule("GET", "/user/", 200, Body::Empty)], None),
        http1,
    );
    (
        (report.started, report.missed, report.succeeded),
        report.is_success(),
    )
}

/// A client that wakes up a few milliseconds after the end of a paced
/// `--duration` run (a loaded machine; CI once saw `-T 1000 --duration 2s`
/// miss its last send this way and fail) still sends what was due before
/// the end: here 20 sends due every millisecond, the client first running
/// 5 ms after the last was due (five intervals late).
#[test]
fn fixed_rate_sends_due_before_the_end_survive_a_late_wake_up() {
    let (counts, success) = late_paced_run(1, 25, 20, 64, false);
    assert_eq!(counts, (20, 0, 20));
    assert!(success);
}

/// Issue 10 item 1: a paced `--duration` run intends rate × duration
/// sends, counted from the run's start. The send times used to start at
/// the connection's start instead, so the time spent connecting (here
/// 15 ms, more than one interval) dropped intended sends that were neither
/// sent nor counted as missed (`-T 1000 --duration 10s`: 9999 sent, "0
/// sends missed").
#[test]
fn fixed_rate_send_times_count_from_the_run_start() {
    for http1 in [false, true] {
        let (counts, success) = late_paced_run(10, 15, 100, 1, http1);
        assert_eq!(
            counts,
            (10, 0, 10),
            "sends due at 0, 10, … 90 ms, http1={http1}"
        );
        assert!(success);
    }
}

/// Issue 10 item 5: h2load's definitions hold whatever happens; warm-up
/// requests are counted nowhere but in `warmup`.
#[test]
fn warmup_requests_count_in_neither_started_nor_done() {
    let mut p = plan(vec![step("GET", "/user/x", "")], 10, 1);
    p.interval = Some(Duration::from_millis(10));
    p.max_slots = 1;
    p.warmup_until = Some(Instant::now() + Duration::from_millis(35));
    let (report, _, _) = run(
        Arc::new(p),
        shared(vec![rule("GET", "/user/", 200, Body::Empty)], None),
        false,
    );
    assert_eq!(report.warmup, 4, "sent at 0, 10, 20, 30 ms");
    assert_eq!((report.started, report.done, report.succeeded), (6, 6, 6));
}

/// Warm-up responses count in no traffic figure either: h2load counts
/// bytes from its main phase, and so must `traffic:` and `MB/s`.
#[test]
fn warmup_traffic_is_not_counted() {
    let mut p = plan(vec![step("GET", "/user/x", "")], 10, 1);
    p.interval = Some(Duration::from_millis(10));
    p.max_slots = 1;
    p.warmup_until = Some(Instant::now() + Duration::from_millis(35));
    let body = Body::Fixed(Bytes::from_static(b"0123456789"));
    let (report, _, _) = run(
        Arc::new(p),
        shared(vec![rule("GET", "/user/", 200, body)], None),
        false,
    );
    assert_eq!((report.warmup, report.done), (4, 6));
    assert_eq!(report.traffic.data_bytes_received, 60);
}

/// A closed-loop run with more streams (-P 50) than the server allows
/// (MAX_CONCURRENT_STREAMS 5, RFC 9113 §5.1.2) keeps the rest waiting in
/// the client, not queued in the core: each request's time is the
/// server's 10 ms, as h2load (which times from the HEADERS frame) reports
/// it, not the 100 ms that ten waves of five queued behind each other took.
#[test]
fn closed_loop_requests_keep_within_the_servers_stream_limit() {
    let mut r = rule("GET", "/slow/", 200, Body::Empty);
    r.delay = Delay::parse("10");
    let (report, _, elapsed, _) = run_with(
        Arc::new(plan(vec![step("GET", "/slow/x", "")], 50, 50)),
        shared(vec![r], None),
        false,
        |c| c.max_concurrent_streams = 5,
    );
    assert_eq!(report.succeeded, 50);
    assert!(elapsed >= Duration::from_millis(100), "{elapsed:?}");
    let max = report.request_time.percentile(100.0);
    assert!(max < Duration::from_millis(12), "{max:?}");
}

/// A paced run the server's stream limit holds back does not grow its
/// window past that limit, and its report says the rate was not kept
/// (it said "kept its rate by growing the window to 64").
#[test]
fn a_paced_run_held_by_the_servers_stream_limit_says_it_missed() {
    let mut p = Plan::new(vec![step("GET", "/slow/x", "")], None, 1);
    p.interval = Some(Duration::from_millis(1));
    p.max_slots = 64;
    // The sends are counted from the plan's own start, not from when the
    // simulation begins (a busy machine put that 7 ms later: 193 intended).
    let start = Instant::now();
    p.paced_from = Some(start);
    p.stop_at = Some(start + Duration::from_millis(200));
    let mut r = rule("GET", "/slow/", 200, Body::Empty);
    r.delay = Delay::parse("10");
    let (report, _, _, _) = run_with(Arc::new(p), shared(vec![r], None), false, |c| {
        c.max_concurrent_streams = 5
    });
    // Five every 10 ms: about 100 of the 200 intended sends.
    let (started, missed) = (report.started, report.missed);
    assert!((95..=110).contains(&started), "{started} started");
    assert_eq!(started + missed, 200, "{started} started, {missed} missed");
    assert!(report.window_grown_to <= 5, "{}", report.window_grown_to);
    let text = report.render();
    assert!(
        text.contains(&format!(
            "-T did not keep its rate: {} sends missed",
            report.missed
        )),
        "{text}"
    );
    assert!(report.request_time.percentile(100.0) >= Duration::from_millis(90));
}

/// Issue 10 item 7: `--requests-per-connection N` goes away after N
/// requests and goes on on a new connection; reconnects are counted.
#[test]
fn requests_per_connection_churns_connections() {
    let log = Arc::new(Memory::default());
    let rules = vec![
        rule("POST", "/user/", 201, Body::Empty),
        rule("GET", "/user/", 200, Body::Empty),
    ];
    for http1 in [false, true] {
        log.0.lock().unwrap().clear();
        let mut p = plan(
            vec![
                step("POST", "/user/__MDN__", "{}"),
                step("GET", "/user/__MDN__", ""),
            ],
            5,
            2,
        );
        p.requests_per_connection = Some(3);
        p.log = Some(log.clone());
        let p = Arc::new(p);
        let (report, totals, _, connections) =
            run_with(p, shared(rules.clone(), None), http1, |_| {});
        assert_eq!((report.done, report.succeeded), (10, 10), "http1={http1}");
        assert_eq!(connections, 4, "10 requests, 3 per connection");
        assert_eq!((report.connections, report.reconnects), (4, 3));
        assert_eq!(totals.rule_hits, vec![5, 5]);
        // HTTP/1.1's GOAWAY is the last request's `connection: close`; the
        // last connection's one request was out before the run ended, so
        // that connection just closes.
        let lines = log.lines();
        let count = |ended: &str| lines.iter().filter(|l| l.contains(ended)).count();
        if http1 {
            assert_eq!(
                count("DISCONNECTED by connection: close sent"),
                3,
                "{lines:?}"
            );
            assert_eq!(count("DISCONNECTED by local close"), 1, "{lines:?}");
        } else {
            assert_eq!(count("DISCONNECTED by local GOAWAY"), 4, "{lines:?}");
        }
    }
}

/// `--timeout` on a request on the wire: HTTP/2 resets the stream and
/// keeps h2simple's line; HTTP/1.1 can only close the connection, and
/// its line says so in its own words, with no HTTP/2 code (`aborted
/// (CANCEL)`) nor resets and streams (`rsts`, `streams`) it does not have.
#[test]
fn a_timed_out_request_is_told_in_the_words_of_the_protocol() {
    let log = Arc::new(Memory::default());
    let mut slow = rule("GET", "/slow/", 200, Body::Empty);
    slow.delay = Delay::parse("500");
    for http1 in [false, true] {
        log.0.lock().unwrap().clear();
        let mut p = plan(vec![step("GET", "/slow/__MDN__", "")], 1, 1);
        p.timeout = Some(Duration::from_millis(50));
        p.log = Some(log.clone());
        let (report, _, _) = run(Arc::new(p), shared(vec![slow.clone()], None), http1);
        assert_eq!((report.done, report.timed_out), (1, 1), "http1={http1}");
        let lines = log.lines();
        let line = lines
            .iter()
            .find(|l| l.contains("DISCONNECTED"))
            .unwrap_or_else(|| panic!("no DISCONNECTED line: {lines:?}"));
        if http1 {
            assert!(
                line.contains("DISCONNECTED by request timeout: ")
                    && line.ends_with("for 1 reqs 0 rsps 1 unanswered)"),
                "{line}"
            );
        } else {
            assert!(
                line.contains("DISCONNECTED by local GOAWAY: ")
                    && line.ends_with("for 1 reqs 0 rsps 1 rsts 1 streams)"),
                "{line}"
            );
        }
    }
}

/// A server that takes 37 requests per connection (`Config::max_requests`)
/// leaves the requests behind the 37th unprocessed: above its GOAWAY's last
/// stream (RFC 9113 §6.8) or pipelined behind its `connection: close`
/// (RFC 9112 §9.6). The client sends them again on the next connection,
/// without `-r`, and none fails: the server takes each request once.
#[test]
fn requests_a_server_did_not_process_go_again_on_the_next_connection() {
    let rules = vec![rule("GET", "/user/", 200, Body::Empty)];
    for http1 in [false, true] {
        let p = Arc::new(plan(vec![step("GET", "/user/__MDN__", "")], 500, 10));
        let (report, totals, _, connections) =
            run_with(p, shared(rules.clone(), None), http1, |config| {
                config.max_requests = std::num::NonZeroU32::new(37);
                config.http1.max_pipeline = 10;
            });
        assert_eq!(
            (report.done, report.succeeded, report.failed),
            (500, 500, 0),
            "http1={http1}"
        );
        assert_eq!(report.started, 500, "a request sent again starts once");
        assert!(report.resent > 0, "http1={http1}: nothing was resent");
        assert_eq!(report.retried, 0, "not -r's retries");
        assert_eq!(totals.requests, 500, "each request taken once");
        assert_eq!(connections, 14, "500 requests, 37 per connection");
    }
}

/// Issue 10 items 14 and 16: long transactions are numbered in order and
/// compared with `>=`; pushes are dumped with their promised response.
#[test]
fn slow_dumps_are_numbered_and_pushes_dumped() {
    let log = Arc::new(Memory::default());
    let trace = Arc::new(Memory::default());
    let mut p = plan(vec![step("GET", "/slow/x", "")], 3, 1);
    p.slow = Some(Duration::from_millis(50));
    p.log = Some(log.clone());
    p.trace = Some(trace.clone());
    let mut r = rule("GET", "/slow/", 200, Body::Empty);
    r.delay = Delay::parse("50");
    r.pushes = vec![Push {
        path: "/slow/pushed".into(),
        reply: Reply {
            body: Body::from_text("pushed-body"),
            ..Reply::default()
        },
    }];
    let (report, _, _) = run(Arc::new(p), shared(vec![r], None), false);
    assert_eq!(report.done, 3);
    let lines = log.lines().join("\n");
    for n in 1..=3 {
        assert!(
            lines.contains(&format!("LONG TRANSACTION({n}) DETECTED: elapsed_msec=50")),
            "{lines}"
        );
    }
    let dumps = trace.lines().join("\n");
    assert!(
        dumps.contains(
            "PUSH_PROMISE[0/0,0]: promised stream 2 GET http://nf.example:8080/slow/pushed"
        ),
        "{dumps}"
    );
    assert!(dumps.contains("PUSH_RESPONSE[2]: 200"), "{dumps}");
    assert!(dumps.contains("pushed-body"), "{dumps}");
}

/// `-v` on both sides: every frame of the exchange reaches the app's frame
/// sink (memory here, stdout in the binary), not stdout behind its back,
/// in the trace format: the client's SETTINGS, HEADERS and DATA it sent
/// and received, and the server's the same, after the peer's address.
#[test]
fn frame_traces_go_to_the_apps_frame_sink() {
    let client_frames = Arc::new(Memory::default());
    let server_frames = Arc::new(Memory::default());
    let mut p = plan(vec![step("POST", "/user/x", "{}")], 1, 1);
    p.frames = Some(client_frames.clone());
    let mut server = Shared::new(vec![rule("POST", "/user/", 201, Body::Empty)], None, None);
    server.frames = Some(server_frames.clone());
    let (report, _, _, _) = run_with(Arc::new(p), Arc::new(server), false, |config| {
        config.trace_frames = true;
    });
    assert_eq!(report.succeeded, 1);
    let client = client_frames.lines();
    for line in [
        "send SETTINGS",
        "recv SETTINGS ACK",
        "send HEADERS stream=1 block=",
        "send DATA stream=1 length=2 END_STREAM",
        "recv HEADERS stream=1 block=",
        "send GOAWAY",
    ] {
        assert!(
            client.iter().any(|l| l.starts_with(line)),
            "{line:?} in {client:#?}"
        );
    }
    let server = server_frames.lines();
    for line in [
        "[127.0.0.1:40000] recv SETTINGS",
        "[127.0.0.1:40000] recv HEADERS stream=1 block=",
        "[127.0.0.1:40000] recv DATA stream=1 length=2 END_STREAM",
        "[127.0.0.1:40000] send HEADERS stream=1 block=",
    ] {
        assert!(
            server.iter().any(|l| l.starts_with(line)),
            "{line:?} in {server:#?}"
        );
    }
    assert!(
        server.iter().all(|l| l.starts_with("[127.0.0.1:40000] ")),
        "{server:#?}"
    );
}

/// `-d` files from memory, by directory and request path after the
/// prefix, with a count of the contents read.
#[derive(Default)]
struct MemoryFiles {
    files: HashMap<(PathBuf, String), Bytes>,
    reads: AtomicUsize,
}

impl MemoryFiles {
    fn new(files: HashMap<(PathBuf, String), Bytes>) -> Self {
        MemoryFiles {
            files,
            ..MemoryFiles::default()
        }
    }

    fn get(&self, dir: &Path, relative: &str) -> Result<&Bytes, NotServed> {
        self.files
            .get(&(dir.to_path_buf(), relative.to_owned()))
            .ok_or(NotServed::Missing)
    }
}

impl Files for MemoryFiles {
    fn read(&self, dir: &Path, relative: &str) -> Result<Bytes, NotServed> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.get(dir, relative).cloned()
    }

    fn size(&self, dir: &Path, relative: &str) -> Result<u64, NotServed> {
        self.get(dir, relative).map(|bytes| bytes.len() as u64)
    }
}

/// Issue 11 §8: a `-d DIR` rule reads through the `Files` it is given
/// (memory here, no file system); a file it does not have is a 404.
#[test]
fn directory_rules_serve_the_files_they_are_given() {
    let mut r = rule("GET", "/files/", 200, Body::Empty);
    r.dir = Some(PathBuf::from("/srv/www"));
    let mut files = HashMap::new();
    files.insert(
        (PathBuf::from("/srv/www"), "a.json".to_owned()),
        Bytes::from_static(b"{\"a\":1}"),
    );
    let serve = |path: &str| {
        let mut shared = Shared::new(vec![r.clone()], None, None);
        shared.files = Arc::new(MemoryFiles::new(files.clone()));
        run(
            Arc::new(plan(vec![step("GET", path, "")], 3, 1)),
            Arc::new(shared),
            false,
        )
    };
    let (report, totals, _) = serve("/files/a.json");
    assert_eq!((report.done, report.succeeded), (3, 3));
    assert_eq!(report.traffic.data_bytes_received, 3 * 7);
    assert_eq!(totals.rule_hits, vec![3]);
    let (report, _, _) = serve("/files/missing.json");
    assert_eq!(
        (report.done, report.failed, report.status_classes()[3]),
        (3, 3, 3)
    );
}

/// RFC 9110 §9.3.2: a HEAD that only GET rules match gets the GET's
/// status and fields, the `content-length` of the body the GET would have
/// had (a template's; a file's, from its size alone) and no content, over
/// both protocols. It is a hit of the GET rule, held back by its delay,
/// and sends no pushes.
#[test]
fn head_is_answered_by_get_rules_without_content() {
    let mut user = rule(
        "GET",
        "/user/",
        200,
        Body::from_text(r#"{"user":"${suffix}"}"#),
    );
    user.delay = Delay::parse("20");
    user.pushes = vec![Push {
        path: "/user/pushed".into(),
        reply: Reply {
            body: Body::from_text("pushed"),
            ..Reply::default()
        },
    }];
    let mut files = rule("GET", "/files/", 200, Body::Empty);
    files.dir = Some(PathBuf::from("/srv/www"));
    let stored = HashMap::from([(
        (PathBuf::from("/srv/www"), "a.json".to_owned()),
        Bytes::from_static(b"{\"a\":1}"),
    )]);
    for http1 in [false, true] {
        let client_trace = Arc::new(Memory::default());
        let server_trace = Arc::new(Memory::default());
        let mut p = plan(
            vec![
                step("HEAD", "/user/__MDN__", ""),
                step("HEAD", "/files/a.json", ""),
            ],
            2,
            1,
        );
        p.trace = Some(client_trace.clone());
        let mut server = Shared::new(
            vec![user.clone(), files.clone()],
            Some(server_trace.clone()),
            None,
        );
        let memory = Arc::new(MemoryFiles::new(stored.clone()));
        server.files = memory.clone();
        let (report, totals, elapsed) = run(Arc::new(p), Arc::new(server), http1);
        // The file's size was enough: its content was never read.
        assert_eq!(memory.reads.load(Ordering::Relaxed), 0);
        assert_eq!((report.done, report.succeeded), (4, 4), "http1 {http1}");
        assert_eq!(report.traffic.data_bytes_received, 0);
        assert_eq!((report.pushes, totals.pushes), (0, 0));
        assert_eq!(totals.rule_hits, [2, 2]);
        assert_eq!((totals.not_found, totals.bytes_out), (0, 0));
        assert!(elapsed >= Duration::from_millis(40), "{elapsed:?}");
        let client = client_trace.lines();
        let responses: Vec<&String> = client
            .iter()
            .filter(|l| l.starts_with("RESPONSE"))
            .collect();
        assert_eq!(
            responses,
            [
                "RESPONSE[0/0,0]: 200\n  content-type = application/json\n  content-length = 22",
                "RESPONSE[0/1,0]: 200\n  content-type = application/json\n  content-length = 7",
                "RESPONSE[1/0,0]: 200\n  content-type = application/json\n  content-length = 22",
                "RESPONSE[1/1,0]: 200\n  content-type = application/json\n  content-length = 7",
            ],
            "http1 {http1}"
        );
        let server = server_trace.lines();
        assert!(
            server
                .iter()
                .filter(|l| l.starts_with("RESPONSE"))
                .all(|l| !l.contains('{')),
            "{server:#?}"
        );
    }
}

/// A HEAD on a resource rule (every method) reads as its GET would, not
/// as a method the rule does not allow: the same head, without content.
#[test]
fn head_on_a_resource_is_answered_as_its_get() {
    let mut subscriptions = rule("*", "/subscriptions", 200, Body::Empty);
    subscriptions.kind = crate::server::rules::Kind::Resource(Default::default());
    let trace = Arc::new(Memory::default());
    let mut p = plan(
        vec![
            step("POST", "/subscriptions", r#"{"a":1}"#),
            step("HEAD", "/subscriptions", ""),
            step("GET", "/subscriptions", ""),
        ],
        1,
        1,
    );
    p.trace = Some(trace.clone());
    let (report, totals, _) = run(Arc::new(p), shared(vec![subscriptions], None), true);
    assert_eq!((report.done, report.succeeded), (3, 3));
    assert_eq!(totals.rule_hits, [3]);
    let lines = trace.lines();
    let response = |step: usize| {
        let start = format!("RESPONSE[0/{step},0]: ");
        lines
            .iter()
            .find(|l| l.starts_with(&start))
            .unwrap()
            .clone()
    };
    let get = response(2);
    let (get_head, body) = get.rsplit_once('\n').unwrap();
    assert_eq!(body, r#"  [{"a":1}]"#);
    assert_eq!(response(1), get_head.replace("[0/2,0]", "[0/1,0]"));
}

/// A list rule without a text answers the bare array with the rule's own
/// status (it answered 200 whatever the rule said).
#[test]
fn a_list_rule_answers_with_its_status() {
    let mut store = rule("*", "/nf", 200, Body::Empty);
    store.kind = crate::server::rules::Kind::Resource(Default::default());
    let mut list = rule("GET", "/disc", 206, Body::Empty);
    list.kind = crate::server::rules::Kind::List(crate::server::resource::List {
        collection: "/nf".into(),
        filter: Vec::new(),
    });
    let p = plan(
        vec![step("POST", "/nf", r#"{"a":1}"#), step("GET", "/disc", "")],
        1,
        1,
    );
    let (report, _, _) = run(Arc::new(p), shared(vec![store, list], None), false);
    assert_eq!(
        report.status_codes.get(&206),
        Some(&1),
        "{:?}",
        report.status_codes
    );
}

/// A paced connection whose place in the stagger puts its first send after
/// the run's start waits for it on its timer and sends each on time: here
/// the fourth of four connections, first due 30 ms in, every 40 ms. (Its
/// first sends used to wait for the end of the run, the only timer it
/// had, and went out together, late.)
#[test]
fn a_staggered_connection_sends_on_time() {
    let mut p = Plan::new(vec![step("GET", "/user/x", "")], None, 1);
    let start = Instant::now();
    p.interval = Some(Duration::from_millis(40));
    p.paced_from = Some(start);
    p.stagger = Duration::from_millis(10);
    p.paced_connections = 4;
    p.slots_made = std::sync::atomic::AtomicU64::new(3);
    p.stop_at = Some(start + Duration::from_millis(200));
    let (report, _, _) = run(
        Arc::new(p),
        shared(vec![rule("GET", "/user/", 200, Body::Empty)], None),
        false,
    );
    assert_eq!((report.started, report.missed), (5, 0), "30, 70, … 190 ms");
    let max = report.request_time.percentile(100.0);
    assert!(max < Duration::from_millis(5), "sent on time: {max:?}");
}
