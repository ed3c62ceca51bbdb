//! h2sim client and h2load side by side against nghttpd: the same workload,
//! and every figure both print has the same label, unit and meaning
//! (issue 10: "Report lines agree with h2load's").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod server_support;

use server_support::{Server, scratch_dir};

const BIN: &str = env!("CARGO_BIN_EXE_h2sim");

/// nghttpd serving `dir` without TLS, killed on drop.
struct Nghttpd {
    child: Child,
    port: u16,
}

impl Nghttpd {
    fn start(dir: &std::path::Path) -> Nghttpd {
        // nghttpd takes a port, not port 0: take a free one and hand it over.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("nghttpd")
            .args(["--no-tls", "-d"])
            .arg(dir)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nghttpd must be installed");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nghttpd did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Nghttpd { child, port }
    }
}

impl Drop for Nghttpd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines both programs print, split into named figures: `requests:`,
/// `status codes:` and `traffic:` as numbers; the latency rows by label
/// with their first five cells as text (to compare units).
#[derive(Debug)]
struct Figures {
    protocol: String,
    requests: BTreeMap<String, u64>,
    status: BTreeMap<String, u64>,
    traffic_total: u64,
    traffic_headers: u64,
    traffic_data: u64,
    rows: BTreeMap<String, Vec<String>>,
    finished_units: (String, String),
}

fn parse(output: &str) -> Figures {
    let line = |prefix: &str| {
        output
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in:\n{output}"))
            .trim_start_matches(prefix)
            .to_owned()
    };
    let counts = |text: String| -> BTreeMap<String, u64> {
        text.split(',')
            .map(|part| {
                let (n, name) = part.trim().split_once(' ').unwrap();
                (name.to_owned(), n.parse().unwrap())
            })
            .collect()
    };
    // "2.01MB (2106194) total, 21.63KB (22146) headers (space…), 1.95MB (2048000) data"
    let traffic = line("traffic:");
    let exact: Vec<u64> = traffic
        .split('(')
        .skip(1)
        .filter_map(|p| p.split(')').next()?.parse().ok())
        .collect();
    let finished = line("finished in ");
    let parts: Vec<&str> = finished.split(", ").collect();
    let unit = |s: &str| {
        s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')
            .to_owned()
    };
    let mut rows = BTreeMap::new();
    for label in [
        "time for request:",
        "time for connect:",
        "time to 1st byte:",
        "req/s           :",
    ] {
        let cells: Vec<String> = line(label)
            .split_whitespace()
            .take(5)
            .map(str::to_owned)
            .collect();
        assert_eq!(
            cells.len(),
            5,
            "{label} has min max mean sd +/-sd:\n{output}"
        );
        rows.insert(label.to_owned(), cells);
    }
    Figures {
        protocol: line("Application protocol: ").trim().to_owned(),
        requests: counts(line("requests: ")),
        status: counts(line("status codes: ")),
        traffic_total: exact[0],
        traffic_headers: exact[1],
        traffic_data: exact[2],
        rows,
        finished_units: (unit(parts[0]), unit(parts[2])),
    }
}

fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} must be installed: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{program} {args:?}:\n{text}");
    text
}

/// The duration units h2load uses.
fn is_duration(cell: &str) -> bool {
    ["us", "ms", "s"].iter().any(|u| {
        cell.strip_suffix(u)
            .is_some_and(|n| n.parse::<f64>().is_ok())
    })
}

