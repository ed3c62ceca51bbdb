//! `h2sim client` against misbehaving servers, on both runtimes: each run
//! ends (bounded by a deadline that only catches a hang) with exit code 1
//! and a line saying what went wrong, and the connection error the RFC
//! names reaches the server as GOAWAY where there is one. Answers that
//! are valid but built to pin the client's memory (HPACK entries behind
//! 64 KiB of ignored frames) are taken without it growing. Prints one row
//! per case: `cargo nextest run -p h2sim-cli --test hostile_client
//! --no-capture`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod hostile;
mod server_support;

use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use h2sim_proto::Reason;

use hostile::peer::{HANG, Seen, name};
use hostile::rogue::{Conn, Rogue};
use hostile::rss_kib;
use hostile::wire::{self, CONTINUATION, DATA, END_HEADERS, END_STREAM, HEADERS, PUSH_PROMISE};
use server_support::BIN;

fn response(stream: u32, end_stream: bool) -> Vec<u8> {
    let flags = END_HEADERS | if end_stream { END_STREAM } else { 0 };
    wire::frame(HEADERS, flags, stream, &wire::block(&[(":status", "200")]))
}

/// SETTINGS, then HEADERS without END_HEADERS and CONTINUATION frames
/// for ever (RFC 9113 §6.10; our limit on CONTINUATION frames).
fn endless_continuation(c: &mut Conn) {
    c.hello();
    let Some(stream) = c.request() else {
        return;
    };
    let mut block = wire::block(&[(":status", "200")]).to_vec();
    block.extend_from_slice(&[0x00, 0x01, b'x']);
    wire::hpack_int(100_000_000, 7, 0, &mut block);
    c.send(&wire::frame(HEADERS, 0, stream, &block));
    let chunk = [b'a'; 1000];
    for _ in 0..100_000 {
        if !c.send(&wire::frame(CONTINUATION, 0, stream, &chunk)) {
            break;
        }
    }
}

/// PUSH_PROMISE to a client that disabled push: a connection error
/// PROTOCOL_ERROR (RFC 9113 §6.6, §8.4).
fn push_when_disabled(c: &mut Conn) {
    c.hello();
    let Some(stream) = c.request() else {
        return;
    };
    let mut payload = 2u32.to_be_bytes().to_vec();
    payload.extend_from_slice(&wire::request_block("GET", "/pushed"));
    c.send(&wire::frame(PUSH_PROMISE, END_HEADERS, stream, &payload));
    c.send(&response(stream, true));
}

/// DATA past the stream's window, sent in one go (RFC 9113 §6.9.1: a
/// FLOW_CONTROL_ERROR).
fn past_the_window(c: &mut Conn) {
    c.hello();
    let Some(stream) = c.request() else {
        return;
    };
    let mut burst = response(stream, false);
    let chunk = vec![b'd'; 16_384];
    for _ in 0..8 {
        burst.extend(wire::frame(DATA, 0, stream, &chunk));
    }
    c.send(&burst);
}

/// Answers nothing, not even SETTINGS (RFC 9113 §3.4: the server's
/// preface is a SETTINGS frame).
fn no_settings(_: &mut Conn) {}

/// GOAWAY naming a last stream the client never opened, then the close:
/// the request is lost with the connection, not waited for.
fn bogus_goaway(c: &mut Conn) {
    c.hello();
    if c.request().is_none() {
        return;
    }
    c.send(&wire::goaway((1 << 31) - 1, 0));
    let _ = c.tcp.shutdown(std::net::Shutdown::Both);
}

/// A response field block of 100 KB, past the client's
/// SETTINGS_MAX_HEADER_LIST_SIZE (64 KiB), in HEADERS and CONTINUATION.
fn huge_headers(c: &mut Conn) {
    c.hello();
    let Some(stream) = c.request() else {
        return;
    };
    let value = "v".repeat(10_000);
    let fields: Vec<(String, &str)> = (0..10)
        .map(|i| (format!("x-big-{i}"), value.as_str()))
        .collect();
    let mut all = vec![(":status".to_owned(), "200")];
    all.extend(fields);
    let refs: Vec<(&str, &str)> = all.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let block = wire::block(&refs);
    let parts: Vec<&[u8]> = block.chunks(16_000).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let (kind, flags) = match i {
            0 => (HEADERS, END_STREAM),
            _ => (CONTINUATION, 0),
        };
        let flags = flags | if last { END_HEADERS } else { 0 };
        c.send(&wire::frame(kind, flags, stream, part));
    }
}

