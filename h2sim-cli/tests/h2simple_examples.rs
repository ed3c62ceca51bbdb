//! h2simple's features end to end with explicit keys and ports: the real
//! binary, real sockets on loopback, outputs checked. These are not the
//! documented lines (this file adds `-k`/`-c` and its own listeners): those
//! run verbatim in `documented_commands.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod server_support;

use server_support::{BIN, certs, client, scratch_dir, text};

/// A running `h2sim server`, stopped with SIGTERM on drop.
struct Server {
    child: Child,
    http: String,
    https: String,
    trace: std::sync::mpsc::Receiver<String>,
}

impl Server {
    /// Starts the server with `args` after two listeners on free ports, and
    /// waits until both are listening.
    fn start(args: &[&str]) -> Server {
        let key = certs().join("server-ec.key");
        let cert = certs().join("server-ec.crt");
        let mut child = Command::new(BIN)
            .arg("server")
            .args(["-k", key.to_str().unwrap(), "-c", cert.to_str().unwrap()])
            .args(["-S", "http://127.0.0.1:0", "-S", "https://127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start h2sim server");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut lines = stderr.lines();
        let mut urls = Vec::new();
        while urls.len() < 2 {
            let line = lines.next().expect("server exited early").unwrap();
            if let Some(url) = line.strip_prefix("h2sim server listening on ") {
                urls.push(url.to_owned());
            }
        }
        // Keep draining both pipes so the server never blocks on them.
        let (tx, rx) = std::sync::mpsc::channel();
        let tx2 = tx.clone();
        std::thread::spawn(move || lines.map_while(Result::ok).for_each(|l| drop(tx.send(l))));
        let stdout = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            stdout
                .lines()
                .map_while(Result::ok)
                .for_each(|l| drop(tx2.send(l)))
        });
        let https = urls
            .iter()
            .find(|u| u.starts_with("https"))
            .unwrap()
            .clone();
        let http = urls
            .iter()
            .find(|u| u.starts_with("http:"))
            .unwrap()
            .clone();
        Server {
            child,
            http,
            https,
            trace: rx,
        }
    }

    /// Everything the server printed so far.
    fn output(&self) -> String {
        std::thread::sleep(Duration::from_millis(100));
        self.trace.try_iter().collect::<Vec<_>>().join("\n")
    }

    /// SIGTERM, then the exit status and the rest of the output.
    fn stop(mut self) -> (i32, String) {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let out = self.output();
                return (status.code().unwrap_or(-1), out);
            }
            assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

const RULES: &[&str] = &[
    "-m",
    "POST",
    "-p",
    "/user/",
    "-s",
    "200",
    "-x",
    "content-type=application/json",
    "-t",
    r#"{ "RESULT" : "SUCCESS" }"#,
    "-m",
    "GET",
    "-p",
    "/user/",
    "-s",
    "200",
    "-x",
    "content-type=application/json",
    "-t",
    r#"{ "USER_NAME" : "somebody" }"#,
    "-m",
    "DELETE",
    "-p",
    "/user/",
    "-s",
    "200",
    "-m",
    "GET",
    "-p",
    "/user2/",
    "-s",
    "404",
    "-m",
    "POST",
    "-p",
    "/user1k/",
    "-s",
    "200",
    "-x",
    "content-type=application/json",
    "-e",
    "1k",
    "-o",
    "/user1k/name1",
    "-s",
    "200",
    "-x",
    "content-type=application/json",
    "-t",
    "1k_name1",
    "-o",
    "/user1k/name2",
    "-s",
    "200",
    "-x",
    "content-type=application/json",
    "-t",
    "1k_name2",
    "-m",
    "GET",
    "-p",
    "/user1k/",
    "-s",
    "200",
    "-e",
    "1k",
];

