//! What a driver keeps besides the core's timers: its output bound, and how
//! long the last bytes may take to leave once the core is done. Idle,
//! drain and head-read deadlines are the core's own (`Config`), so a
//! driver only sleeps until the earliest of [`Endpoint::poll_timeout`] and
//! [`FinalFlush::deadline`].

use std::time::{Duration, Instant};

use crate::{Application, Endpoint};

/// After the core's session is over, how long its last bytes (a GOAWAY, the
/// last response) may go without any of them being written before the
/// transport is cut: a peer that stopped reading cannot hold the
/// connection open.
const FINAL_FLUSH: Duration = Duration::from_secs(1);

/// Once the driver has closed its side (TLS close_notify, TCP FIN), how
/// long it goes on reading, and dropping, what the peer still sends before
/// it lets the socket go; the wait ends sooner when the peer closes too.
/// Letting a socket go with input unread makes the kernel send RST, which
/// throws away what it had not sent yet of our last bytes (the last answer,
/// the GOAWAY).
pub const LINGER: Duration = Duration::from_millis(500);

/// What the linger reads at most, so a peer sending at full speed costs a
/// bounded amount of work. Well above what a peer has in flight when we
/// close (our HTTP/2 connection window, 8 MiB by default, and the socket
/// buffers), so that the peer's close or [`LINGER`] ends the wait, not
/// this: at 1 MiB, a client still uploading to the streams a GOAWAY left
/// out got RST before it had read our last answer (Go's client lost
/// requests on connections that reached `Config::max_requests`).
pub const LINGER_BYTES: usize = 64 << 20;

/// Transport bounds of a driver's loop (the protocol's timeouts are in
/// [`Config`](crate::Config)).
#[derive(Debug, Clone)]
pub struct DriverOptions {
    /// Output bytes taken from the core but not yet written, beyond which
    /// the loop stops taking more output, and stops reading until its
    /// writes stand still for a while (see `host::stall`).
    pub max_output_backlog: usize,
}

impl Default for DriverOptions {
    fn default() -> Self {
        DriverOptions {
            max_output_backlog: 512 * 1024,
        }
    }
}

/// How a connection's loop ended, when the transport did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The core finished the connection and all its output was written.
    Finished,
    /// The peer closed the transport; whatever the core had left to say
    /// was written.
    PeerClosed,
    /// The core finished, but its last bytes stopped leaving (the peer
    /// does not read) and the transport was cut.
    FlushExpired,
}

/// The driver's one deadline of its own: once the core is closed, output
/// still waiting must keep moving, or the transport is cut.
#[derive(Debug, Clone, Default)]
pub struct FinalFlush {
    give_up_at: Option<Instant>,
}

impl FinalFlush {
    /// The earliest of the core's and the application's deadline and, once
    /// the core's session is over, this one: from then on its output must
    /// move, whether the core still holds some of it or not (an error
    /// GOAWAY behind answers a peer never reads would otherwise hold the
    /// connection for ever, no idle timer applying any more).
    pub fn deadline<A: Application>(
        &mut self,
        endpoint: &Endpoint<A>,
        now: Instant,
    ) -> Option<Instant> {
        if endpoint.connection().ended() && self.give_up_at.is_none() {
            self.give_up_at = Some(now + FINAL_FLUSH);
        }
        [endpoint.poll_timeout(), self.give_up_at]
            .into_iter()
            .flatten()
            .min()
    }

    /// Bytes were written at `now`: the last ones are still moving.
    pub fn wrote(&mut self, now: Instant) {
        if self.give_up_at.is_some() {
            self.give_up_at = Some(now + FINAL_FLUSH);
        }
    }

    /// The deadline came: whether to stop waiting for the last bytes.
    pub fn expired(&self, now: Instant) -> bool {
        self.give_up_at.is_some_and(|t| t <= now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler::{HandlerApp, Reply};
    use crate::{Config, Connection, Protocol};

    #[test]
    fn the_final_flush_runs_only_once_the_core_is_closed_and_moves_with_writes() {
        let now = Instant::now();
        let conn = Connection::server_for(Protocol::Http1, Config::default(), now).unwrap();
        let app = HandlerApp::new(|_| Reply::new(200, Vec::new()));
        let mut endpoint = Endpoint::new(conn, app, now);
        let mut flush = FinalFlush::default();
        assert_eq!(flush.deadline(&endpoint, now), endpoint.poll_timeout());
        endpoint.abort(now, crate::Reason::NO_ERROR);
        while endpoint.poll_transmit(now).is_some() {}
        assert_eq!(flush.deadline(&endpoint, now), Some(now + FINAL_FLUSH));
        let later = now + Duration::from_millis(300);
        flush.wrote(later);
        assert!(!flush.expired(later + FINAL_FLUSH - Duration::from_millis(1)));
        assert!(flush.expired(later + FINAL_FLUSH));
    }
}
