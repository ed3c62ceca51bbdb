//! The protocol of plain listeners. `h2sim server -2` (`--http2`): HTTP/2
//! only, like nghttpd. Input that is not the connection preface gets our
//! SETTINGS and GOAWAY(PROTOCOL_ERROR) (RFC 9113 §3.4: "Clients and
//! servers MUST treat an invalid connection preface as a connection error
//! ... of type PROTOCOL_ERROR"), not an HTTP/1.1 answer. `-1` (`--http1`):
//! HTTP/1.1 only, an `Upgrade: h2c` included, which is answered in
//! HTTP/1.1 (RFC 9110 §7.8). Without either flag the first bytes still
//! choose the protocol. Real processes, both runtimes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod server_support;

use bytes::BytesMut;
use h2sim_proto::Reason;
use h2sim_proto::frame::{DEFAULT_MAX_FRAME_SIZE, Frame, FrameDecoder, GoAway, StreamId};
use server_support::{BIN, Server, run};

const RUNTIMES: [&str; 2] = ["tokio", "glommio"];

fn start(runtime: &str, flags: &[&str]) -> Server {
    let mut all = vec!["--threads", "1"];
    all.extend_from_slice(flags);
    Server::answering_hi(runtime, &all)
}

/// HTTP/2 prior knowledge (curl) gets the rule's answer.
fn assert_h2_prior_knowledge_served(runtime: &str, server: &Server) {
    let url = format!("{}/", server.url("http"));
    let (code, out) = run("curl", &["-s", "--http2-prior-knowledge", &url]);
    assert_eq!((code, out.as_str()), (Some(0), "hi"), "{runtime}");
}

/// An HTTP/1.1 request that asks the server to close after answering.
const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// Every whole frame in `bytes`, decoded by the core's decoder.
fn frames(bytes: &[u8]) -> Vec<Frame> {
    let mut decoder = FrameDecoder::new(DEFAULT_MAX_FRAME_SIZE);
    let mut buf = BytesMut::from(bytes);
    std::iter::from_fn(|| decoder.decode(&mut buf).unwrap()).collect()
}

#[test]
fn http2_only_answers_http1_with_goaway_protocol_error() {
    for runtime in RUNTIMES {
        let server = start(runtime, &["-2"]);
        let answer = server.exchange(REQUEST);
        let frames = frames(&answer);
        assert!(
            matches!(frames.first(), Some(Frame::Settings(_))),
            "{runtime}: {:?}",
            String::from_utf8_lossy(&answer)
        );
        // The decoder takes GOAWAY on stream 0 only (RFC 9113 §6.8); no
        // stream was opened, so the last one is 0.
        let goaway = frames
            .iter()
            .find_map(|f| match f {
                Frame::GoAway(goaway) => Some(goaway),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{runtime}: no GOAWAY in {frames:?}"));
        let GoAway {
            last_stream_id,
            reason,
            ..
        } = goaway;
        assert_eq!(
            (*last_stream_id, *reason),
            (StreamId::new(0), Reason::PROTOCOL_ERROR),
            "{runtime}: {goaway:?}"
        );
        // HTTP/2 prior knowledge is served as before.
        assert_h2_prior_knowledge_served(runtime, &server);
        server.stop();
    }
}

#[test]
fn detection_stays_the_default() {
    for runtime in RUNTIMES {
        let server = start(runtime, &[]);
        let answer = String::from_utf8(server.exchange(REQUEST)).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{runtime}: {answer}");
        assert_h2_prior_knowledge_served(runtime, &server);
        server.stop();
    }
}

#[test]
fn http1_and_http2_only_exclude_each_other() {
    let (code, out) = run(BIN, &["server", "-1", "-2", "-S", "http://127.0.0.1:0"]);
    assert_eq!(code, Some(2), "{out}");
    assert_eq!(out.trim().lines().count(), 1, "one line: {out}");
}

/// curl's `--http2` on a plain URL asks for the h2c upgrade (RFC 7540
/// §3.2), as Java's `HttpClient` does for every plain request.
fn curl_upgrade(url: &str) -> (Option<i32>, String) {
    run(
        "curl",
        &[
            "-s",
            "--http2",
            "-o",
            "/dev/null",
            "-w",
            "%{http_version} %{http_code} %{size_download}",
            url,
        ],
    )
}

#[test]
fn http1_only_answers_an_h2c_upgrade_in_http1() {
    for runtime in RUNTIMES {
        let server = start(runtime, &["-1"]);
        let url = format!("{}/", server.url("http"));
        assert_eq!(
            curl_upgrade(&url),
            (Some(0), "1.1 200 2".into()),
            "{runtime}"
        );
        server.stop();
        // Without the flag the same request is upgraded.
        let server = start(runtime, &[]);
        let url = format!("{}/", server.url("http"));
        assert_eq!(curl_upgrade(&url), (Some(0), "2 200 2".into()), "{runtime}");
        server.stop();
    }
}
