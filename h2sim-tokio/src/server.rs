//! Listeners, the accept loops, and one task per connection running an
//! [`Application`] made for it by the caller's factory.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use h2sim_proto::{Application, Config, Connection, Endpoint, Protocol};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::task::TaskTracker;

use crate::driver::{self, DriverOptions};
use crate::info::{ConnectionInfo, TlsInfo};
use crate::listen::{self, AddrError, HostPort};
use crate::shutdown::Shutdown;
use crate::tls::{ALPN_H2, ALPN_HTTP1};

/// One address to listen on, plain or TLS.
#[derive(Debug, Clone)]
pub struct ListenerSpec {
    pub addr: HostPort,
    /// With a configuration the listener speaks TLS and picks the protocol
    /// by ALPN; without, it tells HTTP/2 prior knowledge from HTTP/1.1 (and
    /// its h2c upgrade) by the first bytes.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

impl ListenerSpec {
    /// A plain listener on `host:port`, `[v6]:port` or an `http://` URL.
    pub fn plain(addr: &str) -> Result<Self, AddrError> {
        Ok(ListenerSpec {
            addr: addr.parse()?,
            tls: None,
        })
    }

    /// A TLS listener (see [`crate::tls::server_config`]).
    pub fn tls(addr: &str, config: Arc<rustls::ServerConfig>) -> Result<Self, AddrError> {
        Ok(ListenerSpec {
            addr: addr.parse()?,
            tls: Some(config),
        })
    }
}

/// How the server treats its connections.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The protocol core's settings and limits, for every connection.
    pub config: Config,
    pub driver: DriverOptions,
    /// A TLS handshake not finished by then is dropped.
    pub handshake_timeout: Duration,
    /// The protocol of plain listeners; `None` tells HTTP/2 prior knowledge
    /// from HTTP/1.1 (and its h2c upgrade) by the first bytes.
    pub plain_protocol: Option<Protocol>,
    /// Told of every failed TLS handshake, once per connection.
    pub on_handshake_error: Option<HandshakeErrorHook>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            config: Config::default(),
            driver: DriverOptions::default(),
            handshake_timeout: Duration::from_secs(10),
            plain_protocol: None,
            on_handshake_error: None,
        }
    }
}

/// Called once per failed TLS handshake with the peer's address and the
/// reason (rustls' words, or "handshake timeout"): a rejected client
/// certificate never reaches the application, so this is where a server
/// can say so, as h2svr did. Runs on the connection's task: keep it short.
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

/// Why the server could not start.
#[derive(Debug)]
pub enum ServerError {
    /// The host name of a listener did not resolve.
    Resolve { addr: HostPort, error: io::Error },
    /// A socket could not be bound (in use, no permission, no such address).
    Bind { addr: SocketAddr, error: io::Error },
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Resolve { addr, error } => write!(f, "cannot resolve {addr}: {error}"),
            ServerError::Bind { addr, error } => write!(f, "cannot listen on {addr}: {error}"),
        }
    }
}

impl std::error::Error for ServerError {}

/// Counters a running server keeps, readable from any thread.
#[derive(Debug, Default)]
pub struct ServerStats {
    accepted: AtomicU64,
    active: AtomicU64,
    tls_failures: AtomicU64,
    transport_errors: AtomicU64,
    last_tls_error: Mutex<Option<String>>,
}

impl ServerStats {
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

    fn tls_failed(&self, why: String) {
        self.tls_failures.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut last) = self.last_tls_error.lock() {
            *last = Some(why);
        }
    }
}

/// A bound listener.
struct Bound {
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
}

impl fmt::Debug for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bound")
            .field("listener", &self.listener)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

/// Listening sockets, bound and ready; [`Server::run`] serves them.
#[derive(Debug)]
pub struct Server {
    listeners: Vec<Bound>,
    options: Arc<ServerOptions>,
    shutdown: Shutdown,
    stats: Arc<ServerStats>,
}

impl Server {
    /// Resolves and binds every listener (a name may stand for several
    /// addresses, each bound). Port 0 picks a free port per socket; see
    /// [`Server::local_addrs`].
    pub async fn bind(
        specs: Vec<ListenerSpec>,
        options: ServerOptions,
    ) -> Result<Server, ServerError> {
        let mut listeners = Vec::new();
        for spec in specs {
            let addrs = spec
                .addr
                .resolve()
                .await
                .map_err(|error| ServerError::Resolve {
                    addr: spec.addr.clone(),
                    error,
                })?;
            for addr in addrs {
                let listener =
                    listen::bind(addr).map_err(|error| ServerError::Bind { addr, error })?;
                listeners.push(Bound {
                    listener,
                    tls: spec.tls.clone().map(TlsAcceptor::from),
                });
            }
        }
        Ok(Server {
            listeners,
            options: Arc::new(options),
            shutdown: Shutdown::new(),
            stats: Arc::default(),
        })
    }

    /// The bound addresses in the order of the specs, with whether each is TLS.
    pub fn local_addrs(&self) -> Vec<(SocketAddr, bool)> {
        self.listeners
            .iter()
            .filter_map(|b| Some((b.listener.local_addr().ok()?, b.tls.is_some())))
            .collect()
    }

    /// The signal that stops this server gracefully when triggered.
    pub fn shutdown(&self) -> Shutdown {
        self.shutdown.clone()
    }

    pub fn stats(&self) -> Arc<ServerStats> {
        self.stats.clone()
    }

