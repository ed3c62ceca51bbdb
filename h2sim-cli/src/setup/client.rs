//! A client run's parts whatever the runtime: its plan, configuration and
//! TLS, the servers it connects to, and the report merged from what became
//! of every connection.

use std::sync::Arc;
use std::time::{Duration, Instant};

use h2sim_proto::host::{ClientError, ClientOutcome, ClientProtocol, ConnectionInfo};
use h2sim_proto::{ConnectionError, Http1Error, Violation};

use super::config::config_with;
use super::token::Renewal;
use crate::client::app::{ClientApp, Plan};
use crate::client::correlate::Correlations;
use crate::client::listener::Inbox;
use crate::lasting::for_the_run;
use crate::options::client::ClientArgs;
use crate::options::tls::client_tls;
use crate::options::{UsageError, unreachable};
use crate::report::{Report, Tls};
use crate::signals::Interrupt;
use crate::trace::{self, Trace, errln};

/// One server a client run connects to, and how many connections it gets.
pub struct Target {
    /// `scheme://authority`, as the adapters take it.
    pub url: String,
    /// Put in the requests to this server.
    pub authority: bytes::Bytes,
    pub connections: usize,
}

/// What a client run needs whatever the runtime.
pub struct ClientParts {
    pub plan: Arc<Plan>,
    pub config: h2sim_proto::Config,
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub targets: Vec<Target>,
    pub started: Instant,
    /// Requests the run was asked for, when it has a count.
    pub expected: Option<u64>,
    /// `--listen`: what the notification server saw.
    pub inbox: Option<Arc<Inbox>>,
    /// `--token-url`: kept for its drop, which ends the renewals.
    pub _renewal: Option<Renewal>,
    /// Inside `h2sim bench`, which says itself what a Ctrl-C cut short.
    pub bench: bool,
    /// `--token-url`'s URL when a Ctrl-C came while the first token was
    /// awaited: the run never started.
    pub token_interrupted: Option<String>,
}

/// `bench`: the client runs inside `h2sim bench`, which prints its own
/// table and watches Ctrl-C for all its runs (no progress bar, no
/// per-connection lines, no signal handling of the run's own).
/// `interrupt` is the Ctrl-C, which the wait for a `--token-url` token
/// watches.
pub fn client_parts(
    args: &ClientArgs,
    bench: bool,
    interrupt: &Interrupt,
) -> Result<ClientParts, UsageError> {
    if args.json.as_deref().is_some_and(super::output::is_stdout) {
        trace::keep_stdout_for_json();
    }
    let mut config = config_with(&args.settings, args.connection_window)?;
    config.trace_frames = args.verbose && !args.no_trace;
    config.keepalive = args.keepalive;
    if let Some(timeout) = args.connect_timeout {
        config.settings_timeout = timeout;
    }
    let step = &args.steps[0];
    let secure = step.scheme == "https";
    if args.http1 {
        config.http1.max_pipeline = args.parallel;
        config.http1.secure = secure;
    }
    let tls = if secure {
        Some(client_tls(&args.tls)?)
    } else {
        None
    };
    // The token comes first: the run's clock (its `finished in`, a paced
    // run's send times) starts once it can send, not while the token
    // endpoint takes its time.
    let mut token_interrupted = None;
    let renewal = match &args.token {
        Some(spec) => {
            let tls = if spec.scheme == "https" {
                Some(client_tls(&args.tls)?)
            } else {
                None
            };
            let renewal = super::token::start(spec.clone(), tls, args.http1, interrupt)
                .map_err(|e| unreachable(format!("--token-url {}: {e}", spec.url())))?;
            if renewal.is_none() {
                token_interrupted = Some(spec.url());
            }
            renewal
        }
        None => None,
    };
    let started = Instant::now();
    let targets = targets(args);
    let connections: usize = targets.iter().map(|t| t.connections).sum();
    let mut plan = Plan::new(args.steps.clone(), args.count, args.parallel);
    plan.set_symbols(args.symbols.clone());
    plan.wrap = args.wrap;
    plan.stop_at = args
        .duration
        .map(|d| started + args.warmup.unwrap_or_default() + d);
    plan.warmup_until = args.warmup.map(|w| started + w);
    plan.interval = args
        .tps
        .map(|tps| Duration::from_secs_f64(connections.max(1) as f64 / tps));
    if let Some(tps) = args.tps {
        plan.paced_from = Some(started);
        if args.duration.is_none() {
            plan.schedule_end = args
                .count
                .map(|count| started + Duration::from_secs_f64(count as f64 / tps));
        }
        plan.stagger = Duration::from_secs_f64(1.0 / tps);
        plan.paced_connections = connections.max(1) as u64;
        plan.max_slots = plan.slots.max(crate::client::app::MAX_GROWN_SLOTS);
    }
    plan.retry = args.retry;
    plan.timeout = args.timeout;
    plan.slow = args.dump_slow;
    plan.requests_per_connection = args.requests_per_connection;
    plan.trace = (!args.quiet).then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>);
    plan.log = (!bench).then(|| Arc::new(trace::Stderr) as Arc<dyn Trace>);
    plan.frames = config
        .trace_frames
        .then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>);
    let inbox = args.listen.as_ref().map(|_| {
        let correlations = Arc::new(Correlations::new(started));
        plan.correlations = Some(correlations.clone());
        Arc::new(Inbox::new(correlations))
    });
    plan.bearer = renewal.as_ref().map(|r| r.bearer.clone());
    Ok(ClientParts {
        plan: Arc::new(plan),
        config,
        tls,
        targets,
        started,
        expected: args.count.map(|c| c * args.steps.len() as u64),
        inbox,
        _renewal: renewal,
        bench,
        token_interrupted,
    })
}

