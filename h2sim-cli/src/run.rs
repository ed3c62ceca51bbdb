//! Runs what the command line asked for on a runtime: builds the server's
//! listeners or the client's connections, starts the Sans-IO applications
//! on them, and prints the results.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use h2sim_proto::{Config, LocalSettings};
use h2sim_tokio::{ClientOptions, ClientProtocol, ListenerSpec, Server, ServerOptions, Shutdown};

use crate::client::app::{ClientApp, Plan};
use crate::options::client::ClientArgs;
use crate::options::server::ServerArgs;
use crate::options::tls::{client_tls, server_tls_files};
use crate::options::{Runtime, UsageError, apply_setting, usage};
use crate::report::Report;
use crate::server::app::{ServerApp, Shared, Totals};
use crate::trace::{self, Trace};

/// A parsed command.
pub enum Command {
    Server(ServerArgs),
    /// Boxed: the client's options are the largest by far.
    Client(Box<ClientArgs>),
    Bench(crate::bench::BenchArgs),
}

/// Runs a command; the exit code says whether it went well.
pub fn run(command: Command) -> ExitCode {
    let (runtime, threads) = match &command {
        Command::Server(a) => (a.runtime, a.threads),
        Command::Client(a) => (a.runtime, a.threads),
        Command::Bench(a) => (Runtime::Tokio, a.threads),
    };
    if runtime == Runtime::Glommio {
        return match crate::run_glommio::run(command, threads) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("h2sim: {e}");
                ExitCode::from(2)
            }
        };
    }
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(n) = threads {
        builder.worker_threads(n);
    }
    let rt = match builder.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("h2sim: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = rt.block_on(async move {
        match command {
            Command::Server(args) => serve(args).await,
            Command::Client(args) => drive(*args).await,
            Command::Bench(args) => crate::bench::run(args).await,
        }
    });
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("h2sim: {e}");
            ExitCode::from(2)
        }
    }
}

/// The core's configuration with `-H` settings applied.
pub fn config_with(settings: &[String]) -> Result<Config, UsageError> {
    let mut config = Config::default();
    let mut local = LocalSettings::from_config(&config);
    for spec in settings {
        apply_setting(&mut local, spec)?;
    }
    config.set_local_settings(local);
    Ok(config)
}

/// What a server needs whatever the runtime: the core's configuration,
/// the listeners (address and TLS), and the rules' shared state.
pub struct ServerParts {
    pub config: h2sim_proto::Config,
    pub listeners: Vec<(String, Option<Arc<rustls::ServerConfig>>)>,
    pub shared: Arc<Shared>,
}

pub fn server_parts(args: &ServerArgs) -> Result<ServerParts, UsageError> {
    let mut config = config_with(&args.settings)?;
    config.trace_frames = args.verbose && !args.no_trace;
    let mut listeners = Vec::new();
    for listen in &args.listen {
        let tls = match &listen.tls {
            Some(files) => Some(server_tls_files(files)?),
            None => None,
        };
        listeners.push((listen.addr.to_string(), tls));
    }
    let mut shared = Shared::new(
        args.rules.clone(),
        (!args.quiet).then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>),
        (!args.quiet).then(|| Arc::new(trace::Stderr) as Arc<dyn Trace>),
    );
    shared.frames = config
        .trace_frames
        .then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>);
    let shared = Arc::new(shared);
    Ok(ServerParts {
        config,
        listeners,
        shared,
    })
}

pub fn print_listening(addrs: &[(std::net::SocketAddr, bool)]) {
    for (addr, secure) in addrs {
        eprintln!(
            "h2sim server listening on {}://{addr}",
            if *secure { "https" } else { "http" }
        );
    }
}

/// The server's closing summary, once every connection ended.
pub fn finish_server(args: &ServerArgs, shared: &Shared) -> ExitCode {
    let totals = shared.totals.lock().map(|t| t.clone()).unwrap_or_default();
    eprintln!("{}", server_summary(args, &totals));
    ExitCode::SUCCESS
}

