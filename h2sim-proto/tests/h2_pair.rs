//! Client against server in memory: whole exchanges, with bytes split at
//! random points on every delivery.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use h2sim_proto::frame::Frame;
use h2sim_proto::host::{ClientError, ClientOptions, ServerConfigs};
use h2sim_proto::pair::Dir;
use h2sim_proto::{
    Config, Connection, Event, HeaderField, LocalSettings, Protocol, Reason, RequestHead,
    ResponseHead, StreamId, UserError, WindowPolicy,
};
use support::{Pair, retryable, send_gets};

fn get(path: &str) -> RequestHead {
    RequestHead::new("GET", "http", "example.com", path.to_owned())
}

fn post(path: &str) -> RequestHead {
    RequestHead::new("POST", "http", "example.com", path.to_owned())
}

/// Runs a server that answers every request with 200 and the request body
/// (or "hello" when there is none), and collects each client response.
#[derive(Default)]
struct Echo {
    bodies: HashMap<StreamId, BytesMut>,
    /// Requests the server took.
    requests: usize,
}

impl Echo {
    fn serve(&mut self, pair: &mut Pair) {
        for event in pair.server_events() {
            if matches!(event, Event::Request { .. }) {
                self.requests += 1;
            }
            match event {
                Event::Request {
                    stream,
                    end_stream: true,
                    ..
                } => {
                    pair.server
                        .send_response(stream, ResponseHead::new(200), false)
                        .unwrap();
                    pair.server
                        .send_data(stream, Bytes::from_static(b"hello"), true)
                        .unwrap();
                }
                Event::Request { stream, .. } => {
                    self.bodies.insert(stream, BytesMut::new());
                }
                Event::Data {
                    stream,
                    data,
                    end_stream,
                } => {
                    let body = self.bodies.entry(stream).or_default();
                    body.extend_from_slice(&data);
                    if end_stream {
                        let body = self.bodies.remove(&stream).unwrap().freeze();
                        pair.server
                            .send_response(stream, ResponseHead::new(200), false)
                            .unwrap();
                        pair.server.send_data(stream, body, true).unwrap();
                    }
                }
                _ => {}
            }
        }
    }
}

/// Client side: complete responses by stream.
#[derive(Default)]
struct Responses {
    status: HashMap<StreamId, u16>,
    bodies: HashMap<StreamId, BytesMut>,
    done: Vec<StreamId>,
    other: Vec<Event>,
}

impl Responses {
    fn take(&mut self, pair: &mut Pair) {
        for event in pair.client_events() {
            match event {
                Event::Response {
                    stream,
                    head,
                    end_stream,
                } => {
                    self.status.insert(stream, head.status);
                    if end_stream {
                        self.done.push(stream);
                    }
                }
                Event::Data {
                    stream,
                    data,
                    end_stream,
                } => {
                    self.bodies
                        .entry(stream)
                        .or_default()
                        .extend_from_slice(&data);
                    if end_stream {
                        self.done.push(stream);
                    }
                }
                other => self.other.push(other),
            }
        }
    }
}

/// Drives both applications until nothing moves.
fn run(pair: &mut Pair, echo: &mut Echo, responses: &mut Responses) {
    for _ in 0..100_000 {
        let moved = pair.drive();
        echo.serve(pair);
        responses.take(pair);
        if !moved && !pair.drive() {
            return;
        }
    }
    panic!("exchange did not settle");
}

#[test]
fn get_and_post_round_trip() {
    let mut pair = Pair::with_defaults(1);
    pair.connect();
    let a = pair.client.send_request(get("/a"), true).unwrap();
    let b = pair.client.send_request(post("/b"), false).unwrap();
    pair.client
        .send_data(b, Bytes::from_static(b"ping body"), true)
        .unwrap();
    let (mut echo, mut responses) = (Echo::default(), Responses::default());
    run(&mut pair, &mut echo, &mut responses);
    assert_eq!(responses.status[&a], 200);
    assert_eq!(&responses.bodies[&a][..], b"hello");
    assert_eq!(&responses.bodies[&b][..], b"ping body");
    assert_eq!(responses.done.len(), 2);
    let (c, s) = (pair.client.stats(), pair.server.stats());
    assert_eq!(c.bytes_sent, s.bytes_received);
    assert_eq!(s.bytes_sent, c.bytes_received);
    assert_eq!(c.data_bytes_sent, 9);
    assert_eq!(s.data_bytes_received, 9);
    assert_eq!(c.data_bytes_received, 5 + 9);
    assert_eq!(c.header_wire_bytes_sent, s.header_wire_bytes_received);
    assert_eq!(c.header_bytes_sent, s.header_bytes_received);
    assert!(
        c.header_wire_bytes_sent < c.header_bytes_sent,
        "HPACK saves space"
    );
}

