//! A shutdown signal shared by a server's listeners and connections (or a
//! client's connections).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;

/// Asks every connection that holds a clone to wind down gracefully: HTTP/2
/// sends GOAWAY, HTTP/1.1 answers with `connection: close`, open streams get
/// the configured drain time to finish.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    token: CancellationToken,
    /// Set before the token is cancelled. Connections check it every turn,
    /// and the token's own check takes a lock.
    triggered: Arc<AtomicBool>,
}

impl Shutdown {
    pub fn new() -> Self {
        Shutdown::default()
    }

    /// Starts the shutdown; later calls do nothing.
    pub fn trigger(&self) {
        self.triggered.store(true, Ordering::Release);
        self.token.cancel();
    }

    pub fn is_triggered(&self) -> bool {
        self.triggered.load(Ordering::Acquire)
    }

    /// Triggers this shutdown on the first SIGINT (Ctrl-C) or SIGTERM (what
    /// `kill` and CI send). Both handlers are installed before this
    /// returns, so a signal that comes right after it is not lost; an error
    /// means they could not be, and the process keeps the default (it dies
    /// on the signal). Must be called inside a tokio runtime; the waiting
    /// task ends with the runtime.
    #[cfg(unix)]
    pub fn trigger_on_signals(&self) -> std::io::Result<()> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        let shutdown = self.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            shutdown.trigger();
        });
        Ok(())
    }

    /// Triggers this shutdown on the first Ctrl-C, the one signal there is
    /// off Unix; it is watched from the first turn of the waiting task.
    #[cfg(not(unix))]
    pub fn trigger_on_signals(&self) -> std::io::Result<()> {
        let shutdown = self.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                shutdown.trigger();
            }
        });
        Ok(())
    }

    /// Completes once the shutdown has been triggered.
    pub async fn triggered(&self) {
        self.token.cancelled().await;
    }
}
