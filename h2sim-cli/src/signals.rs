//! Ctrl-C, SIGTERM and SIGHUP during a run of any command, the same on
//! both runtimes.

use std::sync::Arc;

use crate::client::app::Plan;
use crate::trace::errln;

/// Ctrl-C (and SIGTERM): the first stops the run gracefully (no new
/// requests, in-flight ones get the drain time to finish, then the report
/// and the JSON); a second ends the process at once.
pub fn interrupt_on_ctrl_c(plan: Arc<Plan>, stop: impl Fn() + Send + 'static) {
    on_ctrl_c("h2sim client", move || {
        errln!(
            "h2sim client: stopping: no new requests, waiting for those in flight (Ctrl-C again to quit at once)"
        );
        plan.stop(std::time::Instant::now());
        stop();
    });
}

/// The server's Ctrl-C (and SIGTERM): the first ends it gracefully (every
/// connection gets its GOAWAY, the requests in flight their answers, then
/// the summary), saying so at once, since that can take seconds; a second
/// ends the process at once, as the client's does.
pub fn stop_server_on_ctrl_c(stop: impl FnOnce() + Send + 'static) {
    on_ctrl_c("h2sim server", move || {
        errln!(
            "h2sim server: stopping: GOAWAY to every connection, answering the requests in flight (Ctrl-C again to quit at once)"
        );
        stop();
    });
}

/// Signals this close together are one: GNU `timeout` sends its signal to
/// the process and then to its process group, so a process it stops gets
/// it twice within microseconds, and took the second for a user's second
/// Ctrl-C (exit 130, no report, about one run in 40). A person's second
/// press comes later than this.
const ONE_SIGNAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Calls `first` on the first Ctrl-C (or SIGTERM, or SIGHUP), which winds
/// the work down; a second (at least [`ONE_SIGNAL`] later) ends the process
/// at once with 130. One signal thread,
/// for every command and both runtimes, so the behaviour is written once.
/// `who` names the command when the signals cannot be watched (the process
/// then dies on the first, without its report).
pub fn on_ctrl_c(who: &'static str, first: impl FnOnce() + Send + 'static) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let cannot = || errln!("{who}: cannot watch for Ctrl-C; it will end the run without a report");
    let mut watched = vec![SIGINT, SIGTERM];
    if !hangup_ignored() {
        watched.push(SIGHUP);
    }
    let Ok(mut signals) = signal_hook::iterator::Signals::new(watched) else {
        cannot();
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("h2sim-signals".into())
        .spawn(move || {
            let mut forever = signals.forever();
            if forever.next().is_none() {
                return;
            }
            let came = std::time::Instant::now();
            first();
            while forever.next().is_some() {
                if came.elapsed() >= ONE_SIGNAL {
                    std::process::exit(130);
                }
            }
        });
    if spawned.is_err() {
        cannot();
    }
}

/// Whether this process was started with SIGHUP ignored, as `nohup` starts
/// it. SIGHUP comes when the terminal or ssh session that ran the command
/// goes away; it then ends the run as SIGTERM does, so a dropped session
/// still leaves the report and the JSON, where by default it killed the
/// process with neither. Watching it replaces whatever was set, so under
/// `nohup` it stays ignored: the run goes on, as the user asked.
#[cfg(unix)]
fn hangup_ignored() -> bool {
    // SAFETY: with a null new action `sigaction` only reads the current
    // disposition of SIGHUP into `current`, a zeroed plain-data struct
    // this function owns; nothing is changed.
    #[allow(unsafe_code)]
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    }
}

#[cfg(not(unix))]
fn hangup_ignored() -> bool {
    false
}