#[test]
fn many_concurrent_streams_queue_behind_the_servers_limit() {
    let server = Config {
        max_concurrent_streams: 7,
        ..Config::default()
    };
    let mut pair = Pair::new(Config::default(), server, 2);
    pair.connect();
    let ids = send_gets(&mut pair, 300);
    let (mut echo, mut responses) = (Echo::default(), Responses::default());
    run(&mut pair, &mut echo, &mut responses);
    assert_eq!(
        responses.done.len(),
        300,
        "every request answered, none refused"
    );
    for id in ids {
        assert_eq!(responses.status[&id], 200);
    }
    assert!(
        responses
            .other
            .iter()
            .all(|e| !matches!(e, Event::StreamReset { .. }))
    );
}

#[test]
fn large_bodies_under_small_windows() {
    let small = Config {
        initial_window_size: 1000,
        connection_window_size: 65_535,
        max_frame_size: 16_384,
        ..Config::default()
    };
    for seed in 0..4 {
        let mut pair = Pair::new(small.clone(), small.clone(), seed);
        pair.connect();
        let body: Bytes = (0..300_000u32)
            .map(|i| (i % 251) as u8)
            .collect::<Vec<u8>>()
            .into();
        let id = pair.client.send_request(post("/big"), false).unwrap();
        pair.client.send_data(id, body.clone(), true).unwrap();
        let (mut echo, mut responses) = (Echo::default(), Responses::default());
        run(&mut pair, &mut echo, &mut responses);
        assert_eq!(responses.bodies[&id].len(), body.len(), "seed {seed}");
        assert_eq!(&responses.bodies[&id][..], &body[..]);
    }
}

#[test]
fn ping_reports_rtt() {
    let mut pair = Pair::with_defaults(3);
    pair.connect();
    pair.client.ping(pair.now).unwrap();
    pair.drive();
    pair.now += Duration::from_millis(5);
    pair.drive();
    assert!(
        pair.client_events()
            .iter()
            .any(|e| matches!(e, Event::Pong { .. }))
    );
}

#[test]
fn push_accepted_and_refused() {
    let mut pair = Pair::with_defaults(4);
    pair.connect();
    let id = pair.client.send_request(get("/index.html"), true).unwrap();
    pair.drive();
    let events = pair.server_events();
    assert!(matches!(events[0], Event::Request { stream, .. } if stream == id));
    let p1 = pair.server.push_promise(id, get("/style.css")).unwrap();
    let p2 = pair.server.push_promise(id, get("/script.js")).unwrap();
    pair.server
        .send_response(id, ResponseHead::new(200), false)
        .unwrap();
    pair.server
        .send_data(id, Bytes::from_static(b"<html>"), true)
        .unwrap();
    pair.drive();
    let events = pair.client_events();
    let promised: Vec<StreamId> = events
        .iter()
        .filter_map(|e| match e {
            Event::PushPromise {
                parent,
                promised,
                request,
            } if *parent == id => {
                assert!(request.path == "/style.css" || request.path == "/script.js");
                Some(*promised)
            }
            _ => None,
        })
        .collect();
    assert_eq!(promised, vec![p1, p2]);
    // Refuse the second push; accept the first.
    pair.client.reset(p2, Reason::CANCEL).unwrap();
    pair.server
        .send_response(p1, ResponseHead::new(200), false)
        .unwrap();
    pair.server
        .send_data(p1, Bytes::from_static(b"body{}"), true)
        .unwrap();
    pair.drive();
    // The server learns of the refusal and can no longer answer p2.
    let server_events = pair.server_events();
    assert!(server_events.iter().any(
        |e| matches!(e, Event::StreamReset { stream, reason: Reason::CANCEL, remote: true, .. } if *stream == p2)
    ));
    assert!(
        pair.server
            .send_response(p2, ResponseHead::new(200), true)
            .is_err()
    );
    let mut responses = Responses::default();
    responses.take(&mut pair);
    assert_eq!(responses.status[&p1], 200);
    assert_eq!(&responses.bodies[&p1][..], b"body{}");
}

