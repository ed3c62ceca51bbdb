//! The client's side of a host: which protocol to speak, why a connection
//! could not be made or was lost, and when a slot opens a new one.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::addr::{AddrError, HostPort};
use super::info::{ALPN_H2, ALPN_HTTP1, ConnectionInfo};
use super::lifecycle::{DriverOptions, Ending};
use crate::{
    Application, CloseCause, Config, Connection, ConnectionError, Event, Protocol, Reason,
    UserError,
};

/// How a client connects: everything but what its runtime adds, which is
/// `runtime` (the adapter's shutdown signal, and on a thread-per-core
/// runtime the executors), so each adapter names its own
/// `ClientOptions = host::ClientOptions<ItsPart>` and no two write the
/// rest again.
#[derive(Debug, Clone)]
pub struct ClientOptions<R> {
    /// Connections opened to the target at once.
    pub connections: usize,
    pub protocol: ClientProtocol,
    pub config: Config,
    /// TLS configuration (see [`crate::host::tls::client_config`]); its ALPN
    /// list is replaced according to `protocol`.
    #[cfg(feature = "tls")]
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
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
    /// What the runtime adapter adds (see the adapter's `ClientOptions`).
    pub runtime: R,
}

impl<R: Default> Default for ClientOptions<R> {
    fn default() -> Self {
        ClientOptions {
            connections: 1,
            protocol: ClientProtocol::Http2,
            config: Config::default(),
            #[cfg(feature = "tls")]
            tls: None,
            server_name: None,
            connect_timeout: Duration::from_secs(10),
            reconnect: None,
            driver: DriverOptions::default(),
            runtime: R::default(),
        }
    }
}

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

impl ClientProtocol {
    /// The ALPN list to offer, in our order of preference.
    pub fn alpn(self) -> Vec<Vec<u8>> {
        match self {
            ClientProtocol::Http2 => vec![ALPN_H2.to_vec()],
            ClientProtocol::Http1 => vec![ALPN_HTTP1.to_vec()],
            ClientProtocol::Negotiate => vec![ALPN_H2.to_vec(), ALPN_HTTP1.to_vec()],
        }
    }

    /// The protocol over plain TCP (and before a TLS handshake).
    pub fn plain(self) -> Protocol {
        match self {
            ClientProtocol::Http1 => Protocol::Http1,
            ClientProtocol::Http2 | ClientProtocol::Negotiate => Protocol::Http2,
        }
    }

    /// The protocol after a TLS handshake that agreed on `alpn`; `None`
    /// when it is no protocol we can speak: HTTP/2 over TLS exists only
    /// where ALPN selected `h2` (RFC 9113 §3.2), so a server that selected
    /// nothing does not take it, whereas HTTP/1.1 needs no ALPN (RFC 7301
    /// §3.2 lets a server ignore the extension). rustls refuses a protocol
    /// we did not offer.
    pub fn after_handshake(self, alpn: Option<&[u8]>) -> Option<Protocol> {
        match (alpn, self) {
            (Some(ALPN_H2), _) => Some(Protocol::Http2),
            (Some(ALPN_HTTP1), _) | (None, ClientProtocol::Negotiate | ClientProtocol::Http1) => {
                Some(Protocol::Http1)
            }
            _ => None,
        }
    }

    /// The names this protocol offers by ALPN, for messages: `h2, http/1.1`.
    #[cfg(feature = "tls")]
    fn offer(self) -> String {
        let names: Vec<_> = self
            .alpn()
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        names.join(", ")
    }

    /// The TLS handshake with `addr` failed with `error`: rustls's reason
    /// (inside an `io::Error`) or the socket's.
    pub fn handshake_failed(self, addr: SocketAddr, error: io::Error) -> ClientError {
        ClientError::Handshake {
            addr,
            error,
            offered: self,
        }
    }

