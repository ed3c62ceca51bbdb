//! Client connections: N of them to one target, dealt out over the
//! executors (slot `i` on executor `i % executors`), each an [`Endpoint`]
//! around the caller's [`Application`], over plain TCP (HTTP/2 prior
//! knowledge or HTTP/1.1) or TLS (protocol by ALPN).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use futures_lite::future;
use glommio::net::TcpStream;
use glommio::timer::Timer;
use h2sim_proto::host::info::client_connection;
use h2sim_proto::host::{
    self, ClientError, ClientOutcome, ConnectionInfo, Dial, Ending, HostPort, Next, Slot, Target,
    TlsInfo, TlsSession,
};
use h2sim_proto::{Application, Endpoint};
use rustls_pki_types::ServerName;

use crate::driver;
use crate::listen;
use crate::runtime::{self, Executors, Ready, RuntimeError};
use crate::shutdown::{LocalSignal, Shutdown};
use crate::transport::{self, Transport};

/// How a client connects (see [`host::ClientOptions`]); the part glommio
/// adds is a [`ClientRuntime`].
pub type ClientOptions = host::ClientOptions<ClientRuntime>;

/// What glommio adds to a client's options.
#[derive(Debug, Clone, Default)]
pub struct ClientRuntime {
    /// Triggering it makes every connection go away gracefully.
    pub shutdown: Shutdown,
    /// The executors the connections are dealt to; never more executors
    /// than connections start.
    pub executors: Executors,
}

impl From<Executors> for ClientRuntime {
    fn from(executors: Executors) -> Self {
        ClientRuntime {
            executors,
            shutdown: Shutdown::new(),
        }
    }
}

impl From<RuntimeError> for ClientError {
    fn from(e: RuntimeError) -> Self {
        ClientError::Runtime(Box::new(e))
    }
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
    let count = options
        .runtime
        .executors
        .resolved_count()
        .min(connections)
        .max(1);
    let executors = options.runtime.executors.clone();
    let stop = options.runtime.shutdown.clone();
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
    if !ready.report(index, Ok(())) {
        return Vec::new();
    }
    let signal = LocalSignal::relay(&dialer.options.runtime.shutdown);
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
        let Target { addr, tls } = options.target(target)?;
        let addrs = listen::resolve(&addr).map_err(|error| ClientError::Resolve {
            addr: addr.clone(),
            error,
        })?;
        Ok(Dialer {
            addr,
            addrs,
            tls,
            options,
        })
    }

    /// One connection slot on `executor`, reconnecting as [`Slot`] decides.
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
        let mut slot = Slot::new(self.options.reconnect);
        loop {
            let next = match self.open(executor, slot.attempt()).await {
                Ok((transport, info)) => {
                    let watched = slot.watch(&info, factory);
                    let (result, watched) = self.run(transport, &info, watched, signal).await;
                    slot.ran(watched, result, signal.is_fired())
                }
                Err(e) => slot.failed(e, signal.is_fired()),
            };
            match next {
                Next::Stop => return slot.finish(),
                Next::Reconnect { after: Some(delay) } => {
                    Timer::new(delay).await;
                }
                Next::Reconnect { after: None } => {}
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
        let started = Instant::now();
        let mut dial = Dial::new(&self.addrs, &self.addr);
        let opening = async {
            while let Some(addr) = dial.next_addr() {
                match TcpStream::connect(addr).await {
                    Ok(tcp) => {
                        dial.connected(addr);
                        return Some(self.handshake(tcp, addr, executor, attempt).await);
                    }
                    Err(e) => dial.refused(addr, runtime::io_error(e)),
                }
            }
            Some(Err(dial.exhausted()))
        };
        let timeout = self.options.connect_timeout;
        let timer = async {
            Timer::new(timeout).await;
            None
        };
        // The walk is gone once either ends: `dial` tells how far it got.
        let opened = future::or(opening, timer).await;
        let (transport, mut info) = opened.unwrap_or_else(|| Err(dial.timed_out(timeout)))?;
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
        // TCP_NODELAY: small frames must not wait for ACKs (Nagle); a
        // failure to set it only costs latency.
        let _ = tcp.set_nodelay(true);
        let local = tcp.local_addr().map_err(|e| ClientError::Connect {
            addr: peer,
            error: runtime::io_error(e),
        })?;
        let protocol = self.options.protocol;
        let mut info = ConnectionInfo {
            executor,
            ..protocol.connection_info(peer, local, attempt)
        };
        let Some((config, name)) = &self.tls else {
            return Ok((Transport::plain(tcp), info));
        };
        let handshake_error = |error| protocol.handshake_failed(peer, error);
        let session = rustls::ClientConnection::new(config.clone(), name.clone())
            .map_err(|e| handshake_error(io::Error::other(e)))?;
        let (mut tcp, mut tls) = (tcp, Box::new(TlsSession::new(session)));
        transport::handshake(&mut tcp, &mut tls)
            .await
            .map_err(handshake_error)?;
        protocol.handshake_done(&mut info, TlsInfo::from_connection(tls.connection()))?;
        Ok((Transport::tls(tcp, tls), info))
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
        let conn = match client_connection(info.protocol, config, now) {
            Ok(conn) => conn,
            // `ClientOptions::target` refused such a configuration before
            // any connection was made.
            Err(e) => return (Err(io::Error::other(e)), app),
        };
        let mut endpoint = Endpoint::new(conn, app, now);
        let result = driver::run(&mut transport, &mut endpoint, signal, &self.options.driver).await;
        (result, endpoint.into_parts().1)
    }
}
