//! Ctrl-C and SIGTERM during a client run, the same on both runtimes.

use std::sync::Arc;

use crate::client::app::Plan;

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