/// `h2sim server` on tokio: serves until Ctrl-C or SIGTERM.
async fn serve(args: ServerArgs) -> Result<ExitCode, UsageError> {
    let parts = server_parts(&args)?;
    let mut specs = Vec::new();
    for (addr, tls) in parts.listeners {
        let spec = match tls {
            Some(tls) => ListenerSpec::tls(&addr, tls),
            None => ListenerSpec::plain(&addr),
        };
        specs.push(spec.map_err(|e| usage(format!("-S {addr}: {e}")))?);
    }
    let mut options = ServerOptions {
        config: parts.config,
        plain_protocol: args.http1.then_some(h2sim_proto::Protocol::Http1),
        // Even with -q (which hides per-request output): a rejected
        // handshake is an error nothing else reports, as h2svr printed it.
        on_handshake_error: Some(h2sim_tokio::HandshakeErrorHook::new(|peer, why| {
            eprintln!("{peer} TLS handshake failed: {why}");
        })),
        ..ServerOptions::default()
    };
    options.driver.idle_timeout = args.idle_timeout.or(options.driver.idle_timeout);
    let server = Server::bind(specs, options)
        .await
        .map_err(|e| usage(e.to_string()))?;
    // Watch for signals before saying we listen: a script that stops the
    // server as soon as it sees that line must get a graceful stop.
    stop_on_signals(server.shutdown())
        .map_err(|e| usage(format!("cannot watch for signals: {e}")))?;
    print_listening(&server.local_addrs());
    let shared = parts.shared.clone();
    server
        .run(move |info| {
            ServerApp::new(shared.clone(), info.peer).accepted_before(info.connect_time)
        })
        .await;
    Ok(finish_server(&args, &parts.shared))
}

/// Ctrl-C and SIGTERM (what `kill` and CI send) stop the server
/// gracefully. Both are registered before this returns, so a signal that
/// comes right after it is not lost.
fn stop_on_signals(shutdown: Shutdown) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        tokio::spawn(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            shutdown.trigger();
        });
    }
    #[cfg(not(unix))]
    shutdown.trigger_on_ctrl_c();
    Ok(())
}

fn server_summary(args: &ServerArgs, t: &Totals) -> String {
    let mut out = format!(
        "h2sim server: {} connections, {} requests, {} responses ({} 1xx, {} 2xx, {} 3xx, {} 4xx, {} 5xx), {} pushes, {} resets, {} unmatched",
        t.connections,
        t.requests,
        t.responses,
        t.status_classes[0],
        t.status_classes[1],
        t.status_classes[2],
        t.status_classes[3],
        t.status_classes[4],
        t.pushes,
        t.resets,
        t.not_found
    );
    for (i, rule) in args.rules.iter().enumerate() {
        out.push_str(&format!(
            "\n  rule {}: {} {}{} -> {}: {} hits",
            i + 1,
            rule.method,
            rule.authority
                .as_deref()
                .map(|a| format!("//{a}"))
                .unwrap_or_default(),
            rule.path_prefix.as_deref().unwrap_or("*"),
            rule.reply.status,
            t.rule_hits.get(i).copied().unwrap_or(0)
        ));
    }
    out
}

/// `h2sim client`: runs the scenarios, prints the report, exit 1 if any
/// request failed or was lost.
async fn drive(args: ClientArgs) -> Result<ExitCode, UsageError> {
    let report = run_client(&args, false).await?;
    print_client_report(&args, &report)
}

/// Prints the report (and writes `--json`); the exit code says whether
/// every request succeeded.
pub fn print_client_report(args: &ClientArgs, report: &Report) -> Result<ExitCode, UsageError> {
    print!("{}", report.render());
    if let Some(path) = &args.json {
        write_json(path, report).map_err(usage)?;
    }
    Ok(if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Writes the report as JSON beside `path`, then renames it into place, so
/// an interrupted run never leaves a half-written file.
pub fn write_json(path: &std::path::Path, report: &Report) -> Result<(), String> {
    let json = crate::report::to_json(report);
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(name);
    std::fs::write(&temporary, format!("{json:#}\n"))
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            format!("--json {}: {e}", path.display())
        })
}

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
}

