//! `--runtime glommio`: the same server and client on glommio's
//! thread-per-core executors (io_uring). The Sans-IO applications and all
//! option handling are shared with `tokio_run` through `setup`; only
//! starting, connecting and waiting differ. Built with the `glommio`
//! feature (on by default) on Linux only.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use h2sim_glommio::{ClientOptions, ClientRuntime, Executors, Server};

use crate::client::listener::ListenerApp;
use crate::options::client::ClientArgs;
use crate::options::server::ServerArgs;
use crate::options::{UsageError, usage};
use crate::progress::{spawn_progress, wants_progress};
use crate::server::app::ServerApp;
use crate::server::notify::{Launch, Notifier, run_failure};
use crate::setup::client::ClientParts;
use crate::setup::client::{TargetOutcome, client_app, client_parts, finish_client};
use crate::setup::listen::{Linger, listener_args};
use crate::setup::output::print_client_report;
use crate::setup::server::{
    finish_server, notify_options, notify_target_options, print_listening, server_parts,
};
use crate::signals::{interrupt_on_ctrl_c, stop_server_on_ctrl_c};

/// `--threads N` executors, or one per CPU this process may use.
fn executors(threads: Option<usize>) -> Executors {
    Executors {
        count: threads.unwrap_or(0),
        ..Executors::default()
    }
}

/// Fails at start, with a message naming the alternative, where io_uring
/// or the memlock limit will not let glommio run.
fn probe(threads: Option<usize>) -> Result<(), UsageError> {
    h2sim_glommio::probe(&executors(threads)).map_err(|e| usage(e.to_string()))
}

/// Notifications on glommio: a callback connection run blocks while its
/// executor runs, so each gets a thread with one executor of its own,
/// unpinned (the server's executors hold the CPUs).
struct Launcher {
    options: ClientOptions,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl Launch for Arc<Launcher> {
    fn launch(&self, notifier: &Arc<Notifier>, target: String, generation: u64) {
        let options = notify_target_options(&self.options, &target);
        let notifier = Arc::clone(notifier);
        let thread = std::thread::spawn(move || {
            let (apps, to) = (Arc::clone(&notifier), target.clone());
            let run = h2sim_glommio::connect(&target, options, move |_| apps.app(&to));
            notifier.ended(&target, generation, run_failure(&run).as_deref());
        });
        if let Ok(mut threads) = self.threads.lock() {
            threads.retain(|t| !t.is_finished());
            threads.push(thread);
        }
    }
}

impl Launcher {
    /// Stops the callback connections and waits for them.
    fn finish(&self, notifier: &Notifier) {
        notifier.close();
        self.options.runtime.shutdown.trigger();
        let threads = self
            .threads
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default();
        for thread in threads {
            let _ = thread.join();
        }
    }
}

/// `h2sim server --runtime glommio`: serves until Ctrl-C or SIGTERM.
pub fn serve(args: ServerArgs) -> Result<ExitCode, UsageError> {
    let threads = args.threads;
    probe(threads)?;
    let parts = server_parts(&args, executors(threads))?;
    let launcher = Arc::new(Launcher {
        options: notify_options(ClientRuntime {
            shutdown: h2sim_glommio::Shutdown::new(),
            executors: Executors {
                count: 1,
                pin: false,
                ..Executors::default()
            },
        }),
        threads: Mutex::new(Vec::new()),
    });
    parts
        .shared
        .notifier
        .set_launch(Box::new(Arc::clone(&launcher)));
    let server = Server::bind(parts.specs, parts.options).map_err(|e| usage(e.to_string()))?;
    let shutdown = server.shutdown();
    stop_server_on_ctrl_c(move || shutdown.trigger());
    let shared = parts.shared.clone();
    // "listening" only once every executor listens: a client started on
    // that line must not be refused.
    let running = server
        .start(move |info| {
            ServerApp::new(shared.clone(), info.peer).accepted_before(info.connect_time)
        })
        .map_err(|e| usage(e.to_string()))?;
    print_listening("h2sim server", &running.local_addrs());
    running.join();
    launcher.finish(&parts.shared.notifier);
    Ok(finish_server(&args, &parts.shared))
}

/// `h2sim client --runtime glommio`: runs the scenarios, prints the
/// report, exit 1 if any request failed or was lost.
pub fn drive(args: &ClientArgs) -> Result<ExitCode, UsageError> {
    let threads = args.threads;
    probe(threads)?;
    let interrupt = interrupt_on_ctrl_c();
    let parts = client_parts(args, false, &interrupt)?;
    let options: ClientOptions = parts.options(args, executors(threads).into());
    let shutdown = options.runtime.shutdown.clone();
    if !parts.watch_run(&interrupt, move || shutdown.trigger()) {
        return print_client_report(args, &finish_client(args, &parts, Vec::new()));
    }
    let listener = listen(args, &parts)?;
    let progress =
        wants_progress(args, false).then(|| spawn_progress(parts.plan.clone(), parts.expected));
    // glommio's connect blocks while its executors run: one thread per
    // server, each starting its own executors.
    let runs: Vec<_> = parts
        .targets
        .iter()
        .map(|target| {
            let options = ClientOptions {
                connections: target.connections,
                ..options.clone()
            };
            let (plan, url, authority) = (
                Arc::clone(&parts.plan),
                target.url.clone(),
                target.authority.clone(),
            );
            let connections = target.connections;
            std::thread::spawn(move || {
                let outcomes = h2sim_glommio::connect(&url, options, move |info| {
                    client_app(plan.clone(), info, authority.clone())
                });
                TargetOutcome::new(url, connections, outcomes)
            })
        })
        .collect();
    let outcomes = runs.into_iter().filter_map(|r| r.join().ok()).collect();
    if let Some(progress) = progress {
        progress.finish();
    }
    if let Some(running) = listener {
        // This thread runs no executor: its sleeps stall nothing.
        let linger = Linger::new(args, &parts.plan);
        while let Some(pause) = linger.next_pause() {
            std::thread::sleep(pause);
        }
        // GOAWAY: the notifications in flight are answered, then it ends.
        running.shutdown().trigger();
        running.join();
    }
    let report = finish_client(args, &parts, outcomes);
    print_client_report(args, &report)
}

/// `--listen`: the notification server, on glommio executors of its own
/// until its shutdown is triggered.
fn listen(
    args: &ClientArgs,
    parts: &ClientParts,
) -> Result<Option<h2sim_glommio::RunningServer>, UsageError> {
    let (Some(server_args), Some(inbox)) = (listener_args(args)?, parts.inbox.clone()) else {
        return Ok(None);
    };
    let server_parts = server_parts(&server_args, executors(args.threads))?;
    let server = Server::bind(server_parts.specs, server_parts.options)
        .map_err(|e| usage(format!("--listen: {e}")))?;
    let shared = server_parts.shared;
    let running = server
        .start(move |info| {
            ListenerApp::new(
                ServerApp::new(shared.clone(), info.peer).accepted_before(info.connect_time),
                inbox.clone(),
            )
        })
        .map_err(|e| usage(format!("--listen: {e}")))?;
    print_listening("h2sim client --listen", &running.local_addrs());
    Ok(Some(running))
}