#[test]
fn push_disabled_by_client_is_refused_locally() {
    let client = Config {
        enable_push: false,
        ..Config::default()
    };
    let mut pair = Pair::new(client, Config::default(), 5);
    pair.connect();
    let id = pair.client.send_request(get("/"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    assert!(pair.server.push_promise(id, get("/x")).is_err());
}

#[test]
fn graceful_goaway_lets_open_streams_finish() {
    let mut pair = Pair::with_defaults(6);
    pair.connect();
    let a = pair.client.send_request(get("/slow"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    pair.server.go_away(pair.now);
    pair.drive();
    let events = pair.client_events();
    assert!(events.iter().any(|e| matches!(e, Event::GoAway { .. })));
    assert!(
        pair.client.send_request(get("/new"), true).is_err(),
        "no new streams after GOAWAY"
    );
    // The stream opened before the GOAWAY still completes.
    pair.server
        .send_response(a, ResponseHead::new(200), true)
        .unwrap();
    pair.drive();
    let events = pair.client_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Response { stream, .. } if *stream == a))
    );
    assert!(
        pair.server.is_closed(),
        "server done once its last stream ended"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Closed { error: None, .. }))
    );
}

#[test]
fn goaway_fails_unprocessed_streams_as_retryable() {
    let server = Config {
        max_concurrent_streams: 1,
        ..Config::default()
    };
    let mut pair = Pair::new(Config::default(), server, 7);
    pair.connect();
    let a = pair.client.send_request(get("/a"), true).unwrap();
    let b = pair.client.send_request(get("/b"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    pair.server.abort(Reason::NO_ERROR);
    pair.drive();
    let events = pair.client_events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Retryable { stream } if *stream == b))
    );
    let _ = a;
}

/// `Config::max_requests`: the server takes three of ten streams, names
/// the third in one GOAWAY (RFC 9113 §6.8), and the client hears the other
/// seven as retryable; both ends close once the three are answered.
#[test]
fn a_request_limit_ends_with_one_goaway_naming_the_last_request() {
    for seed in 0..4 {
        let server = Config {
            max_requests: std::num::NonZeroU32::new(3),
            ..Config::default()
        };
        let mut pair = Pair::new(Config::default(), server, seed);
        pair.connect();
        let ids = send_gets(&mut pair, 10);
        let (mut echo, mut responses) = (Echo::default(), Responses::default());
        run(&mut pair, &mut echo, &mut responses);
        assert_eq!(echo.requests, 3, "seed {seed}: requests the server took");
        responses.done.sort();
        assert_eq!(responses.done, ids[..3], "seed {seed}");
        assert_eq!(retryable(&responses.other), ids[3..], "seed {seed}");
        let goaways: Vec<StreamId> = responses
            .other
            .iter()
            .filter_map(|e| match e {
                Event::GoAway {
                    last_stream_id,
                    reason: Reason::NO_ERROR,
                    ..
                } => Some(*last_stream_id),
                _ => None,
            })
            .collect();
        assert_eq!(goaways, [ids[2]], "one GOAWAY, naming the third stream");
        assert!(pair.client.is_closed() && pair.server.is_closed());
    }
}

#[test]
fn settings_timeout_ends_the_connection() {
    let mut pair = Pair::with_defaults(8);
    // Client output is never delivered: the server never sees our SETTINGS ACK.
    while pair.client.poll_transmit(pair.now).is_some() {}
    pair.advance(Duration::from_secs(11));
    let events = pair.client_events();
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Closed { error: Some(err), .. } if err.reason() == Reason::SETTINGS_TIMEOUT
    )));
}

