//! Why a connection ended, told to the application with `Event::Closed`
//! so it can say so (h2simple printed one line per connection with it).

use std::fmt;

use crate::error::ConnectionError;
use crate::frame::Reason;

/// What ended a connection. It is the first thing that set the end in
/// motion (our GOAWAY, the peer's, an idle timer), except that what cuts
/// the connection short — a protocol error, a peer's error GOAWAY, an
/// abort, the drain deadline, a transport failure — takes its place.
/// Whether anything was lost is `Event::Closed::error`; the cause says who
/// or what ended it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseCause {
    /// The peer closed the transport (end of stream).
    PeerClosed,
    /// The peer said it is done: HTTP/2 GOAWAY with `reason`, or an
    /// HTTP/1.1 message that closes the connection (`connection: close`,
    /// an HTTP/1.0 message without keep-alive), as `Reason::NO_ERROR`.
    GoAwayReceived { reason: Reason },
    /// We went away gracefully: the application's `go_away` or a shutdown
    /// handle.
    LocalGoAway,
    /// Nothing moved for `Config::idle_timeout`, so we went away.
    IdleTimeout,
    /// Server: the connection took `Config::max_requests` requests, so we
    /// went away.
    RequestLimit,
    /// Server: a request head was still incomplete
    /// `Config::head_read_timeout` after its first byte (slowloris), or
    /// the connection had sent nothing that long after it began, and it
    /// was cut.
    HeadReadTimeout,
    /// HTTP/2 keep-alive: our PING went unanswered (`Config::keepalive`).
    KeepaliveTimeout,
    /// Streams were still open when `Config::drain_timeout` after our
    /// GOAWAY ran out, and the connection was cut.
    DrainExpired,
    /// The application ended the connection at once (`abort`).
    Aborted { reason: Reason },
    /// The peer broke a rule and we ended the connection (see the error).
    Error(ConnectionError),
    /// The transport failed (reset, broken pipe, TLS alert), as the
    /// driver tells it.
    TransportError(TransportFailure),
}

/// How the transport failed: the driver's words, and the TLS alert the
/// peer sent when the failure was one. An application tells a refusal
/// from a broken link by the alert, not by the words: over TLS 1.3 a
/// client learns only at its first read that the server refused its
/// certificate (RFC 8446 §4.4.2.4), as an alert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportFailure {
    pub detail: String,
    /// The alert's code (RFC 8446 §6), e.g. 116 for certificate_required.
    pub alert: Option<u8>,
}

impl From<String> for TransportFailure {
    fn from(detail: String) -> Self {
        TransportFailure {
            detail,
            alert: None,
        }
    }
}

impl From<&str> for TransportFailure {
    fn from(detail: &str) -> Self {
        TransportFailure::from(detail.to_owned())
    }
}

impl fmt::Display for TransportFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

impl CloseCause {
    /// The cause that an `error` closing the connection implies, if it
    /// overrides whatever started the end: a rule broken (ours to report)
    /// or a peer's error GOAWAY.
    pub(crate) fn from_error(error: &ConnectionError) -> Option<CloseCause> {
        match error {
            ConnectionError::Local { .. } => Some(CloseCause::Error(error.clone())),
            ConnectionError::Remote { reason, .. } => {
                Some(CloseCause::GoAwayReceived { reason: *reason })
            }
            ConnectionError::KeepaliveTimeout => Some(CloseCause::KeepaliveTimeout),
            ConnectionError::DrainExpired => Some(CloseCause::DrainExpired),
            ConnectionError::TransportClosed => None,
        }
    }

    /// Ends the connection short rather than starting an orderly end: it
    /// replaces a cause noted before it.
    pub(crate) fn is_abrupt(&self) -> bool {
        matches!(
            self,
            CloseCause::DrainExpired
                | CloseCause::HeadReadTimeout
                | CloseCause::Aborted { .. }
                | CloseCause::Error(_)
                | CloseCause::TransportError(_)
                | CloseCause::KeepaliveTimeout
        )
    }
}

impl fmt::Display for CloseCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseCause::PeerClosed => f.write_str("by peer close"),
            CloseCause::GoAwayReceived { reason } if *reason == Reason::NO_ERROR => {
                f.write_str("by peer GOAWAY")
            }
            CloseCause::GoAwayReceived { reason } => write!(f, "by peer GOAWAY ({reason})"),
            CloseCause::LocalGoAway => f.write_str("by local GOAWAY"),
            CloseCause::IdleTimeout => f.write_str("by idle timeout"),
            CloseCause::RequestLimit => f.write_str("by request limit"),
            CloseCause::KeepaliveTimeout => f.write_str("by keep-alive PING timeout"),
            CloseCause::DrainExpired => f.write_str("by drain timeout"),
            CloseCause::HeadReadTimeout => f.write_str("by request head timeout"),
            CloseCause::Aborted { reason } => write!(f, "aborted ({reason})"),
            CloseCause::Error(e) => write!(f, "by error: {e}"),
            CloseCause::TransportError(e) => write!(f, "by transport error: {e}"),
        }
    }
}

/// The cause a connection keeps until it closes: the first orderly one
/// noted, replaced by an abrupt one.
#[derive(Debug, Clone, Default)]
pub(crate) struct CauseSlot(Option<CloseCause>);

impl CauseSlot {
    pub(crate) fn note(&mut self, cause: CloseCause) {
        match &self.0 {
            None => self.0 = Some(cause),
            Some(c) if cause.is_abrupt() && !c.is_abrupt() => self.0 = Some(cause),
            Some(_) => {}
        }
    }

    /// The cause for a `Closed` event ending in `error`, `fallback` when
    /// nothing was noted.
    pub(crate) fn resolve(
        &self,
        error: Option<&ConnectionError>,
        fallback: CloseCause,
    ) -> CloseCause {
        let from_error = error.and_then(CloseCause::from_error);
        match (from_error, &self.0) {
            // An abrupt end stated by the driver (drain expiry) explains
            // the error it causes better than the error does.
            (_, Some(c)) if c.is_abrupt() => c.clone(),
            (Some(e), _) => e,
            (None, Some(c)) => c.clone(),
            (None, None) => fallback,
        }
    }
}