/// Half a response, then the close.
fn closes_mid_response(c: &mut Conn) {
    c.hello();
    let Some(stream) = c.request() else {
        return;
    };
    c.send(&response(stream, false));
    c.send(&wire::frame(DATA, 0, stream, b"half a bo"));
    let _ = c.tcp.shutdown(std::net::Shutdown::Both);
}

struct Case {
    name: &'static str,
    script: fn(&mut Conn),
    /// Client options before the URL.
    args: &'static [&'static str],
    /// Where the client's output must say what happened.
    says: &'static str,
    /// The RST_STREAM code the client must send for its request, if any.
    reset: Option<Reason>,
    /// The GOAWAY code the client must send, if any.
    goaway: Option<Reason>,
}

const CASES: &[Case] = &[
    Case {
        name: "endless CONTINUATION",
        script: endless_continuation,
        args: &[],
        says: "too many CONTINUATION frames",
        reset: None,
        goaway: Some(Reason::ENHANCE_YOUR_CALM),
    },
    Case {
        name: "PUSH_PROMISE with push disabled",
        script: push_when_disabled,
        args: &["-H", "enable_push=0"],
        says: "PUSH_PROMISE not allowed here",
        reset: None,
        goaway: Some(Reason::PROTOCOL_ERROR),
    },
    Case {
        name: "response past the window",
        script: past_the_window,
        args: &["-H", "initial_window_size=16384"],
        says: "1 errored",
        reset: Some(Reason::FLOW_CONTROL_ERROR),
        goaway: None,
    },
    Case {
        name: "no SETTINGS from the server",
        script: no_settings,
        args: &[],
        says: "SETTINGS_TIMEOUT",
        reset: None,
        goaway: Some(Reason::SETTINGS_TIMEOUT),
    },
    Case {
        name: "GOAWAY with a bogus last-stream-id",
        script: bogus_goaway,
        args: &[],
        says: "the server closed the connection with requests unanswered that its GOAWAY had taken",
        reset: None,
        goaway: None,
    },
    Case {
        name: "header block past our limit",
        script: huge_headers,
        args: &[],
        says: "1 errored",
        reset: Some(Reason::PROTOCOL_ERROR),
        goaway: None,
    },
    Case {
        name: "close mid-response",
        script: closes_mid_response,
        args: &[],
        says: "the server closed the connection with requests unanswered",
        reset: None,
        goaway: None,
    },
];