/// How the client's adapters replace connections: after losses under `-r`
/// or `--reconnect-max N` (3 by default), and after each
/// `--requests-per-connection` turn.
fn reconnect_policy(args: &ClientArgs) -> Option<h2sim_proto::host::Reconnect> {
    let wanted =
        args.retry || args.reconnect_max.is_some() || args.requests_per_connection.is_some();
    wanted.then(|| h2sim_proto::host::Reconnect {
        max_attempts: args.reconnect_max.unwrap_or(3),
        delay: Duration::from_millis(100),
    })
}

impl ClientParts {
    /// Makes a Ctrl-C stop the run from now on (no new requests, those in
    /// flight finish, `shutdown` then closes the connections), saying so
    /// unless inside `h2sim bench`, which says it itself. False when a
    /// Ctrl-C came already (during the token wait, or just after): the
    /// plan is then stopped, and the run is not to connect at all, so
    /// that its report tells of nothing done.
    pub fn watch_run(
        &self,
        interrupt: &Interrupt,
        shutdown: impl FnOnce() + Send + 'static,
    ) -> bool {
        let (plan, say) = (Arc::clone(&self.plan), !self.bench);
        let watched = interrupt.watch(move || {
            if say {
                errln!(
                    "{}",
                    crate::signals::stopping(
                        "h2sim client",
                        "no new requests, waiting for those in flight"
                    )
                );
            }
            plan.stop(Instant::now());
            shutdown();
        });
        if !watched {
            self.plan.stop(Instant::now());
        }
        watched
    }

    /// The adapter's client options for this run, with `runtime` (the
    /// adapter's own part) added: written once for both runtimes.
    pub fn options<R: Default>(
        &self,
        args: &ClientArgs,
        runtime: R,
    ) -> h2sim_proto::host::ClientOptions<R> {
        let defaults = h2sim_proto::host::ClientOptions::default();
        h2sim_proto::host::ClientOptions {
            connect_timeout: args.connect_timeout.unwrap_or(defaults.connect_timeout),
            protocol: if args.http1 {
                h2sim_proto::host::ClientProtocol::Http1
            } else {
                h2sim_proto::host::ClientProtocol::Http2
            },
            config: self.config.clone(),
            tls: self.tls.clone(),
            reconnect: reconnect_policy(args),
            runtime,
            ..defaults
        }
    }
}

