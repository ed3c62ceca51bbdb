//! `h2sim client` end to end on loopback, for the client items of issue 10:
//! the real binary against `h2sim server`, an HTTP/1.0 Python server, and
//! signals sent to the real process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

mod server_support;

use server_support::{
    BIN, client, interrupt_after, kill, read_json, scratch_dir, spawn_client, text, wait,
};

/// A server process, killed on drop, whose output is drained by threads.
struct Peer {
    child: Child,
    url: String,
    output: Receiver<String>,
}

impl Peer {
    /// Starts `program args` and waits for the line that names its port:
    /// the first line for which `port_of` returns the URL.
    fn start(mut command: Command, port_of: impl Fn(&str) -> Option<String>) -> Peer {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the peer");
        let rx = output_lines(&mut child);
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        let url = loop {
            let line = rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("the peer never said its port: {seen:?}"));
            if let Some(url) = port_of(&line) {
                break url;
            }
            seen.push(line);
        };
        Peer {
            child,
            url,
            output: rx,
        }
    }

    /// `h2sim server` on a free port with `rules`.
    fn h2sim(rules: &[&str]) -> Peer {
        let mut command = Command::new(BIN);
        command
            .args(["server", "-S", "http://127.0.0.1:0"])
            .args(rules);
        Peer::start(command, |line| {
            line.strip_prefix("h2sim server listening on ")
                .map(str::to_owned)
        })
    }

    /// Python's `http.server`: HTTP/1.0, closing after each response.
    fn http10(dir: &std::path::Path) -> Peer {
        let mut command = Command::new("python3");
        command
            .args([
                "-u",
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .arg("0");
        Peer::start(command, |line| {
            let port = line.split(" port ").nth(1)?.split(' ').next()?;
            Some(format!("http://127.0.0.1:{port}"))
        })
    }

    fn output(&self) -> String {
        std::thread::sleep(Duration::from_millis(200));
        self.output.try_iter().collect::<Vec<_>>().join("\n")
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines `child` writes to its piped stdout and stderr, as they come;
/// the channel closes when both pipes do.
fn output_lines(child: &mut Child) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    for pipe in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            BufReader::new(pipe)
                .lines()
                .map_while(Result::ok)
                .for_each(|l| drop(tx.send(l)))
        });
    }
    rx
}

/// The figure before `label` in the report's `requests:` line.
fn count(report: &str, label: &str) -> u64 {
    figure(report, "requests:", label)
}

/// The figure before `label` in the report's line that starts with `line`.
fn figure(report: &str, line: &str, label: &str) -> u64 {
    let found = report
        .lines()
        .find(|l| l.starts_with(line))
        .unwrap_or_else(|| panic!("no {line} line: {report}"));
    found
        .trim_start_matches(line)
        .split(',')
        .map(str::trim)
        .find_map(|part| part.strip_suffix(label)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {label} in {found}"))
}

/// Issue 10 item 1: `-T` against a server faster than one send interval
/// sent one request and went away; on both runtimes, both protocols.
#[test]
fn fixed_rate_runs_to_the_end_on_both_runtimes_and_protocols() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/fast/", "-s", "200", "-q"]);
    let url = format!("{}/fast/x", server.url);
    on_each_runtime_and_protocol(
        &["-q", "-T", "400", "-C", "20", "-P", "2"],
        &url,
        |what, _, out| {
            let t = text(out);
            assert!(out.status.success(), "{what}: {t}");
            assert_eq!(count(&t, "done"), 20, "{what}: {t}");
            assert_eq!(count(&t, "succeeded"), 20, "{t}");
        },
    );
}

/// Runs the client with `flags` and `url` on each runtime, over HTTP/2 and
/// over HTTP/1.1 (`-1`), and hands `check` what ran (named, and whether
/// over HTTP/1.1) and what came out.
fn on_each_runtime_and_protocol(flags: &[&str], url: &str, check: impl Fn(&str, bool, &Output)) {
    for runtime in ["tokio", "glommio"] {
        for http1 in [false, true] {
            let mut args = flags.to_vec();
            args.extend(["--runtime", runtime]);
            if http1 {
                args.push("-1");
            }
            args.push(url);
            check(&format!("{runtime} http1={http1}"), http1, &client(&args));
        }
    }
}

/// Issue 10 item 1: `-T R --duration D` sent one request and exited 0.
#[test]
fn fixed_rate_duration_run_keeps_sending() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/fast/", "-s", "200", "-q"]);
    let url = format!("{}/fast/x", server.url);
    let out = client(&["-q", "-T", "100", "--duration", "1s", &url]);
    let t = text(&out);
    assert!(count(&t, "done") > 10, "{t}");
    assert_eq!(count(&t, "failed"), 0, "{t}");
}

/// `--timeout` over HTTP/1.1, where a request on the wire is given up only
/// by closing its connection: the run goes on with a new connection, as
/// HTTP/2's goes on after a reset, with or without `-r`. Without `-r` the
/// first timeout stopped the connection's slot, and every request after it
/// was lost: `4 total, 1 started, 1 done, 0 succeeded, 4 failed, 4
/// errored, 1 timeout`.
#[test]
fn an_http1_timeout_costs_one_request_not_the_run() {
    let server = Peer::h2sim(&[
        "-m", "GET", "-p", "/slow/", "-s", "200", "--delay", "2000", "-t", "late", "-q",
    ]);
    let url = format!("{}/slow/x", server.url);
    let flags = ["-q", "-C", "4", "-P", "1", "--timeout", "200ms"];
    on_each_runtime_and_protocol(&flags, &url, |what, http1, out| {
        let t = text(out);
        let what = format!("{what}: {t}");
        assert_eq!(count(&t, "started"), 4, "{what}");
        assert_eq!(count(&t, "done"), 4, "{what}");
        assert_eq!(count(&t, "timeout"), 4, "{what}");
        let connections = if http1 { 4 } else { 1 };
        assert_eq!(count_lines(&t, "DISCONNECTED by"), connections, "{what}");
    });
}

