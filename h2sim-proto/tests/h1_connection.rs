//! HTTP/1.1 behind the public Connection: protocol detection on a server
//! started undecided, keep-alive and pipelining between our own client and
//! server with bytes split at random points, and the h2c upgrade
//! (RFC 7540 §3.2) from raw HTTP/1.1 bytes to HTTP/2 frames.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use bytes::{Bytes, BytesMut};
use h2sim_proto::frame::{Frame, FrameDecoder, PREFACE, Settings};
use h2sim_proto::{
    Config, Connection, Event, Http1Error, Protocol, RequestHead, ResponseHead, StreamId,
    UserError, Violation,
};
use support::{Pair, retryable, send_gets};

use std::time::Instant;

/// Moves bytes both ways between our client and server, in random pieces,
/// until neither has anything to say; the server answers each request with
/// its path as the body. Returns the client's events.
fn exchange(pair: &mut Pair) -> Vec<Event> {
    serve(pair).0
}

/// `exchange`, which also returns how many requests the server took.
fn serve(pair: &mut Pair) -> (Vec<Event>, usize) {
    let mut client_events = Vec::new();
    let mut requests = 0;
    for _ in 0..1000 {
        let mut moved = pair.step();
        while let Some(event) = pair.server.poll_event() {
            if let Event::Request { stream, head, .. } = event {
                requests += 1;
                let body = Bytes::from(head.path.to_vec());
                pair.server
                    .send_response(
                        stream,
                        ResponseHead::new(200).field("content-type", "text/plain"),
                        false,
                    )
                    .unwrap();
                pair.server.send_data(stream, body, true).unwrap();
                moved = true;
            }
        }
        client_events.extend(pair.client_events());
        if !moved {
            return (client_events, requests);
        }
    }
    panic!("did not settle");
}

fn bodies(events: &[Event]) -> Vec<(StreamId, Vec<u8>)> {
    let mut out: Vec<(StreamId, Vec<u8>)> = Vec::new();
    for e in events {
        if let Event::Data { stream, data, .. } = e {
            match out.iter_mut().find(|(s, _)| s == stream) {
                Some((_, body)) => body.extend_from_slice(data),
                None => out.push((*stream, data.to_vec())),
            }
        }
    }
    out
}

#[test]
fn undecided_server_speaks_http1_to_an_http1_client_with_keep_alive() {
    let now = Instant::now();
    let client = Connection::client_http1(Config::default(), now).unwrap();
    let server = Connection::server(Config::default(), now).unwrap();
    assert_eq!(server.protocol(), None);
    let mut pair = Pair::join(client, server, now).split(1);
    let a = pair
        .client
        .send_request(RequestHead::new("GET", "http", "sim", "/first"), true)
        .unwrap();
    let events = exchange(&mut pair);
    assert_eq!(pair.server.protocol(), Some(Protocol::Http1));
    let b = pair
        .client
        .send_request(RequestHead::new("GET", "http", "sim", "/second"), true)
        .unwrap();
    let more = exchange(&mut pair);
    let (client, server) = pair.into_sides();
    let all: Vec<Event> = events.into_iter().chain(more).collect();
    assert_eq!(
        bodies(&all),
        vec![(a, b"/first".to_vec()), (b, b"/second".to_vec())]
    );
    assert!(
        !client.is_closed() && !server.is_closed(),
        "keep-alive by default"
    );
    let stats = client.stats();
    assert_eq!(stats.data_bytes_received, 13);
    assert!(stats.header_wire_bytes_received > 0);
}

#[test]
fn pipelined_requests_are_answered_in_order_at_any_split() {
    for (depth, seed) in [(1, 3), (16, 4), (40, 5)] {
        let now = Instant::now();
        let mut config = Config::default();
        config.http1.max_pipeline = depth;
        let client = Connection::client_http1(config, now).unwrap();
        let server = Connection::server(Config::default(), now).unwrap();
        let mut pair = Pair::join(client, server, now).split(seed);
        let ids = send_gets(&mut pair, 50);
        let events = exchange(&mut pair);
        let got = bodies(&events);
        assert_eq!(got.len(), 50, "depth {depth}: {} answered", got.len());
        for (i, (id, body)) in got.iter().enumerate() {
            assert_eq!(*id, ids[i]);
            assert_eq!(body, format!("/{i}").as_bytes());
        }
    }
}