/// The client application of a slot's first connection, `info`: its
/// set-up time, and what it agreed on for the report.
pub fn client_app(plan: Arc<Plan>, info: &ConnectionInfo, authority: bytes::Bytes) -> ClientApp {
    ClientApp::new(plan, info.connect_time, authority).with_protocol(
        protocol_name(info.protocol, info.tls.is_some()),
        info.tls.as_ref().map(Tls::from_info),
    )
}

/// The report's `Application protocol:` name, as h2load prints it.
fn protocol_name(protocol: Option<h2sim_proto::Protocol>, tls: bool) -> &'static str {
    match (protocol, tls) {
        (Some(h2sim_proto::Protocol::Http1), _) => "http/1.1",
        (_, true) => "h2",
        (_, false) => "h2c",
    }
}

/// The servers of a run: the steps' own, then `--server`s, each with `-S`
/// connections, or `--connections` dealt out over them in turn.
fn targets(args: &ClientArgs) -> Vec<Target> {
    let step = &args.steps[0];
    let text = |b: &bytes::Bytes| String::from_utf8_lossy(b).into_owned();
    let mut servers = vec![(text(&step.scheme), text(&step.authority))];
    for server in &args.servers {
        if !servers.contains(server) {
            servers.push(server.clone());
        }
    }
    let n = servers.len();
    servers
        .into_iter()
        .enumerate()
        .map(|(i, (scheme, authority))| Target {
            url: format!("{scheme}://{authority}"),
            connections: match args.total_connections {
                Some(total) => total / n + usize::from(i < total % n),
                None => args.connections.max(1),
            },
            authority: for_the_run(authority.as_bytes()),
        })
        .filter(|t| t.connections > 0)
        .collect()
}

/// What became of one connection slot.
pub struct SlotOutcome {
    /// Its application; `None` if it never connected.
    pub app: Option<ClientApp>,
    /// How its last connection failed, if it did, as the report prints it.
    pub error: Option<String>,
    /// Its last connection never came up: the server could not be reached
    /// at the start, or again after a loss while the run still had work
    /// for it (a `--duration` run then ends early).
    pub unreachable: bool,
}

/// What became of one target's connection slots, whatever the runtime.
pub struct TargetOutcome {
    pub url: String,
    pub connections: usize,
    /// The slots, or why the target as a whole could not be reached.
    pub slots: Result<Vec<SlotOutcome>, String>,
}

impl TargetOutcome {
    /// A runtime's outcome for the target, its errors told as the report
    /// prints them.
    pub fn new(
        url: String,
        connections: usize,
        outcomes: Result<Vec<ClientOutcome<ClientApp>>, ClientError>,
    ) -> Self {
        let slots = outcomes
            .map(|o| {
                o.into_iter()
                    .map(|o| {
                        let refused = o.app.as_ref().is_some_and(ClientApp::refused_at_handshake);
                        SlotOutcome {
                            unreachable: o.app.is_none()
                                || refused
                                || o.error
                                    .as_ref()
                                    .is_some_and(ClientError::is_connect_failure),
                            error: o.error.as_ref().map(|e| match refused_by(e) {
                                Some(alert) if refused => refusal(alert),
                                _ => describe(e),
                            }),
                            app: o.app,
                        }
                    })
                    .collect()
            })
            .map_err(|e| describe(&e));
        TargetOutcome {
            url,
            connections,
            slots,
        }
    }
}

