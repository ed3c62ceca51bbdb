//! Client connections: N of them to one target, dealt out over the
//! executors (slot `i` on executor `i % executors`), each an [`Endpoint`]
//! around the caller's [`Application`], over plain TCP (HTTP/2 prior
//! knowledge or HTTP/1.1) or TLS (protocol by ALPN).

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_lite::future;
use glommio::net::TcpStream;
use glommio::timer::Timer;
use h2sim_proto::{
    Application, Config, Connection, ConnectionError, Endpoint, Event, Protocol, Reason,
};
use rustls_pki_types::ServerName;

use crate::driver::{self, DriverOptions, Ending};
use crate::info::{ALPN_H2, ALPN_HTTP1};
use crate::info::{ConnectionInfo, TlsInfo};
use crate::listen::{AddrError, HostPort, Scheme};
use crate::runtime::{self, Executors, Ready, RuntimeError};
use crate::shutdown::{LocalSignal, Shutdown};
use crate::transport::Transport;

/// Which protocol a client speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ClientProtocol {
    /// HTTP/2: prior knowledge over TCP, ALPN `h2` over TLS.
    #[default]
    Http2,
    /// HTTP/1.1, pipelining up to `Config::http1.max_pipeline` requests.
    Http1,
    /// TLS only: offer `h2` and `http/1.1` and speak what the server picks
    /// (HTTP/1.1 when it picks nothing). Over plain TCP this is `Http2`.
    Negotiate,
}

/// When and how often a lost connection is replaced.
#[derive(Debug, Clone, Copy)]
pub struct Reconnect {
    /// Lost connections (or connections that answered nothing) replaced
    /// in a row, at most; a connection that got a response resets the
    /// count. Planned ends are not counted.
    pub max_attempts: u32,
    /// Pause before each replacement of a lost connection.
    pub delay: Duration,
}

/// How a client connects.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Connections opened to the target at once.
    pub connections: usize,
    pub protocol: ClientProtocol,
    pub config: Config,
    /// TLS configuration (for instance from `h2sim_tokio::tls::client_config`, which has no runtime in it); its ALPN list
    /// is replaced according to `protocol`.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The name sent as SNI and checked against the server's certificate;
    /// the target's host when `None`.
    pub server_name: Option<String>,
    /// TCP connect plus TLS handshake, at most.
    pub connect_timeout: Duration,
    /// Replace lost connections (connect failure, transport error, the
    /// server closing with requests open, a protocol error, a GOAWAY with
    /// an error) while the application wants to go on
    /// (`Application::wants_reconnect`). `None`: a lost connection stays
    /// lost. Planned ends (GOAWAY without error, an HTTP/1.1 response that
    /// closes, the application's own GOAWAY) are followed by a new
    /// connection whenever the application wants one, with or without this.
    pub reconnect: Option<Reconnect>,
    pub driver: DriverOptions,
    /// Triggering it makes every connection go away gracefully.
    pub shutdown: Shutdown,
    /// The executors the connections are dealt to; never more executors
    /// than connections start.
    pub executors: Executors,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connections: 1,
            protocol: ClientProtocol::Http2,
            config: Config::default(),
            tls: None,
            server_name: None,
            connect_timeout: Duration::from_secs(10),
            reconnect: None,
            driver: DriverOptions::default(),
            shutdown: Shutdown::new(),
            executors: Executors::default(),
        }
    }
}