/// RFC 9113 §6.5.2 bounds SETTINGS_INITIAL_WINDOW_SIZE (2^31-1) and
/// SETTINGS_MAX_FRAME_SIZE (2^14 to 2^24-1), and a peer answers a value
/// outside them with a connection error: `update_settings` refuses it, and
/// sends nothing, where it sent it and the connection died.
#[test]
fn settings_out_of_the_rfcs_range_are_refused() {
    let mut pair = Pair::with_defaults(0);
    pair.connect();
    let now = pair.now;
    let good = pair.server.local_settings().unwrap();
    for (bad, name) in [
        (
            LocalSettings {
                initial_window_size: u32::MAX,
                ..good
            },
            "SETTINGS_INITIAL_WINDOW_SIZE",
        ),
        (
            LocalSettings {
                max_frame_size: 5,
                ..good
            },
            "SETTINGS_MAX_FRAME_SIZE",
        ),
        (
            LocalSettings {
                max_frame_size: 1 << 24,
                ..good
            },
            "SETTINGS_MAX_FRAME_SIZE",
        ),
    ] {
        let err = pair.server.update_settings(now, bad).unwrap_err();
        assert!(
            matches!(err, UserError::InvalidSetting { name: n, .. } if n == name),
            "{err}"
        );
        assert!(pair.server.poll_transmit(now).is_none(), "nothing sent");
    }
}

/// The same bounds at the start (RFC 9113 §6.5.2): a `Config` with a
/// value outside them makes no connection, `InvalidSetting` naming the
/// setting and its range, by the check `update_settings` uses, where the
/// connection was made, sent the value in its first SETTINGS and was ended
/// by its peer. Hosts check once, when they start. The bounds themselves
/// are taken.
#[test]
fn a_config_out_of_the_rfcs_range_makes_no_connection() {
    let now = Instant::now();
    let config = |initial_window_size, max_frame_size| Config {
        initial_window_size,
        max_frame_size,
        ..Config::default()
    };
    for (bad, name) in [
        (config(1 << 31, 16_384), "SETTINGS_INITIAL_WINDOW_SIZE"),
        (config(65_535, 16_383), "SETTINGS_MAX_FRAME_SIZE"),
        (config(65_535, 1 << 24), "SETTINGS_MAX_FRAME_SIZE"),
    ] {
        let refused = |made: Result<Connection, UserError>| matches!(made, Err(UserError::InvalidSetting { name: n, .. }) if n == name);
        assert!(refused(Connection::client(bad.clone(), now)));
        assert!(refused(Connection::client_http1(bad.clone(), now)));
        assert!(refused(Connection::server(bad.clone(), now)));
        for protocol in [Protocol::Http1, Protocol::Http2] {
            assert!(refused(Connection::server_for(protocol, bad.clone(), now)));
        }
        assert!(matches!(
            ServerConfigs::new(&bad, None),
            Err(UserError::InvalidSetting { name: n, .. }) if n == name
        ));
        let mut options = ClientOptions::<()> {
            config: bad,
            ..ClientOptions::default()
        };
        assert!(matches!(
            options.target("http://127.0.0.1:8080"),
            Err(ClientError::Config(UserError::InvalidSetting { name: n, .. })) if n == name
        ));
    }
    let err = Connection::server(config(65_535, 5), now).unwrap_err();
    assert_eq!(
        err.to_string(),
        "SETTINGS_MAX_FRAME_SIZE 5 is out of range: 16384 to 16777215 (RFC 9113 §6.5.2)"
    );
    for edge in [config((1 << 31) - 1, (1 << 24) - 1), config(0, 16_384)] {
        assert!(Connection::client(edge.clone(), now).is_ok());
        assert!(Connection::server(edge, now).is_ok());
    }
}

#[test]
fn settings_changes_mid_flight() {
    for seed in 0..4 {
        let mut pair = Pair::with_defaults(seed);
        pair.connect();
        let body: Bytes = vec![42u8; 200_000].into();
        let id = pair.client.send_request(post("/upload"), false).unwrap();
        pair.client.send_data(id, body.clone(), true).unwrap();
        pair.drive();
        // The server shrinks its windows and frame size while the body flows,
        // then grows them again; the upload must arrive intact either way.
        let mut small = pair.server.local_settings().unwrap();
        small.initial_window_size = 777;
        small.max_concurrent_streams = 3;
        pair.server.update_settings(pair.now, small).unwrap();
        let (mut echo, mut responses) = (Echo::default(), Responses::default());
        run(&mut pair, &mut echo, &mut responses);
        assert_eq!(
            pair.server.local_settings().unwrap().initial_window_size,
            777,
            "acknowledged"
        );
        let mut big = small;
        big.initial_window_size = 1 << 20;
        big.max_frame_size = 1 << 20;
        pair.server.update_settings(pair.now, big).unwrap();
        let second = pair.client.send_request(post("/again"), false).unwrap();
        pair.client.send_data(second, body.clone(), true).unwrap();
        run(&mut pair, &mut echo, &mut responses);
        assert_eq!(&responses.bodies[&id][..], &body[..], "seed {seed}");
        assert_eq!(&responses.bodies[&second][..], &body[..], "seed {seed}");
    }
}