    /// What a client connection's factory learns of a TCP connection just
    /// made, before any TLS handshake: the addresses, this protocol over
    /// plain TCP, and which of the slot's connections it is.
    pub fn connection_info(
        self,
        peer: SocketAddr,
        local: SocketAddr,
        attempt: u32,
    ) -> ConnectionInfo {
        ConnectionInfo {
            protocol: Some(self.plain()),
            attempt,
            ..ConnectionInfo::new(peer, local)
        }
    }

    /// Completes `info` once the TLS handshake agreed on what `tls` tells:
    /// the protocol follows its ALPN result. A server that selected no
    /// protocol while we want HTTP/2 fails the connection here, before a
    /// preface it cannot read goes out (it would time out waiting for
    /// SETTINGS) and before anyone reports the connection as `h2`.
    #[cfg(feature = "tls")]
    pub fn handshake_done(
        self,
        info: &mut ConnectionInfo,
        tls: super::info::TlsInfo,
    ) -> Result<(), ClientError> {
        let protocol = self
            .after_handshake(tls.alpn.as_deref())
            .ok_or(ClientError::NoApplicationProtocol { addr: info.peer })?;
        info.protocol = Some(protocol);
        info.tls = Some(tls);
        Ok(())
    }
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
    /// No TCP connection came up within the connect timeout.
    ConnectTimeout {
        addr: HostPort,
    },
    /// TCP connected to `addr`, but the TLS handshake did not end within
    /// what was left of the connect timeout, `after` in all: the server
    /// read our ClientHello and said nothing (a plain port of a server
    /// that waits for a request, a listener that never answers).
    HandshakeTimeout {
        addr: SocketAddr,
        after: Duration,
    },
    /// The TLS handshake failed: the error names the reason (unknown CA,
    /// wrong name, revoked certificate, alert from the server…); `offered`
    /// is the protocol whose ALPN list we sent.
    Handshake {
        addr: SocketAddr,
        error: io::Error,
        offered: ClientProtocol,
    },
    /// The TLS server selected no protocol by ALPN while we offered only
    /// `h2`: it does not take HTTP/2 (RFC 9113 §3.2, RFC 7301 §3.2).
    NoApplicationProtocol {
        addr: SocketAddr,
    },
    /// The connection failed once up (reset, broken pipe, a TLS alert).
    Transport(io::Error),
    /// The server closed the connection with requests unanswered;
    /// `after_goaway` when its GOAWAY (without an error) had come first
    /// and had not excluded them, so it had said it would answer them
    /// (RFC 9113 §6.8).
    PeerClosed {
        after_goaway: bool,
    },
    /// The server closed the connection before its SETTINGS, the first
    /// thing an HTTP/2 server sends (RFC 9113 §3.4): it does not speak
    /// HTTP/2 with prior knowledge there (a TLS port that dropped our
    /// cleartext, a server that closes whatever it gets).
    ClosedBeforeSettings,
    /// The server sent GOAWAY: it will take no more requests on this connection.
    WentAway {
        reason: Reason,
    },
    /// The connection ended in a protocol error (ours or the server's).
    Closed(ConnectionError),
    /// The runtime could not start its event loops (glommio: no io_uring,
    /// the memlock limit, CPUs); the error is the adapter's own.
    Runtime(Box<dyn std::error::Error + Send + Sync>),
    /// The configuration has a setting no server accepts
    /// (`UserError::InvalidSetting`, see [`Config::check`]).
    Config(UserError),
}

impl ClientError {
    /// The connection never came up: the server could not be reached (or
    /// named, or trusted), as opposed to a connection lost once in use.
    pub fn is_connect_failure(&self) -> bool {
        matches!(
            self,
            ClientError::Address(_)
                | ClientError::SchemeMismatch { .. }
                | ClientError::Resolve { .. }
                | ClientError::InvalidServerName(_)
                | ClientError::Connect { .. }
                | ClientError::ConnectTimeout { .. }
                | ClientError::HandshakeTimeout { .. }
                | ClientError::Handshake { .. }
                | ClientError::NoApplicationProtocol { .. }
                | ClientError::ClosedBeforeSettings
        )
    }