/// `Config::max_requests`: of ten pipelined requests the server answers
/// three, the third with `connection: close`, and reads none of the rest
/// (RFC 9112 §9.6); the client hears those seven as retryable.
#[test]
fn a_request_limit_closes_after_the_last_request_and_reads_no_further() {
    for seed in [1, 6, 9] {
        let now = Instant::now();
        let mut client_config = Config::default();
        client_config.http1.max_pipeline = 10;
        let client = Connection::client_http1(client_config, now).unwrap();
        let server_config = Config {
            max_requests: std::num::NonZeroU32::new(3),
            ..Config::default()
        };
        let server = Connection::server(server_config, now).unwrap();
        let mut pair = Pair::join(client, server, now).split(seed);
        let ids = send_gets(&mut pair, 10);
        let (events, taken) = serve(&mut pair);
        assert_eq!(taken, 3, "seed {seed}: requests the server took");
        let answered: Vec<StreamId> = bodies(&events).into_iter().map(|(id, _)| id).collect();
        assert_eq!(answered, ids[..3], "seed {seed}");
        // Retryable, not lost: the client read the third answer's `close`
        // (a server closing without it would leave them lost).
        assert_eq!(retryable(&events), ids[3..], "seed {seed}");
        let (client, server) = pair.into_sides();
        assert!(client.is_closed() && server.is_closed());
    }
}

#[test]
fn undecided_server_speaks_http2_to_prior_knowledge() {
    let now = Instant::now();
    let client = Connection::client(Config::default(), now).unwrap();
    let server = Connection::server(Config::default(), now).unwrap();
    let mut pair = Pair::join(client, server, now).split(6);
    let id = pair
        .client
        .send_request(RequestHead::new("GET", "http", "sim", "/h2"), true)
        .unwrap();
    let events = exchange(&mut pair);
    assert_eq!(pair.server.protocol(), Some(Protocol::Http2));
    assert_eq!(bodies(&events), vec![(id, b"/h2".to_vec())]);
}

/// A TLS ClientHello (RFC 8446 §5.1: record type 22, version 3.x) sent to
/// a plain listener that tells the protocol from the first bytes: it is
/// not the HTTP/2 preface, so HTTP/1.1 takes it at its first byte, and no
/// request-line can begin with it (RFC 9112 §3: a method is a token), so
/// the 400 and the close come at once, named, not after the head timeout.
#[test]
fn a_tls_client_hello_on_an_undecided_server_is_refused_at_once() {
    let now = Instant::now();
    for first in [
        &b"\x16"[..],
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    ] {
        let mut server = Connection::server(Config::default(), now).unwrap();
        server.handle_input(now, &mut BytesMut::from(first));
        assert_eq!(server.protocol(), Some(Protocol::Http1), "{first:?}");
        let out = transmitted(&mut server, now);
        assert!(
            out.starts_with(b"HTTP/1.1 400 Bad Request\r\n"),
            "{first:?}: {:?}",
            String::from_utf8_lossy(&out)
        );
        let events: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
        let refused = events.iter().any(|e| {
            matches!(
                e,
                Event::Refused {
                    violation: Violation::Http1(Http1Error::TlsHandshake),
                    ..
                }
            )
        });
        assert!(refused, "{first:?}: {events:?}");
        assert!(
            events.iter().any(|e| matches!(e, Event::Closed { .. })),
            "{first:?}: {events:?}"
        );
    }
}

/// A server that told HTTP/1.1 from a `GET /` it read, and that request's
/// stream, to be answered.
fn asked(now: Instant) -> (Connection, StreamId) {
    let mut server = Connection::server(Config::default(), now).unwrap();
    let mut input = BytesMut::from(&b"GET / HTTP/1.1\r\nHost: sim\r\n\r\n"[..]);
    server.handle_input(now, &mut input);
    let stream = std::iter::from_fn(|| server.poll_event())
        .find_map(|e| match e {
            Event::Request { stream, .. } => Some(stream),
            _ => None,
        })
        .unwrap();
    (server, stream)
}