/// A connection's error, with what to do about it where the command line
/// can help: a server that answered HTTP/2 with prior knowledge in
/// HTTP/1.1, or over TLS took no `h2`, takes HTTP/1.1 (`-1`); one that
/// answered `-1`'s HTTP/1.1 with HTTP/2's SETTINGS takes HTTP/2 (no
/// `-1`); a certificate that did not verify is trusted by `-V`; a
/// connection that did not come up in time may be given longer.
fn describe(error: &ClientError) -> String {
    let hint = match error {
        ClientError::Closed(ConnectionError::Local {
            violation: Violation::Http1Answer { .. },
            ..
        })
        | ClientError::NoApplicationProtocol { .. } => "; -1 speaks HTTP/1.1 to it",
        ClientError::Closed(ConnectionError::Local {
            violation: Violation::Http1(Http1Error::Http2Answer),
            ..
        }) => "; without -1 the client speaks HTTP/2 to it",
        ClientError::ConnectTimeout { .. }
        | ClientError::HandshakeTimeout { .. }
        | ClientError::Closed(ConnectionError::Local {
            violation: Violation::SettingsTimeout,
            ..
        }) => "; --connect-timeout waits longer",
        ClientError::Handshake {
            offered: ClientProtocol::Http2,
            ..
        } if error.tls_error()
            == Some(&rustls::Error::AlertReceived(
                rustls::AlertDescription::NoApplicationProtocol,
            )) =>
        {
            "; -1 offers http/1.1"
        }
        _ => match error.tls_error() {
            Some(rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)) => {
                "; -V verify,trust_file=PEM trusts the CA in PEM, -V none does not verify"
            }
            Some(rustls::Error::InvalidCertificate(_)) => "; -V none does not verify",
            _ => "",
        },
    };
    format!("{error}{hint}")
}

/// The alert a connection ended in, if the server sent one.
fn refused_by(error: &ClientError) -> Option<rustls::AlertDescription> {
    match error {
        ClientError::Transport(e) => match e.get_ref()?.downcast_ref::<rustls::Error>()? {
            rustls::Error::AlertReceived(alert) => Some(*alert),
            _ => None,
        },
        _ => None,
    }
}

/// A connection the server refused with `alert` once the TLS handshake
/// was over on our side, before it said anything else: over TLS 1.3 the
/// server checks the client's certificate after the client has finished
/// (RFC 8446 §4.4.2.4), so a refused or missing one is told at the first
/// read. The handshake failed, as a TLS 1.2 server would have said in it.
fn refusal(alert: rustls::AlertDescription) -> String {
    use rustls::AlertDescription as A;
    let hint = match alert {
        // RFC 8446 §6.2: the server requires one and got none.
        A::CertificateRequired => "; -k KEY -c CERT present one",
        A::BadCertificate
        | A::UnsupportedCertificate
        | A::CertificateRevoked
        | A::CertificateExpired
        | A::CertificateUnknown
        | A::UnknownCA
        | A::AccessDenied => "; it did not take the client certificate of -c",
        _ => "",
    };
    format!(
        "TLS handshake failed: the server sent the alert {alert:?} once it was over on our \
         side (TLS 1.3 refuses a client certificate only then){hint}"
    )
}

/// The merged report once every connection ended; connection-level
/// errors are printed, and a slot whose last connection never came up
/// counts as unreachable (a failed run).
pub fn finish_client(
    args: &ClientArgs,
    parts: &ClientParts,
    outcomes: Vec<TargetOutcome>,
) -> Report {
    let mut report = Report::default();
    for target in outcomes {
        match target.slots {
            Ok(slots) => {
                // One line per distinct error, with how many connections
                // ended in it: 148 connections out of file descriptors
                // printed 148 identical lines.
                let mut errors: Vec<(String, usize)> = Vec::new();
                for slot in slots {
                    if let Some(app) = slot.app {
                        report.merge(&app.into_report());
                    }
                    report.unreachable += u64::from(slot.unreachable);
                    if let Some(e) = slot.error {
                        match errors.iter_mut().find(|(seen, _)| *seen == e) {
                            Some((_, n)) => *n += 1,
                            None => errors.push((e, 1)),
                        }
                    }
                }
                for (e, n) in errors {
                    let times = if n > 1 {
                        format!(" ({n} connections)")
                    } else {
                        String::new()
                    };
                    errln!("h2sim client: {}: {e}{times}", target.url);
                }
            }
            Err(e) => {
                report.unreachable += target.connections as u64;
                errln!("h2sim client: {}: {e}", target.url);
            }
        }
    }
    report.add_latencies(&parts.plan.latencies.take());
    let interrupted = parts.plan.is_stopping() && !parts.bench;
    report.interrupted = interrupted;
    // A `--duration` run (with a `-C` too, when time ran out first) and
    // one cut short asked for no count it must reach.
    let asked = parts
        .expected
        .filter(|_| args.duration.is_none() && !interrupted)
        .map(|e| e.saturating_sub(report.warmup));
    report.settle(asked);
    report.notifications = parts.inbox.as_ref().map(|i| i.notifications());
    report.elapsed = run_time(args, parts, &report);
    if interrupted {
        let by = crate::signals::first_signal();
        match &parts.token_interrupted {
            Some(url) => errln!(
                "h2sim client: interrupted ({by}) while waiting for the token from {url}: no request was sent"
            ),
            None => errln!("h2sim client: interrupted ({by}): the report covers what was done"),
        }
    }
    report
}

