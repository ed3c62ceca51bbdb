//! Client connections: N of them to one target, each an [`Endpoint`]
//! around the caller's [`Application`], over plain TCP (HTTP/2 prior
//! knowledge or HTTP/1.1) or TLS (protocol by ALPN).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use h2sim_proto::host::info::client_connection;
use h2sim_proto::host::{
    self, ClientError, ClientOutcome, ConnectionInfo, Dial, Ending, HostPort, Next, Slot, Target,
    TlsInfo, TlsSession,
};
use h2sim_proto::{Application, Endpoint};
use rustls_pki_types::ServerName;
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::driver::{self, Transport};
use crate::listen;
use crate::shutdown::Shutdown;

/// How a client connects (see [`host::ClientOptions`]); the part tokio
/// adds, `runtime`, is the [`Shutdown`] whose trigger makes every
/// connection go away gracefully.
pub type ClientOptions = host::ClientOptions<Shutdown>;

/// A resolved target and what every connection to it shares.
struct Dialer {
    addr: HostPort,
    addrs: Vec<SocketAddr>,
    tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    options: ClientOptions,
}

/// Opens `options.connections` connections to `target` (`host:port`,
/// `[v6]:port`, or an `http://`/`https://` URL) and runs an application made
/// by `factory` on each until it finishes. Errors that concern the target
/// as a whole (unparsable, unresolvable) come back at once; each slot's own
/// fate is in its [`ClientOutcome`].
pub async fn connect<A, F>(
    target: &str,
    options: ClientOptions,
    factory: F,
) -> Result<Vec<ClientOutcome<A>>, ClientError>
where
    F: Fn(&ConnectionInfo) -> A + Send + Sync + 'static,
    A: Application + Send + 'static,
{
    let dialer = Arc::new(Dialer::new(target, options).await?);
    let factory = Arc::new(factory);
    let mut slots = JoinSet::new();
    for slot in 0..dialer.options.connections {
        let (dialer, factory) = (dialer.clone(), factory.clone());
        slots.spawn(async move { (slot, dialer.run_slot(&*factory).await) });
    }
    let mut outcomes: Vec<Option<ClientOutcome<A>>> =
        (0..dialer.options.connections).map(|_| None).collect();
    while let Some(joined) = slots.join_next().await {
        // A slot task panics only if the application does: that panic is
        // the caller's, so it goes on. Nothing cancels slot tasks.
        match joined {
            Ok((slot, outcome)) => outcomes[slot] = Some(outcome),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => {}
        }
    }
    Ok(outcomes.into_iter().flatten().collect())
}

impl Dialer {
    async fn new(target: &str, mut options: ClientOptions) -> Result<Self, ClientError> {
        let Target { addr, tls } = options.target(target)?;
        let addrs = listen::resolve(&addr)
            .await
            .map_err(|error| ClientError::Resolve {
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

    /// One connection slot, reconnecting as [`Slot`] decides.
    async fn run_slot<A, F>(&self, factory: &F) -> ClientOutcome<A>
    where
        F: Fn(&ConnectionInfo) -> A,
        A: Application,
    {
        let mut slot = Slot::new(self.options.reconnect);
        loop {
            let stopping = || self.options.runtime.is_triggered();
            let next = match self.open(slot.attempt()).await {
                Ok((stream, info)) => {
                    let watched = slot.watch(&info, factory);
                    let (result, watched) = self.run(stream, &info, watched).await;
                    slot.ran(watched, result, stopping())
                }
                Err(e) => slot.failed(e, stopping()),
            };
            match next {
                Next::Stop => return slot.finish(),
                Next::Reconnect { after: Some(delay) } => tokio::time::sleep(delay).await,
                Next::Reconnect { after: None } => {}
            }
        }
    }

    /// Connects (trying each resolved address in turn) and shakes hands.
    async fn open(
        &self,
        attempt: u32,
    ) -> Result<(Transport<TcpStream>, ConnectionInfo), ClientError> {
        let started = Instant::now();
        let mut dial = Dial::new(&self.addrs, &self.addr);
        let opening = async {
            while let Some(addr) = dial.next_addr() {
                match TcpStream::connect(addr).await {
                    Ok(tcp) => {
                        dial.connected(addr);
                        return self.handshake(tcp, addr, attempt).await;
                    }
                    Err(error) => dial.refused(addr, error),
                }
            }
            Err(dial.exhausted())
        };
        // The walk is gone once the timeout returns: `dial` tells how far
        // it got.
        let timeout = self.options.connect_timeout;
        let opened = tokio::time::timeout(timeout, opening).await;
        let (stream, mut info) = opened.unwrap_or_else(|_| Err(dial.timed_out(timeout)))?;
        info.connect_time = started.elapsed();
        Ok((stream, info))
    }

    async fn handshake(
        &self,
        tcp: TcpStream,
        peer: SocketAddr,
        attempt: u32,
    ) -> Result<(Transport<TcpStream>, ConnectionInfo), ClientError> {
        // TCP_NODELAY: small frames must not wait for ACKs (Nagle); a
        // failure to set it only costs latency.
        let _ = tcp.set_nodelay(true);
        let local = tcp
            .local_addr()
            .map_err(|error| ClientError::Connect { addr: peer, error })?;
        let protocol = self.options.protocol;
        let mut info = protocol.connection_info(peer, local, attempt);
        let Some((config, name)) = &self.tls else {
            return Ok((Transport::plain(tcp), info));
        };
        let handshake_error = |error| protocol.handshake_failed(peer, error);
        let session = rustls::ClientConnection::new(config.clone(), name.clone())
            .map_err(|e| handshake_error(io::Error::other(e)))?;
        let (mut tcp, mut tls) = (tcp, Box::new(TlsSession::new(session)));
        driver::handshake(&mut tcp, &mut tls)
            .await
            .map_err(handshake_error)?;
        protocol.handshake_done(&mut info, TlsInfo::from_connection(tls.connection()))?;
        Ok((Transport::tls(tcp, tls), info))
    }

    /// Runs one connection to its end and gives the application back.
    async fn run<A: Application>(
        &self,
        transport: Transport<TcpStream>,
        info: &ConnectionInfo,
        app: A,
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
        let (shutdown, driver) = (&self.options.runtime, &self.options.driver);
        let result = driver::run(transport, &mut endpoint, shutdown, driver).await;
        (result, endpoint.into_parts().1)
    }
}
