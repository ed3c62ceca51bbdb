//! The server's side of a host: what to listen on, why it could not
//! start, who hears of failed handshakes, and what it counted.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::addr::{AddrError, HostPort};
use super::info::ServerConfigs;
use super::lifecycle::DriverOptions;
use crate::{Config, Protocol, Stats, UserError};

/// How a server treats its connections: everything but what its runtime
/// adds, which is `runtime` (nothing on tokio, the executors on glommio).
#[derive(Debug, Clone)]
pub struct ServerOptions<R = ()> {
    /// The protocol core's settings and limits, for every connection.
    pub config: Config,
    pub driver: DriverOptions,
    /// A TLS handshake not finished by then is dropped.
    pub handshake_timeout: Duration,
    /// The protocol of plain listeners; `None` tells HTTP/2 prior knowledge
    /// from HTTP/1.1 (and its h2c upgrade) by the first bytes. HTTP/1.1
    /// ignores the h2c upgrade (see [`ServerConfigs::new`]).
    pub plain_protocol: Option<Protocol>,
    /// Told of every failed TLS handshake, once per connection.
    pub on_handshake_error: Option<HandshakeErrorHook>,
    /// Told when accepting fails, at most once per [`ACCEPT_ERROR_EVERY`]
    /// (see [`ServerCounters::accept_failed`]).
    pub on_accept_error: Option<AcceptErrorHook>,
    /// What the runtime adapter adds (see the adapter's `ServerOptions`).
    pub runtime: R,
}

impl<R: Default> Default for ServerOptions<R> {
    fn default() -> Self {
        ServerOptions {
            config: Config::default(),
            driver: DriverOptions::default(),
            handshake_timeout: Duration::from_secs(10),
            plain_protocol: None,
            on_handshake_error: None,
            on_accept_error: None,
            runtime: R::default(),
        }
    }
}

impl<R> ServerOptions<R> {
    /// The configurations its connections share (see [`ServerConfigs`]);
    /// `ServerError::Config` when [`Config::check`] refuses `config`.
    pub fn configs(&self) -> Result<ServerConfigs, ServerError> {
        ServerConfigs::new(&self.config, self.plain_protocol).map_err(ServerError::Config)
    }
}

/// The listen queue both adapters ask for: a burst of connects (10,000
/// clients starting at once) must wait there, not be dropped, while the
/// accept loops catch up. The kernel caps it at `net.core.somaxconn`
/// (4096 by default since Linux 5.4).
pub const LISTEN_BACKLOG: i32 = 4096;

/// How long, in seconds, a listener's kernel holds a new connection back
/// until its first bytes arrive (`TCP_DEFER_ACCEPT`): an HTTP client speaks
/// first (a request line, the HTTP/2 preface, a TLS ClientHello), so the
/// accept waits for what the server will read and the connection's first
/// wake-up finds it there. Without it a connection woke the server twice,
/// once for the accept and once for its request, and a connection per
/// request (`wrk -H "Connection: close"`) cost tokio's server 29-33 µs
/// a request against 22-24 µs with it (h2o sets the same). A client that
/// sends nothing is accepted once the time is up and its next ACK comes,
/// and then meets the server's own timeouts.
pub const DEFER_ACCEPT_SECS: i32 = 1;

/// The unsent bytes a server's socket holds before it takes no more
/// (`TCP_NOTSENT_LOWAT`, set on the listeners, which their connections
/// inherit). Without a limit a burst of answers (1,000 streams of 4 KiB
/// on a connection) is all queued at once, far beyond the peer's receive
/// window, and the kernel transmits the rest from inside the peer's reads,
/// as their window updates make room: on the peer's CPU, not the
/// server's. A load generator at the end of its core then served a
/// quarter fewer requests than against servers that write as room comes.
/// With the limit a write waits for room and leaves in the server's own
/// turn. Smaller limits (16 and 64 KiB) cost the 10 KiB rows up to 30% of
/// their requests in more, smaller writes; 1 MiB lost the effect.
pub const UNSENT_LIMIT: u32 = 256 * 1024;