    /// The rustls error a TLS handshake failed with, for a caller that
    /// adds what to do about it.
    #[cfg(feature = "tls")]
    pub fn tls_error(&self) -> Option<&rustls::Error> {
        match self {
            ClientError::Handshake { error, .. } => error.get_ref()?.downcast_ref(),
            _ => None,
        }
    }
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
            ClientError::HandshakeTimeout { addr, after } => {
                write!(
                    f,
                    "TLS handshake with {addr} got no answer within {after:?}"
                )
            }
            ClientError::Handshake {
                addr,
                error,
                offered,
            } => {
                write!(f, "TLS handshake with {addr} failed: ")?;
                handshake_reason(f, error, *offered)
            }
            ClientError::NoApplicationProtocol { addr } => write!(
                f,
                "the TLS server at {addr} chose no application protocol: it does not take h2, \
                 which over TLS needs ALPN to select it (RFC 9113 §3.2, RFC 7301)"
            ),
            ClientError::Transport(e) => write!(f, "connection failed: {e}"),
            ClientError::PeerClosed {
                after_goaway: false,
            } => f.write_str("the server closed the connection with requests unanswered"),
            ClientError::PeerClosed { after_goaway: true } => f.write_str(
                "the server closed the connection with requests unanswered that its \
                 GOAWAY had taken (at or below its last stream, RFC 9113 §6.8)",
            ),
            ClientError::ClosedBeforeSettings => f.write_str(
                "the server closed the connection before its SETTINGS, the first thing an \
                 HTTP/2 server sends (RFC 9113 §3.4): it does not take HTTP/2 with prior \
                 knowledge here (a TLS port, if https:// is what it wants)",
            ),
            ClientError::WentAway { reason } => write!(f, "the server sent GOAWAY ({reason})"),
            ClientError::Closed(e) => write!(f, "{e}"),
            ClientError::Runtime(e) => write!(f, "{e}"),
            ClientError::Config(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// Why a TLS handshake failed, in plain words where rustls's own are its
/// Debug output (see [`super::tls::plain_words`]); an alert refusing every
/// protocol we offered names them.
fn handshake_reason(
    f: &mut fmt::Formatter<'_>,
    error: &io::Error,
    offered: ClientProtocol,
) -> fmt::Result {
    #[cfg(feature = "tls")]
    if let Some(e) = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        use rustls::AlertDescription::NoApplicationProtocol;
        if *e == rustls::Error::AlertReceived(NoApplicationProtocol) {
            return write!(
                f,
                "the server takes none of the protocols offered ({}): it sent the alert \
                 NoApplicationProtocol (RFC 7301 §3.2)",
                offered.offer()
            );
        }
        return f.write_str(&super::tls::plain_words(e, "server"));
    }
    #[cfg(not(feature = "tls"))]
    let _ = offered; // without rustls no alert names what we offered
    write!(f, "{error}")
}

/// A client's target, checked and ready to dial: its address (still to be
/// resolved, the adapter's way) and, with TLS, the configuration and the
/// server name every connection to it uses.
#[derive(Debug)]
pub struct Target {
    pub addr: HostPort,
    /// The rustls configuration with the ALPN list of the options'
    /// protocol, and the name to send as SNI and check the server's
    /// certificate against (`server_name`, or the target's host).
    #[cfg(feature = "tls")]
    pub tls: Option<TargetTls>,
}

/// What every TLS connection to one [`Target`] shares.
#[cfg(feature = "tls")]
pub type TargetTls = (
    std::sync::Arc<rustls::ClientConfig>,
    rustls_pki_types::ServerName<'static>,
);

impl<R> ClientOptions<R> {
    /// Parses `target` (`host:port`, `[v6]:port`, or an `http://`/`https://`
    /// URL), checks its scheme against whether TLS is configured
    /// (`https://` needs it, `http://` must not have it), builds the TLS
    /// configuration for it, and tells the core's HTTP/1.1 side whether
    /// the connections are secure. The configuration is checked here
    /// ([`Config::check`]), once for every connection to the target.
    pub fn target(&mut self, target: &str) -> Result<Target, ClientError> {
        self.config.check().map_err(ClientError::Config)?;
        use super::addr::Scheme;
        #[cfg(feature = "tls")]
        let secure = self.tls.is_some();
        #[cfg(not(feature = "tls"))]
        let secure = false;
        let addr: HostPort = target.parse().map_err(ClientError::Address)?;
        let scheme_ok = match addr.scheme {
            Some(Scheme::Https) => secure,
            Some(Scheme::Http) => !secure,
            None => true,
        };
        if !scheme_ok {
            return Err(ClientError::SchemeMismatch {
                target: target.to_owned(),
            });
        }
        self.config.http1.secure = secure;
        Ok(Target {
            #[cfg(feature = "tls")]
            tls: match &self.tls {
                Some(config) => Some(self.tls_for(config, &addr)?),
                None => None,
            },
            addr,
        })
    }

