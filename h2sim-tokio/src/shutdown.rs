//! A shutdown signal shared by a server's listeners and connections (or a
//! client's connections).

use tokio_util::sync::CancellationToken;

/// Asks every connection that holds a clone to wind down gracefully: HTTP/2
/// sends GOAWAY, HTTP/1.1 answers with `connection: close`, open streams get
/// the configured drain time to finish.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    token: CancellationToken,
}

impl Shutdown {
    pub fn new() -> Self {
        Shutdown::default()
    }

    /// Starts the shutdown; later calls do nothing.
    pub fn trigger(&self) {
        self.token.cancel();
    }

    pub fn is_triggered(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Triggers this shutdown on the first Ctrl-C (SIGINT). Must be called
    /// inside a tokio runtime; the waiting task ends with the runtime.
    pub fn trigger_on_ctrl_c(&self) {
        let token = self.token.clone();
        tokio::spawn(async move {
            // If the handler cannot be installed there is no Ctrl-C to wait
            // for, and the process keeps the default (it dies on SIGINT).
            if tokio::signal::ctrl_c().await.is_ok() {
                token.cancel();
            }
        });
    }

    /// Completes once the shutdown has been triggered.
    pub async fn triggered(&self) {
        self.token.cancelled().await;
    }
}
