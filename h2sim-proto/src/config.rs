//! What a `Connection` advertises and what it lets a peer get away with.

use std::num::NonZeroU32;
use std::time::Duration;

use crate::LocalSettings;
use crate::error::UserError;

/// Connection settings and limits. `Config::default()` is safe to face an
/// untrusted peer with; every limit can be raised for load tests.
#[derive(Debug, Clone)]
pub struct Config {
    /// SETTINGS_HEADER_TABLE_SIZE we advertise: the HPACK table our decoder keeps.
    pub header_table_size: u32,
    /// SETTINGS_ENABLE_PUSH: a client that sets this false is never pushed to.
    pub enable_push: bool,
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams the peer may open at once.
    pub max_concurrent_streams: u32,
    /// SETTINGS_INITIAL_WINDOW_SIZE: each stream's receive window.
    pub initial_window_size: u32,
    /// The connection's receive window, raised from 65,535 by a WINDOW_UPDATE
    /// at start (the connection window has no setting, RFC 9113 §6.9.2).
    pub connection_window_size: u32,
    /// SETTINGS_MAX_FRAME_SIZE: the largest frame payload we accept.
    pub max_frame_size: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE: the largest decoded field section we
    /// accept; larger ones are refused per stream.
    pub max_header_list_size: u32,
    /// Server: the largest request body taken, over HTTP/1.1 and HTTP/2
    /// alike. A request that declares more (`content-length`) is refused
    /// before the application hears of it, with a 413 the core writes
    /// (`Event::Refused`); one whose body grows past it is taken back from
    /// the application (`Event::StreamReset`, whose `status` says whether
    /// a 413 could still go out). A CONNECT's tunnel carries no body and
    /// is not held to it. Bounded here, once, so that no application has
    /// to count bodies to keep its memory bounded.
    pub max_request_body: u64,
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 §3): a server that sets it
    /// tells clients they may use the extended CONNECT (`:protocol`). Only
    /// sent when true; the setting's absence means 0.
    pub enable_connect_protocol: bool,
    /// The largest HPACK table our encoder uses, whatever the peer allows:
    /// a bigger table costs memory per connection for little gain.
    pub encoder_table_size: u32,
    /// How long the peer has to acknowledge our SETTINGS before the
    /// connection ends with SETTINGS_TIMEOUT (RFC 9113 §6.5.3).
    pub settings_timeout: Duration,
    /// Who returns receive window to the peer.
    pub window_policy: WindowPolicy,
    pub limits: Limits,
    /// What applies when the connection speaks HTTP/1.1.
    pub http1: Http1Config,
    /// HTTP/2: report every frame sent and received as `Event::Frame`, for
    /// protocol traces (`h2sim -v`). Costs a copy of the output while on.
    pub trace_frames: bool,
    /// HTTP/2 keep-alive: when nothing was received for this long, send a
    /// PING; if its answer has not come within the same time again, the
    /// connection ends (`CloseCause::KeepaliveTimeout`). `None`: no PINGs.
    /// HTTP/1.1 has no PING, so this does nothing there (an idle HTTP/1.1
    /// connection is only watched by `idle_timeout`).
    pub keepalive: Option<Duration>,
    /// A connection with no bytes moving either way for this long goes
    /// away gracefully (HTTP/2 GOAWAY, HTTP/1.1 `connection: close`), and
    /// `Event::Closed` says `CloseCause::IdleTimeout`. `None` keeps it for
    /// ever. Applies to both protocols and to a server still detecting one.
    pub idle_timeout: Option<Duration>,
    /// After our GOAWAY (the application's, a shutdown's or the idle
    /// timer's), how long open streams may take to finish before the
    /// connection is cut (`CloseCause::DrainExpired`).
    pub drain_timeout: Duration,
    /// Server: how long a request head may take to arrive once its first
    /// byte came (HTTP/1.1, and the bytes a server reads to tell the
    /// protocol), and how long a new connection may stay without a byte.
    /// A head still incomplete then ends the connection
    /// (`CloseCause::HeadReadTimeout`): a peer trickling a head byte by
    /// byte (slowloris) keeps the idle timer from firing, not this one.
    /// `None`: no bound.
    pub head_read_timeout: Option<Duration>,
    /// Server: the requests one connection takes, as nginx's
    /// `keepalive_requests`, for testing how clients move to a new
    /// connection. The last one ends the connection gracefully: HTTP/2
    /// sends one GOAWAY naming its stream at once, so the streams the
    /// client opened after it are ignored and left for it to send again
    /// (RFC 9113 §6.8); HTTP/1.1 answers it with `connection: close` and
    /// reads nothing pipelined behind it (RFC 9112 §9.6). `None`: no limit.
    pub max_requests: Option<NonZeroU32>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            header_table_size: 4096,
            enable_push: true,
            max_concurrent_streams: 256,
            initial_window_size: 1 << 20,
            connection_window_size: 8 << 20,
            max_frame_size: 16_384,
            max_header_list_size: 64 * 1024,
            max_request_body: 64 << 20,
            enable_connect_protocol: false,
            encoder_table_size: 4096,
            settings_timeout: Duration::from_secs(10),
            window_policy: WindowPolicy::Automatic,
            limits: Limits::default(),
            http1: Http1Config::default(),
            trace_frames: false,
            keepalive: None,
            idle_timeout: Some(Duration::from_secs(120)),
            drain_timeout: Duration::from_secs(5),
            head_read_timeout: Some(Duration::from_secs(30)),
            max_requests: None,
        }
    }
}