/// Runs the client against a fresh rogue server for `case`; returns the
/// client's exit code, output and run time, and what it sent.
fn run(runtime: &str, case: &Case) -> (Option<i32>, String, Duration, Seen) {
    let rogue = Rogue::start(case.script);
    let url = format!("{}/x", rogue.url);
    let start = Instant::now();
    let mut child = Command::new(BIN)
        .args(["client", "--runtime", runtime, "--threads", "1"])
        .args(case.args)
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > HANG {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    let text = server_support::text(&out);
    (out.status.code(), text, took, rogue.seen())
}

fn against_rogues(runtime: &str) {
    let results = std::thread::scope(|scope| {
        let runs: Vec<_> = CASES
            .iter()
            .map(|case| scope.spawn(move || run(runtime, case)))
            .collect();
        runs.into_iter()
            .map(|r| r.join().unwrap())
            .collect::<Vec<_>>()
    });
    let mut failed = Vec::new();
    println!("| runtime | server | client exit | client says | client sent | time |");
    for (case, (code, text, took, seen)) in CASES.iter().zip(results) {
        let said = text
            .lines()
            .find(|l| l.contains(case.says))
            .unwrap_or("")
            .to_owned();
        println!(
            "| {runtime} | {} | {code:?} | {said} | {} | {:.1} s |",
            case.name,
            seen.outcome(),
            took.as_secs_f64()
        );
        let goaway_ok = case.goaway.is_none_or(|r| seen.goaway() == Some(r));
        let reset_ok = case
            .reset
            .is_none_or(|r| seen.resets().any(|(_, c)| c == r));
        if code != Some(1) || said.is_empty() || !goaway_ok || !reset_ok {
            failed.push(format!(
                "{}: exit {code:?}, {} (want GOAWAY {:?} RST_STREAM {:?}):\n{text}",
                case.name,
                seen.outcome(),
                case.goaway.map(name),
                case.reset.map(name)
            ));
        }
    }
    assert!(failed.is_empty(), "{runtime}:\n{}", failed.join("\n"));
}

#[test]
fn tokio_client_survives_misbehaving_servers() {
    against_rogues("tokio");
}

#[test]
fn glommio_client_survives_misbehaving_servers() {
    against_rogues("glommio");
}

/// Answers that each add an entry to the client's HPACK table.
const PINNING: u32 = 100;
/// The client under [`pinning_answers`], for the script to read its memory.
static PINNED_CLIENT: AtomicU32 = AtomicU32::new(0);
/// The client's `VmRSS` in KiB after its first answers and after all of
/// the pinning ones, as the script read it.
static PINNED_RSS: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// HPACK table entries pinning read buffers, the client's side of the
/// attack the server suite runs: each answer adds an entry to the table (a
/// literal with incremental indexing, RFC 7541 §6.2.1) and is followed by
/// 64 KiB of frames of an unknown type (ignored, RFC 9113 §5.5), so that the
/// next answer arrives in another read buffer. An entry sharing its block's
/// buffer would keep each of those buffers alive as long as it stays in the
/// table. The client asks one request at a time (`-P 1`), so its next
/// request says it took the answer before.
fn pinning_answers(c: &mut Conn) {
    c.hello();
    let filler: Vec<u8> = (0..4)
        .flat_map(|_| wire::frame(0x20, 0, 0, &[b'z'; 16 * 1024]))
        .collect();
    let client = loop {
        match PINNED_CLIENT.load(Ordering::Relaxed) {
            0 => std::thread::sleep(Duration::from_millis(1)),
            pid => break pid,
        }
    };
    for i in 0..=PINNING {
        let Some(stream) = c.request() else {
            return;
        };
        if i == 2 || i == PINNING {
            PINNED_RSS.lock().unwrap().push(rss_kib(client));
        }
        if i == PINNING {
            c.send(&response(stream, true));
            return;
        }
        let mut block = wire::block(&[(":status", "200")]).to_vec();
        wire::indexed_literal(format!("x-pin-{i}").as_bytes(), b"v", &mut block);
        c.send(&wire::frame(
            HEADERS,
            END_HEADERS | END_STREAM,
            stream,
            &block,
        ));
        c.send(&filler);
    }
}

/// A hundred answers each adding a table entry behind 64 KiB of other
/// frames leave the client, on either runtime, about where two did: the
/// entries hold copies of their literals, not the read buffers they came
/// in (7.6 MB more when they did).
#[test]
fn table_entries_do_not_pin_the_clients_read_buffers() {
    for runtime in ["tokio", "glommio"] {
        PINNED_RSS.lock().unwrap().clear();
        PINNED_CLIENT.store(0, Ordering::Relaxed);
        let rogue = Rogue::start(pinning_answers);
        let count = (PINNING + 1).to_string();
        let mut child = Command::new(BIN)
            .args(["client", "--runtime", runtime, "--threads", "1"])
            .args(["-P", "1", "-C", &count])
            .arg(format!("{}/x", rogue.url))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        PINNED_CLIENT.store(child.id(), Ordering::Relaxed);
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() && start.elapsed() < HANG {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let seen = rogue.seen();
        let text = server_support::text(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{runtime}: {}\n{text}",
            seen.outcome()
        );
        let rss = PINNED_RSS.lock().unwrap().clone();
        let [before, after] = rss[..] else {
            panic!(
                "{runtime}: the client's memory was read {} times",
                rss.len()
            );
        };
        let grown = after as i64 - before as i64;
        println!(
            "| {runtime} | {PINNING} pinning answers | {before} -> {after} KiB ({grown:+} KiB) |"
        );
        assert!(
            grown < 2048,
            "{runtime}: the client grew by {grown} KiB over {PINNING} pinning answers"
        );
    }
}

/// RST_STREAM(REFUSED_STREAM) on the first request, then an answer to the
/// one that comes again.
fn refuses_once(c: &mut Conn) {
    c.hello();
    let Some(first) = c.request() else {
        return;
    };
    c.send(&wire::rst_stream(first, 0x7));
    if let Some(again) = c.request() {
        c.send(&response(again, true));
    }
}

/// RST_STREAM(REFUSED_STREAM) on every request.
fn refuses_all(c: &mut Conn) {
    c.hello();
    while let Some(stream) = c.request() {
        c.send(&wire::rst_stream(stream, 0x7));
    }
}

/// The HEADERS frames the client sent: its requests.
fn requests_sent(seen: &Seen) -> usize {
    let headers =
        |f: &&h2sim_proto::frame::Frame| matches!(f, h2sim_proto::frame::Frame::Headers(_));
    seen.frames.iter().filter(headers).count()
}

/// A refused request was not processed (RFC 9113 §8.7): it goes again
/// without `-r`, and a server that refuses every one gets it four times
/// (three resends), then the run fails with it errored.
#[test]
fn a_refused_request_goes_again_a_bounded_number_of_times() {
    let refused = |name, script, says| Case {
        name,
        script,
        args: &[],
        says,
        reset: None,
        goaway: None,
    };
    // Each case, the client's exit code, the outcome its report also says,
    // and the requests the server saw.
    let cases = [
        (
            refused("refuses once", refuses_once, "1 resent unprocessed"),
            0,
            "1 succeeded",
            2,
        ),
        (
            refused("refuses all", refuses_all, "3 resent unprocessed"),
            1,
            "1 errored",
            4,
        ),
    ];
    for runtime in ["tokio", "glommio"] {
        for (case, exit, outcome, requests) in &cases {
            let (code, text, _, seen) = run(runtime, case);
            let at = format!("{runtime} {}", case.name);
            assert_eq!(code, Some(*exit), "{at}: {text}");
            assert!(text.contains(case.says), "{at}: {text}");
            assert!(text.contains(outcome), "{at}: {text}");
            assert_eq!(requests_sent(&seen), *requests, "{at}: {}", seen.outcome());
        }
    }
}

/// Each request answered whole, then reset with NO_ERROR before its body
/// was read, as nginx does to a POST whose body it did not need (RFC 9113
/// §8.1 allows it).
fn answers_then_resets(c: &mut Conn) {
    c.hello();
    while let Some(stream) = c.request() {
        let mut answer = response(stream, true);
        answer.extend_from_slice(&wire::rst_stream(stream, 0x0));
        c.send(&answer);
    }
}

/// A NO_ERROR reset after the whole response leaves the request answered:
/// it succeeds, and the connection's line counts no reset (`rsts` are the
/// requests a reset lost), as h2simple and h2load count it.
#[test]
fn a_no_error_reset_after_the_response_is_no_loss() {
    let case = Case {
        name: "answers then resets",
        script: answers_then_resets,
        args: &["-m", "POST", "-t", "{\"a\":1}", "-C", "3", "-P", "1"],
        says: "3 succeeded",
        reset: None,
        goaway: None,
    };
    for runtime in ["tokio", "glommio"] {
        let (code, text, _, _) = run(runtime, &case);
        assert_eq!(code, Some(0), "{runtime}: {text}");
        assert!(text.contains(case.says), "{runtime}: {text}");
        assert!(text.contains("3 reqs 3 rsps 0 rsts"), "{runtime}: {text}");
    }
}
