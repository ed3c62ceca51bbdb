//! The server: every executor listens on every address with a socket of
//! its own (`SO_REUSEPORT`, the kernel spreads the connections), accepts,
//! and runs one task per connection with an [`Application`] made by the
//! caller's factory. Nothing is shared between executors while serving;
//! each counts for itself and the counts are added up at the end.

use std::cell::RefCell;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use futures_lite::future;
use glommio::net::{TcpListener, TcpStream};
use glommio::sync::Gate;
use glommio::timer::Timer;
use h2sim_proto::{Application, Config, Connection, Endpoint, Protocol, Stats};

use crate::driver::{self, DriverOptions};
use crate::info::{ALPN_H2, ALPN_HTTP1};
use crate::info::{ConnectionInfo, TlsInfo};
use crate::listen::{AddrError, HostPort, Reservation};
use crate::runtime::{self, Executors, Ready, RuntimeError};
use crate::shutdown::{LocalSignal, Shutdown};
use crate::transport::Transport;

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

    /// A TLS listener (for instance from `h2sim_tokio::tls::server_config`).
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
    /// How many executors serve, and on which CPUs.
    pub executors: Executors,
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
            executors: Executors::default(),
            on_handshake_error: None,
        }
    }
}

/// Called once per failed TLS handshake with the peer's address and the
/// reason (rustls' words, or "handshake timeout"): a rejected client
/// certificate never reaches the application, so this is where a server
/// can say so, as h2svr did. Runs on the executor that served the
/// connection, from any of them at once: keep it short.
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
    /// The glommio executors could not start (no io_uring, memlock, CPUs).
    Runtime(RuntimeError),
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerError::Resolve { addr, error } => write!(f, "cannot resolve {addr}: {error}"),
            ServerError::Bind { addr, error } => write!(f, "cannot listen on {addr}: {error}"),
            ServerError::Runtime(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ServerError {}

impl From<RuntimeError> for ServerError {
    fn from(e: RuntimeError) -> Self {
        ServerError::Runtime(e)
    }
}

/// What a server did, added up over its executors when it stopped.
#[derive(Debug, Clone, Default)]
pub struct ServerStats {
    accepted: Vec<u64>,
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

    /// Connections accepted by each executor: how evenly `SO_REUSEPORT`
    /// spread them.
    pub fn accepted_per_executor(&self) -> &[u64] {
        &self.accepted
    }

    /// TLS handshakes that failed or timed out.
    pub fn tls_failures(&self) -> u64 {
        self.tls_failures
    }

    /// Connections that ended by a socket error (reset, broken pipe).
    pub fn transport_errors(&self) -> u64 {
        self.transport_errors
    }

    /// Why a TLS handshake failed (the last one some executor saw).
    pub fn last_tls_error(&self) -> Option<String> {
        self.last_tls_error.clone()
    }

    /// Bytes, header and body sizes over all connections.
    pub fn traffic(&self) -> Stats {
        self.traffic
    }

    fn merge(&mut self, executor: ExecutorStats) {
        self.accepted.push(executor.accepted);
        self.tls_failures += executor.tls_failures;
        self.transport_errors += executor.transport_errors;
        if executor.last_tls_error.is_some() {
            self.last_tls_error = executor.last_tls_error;
        }
        self.traffic.merge(&executor.traffic);
    }
}

/// One executor's counts, kept without synchronisation.
#[derive(Debug, Default)]
struct ExecutorStats {
    accepted: u64,
    tls_failures: u64,
    transport_errors: u64,
    last_tls_error: Option<String>,
    traffic: Stats,
}

/// One listening address, held by a reservation until the executors bind it.
#[derive(Debug)]
struct Bound {
    reservation: Reservation,
    tls: Option<Arc<rustls::ServerConfig>>,
}

/// Addresses resolved and ports reserved; [`Server::start`] or
/// [`Server::run`] serves them.
#[derive(Debug)]
pub struct Server {
    listeners: Vec<Bound>,
    options: ServerOptions,
    shutdown: Shutdown,
}

impl Server {
    /// Resolves every listener (a name may stand for several addresses,
    /// each bound) and reserves its port; port 0 picks one, the same for
    /// every executor. See [`Server::local_addrs`].
    pub fn bind(specs: Vec<ListenerSpec>, options: ServerOptions) -> Result<Server, ServerError> {
        let mut listeners = Vec::new();
        for spec in specs {
            let addrs = spec.addr.resolve().map_err(|error| ServerError::Resolve {
                addr: spec.addr.clone(),
                error,
            })?;
            for addr in addrs {
                let reservation =
                    Reservation::new(addr).map_err(|error| ServerError::Bind { addr, error })?;
                listeners.push(Bound {
                    reservation,
                    tls: spec.tls.clone(),
                });
            }
        }
        Ok(Server {
            listeners,
            options,
            shutdown: Shutdown::new(),
        })
    }

    /// The bound addresses in the order of the specs, with whether each is TLS.
    pub fn local_addrs(&self) -> Vec<(SocketAddr, bool)> {
        self.listeners
            .iter()
            .map(|b| (b.reservation.addr(), b.tls.is_some()))
            .collect()
    }

    /// The signal that stops this server gracefully when triggered.
    pub fn shutdown(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// Starts the executors and returns once every one listens on every
    /// address, or with the reason one could not (no io_uring, a port
    /// taken, a missing CPU), after stopping the others.
    pub fn start<A, F>(self, factory: F) -> Result<RunningServer, ServerError>
    where
        F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
        A: Application + 'static,
    {
        let addrs = self.local_addrs();
        let listeners: Vec<(SocketAddr, Option<Arc<rustls::ServerConfig>>)> = self
            .listeners
            .iter()
            .map(|b| (b.reservation.addr(), b.tls.clone()))
            .collect();
        let shared = Arc::new(Shared {
            factory,
            options: self.options.clone(),
            shutdown: self.shutdown.clone(),
            listeners,
        });
        let count = self.options.executors.resolved_count();
        let threads = runtime::start(
            &self.options.executors,
            count,
            &self.shutdown,
            move |index, ready| serve_executor(index, shared.clone(), ready),
        )?;
        for bound in self.listeners {
            bound.reservation.release();
        }
        Ok(RunningServer {
            addrs,
            shutdown: self.shutdown,
            threads,
        })
    }

    /// Serves until the shutdown is triggered: then stops accepting, sends
    /// GOAWAY on every connection, lets open streams finish within the drain
    /// time, and returns once every executor is done.
    pub fn run<A, F>(self, factory: F) -> Result<ServerStats, ServerError>
    where
        F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
        A: Application + 'static,
    {
        Ok(self.start(factory)?.join())
    }
}

/// A server whose executors are serving.
#[derive(Debug)]
pub struct RunningServer {
    addrs: Vec<(SocketAddr, bool)>,
    shutdown: Shutdown,
    threads: Vec<JoinHandle<Option<ExecutorStats>>>,
}

impl RunningServer {
    /// The addresses served, with whether each is TLS.
    pub fn local_addrs(&self) -> Vec<(SocketAddr, bool)> {
        self.addrs.clone()
    }

    pub fn shutdown(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// Waits until every executor is done (after the shutdown is
    /// triggered) and adds up their counts.
    pub fn join(self) -> ServerStats {
        let mut stats = ServerStats::default();
        for executor in runtime::join_all(self.threads) {
            stats.merge(executor);
        }
        stats
    }
}

/// What every executor of a server starts from.
struct Shared<F> {
    factory: F,
    options: ServerOptions,
    shutdown: Shutdown,
    listeners: Vec<(SocketAddr, Option<Arc<rustls::ServerConfig>>)>,
}

/// One executor's server: bind, report, accept until shutdown, wait for
/// the connections to finish.
async fn serve_executor<A, F>(
    index: usize,
    shared: Arc<Shared<F>>,
    ready: Ready<ServerError>,
) -> ExecutorStats
where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + 'static,
{
    let mut listeners = Vec::with_capacity(shared.listeners.len());
    for (addr, tls) in &shared.listeners {
        match TcpListener::bind(*addr) {
            Ok(listener) => listeners.push((listener, tls.clone())),
            Err(e) => {
                let error = ServerError::Bind {
                    addr: *addr,
                    error: runtime::io_error(e),
                };
                let _ = ready.send((index, Err(error)));
                return ExecutorStats::default();
            }
        }
    }
    let _ = ready.send((index, Ok(())));
    let signal = LocalSignal::relay(&shared.shutdown);
    let local = Rc::new(Local {
        index,
        shared,
        signal,
        stats: RefCell::default(),
        gate: Gate::new(),
    });
    let accepting: Vec<_> = listeners
        .into_iter()
        .map(|(listener, tls)| glommio::spawn_local(accept_loop(local.clone(), listener, tls)))
        .collect();
    for task in accepting {
        task.await;
    }
    // Each connection stops by itself within the drain time plus its final
    // flush; this bound only guards against a stuck one.
    let budget = local.shared.options.driver.drain_timeout + Duration::from_secs(3);
    future::or(
        async {
            let _ = local.gate.close().await;
        },
        async {
            Timer::new(budget).await;
        },
    )
    .await;
    local.stats.take()
}

/// What the tasks of one executor share (no locks: one thread).
struct Local<F> {
    index: usize,
    shared: Arc<Shared<F>>,
    signal: LocalSignal,
    stats: RefCell<ExecutorStats>,
    /// Tracks the connection tasks, so the executor waits for them.
    gate: Gate,
}

/// Accepts on one listener until shutdown, a task per connection.
async fn accept_loop<A, F>(
    local: Rc<Local<F>>,
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
) where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + 'static,
{
    loop {
        let accepted = future::or(async { Some(listener.accept().await) }, async {
            local.signal.fired().await;
            None
        })
        .await;
        let Some(accepted) = accepted else {
            return;
        };
        let tcp = match accepted {
            Ok(tcp) => tcp,
            Err(_) => {
                // Out of descriptors, or a connection reset before accept:
                // pause briefly rather than spin, and go on.
                Timer::new(Duration::from_millis(20)).await;
                continue;
            }
        };
        local.stats.borrow_mut().accepted += 1;
        let task = local.gate.spawn(serve(local.clone(), tcp, tls.clone()));
        // The gate is closed only after accepting stopped; a failure here
        // means this executor is going away, and the connection with it.
        if let Ok(task) = task {
            task.detach();
        }
    }
}

/// Runs one accepted connection: TLS handshake if any, then the driver.
async fn serve<A, F>(local: Rc<Local<F>>, tcp: TcpStream, tls: Option<Arc<rustls::ServerConfig>>)
where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + 'static,
{
    // Without it small frames wait for ACKs (Nagle); failure only costs latency.
    let _ = tcp.set_nodelay(true);
    let (Ok(peer), Ok(local_addr)) = (tcp.peer_addr(), tcp.local_addr()) else {
        return;
    };
    let options = &local.shared.options;
    let mut info = ConnectionInfo {
        peer,
        local: local_addr,
        protocol: None,
        tls: None,
        connect_time: Duration::ZERO,
        attempt: 0,
        executor: local.index,
    };
    let now = Instant::now();
    let (mut transport, conn) = match tls {
        None => {
            let config = options.config.clone();
            info.protocol = options.plain_protocol;
            let conn = match options.plain_protocol {
                Some(protocol) => Connection::server_for(protocol, config, now),
                None => Connection::server(config, now),
            };
            (Transport::plain(tcp), conn)
        }
        Some(config) => {
            let session = match rustls::ServerConnection::new(config) {
                Ok(session) => session,
                Err(e) => return local.handshake_failed(peer, &e.to_string()),
            };
            let mut transport = Transport::tls(tcp, rustls::Connection::Server(session));
            let started = Instant::now();
            match handshake(&local, &mut transport, options.handshake_timeout).await {
                Handshake::Done => {}
                Handshake::ShuttingDown => return,
                Handshake::Failed(why) => return local.handshake_failed(peer, &why),
            }
            let Some(session) = transport.tls_session() else {
                return;
            };
            let tls_info = TlsInfo::from_connection(session);
            // Without ALPN the first bytes decide, as on a plain listener.
            info.protocol = match tls_info.alpn.as_deref() {
                Some(ALPN_H2) => Some(Protocol::Http2),
                Some(ALPN_HTTP1) => Some(Protocol::Http1),
                _ => None,
            };
            info.tls = Some(tls_info);
            info.connect_time = started.elapsed();
            let mut config = options.config.clone();
            config.http1.secure = true;
            let now = Instant::now();
            let conn = match info.protocol {
                Some(protocol) => Connection::server_for(protocol, config, now),
                None => Connection::server(config, now),
            };
            (transport, conn)
        }
    };
    let app = (local.shared.factory)(&info);
    let mut endpoint = Endpoint::new(conn, app, Instant::now());
    let result = driver::run(
        &mut transport,
        &mut endpoint,
        &local.signal,
        &options.driver,
    )
    .await;
    let mut stats = local.stats.borrow_mut();
    if result.is_err() {
        stats.transport_errors += 1;
    }
    stats.traffic.merge(&endpoint.connection().stats());
}

/// How a server-side TLS handshake went.
enum Handshake {
    Done,
    ShuttingDown,
    Failed(String),
}

/// The handshake, bounded by `timeout` and abandoned on shutdown.
async fn handshake<F>(local: &Local<F>, transport: &mut Transport, timeout: Duration) -> Handshake {
    let outcome = future::or(
        async {
            match transport.handshake().await {
                Ok(()) => Handshake::Done,
                Err(e) => Handshake::Failed(e.to_string()),
            }
        },
        future::or(
            async {
                Timer::new(timeout).await;
                Handshake::Failed("handshake timeout".into())
            },
            async {
                local.signal.fired().await;
                Handshake::ShuttingDown
            },
        ),
    );
    outcome.await
}

impl<F> Local<F> {
    /// Counts a failed TLS handshake and tells the hook, if any.
    fn handshake_failed(&self, peer: SocketAddr, why: &str) {
        {
            let mut stats = self.stats.borrow_mut();
            stats.tls_failures += 1;
            stats.last_tls_error = Some(format!("{peer}: {why}"));
        }
        if let Some(hook) = &self.shared.options.on_handshake_error {
            hook.call(peer, why);
        }
    }
}