impl Config {
    /// Checks the settings RFC 9113 §6.5.2 bounds (the initial window, the
    /// frame size) with [`LocalSettings::check`], as
    /// `Connection::update_settings` does: a peer ends the connection over
    /// a value out of range, so `Connection`'s constructors refuse such a
    /// configuration (`UserError::InvalidSetting`) rather than start a
    /// connection bound to fail on the wire. A host that shares one
    /// configuration among its connections checks it once, at its start.
    ///
    /// [`LocalSettings::check`]: crate::LocalSettings::check
    pub fn check(&self) -> Result<(), UserError> {
        LocalSettings::from_config(self).check()
    }

    /// Takes the advertised values from `settings` (what a
    /// `-H name=value` front end edits), leaving limits and policies.
    pub fn set_local_settings(&mut self, settings: LocalSettings) {
        self.header_table_size = settings.header_table_size;
        self.enable_push = settings.enable_push;
        self.max_concurrent_streams = settings.max_concurrent_streams;
        self.initial_window_size = settings.initial_window_size;
        self.max_frame_size = settings.max_frame_size;
        self.max_header_list_size = settings.max_header_list_size;
        self.enable_connect_protocol = settings.enable_connect_protocol;
    }
}

/// How received DATA gives window back to the peer (RFC 9113 §5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowPolicy {
    /// Window returns when the application takes the `Data` event with
    /// `poll_event`: an application that stops polling stops the peer.
    Automatic,
    /// Window returns only through `Connection::release_capacity`, for an
    /// application that holds on to body bytes after the event.
    Manual,
}

/// Bounds on what a peer can make the connection hold or do. Exceeding one
/// ends the connection with ENHANCE_YOUR_CALM unless the RFC names a code.
#[derive(Debug, Clone)]
pub struct Limits {
    /// CONTINUATION frames allowed after one HEADERS or PUSH_PROMISE.
    pub max_continuation_frames: usize,
    /// Bytes of one encoded field block (HEADERS plus CONTINUATIONs) held
    /// while it is incomplete.
    pub max_header_block_size: usize,
    /// PING and SETTINGS acknowledgements waiting to be sent: a peer that
    /// floods them while not reading would otherwise grow this queue. The
    /// count runs within one read too, before anything could be written, so
    /// it is nghttp2's (`max_outbound_ack`, 1,000), not a handful: at 64, a
    /// peer that sent 64 PINGs in one write was cut off though it read.
    pub max_pending_acks: usize,
    /// RST_STREAM frames of ours waiting to be sent: while this many wait,
    /// the connection takes no more frames (the rest of a read is held
    /// until they are written). Streams refused before the peer
    /// acknowledged our SETTINGS are not its fault (RFC 9113 §5.1.2) and
    /// escape `max_local_resets_per_period`, so a peer may open any number
    /// in one write; it is refused this many at a time, and one that never
    /// reads its refusals is no longer read from.
    pub max_pending_resets: usize,
    /// RST_STREAM frames the peer may send per `reset_period` on streams it
    /// opened (rapid reset, CVE-2023-44487); its resets of ours are free.
    pub max_resets_per_period: u32,
    /// Streams we reset because of the peer's errors per `reset_period`.
    pub max_local_resets_per_period: u32,
    pub reset_period: Duration,
    /// DATA frames without payload or END_STREAM, and CONTINUATIONs without
    /// fragment, per `empty_frame_period` (an old CPU exhaustion trick).
    pub max_empty_frames_per_period: u32,
    pub empty_frame_period: Duration,
    /// Locally reset streams remembered, so late frames from the peer on them
    /// are ignored rather than treated as errors (RFC 9113 §5.1, "closed").
    pub max_reset_streams_remembered: usize,
    /// Requests (or pushes) the application may queue beyond the peer's
    /// MAX_CONCURRENT_STREAMS, waiting for a slot.
    pub max_queued_streams: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_continuation_frames: 16,
            max_header_block_size: 128 * 1024,
            max_pending_acks: 1000,
            max_pending_resets: 1024,
            max_resets_per_period: 200,
            max_local_resets_per_period: 200,
            reset_period: Duration::from_secs(1),
            max_empty_frames_per_period: 100,
            empty_frame_period: Duration::from_secs(1),
            max_reset_streams_remembered: 1024,
            max_queued_streams: 1 << 16,
        }
    }
}

/// HTTP/1.1 limits and behaviour (RFC 9112).
#[derive(Debug, Clone)]
pub struct Http1Config {
    /// Largest request or response head (start line plus fields) accepted;
    /// larger gets 431 (requests; 414 when the request-line alone is
    /// larger) or ends the connection (responses).
    pub max_head_size: usize,
    /// Most header fields in one head; more gets 431.
    pub max_headers: usize,
    /// Client: requests written ahead of their responses (pipelining depth);
    /// 1 waits for each response before sending the next request. A
    /// server's depth is `server_max_pipeline`.
    pub max_pipeline: usize,
    /// Server: pipelined requests read ahead of their responses. Beyond
    /// this a client's further requests stay unread (the `Connection` holds
    /// them, and [`Connection::wants_input`] turns false once they pass
    /// 256 KiB) until the responses before them are written, so a client
    /// cannot make us hold any number of requests. 0 counts as 1.
    ///
    /// [`Connection::wants_input`]: crate::Connection::wants_input
    pub server_max_pipeline: usize,
    /// The connection runs over TLS: requests carry `https` as their scheme.
    pub secure: bool,
    /// Server: answer `Upgrade: h2c` requests by switching to HTTP/2
    /// (RFC 7540 §3.2).
    pub allow_h2c_upgrade: bool,
}

impl Default for Http1Config {
    fn default() -> Self {
        Http1Config {
            max_head_size: 64 * 1024,
            max_headers: 100,
            max_pipeline: 1,
            server_max_pipeline: 16,
            secure: false,
            allow_h2c_upgrade: true,
        }
    }
}