#[test]
fn rules_scenarios_pushes_and_tls_end_to_end() {
    let server = Server::start(RULES);
    let http = server.http.clone();

    // One GET by URI.
    let out = client(&[&format!("{http}/user1k/nobody")]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("RESPONSE[0/0,0]: 200"), "{t}");
    assert!(t.contains("1 done, 1 succeeded, 0 failed"), "{t}");

    // POST of a body file.
    let scratch = scratch_dir("examples");
    let body = scratch.path().join("body.json");
    std::fs::write(&body, br#"{ "from" : "file" }"#).unwrap();
    let out = client(&[
        "-m",
        "POST",
        "-u",
        &format!("{http}/user/file"),
        "-x",
        "content-type=application/json",
        "-f",
        body.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(server.output().contains(r#"{ "from" : "file" }"#));

    // Symbol replacement in path, header value and body.
    let out = client(&[
        "-R",
        "__MDN__=01092%06d",
        "-C",
        "3",
        "-m",
        "POST",
        "-u",
        &format!("{http}/user/__MDN__"),
        "-x",
        "content-type=application/json",
        "-x",
        "x-mdn=__MDN__",
        "-t",
        r#"{ "USER_MDN" : "__MDN__" }"#,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let seen = server.output();
    for n in 0..3 {
        assert!(
            seen.contains(&format!("POST /user/0109200000{n}")),
            "{seen}"
        );
        assert!(
            seen.contains(&format!("x-mdn = 0109200000{n}")),
            "header kept: {seen}"
        );
        assert!(
            seen.contains(&format!(r#"{{ "USER_MDN" : "0109200000{n}" }}"#)),
            "{seen}"
        );
    }

    // A three-step scenario.
    let authority = http.trim_start_matches("http://");
    let out = client(&[
        "-R",
        "__MDN__=01092%06d",
        "-s",
        "http",
        "-a",
        authority,
        "-m",
        "POST",
        "-p",
        "/user/__MDN__",
        "-x",
        "content-type=application/json",
        "-t",
        r#"{ "USER_MDN" : "__MDN__" }"#,
        "-m",
        "GET",
        "-p",
        "/user/__MDN__",
        "-m",
        "DELETE",
        "-p",
        "/user/__MDN__",
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("RESPONSE[0/2,0]: 200"),
        "third step answered: {t}"
    );

    // The loop: 100 streams, 10,000 scenarios, quiet.
    let json = scratch.path().join("report.json");
    let out = client(&[
        "-P",
        "100",
        "-C",
        "10000",
        "-m",
        "GET",
        "-u",
        &format!("{http}/user1k/nobody"),
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("requests: 10000 total, 10000 started, 10000 done, 10000 succeeded, 0 failed"),
        "{t}"
    );
    assert!(t.contains("status codes: 10000 2xx, 0 3xx"), "{t}");
    assert!(!t.contains("REQUEST["), "quiet: {t}");

    // The JSON report merges with a copy of itself (the same run on
    // another machine) into twice the counts; the same file twice is
    // refused, as a slip of the shell.
    let copy = json.with_extension("copy.json");
    std::fs::copy(&json, &copy).unwrap();
    let merged = Command::new(BIN)
        .args(["merge", json.to_str().unwrap(), copy.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(text(&merged).contains("20000 done"), "{}", text(&merged));

    // Pushes: POST /user1k/ promises two.
    let out = client(&[
        "-P",
        "10",
        "-C",
        "50",
        "-m",
        "POST",
        "-u",
        &format!("{http}/user1k/x"),
        "-e",
        "1k",
        "-q",
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("pushes: 100 received"), "{t}");

    // A 404 rule fails the run: exit status 1.
    let out = client(&[&format!("{http}/user2/x")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("1 4xx"));

    // HTTP/1.1 on the same plain listener (detected), pipelined.
    let out = client(&[
        "-1",
        "-P",
        "8",
        "-C",
        "500",
        "-m",
        "GET",
        "-u",
        &format!("{http}/user1k/nobody"),
        "-q",
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("500 done, 500 succeeded"), "{t}");

    // h2 over TLS, with the server verified against the dev CA.
    let ca = certs().join("ca.crt");
    let out = client(&[
        "-V",
        &format!("verify,trust_file={}", ca.display()),
        "-P",
        "10",
        "-C",
        "100",
        "-m",
        "GET",
        "-u",
        &format!("{}/user1k/nobody", server.https),
        "-q",
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("100 done, 100 succeeded"), "{t}");

    // -V pass: a server the trust file does not vouch for is logged and
    // accepted; with verify it is refused.
    let wrong_anchor = certs().join("client-ec.crt");
    let url = format!("{}/user1k/nobody", server.https);
    let out = client(&[
        "-V",
        &format!("pass,trust_file={}", wrong_anchor.display()),
        "-q",
        &url,
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    // One line, on the client's own output (the core tells it, the CLI
    // says it): the name asked for and why.
    let host = url
        .split('/')
        .nth(2)
        .and_then(|a| a.rsplit_once(':'))
        .unwrap()
        .0;
    let told: Vec<_> = t
        .lines()
        .filter(|l| l.ends_with("; accepted anyway (pass)"))
        .collect();
    assert_eq!(told.len(), 1, "{t}");
    assert!(
        told[0].starts_with(&format!("h2sim: TLS: {host}: the server's certificate ")),
        "{t}"
    );
    let out = client(&[
        "-V",
        &format!("verify,trust_file={}", wrong_anchor.display()),
        "-q",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    let (code, out) = server.stop();
    assert_eq!(code, 0, "graceful stop on SIGTERM: {out}");
    assert!(out.contains(" DISCONNECTED by "), "{out}");
    assert!(out.contains("rule 1: POST /user/ -> 200"), "{out}");
}

#[test]
fn bad_input_gets_one_line_and_status_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["client", "--bogus", "http://127.0.0.1:1/"], "--bogus"),
        (
            &["client", "-m", "GET", "-u", "not a uri"],
            "not an absolute URI",
        ),
        (
            &["server", "-S", "http://127.0.0.1:0", "-p", "/x"],
            "before the first -m",
        ),
        (
            &[
                "client",
                "-m",
                "POST",
                "-u",
                "http://127.0.0.1:1/",
                "-f",
                "/no/such/file",
            ],
            "/no/such/file",
        ),
        (
            &[
                "server",
                "-k",
                "/no/key.pem",
                "-c",
                "/no/cert.pem",
                "-S",
                "https://127.0.0.1:0",
            ],
            "/no/",
        ),
        (&["client", "-P", "x", "http://127.0.0.1:1/"], "-P"),
        (&["frobnicate"], "unknown command"),
    ];
    for (args, needle) in cases {
        let out = Command::new(BIN).args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn help_explains_each_command() {
    for command in ["server", "client", "bench", "merge"] {
        let out = Command::new(BIN)
            .args([command, "--help"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains(&format!("h2sim {command}")), "{help}");
    }
}

/// `-1` on both sides: the plain listener speaks HTTP/1.1 only.
#[test]
fn http1_only_with_dash_1() {
    let server = Server::start(&[
        "-1", "-q", "-m", "POST", "-p", "/user1k/", "-s", "200", "-e", "1k",
    ]);
    let url = format!("{}/user1k/__MDN__", server.http);
    let out = client(&[
        "-1",
        "-P",
        "4",
        "-C",
        "200",
        "-R",
        "__MDN__=01092%06d",
        "-m",
        "POST",
        "-u",
        &url,
        "-e",
        "1k",
        "-q",
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("200 done, 200 succeeded"), "{t}");
    // An HTTP/2 prior-knowledge client is not understood there.
    let out = client(&["-m", "POST", "-u", &url, "-q"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let (code, _) = server.stop();
    assert_eq!(code, 0);
}

/// `--runtime glommio` on both sides: the same simulator on io_uring
/// executors, plain and TLS.
#[test]
fn glommio_runtime_serves_and_drives() {
    let server = Server::start(&[
        "--runtime",
        "glommio",
        "--threads",
        "2",
        "-q",
        "-m",
        "GET",
        "-p",
        "/user1k/",
        "-s",
        "200",
        "-e",
        "1k",
    ]);
    for url in [&server.http, &server.https] {
        let out = client(&[
            "--runtime",
            "glommio",
            "-S",
            "2",
            "-P",
            "20",
            "-C",
            "2000",
            "-q",
            &format!("{url}/user1k/x"),
        ]);
        let t = text(&out);
        assert!(out.status.success(), "{url}: {t}");
        assert!(t.contains("2000 done, 2000 succeeded"), "{t}");
    }
    let (code, out) = server.stop();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("4000 requests"), "{out}");
}

/// `--server` and `--connections`: one scenario list spread over two
/// instances, each request carrying its server's authority.
#[test]
fn connections_across_servers() {
    let rules = ["-m", "GET", "-p", "/nf/", "-s", "200", "-t", "${path}"];
    let a = Server::start(&rules);
    let b = Server::start(&rules);
    let out = client(&[
        "--server",
        &b.http,
        "--connections",
        "4",
        "-P",
        "5",
        "-C",
        "400",
        "-m",
        "GET",
        "-u",
        &format!("{}/nf/x", a.http),
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("400 done, 400 succeeded"), "{t}");
    let authority_b = b.http.trim_start_matches("http://").to_owned();
    let (_, out_a) = a.stop();
    let (_, out_b) = b.stop();
    assert!(out_a.contains("2 connections"), "{out_a}");
    assert!(out_b.contains("2 connections"), "{out_b}");
    assert!(
        out_b.contains(&format!(":authority = {authority_b}")),
        "{out_b}"
    );
}