#[test]
fn interim_response_then_final_with_trailers() {
    let mut pair = Pair::with_defaults(9);
    pair.connect();
    let id = pair.client.send_request(post("/grpc"), false).unwrap();
    pair.client
        .send_data(id, Bytes::from_static(b"req"), false)
        .unwrap();
    pair.client
        .send_trailers(id, vec![h2sim_proto::HeaderField::new("x-checksum", "abc")])
        .unwrap();
    pair.drive();
    let events = pair.server_events();
    assert!(events.iter().any(|e| matches!(e, Event::Trailers { stream, fields } if *stream == id && fields[0].value == "abc")));
    pair.server
        .send_response(id, ResponseHead::new(103).field("link", "</s.css>"), false)
        .unwrap();
    assert!(
        pair.server
            .send_response(id, ResponseHead::new(103), true)
            .is_err(),
        "1xx cannot end a stream"
    );
    pair.server
        .send_response(id, ResponseHead::new(200), false)
        .unwrap();
    pair.server
        .send_data(id, Bytes::from_static(b"resp"), false)
        .unwrap();
    pair.server
        .send_trailers(id, vec![h2sim_proto::HeaderField::new("grpc-status", "0")])
        .unwrap();
    pair.drive();
    let statuses: Vec<u16> = pair
        .client_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Response { head, .. } => Some(head.status),
            Event::Trailers { fields, .. } => {
                assert_eq!(fields[0].name, "grpc-status");
                Some(0)
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        vec![103, 200, 0],
        "interim, final, trailers in order"
    );
}

#[test]
fn a_reader_that_stops_pushes_back_on_the_sender() {
    let server = Config {
        initial_window_size: 65_535,
        connection_window_size: 131_072,
        ..Config::default()
    };
    let mut pair = Pair::new(Config::default(), server, 10);
    pair.connect();
    let id = pair.client.send_request(post("/upload"), false).unwrap();
    pair.client
        .send_data(id, Bytes::from(vec![1u8; 4 << 20]), true)
        .unwrap();
    let before = pair.written(Dir::ClientToServer);
    pair.drive(); // the server application does not poll its events
    let sent = pair.written(Dir::ClientToServer) - before;
    assert!(
        sent < 70_000,
        "only one stream window crossed while nobody read: {sent}"
    );
    // Reading releases the window and the upload completes.
    let mut received = 0;
    for _ in 0..10_000 {
        for event in pair.server_events() {
            if let Event::Data { data, .. } = event {
                received += data.len();
            }
        }
        if !pair.drive() {
            break;
        }
    }
    assert_eq!(received, 4 << 20);
}

#[test]
fn frame_trace_reports_both_directions() {
    let traced = Config {
        trace_frames: true,
        ..Config::default()
    };
    let mut pair = Pair::new(traced, Config::default(), 11);
    pair.connect();
    let id = pair.client.send_request(get("/traced"), true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    pair.server
        .send_response(id, ResponseHead::new(200), false)
        .unwrap();
    pair.server
        .send_data(id, Bytes::from_static(b"ok"), true)
        .unwrap();
    pair.drive();
    let frames: Vec<(bool, Frame)> = pair
        .client_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Frame { outgoing, frame } => Some((outgoing, frame)),
            _ => None,
        })
        .collect();
    assert!(
        frames
            .iter()
            .any(|(out, f)| *out && matches!(f, Frame::Headers(h) if h.stream_id == id))
    );
    assert!(
        frames
            .iter()
            .any(|(out, f)| !*out && matches!(f, Frame::Data(d) if d.payload == "ok"))
    );
    assert!(
        frames
            .iter()
            .any(|(out, f)| !*out && matches!(f, Frame::Headers(h) if h.stream_id == id))
    );
}

