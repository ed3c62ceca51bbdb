//! The server: every executor listens on every address with a socket of
//! its own (`SO_REUSEPORT`, the kernel spreads the connections), accepts,
//! and runs one task per connection with an [`Application`] made by the
//! caller's factory. Nothing is shared between executors while serving;
//! each counts for itself and the counts are added up at the end.

use std::future::Future;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use futures_lite::future;
use glommio::net::{TcpListener, TcpStream};
use glommio::sync::Gate;
use glommio::timer::Timer;
use h2sim_proto::host::{
    self, ConnectionInfo, ListenerSpec, ServerCounters, ServerError, ServerStats, TlsInfo,
    TlsSession,
};
use h2sim_proto::host::{ServerConfigs, accepted_local};
use h2sim_proto::{Application, Endpoint, Stats};

use crate::driver;
use crate::listen::{self, Reservation};
use crate::runtime::{self, Executors, Ready, RuntimeError};
use crate::shutdown::{LocalSignal, Shutdown};
use crate::transport::{self, Transport};

/// How the server treats its connections (see [`host::ServerOptions`]);
/// what glommio adds, `runtime`, is how many executors serve, and on
/// which CPUs.
pub type ServerOptions = host::ServerOptions<Executors>;

impl From<RuntimeError> for ServerError {
    fn from(e: RuntimeError) -> Self {
        ServerError::Runtime(Box::new(e))
    }
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
            let addrs = listen::resolve(&spec.addr).map_err(|error| ServerError::Resolve {
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
            configs: self.options.configs()?,
            options: self.options.clone(),
            shutdown: self.shutdown.clone(),
            listeners,
        });
        let count = self.options.runtime.resolved_count();
        let threads = runtime::start(
            &self.options.runtime,
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
    threads: Vec<JoinHandle<Option<ServerStats>>>,
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
    configs: ServerConfigs,
    shutdown: Shutdown,
    listeners: Vec<(SocketAddr, Option<Arc<rustls::ServerConfig>>)>,
}

/// One executor's server: bind, report, accept until shutdown, wait for
/// the connections to finish.
async fn serve_executor<A, F>(
    index: usize,
    shared: Arc<Shared<F>>,
    ready: Ready<ServerError>,
) -> ServerStats
where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + 'static,
{
    let mut listeners = Vec::with_capacity(shared.listeners.len());
    for (addr, tls) in &shared.listeners {
        match listen::bind(*addr) {
            Ok(listener) => listeners.push((listener, tls.clone())),
            Err(error) => {
                let error = ServerError::Bind { addr: *addr, error };
                ready.report(index, Err(error));
                return ServerCounters::default().snapshot();
            }
        }
    }
    if !ready.report(index, Ok(())) {
        return ServerCounters::default().snapshot();
    }
    let signal = LocalSignal::relay(&shared.shutdown);
    let local = Rc::new(Local {
        index,
        shared,
        signal,
        stats: ServerCounters::default(),
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
    let budget = local.shared.options.config.drain_timeout + Duration::from_secs(3);
    future::or(
        async {
            let _ = local.gate.close().await;
        },
        async {
            Timer::new(budget).await;
        },
    )
    .await;
    local.stats.snapshot()
}

/// What the tasks of one executor share (no locks: one thread).
struct Local<F> {
    index: usize,
    shared: Arc<Shared<F>>,
    signal: LocalSignal,
    stats: ServerCounters,
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
    let listening_on = listener.local_addr().ok().and_then(accepted_local);
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
            Err(e) => {
                // Out of descriptors, or a connection reset before accept:
                // pause briefly rather than spin, and go on.
                let error = crate::runtime::io_error(e);
                let listener = listener.local_addr().ok();
                local
                    .shared
                    .options
                    .accept_failed(&local.stats, listener, &error);
                Timer::new(Duration::from_millis(20)).await;
                continue;
            }
        };
        local.stats.accepted_one();
        let (local, tls) = (local.clone(), tls.clone());
        let task = local.clone().gate.spawn(async move {
            // Boxed here, once: glommio boxes a future of 2 KiB or more
            // itself and then still allocates the task around it.
            let traffic = Box::pin(serve(&local, tcp, listening_on, tls)).await;
            local.stats.closed(traffic.as_ref());
        });
        // The gate is closed only after accepting stopped; a failure here
        // means this executor is going away, and the connection with it.
        if let Ok(task) = task {
            task.detach();
        }
    }
}

/// Runs one accepted connection: TLS handshake if any, then the driver;
/// what it moved, if it got as far as the core.
async fn serve<A, F>(
    local: &Local<F>,
    tcp: TcpStream,
    listening_on: Option<SocketAddr>,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> Option<Stats>
where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + 'static,
{
    let (transport, endpoint) = open(local, tcp, listening_on, tls).await?;
    run(local, transport, endpoint).await
}

/// The transport (after its TLS handshake) and the endpoint the run keeps.
/// Apart from the run: what set the connection up (its `ConnectionInfo`,
/// the handshake) then takes no room in the task while it is served.
async fn open<A, F>(
    local: &Local<F>,
    tcp: TcpStream,
    listening_on: Option<SocketAddr>,
    tls: Option<Arc<rustls::ServerConfig>>,
) -> Option<(Transport, Endpoint<A>)>
where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + 'static,
{
    // TCP_NODELAY comes from the listener (see `listen::bind`).
    let local_addr = match listening_on {
        Some(addr) => addr,
        None => tcp.local_addr().ok()?,
    };
    let peer = tcp.peer_addr().ok()?;
    let mut info = ConnectionInfo {
        executor: local.index,
        ..ConnectionInfo::new(peer, local_addr)
    };
    let (transport, secure) = match tls {
        None => {
            info.protocol = local.shared.options.plain_protocol;
            (Transport::plain(tcp), false)
        }
        Some(config) => {
            let session = match rustls::ServerConnection::new(config) {
                Ok(session) => session,
                Err(e) => return local.handshake_failed(peer, &e.to_string()),
            };
            let (mut tcp, mut tls) = (tcp, Box::new(TlsSession::new(session)));
            let started = Instant::now();
            let timeout = local.shared.options.handshake_timeout;
            // Boxed: only TLS connections should carry the handshake's size.
            match Box::pin(handshake(local, &mut tcp, &mut tls, timeout)).await {
                Handshake::Done => {}
                Handshake::ShuttingDown => return None,
                Handshake::Failed(why) => return local.handshake_failed(peer, &why),
            }
            info.server_handshake_done(
                TlsInfo::from_connection(tls.connection()),
                started.elapsed(),
            );
            (Transport::tls(tcp, tls), true)
        }
    };
    let now = Instant::now();
    let conn = local.shared.configs.connection(info.protocol, secure, now);
    let app = (local.shared.factory)(&info);
    Some((transport, Endpoint::new(conn, app, now)))
}

/// Serves the connection to its end. Not an `async fn`: one would keep a
/// second copy of its arguments (the transport, the endpoint) in the task
/// for the whole connection.
#[allow(clippy::manual_async_fn, reason = "an async fn doubles the task")]
fn run<'a, A, F>(
    local: &'a Local<F>,
    mut transport: Transport,
    mut endpoint: Endpoint<A>,
) -> impl Future<Output = Option<Stats>> + 'a
where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + 'static,
{
    async move {
        let result = driver::run(
            &mut transport,
            &mut endpoint,
            &local.signal,
            &local.shared.options.driver,
        )
        .await;
        if result.is_err() {
            local.stats.transport_failed();
        }
        Some(endpoint.connection().stats())
    }
}

/// How a server-side TLS handshake went.
enum Handshake {
    Done,
    ShuttingDown,
    Failed(String),
}

/// The handshake, bounded by `timeout` and abandoned on shutdown.
async fn handshake<F>(
    local: &Local<F>,
    tcp: &mut TcpStream,
    tls: &mut TlsSession,
    timeout: Duration,
) -> Handshake {
    let outcome = future::or(
        async {
            match transport::handshake(tcp, tls).await {
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
    /// Counts a failed TLS handshake and tells the hook, if any; the
    /// connection got nowhere.
    fn handshake_failed<T>(&self, peer: SocketAddr, why: &str) -> Option<T> {
        self.stats.tls_failed(format!("{peer}: {why}"));
        if let Some(hook) = &self.shared.options.on_handshake_error {
            hook.call(peer, why);
        }
        None
    }
}