    #[cfg(feature = "tls")]
    fn tls_for(
        &self,
        config: &rustls::ClientConfig,
        target: &HostPort,
    ) -> Result<TargetTls, ClientError> {
        let mut config = config.clone();
        config.alpn_protocols = self.protocol.alpn();
        let name = self
            .server_name
            .as_deref()
            .unwrap_or(&target.host)
            .to_owned();
        let name = rustls_pki_types::ServerName::try_from(name.clone())
            .map_err(|_| ClientError::InvalidServerName(name))?;
        Ok((std::sync::Arc::new(config), name))
    }
}

/// One connection attempt's walk over a target's resolved addresses: each
/// is tried in turn, and when none answers the attempt reports the last
/// refusal, or a timeout if there was none. The adapter supplies only the
/// connect call and the timer around the whole walk, and tells the walk
/// when a TCP connection came up ([`Dial::connected`]), so that a timeout
/// names the phase it cut short: the connect, or the TLS handshake after it.
#[derive(Debug)]
pub struct Dial<'a> {
    addrs: std::slice::Iter<'a, SocketAddr>,
    target: &'a HostPort,
    last: Option<ClientError>,
    /// The address whose TCP connection came up, its handshake under way.
    connected: Option<SocketAddr>,
}

impl<'a> Dial<'a> {
    pub fn new(addrs: &'a [SocketAddr], target: &'a HostPort) -> Self {
        Dial {
            addrs: addrs.iter(),
            target,
            last: None,
            connected: None,
        }
    }

    /// The next address to try, or `None` when every one was tried.
    pub fn next_addr(&mut self) -> Option<SocketAddr> {
        self.addrs.next().copied()
    }

    /// `addr` refused or failed to connect; the walk goes on.
    pub fn refused(&mut self, addr: SocketAddr, error: io::Error) {
        self.last = Some(ClientError::Connect { addr, error });
    }

    /// The TCP connection to `addr` came up: what is left is its TLS
    /// handshake, if any.
    pub fn connected(&mut self, addr: SocketAddr) {
        self.connected = Some(addr);
    }

    /// Why the walk failed once every address was tried: the last
    /// refusal, or a timeout if there was none.
    pub fn exhausted(&mut self) -> ClientError {
        let target = self.target;
        self.last
            .take()
            .unwrap_or_else(|| ClientError::ConnectTimeout {
                addr: target.clone(),
            })
    }