/// Heads through repeats of their blocks, given back after each exchange
/// (a server's request head, a client's response fields): each head is the
/// one sent, whether the core handed out the head given back for the
/// block before or decoded it; a head the application changed before
/// giving it back is not handed out again; the statistics count every
/// block's fields either way.
#[test]
fn heads_given_back_come_back_only_for_their_own_blocks() {
    let mut pair = Pair::with_defaults(3);
    pair.connect();
    let paths = ["/a"; 6].into_iter().chain(["/b"; 5]).chain(["/a"; 2]);
    for (round, path) in paths.enumerate() {
        let head = get(path).field("accept", "*/*");
        pair.client.send_request(head, true).unwrap();
        while pair.drive() {}
        let mut requests = 0;
        for event in pair.server_events() {
            if let Event::Request { stream, head, .. } = event {
                requests += 1;
                assert_eq!(head.path.as_ref(), path.as_bytes(), "round {round}");
                assert_eq!(head.method.as_ref(), b"GET");
                assert_eq!(head.authority.as_ref(), b"example.com");
                assert_eq!(head.fields, vec![HeaderField::new("accept", "*/*")]);
                let mut head = head;
                if round == 9 {
                    // Changed: the next "/b" must not come out as "/c".
                    head.path = Bytes::from_static(b"/c");
                }
                pair.server.recycle_request(head);
                let answer = ResponseHead::new(200).field("server", path);
                pair.server.send_response(stream, answer, true).unwrap();
            }
        }
        assert_eq!(requests, 1);
        while pair.drive() {}
        let mut responses = 0;
        for event in pair.client_events() {
            if let Event::Response { head, .. } = event {
                responses += 1;
                assert_eq!(head.status, 200);
                assert_eq!(head.fields, vec![HeaderField::new("server", path)]);
                let mut fields = head.fields;
                if round == 9 {
                    fields[0].sensitive = true;
                }
                pair.client.recycle_fields(fields);
            }
        }
        assert_eq!(responses, 1);
    }
    let (c, s) = (pair.client.stats(), pair.server.stats());
    assert_eq!(c.header_bytes_sent, s.header_bytes_received);
    assert_eq!(s.header_bytes_sent, c.header_bytes_received);
}

/// A pair (seeded `seed`) whose server traces its frames and has taken a
/// HEAD request for /a on the returned stream.
fn head_request(seed: u64) -> (Pair, StreamId) {
    traced_request(seed, "HEAD")
}

/// A pair (seeded `seed`) whose server traces its frames and has taken a
/// `method` request for /a on the returned stream.
fn traced_request(seed: u64, method: &str) -> (Pair, StreamId) {
    let traced = Config {
        trace_frames: true,
        ..Config::default()
    };
    let mut pair = Pair::new(Config::default(), traced, seed);
    pair.connect();
    let head = RequestHead::new(method.to_owned(), "http", "example.com", "/a");
    let id = pair.client.send_request(head, true).unwrap();
    pair.drive();
    let _ = pair.server_events();
    (pair, id)
}

/// RFC 9110 §15: a status is 100-599; RFC 9113 §8.6: HTTP/2 has no 101;
/// RFC 9110 §15.2: a 1xx is interim, so `send_reply`, which sends a whole
/// response, takes only a final one. What no client could take is
/// refused before anything leaves, and the stream can still be answered.
#[test]
fn only_statuses_a_client_can_take_are_sent() {
    let (mut pair, id) = traced_request(14, "GET");
    for bad in [0, 99, 101, 600, 999] {
        assert_eq!(
            pair.server.send_response(id, ResponseHead::new(bad), true),
            Err(h2sim_proto::UserError::InvalidStatus(bad)),
            "{bad}"
        );
    }
    for interim in [100, 103] {
        assert_eq!(
            pair.server
                .send_reply(id, ResponseHead::new(interim), Bytes::from_static(b"x")),
            Err(h2sim_proto::UserError::InterimReply(interim)),
            "{interim}"
        );
    }
    pair.drive();
    assert!(
        !frames_sent(&mut pair)
            .iter()
            .any(|f| matches!(f, Frame::Headers(_) | Frame::Data(_))),
        "nothing left for the refused heads"
    );
    pair.server
        .send_reply(id, ResponseHead::new(200), Bytes::from_static(b"ok"))
        .unwrap();
    pair.drive();
    let mut responses = Responses::default();
    responses.take(&mut pair);
    assert_eq!(responses.status.get(&id), Some(&200));
    assert_eq!(responses.done, [id]);
}

