//! `Shutdown::trigger_on_signals`: SIGTERM (what `kill` and CI send) stops
//! gracefully as SIGINT does, and the handlers stand once the call
//! returns. The signal is raised in this test binary's own process, which
//! holds this one test only; without a handler SIGTERM would kill it.

use std::time::Duration;

use h2sim_tokio::Shutdown;
use signal_hook::consts::SIGTERM;

#[tokio::test]
async fn sigterm_right_after_registration_triggers_shutdown() {
    let shutdown = Shutdown::new();
    shutdown.trigger_on_signals().expect("install the handlers");
    signal_hook::low_level::raise(SIGTERM).expect("raise SIGTERM");
    // A bound on a hang, not on how fast the signal is heard.
    tokio::time::timeout(Duration::from_secs(30), shutdown.triggered())
        .await
        .expect("SIGTERM triggers the shutdown");
    assert!(shutdown.is_triggered());
}