/// Why a client could not connect, or how its connection was lost.
#[derive(Debug)]
pub enum ClientError {
    Address(AddrError),
    /// `https://` without a TLS configuration, or `http://` with one.
    SchemeMismatch {
        target: String,
    },
    Resolve {
        addr: HostPort,
        error: io::Error,
    },
    InvalidServerName(String),
    Connect {
        addr: SocketAddr,
        error: io::Error,
    },
    ConnectTimeout {
        addr: HostPort,
    },
    /// The TLS handshake failed: the error names the reason (unknown CA,
    /// wrong name, revoked certificate, alert from the server…).
    Handshake {
        addr: SocketAddr,
        error: io::Error,
    },
    /// The connection failed once up (reset, broken pipe, a TLS alert).
    Transport(io::Error),
    /// The server closed the connection while it was in use.
    PeerClosed,
    /// The server sent GOAWAY: it will take no more requests on this connection.
    WentAway {
        reason: Reason,
    },
    /// The connection ended in a protocol error (ours or the server's).
    Closed(ConnectionError),
    /// The glommio executors could not start (no io_uring, memlock, CPUs).
    Runtime(RuntimeError),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Address(e) => write!(f, "{e}"),
            ClientError::SchemeMismatch { target } => write!(
                f,
                "{target}: https:// needs a TLS configuration and http:// must not have one"
            ),
            ClientError::Resolve { addr, error } => write!(f, "cannot resolve {addr}: {error}"),
            ClientError::InvalidServerName(name) => write!(f, "invalid TLS server name {name:?}"),
            ClientError::Connect { addr, error } => write!(f, "cannot connect to {addr}: {error}"),
            ClientError::ConnectTimeout { addr } => write!(f, "connecting to {addr} timed out"),
            ClientError::Handshake { addr, error } => {
                write!(f, "TLS handshake with {addr} failed: {error}")
            }
            ClientError::Transport(e) => write!(f, "connection failed: {e}"),
            ClientError::PeerClosed => f.write_str("the server closed the connection"),
            ClientError::WentAway { reason } => write!(f, "the server sent GOAWAY ({reason})"),
            ClientError::Closed(e) => write!(f, "{e}"),
            ClientError::Runtime(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ClientError {}

impl From<RuntimeError> for ClientError {
    fn from(e: RuntimeError) -> Self {
        ClientError::Runtime(e)
    }
}

/// How one connection slot ended.
#[derive(Debug)]
pub struct ClientOutcome<A> {
    /// The application, given back for its results; `None` if no
    /// connection was ever made (the factory never ran).
    pub app: Option<A>,
    /// Connections made or tried after the first.
    pub reconnects: u32,
    /// Why the last connection ended abnormally, if it did.
    pub error: Option<ClientError>,
}

/// A resolved target and what every connection to it shares.
struct Dialer {
    addr: HostPort,
    addrs: Vec<SocketAddr>,
    tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    options: ClientOptions,
}

/// Opens `options.connections` connections to `target` (`host:port`,
/// `[v6]:port`, or an `http://`/`https://` URL) over the executors and
/// runs an application made by `factory` on each until it finishes;
/// blocks until all are done. Errors that concern the target as a whole
/// (unparsable, unresolvable) or the runtime come back at once; each
/// slot's own fate is in its [`ClientOutcome`], in slot order.
pub fn connect<A, F>(
    target: &str,
    options: ClientOptions,
    factory: F,
) -> Result<Vec<ClientOutcome<A>>, ClientError>
where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + Send + 'static,
{
    let connections = options.connections;
    let count = options.executors.resolved_count().min(connections).max(1);
    let executors = options.executors.clone();
    let stop = options.shutdown.clone();
    let dialer = Arc::new(Dialer::new(target, options)?);
    let factory = Arc::new(factory);
    let threads = runtime::start(&executors, count, &stop, move |index, ready| {
        run_executor(index, count, dialer.clone(), factory.clone(), ready)
    })?;
    let mut outcomes: Vec<Option<ClientOutcome<A>>> = (0..connections).map(|_| None).collect();
    for (slot, outcome) in runtime::join_all(threads).into_iter().flatten() {
        outcomes[slot] = Some(outcome);
    }
    Ok(outcomes.into_iter().flatten().collect())
}

/// One executor's share of the slots, run side by side.
async fn run_executor<A, F>(
    index: usize,
    executors: usize,
    dialer: Arc<Dialer>,
    factory: Arc<F>,
    ready: Ready<ClientError>,
) -> Vec<(usize, ClientOutcome<A>)>
where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + 'static,
{
    let _ = ready.send((index, Ok(())));
    let signal = LocalSignal::relay(&dialer.options.shutdown);
    let tasks: Vec<_> = (index..dialer.options.connections)
        .step_by(executors)
        .map(|slot| {
            let (dialer, factory, signal) = (dialer.clone(), factory.clone(), signal.clone());
            glommio::spawn_local(async move {
                let outcome = dialer.run_slot(index, &*factory, &signal).await;
                (slot, outcome)
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(tasks.len());
    for task in tasks {
        outcomes.push(task.await);
    }
    outcomes
}

impl Dialer {
    fn new(target: &str, mut options: ClientOptions) -> Result<Self, ClientError> {
        let addr: HostPort = target.parse().map_err(ClientError::Address)?;
        let scheme_ok = match addr.scheme {
            Some(Scheme::Https) => options.tls.is_some(),
            Some(Scheme::Http) => options.tls.is_none(),
            None => true,
        };
        if !scheme_ok {
            return Err(ClientError::SchemeMismatch {
                target: target.to_owned(),
            });
        }
        let addrs = addr.resolve().map_err(|error| ClientError::Resolve {
            addr: addr.clone(),
            error,
        })?;
        let tls = match &options.tls {
            Some(config) => {
                let mut config = (**config).clone();
                config.alpn_protocols = match options.protocol {
                    ClientProtocol::Http2 => vec![ALPN_H2.to_vec()],
                    ClientProtocol::Http1 => vec![ALPN_HTTP1.to_vec()],
                    ClientProtocol::Negotiate => vec![ALPN_H2.to_vec(), ALPN_HTTP1.to_vec()],
                };
                let name = options.server_name.clone().unwrap_or(addr.host.clone());
                let name = ServerName::try_from(name.clone())
                    .map_err(|_| ClientError::InvalidServerName(name))?;
                Some((Arc::new(config), name))
            }
            None => None,
        };
        options.config.http1.secure = tls.is_some();
        Ok(Dialer {
            addr,
            addrs,
            tls,
            options,
        })
    }

    /// One connection slot: connect, run, and open a new connection while
    /// the application still has work (`Application::wants_reconnect`).
    /// A planned end — the application or the server going away without
    /// error (GOAWAY NO_ERROR, an HTTP/1.1 response that closes) — is
    /// followed by a new connection at once and is not limited. A loss —
    /// connect failure, transport error, the server closing with requests
    /// open, a protocol error, a GOAWAY with an error code — is replaced
    /// only with `ClientOptions::reconnect`, after its delay, and at most
    /// `max_attempts` times in a row (see `Watched::end`). The application
    /// lives on across connections (its `start` runs again on each), so it
    /// carries its work over and has already heard, by `Event::Closed`,
    /// which exchanges the end took.
    async fn run_slot<A, F>(
        &self,
        executor: usize,
        factory: &F,
        signal: &LocalSignal,
    ) -> ClientOutcome<A>
    where
        F: Fn(&ConnectionInfo) -> A,
        A: Application,
    {
        let mut app: Option<A> = None;
        let mut reconnects = 0;
        // Consecutive connections that were lost or got nowhere.
        let mut losses = 0;
        loop {
            let end = match self.open(executor, reconnects).await {
                Ok((transport, info)) => {
                    let watched = Watched::new(match app.take() {
                        Some(mut a) => {
                            a.reconnected(info.connect_time);
                            a
                        }
                        None => factory(&info),
                    });
                    let (result, watched) = self.run(transport, &info, watched, signal).await;
                    let end = watched.end(result);
                    app = Some(watched.app);
                    end
                }
                Err(e) => Err(e),
            };
            // A planned end that answered nothing counts as a loss, so a
            // server that turns every connection away cannot make the slot
            // reconnect for ever.
            let (error, counted) = match end {
                Ok(progress) => (None, !progress),
                Err(e) => (Some(e), true),
            };
            losses = if counted { losses + 1 } else { 0 };
            // Before the first connection the application does not exist
            // yet: its work is all still to do.
            let wants = app.as_ref().is_none_or(A::wants_reconnect);
            let policy = self.options.reconnect;
            let allowed = match policy {
                _ if !counted => true,
                Some(r) => losses <= r.max_attempts,
                None => false,
            };
            if !wants || !allowed || signal.is_fired() {
                return ClientOutcome {
                    app,
                    reconnects,
                    error,
                };
            }
            reconnects += 1;
            if let (true, Some(r)) = (counted, policy) {
                Timer::new(r.delay).await;
            }
        }
    }

    /// Connects (trying each resolved address in turn) and shakes hands,
    /// within the connect timeout.
    async fn open(
        &self,
        executor: usize,
        attempt: u32,
    ) -> Result<(Transport, ConnectionInfo), ClientError> {
        let opening = async {
            let mut last = None;
            for &addr in &self.addrs {
                match TcpStream::connect(addr).await {
                    Ok(tcp) => return self.handshake(tcp, addr, executor, attempt).await,
                    Err(e) => {
                        last = Some(ClientError::Connect {
                            addr,
                            error: runtime::io_error(e),
                        });
                    }
                }
            }
            Err(last.unwrap_or(ClientError::ConnectTimeout {
                addr: self.addr.clone(),
            }))
        };
        let started = Instant::now();
        let (transport, mut info) = future::or(opening, async {
            Timer::new(self.options.connect_timeout).await;
            Err(ClientError::ConnectTimeout {
                addr: self.addr.clone(),
            })
        })
        .await?;
        info.connect_time = started.elapsed();
        Ok((transport, info))
    }

    async fn handshake(
        &self,
        tcp: TcpStream,
        peer: SocketAddr,
        executor: usize,
        attempt: u32,
    ) -> Result<(Transport, ConnectionInfo), ClientError> {
        // Without it small frames wait for ACKs (Nagle); failure only costs latency.
        let _ = tcp.set_nodelay(true);
        let local = tcp.local_addr().map_err(|e| ClientError::Connect {
            addr: peer,
            error: runtime::io_error(e),
        })?;
        let mut info = ConnectionInfo {
            peer,
            local,
            protocol: Some(match self.options.protocol {
                ClientProtocol::Http1 => Protocol::Http1,
                ClientProtocol::Http2 | ClientProtocol::Negotiate => Protocol::Http2,
            }),
            tls: None,
            connect_time: Duration::ZERO,
            attempt,
            executor,
        };
        let Some((config, name)) = &self.tls else {
            return Ok((Transport::plain(tcp), info));
        };
        let session = rustls::ClientConnection::new(config.clone(), name.clone()).map_err(|e| {
            ClientError::Handshake {
                addr: peer,
                error: io::Error::other(e),
            }
        })?;
        let mut transport = Transport::tls(tcp, rustls::Connection::Client(session));
        transport
            .handshake()
            .await
            .map_err(|error| ClientError::Handshake { addr: peer, error })?;
        let Some(session) = transport.tls_session() else {
            return Err(ClientError::Handshake {
                addr: peer,
                error: io::Error::other("TLS session missing after the handshake"),
            });
        };
        let tls_info = TlsInfo::from_connection(session);
        info.protocol = Some(match (tls_info.alpn.as_deref(), self.options.protocol) {
            (Some(ALPN_H2), _) => Protocol::Http2,
            (Some(ALPN_HTTP1), _) | (None, ClientProtocol::Negotiate) => Protocol::Http1,
            // Without ALPN the server took what we offered at face value.
            (_, ClientProtocol::Http1) => Protocol::Http1,
            (_, _) => Protocol::Http2,
        });
        info.tls = Some(tls_info);
        Ok((transport, info))
    }

    /// Runs one connection to its end and gives the application back.
    async fn run<A: Application>(
        &self,
        mut transport: Transport,
        info: &ConnectionInfo,
        app: A,
        signal: &LocalSignal,
    ) -> (io::Result<Ending>, A) {
        let now = Instant::now();
        let config = self.options.config.clone();
        let conn = match info.protocol {
            Some(Protocol::Http1) => Connection::client_http1(config, now),
            _ => Connection::client(config, now),
        };
        let mut endpoint = Endpoint::new(conn, app, now);
        let result = driver::run(&mut transport, &mut endpoint, signal, &self.options.driver).await;
        (result, endpoint.into_parts().1)
    }
}

/// The caller's application, watched on its way for the events that say
/// how the connection ended; everything is passed through as is.
struct Watched<A> {
    app: A,
    /// The code of the server's GOAWAY, if it sent one.
    goaway: Option<Reason>,
    /// The error the connection ended in, as the core told it.
    error: Option<ConnectionError>,
    /// A final response arrived on this connection.
    progress: bool,
}

impl<A> Watched<A> {
    fn new(app: A) -> Self {
        Watched {
            app,
            goaway: None,
            error: None,
            progress: false,
        }
    }

    /// How the connection ended: `Ok(progress)` for a planned end (our
    /// GOAWAY, or the server's without error, or an HTTP/1.1 response
    /// that closes the connection), with whether any response arrived.
    /// A loss is a transport error, the server closing with requests
    /// open, a protocol error (ours or the server's), or a GOAWAY with an
    /// error code — also one that came after our own GOAWAY.
    fn end(&self, result: io::Result<Ending>) -> Result<bool, ClientError> {
        if let Err(e) = result {
            return Err(ClientError::Transport(e));
        }
        // The GOAWAY's code says more than the end of stream after it.
        match (&self.error, self.goaway) {
            (
                Some(
                    e @ (ConnectionError::Local { .. }
                    | ConnectionError::Remote { .. }
                    | ConnectionError::KeepaliveTimeout),
                ),
                _,
            ) => Err(ClientError::Closed(e.clone())),
            (_, Some(reason)) if reason != Reason::NO_ERROR => {
                Err(ClientError::WentAway { reason })
            }
            (Some(_), _) => Err(ClientError::PeerClosed),
            (None, _) => Ok(self.progress),
        }
    }
}

impl<A: Application> Application for Watched<A> {
    fn start(&mut self, now: Instant, conn: &mut Connection) {
        self.app.start(now, conn);
    }

    fn on_event(&mut self, now: Instant, event: Event, conn: &mut Connection) {
        match &event {
            Event::GoAway { reason, .. } => self.goaway = Some(*reason),
            Event::Response { head, .. } if !head.is_informational() => self.progress = true,
            Event::Closed { error, .. } => self.error.clone_from(error),
            _ => {}
        }
        self.app.on_event(now, event, conn);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.app.poll_timeout()
    }

    fn on_timeout(&mut self, now: Instant, conn: &mut Connection) {
        self.app.on_timeout(now, conn);
    }

    fn wants_reconnect(&self) -> bool {
        self.app.wants_reconnect()
    }
}
