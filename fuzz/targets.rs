//! The bodies of the fuzz targets, shared by the libFuzzer binaries in
//! `fuzz_targets/` and by `h2sim-proto/tests/fuzz_corpus.rs`, which replays the
//! committed corpus under ordinary `cargo test`. Each body feeds arbitrary bytes
//! to one decoder; the property checked is that nothing panics or loops.

use bytes::{Bytes, BytesMut};
use h2sim_proto::frame::{ErrorScope, FrameDecoder};
use h2sim_proto::hpack::Decoder;

/// Frames: the first byte picks where the input is split in two, so partial
/// frames are exercised as well as whole ones.
pub fn frame_decoder(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let split = usize::from(split).min(rest.len());
    let mut decoder = FrameDecoder::new(16_384);
    let mut buf = BytesMut::new();
    for chunk in [&rest[..split], &rest[split..]] {
        buf.extend_from_slice(chunk);
        loop {
            match decoder.decode(&mut buf) {
                Ok(Some(_))
                | Err(h2sim_proto::frame::FrameError {
                    scope: ErrorScope::Stream(_),
                    ..
                }) => {}
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
}

/// HPACK: the input is cut into header blocks at every 0xff 0x00 pair and
/// decoded in sequence with one decoder, so the dynamic table carries over.
pub fn hpack_decoder(data: &[u8]) {
    let mut decoder = Decoder::new(4096);
    decoder.set_max_header_list_size(16 * 1024);
    let data = Bytes::copy_from_slice(data);
    let mut out = Vec::new();
    let mut start = 0;
    while start <= data.len() {
        let end = data[start..]
            .windows(2)
            .position(|w| w == [0xff, 0x00])
            .map_or(data.len(), |at| start + at);
        out.clear();
        if let Err(e) = decoder.decode(&data.slice(start..end), &mut out)
            && e.is_compression_error()
        {
            return;
        }
        start = end + 2;
    }
}

/// A whole server connection: the client preface, then arbitrary bytes cut
/// into reads at the positions the first bytes choose. Requests are answered
/// so the response paths run too.
pub fn server_connection(data: &[u8]) {
    use h2sim_proto::{Config, Connection, Event, ResponseHead};
    use std::time::{Duration, Instant};

    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let now = Instant::now();
    let mut conn = Connection::server(Config::default(), now);
    let mut input = BytesMut::from(&h2sim_proto::frame::PREFACE[..]);
    let step = usize::from(cut).max(1);
    for (i, chunk) in rest.chunks(step).enumerate() {
        let now = now + Duration::from_millis(i as u64);
        input.extend_from_slice(chunk);
        conn.handle_input(now, &mut input);
        while let Some(event) = conn.poll_event() {
            if let Event::Request { stream, .. } = event {
                let _ = conn.send_response(stream, ResponseHead::new(200), false);
                let _ = conn.send_data(stream, Bytes::from_static(b"ok"), true);
            }
        }
        while conn.poll_transmit(now).is_some() {}
        if conn.is_closed() {
            return;
        }
    }
    conn.handle_eof(now);
    while conn.poll_event().is_some() {}
}

/// HTTP/1.1 both ways: the first byte picks the role (even: a server that
/// detects the protocol from these bytes; odd: a client that sent a request
/// and reads these bytes as responses) and the size of each read.
pub fn http1_connection(data: &[u8]) {
    use h2sim_proto::{Config, Connection, Event, RequestHead, ResponseHead};
    use std::time::Instant;

    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let now = Instant::now();
    let server = mode % 2 == 0;
    let mut conn = if server {
        Connection::server(Config::default(), now)
    } else {
        let mut config = Config::default();
        config.http1.max_pipeline = 4;
        let mut conn = Connection::client_http1(config, now);
        for path in ["/a", "/b", "/c"] {
            let _ = conn.send_request(RequestHead::new("GET", "http", "fuzz", path), true);
        }
        conn
    };
    let step = usize::from(mode / 2).max(1);
    let mut input = BytesMut::new();
    for chunk in rest.chunks(step) {
        input.extend_from_slice(chunk);
        conn.handle_input(now, &mut input);
        while let Some(event) = conn.poll_event() {
            if let Event::Request { stream, .. } = event {
                let _ = conn.send_response(stream, ResponseHead::new(200), false);
                let _ = conn.send_data(stream, Bytes::from_static(b"ok"), true);
            }
        }
        while conn.poll_transmit(now).is_some() {}
        if conn.is_closed() {
            return;
        }
    }
    conn.handle_eof(now);
    while conn.poll_event().is_some() {}
    while conn.poll_transmit(now).is_some() {}
}