#[test]
fn h2sim_and_h2load_agree_on_the_same_workload() {
    // Declared before the server, so removed after nghttpd is killed.
    let dir = scratch_dir("h2load");
    let body = dir.path().join("1k");
    std::fs::write(&body, vec![b'a'; 1024]).unwrap();
    let server = Nghttpd::start(dir.path());
    let url = format!("http://127.0.0.1:{}/1k", server.port);
    let body_path = body.to_str().unwrap();
    let workloads: [(&str, Vec<&str>, Vec<&str>); 2] = [
        (
            "GET",
            vec!["-n", "2000", "-c", "2", "-m", "10", &url],
            vec!["-q", "-C", "2000", "-S", "2", "-P", "10", &url],
        ),
        (
            "POST 1k",
            vec!["-n", "2000", "-c", "2", "-m", "10", "-d", body_path, &url],
            vec![
                "-q", "-C", "2000", "-S", "2", "-P", "10", "-m", "POST", "-u", &url, "-f",
                body_path,
            ],
        ),
    ];
    for (name, h2load_args, h2sim_args) in workloads {
        let theirs = parse(&run("h2load", &h2load_args));
        let mut args = vec!["client"];
        args.extend(h2sim_args);
        let ours = parse(&run(BIN, &args));
        assert_eq!(ours.protocol, theirs.protocol, "{name}");
        // Same counters under the same names, equal on the same workload.
        assert_eq!(ours.requests, theirs.requests, "{name}");
        assert_eq!(ours.status, theirs.status, "{name}");
        assert_eq!(theirs.requests["succeeded"], 2000, "{name}");
        // Received bytes only, as h2load. The body bytes are the same file;
        // headers are the same server's answers, but HPACK's dynamic table
        // and the `date` field's value (a second boundary) may change a
        // few bytes per connection; the total also holds the frames the
        // server sends about the connection (SETTINGS ACK, WINDOW_UPDATE,
        // PING ACK, GOAWAY), which depend on what each client sent: allow
        // 64 bytes per connection on headers and 256 on the total.
        assert_eq!(ours.traffic_data, theirs.traffic_data, "{name}");
        assert!(
            ours.traffic_headers.abs_diff(theirs.traffic_headers) <= 2 * 64,
            "{name}: headers {ours:?} vs {theirs:?}"
        );
        assert!(
            ours.traffic_total.abs_diff(theirs.traffic_total) <= 2 * 256,
            "{name}: total {ours:?} vs {theirs:?}"
        );
        // Same units: durations in us/ms/s, the req/s row as numbers, and
        // the +/- sd column as a percentage.
        assert_eq!(
            ours.finished_units.1, theirs.finished_units.1,
            "MB/s: {name}"
        );
        assert!(
            is_duration(&format!("1{}", ours.finished_units.0)),
            "{ours:?}"
        );
        for (label, cells) in &ours.rows {
            let theirs_cells = &theirs.rows[label];
            for (i, (a, b)) in cells.iter().zip(theirs_cells).enumerate().take(4) {
                if label.starts_with("req/s") {
                    assert!(
                        a.parse::<f64>().is_ok() && b.parse::<f64>().is_ok(),
                        "{label} {a} {b}"
                    );
                } else {
                    assert!(
                        is_duration(a) && is_duration(b),
                        "{label} column {i}: {a} vs {b}"
                    );
                }
            }
            assert!(
                cells[4].ends_with('%') && theirs_cells[4].ends_with('%'),
                "{label}"
            );
        }
    }
}

/// Over TLS, the report starts with h2load's `TLS Protocol:`, `Cipher:` and
/// `Server Temp Key:` lines, word for word against the same server; over
/// HTTP/1.1 its `traffic:` line counts headers as h2load does (name and
/// value octets, no savings), so both print the same line.
#[test]
fn tls_lines_and_http1_traffic_read_as_h2loads() {
    let dir = scratch_dir("h2load-tls");
    let server = Server::interop(
        "tokio",
        dir.path(),
        &["https://127.0.0.1:0", "http://127.0.0.1:0"],
    );
    let tls_url = format!("{}/1k", server.url("https"));
    let theirs = run("h2load", &["-n", "100", "-c", "1", "-m", "10", &tls_url]);
    let ours = run(BIN, &["client", "-q", "-C", "100", "-P", "10", &tls_url]);
    let tls_lines = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| {
                ["TLS Protocol:", "Cipher:", "Server Temp Key:"]
                    .iter()
                    .any(|p| l.starts_with(p))
            })
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(tls_lines(&ours).len(), 3, "{ours}");
    assert_eq!(tls_lines(&ours), tls_lines(&theirs), "{ours}\n{theirs}");
    let plain_url = format!("{}/1k", server.url("http"));
    let theirs = run(
        "h2load",
        &["--h1", "-n", "500", "-c", "1", "-m", "10", &plain_url],
    );
    let ours = run(
        BIN,
        &["client", "-q", "-1", "-C", "500", "-P", "10", &plain_url],
    );
    let traffic = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("traffic:"))
            .map(str::to_owned)
    };
    assert!(
        traffic(&ours).unwrap().contains("(space savings 0.00%)"),
        "{ours}"
    );
    assert_eq!(traffic(&ours), traffic(&theirs), "{ours}\n{theirs}");
}
