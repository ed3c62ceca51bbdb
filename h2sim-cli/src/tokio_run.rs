//! `--runtime tokio` (the default): the server and the client on tokio's
//! multi-threaded runtime. Everything else is shared with `glommio_run`
//! through `setup`; only starting, connecting and waiting are here.

use std::future::Future;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use h2sim_tokio::{ClientOptions, Server};

use crate::client::listener::ListenerApp;
use crate::options::client::ClientArgs;
use crate::options::server::ServerArgs;
use crate::options::{UsageError, usage};
use crate::progress::{spawn_progress, wants_progress};
use crate::report::Report;
use crate::server::app::ServerApp;
use crate::server::notify::{Launch, Notifier, run_failure};
use crate::setup::client::ClientParts;
use crate::setup::client::{TargetOutcome, client_app, client_parts, finish_client};
use crate::setup::listen::{Linger, listener_args};
use crate::setup::output::print_client_report;
use crate::setup::server::{
    finish_server, notify_options, notify_target_options, print_listening, server_parts,
};
use crate::signals::{Interrupt, interrupt_on_ctrl_c, stop_server_on_ctrl_c};
use crate::trace::errln;

/// Runs `work` on [`runtime`]`(threads)`; the exit code says whether it
/// went well, 2 for a usage error (see `UsageError::exit_status`).
pub fn run(
    threads: Option<usize>,
    work: impl Future<Output = Result<ExitCode, UsageError>>,
) -> ExitCode {
    let rt = match runtime(threads) {
        Ok(rt) => rt,
        Err(e) => {
            errln!("h2sim: cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(work) {
        Ok(code) => code,
        Err(e) => {
            errln!("h2sim: {e}");
            ExitCode::from(e.exit_status())
        }
    }
}

/// A tokio runtime with `threads` workers (one per CPU by default). One
/// worker is the calling thread itself: a work-stealing scheduler has
/// nothing to steal between one thread's tasks, and its bookkeeping cost
/// an HTTP/1.1 server 1-5% of its CPU per request.
pub fn runtime(threads: Option<usize>) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = match threads {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        Some(n) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(n);
            builder
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    builder.enable_all().build()
}

/// Notifications on tokio: one task per callback connection run, on the
/// server's own runtime.
struct Launcher {
    options: ClientOptions,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Launch for Arc<Launcher> {
    fn launch(&self, notifier: &Arc<Notifier>, target: String, generation: u64) {
        let options = notify_target_options(&self.options, &target);
        let notifier = Arc::clone(notifier);
        let task = tokio::spawn(async move {
            let (apps, to) = (Arc::clone(&notifier), target.clone());
            let run = h2sim_tokio::connect(&target, options, move |_| apps.app(&to)).await;
            notifier.ended(&target, generation, run_failure(&run).as_deref());
        });
        if let Ok(mut tasks) = self.tasks.lock() {
            tasks.retain(|t| !t.is_finished());
            tasks.push(task);
        }
    }
}

impl Launcher {
    /// Stops the callback connections and waits for them.
    async fn finish(&self, notifier: &Notifier) {
        notifier.close();
        self.options.runtime.trigger();
        let tasks = self
            .tasks
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default();
        for task in tasks {
            let _ = task.await;
        }
    }
}

/// `h2sim server` on tokio: serves until Ctrl-C or SIGTERM.
pub async fn serve(args: ServerArgs) -> Result<ExitCode, UsageError> {
    let parts = server_parts(&args, ())?;
    let launcher = Arc::new(Launcher {
        options: notify_options(h2sim_tokio::Shutdown::new()),
        tasks: Mutex::new(Vec::new()),
    });
    parts
        .shared
        .notifier
        .set_launch(Box::new(Arc::clone(&launcher)));
    let server = Server::bind(parts.specs, parts.options)
        .await
        .map_err(|e| usage(e.to_string()))?;
    // Watch for signals before saying we listen: a script that stops the
    // server as soon as it sees that line must get a graceful stop.
    let shutdown = server.shutdown();
    stop_server_on_ctrl_c(move || shutdown.trigger());
    print_listening("h2sim server", &server.local_addrs());
    let shared = parts.shared.clone();
    server
        .run(move |info| {
            ServerApp::new(shared.clone(), info.peer).accepted_before(info.connect_time)
        })
        .await;
    launcher.finish(&parts.shared.notifier).await;
    Ok(finish_server(&args, &parts.shared))
}

/// `h2sim client`: runs the scenarios, prints the report, exit 1 if any
/// request failed or was lost.
pub async fn drive(args: ClientArgs) -> Result<ExitCode, UsageError> {
    let report = run_client(&args, None).await?;
    print_client_report(&args, &report)
}

/// Runs a client on tokio to completion and returns the merged report.
/// `bench`: one cell of `h2sim bench` (see `client_parts`), which the
/// bench's Ctrl-C stops; otherwise the run watches Ctrl-C itself.
pub async fn run_client(
    args: &ClientArgs,
    bench: Option<&Interrupt>,
) -> Result<Report, UsageError> {
    let own;
    let interrupt = match bench {
        Some(interrupt) => interrupt,
        None => {
            own = interrupt_on_ctrl_c();
            &*own
        }
    };
    let parts = client_parts(args, bench.is_some(), interrupt)?;
    let options: ClientOptions = parts.options(args, Default::default());
    let shutdown = options.runtime.clone();
    if !parts.watch_run(interrupt, move || shutdown.trigger()) {
        return Ok(finish_client(args, &parts, Vec::new()));
    }
    let listener = listen(args, &parts).await?;
    let progress = wants_progress(args, bench.is_some())
        .then(|| spawn_progress(parts.plan.clone(), parts.expected));
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
                client_app(plan.clone(), info, authority.clone())
            })
            .await;
            TargetOutcome::new(url, connections, outcomes)
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
    if let Some((shutdown, serving)) = listener {
        let linger = Linger::new(args, &parts.plan);
        while let Some(pause) = linger.next_pause() {
            tokio::time::sleep(pause).await;
        }
        // GOAWAY: the notifications in flight are answered, then it ends.
        shutdown.trigger();
        let _ = serving.await;
    }
    Ok(finish_client(args, &parts, outcomes))
}

/// `--listen`: the notification server, serving on this runtime until
/// its shutdown is triggered.
async fn listen(
    args: &ClientArgs,
    parts: &ClientParts,
) -> Result<Option<(h2sim_tokio::Shutdown, tokio::task::JoinHandle<()>)>, UsageError> {
    let (Some(server_args), Some(inbox)) = (listener_args(args)?, parts.inbox.clone()) else {
        return Ok(None);
    };
    let server_parts = server_parts(&server_args, ())?;
    let server = Server::bind(server_parts.specs, server_parts.options)
        .await
        .map_err(|e| usage(format!("--listen: {e}")))?;
    print_listening("h2sim client --listen", &server.local_addrs());
    let shutdown = server.shutdown();
    let shared = server_parts.shared;
    let serving = tokio::spawn(server.run(move |info| {
        ListenerApp::new(
            ServerApp::new(shared.clone(), info.peer).accepted_before(info.connect_time),
            inbox.clone(),
        )
    }));
    Ok(Some((shutdown, serving)))
}
