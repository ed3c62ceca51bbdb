//! Listeners, the accept loops, and one task per connection running an
//! [`Application`] made for it by the caller's factory.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use h2sim_proto::host::{
    self, ConnectionInfo, Ending, ListenerSpec, ServerCounters, ServerError, TlsInfo, TlsSession,
};
use h2sim_proto::host::{ServerConfigs, accepted_local};
use h2sim_proto::{Application, Endpoint};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::task::TaskTracker;

use crate::driver::{self, Transport};
use crate::listen;
use crate::shutdown::Shutdown;

/// How the server treats its connections (see [`host::ServerOptions`]);
/// tokio adds nothing to them.
pub type ServerOptions = host::ServerOptions;

/// A bound listener.
struct Bound {
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
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
    /// The connections' configuration, checked when the server is bound.
    configs: ServerConfigs,
    shutdown: Shutdown,
    stats: Arc<ServerCounters>,
}

impl Server {
    /// Checks the configuration (`ServerError::Config`), then resolves and
    /// binds every listener (a name may stand for several addresses, each
    /// bound). Port 0 picks a free port per socket; see
    /// [`Server::local_addrs`].
    pub async fn bind(
        specs: Vec<ListenerSpec>,
        options: ServerOptions,
    ) -> Result<Server, ServerError> {
        let configs = options.configs()?;
        let mut listeners = Vec::new();
        for spec in specs {
            let addrs =
                listen::resolve(&spec.addr)
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
                    tls: spec.tls.clone(),
                });
            }
        }
        Ok(Server {
            listeners,
            options: Arc::new(options),
            configs,
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

    pub fn stats(&self) -> Arc<ServerCounters> {
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
        let configs = self.configs;
        let tracker = TaskTracker::new();
        let mut accepting = JoinSet::new();
        for bound in self.listeners {
            accepting.spawn(accept_loop(
                bound,
                factory.clone(),
                self.options.clone(),
                configs.clone(),
                self.shutdown.clone(),
                self.stats.clone(),
                tracker.clone(),
            ));
        }
        while accepting.join_next().await.is_some() {}
        tracker.close();
        // Each connection stops by itself within the drain time plus its
        // final flush; this bound only guards against a stuck task.
        let budget = self.options.config.drain_timeout + Duration::from_secs(3);
        let _ = tokio::time::timeout(budget, tracker.wait()).await;
    }
}

/// Accepts on one listener until shutdown, spawning a task per connection.
async fn accept_loop<A, F>(
    bound: Bound,
    factory: Arc<F>,
    options: Arc<ServerOptions>,
    configs: ServerConfigs,
    shutdown: Shutdown,
    stats: Arc<ServerCounters>,
    tracker: TaskTracker,
) where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + Send + 'static,
{
    let local = bound.listener.local_addr().ok().and_then(accepted_local);
    loop {
        let accepted = tokio::select! {
            () = shutdown.triggered() => return,
            accepted = bound.listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // Out of descriptors or a connection reset before accept:
                // pause briefly rather than spin, and go on.
                let listener = bound.listener.local_addr().ok();
                options.accept_failed(&stats, listener, &e);
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        stats.accepted_one();
        let task = ConnectionTask {
            factory: factory.clone(),
            options: options.clone(),
            configs: configs.clone(),
            shutdown: shutdown.clone(),
            stats: stats.clone(),
        };
        let tls = bound.tls.clone();
        tracker.spawn(async move {
            let traffic = task.serve(tcp, peer, local, tls).await;
            task.stats.closed(traffic.as_ref());
        });
    }
}

/// What one connection task shares with the server.
struct ConnectionTask<F> {
    factory: Arc<F>,
    options: Arc<ServerOptions>,
    configs: ServerConfigs,
    shutdown: Shutdown,
    stats: Arc<ServerCounters>,
}

impl<F> ConnectionTask<F> {
    /// Counts a failed TLS handshake and tells the hook, if any.
    fn handshake_failed(&self, peer: SocketAddr, why: &str) {
        self.stats.tls_failed(format!("{peer}: {why}"));
        if let Some(hook) = &self.options.on_handshake_error {
            hook.call(peer, why);
        }
    }

    /// Serves one connection; what it moved, if it got as far as the core.
    async fn serve<A>(
        &self,
        tcp: TcpStream,
        peer: SocketAddr,
        local: Option<SocketAddr>,
        tls: Option<Arc<rustls::ServerConfig>>,
    ) -> Option<h2sim_proto::Stats>
    where
        F: Fn(&ConnectionInfo) -> A,
        A: Application,
    {
        // TCP_NODELAY comes from the listener (see `listen::bind`).
        let local = match local {
            Some(local) => local,
            None => tcp.local_addr().ok()?,
        };
        let info = ConnectionInfo::new(peer, local);
        let (transport, endpoint) = match tls {
            None => {
                let info = ConnectionInfo {
                    protocol: self.options.plain_protocol,
                    ..info
                };
                (Transport::plain(tcp), self.endpoint(info, false))
            }
            // Boxed: the handshake is large, and the task's future is as
            // large as its largest path, so plain connections would carry
            // its size too; the box is freed when it is over.
            Some(config) => Box::pin(self.handshake(tcp, config, info)).await?,
        };
        let (result, traffic) = self.run(transport, endpoint).await;
        if result.is_err() {
            self.stats.transport_failed();
        }
        Some(traffic)
    }

    /// The TLS handshake, and the endpoint for the connection over it;
    /// `None` if the handshake failed or shutdown came first.
    async fn handshake<A>(
        &self,
        tcp: TcpStream,
        config: Arc<rustls::ServerConfig>,
        mut info: ConnectionInfo,
    ) -> Option<(Transport<TcpStream>, Endpoint<A>)>
    where
        F: Fn(&ConnectionInfo) -> A,
        A: Application,
    {
        let started = Instant::now();
        let session = match rustls::ServerConnection::new(config) {
            Ok(session) => session,
            Err(e) => {
                self.handshake_failed(info.peer, &e.to_string());
                return None;
            }
        };
        let (mut tcp, mut tls) = (tcp, Box::new(TlsSession::new(session)));
        let handshake = driver::handshake(&mut tcp, &mut tls);
        let handshake = tokio::time::timeout(self.options.handshake_timeout, handshake);
        let done = tokio::select! {
            () = self.shutdown.triggered() => return None,
            done = handshake => done,
        };
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                self.handshake_failed(info.peer, &e.to_string());
                return None;
            }
            Err(_) => {
                self.handshake_failed(info.peer, "handshake timeout");
                return None;
            }
        }
        info.server_handshake_done(
            TlsInfo::from_connection(tls.connection()),
            started.elapsed(),
        );
        let endpoint = self.endpoint(info, true);
        Some((Transport::tls(tcp, tls), endpoint))
    }

    /// The connection with its application, built before the run. It
    /// takes `info` and drops it: a value the task's future borrowed, or
    /// still held, would stay in it for the whole connection.
    fn endpoint<A>(&self, info: ConnectionInfo, tls: bool) -> Endpoint<A>
    where
        F: Fn(&ConnectionInfo) -> A,
        A: Application,
    {
        let now = Instant::now();
        let conn = self.configs.connection(info.protocol, tls, now);
        Endpoint::new(conn, (self.factory)(&info), now)
    }

    /// Not an `async fn`: one would keep a second copy of `endpoint` (its
    /// argument and its binding) in the task for the whole connection.
    #[allow(clippy::manual_async_fn, reason = "an async fn doubles the task")]
    fn run<A>(
        &self,
        transport: Transport<TcpStream>,
        mut endpoint: Endpoint<A>,
    ) -> impl Future<Output = (io::Result<Ending>, h2sim_proto::Stats)>
    where
        A: Application,
    {
        async move {
            let result = driver::run(
                transport,
                &mut endpoint,
                &self.shutdown,
                &self.options.driver,
            )
            .await;
            (result, endpoint.connection().stats())
        }
    }
}
