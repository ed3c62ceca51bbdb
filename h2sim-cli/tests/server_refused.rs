//! A simulated server is there to catch its client's bugs: a request the
//! core turns down because the client broke a rule (a malformed HTTP/2
//! head, RFC 9113 §8.1.1, §8.2.1, §8.2.2; a bad HTTP/1.1 request line or
//! head, RFC 9112) is counted as refused in the report and named by a
//! `REFUSED[peer, stream N]` line on stderr, with the connection's
//! `DISCONNECTED` line, though the rules never saw it; the other requests
//! are answered as usual. Real processes, both runtimes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use server_support::{Server, h2_client, run, scratch_dir, server_report};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// The server every test here runs: GET / answered with 1 KiB, and not
/// quiet, since the REFUSED lines are printed only then.
fn start(runtime: &str) -> Server {
    Server::with_rules(runtime, "-m GET -p / -s 200 -e 1k")
}

/// Checks the report's summary line: the one valid request answered, no
/// resets, `refused` refused.
fn assert_summary(runtime: &str, out: &str, refused: u32) {
    let line = server_report(out);
    assert!(
        line.contains(" 1 requests, 1 responses "),
        "{runtime}: {line}"
    );
    assert!(
        line.contains(&format!(
            " 0 resets, 0 unanswered, {refused} refused, 0 unmatched"
        )),
        "{runtime}: {line}"
    );
}

#[test]
fn malformed_http2_requests_are_counted_and_named() {
    for runtime in RUNTIMES {
        let server = start(runtime);
        // Stream 1 has an uppercase field name (§8.2.1), stream 3 a
        // connection-specific field (§8.2.2), stream 5 is valid.
        let said = h2_client(
            server.authority(),
            "request GET /a field Bad-Name v \
             request GET /b field connection close \
             request GET /c",
        );
        // PROTOCOL_ERROR (0x1) on both bad streams; stream 5 answered.
        for line in ["reset 1 1", "reset 3 1", "response 5 200", "ended"] {
            assert!(said.lines().any(|l| l == line), "{runtime}: {line}: {said}");
        }
        let (code, out, stderr) = server.stop_apart();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        for (stream, violation) in [
            (1, "uppercase field name (RFC 9113 §8.2.1)"),
            (3, "connection-specific field (RFC 9113 §8.2.2)"),
        ] {
            let named = stderr.lines().any(|l| {
                l.starts_with("REFUSED[127.0.0.1:")
                    && l.ends_with(&format!(
                        ", stream {stream}]: PROTOCOL_ERROR: malformed message: {violation}"
                    ))
            });
            assert!(named, "{runtime}: stream {stream}: {out}");
        }
        assert!(out.contains(", stream 5]: GET /c"), "{runtime}: {out}");
        assert_summary(runtime, &out, 2);
    }
}

/// A client that sends malformed requests at its highest rate must not
/// drown the terminal: a connection's first 10 refusals are named, then one
/// notice says the rest are counted, not printed; its DISCONNECTED line and
/// the report still count them all.
#[test]
fn a_flood_of_malformed_requests_prints_ten_lines_and_a_notice() {
    for runtime in RUNTIMES {
        let server = start(runtime);
        // Streams 1 to 59 have an uppercase field name, 61 is valid.
        let words = "request GET /a field Bad-Name v ".repeat(30) + "request GET /c";
        let said = h2_client(server.authority(), &words);
        assert!(said.lines().any(|l| l == "reset 59 1"), "{runtime}: {said}");
        assert!(
            said.ends_with("response 61 200\nended\n"),
            "{runtime}: {said}"
        );
        let (code, out, stderr) = server.stop_apart();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        let named: Vec<_> = stderr
            .lines()
            .filter(|l| l.starts_with("REFUSED[127.0.0.1:") && l.contains(", stream "))
            .collect();
        assert_eq!(named.len(), 10, "{runtime}: {out}");
        assert!(named[9].contains(", stream 19]: "), "{runtime}: {out}");
        let notices: Vec<_> = stderr
            .lines()
            .filter(|l| {
                l.starts_with("REFUSED[127.0.0.1:")
                    && l.ends_with(
                        "]: more than 10 on this connection: the rest are counted, \
                         not printed (see its DISCONNECTED line)",
                    )
            })
            .collect();
        assert_eq!(notices.len(), 1, "{runtime}: {out}");
        let line = stderr
            .lines()
            .find(|l| l.contains(" DISCONNECTED by "))
            .unwrap_or_else(|| panic!("{runtime}: no DISCONNECTED line: {out}"));
        assert!(
            line.ends_with(" 1 streams) 30 refused"),
            "{runtime}: {line}"
        );
        assert_summary(runtime, &out, 30);
    }
}