    /// What the walk reports when its timer, `after`, fires first: a
    /// connect that timed out, or a handshake that got no answer once
    /// the TCP connection was up.
    pub fn timed_out(&self, after: Duration) -> ClientError {
        match self.connected {
            Some(addr) => ClientError::HandshakeTimeout { addr, after },
            None => ClientError::ConnectTimeout {
                addr: self.target.clone(),
            },
        }
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

/// What a slot does after a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The slot is done: [`Slot::finish`] gives its outcome.
    Stop,
    /// Open a new connection, after the pause if there is one.
    Reconnect { after: Option<Duration> },
}

/// One connection slot's reconnect policy, over its connections: connect,
/// run, and open a new connection while the application still has work
/// (`Application::wants_reconnect`). A planned end — the application or
/// the server going away without error (GOAWAY NO_ERROR, an HTTP/1.1
/// response that closes) — is followed by a new connection at once and is
/// not limited. A loss — connect failure, transport error, the server
/// closing with requests open, a protocol error, a GOAWAY with an error
/// code — is replaced only with a [`Reconnect`] policy, after its delay,
/// and at most `max_attempts` times in a row (see [`Watched`]). The
/// application lives on across connections (its `start` runs again on
/// each), so it carries its work over and has already heard, by
/// `Event::Closed`, which exchanges the end took.
#[derive(Debug)]
pub struct Slot<A> {
    policy: Option<Reconnect>,
    app: Option<A>,
    reconnects: u32,
    /// Consecutive connections that were lost or got nowhere.
    losses: u32,
    error: Option<ClientError>,
}

impl<A: Application> Slot<A> {
    pub fn new(policy: Option<Reconnect>) -> Self {
        Slot {
            policy,
            app: None,
            reconnects: 0,
            losses: 0,
            error: None,
        }
    }

    /// The number of the next connection (0 for the first).
    pub fn attempt(&self) -> u32 {
        self.reconnects
    }

    /// The application for a connection just made: the slot's own, told
    /// it reconnected, or a new one from `factory` on the first.
    pub fn watch(
        &mut self,
        info: &ConnectionInfo,
        factory: impl FnOnce(&ConnectionInfo) -> A,
    ) -> Watched<A> {
        Watched::new(match self.app.take() {
            Some(mut a) => {
                a.reconnected(info.connect_time);
                a
            }
            None => factory(info),
        })
    }

    /// The connection made by [`Slot::watch`] ran to its end with
    /// `result`; `shutdown` says whether the client is stopping.
    pub fn ran(&mut self, watched: Watched<A>, result: io::Result<Ending>, shutdown: bool) -> Next {
        // Whether the end was planned, and whether it got anywhere, apart:
        // the second also begins a new run of losses after one.
        let end = watched.end(result).map(|_| ());
        let progress = watched.progress;
        self.app = Some(watched.app);
        self.next(end, progress, shutdown)
    }

    /// No connection could be made.
    pub fn failed(&mut self, error: ClientError, shutdown: bool) -> Next {
        self.next(Err(error), false, shutdown)
    }

    pub fn finish(self) -> ClientOutcome<A> {
        ClientOutcome {
            app: self.app,
            reconnects: self.reconnects,
            error: self.error,
        }
    }

    /// `end`: planned (`Ok`) or a loss; `progress`: the connection got a
    /// response (see [`Watched`]), which begins a new run of losses,
    /// whether or not it was lost at the end.
    fn next(&mut self, end: Result<(), ClientError>, progress: bool, shutdown: bool) -> Next {
        // A planned end that answered nothing counts as a loss, so a
        // server that turns every connection away cannot make the slot
        // reconnect for ever.
        let counted = match end {
            Ok(()) => {
                self.error = None;
                !progress
            }
            Err(e) => {
                self.error = Some(e);
                true
            }
        };
        // Losses in a row: a server that answers a while and then drops
        // the connection, each time, is not one that never answers.
        let before = if progress { 0 } else { self.losses };
        self.losses = if counted { before + 1 } else { 0 };
        let allowed = match self.policy {
            _ if !counted => true,
            Some(r) => self.losses <= r.max_attempts,
            None => false,
        };
        // Asked last, since the application may claim work for the next
        // connection. Before the first connection the application does not
        // exist yet: its work is all still to do.
        if !allowed || shutdown || !self.app.as_mut().is_none_or(A::wants_reconnect) {
            return Next::Stop;
        }
        self.reconnects += 1;
        Next::Reconnect {
            after: self.policy.filter(|_| counted).map(|r| r.delay),
        }
    }
}

/// The caller's application, watched on its way for the events that say
/// how the connection ended; everything is passed through as is.
#[derive(Debug)]
pub struct Watched<A> {
    app: A,
    /// The code of the server's GOAWAY, if it sent one.
    goaway: Option<Reason>,
    /// The error the connection ended in, as the core told it.
    error: Option<ConnectionError>,
    /// A final response arrived on this connection, or the application
    /// ended it at once ([`CloseCause::Aborted`]): HTTP/1.1 can give up a
    /// request on the wire (`--timeout`) only by closing its connection, and
    /// that request is settled as much as an answered one. Counted as a
    /// loss, the end stopped a slot without a reconnect policy, and every
    /// request after the first that timed out was lost with it, where over
    /// HTTP/2 the same timeout costs that one request.
    progress: bool,
    /// The server's connection came up (its first SETTINGS, or at once
    /// over HTTP/1.1).
    connected: bool,
    /// The server closed the transport.
    peer_closed: bool,
}

impl<A> Watched<A> {
    fn new(app: A) -> Self {
        Watched {
            app,
            goaway: None,
            error: None,
            progress: false,
            connected: false,
            peer_closed: false,
        }
    }

