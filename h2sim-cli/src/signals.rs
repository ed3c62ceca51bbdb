//! Ctrl-C, SIGTERM and SIGHUP during a run of any command, the same on
//! both runtimes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::trace::errln;

/// A client's Ctrl-C (and SIGTERM, SIGHUP): what it stops changes as the
/// process goes on (the wait for a `--token-url` token, then the run, or
/// `h2sim bench`'s cells in turn), so there is one signal thread and one
/// flag, and each phase says what a Ctrl-C does to it with
/// [`Interrupt::watch`]. A Ctrl-C during the token wait was a signal
/// nothing watched yet: the process died without a word or its report.
#[derive(Default)]
pub struct Interrupt {
    stopped: AtomicBool,
    /// What a Ctrl-C stops now.
    watched: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl Interrupt {
    /// The Ctrl-C: sets the flag and stops what is watched.
    pub fn stop(&self) {
        // Set before the lock, and read under it by `watch`: what is
        // watched after this either sees the flag or is stopped here.
        self.stopped.store(true, Ordering::SeqCst);
        let watched = self
            .watched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(stop) = watched {
            stop();
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// From now on a Ctrl-C calls `stop`, in place of what was watched
    /// before. False, with `stop` dropped uncalled, when a Ctrl-C came
    /// already: the caller is not to begin what it would have stopped.
    pub fn watch(&self, stop: impl FnOnce() + Send + 'static) -> bool {
        let mut watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
        if self.is_stopped() {
            return false;
        }
        *watched = Some(Box::new(stop));
        true
    }
}

/// Ctrl-C (and SIGTERM) for `h2sim client`, watched from its start, before
/// any token is fetched: the first stops what is watched (see
/// [`Interrupt`]; a run stops gracefully: no new requests, those in
/// flight get the drain time to finish, then the report and the JSON); a
/// second ends the process at once.
pub fn interrupt_on_ctrl_c() -> Arc<Interrupt> {
    let interrupt = Arc::new(Interrupt::default());
    let stop = Arc::clone(&interrupt);
    on_ctrl_c("h2sim client", move || stop.stop());
    interrupt
}

/// The server's Ctrl-C (and SIGTERM): the first ends it gracefully (every
/// connection gets its GOAWAY, the requests in flight their answers, then
/// the summary), saying so at once, since that can take seconds; a second
/// ends the process at once, as the client's does.
pub fn stop_server_on_ctrl_c(stop: impl FnOnce() + Send + 'static) {
    on_ctrl_c("h2sim server", move || {
        errln!(
            "{}",
            stopping(
                "h2sim server",
                "GOAWAY to every connection, answering the requests in flight"
            )
        );
        stop();
    });
}

/// The first signal, in the words the lines that say what cut a run short
/// use: signals are the process's, and so is this.
static FIRST: OnceLock<&'static str> = OnceLock::new();

/// What the first signal was: `Ctrl-C` (SIGINT), `SIGTERM` or `SIGHUP`;
/// `Ctrl-C` before any came. A run ended by `kill` or by a closed terminal
/// said `interrupted (Ctrl-C)`.
pub fn first_signal() -> &'static str {
    FIRST.get().copied().unwrap_or("Ctrl-C")
}

/// The line that says a command is winding down after the first signal:
/// what it does meanwhile, named by `what`, and how to end it at once,
/// in the words of the signal that came (a `kill` or a closed terminal
/// was told to press Ctrl-C again).
pub fn stopping(who: &str, what: &str) -> String {
    let signal = first_signal();
    let again = if signal == "Ctrl-C" {
        "Ctrl-C again to quit at once"
    } else {
        "a second signal quits at once"
    };
    format!("{who}: stopping on {signal}: {what} ({again})")
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
            let Some(signal) = forever.next() else {
                return;
            };
            let _ = FIRST.set(match signal {
                SIGTERM => "SIGTERM",
                SIGHUP => "SIGHUP",
                _ => "Ctrl-C",
            });
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