/// One address to listen on, plain or TLS.
#[derive(Debug, Clone)]
pub struct ListenerSpec {
    pub addr: HostPort,
    /// With a configuration the listener speaks TLS and picks the protocol
    /// by ALPN; without, it tells HTTP/2 prior knowledge from HTTP/1.1 (and
    /// its h2c upgrade) by the first bytes.
    #[cfg(feature = "tls")]
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl ListenerSpec {
    /// A plain listener on `host:port`, `[v6]:port` or an `http://` URL.
    pub fn plain(addr: &str) -> Result<Self, AddrError> {
        Ok(ListenerSpec {
            addr: addr.parse()?,
            #[cfg(feature = "tls")]
            tls: None,
        })
    }

    /// A TLS listener (see [`crate::host::tls::server_config`]).
    #[cfg(feature = "tls")]
    pub fn tls(addr: &str, config: Arc<rustls::ServerConfig>) -> Result<Self, AddrError> {
        Ok(ListenerSpec {
            addr: addr.parse()?,
            tls: Some(config),
        })
    }
}

/// Why a server could not start.
#[derive(Debug)]
pub enum ServerError {
    /// The host name of a listener did not resolve.
    Resolve { addr: HostPort, error: io::Error },
    /// A socket could not be bound (in use, no permission, no such address).
    Bind { addr: SocketAddr, error: io::Error },
    /// The runtime could not start its event loops (glommio: no io_uring,
    /// the memlock limit, CPUs); the error is the adapter's own.
    Runtime(Box<dyn std::error::Error + Send + Sync>),
    /// The configuration has a setting no client accepts
    /// (`UserError::InvalidSetting`, see [`Config::check`]).
    Config(UserError),
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Resolve { addr, error } => write!(f, "cannot resolve {addr}: {error}"),
            ServerError::Bind { addr, error } => write!(f, "cannot listen on {addr}: {error}"),
            ServerError::Runtime(e) => write!(f, "{e}"),
            ServerError::Config(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ServerError {}

/// Called once per failed TLS handshake with the peer's address and the
/// reason (rustls' words, or "handshake timeout"): a rejected client
/// certificate never reaches the application, so this is where a server
/// can say so, as h2svr did. Runs on the task (and thread) that served the
/// connection, from several threads at once on a runtime with many: keep
/// it short.
#[derive(Clone)]
pub struct HandshakeErrorHook(Arc<HandshakeErrorFn>);

/// What a [`HandshakeErrorHook`] calls: the peer, and why.
type HandshakeErrorFn = dyn Fn(SocketAddr, &str) + Send + Sync;

impl HandshakeErrorHook {
    pub fn new(hook: impl Fn(SocketAddr, &str) + Send + Sync + 'static) -> Self {
        HandshakeErrorHook(Arc::new(hook))
    }

    /// Tells the hook that the handshake with `peer` failed, and `why`.
    pub fn call(&self, peer: SocketAddr, why: &str) {
        (self.0)(peer, why);
    }
}

impl fmt::Debug for HandshakeErrorHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HandshakeErrorHook(..)")
    }
}

impl<R> ServerOptions<R> {
    /// An accept on `listener` failed: counted in `counters`, and told to
    /// [`ServerOptions::on_accept_error`] when it is time; for both
    /// adapters' accept loops.
    pub fn accept_failed(
        &self,
        counters: &ServerCounters,
        listener: Option<SocketAddr>,
        error: &io::Error,
    ) {
        if let Some(hook) = &self.on_accept_error
            && let Some(failures) = counters.accept_failed(Instant::now())
        {
            hook.call(listener, error, failures);
        }
    }
}

/// Called when a listener's accepts fail, with the listener's address,
/// the error, and how many accepts failed since the last call. A server
/// out of file descriptors fails every accept while the connections it has
/// stay open, and its clients wait in the listen queue: without a word the
/// operator cannot tell why. Runs on the accepting task: keep it short.
#[derive(Clone)]
pub struct AcceptErrorHook(Arc<AcceptErrorFn>);

/// What an [`AcceptErrorHook`] calls.
type AcceptErrorFn = dyn Fn(Option<SocketAddr>, &io::Error, u64) + Send + Sync;

impl AcceptErrorHook {
    pub fn new(hook: impl Fn(Option<SocketAddr>, &io::Error, u64) + Send + Sync + 'static) -> Self {
        AcceptErrorHook(Arc::new(hook))
    }

    /// Tells the hook that accepting on `listener` failed with `error`,
    /// `failures` times since it was last told.
    pub fn call(&self, listener: Option<SocketAddr>, error: &io::Error, failures: u64) {
        (self.0)(listener, error, failures);
    }
}

impl fmt::Debug for AcceptErrorHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AcceptErrorHook(..)")
    }
}

/// How often failing accepts are told: the adapters pause 20 ms after
/// each, so a full descriptor table fails 50 a second.
pub const ACCEPT_ERROR_EVERY: Duration = Duration::from_secs(10);

/// A running server's counters, updated by its connections and readable
/// from any thread while it serves. A runtime with one event loop per
/// thread keeps one per loop and adds their [`ServerCounters::snapshot`]s
/// up with [`ServerStats::merge`].
#[derive(Debug, Default)]
pub struct ServerCounters {
    accepted: AtomicU64,
    active: AtomicU64,
    tls_failures: AtomicU64,
    transport_errors: AtomicU64,
    last_tls_error: Mutex<Option<String>>,
    traffic: Mutex<Stats>,
    /// Accepts failed since they were last told, and when that was.
    accept_failures: Mutex<(u64, Option<Instant>)>,
}

impl ServerCounters {
    /// A connection was accepted (TCP) and now runs.
    pub fn accepted_one(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
        self.active.fetch_add(1, Ordering::Relaxed);
    }