/// RFC 9110 §6.4.1, §15.3.5, §15.4.5: a 204 or 304 has no content, and
/// a client resets a stream whose DATA carries some (RFC 9113 §8.1.1;
/// curl and nghttp with PROTOCOL_ERROR). A whole reply ends with its
/// HEADERS; content given after a head sent alone leaves only END_STREAM,
/// as for HEAD.
#[test]
fn a_204_or_304_sends_no_content() {
    for (seed, status) in [(15, 204), (16, 304)] {
        let (mut pair, id) = traced_request(seed, "GET");
        pair.server
            .send_reply(id, ResponseHead::new(status), Bytes::from_static(b"body"))
            .unwrap();
        pair.drive();
        let frames: Vec<(bool, usize, bool)> = frames_sent(&mut pair)
            .into_iter()
            .filter_map(|frame| match frame {
                Frame::Headers(h) => Some((true, 0, h.end_stream)),
                Frame::Data(d) => Some((false, d.payload.len(), d.end_stream)),
                _ => None,
            })
            .collect();
        assert_eq!(
            frames,
            [(true, 0, true)],
            "{status}: HEADERS ending the stream"
        );
        let mut responses = Responses::default();
        responses.take(&mut pair);
        assert_eq!(responses.status.get(&id), Some(&status));
        assert_eq!(responses.done, [id]);
        assert!(responses.other.is_empty(), "{:?}", responses.other);
    }
    let (mut pair, id) = traced_request(17, "GET");
    pair.server
        .send_response(id, ResponseHead::new(204), false)
        .unwrap();
    let responses = last_content_ends_only(&mut pair, id);
    assert_eq!(responses.done, [id]);
    assert!(responses.other.is_empty(), "{:?}", responses.other);
}

/// The server gives content to end `stream`, whose response may have
/// none: one empty DATA frame ending the stream leaves, and nothing else.
/// Returns what the client received.
fn last_content_ends_only(pair: &mut Pair, stream: StreamId) -> Responses {
    pair.server
        .send_data(stream, Bytes::from_static(b"never"), true)
        .unwrap();
    pair.drive();
    assert_eq!(
        data_sent(pair),
        [(0, true)],
        "one empty DATA frame, ending the stream"
    );
    let mut responses = Responses::default();
    responses.take(pair);
    responses
}

/// The frames the server sent, from its frame trace (`trace_frames`).
fn frames_sent(pair: &mut Pair) -> Vec<Frame> {
    pair.server_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Frame {
                outgoing: true,
                frame,
            } => Some(frame),
            _ => None,
        })
        .collect()
}

/// The DATA frames the server sent: their payload's length, and whether
/// they ended their stream.
fn data_sent(pair: &mut Pair) -> Vec<(usize, bool)> {
    frames_sent(pair)
        .into_iter()
        .filter_map(|frame| match frame {
            Frame::Data(d) => Some((d.payload.len(), d.end_stream)),
            _ => None,
        })
        .collect()
}

/// The server answers the HEAD on `stream` as it would the GET: a head
/// whose content-length says 10, and, unasked, 5 octets of content that
/// do not end the stream.
fn answer_with_content(pair: &mut Pair, stream: StreamId) {
    pair.server
        .send_response(
            stream,
            ResponseHead::new(200).field("content-length", "10"),
            false,
        )
        .unwrap();
    pair.server
        .send_data(stream, Bytes::from_static(b"never"), false)
        .unwrap();
}

/// RFC 9110 §9.3.2: the server MUST NOT send content in a response to
/// HEAD; its content-length may say what a GET would have had. Body
/// bytes the application gives anyway leave no payload: a chunk that
/// does not end the stream sends nothing, the last only END_STREAM.
#[test]
fn a_response_to_head_sends_no_content() {
    let (mut pair, id) = head_request(12);
    answer_with_content(&mut pair, id);
    let responses = last_content_ends_only(&mut pair, id);
    assert_eq!(responses.status.get(&id), Some(&200));
    assert_eq!(responses.done, [id]);
    assert!(responses.bodies.get(&id).is_none_or(|b| b.is_empty()));
    assert!(
        !responses
            .other
            .iter()
            .any(|e| matches!(e, Event::StreamReset { .. })),
        "{:?}",
        responses.other
    );
}

