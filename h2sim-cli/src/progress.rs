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
    use indicatif::{ProgressBar, ProgressState, ProgressStyle};
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let (bar, template) = match expected {
        Some(total) => (
            ProgressBar::new(total),
            "> req msgs: {pos}/{len} |{bar:20}| {percent}% {rate} ETA {eta}",
        ),
        None => (
            ProgressBar::new_spinner(),
            "> req msgs: {pos} {rate} {elapsed}",
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        let style = style.with_key(
            "rate",
            |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&rate(state.per_sec()));
            },
        );
        bar.set_style(style.progress_chars("#> "));
    }
    // The lines written while it is shown clear it and draw it again.
    crate::trace::show_bar(bar.clone());
    let thread = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            bar.set_position(plan.completed.load(Ordering::Relaxed));
        }
        bar.set_position(plan.completed.load(Ordering::Relaxed));
        crate::trace::end_bar();
    });
    Progress {
        stop,
        thread: Some(thread),
    }
}

/// Requests a second as the bar shows them: whole and grouped
/// (`103,404/s`), where indicatif's own `{per_sec}` prints four decimals
/// that change at every redraw.
fn rate(per_sec: f64) -> String {
    let whole = if per_sec.is_finite() && per_sec > 0.0 {
        per_sec.round() as u64
    } else {
        0
    };
    format!("{}/s", indicatif::HumanCount(whole))
}

#[cfg(test)]
mod tests {
    use super::rate;

    #[test]
    fn rates_are_whole_and_grouped() {
        assert_eq!(rate(103_403.991_7), "103,404/s");
        assert_eq!(rate(999.4), "999/s");
        assert_eq!(rate(f64::NAN), "0/s");
        assert_eq!(rate(f64::INFINITY), "0/s");
    }
}
