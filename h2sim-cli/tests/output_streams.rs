//! Standard output and error that fail or stall, `--json` paths that are
//! not plain files, a server out of file descriptors or holding silent
//! connections: the process
//! keeps serving, says what is wrong, stops when told, loses no report
//! file and never panics (exit 101), on both runtimes where a runtime is
//! involved.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

mod server_support;

use server_support::{BIN, Server, kill, read_json, scratch_dir, wait};

/// A client whose standard output is closed by its reader (`| head -1`)
/// writes its `--json` and exits with the run's code. It panicked with
/// "failed printing to stdout" (exit 101) before writing the file. `merge`
/// likewise.
#[test]
fn a_closed_standard_output_loses_neither_the_exit_code_nor_the_json() {
    let server = Server::answering_hi("tokio", &[]);
    let url = format!("{}/x", server.url("http"));
    let dir = scratch_dir("output-closed-stdout");
    let json = dir.path().join("run.json");
    let mut client = Command::new(BIN);
    client.args(["client", "-C", "2000", "-P", "10", "--json"]);
    assert_eq!(with_stdout_closed(client.arg(&json).arg(&url)), Some(0));
    let report: serde_json::Value = read_json(&json);
    assert_eq!(report["requests"]["succeeded"], 2000);

    let merged = dir.path().join("merged.json");
    let mut merge = Command::new(BIN);
    merge.args(["merge", "--json"]).arg(&merged).arg(&json);
    assert_eq!(with_stdout_closed(&mut merge), Some(0));
    assert!(merged.exists());
}

/// Runs `command` with its standard output's reader gone at once, as
/// `head -1` is after a line: its exit code.
fn with_stdout_closed(command: &mut Command) -> Option<i32> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    wait(&mut child, Duration::from_secs(30)).code()
}

