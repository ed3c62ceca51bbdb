//! The client's progress bar (indicatif) with rate and ETA.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::client::app::Plan;
use crate::options::client::ClientArgs;

/// Whether to draw the progress bar: quiet, on a terminal, and not inside
/// the bench (which prints its own table).
pub fn wants_progress(args: &ClientArgs, bench: bool) -> bool {
    !bench && args.quiet && std::io::stderr().is_terminal()
}

/// The progress bar (indicatif) with rate and ETA, fed by a thread of its
/// own from the run's completed count, so it works the same under either
/// runtime.
pub struct Progress {
    stop: Arc<AtomicBool>,
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
    let stop = Arc::new(AtomicBool::new(false));
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