/// `bench`: the client runs inside `h2sim bench`, which prints its own
/// table (no progress bar, no per-connection lines, no signal handling).
pub fn client_parts(args: &ClientArgs, bench: bool) -> Result<ClientParts, UsageError> {
    let mut config = config_with(&args.settings)?;
    config.trace_frames = args.verbose && !args.no_trace;
    config.keepalive = args.keepalive;
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
    let started = Instant::now();
    let targets = targets(args);
    let connections: usize = targets.iter().map(|t| t.connections).sum();
    let mut plan = Plan::new(args.steps.clone(), args.count, args.parallel);
    plan.symbols = args.symbols.clone();
    plan.wrap = args.wrap;
    plan.stop_at = args
        .duration
        .map(|d| started + args.warmup.unwrap_or_default() + d);
    plan.warmup_until = args.warmup.map(|w| started + w);
    plan.interval = args
        .tps
        .map(|tps| Duration::from_secs_f64(connections.max(1) as f64 / tps));
    if plan.interval.is_some() {
        plan.paced_from = Some(started);
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
    Ok(ClientParts {
        plan: Arc::new(plan),
        config,
        tls,
        targets,
        started,
        expected: args.count.map(|c| c * args.steps.len() as u64),
    })
}

/// How the client's adapters replace connections: after losses under `-r`
/// or `--reconnect-max N` (3 by default), and after each
/// `--requests-per-connection` turn.
pub fn reconnect_policy(args: &ClientArgs) -> Option<(u32, Duration)> {
    let wanted =
        args.retry || args.reconnect_max.is_some() || args.requests_per_connection.is_some();
    wanted.then(|| (args.reconnect_max.unwrap_or(3), Duration::from_millis(100)))
}

/// The report's `Application protocol:` name, as h2load prints it.
pub fn protocol_name(protocol: Option<h2sim_proto::Protocol>, tls: bool) -> &'static str {
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
    let mut servers = vec![(step.scheme.clone(), step.authority.clone())];
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
            authority: bytes::Bytes::from(authority),
        })
        .filter(|t| t.connections > 0)
        .collect()
}

/// One connection slot's application (None: it never connected) and how
/// its last connection failed, if it did.
pub type SlotOutcome = (Option<ClientApp>, Option<String>);

/// What became of one target's connection slots, whatever the runtime.
pub struct TargetOutcome {
    pub url: String,
    pub connections: usize,
    /// The slots, or why the target as a whole could not be reached.
    pub slots: Result<Vec<SlotOutcome>, String>,
}

/// The merged report once every connection ended; connection-level
/// errors are printed, and a slot that never connected counts as
/// unreachable (a failed run).
pub fn finish_client(
    args: &ClientArgs,
    parts: &ClientParts,
    outcomes: Vec<TargetOutcome>,
) -> Report {
    let mut report = Report::default();
    for target in outcomes {
        match target.slots {
            Ok(slots) => {
                for (app, error) in slots {
                    match app {
                        Some(app) => report.merge(&app.into_report()),
                        None => report.unreachable += 1,
                    }
                    if let Some(e) = error {
                        eprintln!("h2sim client: {}: {e}", target.url);
                    }
                }
            }
            Err(e) => {
                report.unreachable += target.connections as u64;
                eprintln!("h2sim client: {}: {e}", target.url);
            }
        }
    }
    report.total = parts.expected.map(|e| e.saturating_sub(report.warmup));
    // The clock stops at the last response, not when the peers closed.
    let from = parts.started + args.warmup.unwrap_or_default();
    report.elapsed = report
        .last_done
        .map_or(Duration::ZERO, |t| t.saturating_duration_since(from));
    if parts.plan.stopping.load(Ordering::Relaxed) {
        eprintln!("h2sim client: interrupted (Ctrl-C): the report covers what was done");
    }
    report
}

/// Whether to draw the progress bar: quiet, on a terminal, and not inside
/// the bench (which prints its own table).
pub fn wants_progress(args: &ClientArgs, bench: bool) -> bool {
    !bench && args.quiet && std::io::stderr().is_terminal()
}

/// Ctrl-C (and SIGTERM): the first stops the run gracefully (no new
/// requests, in-flight ones get the drain time to finish, then the report
/// and the JSON); a second ends the process at once. One signal thread for
/// both runtimes, so the behaviour is written once.
pub fn interrupt_on_ctrl_c(plan: Arc<Plan>, stop: impl Fn() + Send + 'static) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        eprintln!("h2sim client: cannot watch for Ctrl-C; it will end the run without a report");
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("h2sim-signals".into())
        .spawn(move || {
            let mut forever = signals.forever();
            if forever.next().is_some() {
                eprintln!(
                    "h2sim client: stopping: no new requests, waiting for those in flight (Ctrl-C again to quit at once)"
                );
                plan.stop();
                stop();
            }
            if forever.next().is_some() {
                std::process::exit(130);
            }
        });
    if spawned.is_err() {
        eprintln!("h2sim client: cannot watch for Ctrl-C; it will end the run without a report");
    }
}