/// How long the run took, for `finished in` and req/s: to the last
/// response, not to when the peers closed. A `--duration` run took its
/// duration, as h2load's `-D` divides by it: a paced run's last response
/// came up to an interval before the end (`-T 0.5 --duration 3s` said 2.00s
/// and 1.00 req/s), unless its `-C` ran out first or Ctrl-C cut it short.
fn run_time(args: &ClientArgs, parts: &ClientParts, report: &Report) -> Duration {
    let from = parts.started + args.warmup.unwrap_or_default();
    let to_last = report
        .last_done
        .map_or(Duration::ZERO, |t| t.saturating_duration_since(from));
    let count_reached = parts
        .expected
        .is_some_and(|e| report.total >= e.saturating_sub(report.warmup));
    match args.duration {
        // No longer than the run took: one that could reach no server
        // ended at once, and said `finished in 2.00s` of `--duration 2s`.
        Some(duration) if !report.interrupted && !count_reached => duration.min(from.elapsed()),
        _ => to_last,
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::net::SocketAddr;

    use super::*;

    fn peer() -> SocketAddr {
        "127.0.0.1:443".parse().unwrap()
    }

    fn failed(offered: ClientProtocol, error: rustls::Error) -> ClientError {
        offered.handshake_failed(peer(), io::Error::other(error))
    }

    /// RFC 9113 §3.2 and RFC 7301 §3.2: a TLS server that takes no `h2`
    /// (it selects nothing, or refuses the offer with its alert) is told
    /// apart, with `-1` as the way to HTTP/1.1; only a client that offered
    /// `h2` alone is sent there.
    #[test]
    fn a_server_without_h2_points_to_minus_1() {
        let none = ClientError::NoApplicationProtocol { addr: peer() };
        assert!(describe(&none).ends_with("; -1 speaks HTTP/1.1 to it"));
        let alert = rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol);
        let refused = describe(&failed(ClientProtocol::Http2, alert.clone()));
        assert!(refused.contains("offered (h2)"), "{refused}");
        assert!(refused.ends_with("; -1 offers http/1.1"), "{refused}");
        let refused = describe(&failed(ClientProtocol::Http1, alert));
        assert!(!refused.contains("; -1"), "{refused}");
    }

    /// RFC 5280 §6.1: a chain that does not lead to a trust anchor is the
    /// `-V` trust settings' business; other certificate failures can only
    /// be let through.
    #[test]
    fn a_certificate_that_does_not_verify_points_to_minus_v() {
        use rustls::CertificateError as C;
        let unknown = rustls::Error::InvalidCertificate(C::UnknownIssuer);
        let text = describe(&failed(ClientProtocol::Http2, unknown));
        assert_eq!(
            text,
            "TLS handshake with 127.0.0.1:443 failed: the server's certificate is not signed \
             by a trusted CA (UnknownIssuer); -V verify,trust_file=PEM trusts the CA in PEM, \
             -V none does not verify"
        );
        let expired = rustls::Error::InvalidCertificate(C::Expired);
        let text = describe(&failed(ClientProtocol::Http2, expired));
        assert!(
            text.ends_with("has expired (Expired); -V none does not verify"),
            "{text}"
        );
    }
}