    /// How the connection ended: `Ok(progress)` for a planned end (our
    /// GOAWAY or abort, or the server's GOAWAY without error, or an
    /// HTTP/1.1 response that closes the connection), with whether any
    /// response arrived or the application settled a request by aborting.
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
                    | ConnectionError::KeepaliveTimeout
                    | ConnectionError::DrainExpired),
                ),
                _,
            ) => Err(ClientError::Closed(e.clone())),
            (_, Some(reason)) if reason != Reason::NO_ERROR => {
                Err(ClientError::WentAway { reason })
            }
            (Some(_), goaway) => Err(ClientError::PeerClosed {
                after_goaway: goaway.is_some(),
            }),
            // It closed before saying a word of HTTP/2, its requests never
            // sent: nothing else would say why the run got nowhere.
            (None, _) if self.peer_closed && !self.connected => {
                Err(ClientError::ClosedBeforeSettings)
            }
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
            Event::Connected => self.connected = true,
            Event::Closed { error, cause } => {
                self.error.clone_from(error);
                self.peer_closed = *cause == CloseCause::PeerClosed;
                if error.is_none() && matches!(cause, CloseCause::Aborted { .. }) {
                    self.progress = true;
                }
            }
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

    fn wants_reconnect(&mut self) -> bool {
        self.app.wants_reconnect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ResponseHead, StreamId};

    /// An application that only takes events.
    struct Quiet;

    impl Application for Quiet {
        fn on_event(&mut self, _: Instant, _: Event, _: &mut Connection) {}
    }

    /// An application with requests still to send.
    struct Busy;

    impl Application for Busy {
        fn on_event(&mut self, _: Instant, _: Event, _: &mut Connection) {}

        fn wants_reconnect(&mut self) -> bool {
            true
        }
    }

    /// RFC 9113 §3.4: a server's connection preface is its SETTINGS. One
    /// that closes before sending it never spoke HTTP/2 (a TLS port that
    /// dropped our cleartext): that is a connect failure with a name, where
    /// it ended as quietly as a finished run. After the SETTINGS, a close
    /// with nothing open is an orderly end.
    #[test]
    fn a_close_before_the_servers_settings_is_named() {
        let now = Instant::now();
        let mut conn = Connection::client(Config::default(), now).unwrap();
        let closed = || Event::Closed {
            error: None,
            cause: CloseCause::PeerClosed,
        };
        let mut watched = Watched::new(Quiet);
        watched.on_event(now, closed(), &mut conn);
        let error = watched.end(Ok(Ending::PeerClosed)).unwrap_err();
        assert!(
            matches!(error, ClientError::ClosedBeforeSettings),
            "{error:?}"
        );
        assert!(error.is_connect_failure());
        assert!(error.to_string().contains("before its SETTINGS"), "{error}");

        let mut watched = Watched::new(Quiet);
        watched.on_event(now, Event::Connected, &mut conn);
        watched.on_event(now, closed(), &mut conn);
        assert!(matches!(watched.end(Ok(Ending::PeerClosed)), Ok(false)));
    }

    /// An HTTP/1.1 request on the wire is given up (`--timeout`) only by
    /// closing its connection (RFC 9112 §9.6 has no other way): that end is
    /// the application's, with the request settled, so a slot without a
    /// reconnect policy goes on with a new connection, as it does after a
    /// response, where it stopped and lost every request after it.
    #[test]
    fn an_http1_request_given_up_is_a_planned_end() {
        let now = Instant::now();
        let mut conn = Connection::client(Config::default(), now).unwrap();
        let aborted = || Event::Closed {
            error: None,
            cause: CloseCause::Aborted {
                reason: Reason::CANCEL,
            },
        };
        let mut watched = Watched::new(Quiet);
        watched.on_event(now, Event::Connected, &mut conn);
        watched.on_event(now, aborted(), &mut conn);
        assert!(matches!(watched.end(Ok(Ending::Finished)), Ok(true)));
        let mut slot = Slot::new(None);
        let mut watched = Watched::new(Busy);
        watched.on_event(now, aborted(), &mut conn);
        assert_eq!(
            slot.ran(watched, Ok(Ending::Finished), false),
            Next::Reconnect { after: None }
        );
        // The same connection ended quietly with nothing answered is a
        // loss: the slot stops.
        let mut watched = Watched::new(Busy);
        watched.on_event(now, Event::Connected, &mut conn);
        assert_eq!(slot.ran(watched, Ok(Ending::Finished), false), Next::Stop);
    }

    /// `--reconnect-max` counts losses in a row: a connection that got a
    /// response begins a new run, even when it was lost at the end (a
    /// server that answers a while and then drops each connection). With
    /// one replacement allowed, the slot stopped at the second such loss.
    #[test]
    fn a_lost_connection_that_answered_begins_a_new_run_of_losses() {
        let now = Instant::now();
        let mut conn = Connection::client(Config::default(), now).unwrap();
        let policy = Reconnect {
            max_attempts: 1,
            delay: Duration::from_millis(100),
        };
        let mut slot = Slot::new(Some(policy));
        let reset = || Err(io::Error::from(io::ErrorKind::ConnectionReset));
        let answered = |conn: &mut Connection| {
            let mut watched = Watched::new(Busy);
            let response = Event::Response {
                stream: StreamId::new(1),
                head: ResponseHead::new(200),
                end_stream: true,
            };
            watched.on_event(now, response, conn);
            watched
        };
        let delayed = Next::Reconnect {
            after: Some(policy.delay),
        };
        for _ in 0..3 {
            assert_eq!(slot.ran(answered(&mut conn), reset(), false), delayed);
        }
        // Lost with nothing answered: the second loss in a row is one too
        // many.
        let silent = Watched::new(Busy);
        assert_eq!(slot.ran(silent, reset(), false), Next::Stop);
    }

    #[test]
    fn a_dial_reports_the_last_refusal_or_else_a_timeout() {
        let target: HostPort = "localhost:80".parse().unwrap();
        let addrs: Vec<SocketAddr> =
            vec!["[::1]:80".parse().unwrap(), "127.0.0.1:80".parse().unwrap()];
        let mut dial = Dial::new(&addrs, &target);
        let mut tried = Vec::new();
        while let Some(addr) = dial.next_addr() {
            tried.push(addr);
            dial.refused(addr, io::Error::from(io::ErrorKind::ConnectionRefused));
        }
        assert_eq!(tried, addrs);
        match dial.exhausted() {
            ClientError::Connect { addr, .. } => assert_eq!(addr, addrs[1]),
            other => panic!("expected the last refusal, got {other:?}"),
        }
        let mut none = Dial::new(&[], &target);
        assert!(matches!(
            none.exhausted(),
            ClientError::ConnectTimeout { .. }
        ));
    }

    /// A timeout names the phase it cut short: the TCP connect, or the TLS
    /// handshake once the connection was up (a server that read our
    /// ClientHello and said nothing, RFC 8446 §4.1.2).
    #[test]
    fn a_timeout_after_the_connect_is_the_handshakes() {
        let target: HostPort = "localhost:443".parse().unwrap();
        let addrs: Vec<SocketAddr> = vec!["127.0.0.1:443".parse().unwrap()];
        let mut dial = Dial::new(&addrs, &target);
        let after = Duration::from_secs(10);
        let connecting = dial.timed_out(after);
        assert!(matches!(connecting, ClientError::ConnectTimeout { .. }));
        assert_eq!(
            connecting.to_string(),
            "connecting to localhost:443 timed out"
        );
        let addr = dial.next_addr().unwrap();
        dial.connected(addr);
        let handshaking = dial.timed_out(after);
        assert_eq!(
            handshaking.to_string(),
            "TLS handshake with 127.0.0.1:443 got no answer within 10s"
        );
        assert!(handshaking.is_connect_failure());
    }

    /// RFC 9113 §3.2: HTTP/2 over TLS is only what ALPN selected as `h2`;
    /// a server that selected nothing takes HTTP/1.1 at most (RFC 7301 §3.2).
    #[test]
    fn no_alpn_is_http1_or_nothing() {
        use ClientProtocol::*;
        assert_eq!(Http2.after_handshake(None), None);
        assert_eq!(Http1.after_handshake(None), Some(Protocol::Http1));
        assert_eq!(Negotiate.after_handshake(None), Some(Protocol::Http1));
        for protocol in [Http2, Http1, Negotiate] {
            assert_eq!(
                protocol.after_handshake(Some(ALPN_H2)),
                Some(Protocol::Http2)
            );
            assert_eq!(
                protocol.after_handshake(Some(ALPN_HTTP1)),
                Some(Protocol::Http1)
            );
        }
    }

    /// RFC 9113 §3.2: the connection fails at the handshake's end, before a
    /// preface goes out, and its info is not marked HTTP/2 over TLS.
    #[cfg(feature = "tls")]
    #[test]
    fn a_handshake_without_alpn_fails_a_client_that_wants_h2() {
        let peer: SocketAddr = "127.0.0.1:443".parse().unwrap();
        let tls = super::super::info::TlsInfo {
            alpn: None,
            server_name: None,
            version: None,
            cipher_suite: None,
            key_exchange: None,
            peer_certificates: Vec::new(),
        };
        let protocol = ClientProtocol::Http2;
        let mut info = protocol.connection_info(peer, peer, 0);
        let error = protocol.handshake_done(&mut info, tls.clone()).unwrap_err();
        assert!(matches!(error, ClientError::NoApplicationProtocol { .. }));
        assert!(error.to_string().contains("chose no application protocol"));
        assert!(info.tls.is_none());
        let mut info = ClientProtocol::Http1.connection_info(peer, peer, 0);
        ClientProtocol::Http1
            .handshake_done(&mut info, tls)
            .unwrap();
        assert_eq!(info.protocol, Some(Protocol::Http1));
    }

    /// RFC 7301 §3.2: a server that takes none of the protocols offered
    /// answers with the alert no_application_protocol; the message names
    /// what was offered.
    #[cfg(feature = "tls")]
    #[test]
    fn the_no_application_protocol_alert_names_the_offer() {
        let alert = rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol);
        let peer: SocketAddr = "127.0.0.1:443".parse().unwrap();
        let error = ClientProtocol::Http2.handshake_failed(peer, io::Error::other(alert.clone()));
        assert_eq!(error.tls_error(), Some(&alert));
        assert_eq!(
            error.to_string(),
            "TLS handshake with 127.0.0.1:443 failed: the server takes none of the protocols \
             offered (h2): it sent the alert NoApplicationProtocol (RFC 7301 §3.2)"
        );
        let error = ClientProtocol::Negotiate.handshake_failed(peer, io::Error::other(alert));
        assert!(error.to_string().contains("(h2, http/1.1)"), "{error}");
    }
}