/// `--json -` is standard output, as the convention goes, with the text
/// report on standard error; it made a file named `-`.
#[test]
fn json_to_dash_is_standard_output() {
    let server = Server::answering_hi("tokio", &[]);
    let url = format!("{}/x", server.url("http"));
    let dir = scratch_dir("output-json-dash");
    let out = Command::new(BIN)
        .args(["client", "-q", "-C", "10", "--json", "-", &url])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["requests"]["succeeded"], 10);
    assert!(String::from_utf8_lossy(&out.stderr).contains("requests: 10 total"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// `--json -` keeps standard output for the JSON alone: without `-q`
/// the request and response dumps, and with `-v` the frames, went there
/// before it, and `| jq` failed.
#[test]
fn json_to_dash_is_all_that_standard_output_gets() {
    let server = Server::answering_hi("tokio", &[]);
    let url = format!("{}/", server.url("http"));
    let out = Command::new(BIN)
        .args(["client", "-v", "-C", "2", "--json", "-", &url])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(&stdout).expect(&stdout);
    assert_eq!(report["requests"]["succeeded"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for seen in ["REQUEST[", "RESPONSE[", "SETTINGS", "requests: 2 total"] {
        assert!(stderr.contains(seen), "{seen}: {stderr}");
    }
}

/// `h2sim completions SHELL | true`: a reader that is gone ends the
/// command quietly (exit 0); it panicked with a broken pipe (exit 101).
#[test]
fn completions_for_a_closed_standard_output_end_quietly() {
    for shell in ["fish", "bash"] {
        let mut command = Command::new(BIN);
        command.args(["completions", shell]);
        assert_eq!(with_stdout_closed(&mut command), Some(0), "{shell}");
    }
}

/// Ctrl-C reaches a client whose standard error cannot be written (a
/// closed pipe): the run stops and exits 1. The signal thread wrote its
/// "stopping" line with `eprintln!` first, which panicked, so that signal
/// and every later one were swallowed and the run went on to its end.
#[test]
fn ctrl_c_stops_a_client_whose_standard_error_is_closed() {
    let server = Server::answering_hi("tokio", &[]);
    let url = format!("{}/x", server.url("http"));
    for runtime in ["tokio", "glommio"] {
        let mut child = Command::new(BIN)
            .args([
                "client",
                "-q",
                "--runtime",
                runtime,
                "--duration",
                "60s",
                &url,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        std::thread::sleep(Duration::from_millis(500));
        kill(&child, "-INT");
        let status = wait(&mut child, Duration::from_secs(20));
        assert_eq!(status.code(), Some(1), "{runtime}: {status:?}");
        let out = child.wait_with_output().unwrap();
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(report.contains("requests:"), "{runtime}: {report}");
    }
}

/// A server whose standard output is not read (a paused pager, a reader
/// that sleeps) keeps answering: its per-request lines wait in a bounded
/// queue, and what does not fit is dropped and counted at the end. Before,
/// the first full pipe blocked the connection's thread in `write`, and
/// with it every connection on that thread (about 360 answers here).
#[test]
fn a_server_whose_output_is_not_read_keeps_answering() {
    for runtime in ["tokio", "glommio"] {
        // Standard output is held open and never read.
        let (mut server, url, _said) = serve(&[], runtime, &["-t", "hi"], Stdio::piped());
        let _unread = server.stdout.take();
        let out = Command::new(BIN)
            .args([
                "client",
                "-q",
                "-C",
                "20000",
                "-P",
                "10",
                "--timeout",
                "10s",
            ])
            .arg(format!("{url}/x"))
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{runtime}: {report}");
        assert!(report.contains("20000 succeeded"), "{runtime}: {report}");
        kill(&server, "-KILL");
        let _ = server.wait();
    }
}

/// A server whose report is larger than the output that may wait for a
/// slow reader (8 MiB: here 2,000 rules of 5 KiB paths) still prints it
/// whole: it dropped it as one line, and said stderr was read too slowly.
#[test]
fn a_servers_report_is_never_dropped() {
    let dir = scratch_dir("output-big-report");
    let rules: String = (0..2000)
        .map(|i| {
            format!(
                "  - {{method: GET, path: /{i}/{}/, text: x}}\n",
                "p".repeat(5000)
            )
        })
        .collect();
    std::fs::write(dir.path().join("rules.yaml"), format!("rule:\n{rules}")).unwrap();
    let server = Server::start(
        dir.path(),
        &[
            "server",
            "-q",
            "-S",
            "http://127.0.0.1:0",
            "--rules",
            "rules.yaml",
        ],
        1,
    );
    let (code, out) = server.stop();
    assert_eq!(code, Some(0));
    assert!(
        !out.contains("dropped"),
        "{}",
        &out[out.len().saturating_sub(300)..]
    );
    assert_eq!(out.matches(": 0 hits").count(), 2000);
    assert!(out.contains("h2sim server: 0 connections, 0 requests"));
}

/// A server stopped by `kill` (SIGTERM) says so in the signal's words,
/// and how to end it at once: it told the user to press Ctrl-C again.
#[test]
fn a_servers_sigterm_is_named_in_its_stopping_line() {
    let (mut server, _url, said) = serve(&[], "tokio", &["-q"], Stdio::null());
    kill(&server, "-TERM");
    let status = wait(&mut server, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{status:?}");
    let said = said.iter().collect::<Vec<_>>().join("\n");
    assert!(
        said.contains(
            "h2sim server: stopping on SIGTERM: GOAWAY to every connection, answering the requests in flight (a second signal quits at once)"
        ),
        "{said}"
    );
}

/// The server's first Ctrl-C says it is stopping (its GOAWAYs and the
/// answers in flight can take seconds); a second, while it waits, ends it
/// at once with 130, as the client's does. It said nothing, and ignored
/// the second.
#[test]
fn a_servers_second_ctrl_c_ends_it_at_once() {
    for runtime in ["tokio", "glommio"] {
        let (mut server, url, said) =
            serve(&[], runtime, &["-q", "--delay", "20000"], Stdio::null());
        let mut client = Command::new(BIN)
            .args(["client", "-q", "-C", "1"])
            .arg(format!("{url}/x"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        kill(&server, "-INT");
        std::thread::sleep(Duration::from_millis(500));
        kill(&server, "-INT");
        let status = wait(&mut server, Duration::from_secs(10));
        assert_eq!(status.code(), Some(130), "{runtime}: {status:?}");
        let said = said.iter().collect::<Vec<_>>().join("\n");
        assert!(
            said.contains(
                "h2sim server: stopping on Ctrl-C: GOAWAY to every connection, answering the requests in flight (Ctrl-C again to quit at once)"
            ),
            "{runtime}: {said}"
        );
        let _ = client.kill();
        let _ = client.wait();
    }
}

/// A server out of file descriptors (`prlimit --nofile=40`) says so once,
/// even with -q, naming the limit's way out, and goes on serving the
/// connections it has; it said nothing while new clients waited in the
/// listen queue. 60 connections are made, each sending a request.
#[test]
fn a_server_out_of_descriptors_says_so_once() {
    use std::io::{Read, Write};
    for runtime in ["tokio", "glommio"] {
        let limit = ["prlimit", "--nofile=40"];
        let (mut server, url, said) = serve(&limit, runtime, &["-q", "-t", "hi"], Stdio::null());
        let addr = url.trim_start_matches("http://").to_owned();
        let mut held = Vec::new();
        for _ in 0..60 {
            let mut tcp = std::net::TcpStream::connect(&addr).unwrap();
            tcp.write_all(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n").unwrap();
            held.push(tcp);
        }
        // The first connection was accepted with room to spare: answered.
        held[0]
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut answer = [0; 64];
        let n = held[0].read(&mut answer).unwrap();
        assert!(answer[..n].starts_with(b"HTTP/1.1 200"), "{runtime}");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut lines = Vec::new();
        while std::time::Instant::now() < deadline {
            lines.extend(said.try_iter());
            if lines.iter().any(|l| l.contains("cannot accept")) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        lines.extend(said.try_iter());
        let told: Vec<_> = lines
            .iter()
            .filter(|l| l.contains("cannot accept"))
            .collect();
        assert_eq!(told.len(), 1, "{runtime}: {lines:?}");
        assert!(
            told[0].contains("Too many open files") && told[0].contains("ulimit -n"),
            "{runtime}: {told:?}"
        );
        kill(&server, "-KILL");
        let _ = server.wait();
    }
}

/// A connection that never sends a byte is closed at the head-read
/// timeout (counted from the accept, which the kernel holds back 1 s for
/// such a client), and the server's line names it; without an idle
/// timeout, h2sim's default, it was held for good, a descriptor each.
#[test]
fn a_connection_that_sends_nothing_is_closed() {
    use std::io::Read;
    for runtime in ["tokio", "glommio"] {
        let extra = ["--head-read-timeout", "1s", "-t", "hi"];
        let (mut server, url, said) = serve(&[], runtime, &extra, Stdio::null());
        let addr = url.trim_start_matches("http://");
        let mut tcp = std::net::TcpStream::connect(addr).unwrap();
        // Bounds the wait only: the server closes in about 2 s.
        tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut byte = [0; 1];
        assert_eq!(tcp.read(&mut byte).unwrap(), 0, "{runtime}: closed");
        kill(&server, "-TERM");
        wait(&mut server, Duration::from_secs(10));
        let lines: Vec<_> = said.iter().collect();
        assert!(
            lines
                .iter()
                .any(|l| l.contains("DISCONNECTED by request head timeout")),
            "{runtime}: {lines:?}"
        );
    }
}

/// `h2sim server --runtime RUNTIME --threads 1 -S http://127.0.0.1:0 -m
/// GET -p / -s 200 EXTRA…`, run through `launcher` (a program and its
/// arguments, such as `prlimit`, or none), its standard output as given:
/// the process, where it listens, and the lines of its standard error
/// after that, drained so that it never fills.
fn serve(
    launcher: &[&str],
    runtime: &str,
    extra: &[&str],
    stdout: Stdio,
) -> (Child, String, Receiver<String>) {
    use std::io::BufRead;
    let (program, before) = match launcher {
        [program, before @ ..] => (*program, before),
        [] => (BIN, &[][..]),
    };
    let mut server = Command::new(program)
        .args(before)
        .args((!launcher.is_empty()).then_some(BIN))
        .args(["server", "--runtime", runtime, "--threads", "1"])
        .args([
            "-S",
            "http://127.0.0.1:0",
            "-m",
            "GET",
            "-p",
            "/",
            "-s",
            "200",
        ])
        .args(extra)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} runs the server: {e}"));
    let stderr = server.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("the server said where it listens")
            .unwrap();
        if let Some(url) = line.strip_prefix("h2sim server listening on ") {
            break url.to_owned();
        }
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || lines.map_while(Result::ok).for_each(|l| drop(tx.send(l))));
    (server, url, rx)
}

/// Runs `args` with standard output and error on one pseudo-terminal, as
/// a user at a terminal runs it (Python's `pty`): what the terminal got.
fn on_a_terminal(args: &[&str]) -> String {
    const SCRIPT: &str = "
import os, pty, subprocess, sys
main, side = pty.openpty()
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=side, stderr=side)
os.close(side)
got = b''
while True:
    try:
        chunk = os.read(main, 65536)
    except OSError:
        break
    if not chunk:
        break
    got += chunk
child.wait()
sys.stdout.buffer.write(got)
";
    let out = Command::new("python3")
        .args(["-c", SCRIPT])
        .args(args)
        .output()
        .expect("python3 runs the pseudo-terminal");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The screen a terminal shows after `output`: carriage returns, newlines,
/// and the escapes a progress bar draws with (erase in line, cursor up,
/// erase below); others are left out.
fn screen(output: &str) -> Vec<String> {
    let mut rows: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut col) = (0, 0);
    let mut chars = output.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => col = 0,
            '\n' => {
                row += 1;
                col = 0;
                if rows.len() <= row {
                    rows.push(Vec::new());
                }
            }
            '\u{1b}' if chars.peek() == Some(&'[') => {
                chars.next();
                let mut arg = String::new();
                let end = loop {
                    match chars.next() {
                        Some(c) if c.is_ascii_digit() || c == ';' || c == '?' => arg.push(c),
                        other => break other,
                    }
                };
                let n = arg.parse::<usize>().unwrap_or(1);
                match end {
                    Some('K') if arg == "2" => rows[row].clear(),
                    Some('K') => rows[row].truncate(col),
                    Some('A') => row = row.saturating_sub(n),
                    Some('J') => {
                        rows[row].truncate(col);
                        rows.truncate(row + 1);
                    }
                    _ => {}
                }
            }
            c => {
                let line = &mut rows[row];
                if line.len() <= col {
                    line.resize(col, ' ');
                    line.push(c);
                } else {
                    line[col] = c;
                }
                col += 1;
            }
        }
    }
    rows.into_iter().map(|r| r.into_iter().collect()).collect()
}

/// `-q` on a terminal draws the progress bar on standard error, and the
/// DISCONNECTED lines of a run that changes connections go there too: each
/// clears the bar and has a line of its own, with the bar drawn again
/// below, and the report starts on a line of its own after the last bar.
/// They landed on the bar's line, after it (`> req msgs: 40/400 … ETA 2s
/// 127.0.0.1:… DISCONNECTED …`), and the report too.
#[test]
fn lines_printed_under_the_progress_bar_clear_it_first() {
    let server = Server::answering_hi("tokio", &[]);
    let url = format!("{}/x", server.url("http"));
    for runtime in ["tokio", "glommio"] {
        let got = on_a_terminal(&[
            BIN,
            "client",
            "-q",
            "--runtime",
            runtime,
            "-T",
            "200",
            "-C",
            "300",
            "--requests-per-connection",
            "30",
            &url,
        ]);
        let rows = screen(&got);
        let disconnected: Vec<_> = rows.iter().filter(|r| r.contains("DISCONNECTED")).collect();
        assert_eq!(disconnected.len(), 10, "{runtime}: {rows:#?}");
        assert!(
            rows.iter().any(|r| r.starts_with("> req msgs: 300/300")),
            "{runtime}: the bar was drawn: {rows:#?}"
        );
        for row in rows
            .iter()
            .filter(|r| r.contains("DISCONNECTED") || r.contains("> req msgs"))
        {
            assert!(
                row.starts_with("127.0.0.1:") != row.starts_with("> req msgs: "),
                "{runtime}: a line and the bar share a row: {row:?}\n{rows:#?}"
            );
        }
        assert!(
            rows.iter()
                .any(|r| r.starts_with("Application protocol: h2c")),
            "{runtime}: {rows:#?}"
        );
    }
}