/// HTTP/1.1: the core answers a request without Host (RFC 9112 §3.2) with
/// 400 and closes; the report counts and names it as it does for HTTP/2.
#[test]
fn a_bad_http1_request_is_counted_and_named() {
    for runtime in RUNTIMES {
        let server = start(runtime);
        let answer = server.exchange(b"GET /c HTTP/1.1\r\nHost: x\r\n\r\nGET /d HTTP/1.1\r\n\r\n");
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 200 "), "{runtime}: {answer}");
        assert!(answer.contains("HTTP/1.1 400 "), "{runtime}: {answer}");
        let (code, out, stderr) = server.stop_apart();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        let named = stderr
            .lines()
            .any(|l| l.starts_with("REFUSED[127.0.0.1:") && l.contains(", stream 3]: 400: "));
        assert!(named, "{runtime}: {out}");
        assert_summary(runtime, &out, 1);
    }
}

/// HTTP/1.1: a request body that breaks a rule after the server has read
/// the request's head is answered by the core in the application's place,
/// and the REFUSED line names the status the client got, not a stream
/// reset HTTP/1.1 does not have: 400 for a chunk-size line that is not
/// hex (RFC 9112 §7.1), 413 for a chunk that takes the body past the
/// server's limit of 64 MiB (RFC 9110 §15.5.14).
#[test]
fn a_bad_http1_request_body_is_named_by_its_status() {
    const CHUNKED: &str = "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    let cases = [
        ("zz\r\nabc\r\n", "400", "invalid chunk (RFC 9112 §7.1)"),
        (
            "5000000\r\n",
            "413",
            "body of 83886080 bytes above the limit of 67108864",
        ),
    ];
    for runtime in RUNTIMES {
        let server = start(runtime);
        for (body, status, _) in cases {
            let answer = server.exchange(format!("{CHUNKED}{body}").as_bytes());
            let answer = String::from_utf8_lossy(&answer);
            assert!(
                answer.starts_with(&format!("HTTP/1.1 {status} ")),
                "{runtime}: {body:?}: {answer}"
            );
        }
        let (code, out, stderr) = server.stop_apart();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        for (_, status, violation) in cases {
            let named = stderr.lines().any(|l| {
                l.starts_with("REFUSED[127.0.0.1:")
                    && l.ends_with(&format!(", stream 1]: {status}: {violation}"))
            });
            assert!(named, "{runtime}: {status}: {out}");
        }
        // Both requests reached the server's application, which never
        // answered them: the core's statuses are no responses of its own.
        let line = server_report(&out);
        assert!(
            line.contains(" 2 requests, 0 responses "),
            "{runtime}: {line}"
        );
        assert!(
            line.contains(" 0 resets, 0 unanswered, 2 refused, "),
            "{runtime}: {line}"
        );
    }
}

