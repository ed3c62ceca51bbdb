//! HEAD is answered by GET rules (RFC 9110 §9.1: "All general-purpose
//! servers MUST support the methods GET and HEAD"): the GET's status and
//! fields, its `content-length` included (§8.6), and no content (§9.3.2).
//! Over HTTP/2 the answer is one HEADERS frame ending the stream; over
//! HTTP/1.1 no body bytes follow the head (RFC 9112 §6.3), so a request
//! pipelined behind it is still read right. Real processes, curl and a raw
//! socket, both runtimes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use server_support::{Server, run};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

/// A server whose only rule answers GET /a with a 1 KiB body.
fn start(runtime: &str) -> Server {
    Server::with_rules(runtime, "-q -m GET -p /a -s 200 -e 1k")
}

/// `curl -sI` (HEAD) with `extra` flags: its exit code, the head it
/// printed (lowercased) and the body bytes it counted.
fn curl_head(url: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["-sI", "--max-time", "10", "-w", "size=%{size_download}"];
    args.extend_from_slice(extra);
    args.push(url);
    let (code, out) = run("curl", &args);
    let (head, size) = out.rsplit_once("size=").unwrap_or((&out, ""));
    (code, head.to_ascii_lowercase(), size.trim().to_owned())
}

#[test]
fn curl_head_gets_the_gets_head_without_content() {
    for runtime in RUNTIMES {
        let server = start(runtime);
        let url = format!("{}/a", server.url("http"));
        for (protocol, flags) in [
            ("HTTP/1.1", &["--http1.1"][..]),
            ("HTTP/2", &["--http2-prior-knowledge"][..]),
        ] {
            // curl resets an HTTP/2 stream whose HEAD answer has DATA
            // with a payload, and fails.
            let (code, head, size) = curl_head(&url, flags);
            let what = format!("{runtime} {protocol}: {head}");
            assert_eq!(code, Some(0), "{what}");
            let status = head.lines().next().unwrap_or("");
            assert!(status.split(' ').nth(1) == Some("200"), "{what}");
            assert!(head.contains("content-length: 1024\r\n"), "{what}");
            assert_eq!(size, "0", "{what}");
        }
        let (_, out) = server.stop();
        assert!(out.contains("rule 1: GET /a -> 200: 2 hits"), "{out}");
    }
}

#[test]
fn a_pipelined_get_after_a_head_is_framed_right() {
    for runtime in RUNTIMES {
        let server = start(runtime);
        let wire = String::from_utf8(server.exchange(
            b"HEAD /a HTTP/1.1\r\nhost: x\r\n\r\n\
              GET /a HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        ))
        .unwrap();
        let (head, rest) = wire.split_once("\r\n\r\n").unwrap();
        let head = head.to_ascii_lowercase();
        assert!(head.starts_with("http/1.1 200 "), "{runtime}: {wire}");
        assert!(
            head.contains("\r\ncontent-length: 1024"),
            "{runtime}: {wire}"
        );
        // The GET's answer follows the HEAD's head at once.
        let (get, body) = rest.split_once("\r\n\r\n").unwrap();
        let get = get.to_ascii_lowercase();
        assert!(get.starts_with("http/1.1 200 "), "{runtime}: {wire}");
        assert!(
            get.contains("\r\ncontent-length: 1024"),
            "{runtime}: {wire}"
        );
        assert_eq!(body.len(), 1024, "{runtime}: {wire}");
        assert!(body.starts_with("{\"data\":\"x"), "{runtime}: {wire}");
        server.stop();
    }
}