    /// Serves until the shutdown is triggered: then stops accepting, sends
    /// GOAWAY on every connection, lets open streams finish within the drain
    /// time, and returns once every connection is closed.
    pub async fn run<A, F>(self, factory: F)
    where
        F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
        A: Application + Send + 'static,
    {
        let factory = Arc::new(factory);
        let tracker = TaskTracker::new();
        let mut accepting = JoinSet::new();
        for bound in self.listeners {
            accepting.spawn(accept_loop(
                bound,
                factory.clone(),
                self.options.clone(),
                self.shutdown.clone(),
                self.stats.clone(),
                tracker.clone(),
            ));
        }
        while accepting.join_next().await.is_some() {}
        tracker.close();
        // Each connection stops by itself within the drain time plus its
        // final flush; this bound only guards against a stuck task.
        let budget = self.options.driver.drain_timeout + Duration::from_secs(3);
        let _ = tokio::time::timeout(budget, tracker.wait()).await;
    }
}

/// Accepts on one listener until shutdown, spawning a task per connection.
async fn accept_loop<A, F>(
    bound: Bound,
    factory: Arc<F>,
    options: Arc<ServerOptions>,
    shutdown: Shutdown,
    stats: Arc<ServerStats>,
    tracker: TaskTracker,
) where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + Send + 'static,
{
    loop {
        let accepted = tokio::select! {
            () = shutdown.triggered() => return,
            accepted = bound.listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok(pair) => pair,
            Err(_) => {
                // Out of descriptors or a connection reset before accept:
                // pause briefly rather than spin, and go on.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        stats.accepted.fetch_add(1, Ordering::Relaxed);
        stats.active.fetch_add(1, Ordering::Relaxed);
        let task = ConnectionTask {
            factory: factory.clone(),
            options: options.clone(),
            shutdown: shutdown.clone(),
            stats: stats.clone(),
        };
        let tls = bound.tls.clone();
        tracker.spawn(async move {
            task.serve(tcp, peer, tls).await;
            task.stats.active.fetch_sub(1, Ordering::Relaxed);
        });
    }
}

/// What one connection task shares with the server.
struct ConnectionTask<F> {
    factory: Arc<F>,
    options: Arc<ServerOptions>,
    shutdown: Shutdown,
    stats: Arc<ServerStats>,
}

impl<F> ConnectionTask<F> {
    /// Counts a failed TLS handshake and tells the hook, if any.
    fn handshake_failed(&self, peer: SocketAddr, why: &str) {
        self.stats.tls_failed(format!("{peer}: {why}"));
        if let Some(hook) = &self.options.on_handshake_error {
            hook.call(peer, why);
        }
    }

    async fn serve<A>(&self, tcp: TcpStream, peer: SocketAddr, tls: Option<TlsAcceptor>)
    where
        F: Fn(&ConnectionInfo) -> A,
        A: Application,
    {
        // Without it small frames wait for ACKs (Nagle); failure only costs latency.
        let _ = tcp.set_nodelay(true);
        let Ok(local) = tcp.local_addr() else {
            return;
        };
        let mut info = ConnectionInfo {
            peer,
            local,
            protocol: None,
            tls: None,
            connect_time: Duration::ZERO,
            attempt: 0,
        };
        let result = match tls {
            None => {
                let config = self.options.config.clone();
                info.protocol = self.options.plain_protocol;
                let conn = match self.options.plain_protocol {
                    Some(protocol) => Connection::server_for(protocol, config, Instant::now()),
                    None => Connection::server(config, Instant::now()),
                };
                self.run(tcp, conn, &info).await
            }
            Some(acceptor) => {
                let started = Instant::now();
                let handshake =
                    tokio::time::timeout(self.options.handshake_timeout, acceptor.accept(tcp));
                let stream = tokio::select! {
                    () = self.shutdown.triggered() => return,
                    stream = handshake => stream,
                };
                let stream = match stream {
                    Ok(Ok(stream)) => stream,
                    Ok(Err(e)) => return self.handshake_failed(peer, &e.to_string()),
                    Err(_) => return self.handshake_failed(peer, "handshake timeout"),
                };
                let session = stream.get_ref().1;
                let tls_info = TlsInfo::from_connection(session, session.server_name());
                // Without ALPN the first bytes decide, as on a plain listener.
                info.protocol = match tls_info.alpn.as_deref() {
                    Some(ALPN_H2) => Some(Protocol::Http2),
                    Some(ALPN_HTTP1) => Some(Protocol::Http1),
                    _ => None,
                };
                info.tls = Some(tls_info);
                info.connect_time = started.elapsed();
                let mut config = self.options.config.clone();
                config.http1.secure = true;
                let now = Instant::now();
                let conn = match info.protocol {
                    Some(protocol) => Connection::server_for(protocol, config, now),
                    None => Connection::server(config, now),
                };
                self.run(stream, conn, &info).await
            }
        };
        if result.is_err() {
            self.stats.transport_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    async fn run<S, A>(
        &self,
        io: S,
        conn: Connection,
        info: &ConnectionInfo,
    ) -> io::Result<driver::Ending>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
        F: Fn(&ConnectionInfo) -> A,
        A: Application,
    {
        let app = (self.factory)(info);
        let mut endpoint = Endpoint::new(conn, app, Instant::now());
        driver::run(io, &mut endpoint, &self.shutdown, &self.options.driver).await
    }
}