/// `--request-body-limit`: one limit for both protocols, the core's
/// (`Config::max_request_body`), answered 413 with the same words,
/// counted and named as refused: a declared `content-length` above it
/// before the body comes (no request), a body that grows past it when it
/// does (a request, taken back). A bad value is one line naming the flag,
/// and exit 2.
#[test]
fn a_request_body_above_the_limit_is_refused_alike_on_both_protocols() {
    let body = "x".repeat(2000);
    let dir = scratch_dir("body-limit");
    let upload = dir.path().join("20m");
    std::fs::write(&upload, vec![b'x'; 20 << 20]).unwrap();
    for runtime in RUNTIMES {
        let server = Server::with_rules(
            runtime,
            "--request-body-limit 1k -m POST -p / -t ok -m GET -p / -t ok",
        );
        // Stream 1's body grows past the limit (no content-length), stream
        // 3 declares one above it, stream 5 is within, stream 7 a GET.
        let said = h2_client(
            server.authority(),
            &format!(
                "request POST /grows data {body} \
                 request POST /declared field content-length 2000 data {body} \
                 request POST /within data small \
                 request GET /get"
            ),
        );
        for line in [
            "response 1 413",
            "response 3 413",
            "response 5 200",
            "response 7 200",
            "ended",
        ] {
            assert!(said.lines().any(|l| l == line), "{runtime}: {line}: {said}");
        }
        for head in [
            "POST /declared HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n".to_owned(),
            "POST /grows HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n"
                .to_owned(),
        ] {
            let answer = server.exchange(format!("{head}{body}").as_bytes());
            let answer = String::from_utf8_lossy(&answer);
            assert!(
                answer.starts_with("HTTP/1.1 413 ")
                    && answer.ends_with("\r\n\r\nbody of 2000 bytes above the limit of 1024\n"),
                "{runtime}: {head:?}: {answer}"
            );
        }
        // A real client uploading 20 MiB against its content-length gets
        // the 413 and the RST_STREAM(NO_ERROR) after it, and stops (RFC
        // 9113 §8.1); the 413 was the refusal, and nothing more is
        // counted. nghttp, not curl: curl 7.88 drops the response it
        // already has when the RST_STREAM comes while it still uploads
        // (exit 92), which §8.1 forbids ("Clients MUST NOT discard
        // responses as a result of receiving such a RST_STREAM").
        let (code, said) = run(
            "nghttp",
            &[
                // Stream 1: no PRIORITY frames opening streams first.
                "--no-dep",
                "-d",
                &upload.display().to_string(),
                &format!("http://{}/upload", server.authority()),
            ],
        );
        assert_eq!(
            (code, said.as_str()),
            (Some(0), "body of 20971520 bytes above the limit of 1024\n"),
            "{runtime}"
        );
        let (code, out, stderr) = server.stop_apart();
        assert_eq!(code, Some(0), "{runtime}: {out}");
        let refused: Vec<_> = stderr
            .lines()
            .filter(|l| l.starts_with("REFUSED[127.0.0.1:"))
            .collect();
        assert_eq!(refused.len(), 5, "{runtime}: {out}");
        for (stream, size) in [(1, 2000), (3, 2000), (1, 20 << 20)] {
            let named =
                format!(", stream {stream}]: 413: body of {size} bytes above the limit of 1024");
            assert!(
                refused.iter().any(|l| l.ends_with(&named)),
                "{runtime}: {named}: {out}"
            );
        }
        // HTTP/2's /grows, /within and /get, HTTP/1.1's chunked /grows.
        let line = server_report(&out);
        assert!(
            line.contains(" 4 requests, 2 responses "),
            "{runtime}: {line}"
        );
        assert!(
            line.contains(" 0 resets, 0 unanswered, 5 refused, "),
            "{runtime}: {line}"
        );
    }
    let (code, out) = run(
        server_support::BIN,
        &[
            "server",
            "--request-body-limit",
            "lots",
            "-S",
            "http://127.0.0.1:0",
        ],
    );
    assert_eq!(
        (code, out.trim()),
        (
            Some(2),
            r#"h2sim: --request-body-limit "lots": not a size (N, Nk, Nm or Ng)"#
        )
    );
}

/// `curl https://` at a plain listener, with the protocol told from the
/// first bytes and with `-1`: its ClientHello (RFC 8446 §5.1) cannot begin
/// a request-line (RFC 9112 §3), so it gets a 400 and the close at once
/// (curl: "wrong version number"), not the 30 s request head timeout, and
/// the REFUSED and DISCONNECTED lines say the client wants https://.
#[test]
fn a_tls_client_hello_on_a_plain_listener_is_refused_at_once() {
    const NAMED: &str = "400: a TLS ClientHello on a plain listener: the client wants https://";
    for runtime in RUNTIMES {
        for flags in ["", "-1"] {
            let server = Server::with_rules(runtime, &format!("{flags} -m GET -p / -t hi"));
            let url = format!("{}/", server.url("http").replace("http:", "https:"));
            // curl's own bound turns the old 30 s wait into its timeout (28).
            let (code, said) = run("curl", &["-sSk", "--max-time", "10", &url]);
            assert_eq!(code, Some(35), "{runtime} {flags}: {said}");
            assert!(said.contains("wrong version number"), "{runtime}: {said}");
            let (code, out, stderr) = server.stop_apart();
            assert_eq!(code, Some(0), "{runtime} {flags}: {out}");
            let named = stderr.lines().any(|l| {
                l.starts_with("REFUSED[127.0.0.1:") && l.contains(&format!(", stream 1]: {NAMED}"))
            });
            assert!(named, "{runtime} {flags}: {out}");
            let ended = stderr
                .lines()
                .any(|l| l.contains(" DISCONNECTED by error (") && l.contains(NAMED));
            assert!(ended, "{runtime} {flags}: {out}");
        }
    }
}