#[test]
fn push_is_refused_with_a_clear_error_under_http1() {
    let now = Instant::now();
    let (mut server, stream) = asked(now);
    let err = server
        .push_promise(stream, RequestHead::new("GET", "http", "sim", "/x"))
        .unwrap_err();
    assert_eq!(err, UserError::Unsupported("server push over HTTP/1.1"));
    assert!(err.to_string().contains("server push over HTTP/1.1"));
    server
        .send_response(stream, ResponseHead::new(200), true)
        .unwrap();
    let out = transmitted(&mut server, now);
    assert!(
        out.starts_with(b"HTTP/1.1 200 OK\r\n"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

/// RFC 9110 §5.5: a field value holds no CR, LF or NUL, and a name no
/// space, control or `:` (§5.1). Over HTTP/1.1, which writes fields as
/// lines, an application's field that breaks this is refused with
/// `InvalidField` and nothing goes out: it wrote `x-a: v\r\nset-cookie:
/// evil=1\r\n\r\nINJECTED` as given (response splitting), and a client's
/// request line and fields likewise (request smuggling).
#[test]
fn fields_that_would_write_lines_of_their_own_are_refused() {
    let now = Instant::now();
    for (name, value) in [
        ("x-a", "v\r\nset-cookie: evil=1\r\n\r\nINJECTED"),
        ("x-a", "nul\0"),
        ("bad name:", "y"),
        ("", "y"),
    ] {
        let (mut server, stream) = asked(now);
        let head = ResponseHead::new(200).field(name, value);
        let err = server.send_reply(stream, head, Bytes::new()).unwrap_err();
        let named = Bytes::copy_from_slice(name.as_bytes());
        assert_eq!(err, UserError::InvalidField(named));
        assert!(server.poll_transmit(now).is_none(), "nothing went out");
        // The stream waits for an answer that can go out.
        let fine = ResponseHead::new(500).field("content-type", "text/plain");
        server
            .send_reply(stream, fine, Bytes::from_static(b"no"))
            .unwrap();
        let out = transmitted(&mut server, now);
        assert!(
            out.starts_with(b"HTTP/1.1 500 "),
            "{}",
            String::from_utf8_lossy(&out)
        );
    }
    let mut client = Connection::client_http1(Config::default(), now).unwrap();
    for head in [
        RequestHead::new("GET", "http", "sim", "/a b\r\nX: y"),
        RequestHead::new("GET", "http", "x\r\nevil: 1", "/"),
        RequestHead::new("GE T", "http", "sim", "/"),
        RequestHead::new("GET", "http", "sim", "/").field("x-a", "v\r\nevil: 1"),
    ] {
        let err = client.send_request(head, true).unwrap_err();
        assert!(matches!(err, UserError::InvalidField(_)), "{err:?}");
    }
    assert!(client.poll_transmit(now).is_none(), "nothing went out");
}

/// What a server answers `request` with when the application gives
/// `send_reply` the final `head` and `body`: the wire, as text.
fn replied(request: &str, head: ResponseHead, body: &'static str) -> String {
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    let stream = request_from(&mut server, now, request.as_bytes());
    server
        .send_reply(stream, head, Bytes::from_static(body.as_bytes()))
        .unwrap();
    String::from_utf8(transmitted(&mut server, now).to_vec()).unwrap()
}

/// How many `content-length` fields `wire` holds, in any case.
fn lengths(wire: &str) -> usize {
    wire.to_ascii_lowercase().matches("content-length:").count()
}

/// RFC 9110 §8.6: a server SHOULD send Content-Length when it knows the
/// size before the head, and `send_reply` is given the whole body: the
/// answer says its size and is not chunked (RFC 9112 §6.1-§6.3), where it
/// was chunked. Not in a 204 (which must not say it) nor a 304 (the size
/// of a body it does not send); an answer to HEAD says the size of the
/// GET body it was given and sends none of it (§9.3.2), and given no body
/// it says nothing it cannot know. A length the application set is the
/// one (in any case of its name), not doubled.
#[test]
fn a_whole_reply_says_its_length_and_is_not_chunked() {
    const GET: &str = "GET / HTTP/1.1\r\nHost: sim\r\n\r\n";
    const HEAD: &str = "HEAD / HTTP/1.1\r\nHost: sim\r\n\r\n";
    let ok = replied(GET, ResponseHead::new(200), "hello");
    assert!(ok.contains("\r\ncontent-length: 5\r\n"), "{ok}");
    assert!(!ok.contains("chunked"), "{ok}");
    assert!(ok.ends_with("\r\n\r\nhello"), "{ok}");

    let empty = replied(GET, ResponseHead::new(200), "");
    assert!(empty.contains("\r\ncontent-length: 0\r\n"), "{empty}");
    assert_eq!(lengths(&empty), 1, "{empty}");

    let own = ResponseHead::new(200).field("Content-Length", "5");
    let own = replied(GET, own, "hello");
    assert_eq!(lengths(&own), 1, "{own}");
    assert!(!own.contains("chunked"), "{own}");
    assert!(own.ends_with("\r\n\r\nhello"), "{own}");

    let head = replied(HEAD, ResponseHead::new(200), "hello");
    assert!(head.contains("\r\ncontent-length: 5\r\n"), "{head}");
    assert!(head.ends_with("\r\n\r\n"), "no content: {head}");
    let head = replied(HEAD, ResponseHead::new(200), "");
    assert_eq!(lengths(&head), 0, "{head}");

    for status in [204, 304] {
        let none = replied(GET, ResponseHead::new(status), "dropped");
        assert_eq!(lengths(&none), 0, "{none}");
        assert!(none.ends_with("\r\n\r\n"), "no content: {none}");
    }

    // An HTTP/1.0 client knows no chunked coding: the length frames the
    // body, where the end of the connection did.
    let old = replied("GET / HTTP/1.0\r\n\r\n", ResponseHead::new(200), "hello");
    assert!(old.contains("\r\ncontent-length: 5\r\n"), "{old}");
}

/// RFC 9112 §6.1: a sender MUST NOT send Content-Length in a message with
/// Transfer-Encoding. An application's own `Content-Length`, capitalised
/// as HTTP/1.1 allows (RFC 9110 §5.1), frames the body it streams: it was
/// missed, and the chunked coding went out beside it.
#[test]
fn an_applications_content_length_in_any_case_is_not_chunked_beside() {
    let now = Instant::now();
    let (mut server, stream) = asked(now);
    server
        .send_response(
            stream,
            ResponseHead::new(200).field("Content-Length", "2"),
            false,
        )
        .unwrap();
    server
        .send_data(stream, Bytes::from_static(b"ok"), true)
        .unwrap();
    let wire = String::from_utf8(transmitted(&mut server, now).to_vec()).unwrap();
    assert!(!wire.contains("chunked"), "{wire}");
    assert!(wire.ends_with("\r\n\r\nok"), "{wire}");
}

/// `release_capacity` for an id that never named an exchange, or on a
/// server that has not told the protocol yet, is `UnknownStream`: nothing
/// was received there (it said `ReleaseTooLarge`). HTTP/1.1 keeps the
/// count for the connection as a whole.
#[test]
fn release_capacity_names_an_unknown_stream() {
    let now = Instant::now();
    let mut undecided = Connection::server(Config::default(), now).unwrap();
    let first = StreamId::new(1);
    assert_eq!(
        undecided.release_capacity(first, 0),
        Err(UserError::UnknownStream(first))
    );
    let (mut server, stream) = asked(now);
    let next = StreamId::new(stream.value() + 2);
    assert_eq!(
        server.release_capacity(next, 0),
        Err(UserError::UnknownStream(next))
    );
    assert_eq!(server.release_capacity(stream, 0), Ok(()));
    assert_eq!(
        server.release_capacity(stream, 1),
        Err(UserError::ReleaseTooLarge)
    );
}

/// An h2c upgrade of `GET /up` (RFC 7540 §3.2), as `curl --http2
/// http://…` sends it; HTTP2-Settings: SETTINGS_MAX_CONCURRENT_STREAMS =
/// 100, INITIAL_WINDOW_SIZE = 65535.
const UPGRADE: &[u8] = b"GET /up HTTP/1.1\r\nHost: sim\r\nConnection: Upgrade, HTTP2-Settings\r\n\
    Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n";

/// The client's preface and an empty SETTINGS, as a client sends them
/// once it has read the 101.
fn preface() -> BytesMut {
    let mut preface = BytesMut::from(&PREFACE[..]);
    Frame::Settings(Settings {
        ack: false,
        values: vec![],
    })
    .encode(&mut preface);
    preface
}

/// Feeds `input` to `server` and returns the stream of the request it
/// delivers.
fn request_from(server: &mut Connection, now: Instant, input: &[u8]) -> StreamId {
    server.handle_input(now, &mut BytesMut::from(input));
    std::iter::from_fn(|| server.poll_event())
        .find_map(|e| match e {
            Event::Request { stream, .. } => Some(stream),
            _ => None,
        })
        .expect("a request")
}

/// Everything `server` has to write now.
fn transmitted(server: &mut Connection, now: Instant) -> BytesMut {
    let mut out = BytesMut::new();
    while let Some(chunk) = server.poll_transmit(now) {
        out.extend_from_slice(&chunk);
    }
    out
}

/// The frames `decoder` reads in `out`, after the 101 that starts it.
fn frames_after_the_101(mut out: BytesMut, decoder: &mut FrameDecoder) -> Vec<Frame> {
    assert!(
        out.starts_with(b"HTTP/1.1 101 Switching Protocols\r\n"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    let end = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let mut frames = out.split_off(end);
    std::iter::from_fn(|| decoder.decode(&mut frames).unwrap()).collect()
}

/// RFC 7540 §3.2: the upgrade, then the preface.
#[test]
fn h2c_upgrade_answers_the_upgrading_request_on_stream_1() {
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    let mut input = BytesMut::from(UPGRADE);
    input.extend_from_slice(&preface());
    server.handle_input(now, &mut input);
    assert!(input.is_empty());
    assert_eq!(server.protocol(), Some(Protocol::Http2));
    let events: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
    let connected = events
        .iter()
        .filter(|e| matches!(e, Event::Connected))
        .count();
    assert_eq!(connected, 1, "one Connected across the switch: {events:?}");
    let stream = events
        .iter()
        .find_map(|e| match e {
            Event::Request {
                stream,
                head,
                end_stream: true,
            } if head.path == "/up" => Some(*stream),
            _ => None,
        })
        .expect("the upgrading request on stream 1");
    assert_eq!(stream, StreamId::new(1));
    server
        .send_response(stream, ResponseHead::new(200), false)
        .unwrap();
    server
        .send_data(stream, Bytes::from_static(b"upgraded"), true)
        .unwrap();
    let kinds = frames_after_the_101(
        transmitted(&mut server, now),
        &mut FrameDecoder::new(1 << 24),
    );
    assert!(
        matches!(kinds[0], Frame::Settings(Settings { ack: false, .. })),
        "server SETTINGS first"
    );
    assert!(
        kinds
            .iter()
            .any(|f| matches!(f, Frame::Settings(Settings { ack: true, .. })))
    );
    assert!(
        kinds
            .iter()
            .any(|f| matches!(f, Frame::Headers(h) if h.stream_id == StreamId::new(1)))
    );
    assert!(kinds.iter().any(|f| matches!(f, Frame::Data(d) if d.stream_id == StreamId::new(1) && d.end_stream && d.payload == "upgraded")));
}

/// `Config::max_requests`: the request an h2c upgrade carries is the
/// connection's first, so at a limit of one the server names stream 1 in
/// its GOAWAY at once, answers it, and closes for its limit.
#[test]
fn an_h2c_upgrade_request_counts_against_the_request_limit() {
    let now = Instant::now();
    let config = Config {
        max_requests: std::num::NonZeroU32::new(1),
        ..Config::default()
    };
    let mut server = Connection::server(config, now).unwrap();
    let mut input = BytesMut::from(UPGRADE);
    input.extend_from_slice(&preface());
    let stream = request_from(&mut server, now, &input);
    server
        .send_response(stream, ResponseHead::new(200), true)
        .unwrap();
    let out = transmitted(&mut server, now);
    let frames = frames_after_the_101(out, &mut FrameDecoder::new(1 << 24));
    let goaways: Vec<StreamId> = frames
        .iter()
        .filter_map(|f| match f {
            Frame::GoAway(g) => Some(g.last_stream_id),
            _ => None,
        })
        .collect();
    assert_eq!(goaways, [StreamId::new(1)], "{frames:?}");
    assert!(
        frames
            .iter()
            .any(|f| matches!(f, Frame::Headers(h) if h.stream_id == stream && h.end_stream)),
        "{frames:?}"
    );
    let closed = std::iter::from_fn(|| server.poll_event()).find_map(|e| match e {
        Event::Closed { cause, .. } => Some(cause),
        _ => None,
    });
    assert_eq!(closed, Some(h2sim_proto::CloseCause::RequestLimit));
}

/// RFC 7540 §3.2: the answer to the upgrading request waits for the
/// client's preface, which the client sends once it has read the 101, so
/// that what comes after the preface reaches a client already reading
/// HTTP/2 (JDK 17's HttpClient loses what follows the first 16 KiB it
/// read with the 101).
#[test]
fn h2c_upgrade_holds_stream_1_until_the_client_preface() {
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    let stream = request_from(&mut server, now, UPGRADE);
    server
        .send_response(stream, ResponseHead::new(200), false)
        .unwrap();
    server
        .send_data(stream, Bytes::from(vec![b'x'; 100_000]), true)
        .unwrap();
    let mut decoder = FrameDecoder::new(1 << 24);
    let before = frames_after_the_101(transmitted(&mut server, now), &mut decoder);
    assert!(
        matches!(
            before.first(),
            Some(Frame::Settings(Settings { ack: false, .. }))
        ),
        "our SETTINGS go out at once: {before:?}"
    );
    assert!(
        before.iter().all(|f| f.stream_id() == StreamId::ZERO),
        "nothing on stream 1 before the preface: {before:?}"
    );
    server.handle_input(now, &mut preface());
    let mut after = transmitted(&mut server, now);
    let frames: Vec<Frame> = std::iter::from_fn(|| decoder.decode(&mut after).unwrap()).collect();
    assert!(
        frames
            .iter()
            .any(|f| matches!(f, Frame::Headers(h) if h.stream_id == stream)),
        "{frames:?}"
    );
    let body: usize = frames
        .iter()
        .filter_map(|f| match f {
            Frame::Data(d) if d.stream_id == stream => Some(d.payload.len()),
            _ => None,
        })
        .sum();
    assert!(body > 0, "the answer follows the preface: {frames:?}");
}

#[test]
fn a_full_pipeline_is_held_and_served_once_answers_go_out() {
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    let mut input = BytesMut::new();
    for i in 0..40 {
        input.extend_from_slice(format!("GET /{i} HTTP/1.1\r\nHost: sim\r\n\r\n").as_bytes());
    }
    server.handle_input(now, &mut input);
    assert!(
        input.is_empty(),
        "the connection holds what it cannot read yet"
    );
    assert!(server.wants_input());
    let mut answered = 0;
    for _ in 0..100 {
        let requests: Vec<StreamId> = std::iter::from_fn(|| server.poll_event())
            .filter_map(|e| match e {
                Event::Request { stream, .. } => Some(stream),
                _ => None,
            })
            .collect();
        for stream in &requests {
            server
                .send_response(*stream, ResponseHead::new(204), true)
                .unwrap();
        }
        answered += requests.len();
        let out: usize = std::iter::from_fn(|| server.poll_transmit(now))
            .map(|b| b.len())
            .sum();
        if requests.is_empty() && out == 0 {
            break;
        }
    }
    assert_eq!(answered, 40);
}

/// A client that pipelines requests for large answers and reads none:
/// once 256 KiB of answers wait for the transport the server reads no
/// further request, whatever its driver does, and the connection stops
/// wanting input once it holds 256 KiB of unread requests; writing the
/// answers lets it read on. Its memory is what it holds, not what the
/// client sends.
#[test]
fn answers_waiting_for_the_transport_hold_back_further_requests() {
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    let request = b"GET / HTTP/1.1\r\nHost: sim\r\n\r\n";
    let body = Bytes::from(vec![b'a'; 64 * 1024]);
    let mut answered = 0;
    let mut sent = 0;
    while server.wants_input() && sent < 100_000 {
        let mut input = BytesMut::new();
        for _ in 0..100 {
            input.extend_from_slice(request);
        }
        sent += 100;
        server.handle_input(now, &mut input);
        while let Some(event) = server.poll_event() {
            if let Event::Request { stream, .. } = event {
                server
                    .send_response(stream, ResponseHead::new(200), false)
                    .unwrap();
                server.send_data(stream, body.clone(), true).unwrap();
                answered += 1;
            }
        }
    }
    assert!(!server.wants_input(), "read {sent} requests");
    // At most one batch past the bound: 256 KiB of answers is 4 of them.
    assert!(answered <= 4 + 16, "{answered} answered while unwritten");
    let written: usize = std::iter::from_fn(|| server.poll_transmit(now))
        .map(|b| b.len())
        .sum();
    assert!(written >= answered * body.len());
    assert!(
        std::iter::from_fn(|| server.poll_event()).any(|e| matches!(e, Event::Request { .. })),
        "once written, the held requests are read"
    );
}

#[test]
fn the_server_reads_ahead_at_most_its_configured_depth() {
    // RFC 9112 §9.3.2: a server may process pipelined requests in parallel
    // but answers them in order. With a depth of 4 the 5th request stays
    // unread until the responses before it are written, then is answered
    // after them.
    let now = Instant::now();
    let mut config = Config::default();
    config.http1.server_max_pipeline = 4;
    let mut server = Connection::server(config, now).unwrap();
    let mut input = BytesMut::new();
    for i in 1..=5 {
        input.extend_from_slice(format!("GET /{i} HTTP/1.1\r\nHost: sim\r\n\r\n").as_bytes());
    }
    server.handle_input(now, &mut input);
    let requests = |server: &mut Connection| -> Vec<(StreamId, Bytes)> {
        std::iter::from_fn(|| server.poll_event())
            .filter_map(|e| match e {
                Event::Request { stream, head, .. } => Some((stream, head.path)),
                _ => None,
            })
            .collect()
    };
    let first = requests(&mut server);
    let paths: Vec<&[u8]> = first.iter().map(|(_, p)| &p[..]).collect();
    assert_eq!(paths, [b"/1", b"/2", b"/3", b"/4"], "four read ahead");
    for (stream, path) in &first {
        let body = Bytes::from([b"answer", &path[..]].concat());
        server
            .send_response(*stream, ResponseHead::new(200), false)
            .unwrap();
        server.send_data(*stream, body, true).unwrap();
    }
    let mut wire = Vec::new();
    wire.extend(std::iter::from_fn(|| server.poll_transmit(now)).flat_map(|b| b.to_vec()));
    // The responses went out: the held 5th request was read meanwhile.
    let fifth = requests(&mut server);
    assert_eq!(fifth.len(), 1, "{fifth:?}");
    assert_eq!(&fifth[0].1[..], b"/5");
    server
        .send_response(fifth[0].0, ResponseHead::new(200), false)
        .unwrap();
    server
        .send_data(fifth[0].0, Bytes::from_static(b"answer/5"), true)
        .unwrap();
    wire.extend(std::iter::from_fn(|| server.poll_transmit(now)).flat_map(|b| b.to_vec()));
    let wire = String::from_utf8(wire).unwrap();
    let at: Vec<usize> = (1..=5)
        .map(|i| {
            wire.find(&format!("answer/{i}"))
                .unwrap_or_else(|| panic!("{wire}"))
        })
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "answered in order: {wire}"
    );
}

#[test]
fn a_connection_error_is_sticky() {
    // RFC 9112 §2.2/§3: a request line that does not parse gets 400 and the
    // connection ends; the error stays what the connection reports after
    // `Closed` was polled, and later bytes are not read.
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    let mut input = BytesMut::from(&b"GET / HTTP/1.1\r\nHost sim\r\n\r\n"[..]);
    server.handle_input(now, &mut input);
    let out = transmitted(&mut server, now);
    assert!(
        out.starts_with(b"HTTP/1.1 400"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    let events: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
    let first = events
        .iter()
        .find_map(|e| match e {
            Event::Closed { error: Some(e), .. } => Some(e.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no error close: {events:?}"));
    assert_eq!(server.error(), Some(&first));
    let mut input = BytesMut::from(&b"GET /later HTTP/1.1\r\nHost: sim\r\n\r\n"[..]);
    server.handle_input(now, &mut input);
    assert_eq!(server.poll_event(), None, "nothing read after the error");
    assert_eq!(server.poll_transmit(now), None);
    assert_eq!(server.error(), Some(&first));
}

const CONNECT: &str = "CONNECT upstream:443 HTTP/1.1\r\nHost: upstream:443\r\n\r\n";

/// Feeds `input` to `server` and returns its events, but `Connected`.
fn fed(server: &mut Connection, now: Instant, input: &[u8]) -> Vec<Event> {
    server.handle_input(now, &mut BytesMut::from(input));
    std::iter::from_fn(|| server.poll_event())
        .filter(|e| !matches!(e, Event::Connected))
        .collect()
}

/// A tunnel's client that sends and never reads: what the application
/// sends back waits in the connection, and past 256 KiB of it no more of
/// the client's bytes are taken (the rest is held, then none is read), so
/// an echo cannot grow without bound; once the output leaves, the held
/// bytes come. Before, every byte was taken: 300 MiB sent to an echo
/// tunnel held 320 MB.
#[test]
fn a_tunnel_stops_taking_input_while_its_answers_wait() {
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    let events = fed(&mut server, now, CONNECT.as_bytes());
    let [Event::Request { stream, .. }] = events[..] else {
        panic!("{events:?}");
    };
    server
        .send_response(stream, ResponseHead::new(200), false)
        .unwrap();
    let _ = transmitted(&mut server, now);
    let chunk = vec![b'x'; 64 * 1024];
    let (mut taken, mut fed_in) = (0, 0);
    while server.wants_input() {
        assert!(fed_in < 64 << 20, "{taken} taken of {fed_in}");
        for event in fed(&mut server, now, &chunk) {
            if let Event::Data { data, .. } = event {
                taken += data.len();
                server.send_data(stream, data, false).unwrap();
            }
        }
        fed_in += chunk.len();
    }
    assert!(taken <= 256 * 1024 + chunk.len(), "{taken} taken");
    // It stopped because its answers waited, not before, and held some.
    assert!(taken >= 256 * 1024 && fed_in > taken, "{taken} of {fed_in}");
    assert!(fed_in - taken <= 256 * 1024 + chunk.len(), "{fed_in} fed");
    // The answers leave: the held input is taken again.
    let out = transmitted(&mut server, now);
    assert_eq!(out.len(), taken);
    let mut more = 0;
    while let Some(Event::Data { data, .. }) = server.poll_event() {
        more += data.len();
    }
    assert!(more > 0 && taken + more <= fed_in, "{more}");
}

/// RFC 9110 §9.3.6 (and §8.6): "A server MUST NOT send any
/// Transfer-Encoding or Content-Length header fields in a 2xx (Successful)
/// response to CONNECT", whether the application gave a body or a length
/// of its own; curl said "Ignoring Content-Length in CONNECT 200
/// response". A CONNECT's request stays open for the tunnel it may become
/// (end_stream false), where it ended with its head.
#[test]
fn rfc9110_s9_3_6_a_2xx_to_connect_says_no_length() {
    let now = Instant::now();
    for head in [
        ResponseHead::new(200),
        ResponseHead::new(200).field("Content-Length", "0"),
    ] {
        let mut server = Connection::server(Config::default(), now).unwrap();
        let events = fed(&mut server, now, CONNECT.as_bytes());
        let stream = match &events[..] {
            [
                Event::Request {
                    stream,
                    head,
                    end_stream: false,
                },
            ] if head.method == "CONNECT" && head.authority == "upstream:443" => *stream,
            other => panic!("want the CONNECT, open: {other:?}"),
        };
        server.send_reply(stream, head, Bytes::new()).unwrap();
        let wire = String::from_utf8(transmitted(&mut server, now).to_vec()).unwrap();
        assert!(wire.starts_with("HTTP/1.1 200 OK\r\n"), "{wire}");
        assert_eq!(lengths(&wire), 0, "{wire}");
        assert!(
            !wire.to_ascii_lowercase().contains("transfer-encoding"),
            "{wire}"
        );
        assert!(wire.ends_with("\r\n\r\n"), "{wire}");
    }
}

/// RFC 9110 §9.3.6: after a 2xx the connection is the tunnel, "the
/// tunnel is closed when a tunnel intermediary detects that either side
/// has closed its connection"; the client's side of it (RFC 9112 §6.3
/// item 2) reads everything after the head as tunnel bytes. What the
/// client sends, even in the same read as the CONNECT and even looking
/// like a request, is the stream's Data, not parsed; what the
/// application sends is written as is, unframed; the client's close ends
/// the stream, and the application's end ends the connection.
#[test]
fn rfc9110_s9_3_6_after_a_2xx_the_connection_is_the_tunnel() {
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    let early = format!("{CONNECT}GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let events = fed(&mut server, now, early.as_bytes());
    let [Event::Request { stream, .. }] = events[..] else {
        panic!("the tunnel's bytes wait for the answer: {events:?}");
    };
    server
        .send_response(stream, ResponseHead::new(200), false)
        .unwrap();
    let head = transmitted(&mut server, now);
    assert_eq!(&head[..], b"HTTP/1.1 200 OK\r\n\r\n");
    let events: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
    let mut got = Vec::new();
    for e in &events {
        match e {
            Event::Data {
                data,
                end_stream: false,
                ..
            } => got.extend_from_slice(data),
            other => panic!("only tunnel data: {other:?}"),
        }
    }
    assert_eq!(got, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let events = fed(&mut server, now, b"\x00\x01binary");
    assert!(
        matches!(&events[..], [Event::Data { data, end_stream: false, .. }] if data.as_ref() == b"\x00\x01binary"),
        "{events:?}"
    );
    server
        .send_data(stream, Bytes::from_static(b"echo \x00\r\n"), false)
        .unwrap();
    assert_eq!(&transmitted(&mut server, now)[..], b"echo \x00\r\n");
    server.handle_eof(now);
    let events: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
    assert!(
        matches!(&events[..], [Event::Data { end_stream: true, data, .. }] if data.is_empty()),
        "the client's close ends its side only: {events:?}"
    );
    server
        .send_data(stream, Bytes::from_static(b"last"), true)
        .unwrap();
    assert_eq!(&transmitted(&mut server, now)[..], b"last");
    let events: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
    assert!(
        events.iter().any(|e| matches!(e, Event::Closed { .. })),
        "{events:?}"
    );
    assert!(server.is_closed() || server.ended());
}

/// RFC 9110 §9.3.6: a CONNECT answered otherwise than 2xx opens no
/// tunnel: the answer is framed as any (its length said), the request
/// ends there, and the connection goes on with the next request.
#[test]
fn rfc9110_s9_3_6_connect_refused_keeps_the_connection_http() {
    let now = Instant::now();
    let mut server = Connection::server(Config::default(), now).unwrap();
    let input = format!("{CONNECT}GET /next HTTP/1.1\r\nHost: sim\r\n\r\n");
    let events = fed(&mut server, now, input.as_bytes());
    let [Event::Request { stream, .. }] = events[..] else {
        panic!("{events:?}");
    };
    server
        .send_reply(stream, ResponseHead::new(404), Bytes::from_static(b"no"))
        .unwrap();
    let wire = String::from_utf8(transmitted(&mut server, now).to_vec()).unwrap();
    assert!(wire.starts_with("HTTP/1.1 404"), "{wire}");
    assert!(wire.contains("\r\ncontent-length: 2\r\n"), "{wire}");
    assert!(!wire.contains("connection: close"), "{wire}");
    let events: Vec<Event> = std::iter::from_fn(|| server.poll_event()).collect();
    assert!(
        matches!(&events[..], [Event::Data { end_stream: true, .. }, Event::Request { head, .. }] if head.path == "/next"),
        "{events:?}"
    );
}
