//! What `h2sim server` puts on the wire for its rules: `content-length`
//! on every reply whose size it knows (RFC 9110 §8.6), so HTTP/1.1 needs no
//! chunked coding (RFC 9112 §6.1), and templates in header values and
//! pushed responses. Real processes, checked with curl and nghttp, on both
//! runtimes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use server_support::{Server, curl_headers, run, scratch_dir};

/// A server on a free port with rules covering each kind of body: fixed,
/// template, generated, a file under `-d`, no body, 204, and no match.
fn start(runtime: &str, www: &std::path::Path) -> Server {
    let www = shlex::try_quote(www.to_str().unwrap()).unwrap();
    Server::with_rules(
        runtime,
        &format!(
            "-q -m GET -p /fixed -t hello -m GET -p /tmpl/ -t '${{suffix}}!' \
             -m GET -p /gen -e 1k -m GET -p /empty -m GET -p /nocontent -s 204 \
             -m GET -p /own -x content-length=3 -t abc -m GET -p /www/ -d {www}"
        ),
    )
}

/// The `-d` directory, with `a.json`; keep it until the servers stop.
fn www() -> tempfile::TempDir {
    let dir = scratch_dir("replies");
    std::fs::write(dir.path().join("a.json"), b"{\"a\":1}").unwrap();
    dir
}

/// (path, the content-length it must carry, or None for none)
const CASES: &[(&str, Option<&str>)] = &[
    ("/fixed", Some("5")),
    ("/tmpl/abc", Some("4")),
    ("/gen", Some("1024")),
    ("/empty", Some("0")),
    ("/nocontent", None),
    ("/own", Some("3")),
    ("/www/a.json", Some("7")),
    ("/www/missing", Some("0")),
    ("/unmatched", Some("0")),
];

fn check(protocol: &str, runtime: &str, url: &str) {
    for (path, length) in CASES {
        let headers = curl_headers(&[protocol, &format!("{url}{path}")]);
        let what = format!("{runtime} {protocol} {path}: {headers:?}");
        let lengths: Vec<_> = headers
            .iter()
            .filter_map(|h| h.strip_prefix("content-length:"))
            .map(str::trim)
            .collect();
        match length {
            Some(n) => assert_eq!(lengths, [*n], "{what}"),
            // RFC 9110 §8.6: no content-length in a 204.
            None => assert!(lengths.is_empty(), "{what}"),
        }
        assert!(
            !headers.iter().any(|h| h.starts_with("transfer-encoding")),
            "a known size needs no chunked coding (RFC 9112 §6.1): {what}"
        );
    }
}

/// RFC 9112 §6.1-§6.3: HTTP/1.1 replies of known size carry content-length
/// and are not chunked.
#[test]
fn http1_replies_carry_content_length_not_chunked() {
    let www = www();
    for runtime in ["tokio", "glommio"] {
        let server = start(runtime, www.path());
        check("--http1.1", runtime, server.url("http"));
        let (code, _) = server.stop();
        assert_eq!(code, Some(0));
    }
}

/// RFC 9113 §8.1.1, RFC 9110 §8.6: HTTP/2 replies carry content-length.
#[test]
fn http2_replies_carry_content_length() {
    let www = www();
    for runtime in ["tokio", "glommio"] {
        let server = start(runtime, www.path());
        check("--http2-prior-knowledge", runtime, server.url("http"));
        let (code, _) = server.stop();
        assert_eq!(code, Some(0));
    }
}

/// `${…}` in `-x` values (a `location` header) and in pushed responses'
/// headers and bodies are filled from the request; pushed responses carry
/// content-length too (seen with `nghttp -v`).
#[test]
fn templates_fill_headers_and_pushes() {
    for runtime in ["tokio", "glommio"] {
        let server = Server::with_rules(
            runtime,
            "-q -m GET -p /user/ -s 201 -x 'location=/user/${suffix}' \
             -x 'x-first=${seg1}' -t '${seg2}!' \
             -o /pushed -x 'x-for=${path}' -t 'for ${suffix}'",
        );
        let url = format!("{}/user/abc", server.url("http"));
        let (code, out) = run("nghttp", &["-v", &url]);
        assert_eq!(code, Some(0), "{out}");
        let main = "recv (stream_id=13)";
        let pushed = "recv (stream_id=2)";
        for (stream, field) in [
            (main, ":status: 201"),
            (main, "location: /user/abc"),
            (main, "x-first: user"),
            (main, "content-length: 4"),
            (pushed, "x-for: /user/abc"),
            (pushed, "content-length: 7"),
        ] {
            assert!(
                out.lines()
                    .any(|l| l.contains(stream) && l.ends_with(field)),
                "{runtime}: {stream} {field}: {out}"
            );
        }
        assert!(out.contains("abc!"), "{runtime}: body: {out}");
        assert!(out.contains("for abc"), "{runtime}: pushed body: {out}");
        let (code, _) = server.stop();
        assert_eq!(code, Some(0));
    }
}

