//! `Shutdown::trigger_on_signals`: SIGTERM (what `kill` and CI send) stops
//! gracefully as SIGINT does, and the handlers stand once the call
//! returns. The signal is raised in this test binary's own process, which
//! holds this one test only; without a handler SIGTERM would kill it.

use h2sim_glommio::Shutdown;
use signal_hook::consts::SIGTERM;

#[test]
fn sigterm_right_after_registration_triggers_shutdown() {
    let shutdown = Shutdown::new();
    shutdown.trigger_on_signals().expect("install the handlers");
    signal_hook::low_level::raise(SIGTERM).expect("raise SIGTERM");
    // The handler thread triggers it; this waits for that (no executor
    // needed: the shutdown's wakers are plain wakers).
    futures_lite::future::block_on(shutdown.triggered());
    assert!(shutdown.is_triggered());
}