/// A paced `-C` run is held to its rate as a `--duration` run is: the
/// sends that leave well after the count's last send time are missed and
/// fail the run. `-T 1000000 -C 200000` sent at a quarter of the rate and
/// said `-T kept its rate by growing the in-flight window to 256`, exit 0.
/// A rate the client keeps passes.
#[test]
fn a_paced_count_run_not_kept_to_its_rate_fails() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/fast/", "-s", "200", "-q"]);
    let url = format!("{}/fast/x", server.url);
    let out = client(&["-q", "-T", "10000000", "-C", "200000", &url]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert_eq!(count(&t, "succeeded"), 200_000, "{t}");
    assert!(figure(&t, "more counts:", "sends missed (-T)") > 0, "{t}");
    // What stopped the window's growth is named: here the server's limit.
    assert!(
        t.contains("held there by the server's SETTINGS_MAX_CONCURRENT_STREAMS of "),
        "{t}"
    );
    let out = client(&["-q", "-T", "20", "-C", "10", &url]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(figure(&t, "more counts:", "sends missed (-T)"), 0, "{t}");
}

/// A paced `--duration` run took its duration, as h2load's `-D` divides
/// by it: `-T 2 --duration 1500ms` sends at 0, 0.5 and 1 s, and said
/// `finished in 1.00s, 3.00 req/s` (to its last response).
#[test]
fn a_duration_run_takes_its_duration() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/fast/", "-s", "200", "-q"]);
    let url = format!("{}/fast/x", server.url);
    let out = client(&["-q", "-T", "2", "--duration", "1500ms", &url]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(count(&t, "succeeded"), 3, "{t}");
    assert!(t.contains("finished in 1.50s, 2.00 req/s"), "{t}");
    // No longer than it ran: one that reaches no server ends at once, and
    // said `finished in 3.00s`.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = format!("http://{}/x", free.local_addr().unwrap());
    drop(free);
    let out = client(&["-q", "-T", "2", "--duration", "3s", &gone]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(!t.contains("finished in 3.00s"), "{t}");
}

/// Issue 10 items 5 and 7: an HTTP/1.0 server closes after each response:
/// the run completes over one connection per request (planned ends are
/// not losses), and the counters agree (h2load: done = succeeded + failed;
/// it was "20 started, 1 done, 1 succeeded, 4 failed, 19 errored").
#[test]
fn http10_server_closing_after_each_response() {
    // Declared before the server, so removed after it is killed.
    let dir = scratch_dir("client-runs-http10");
    std::fs::write(dir.path().join("1k"), vec![b'a'; 1024]).unwrap();
    let server = Peer::http10(dir.path());
    let url = format!("{}/1k", server.url);
    for runtime in ["tokio", "glommio"] {
        let out = client(&["-q", "-1", "-C", "20", "--runtime", runtime, &url]);
        let t = text(&out);
        assert!(out.status.success(), "{t}");
        assert_eq!(
            (
                count(&t, "started"),
                count(&t, "done"),
                count(&t, "succeeded")
            ),
            (20, 20, 20),
            "{runtime}: {t}"
        );
        assert!(t.contains("connections: 20 made, 19 reconnects"), "{t}");
        assert_eq!(t.matches(" DISCONNECTED by ").count(), 20, "{t}");
    }
}

/// A server that reads the request and closes without answering.
const CLOSING_SERVER: &str = r#"
def serve(sock):
    sock.recv(65536)
    sock.close()
"#;

/// Issue 10 item 7: `--reconnect-max N` bounds the reconnects after
/// losses; every request lost is counted errored (and failed), the four
/// lost with their connections and the sixteen never sent, as h2load
/// counts the requests a client never got to; only the four sent are
/// done, as h2load's done leaves out the requests never started.
#[test]
fn reconnect_max_bounds_reconnects_after_losses() {
    let server = python_peer(CLOSING_SERVER);
    let url = format!("{}/x", server.url);
    let out = client(&["-q", "-1", "-C", "20", "--reconnect-max", "3", &url]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("connections: 4 made, 3 reconnects"), "{t}");
    assert_eq!(
        (count(&t, "done"), count(&t, "errored"), count(&t, "failed")),
        (4, 20, 20),
        "{t}"
    );
    assert_eq!(count(&t, "started"), 4, "{t}");
    assert!(t.contains("16 lost"), "{t}");
}

/// Issue 10 item 7: `--requests-per-connection` churns connections on
/// sockets too, and the report counts the reconnects.
#[test]
fn requests_per_connection_on_sockets() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/fast/", "-s", "200", "-q"]);
    let url = format!("{}/fast/x", server.url);
    let dir = scratch_dir("client-runs-churn");
    let json = dir.path().join("report.json");
    let out = client(&[
        "-q",
        "-C",
        "30",
        "-P",
        "2",
        "--requests-per-connection",
        "10",
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(count(&t, "succeeded"), 30, "{t}");
    assert!(t.contains("connections: 3 made, 2 reconnects"), "{t}");
    let value: serde_json::Value = read_json(&json);
    assert_eq!(value["reconnects"], 2);
    assert_eq!(value["status_code_counts"]["200"], 30);
    // As h2load, one connect time per connection, replacements included.
    assert_eq!(value["latency"]["connect"]["count"], 3, "{value}");
    assert_eq!(value["latency"]["first_byte"]["count"], 3, "{value}");
}

/// A step's failures add up: a 404 for a step without `--expect` fails
/// by h2load's rule (a status outside 2xx/3xx), and counts as an
/// unexpected status, where it counted in none of the three.
#[test]
fn a_failed_status_without_expect_is_an_unexpected_status() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/gone/", "-s", "404", "-q"]);
    let authority = server.url.trim_start_matches("http://");
    let out = client(&[
        "-q", "-C", "3", "-s", "http", "-a", authority, "-m", "GET", "-p", "/gone/a", "-m", "GET",
        "-p", "/gone/b",
    ]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert_eq!(
        t.matches("3 failed (3 unexpected status, 0 capture failed, 0 errored)")
            .count(),
        2,
        "{t}"
    );
}

/// `time to 1st byte` is h2load's: from a connection's connect to the
/// first byte of a response's content. Over HTTP/2 it was the server's
/// SETTINGS, a millisecond against a server that answers after 300 ms.
#[test]
fn time_to_first_byte_waits_for_the_answer() {
    let server = Peer::h2sim(&[
        "-m", "GET", "-p", "/slow/", "-s", "200", "--delay", "300", "-t", "late", "-q",
    ]);
    let url = format!("{}/slow/x", server.url);
    let dir = scratch_dir("client-runs-ttfb");
    for http1 in [false, true] {
        let json = dir.path().join(format!("report-{http1}.json"));
        let mut args = vec!["-q", "-C", "2", "--json", json.to_str().unwrap(), &url];
        if http1 {
            args.insert(0, "-1");
        }
        let out = client(&args);
        assert!(out.status.success(), "{}", text(&out));
        let value: serde_json::Value = read_json(&json);
        let first = &value["latency"]["first_byte"];
        assert_eq!(first["count"], 1, "http1={http1}: {value}");
        let min = first["min_us"].as_u64().unwrap_or(0);
        assert!(min >= 300_000, "http1={http1}: {first}");
    }
}

/// Issue 10 item 11: an instance that never connected is a failure.
#[test]
fn unreachable_server_instance_fails_the_run() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/fast/", "-s", "200", "-q"]);
    // A port nothing listens on: bind one, note it, free it.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", free.local_addr().unwrap());
    drop(free);
    let url = format!("{}/fast/x", server.url);
    let out = client(&["-q", "-C", "4", "--server", &dead, &url]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("1 unreachable"), "{t}");
    assert!(t.contains(&dead[7..]), "names the instance: {t}");
    // Connections that fail alike are one line, with their count: a
    // client out of descriptors printed a line for each of 148.
    let out = client(&["-q", "-S", "5", "-C", "10", &format!("{dead}/x")]);
    let t = text(&out);
    let lines: Vec<_> = t.lines().filter(|l| l.contains("cannot connect")).collect();
    assert_eq!(lines.len(), 1, "{t}");
    assert!(lines[0].ends_with("(5 connections)"), "{t}");
}

/// Issue 10 item 12: fixed bodies carry content-length on both protocols
/// (HTTP/1.1 no longer chunked).
#[test]
fn fixed_bodies_carry_content_length_on_both_protocols() {
    let server = Peer::h2sim(&["-m", "POST", "-p", "/user/", "-s", "201"]);
    let url = format!("{}/user/x", server.url);
    for http1 in [false, true] {
        let mut args = vec!["-q", "-m", "POST", "-u", &url, "-t", "hello"];
        if http1 {
            args.push("-1");
        }
        let out = client(&args);
        assert!(out.status.success(), "{}", text(&out));
        let dump = server.output();
        assert!(dump.contains("content-length = 5"), "http1={http1}: {dump}");
        assert!(!dump.contains("chunked"), "http1={http1}: {dump}");
    }
}

/// Traces show a long body by its whole size, though only its start is
/// kept for them: a 300 KiB answer and a 100 KiB upload, on both protocols.
#[test]
fn traces_show_a_long_body_by_its_size() {
    let server = Peer::h2sim(&["-m", "POST", "-p", "/big", "-s", "200", "-e", "300k"]);
    let url = format!("{}/big", server.url);
    for http1 in [false, true] {
        let mut args = vec!["-m", "POST", "-u", &url, "-e", "100k"];
        if http1 {
            args.push("-1");
        }
        let out = client(&args);
        let shown = text(&out);
        assert!(out.status.success(), "{shown}");
        assert!(shown.contains("<307200 bytes>"), "http1={http1}: {shown}");
        let dump = server.output();
        assert!(dump.contains("<102400 bytes>"), "http1={http1}: {dump}");
    }
}

/// `--connection-window` on both sides, as the other side sees it: the
/// WINDOW_UPDATE on stream 0 each sends at start raises its window from
/// 65,535 to the size given (RFC 9113 §6.9.2), and -v shows both; so 64k
/// (65,536) sends an increment of 1, and 65535, the least, none.
#[test]
fn connection_windows_are_announced_at_start() {
    let rules: Vec<&str> = "--connection-window 2m -m GET -p / -s 200"
        .split(' ')
        .collect();
    let server = Peer::h2sim(&rules);
    let url = format!("{}/x", server.url);
    let out = client(&["-v", "--connection-window", "1m", &url]);
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    let (ours, theirs) = ((1 << 20) - 65_535, (2 << 20) - 65_535);
    assert!(
        shown.contains(&format!("send WINDOW_UPDATE stream=0 increment={ours}\n")),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("recv WINDOW_UPDATE stream=0 increment={theirs}\n")),
        "{shown}"
    );
    for (window, sent) in [("64k", Some(1)), ("65535", None)] {
        let out = client(&["-v", "--connection-window", window, &url]);
        let shown = text(&out);
        assert!(out.status.success(), "{shown}");
        let update = shown
            .lines()
            .find_map(|l| l.strip_prefix("send WINDOW_UPDATE stream=0 increment="));
        assert_eq!(
            update,
            sent.map(|n: u32| n.to_string()).as_deref(),
            "{window}: {shown}"
        );
    }
}

/// What the Python `h2` servers below share (see [`h2_peer`]): `serve`
/// runs a server connection on `sock`, calling the server's
/// `on_event(conn, event)` for each event, until the client closes, or,
/// where the server sets `UNTIL_CLOSED = True`, until the connection is
/// over for `h2` (a GOAWAY either way).
const H2_SERVER: &str = r#"
import h2.config, h2.connection, h2.events

UNTIL_CLOSED = False

def serve(sock):
    h2_serve(sock, on_event, UNTIL_CLOSED)

def h2_serve(sock, on_event, until_closed):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    while True:
        data = sock.recv(65536)
        if not data:
            break
        for event in conn.receive_data(data):
            on_event(conn, event)
        sock.sendall(conn.data_to_send())
        if until_closed and conn.state_machine.state == h2.connection.ConnectionState.CLOSED:
            break
    sock.close()
"#;

/// An HTTP/2 server that answers a connection's first request, then
/// ends the connection with GOAWAY(INTERNAL_ERROR) naming that stream as
/// its last: the requests above it were not processed (RFC 9113 §6.8).
const GOAWAY_ERROR_SERVER: &str = r#"
def on_event(conn, event):
    if isinstance(event, h2.events.RequestReceived) and event.stream_id == 1:
        conn.send_headers(1, [(":status", "200"), ("content-length", "2")])
        conn.send_data(1, b"ok", end_stream=True)
        conn.close_connection(error_code=2, last_stream_id=1)

UNTIL_CLOSED = True
"#;

/// A request the server did not process counts as resent when it goes
/// out again, not when it is put aside for the next connection: after a
/// GOAWAY with an error and without `-r` no connection follows, so the
/// four requests above its last stream are lost, and none was resent
/// (they were counted both ways).
#[test]
fn requests_never_sent_again_are_not_counted_resent() {
    let server = h2_peer(GOAWAY_ERROR_SERVER);
    let url = format!("{}/x", server.url);
    let out = client(&["-q", "-P", "5", "-C", "5", &url]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("connections: 1 made, 0 reconnects"), "{t}");
    assert!(
        t.contains("more counts: 4 lost, 0 retried, 0 resent unprocessed,"),
        "{t}"
    );
    assert_eq!(count(&t, "succeeded"), 1, "{t}");
    // Its line counts them apart, after h2simple's counts.
    assert!(
        t.contains("for 5 reqs 1 rsps 0 rsts 5 streams) 4 unprocessed\n"),
        "{t}"
    );
}

/// An HTTP/2 server that answers every request with a 503 head and then
/// resets the stream (INTERNAL_ERROR) before any body.
const RESET_AFTER_HEAD_SERVER: &str = r#"
def on_event(conn, event):
    if isinstance(event, h2.events.RequestReceived):
        conn.send_headers(event.stream_id, [(":status", "503")])
        conn.reset_stream(event.stream_id, error_code=2)
"#;

/// A status that came before its stream was reset is in the status codes,
/// as h2load counts it when the field arrives, and the request failed:
/// both programs print `status codes: 0 2xx, 0 3xx, 0 4xx, 3 5xx` with
/// `3 failed, 3 errored`, and `0.00 req/s` (no response ended). The
/// reset's status was counted nowhere.
#[test]
fn a_status_before_a_reset_is_counted_as_h2load_counts_it() {
    let server = h2_peer(RESET_AFTER_HEAD_SERVER);
    let url = format!("{}/x", server.url);
    let h2load = Command::new("h2load")
        .args(["-n", "3", "-c", "1", "-m", "1", &url])
        .output()
        .expect("h2load must be installed");
    let theirs = String::from_utf8_lossy(&h2load.stdout).into_owned();
    let out = client(&["-q", "-C", "3", "-P", "1", &url]);
    let ours = text(&out);
    for report in [&theirs, &ours] {
        assert!(
            report.contains("status codes: 0 2xx, 0 3xx, 0 4xx, 3 5xx"),
            "{report}"
        );
        assert_eq!(count(report, "failed"), 3, "{report}");
        assert_eq!(count(report, "errored"), 3, "{report}");
        assert!(report.contains(", 0.00 req/s, "), "{report}");
    }
}

/// A server that answers every request with `hello` and two trailer
/// fields: over HTTP/2 (Python's h2) after the preface, over HTTP/1.1 in
/// the chunked coding (RFC 9112 §7.1.2) otherwise. `h2sim server` has no
/// way to send trailers.
const TRAILERS_SERVER: &str = r#"
import socket, threading
import h2.config, h2.connection, h2.events

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HEAD = [(":status", "200"), ("content-type", "text/plain"), ("trailer", "grpc-status, x-checksum")]
TRAILERS = [("grpc-status", "0"), ("x-checksum", "abc")]
CHUNKED = (b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntrailer: grpc-status, x-checksum\r\n"
           b"transfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n"
           b"grpc-status: 0\r\nx-checksum: abc\r\n\r\n")

def http2(sock, data):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    while data:
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                conn.send_headers(event.stream_id, HEAD)
                conn.send_data(event.stream_id, b"hello")
                conn.send_headers(event.stream_id, TRAILERS, end_stream=True)
        sock.sendall(conn.data_to_send())
        data = sock.recv(65536)

def http1(sock, data):
    while True:
        while b"\r\n\r\n" not in data:
            more = sock.recv(65536)
            if not more:
                return
            data += more
        _, data = data.split(b"\r\n\r\n", 1)
        sock.sendall(CHUNKED)

def serve(sock):
    data = b""
    while len(data) < len(PREFACE) and PREFACE.startswith(data):
        more = sock.recv(65536)
        if not more:
            return
        data += more
    (http2 if data.startswith(PREFACE) else http1)(sock, data)
    sock.close()
"#;

/// `-v` shows a response's trailers after its body, in the fields' style,
/// over HTTP/2 (the final HEADERS) and HTTP/1.1 (the chunked trailer
/// section).
#[test]
fn traces_show_response_trailers() {
    let server = python_peer(TRAILERS_SERVER);
    let url = format!("{}/grpc", server.url);
    for http1 in [false, true] {
        let mut args = vec!["-v", &url];
        if http1 {
            args.push("-1");
        }
        let out = client(&args);
        let shown = text(&out);
        assert!(out.status.success(), "http1={http1}: {shown}");
        assert!(
            shown.contains("  hello\n  -- trailers\n  grpc-status = 0\n  x-checksum = abc\n"),
            "http1={http1}: {shown}"
        );
    }
}

/// What a Python peer server's script ends with: it listens on 127.0.0.1,
/// says "port N", and hands each connection to the script's `serve(sock)`
/// on a thread of its own.
const LISTENER: &str = r#"
import socket, threading
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
print("port", listener.getsockname()[1], flush=True)
while True:
    sock, _ = listener.accept()
    threading.Thread(target=serve, args=(sock,), daemon=True).start()
"#;

/// Starts a Python peer server: `script` defines `serve(sock)`, and
/// [`LISTENER`] follows it.
fn python_peer(script: &str) -> Peer {
    let mut command = Command::new("python3");
    command.args(["-u", "-c", &format!("{script}{LISTENER}")]);
    Peer::start(command, |line| {
        Some(format!("http://127.0.0.1:{}", line.strip_prefix("port ")?))
    })
}

/// A Python `h2` server whose `script` defines its `on_event` (see
/// [`H2_SERVER`]).
fn h2_peer(script: &str) -> Peer {
    python_peer(&format!("{H2_SERVER}{script}"))
}

/// Issue 10 item 6: the first Ctrl-C stops sending, lets what is in flight
/// finish, prints the report and writes the JSON (renamed into place); on
/// both runtimes.
#[test]
fn first_ctrl_c_prints_the_report_and_writes_the_json() {
    let server = Peer::h2sim(&[
        "-m", "GET", "-p", "/slow/", "-s", "200", "--delay", "20", "-q",
    ]);
    let url = format!("{}/slow/x", server.url);
    for runtime in ["tokio", "glommio"] {
        let dir = scratch_dir(&format!("client-runs-ctrl-c-{runtime}"));
        let json = dir.path().join("report.json");
        let json_path = json.to_str().unwrap();
        let child = spawn_client(&[
            "-q",
            "-C",
            "1000000",
            "-P",
            "4",
            "--runtime",
            runtime,
            "--json",
            json_path,
            &url,
        ]);
        // Let some requests finish first (the server answers after 20 ms).
        let t = interrupt_after(child, Duration::from_millis(500));
        assert!(t.contains("interrupted"), "{t}");
        let done = count(&t, "done");
        assert!(done > 0, "{t}");
        assert_eq!(count(&t, "errored"), 0, "in-flight requests finished: {t}");
        let value: serde_json::Value = read_json(&json);
        assert_eq!(value["requests"]["done"], done, "{runtime}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left: {left:?}");
    }
}

/// A server whose SETTINGS_MAX_CONCURRENT_STREAMS is below `-P` holds the
/// run to its limit: the report says so in one line for the run (not per
/// connection) and the JSON carries the limit and the ask; a run within
/// the limit, or one it never held back, says nothing.
#[test]
fn a_server_stream_limit_below_minus_p_is_reported_once() {
    let server = Peer::h2sim(&[
        "-H",
        "max_concurrent_streams=10",
        "-m",
        "GET",
        "-p",
        "/",
        "-s",
        "200",
        "--delay",
        "20",
        "-q",
    ]);
    let url = format!("{}/x", server.url);
    let dir = scratch_dir("client-runs-stream-cap");
    let json = dir.path().join("report.json");
    let out = client(&[
        "-q",
        "-C",
        "200",
        "-P",
        "50",
        "-S",
        "2",
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    let line = "the server capped in-flight streams at 10 per connection \
                (SETTINGS_MAX_CONCURRENT_STREAMS), of the 50 asked by -P";
    assert_eq!(t.matches(line).count(), 1, "{t}");
    let value: serde_json::Value = read_json(&json);
    assert_eq!(
        value["stream_cap"],
        serde_json::json!({"limit": 10, "asked": 50}),
        "{value}"
    );
    // -P at the limit; -P above it with fewer requests than the limit.
    for within in [["200", "10"], ["5", "50"]] {
        let out = client(&["-q", "-C", within[0], "-P", within[1], &url]);
        let t = text(&out);
        assert!(out.status.success(), "{t}");
        assert!(!t.contains("capped"), "{within:?}: {t}");
    }
}

/// A server that shuts down during a `--duration` run and cannot be
/// reached again ends the run early: it fails (exit 1) and the report
/// counts the slot as unreachable, on both runtimes.
#[test]
fn a_server_gone_for_good_fails_a_duration_run() {
    for runtime in ["tokio", "glommio"] {
        let server = Peer::h2sim(&["-m", "GET", "-p", "/x", "-s", "200", "-q"]);
        let url = format!("{}/x", server.url);
        let mut child = spawn_client(&[
            "-q",
            "-P",
            "4",
            "--duration",
            "30s",
            "--runtime",
            runtime,
            &url,
        ]);
        std::thread::sleep(Duration::from_millis(500));
        kill(&server.child, "-TERM");
        let status = wait(&mut child, Duration::from_secs(20));
        let out = child.wait_with_output().unwrap();
        let t = text(&out);
        assert_eq!(status.code(), Some(1), "{runtime}: {t}");
        assert!(t.contains("1 unreachable"), "{runtime}: {t}");
        assert!(t.contains("Connection refused"), "{runtime}: {t}");
        assert_eq!(count(&t, "failed"), 0, "{runtime}: {t}");
    }
}

/// A paced `-r` run whose server dies for good: every request started is
/// done or lost (the 25 or so in flight went to be retried, and there was
/// nothing to retry them on: they were counted nowhere), and the send
/// times left before the end are missed (they were not counted either, so
/// `started + missed` fell short of rate × duration), on both runtimes.
#[test]
fn a_server_gone_for_good_leaves_its_requests_lost_and_its_sends_missed() {
    for runtime in ["tokio", "glommio"] {
        let server = Peer::h2sim(&[
            "-m", "GET", "-p", "/slow/", "-s", "200", "--delay", "50", "-q",
        ]);
        let url = format!("{}/slow/x", server.url);
        let mut child = spawn_client(&[
            "-q",
            "-r",
            "-T",
            "500",
            "--duration",
            "3s",
            "--runtime",
            runtime,
            &url,
        ]);
        std::thread::sleep(Duration::from_millis(1000));
        kill(&server.child, "-KILL");
        let status = wait(&mut child, Duration::from_secs(20));
        let t = text(&child.wait_with_output().unwrap());
        assert_eq!(status.code(), Some(1), "{runtime}: {t}");
        let (started, done) = (count(&t, "started"), count(&t, "done"));
        let lost = figure(&t, "more counts:", "lost");
        let missed = figure(&t, "more counts:", "sends missed (-T)");
        assert!(lost > 0, "{runtime}: requests were in flight: {t}");
        // The lost count in failed and errored, as h2load's would, not
        // in done, as h2load's abandoned requests do not.
        assert_eq!(started, done + lost, "{runtime}: {t}");
        assert_eq!(count(&t, "errored"), lost, "{runtime}: {t}");
        assert_eq!(started + missed, 1500, "{runtime}: {t}");
        assert!(t.contains("-T did not keep its rate"), "{runtime}: {t}");
    }
}

/// Ctrl-C during a paced `--duration` run: the sends after it are not
/// missed, whether or not a request was in flight when it came (they were
/// when one was, not when none was), and the run exits 1 as it did not
/// run what it was asked; likewise a `-C` run, whose requests never sent
/// are not lost (total is what it got to, its done, as a `--duration`
/// run's).
#[test]
fn an_interrupted_run_counts_what_it_did_and_fails() {
    let server = Peer::h2sim(&[
        "-m", "GET", "-p", "/slow/", "-s", "200", "--delay", "300", "-m", "GET", "-p", "/", "-s",
        "200", "-q",
    ]);
    for (path, args) in [
        ("/x", &["-T", "100", "--duration", "5s"][..]),
        ("/slow/x", &["-T", "100", "--duration", "5s"][..]),
        ("/x", &["-C", "100000000", "-P", "10"][..]),
    ] {
        let url = format!("{}{path}", server.url);
        let mut command = vec!["-q"];
        command.extend_from_slice(args);
        command.push(&url);
        let mut child = spawn_client(&command);
        std::thread::sleep(Duration::from_millis(800));
        kill(&child, "-INT");
        let status = wait(&mut child, Duration::from_secs(10));
        let t = text(&child.wait_with_output().unwrap());
        assert_eq!(status.code(), Some(1), "{path} {args:?}: {t}");
        assert!(t.contains("interrupted"), "{t}");
        // The 4.2 s of send times after the Ctrl-C (some 420) are not
        // missed; a machine busy with other tests may miss one or two
        // before it, while the window grows (seen: 1).
        assert!(figure(&t, "more counts:", "sends missed (-T)") < 10, "{t}");
        assert_eq!(figure(&t, "more counts:", "lost"), 0, "{t}");
        assert_eq!(count(&t, "total"), count(&t, "done"), "{t}");
        assert_eq!(count(&t, "started"), count(&t, "done"), "{t}");
        assert!(count(&t, "done") > 0, "{t}");
    }
}

/// Issue 10 item 6: a second Ctrl-C ends the client at once, even with a
/// request that would take a minute.
#[test]
fn second_ctrl_c_exits_at_once() {
    let server = Peer::h2sim(&[
        "-m", "GET", "-p", "/stuck/", "-s", "200", "--delay", "60000", "-q",
    ]);
    let url = format!("{}/stuck/x", server.url);
    let mut child = Command::new(BIN)
        .args(["client", "-q", "-C", "10", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    kill(&child, "-INT");
    std::thread::sleep(Duration::from_millis(300));
    kill(&child, "-INT");
    let status = wait(&mut child, Duration::from_secs(3));
    assert_eq!(status.code(), Some(130));
}

/// GNU `timeout` signals the process and then its process group: two
/// signals within microseconds are one stop, which prints the report, not
/// a user's second Ctrl-C (it exited 130 without one, about one run in
/// 40). Two kinds here, SIGINT and SIGTERM, which the signal thread never
/// folds into one as it may two of a kind.
#[test]
fn a_signal_delivered_twice_at_once_is_one() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/", "-s", "200", "-q"]);
    let url = format!("{}/x", server.url);
    let mut child = spawn_client(&["-q", "-C", "100000000", "-P", "10", &url]);
    std::thread::sleep(Duration::from_millis(500));
    kill(&child, "-INT");
    kill(&child, "-TERM");
    let status = wait(&mut child, Duration::from_secs(10));
    let t = text(&child.wait_with_output().unwrap());
    assert_eq!(status.code(), Some(1), "interrupted, with its report: {t}");
    assert!(count(&t, "done") > 0, "{t}");
}

/// SIGHUP (the terminal or ssh session went away) ends a run as Ctrl-C
/// does, with its report and JSON; it killed the process with neither.
/// Under `nohup`, which starts the process with SIGHUP ignored, it stays
/// ignored and the run goes on to its end.
#[test]
fn a_hangup_ends_the_run_with_its_report_unless_under_nohup() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/", "-s", "200", "-q"]);
    let url = format!("{}/x", server.url);
    let dir = scratch_dir("client-runs-hangup");
    let json = dir.path().join("report.json");
    let json_arg = json.to_str().unwrap();
    let mut child = spawn_client(&[
        "-q",
        "-C",
        "100000000",
        "-P",
        "10",
        "--json",
        json_arg,
        &url,
    ]);
    hangup_is(&child, "SigCgt");
    std::thread::sleep(Duration::from_millis(500));
    kill(&child, "-HUP");
    let status = wait(&mut child, Duration::from_secs(10));
    let t = text(&child.wait_with_output().unwrap());
    assert_eq!(status.code(), Some(1), "interrupted, with its report: {t}");
    // Named as what it was, not as a Ctrl-C.
    assert!(t.contains("interrupted (SIGHUP)"), "{t}");
    let report: serde_json::Value = read_json(&json);
    assert!(
        report["requests"]["succeeded"].as_u64() > Some(0),
        "{report}"
    );

    let started = Instant::now();
    let mut child = Command::new("nohup")
        .args([BIN, "client", "-q", "-P", "1", "--duration", "2s", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nohup (coreutils)");
    hangup_is(&child, "SigIgn");
    kill(&child, "-HUP");
    let status = wait(&mut child, Duration::from_secs(10));
    let t = text(&child.wait_with_output().unwrap());
    assert_eq!(status.code(), Some(0), "ran to its end: {t}");
    assert!(!t.contains("interrupted"), "{t}");
    assert!(started.elapsed() >= Duration::from_secs(2), "{t}");
}

/// Waits (at most 10 s) until `child`'s SIGHUP is in its `mask` line of
/// /proc (`SigCgt`: caught, `SigIgn`: ignored), so that a SIGHUP sent
/// next is not taken by the default action of a process still starting.
fn hangup_is(child: &Child, mask: &str) {
    let started = Instant::now();
    loop {
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
        let bits = status
            .lines()
            .find_map(|l| l.strip_prefix(mask).and_then(|v| v.strip_prefix(':')))
            .map(|v| u64::from_str_radix(v.trim(), 16).unwrap())
            .unwrap();
        if bits & 1 == 1 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{mask}: {bits:x}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A Python h2 server (python-hyper/h2) that answers every request with
/// 200 and an empty body, and never closes a connection itself, even
/// after the client's GOAWAY.
const KEEP_OPEN_SERVER: &str = r#"
def on_event(conn, event):
    if isinstance(event, h2.events.RequestReceived):
        conn.send_headers(event.stream_id, [(":status", "200")], end_stream=True)
"#;

/// Issue 10 item 4: the run's clock stops at the last response, not after
/// waiting for a peer that keeps the connection open. Requests go one at
/// a time, so the run lasts about the connection set-up plus the sum of
/// the request times; waiting for the close added up to a second.
#[test]
fn the_clock_stops_at_the_last_response() {
    let server = h2_peer(KEEP_OPEN_SERVER);
    let dir = scratch_dir("client-runs-clock");
    let json = dir.path().join("report.json");
    let url = format!("{}/x", server.url);
    let out = client(&["-q", "-C", "50", "--json", json.to_str().unwrap(), &url]);
    assert!(out.status.success(), "{}", text(&out));
    let value: serde_json::Value = read_json(&json);
    let elapsed = value["elapsed_s"].as_f64().unwrap();
    let request = &value["latency"]["request"];
    let busy = (request["mean_us"].as_f64().unwrap() * request["count"].as_f64().unwrap()
        + value["latency"]["connect"]["max_us"].as_f64().unwrap())
        / 1e6;
    // The slack covers the turns between one response and the next
    // request; the close wait it replaces was 0.5 s or more.
    assert!(
        elapsed < busy + 0.2,
        "elapsed {elapsed}s for {busy}s of requests"
    );
    // So does the connection's, as h2load's: its req/s (the run's, on one
    // connection) was 50 requests over the close wait, 0.67 of the run's.
    let rps = value["connection_rps"][0].as_f64().unwrap();
    assert!(rps * (elapsed + 0.2) > 50.0, "{rps} req/s over {elapsed}s");
}

/// `h2sim merge --json FILE` writes the merged report, which merges again,
/// its total the sum of theirs: a `--duration` run's total, in the JSON
/// as in the text, is what it got to, its done (h2load's total under
/// `-D`); its JSON said null, and the merged total with it.
#[test]
fn merged_reports_merge_again() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/fast/", "-s", "200", "-q"]);
    let url = format!("{}/fast/x", server.url);
    let dir = scratch_dir("client-runs-merge");
    let (a, b, m) = (
        dir.path().join("a.json"),
        dir.path().join("b.json"),
        dir.path().join("m.json"),
    );
    let out = client(&["-q", "-C", "3", "--json", a.to_str().unwrap(), &url]);
    assert!(out.status.success(), "{}", text(&out));
    let out = client(&[
        "-q",
        "--duration",
        "1s",
        "-P",
        "2",
        "--json",
        b.to_str().unwrap(),
        &url,
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    let requests = &read_json(&b)["requests"];
    let done = count(&t, "done");
    assert!(done > 0, "{t}");
    assert_eq!(count(&t, "total"), done, "{t}");
    assert_eq!(requests["total"], done, "{requests}");
    assert_eq!(requests["done"], done, "{requests}");
    let merge = |args: &[&std::path::Path]| {
        let out = Command::new(BIN).arg("merge").args(args).output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        text(&out)
    };
    let t = merge(&[&a, &b, std::path::Path::new("--json"), &m]);
    assert_eq!(count(&t, "succeeded"), 3 + done, "{t}");
    assert_eq!(count(&t, "total"), 3 + done, "{t}");
    assert_eq!(read_json(&m)["requests"]["total"], 3 + done);
    let copy = dir.path().join("m2.json");
    std::fs::copy(&m, &copy).unwrap();
    let t = merge(&[&m, &copy]);
    assert_eq!(count(&t, "succeeded"), 2 * (3 + done), "{t}");
    assert_eq!(count(&t, "total"), 2 * (3 + done), "{t}");
    assert!(
        t.contains(&format!("status code counts: {} 200", 2 * (3 + done))),
        "{t}"
    );
}

/// `--keepalive`: a quiet HTTP/2 connection is PINGed (both runtimes).
/// Three scenarios 250 ms apart leave gaps four times the 60 ms interval;
/// without the option only the closing PING of the graceful shutdown goes
/// out (RFC 9113 §6.7: PING measures and keeps the connection).
#[test]
fn keepalive_pings_a_quiet_connection() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/", "-s", "200", "-q"]);
    let url = format!("{}/x", server.url);
    for runtime in ["tokio", "glommio"] {
        let pings = |extra: &[&str]| {
            let mut args = vec!["-v", "-T", "4", "-C", "3", "--runtime", runtime];
            args.extend_from_slice(extra);
            args.push(&url);
            let out = client(&args);
            let all = text(&out);
            assert!(out.status.success(), "{runtime}: {all}");
            assert_eq!(count(&all, "succeeded"), 3, "{all}");
            all.lines()
                .filter(|l| l.starts_with("send PING") && !l.contains("ACK"))
                .count()
        };
        let plain = pings(&[]);
        let kept = pings(&["--keepalive", "60ms"]);
        assert!(plain <= 1, "{runtime}: {plain} PINGs without --keepalive");
        assert!(
            kept >= plain + 2,
            "{runtime}: {kept} PINGs with --keepalive 60ms"
        );
    }
}

/// `h2sim bench` (the README's first command) on Ctrl-C: the cell that
/// runs ends early, the rows measured so far print with it, no other cell
/// (and not the NF section) starts, and the exit code says it was cut
/// short.
#[test]
fn ctrl_c_ends_the_bench_with_what_it_measured() {
    let mut child = Command::new(BIN)
        .args(["bench", "--duration", "1s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = output_lines(&mut child);
    // The first row takes three cells of a second each.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while !seen.last().is_some_and(|l: &String| l.starts_with("h2c ")) {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("no h2c row: {seen:?}"));
        seen.push(line);
    }
    std::thread::sleep(Duration::from_millis(300));
    kill(&child, "-INT");
    let status = wait(&mut child, Duration::from_secs(10));
    // Both pipes close with the process.
    seen.extend(rx.iter());
    let out = seen.join("\n");
    assert_eq!(status.code(), Some(130), "{out}");
    let tls = seen
        .iter()
        .find(|l| l.starts_with("h2 (TLS)"))
        .unwrap_or_else(|| panic!("the cut-short TLS cell is not shown: {out}"));
    assert!(
        tls.split_whitespace()
            .nth(2)
            .is_some_and(|tps| tps.parse::<f64>().is_ok_and(|t| t > 0.0)),
        "{tls}"
    );
    assert!(
        !out.contains("HTTP/1.1 "),
        "no row after the interrupted one: {out}"
    );
    assert!(!out.contains("NF rules"), "{out}");
    assert!(out.contains("(interrupted"), "{out}");
}

/// `-c` is the client's certificate (h2simple's flag), read only for https
/// targets; given with an http target (as an h2load user asks for
/// connections), the run goes on and one line says the flag is not used.
#[test]
fn a_certificate_for_an_http_run_is_named_as_unused() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/", "-s", "200", "-q"]);
    let url = format!("{}/x", server.url);
    let out = client(&["-q", "-c", "10", "-u", &url]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("-k/-c (the client's key and certificate) are for https targets"),
        "{t}"
    );
}

/// An HTTP/1.1 connection's last request (`--requests-per-connection`)
/// says `connection: close` (RFC 9112 §9.6), so the server ends the
/// connection after answering it and the server, not the client, keeps
/// the TIME_WAIT. The server names the client's close in its
/// `DISCONNECTED` line: "by connection: close received", not "by peer close";
/// the client's line says it sent it, not "by local GOAWAY", a frame
/// HTTP/1.1 does not have.
#[test]
fn an_http1_connections_last_request_says_close() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/", "-s", "200"]);
    let url = format!("{}/x", server.url);
    let out = client(&[
        "-q",
        "-1",
        "--requests-per-connection",
        "1",
        "-C",
        "3",
        &url,
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(
        count_lines(&t, " DISCONNECTED by connection: close sent: "),
        3,
        "{t}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut dump = server.output();
    // `output` hands over the lines that came since the last call.
    const ASKED: &str = "DISCONNECTED by connection: close received";
    while count_lines(&dump, ASKED) < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        dump += "\n";
        dump += &server.output();
    }
    assert_eq!(count_lines(&dump, ASKED), 3, "{dump}");
    assert_eq!(
        count_lines(&dump, "DISCONNECTED by peer close"),
        0,
        "{dump}"
    );
}

/// A raw HTTP/1.1 server on a port the system picks that answers every
/// request with `connection: close` (RFC 9112 §9.6) and closes: the URL
/// of a resource on it. It serves until the test process ends.
fn closing_http1_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/x", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut tcp in listener.incoming().map_while(Result::ok) {
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match tcp.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = tcp
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        }
    });
    url
}

/// An HTTP/1.1 server that answers with `connection: close` ends the
/// connection after its response: the client's `DISCONNECTED` line says
/// so in HTTP/1.1's words, "by connection: close received", as the
/// server's line does for a client's close, not "by peer GOAWAY".
#[test]
fn an_http1_servers_close_is_named_on_the_clients_line() {
    let url = closing_http1_server();
    for runtime in ["tokio", "glommio"] {
        let out = client(&["-q", "-1", "--runtime", runtime, "-C", "2", &url]);
        let t = text(&out);
        assert!(out.status.success(), "{runtime}: {t}");
        let lines: Vec<_> = t.lines().filter(|l| l.contains(" DISCONNECTED ")).collect();
        assert_eq!(lines.len(), 2, "{runtime}: {t}");
        // The first connection ends by the server's close; the second
        // also by the client's own end of the run.
        assert!(
            lines[0].contains(" DISCONNECTED by connection: close received: "),
            "{runtime}: {t}"
        );
        assert!(!t.contains("GOAWAY"), "{runtime}: {t}");
    }
}

/// With a connection per request, each slot claims its next scenario
/// before it reconnects: slots that each saw one left opened connections
/// that found none ("202 made" for 200 requests, with DISCONNECTED lines
/// for 0 requests). A paced run opens none for a send due after its end.
#[test]
fn a_connection_per_request_opens_one_connection_per_request() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/", "-s", "200"]);
    let url = format!("{}/x", server.url);
    for (http1, runtime) in [(false, "tokio"), (true, "tokio"), (false, "glommio")] {
        let mut args = vec!["-q", "--runtime", runtime, "-S", "4"];
        args.extend(["--requests-per-connection", "1", "-C", "200", &url]);
        if http1 {
            args.insert(1, "-1");
        }
        let out = client(&args);
        let t = text(&out);
        assert!(out.status.success(), "{t}");
        assert_eq!(count(&t, "succeeded"), 200, "{args:?}: {t}");
        assert!(
            t.contains("connections: 200 made, 196 reconnects"),
            "{args:?}: {t}"
        );
    }
    let out = client(&[
        "-q",
        "-S",
        "3",
        "--requests-per-connection",
        "1",
        "-T",
        "100",
        "--duration",
        "1s",
        &url,
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    let done = count(&t, "succeeded");
    assert!(done >= 99, "{t}");
    assert!(
        t.contains(&format!(
            "connections: {done} made, {} reconnects",
            done - 3
        )),
        "{t}"
    );
}

/// An HTTP/1.1 connection's line counts every request it left without
/// its response, those pipelined behind the server's `connection: close`
/// too (RFC 9112 §9.6), which go again on the next connection: against
/// nginx's 1,000-request limit it said `1004 reqs 1000 rsps 0 unanswered`.
#[test]
fn an_http1_line_counts_the_requests_pipelined_behind_a_close() {
    let server = Peer::h2sim(&[
        "-m",
        "GET",
        "-p",
        "/",
        "-s",
        "200",
        "--requests-per-connection",
        "10",
    ]);
    let url = format!("{}/x", server.url);
    let out = client(&["-q", "-1", "-P", "4", "-C", "40", &url]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert_eq!(count(&t, "succeeded"), 40, "{t}");
    let mut unanswered = 0;
    for line in t.lines().filter(|l| l.contains("DISCONNECTED")) {
        let counts = line.rsplit_once('(').map_or("", |(_, c)| c);
        let words: Vec<u64> = counts
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        let [requests, responses, left] = words[..] else {
            panic!("{line}");
        };
        assert_eq!(requests, responses + left, "{line}");
        unanswered += left;
    }
    assert!(unanswered > 0, "{t}");
    assert_eq!(
        unanswered,
        figure(&t, "more counts:", "resent unprocessed"),
        "{t}"
    );
}

/// RFC 9113 §3.3: prior knowledge at a server that speaks only HTTP/1.1
/// gets its HTTP/1.1 answer named, and the flag that speaks HTTP/1.1, on
/// both runtimes; it read as a 4 MB frame (FRAME_SIZE_ERROR) before.
#[test]
fn an_http1_only_server_is_named_as_such() {
    let server = Peer::h2sim(&["-1", "-m", "GET", "-p", "/", "-s", "200"]);
    let url = format!("{}/x", server.url);
    for runtime in ["tokio", "glommio"] {
        let out = client(&["-q", "--runtime", runtime, "-C", "1", &url]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{runtime}: {t}");
        assert!(
            t.contains("the server answered in HTTP/1.1") && t.contains("-1 speaks HTTP/1.1 to it"),
            "{runtime}: {t}"
        );
        let out = client(&["-q", "--runtime", runtime, "-1", "-C", "1", &url]);
        assert!(out.status.success(), "{runtime}: {}", text(&out));
    }
}

/// RFC 9113 §3.4: `-1` at a server that takes HTTP/2 with prior
/// knowledge only meets its SETTINGS frame; the client names that, and
/// the way to speak HTTP/2, on both runtimes. It said "requests
/// unanswered" before, once the server had closed.
#[test]
fn an_http2_only_server_is_named_as_such() {
    let server = Peer::h2sim(&["-2", "-m", "GET", "-p", "/", "-s", "200"]);
    let url = format!("{}/x", server.url);
    for runtime in ["tokio", "glommio"] {
        let out = client(&["-q", "--runtime", runtime, "-1", "-C", "1", &url]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{runtime}: {t}");
        assert!(
            t.contains("the server answered in HTTP/2 (a SETTINGS frame)")
                && t.contains("without -1 the client speaks HTTP/2 to it"),
            "{runtime}: {t}"
        );
        let out = client(&["-q", "--runtime", runtime, "-C", "1", &url]);
        assert!(out.status.success(), "{runtime}: {}", text(&out));
    }
}

fn count_lines(text: &str, needle: &str) -> usize {
    text.lines().filter(|l| l.contains(needle)).count()
}

/// RFC 3986 §3.5, RFC 9110 §4.2.1, §7.1: the fragment is not part of the
/// request-target; the server sees `/q?a=1` over HTTP/2 and HTTP/1.1, as
/// curl, nghttp and h2load send it. A raw space in a URL, which no target
/// may hold (RFC 3986 §3.3), is refused at start in one line naming it,
/// exit 2, as curl refuses it, not sent for the server to refuse.
#[test]
fn a_url_fragment_is_not_sent_and_a_raw_space_is_refused_at_start() {
    let server = server_support::Server::with_rules("tokio", "-m GET -t hi");
    let url = format!("{}/q?a=1#frag", server.url("http"));
    for flags in [&[][..], &["-1"]] {
        let mut all = vec!["-q"];
        all.extend_from_slice(flags);
        all.push(&url);
        let out = client(&all);
        assert!(out.status.success(), "{flags:?}: {}", text(&out));
    }
    let bad = format!("{}/a b", server.url("http"));
    let out = client(&[&bad]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains(r#"path "/a b": ' ' is not allowed in a request-target"#),
        "{said}"
    );
    let (code, log) = server.stop();
    assert_eq!(code, Some(0), "{log}");
    let gets: Vec<_> = log.lines().filter(|l| l.starts_with("REQUEST[")).collect();
    assert_eq!(gets.len(), 2, "{log}");
    assert!(gets.iter().all(|l| l.ends_with("]: GET /q?a=1")), "{log}");
}

/// `--connect-timeout`: a server that takes connections and never speaks
/// is given up on after it, not after the fixed 10 s: over h2c at the
/// SETTINGS acknowledgement (RFC 9113 §6.5.3), over TLS at the handshake.
/// The error says how to wait longer.
#[test]
fn connect_timeout_bounds_a_connection_that_does_not_come_up() {
    // Connections complete in the listen queue; nothing is ever accepted.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    for (url, said) in [
        (
            format!("http://127.0.0.1:{port}/x"),
            "SETTINGS not acknowledged in time",
        ),
        (
            format!("https://127.0.0.1:{port}/x"),
            "got no answer within 1s",
        ),
    ] {
        let started = Instant::now();
        let out = client(&["-q", "-C", "1", "--connect-timeout", "1s", &url]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{t}");
        assert!(started.elapsed() < Duration::from_secs(5), "{t}");
        assert!(t.contains(said), "{t}");
        assert!(t.contains("; --connect-timeout waits longer"), "{t}");
    }
}

/// `-P` takes a slot's memory as the slot is used: `-P 100000000` with
/// one scenario runs it at once, where every slot was allocated first
/// (`-P 10000000` took 1.3 GB and 2 s, `-P 100000000` never started).
#[test]
fn a_huge_parallel_costs_nothing_until_used() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/x", "-s", "200", "-q"]);
    let url = format!("{}/x", server.url);
    for extra in [&[][..], &["-1"]] {
        let started = Instant::now();
        let mut args = vec!["-q", "-P", "100000000", "-C", "3"];
        args.extend_from_slice(extra);
        args.push(&url);
        let out = client(&args);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {t}");
        assert!(t.contains("3 succeeded"), "{extra:?}: {t}");
        assert!(started.elapsed() < Duration::from_secs(10), "{extra:?}");
    }
}

/// A `--token-url` endpoint that cannot be reached, or answers without a
/// token, fails the run as an unreachable server does (exit 1, one line);
/// it exited 2, the status of a bad command line, which a malformed
/// `--token-url` keeps.
#[test]
fn a_failing_token_endpoint_exits_1() {
    let server = Peer::h2sim(&["-m", "GET", "-p", "/x", "-s", "200", "-q"]);
    let free = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/token", free.local_addr().unwrap());
    drop(free);
    let missing = format!("{}/token", server.url);
    let url = format!("{}/x", server.url);
    for (token, code) in [(&dead[..], 1), (&missing, 1), ("nrf/token", 2)] {
        let out = client(&["-q", "--token-url", token, &url]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{token}: {err}");
        assert!(err.starts_with("h2sim: --token-url "), "{token}: {err}");
        assert_eq!(err.lines().count(), 1, "{token}: {err}");
    }
}

/// The URL of a server that accepts connections and holds them, never
/// answering, until the test ends.
fn silent_server() -> String {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/x", silent.local_addr().unwrap());
    std::thread::spawn(move || {
        let held: Vec<_> = silent.incoming().map_while(Result::ok).collect();
        drop(held);
    });
    url
}

/// The report `t` of a run (on `runtime`) whose one connection never came
/// up: not made, `unreachable` slots, no DISCONNECTED line, no protocol.
fn assert_never_came_up(t: &str, unreachable: u32, runtime: &str) {
    assert!(
        t.contains(&format!(
            "connections: 0 made, 0 reconnects, {unreachable} unreachable"
        )),
        "{runtime}: {t}"
    );
    assert!(!t.contains("DISCONNECTED"), "{runtime}: {t}");
    assert!(!t.contains("Application protocol"), "{runtime}: {t}");
}

/// A server that accepts and never speaks lets `--connect-timeout` pass
/// without its SETTINGS: the connection never came up, so it is not made
/// but unreachable, and names no protocol, on both runtimes. It was
/// "1 made, 0 unreachable" with "Application protocol: h2c".
#[test]
fn a_server_that_never_speaks_is_unreachable() {
    let url = silent_server();
    for runtime in ["tokio", "glommio"] {
        let out = client(&["--runtime", runtime, "--connect-timeout", "1s", &url]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{runtime}: {t}");
        assert!(t.contains("SETTINGS_TIMEOUT"), "{runtime}: {t}");
        assert_never_came_up(&t, 1, runtime);
    }
}

/// A Ctrl-C before the server's SETTINGS ends the HTTP/2 handshake with
/// our GOAWAY: that connection never came up, as one the SETTINGS timeout
/// ends does not, so it is not made (nor its connect time, nor its line);
/// nor unreachable, as the server had not yet said whether it would
/// answer. On both runtimes. It was "1 made" with a DISCONNECTED line.
#[test]
fn a_ctrl_c_during_the_handshake_makes_no_connection() {
    let url = silent_server();
    for runtime in ["tokio", "glommio"] {
        let child = spawn_client(&["--runtime", runtime, "-C", "10", &url]);
        let t = interrupt_after(child, Duration::from_millis(500));
        assert!(t.contains("interrupted"), "{runtime}: {t}");
        assert_never_came_up(&t, 0, runtime);
        assert!(t.contains("time for connect:          -"), "{runtime}: {t}");
    }
}

/// A server that closes before its SETTINGS never brought the connection
/// up either: unreachable, named by the run's error line, and not made.
/// It was "1 made, 0 reconnects, 1 unreachable" with a DISCONNECTED line.
#[test]
fn a_server_that_closes_before_its_settings_makes_no_connection() {
    let closing = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/x", closing.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut tcp in closing.incoming().map_while(Result::ok) {
            let _ = tcp.read(&mut [0; 1024]);
        }
    });
    let out = client(&["-C", "1", &url]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("before its SETTINGS"), "{t}");
    assert_never_came_up(&t, 1, "tokio");
}