/// Runs a client on tokio to completion and returns the merged report.
/// `bench`: inside `h2sim bench` (see `client_parts`).
pub async fn run_client(args: &ClientArgs, bench: bool) -> Result<Report, UsageError> {
    let parts = client_parts(args, bench)?;
    let options = ClientOptions {
        protocol: if args.http1 {
            ClientProtocol::Http1
        } else {
            ClientProtocol::Http2
        },
        config: parts.config.clone(),
        tls: parts.tls.clone(),
        reconnect: reconnect_policy(args).map(|(max_attempts, delay)| h2sim_tokio::Reconnect {
            max_attempts,
            delay,
        }),
        ..ClientOptions::default()
    };
    if !bench {
        let shutdown = options.shutdown.clone();
        interrupt_on_ctrl_c(parts.plan.clone(), move || shutdown.trigger());
    }
    let progress =
        wants_progress(args, bench).then(|| spawn_progress(parts.plan.clone(), parts.expected));
    let mut runs = tokio::task::JoinSet::new();
    for target in &parts.targets {
        let options = ClientOptions {
            connections: target.connections,
            ..options.clone()
        };
        let (plan, url, authority) = (
            parts.plan.clone(),
            target.url.clone(),
            target.authority.clone(),
        );
        let connections = target.connections;
        runs.spawn(async move {
            let outcomes = h2sim_tokio::connect(&url, options, move |info| {
                ClientApp::new(plan.clone(), info.connect_time, authority.clone())
                    .with_protocol(protocol_name(info.protocol, info.tls.is_some()))
            })
            .await;
            TargetOutcome {
                url,
                connections,
                slots: outcomes
                    .map(|o| {
                        o.into_iter()
                            .map(|o| (o.app, o.error.map(|e| e.to_string())))
                            .collect()
                    })
                    .map_err(|e| e.to_string()),
            }
        });
    }
    let mut outcomes = Vec::new();
    while let Some(joined) = runs.join_next().await {
        if let Ok(outcome) = joined {
            outcomes.push(outcome);
        }
    }
    if let Some(progress) = progress {
        progress.finish();
    }
    Ok(finish_client(args, &parts, outcomes))
}

/// The progress bar (indicatif) with rate and ETA, fed by a thread of its
/// own from the run's completed count, so it works the same under either
/// runtime.
pub struct Progress {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

pub fn spawn_progress(plan: Arc<Plan>, expected: Option<u64>) -> Progress {
    use indicatif::{ProgressBar, ProgressStyle};
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let (bar, template) = match expected {
        Some(total) => (
            ProgressBar::new(total),
            "> req msgs: {pos}/{len} |{bar:20}| {percent}% {per_sec} ETA {eta}",
        ),
        None => (
            ProgressBar::new_spinner(),
            "> req msgs: {pos} {per_sec} {elapsed}",
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("#> "));
    }
    let thread = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            bar.set_position(plan.completed.load(Ordering::Relaxed));
        }
        bar.set_position(plan.completed.load(Ordering::Relaxed));
        bar.finish();
    });
    Progress {
        stop,
        thread: Some(thread),
    }
}

/// `h2sim merge FILE... [--json OUT]`: one report from several JSON reports,
/// printed, and written as JSON when asked (so merged runs merge again).
pub fn merge(files: &[String], json: Option<&std::path::Path>) -> ExitCode {
    if files.is_empty() {
        eprintln!("h2sim: merge needs at least one report file (h2sim client --json FILE)");
        return ExitCode::from(2);
    }
    let mut total: Option<Report> = None;
    for file in files {
        let parsed = std::fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                serde_json::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
            })
            .and_then(|json| {
                crate::report::from_json(&json).ok_or_else(|| "not an h2sim report".to_owned())
            });
        let report = match parsed {
            Ok(report) => report,
            Err(e) => {
                eprintln!("h2sim: {file}: {e}");
                return ExitCode::from(2);
            }
        };
        let expected = report.total;
        match &mut total {
            Some(t) => {
                t.merge(&report);
                t.total = t.total.zip(expected).map(|(a, b)| a + b);
            }
            None => total = Some(report),
        }
    }
    let Some(report) = total else {
        return ExitCode::from(2);
    };
    print!("{}", report.render());
    if let Some(path) = json
        && let Err(e) = write_json(path, &report)
    {
        eprintln!("h2sim: merge {e}");
        return ExitCode::from(2);
    }
    if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