/// RFC 9110 §6.4.1, RFC 9113 §8.1.1: a 204 or 304 has no content, so a
/// rule whose status template gives one sends its HEADERS with
/// END_STREAM and no DATA, and nghttp and curl take it (they reset a
/// stream whose DATA carries content there).
#[test]
fn a_204_or_304_from_a_template_sends_no_content() {
    let dir = scratch_dir("no-content");
    let rules = dir.path().join("rules.yaml");
    std::fs::write(
        &rules,
        "rule:\n  - method: GET\n    path: /q\n    status: ${query.code}\n    text: body\n",
    )
    .unwrap();
    for runtime in ["tokio", "glommio"] {
        let server = Server::with_rules(runtime, &format!("-q --rules {}", rules.display()));
        for code in ["204", "304"] {
            let url = format!("{}/q?code={code}", server.url("http"));
            let (rc, out) = run("nghttp", &["-v", &url]);
            assert_eq!(rc, Some(0), "{runtime} {code}: {out}");
            assert!(out.contains(&format!(":status: {code}")), "{out}");
            assert!(!out.contains("RST_STREAM"), "{runtime} {code}: {out}");
            assert!(!out.contains("recv DATA"), "{runtime} {code}: {out}");
            let (rc, out) = run("curl", &["-sS", "--http2-prior-knowledge", &url]);
            assert_eq!((rc, out.as_str()), (Some(0), ""), "{runtime} {code}");
        }
        let (code, _) = server.stop();
        assert_eq!(code, Some(0));
    }
}

/// A template that puts a request's value in a header (`-x
/// 'x-echo=${query.x}'`, the query percent-decoded) cannot split the
/// response: a CR LF in the value (RFC 9110 §5.5 allows none) gets a 500
/// that says why, where it wrote `x-echo: a` and then `set-cookie: evil`
/// as a header of its own (response splitting), over HTTP/1.1.
#[test]
fn a_template_cannot_split_the_response() {
    for runtime in ["tokio", "glommio"] {
        let server = Server::with_rules(runtime, "-1 -q -m GET -p / -x x-echo=${query.x} -t hi");
        let answer = server.exchange(
            b"GET /?x=a%0D%0Aset-cookie:%20evil HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
        );
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 500 "), "{runtime}: {answer}");
        assert!(
            answer.contains("field \"x-echo\" cannot be sent"),
            "{runtime}: {answer}"
        );
        assert!(
            !answer.to_ascii_lowercase().contains("\r\nset-cookie"),
            "{runtime}: {answer}"
        );
        let answer =
            server.exchange(b"GET /?x=ok HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.contains("\r\nx-echo: ok\r\n"), "{runtime}: {answer}");
    }
}

/// A `${...}` that names no placeholder nor capture is sent as written, as
/// h2simple sends its bodies, and the server says so at start, with the
/// placeholder it most likely meant; a misspelt `${sufix}` went out as
/// `${sufix}` with nothing said.
#[test]
fn an_unknown_placeholder_is_named_at_start_and_sent_as_written() {
    let server = Server::with_rules(
        "tokio",
        "-q -m GET -p /u/ -t '${sufix}:${suffix}' -m GET -p /nf/{ueId} -t '${ueid}'",
    );
    let (_, body) = run("curl", &["-s", &format!("{}/u/abc", server.url("http"))]);
    assert_eq!(body, "${sufix}:abc");
    let (code, _, stderr) = server.stop_apart();
    assert_eq!(code, Some(0), "{stderr}");
    for line in [
        "h2sim: -m GET -p /u/: ${sufix} is no placeholder (did you mean ${suffix}?): it is sent as written",
        "h2sim: -m GET -p /nf/{ueId}: ${ueid} is no placeholder (did you mean ${ueId}?): it is sent as written",
    ] {
        assert!(stderr.lines().any(|l| l == line), "{line}\n{stderr}");
    }
}
