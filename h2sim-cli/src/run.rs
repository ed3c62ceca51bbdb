//! Runs what the command line asked for on a runtime: builds the server's
//! listeners or the client's connections, starts the Sans-IO applications
//! on them, and prints the results.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use h2sim_proto::{Config, LocalSettings};
use h2sim_tokio::{ClientOptions, ClientProtocol, ListenerSpec, Server, ServerOptions, Shutdown};

use crate::client::app::{ClientApp, Plan};
use crate::options::client::ClientOptions as ClientArgs;
use crate::options::server::ServerOptions as ServerArgs;
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
    let shared = Arc::new(Shared {
        rules: args.rules.clone(),
        trace: (!args.quiet).then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>),
        summary: (!args.quiet).then(|| Arc::new(trace::Stderr) as Arc<dyn Trace>),
        totals: std::sync::Mutex::new(Totals {
            rule_hits: vec![0; args.rules.len()],
            ..Totals::default()
        }),
    });
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
        ..ServerOptions::default()
    };
    options.driver.idle_timeout = args.idle_timeout.or(options.driver.idle_timeout);
    let server = Server::bind(specs, options)
        .await
        .map_err(|e| usage(e.to_string()))?;
    print_listening(&server.local_addrs());
    let shutdown = server.shutdown();
    shutdown.trigger_on_ctrl_c();
    terminate_on_sigterm(shutdown.clone());
    let shared = parts.shared.clone();
    server
        .run(move |info| ServerApp::new(shared.clone(), info.peer))
        .await;
    Ok(finish_server(&args, &parts.shared))
}

/// SIGTERM stops the server gracefully too (what `kill` and CI send).
fn terminate_on_sigterm(shutdown: Shutdown) {
    #[cfg(unix)]
    tokio::spawn(async move {
        if let Ok(mut term) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            term.recv().await;
            shutdown.trigger();
        }
    });
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
    let report = run_client(&args, None).await?;
    print_client_report(&args, &report)
}

/// Prints the report (and writes `--json`); the exit code says whether
/// every request succeeded.
pub fn print_client_report(args: &ClientArgs, report: &Report) -> Result<ExitCode, UsageError> {
    print!("{}", report.render());
    if let Some(path) = &args.json {
        let json = crate::report::to_json(report);
        std::fs::write(path, format!("{json:#}\n"))
            .map_err(|e| usage(format!("--json {}: {e}", path.display())))?;
    }
    Ok(if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
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

pub fn client_parts(args: &ClientArgs) -> Result<ClientParts, UsageError> {
    let mut config = config_with(&args.settings)?;
    config.trace_frames = args.verbose && !args.no_trace;
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
    let plan = Arc::new(Plan {
        steps: args.steps.clone(),
        symbols: args.symbols.clone(),
        wrap: args.wrap,
        scenarios: args.count,
        stop_at: args
            .duration
            .map(|d| started + args.warmup.unwrap_or_default() + d),
        warmup_until: args.warmup.map(|w| started + w),
        interval: args
            .tps
            .map(|tps| Duration::from_secs_f64(connections as f64 / tps)),
        slots: args.parallel,
        retry: args.retry,
        timeout: args.timeout,
        slow: args.dump_slow,
        trace: (!args.quiet).then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>),
        next: AtomicU64::new(0),
        completed: AtomicU64::new(0),
        report: std::sync::Mutex::new(Report::default()),
    });
    Ok(ClientParts {
        plan,
        config,
        tls,
        targets,
        started,
        expected: args.count.map(|c| c * args.steps.len() as u64),
    })
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

/// The merged report once every connection ended; connection-level
/// errors are printed.
pub fn finish_client(args: &ClientArgs, parts: &ClientParts, errors: Vec<String>) -> Report {
    let mut report = parts
        .plan
        .report
        .lock()
        .map(|r| r.clone())
        .unwrap_or_default();
    report.total = parts.expected;
    report.elapsed = parts
        .started
        .elapsed()
        .saturating_sub(args.warmup.unwrap_or_default());
    for e in errors {
        eprintln!("h2sim client: {e}");
    }
    report
}

/// Whether to draw the progress bar: quiet, on a terminal, and not inside
/// the bench (which prints its own table).
pub fn wants_progress(args: &ClientArgs, quiet_bar: Option<bool>) -> bool {
    quiet_bar != Some(false) && args.quiet && std::io::stdout().is_terminal()
}

/// Runs a client on tokio to completion and returns the merged report.
/// `quiet_bar` forces the progress bar off (the bench prints its own table).
pub async fn run_client(args: &ClientArgs, quiet_bar: Option<bool>) -> Result<Report, UsageError> {
    let parts = client_parts(args)?;
    let options = ClientOptions {
        protocol: if args.http1 {
            ClientProtocol::Http1
        } else {
            ClientProtocol::Http2
        },
        config: parts.config.clone(),
        tls: parts.tls.clone(),
        reconnect: args.retry.then_some(h2sim_tokio::Reconnect {
            max_attempts: 3,
            delay: Duration::from_millis(100),
        }),
        ..ClientOptions::default()
    };
    let progress =
        wants_progress(args, quiet_bar).then(|| spawn_progress(parts.plan.clone(), parts.expected));
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
        runs.spawn(async move {
            let outcomes = h2sim_tokio::connect(&url, options, move |info| {
                ClientApp::new(plan.clone(), info.connect_time, authority.clone())
            })
            .await;
            (url, outcomes)
        });
    }
    let mut errors = Vec::new();
    while let Some(joined) = runs.join_next().await {
        let Ok((url, outcomes)) = joined else {
            continue;
        };
        match outcomes {
            Ok(outcomes) => errors.extend(
                outcomes
                    .iter()
                    .filter_map(|o| o.error.as_ref().map(|e| format!("{url}: {e}"))),
            ),
            Err(e) => errors.push(format!("{url}: {e}")),
        }
    }
    if let Some(progress) = progress {
        progress.stop();
    }
    Ok(finish_client(args, &parts, errors))
}

/// h2simple's progress bar, redrawn in place on a terminal by a thread of
/// its own, so it works the same under either runtime.
pub struct Progress {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        eprintln!();
    }
}

pub fn spawn_progress(plan: Arc<Plan>, expected: Option<u64>) -> Progress {
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            let done = plan.completed.load(Ordering::Relaxed);
            let line = match expected {
                Some(total) if total > 0 => {
                    let pct = (done * 100 / total).min(100);
                    let filled = (pct / 5) as usize;
                    format!(
                        "> req msgs: {done} |{}{}| {pct}%",
                        "#".repeat(filled),
                        " ".repeat(20 - filled)
                    )
                }
                _ => format!("> req msgs: {done}"),
            };
            eprint!("\r{line}");
        }
    });
    Progress {
        stop,
        thread: Some(thread),
    }
}

/// `h2sim merge FILE...`: one report from several JSON reports.
pub fn merge(files: &[String]) -> ExitCode {
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
    if report.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