    /// A TLS handshake failed or timed out; `why` names the peer and the reason.
    pub fn tls_failed(&self, why: String) {
        self.tls_failures.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut last) = self.last_tls_error.lock() {
            *last = Some(why);
        }
    }

    /// An accept failed at `now`: the failures to tell of (this one and
    /// those not told yet) if it is time to tell, the first at once, then
    /// at most once per [`ACCEPT_ERROR_EVERY`].
    pub fn accept_failed(&self, now: Instant) -> Option<u64> {
        let mut failures = self.accept_failures.lock().ok()?;
        let (count, told) = &mut *failures;
        *count += 1;
        if told.is_some_and(|at| now.saturating_duration_since(at) < ACCEPT_ERROR_EVERY) {
            return None;
        }
        *told = Some(now);
        Some(std::mem::take(count))
    }

    /// A connection ended by a socket error (reset, broken pipe).
    pub fn transport_failed(&self) {
        self.transport_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection counted by [`ServerCounters::accepted_one`] is over;
    /// `traffic` is what it moved, when it got as far as a connection.
    pub fn closed(&self, traffic: Option<&Stats>) {
        self.active.fetch_sub(1, Ordering::Relaxed);
        if let (Some(t), Ok(mut all)) = (traffic, self.traffic.lock()) {
            all.merge(t);
        }
    }

    /// Connections accepted (TCP), ever.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Connections running now (including TLS handshakes).
    pub fn active(&self) -> u64 {
        self.active.load(Ordering::Relaxed)
    }

    /// TLS handshakes that failed or timed out.
    pub fn tls_failures(&self) -> u64 {
        self.tls_failures.load(Ordering::Relaxed)
    }

    /// Connections that ended by a socket error (reset, broken pipe).
    pub fn transport_errors(&self) -> u64 {
        self.transport_errors.load(Ordering::Relaxed)
    }

    /// Why the last TLS handshake failed, for diagnostics.
    pub fn last_tls_error(&self) -> Option<String> {
        self.last_tls_error
            .lock()
            .map_or(None, |e| e.as_ref().cloned())
    }

    /// The counts as they stand, as one event loop's share.
    pub fn snapshot(&self) -> ServerStats {
        ServerStats {
            accepted: vec![self.accepted()],
            active: self.active(),
            tls_failures: self.tls_failures(),
            transport_errors: self.transport_errors(),
            last_tls_error: self.last_tls_error(),
            traffic: self.traffic.lock().map(|t| *t).unwrap_or_default(),
        }
    }
}

/// What a server did: the counts of its event loops, added up.
#[derive(Debug, Clone, Default)]
pub struct ServerStats {
    accepted: Vec<u64>,
    active: u64,
    tls_failures: u64,
    transport_errors: u64,
    last_tls_error: Option<String>,
    traffic: Stats,
}

impl ServerStats {
    /// Connections accepted (TCP).
    pub fn accepted(&self) -> u64 {
        self.accepted.iter().sum()
    }

    /// Connections accepted by each event loop (glommio's executors): how
    /// evenly `SO_REUSEPORT` spread them.
    pub fn accepted_per_executor(&self) -> &[u64] {
        &self.accepted
    }

    /// Connections still running when the counts were taken.
    pub fn active(&self) -> u64 {
        self.active
    }

    /// TLS handshakes that failed or timed out.
    pub fn tls_failures(&self) -> u64 {
        self.tls_failures
    }

    /// Connections that ended by a socket error (reset, broken pipe).
    pub fn transport_errors(&self) -> u64 {
        self.transport_errors
    }

    /// Why a TLS handshake failed (the last one some event loop saw).
    pub fn last_tls_error(&self) -> Option<String> {
        self.last_tls_error.clone()
    }

    /// Bytes, header and body sizes over all connections.
    pub fn traffic(&self) -> Stats {
        self.traffic
    }

    /// Adds another event loop's counts.
    pub fn merge(&mut self, other: ServerStats) {
        self.accepted.extend(other.accepted);
        self.active += other.active;
        self.tls_failures += other.tls_failures;
        self.transport_errors += other.transport_errors;
        if other.last_tls_error.is_some() {
            self.last_tls_error = other.last_tls_error;
        }
        self.traffic.merge(&other.traffic);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executors_add_up() {
        let (a, b) = (ServerCounters::default(), ServerCounters::default());
        a.accepted_one();
        a.accepted_one();
        b.accepted_one();
        b.tls_failed("peer: unknown CA".into());
        a.closed(None);
        let mut all = ServerStats::default();
        all.merge(a.snapshot());
        all.merge(b.snapshot());
        assert_eq!(all.accepted(), 3);
        assert_eq!(all.accepted_per_executor(), [2, 1]);
        assert_eq!(all.active(), 2);
        assert_eq!(all.tls_failures(), 1);
        assert_eq!(all.last_tls_error().as_deref(), Some("peer: unknown CA"));
    }
}