/// RFC 9110 §9.3.2 and §6.5: a response to HEAD has no content, and
/// trailers only follow content, so trailer fields the application gives
/// on one are dropped, as HTTP/1.1 has no chunked trailer section to put
/// them in (RFC 9112 §6.3): the stream ends with END_STREAM on an empty
/// DATA frame instead of a HEADERS frame, on a request's stream as on a
/// promised one (RFC 9113 §8.4: a pushed HEAD is safe and cacheable).
#[test]
fn a_response_to_head_sends_no_trailers() {
    let (mut pair, id) = head_request(13);
    let pushed = RequestHead::new("HEAD", "http", "example.com", "/b");
    let promised = pair.server.push_promise(id, pushed).unwrap();
    for stream in [id, promised] {
        answer_with_content(&mut pair, stream);
        pair.server
            .send_trailers(stream, vec![HeaderField::new("x-checksum", "5")])
            .unwrap();
    }
    pair.drive();
    let mut frames: Vec<(StreamId, &str, usize, bool)> = frames_sent(&mut pair)
        .into_iter()
        .filter_map(|frame| match frame {
            Frame::Data(d) => Some((d.stream_id, "DATA", d.payload.len(), d.end_stream)),
            Frame::Headers(h) => Some((h.stream_id, "HEADERS", 0, h.end_stream)),
            _ => None,
        })
        .collect();
    frames.sort_by_key(|f| f.0);
    assert_eq!(
        frames,
        [
            (id, "HEADERS", 0, false),
            (id, "DATA", 0, true),
            (promised, "HEADERS", 0, false),
            (promised, "DATA", 0, true),
        ],
        "the response head, then one empty DATA frame ending the stream"
    );
    let mut responses = Responses::default();
    responses.take(&mut pair);
    assert_eq!(responses.status.get(&id), Some(&200));
    assert_eq!(responses.status.get(&promised), Some(&200));
    assert_eq!(responses.done, [id, promised]);
    assert!(
        !responses
            .other
            .iter()
            .any(|e| matches!(e, Event::Trailers { .. } | Event::StreamReset { .. })),
        "{:?}",
        responses.other
    );
}

/// `release_capacity` (flow control, RFC 9113 §5.2, §6.9) names what was
/// wrong and releases nothing then: an id that never named a stream, or
/// stream 0 (the connection's), is `UnknownStream`, where it took the bytes
/// of other streams off the connection's count; more than a live stream
/// received is `ReleaseTooLarge`, where the connection's share went back
/// and the stream's stayed. The bytes of a stream that closed since still
/// hold the connection's window (§6.9.1), and are released.
#[test]
fn release_capacity_says_what_was_wrong() {
    let manual = Config {
        window_policy: WindowPolicy::Manual,
        ..Config::default()
    };
    let mut pair = Pair::new(manual, Config::default(), 11);
    pair.connect();
    let ids = send_gets(&mut pair, 2);
    let (a, b) = (ids[0], ids[1]);
    pair.drive();
    for event in pair.server_events() {
        if let Event::Request { stream, .. } = event {
            let body = if stream == a {
                &[0; 100][..]
            } else {
                &[0; 10][..]
            };
            pair.server
                .send_response(stream, ResponseHead::new(200), false)
                .unwrap();
            pair.server
                .send_data(stream, Bytes::copy_from_slice(body), false)
                .unwrap();
        }
    }
    pair.drive();
    pair.client_events();
    let never = StreamId::new(99);
    assert_eq!(
        pair.client.release_capacity(never, 1),
        Err(UserError::UnknownStream(never))
    );
    assert_eq!(
        pair.client.release_capacity(StreamId::ZERO, 1),
        Err(UserError::UnknownStream(StreamId::ZERO))
    );
    assert_eq!(
        pair.client.release_capacity(b, 11),
        Err(UserError::ReleaseTooLarge)
    );
    assert_eq!(pair.client.release_capacity(b, 10), Ok(()));
    // `a` closes with its 100 bytes still held.
    pair.server.send_data(a, Bytes::new(), true).unwrap();
    pair.drive();
    pair.client_events();
    assert_eq!(
        pair.client.release_capacity(a, 101),
        Err(UserError::ReleaseTooLarge)
    );
    assert_eq!(pair.client.release_capacity(a, 100), Ok(()));
    assert_eq!(
        pair.client.release_capacity(a, 1),
        Err(UserError::ReleaseTooLarge)
    );
}
