//! What ended a connection, and what it carried, in the words of the
//! `DISCONNECTED` line that each side prints when it closes (h2simple's
//! line). The words of both sides live here, because they follow the
//! connection's protocol alike:
//! the core's `CloseCause` is the same for HTTP/2 and HTTP/1.1, and names
//! a GOAWAY where HTTP/1.1 had a `connection: close`, and a PROTOCOL_ERROR
//! where it had an error status, so an HTTP/1.1 line names what was on the
//! wire instead. Over HTTP/2 each side keeps the words its h2simple
//! program's users know: the server its own (`by GOAWAY received`), the
//! client the core's (`by peer GOAWAY`, `CloseCause`'s `Display`).

use std::fmt;
use std::time::Duration;

use h2sim_proto::{CloseCause, ConnectionError, Protocol, Reason, Violation};

/// A connection's counts over its life, as its `DISCONNECTED` line gives
/// them after its lifetime, in the same words on both sides: h2simple's
/// over HTTP/2 (`N reqs N rsps N rsts N streams`); over HTTP/1.1, which
/// has neither resets nor streams (its requests are its streams), the
/// requests left without their response (`N reqs N rsps N unanswered`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub requests: u64,
    pub responses: u64,
    /// Requests that ended without their response while it lived: reset
    /// over HTTP/2 (by the peer, or by us); over HTTP/1.1, which resets
    /// nothing, cut off by its end (or a client's `--timeout`).
    pub resets: u64,
    /// Streams the server pushed (HTTP/2 only).
    pub pushes: u64,
    pub http1: bool,
}

impl Counts {
    /// The responses a second over `life` (0 for a connection that lived
    /// no measurable time).
    pub fn tps(&self, life: Duration) -> f64 {
        let secs = life.as_secs_f64();
        if secs > 0.0 {
            self.responses as f64 / secs
        } else {
            0.0
        }
    }

    /// h2simple's line, `WHO DISCONNECTED CAUSE: N tps (S secs for
    /// COUNTS)`, for a connection to or from `who` that lived `life`.
    pub fn line(&self, who: impl fmt::Display, cause: impl fmt::Display, life: Duration) -> String {
        format!(
            "{who} DISCONNECTED {cause}: {:.0} tps ({:.3} secs for {self})",
            self.tps(life),
            life.as_secs_f64()
        )
    }
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Counts {
            requests,
            responses,
            resets,
            pushes,
            http1,
        } = *self;
        if http1 {
            write!(f, "{requests} reqs {responses} rsps {resets} unanswered")
        } else {
            let streams = requests + pushes;
            write!(
                f,
                "{requests} reqs {responses} rsps {resets} rsts {streams} streams"
            )
        }
    }
}

/// What ended a connection, as its `DISCONNECTED` line says it, after
/// `DISCONNECTED ` and before the colon: the words both sides say alike,
/// and those of one side (`S`, [`ServerSide`] or [`ClientSide`]), so that
/// neither side can say the other's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending<S> {
    /// Words only this side says.
    Side(S),
    /// HTTP/1.1: the peer asked to close after its message: `connection:
    /// close`, or an HTTP/1.0 message without keep-alive (RFC 9112 §9.6,
    /// §9.3). The core reports it as a GOAWAY without error, but HTTP/1.1
    /// has no GOAWAY, and a line saying one would send a user looking for
    /// frames that were never sent.
    CloseReceived,
    /// HTTP/1.1: a message broke `violation`, and the connection closed.
    /// A server's core answered the request with `status` (none when the
    /// response had started and was cut instead); a client sends nothing.
    /// HTTP/1.1 has no error code on the wire, so the line names what the
    /// peer got, as the server's REFUSED line does.
    Answered {
        status: Option<u16>,
        violation: Violation,
    },
    /// The core's words for the cause: the client's, and the server's for
    /// a timeout (`--idle-timeout` among them), an abort or a transport
    /// failure.
    Cause(CloseCause),
}

/// What only the server's line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSide {
    /// The client closed the transport.
    PeerClose,
    /// The client sent an HTTP/2 GOAWAY, with its code.
    GoAwayReceived(Reason),
    /// It was told to stop (Ctrl-C, SIGTERM) and went away.
    Shutdown,
    /// A connection error, in the core's words: a rule the client broke
    /// (over HTTP/2; HTTP/1.1's is [`Ending::Answered`]), the client's
    /// GOAWAY with an error code, streams cut.
    Error(ConnectionError),
}

/// What only the client's line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientSide {
    /// HTTP/1.1: its last request said `connection: close`
    /// (`--requests-per-connection`), which the core reports as our GOAWAY.
    CloseSent,
    /// HTTP/1.1: it went away with every request answered (the end of the
    /// run), so no request was left to say `connection: close` and it
    /// closed the transport: the server's line says `by peer close`.
    LocalClose,
    /// HTTP/1.1: `--timeout` ran out on a request already on the wire.
    /// HTTP/1.1 has no way to give up one request but to close its
    /// connection, which the core reports as an abort with CANCEL, an
    /// HTTP/2 code that was never sent (over HTTP/2 the request's
    /// RST_STREAM carries it and the connection stays).
    RequestTimeout,
    /// The run ended with the connection still open.
    RunOver,
}

impl Ending<ServerSide> {
    /// The server's words for `cause` on a connection of `protocol` (None
    /// while undecided). `answered`: the status the core answered the
    /// client's last broken request with; over HTTP/1.1, whose connection
    /// closes after one, that is the one its error names.
    pub fn server(cause: &CloseCause, protocol: Option<Protocol>, answered: Option<u16>) -> Self {
        let http1 = protocol == Some(Protocol::Http1);
        match cause {
            CloseCause::PeerClosed => Ending::Side(ServerSide::PeerClose),
            CloseCause::GoAwayReceived { .. } if http1 => Ending::CloseReceived,
            CloseCause::GoAwayReceived { reason } => {
                Ending::Side(ServerSide::GoAwayReceived(*reason))
            }
            // This server sends GOAWAY only when it is stopping (its
            // request limit is a cause of its own).
            CloseCause::LocalGoAway => Ending::Side(ServerSide::Shutdown),
            CloseCause::Error(ConnectionError::Local { violation, .. }) if http1 => {
                Ending::Answered {
                    status: answered,
                    violation: violation.clone(),
                }
            }
            CloseCause::Error(e) => Ending::Side(ServerSide::Error(e.clone())),
            // Timeouts, an abort, a transport failure: the core's words
            // already say what happened ("by idle timeout", "by request
            // head timeout").
            other => Ending::Cause(other.clone()),
        }
    }
}

impl Ending<ClientSide> {
    /// The client's words for `cause` on a connection of `protocol`;
    /// `quiet`: over HTTP/1.1, going away found nothing left to write, so
    /// no request said `connection: close`.
    pub fn client(cause: &CloseCause, protocol: Option<Protocol>, quiet: bool) -> Self {
        let http1 = protocol == Some(Protocol::Http1);
        match cause {
            CloseCause::GoAwayReceived { .. } if http1 => Ending::CloseReceived,
            CloseCause::LocalGoAway if http1 && quiet => Ending::Side(ClientSide::LocalClose),
            CloseCause::LocalGoAway if http1 => Ending::Side(ClientSide::CloseSent),
            // The client aborts nothing itself: a CANCEL is its reset of
            // a request whose `--timeout` ran out.
            CloseCause::Aborted {
                reason: Reason::CANCEL,
            } if http1 => Ending::Side(ClientSide::RequestTimeout),
            // A response that broke a rule: HTTP/1.1 has no code to send.
            CloseCause::Error(ConnectionError::Local { violation, .. }) if http1 => {
                Ending::Answered {
                    status: None,
                    violation: violation.clone(),
                }
            }
            other => Ending::Cause(other.clone()),
        }
    }
}

impl<S: fmt::Display> fmt::Display for Ending<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::Side(side) => side.fmt(f),
            Ending::CloseReceived => f.write_str("by connection: close received"),
            Ending::Answered {
                status: Some(status),
                violation,
            } => write!(f, "by error ({status}: {violation})"),
            Ending::Answered {
                status: None,
                violation,
            } => write!(f, "by error ({violation})"),
            Ending::Cause(cause) => write!(f, "{cause}"),
        }
    }
}

impl fmt::Display for ServerSide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerSide::PeerClose => f.write_str("by peer close"),
            ServerSide::GoAwayReceived(reason) if *reason == Reason::NO_ERROR => {
                f.write_str("by GOAWAY received")
            }
            ServerSide::GoAwayReceived(reason) => write!(f, "by GOAWAY received ({reason})"),
            ServerSide::Shutdown => f.write_str("by server shutdown"),
            ServerSide::Error(e) => write!(f, "by error ({e})"),
        }
    }
}

impl fmt::Display for ClientSide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClientSide::CloseSent => "by connection: close sent",
            ClientSide::LocalClose => "by local close",
            ClientSide::RequestTimeout => "by request timeout",
            ClientSide::RunOver => "at the end of the run",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H1: Option<Protocol> = Some(Protocol::Http1);
    const H2: Option<Protocol> = Some(Protocol::Http2);

    fn words(ending: impl fmt::Display) -> String {
        ending.to_string()
    }

    fn goaway() -> CloseCause {
        CloseCause::GoAwayReceived {
            reason: Reason::NO_ERROR,
        }
    }

    /// HTTP/2 keeps the words h2simple's users know on both sides; HTTP/1.1
    /// names its `connection: close` on both alike.
    #[test]
    fn a_close_is_told_in_the_words_of_the_protocol() {
        assert_eq!(
            words(Ending::server(&goaway(), H2, None)),
            "by GOAWAY received"
        );
        assert_eq!(
            words(Ending::client(&goaway(), H2, false)),
            "by peer GOAWAY"
        );
        assert_eq!(
            words(Ending::client(&CloseCause::LocalGoAway, H2, false)),
            "by local GOAWAY"
        );
        assert_eq!(
            words(Ending::server(&goaway(), H1, None)),
            "by connection: close received"
        );
        assert_eq!(
            words(Ending::client(&goaway(), H1, false)),
            "by connection: close received"
        );
        assert_eq!(
            words(Ending::client(&CloseCause::LocalGoAway, H1, false)),
            "by connection: close sent"
        );
        assert_eq!(
            words(Ending::client(&CloseCause::LocalGoAway, H1, true)),
            "by local close"
        );
        assert_eq!(
            words(Ending::server(&CloseCause::LocalGoAway, H1, None)),
            "by server shutdown"
        );
        // `--timeout`: HTTP/1.1 closes the connection, with no code sent.
        let cancel = CloseCause::Aborted {
            reason: Reason::CANCEL,
        };
        assert_eq!(
            words(Ending::client(&cancel, H1, false)),
            "by request timeout"
        );
        assert_eq!(
            words(Ending::client(&cancel, H2, false)),
            "aborted (CANCEL)"
        );
        // `--requests-per-connection`, on either protocol.
        for protocol in [H1, H2] {
            assert_eq!(
                words(Ending::server(&CloseCause::RequestLimit, protocol, None)),
                "by request limit"
            );
        }
    }

    /// An HTTP/1.1 request that broke a rule is named by the status the
    /// client got; HTTP/2's error keeps its code, which went in GOAWAY.
    #[test]
    fn an_error_names_what_the_peer_got() {
        let error = |violation| {
            CloseCause::Error(ConnectionError::Local {
                reason: Reason::PROTOCOL_ERROR,
                violation,
            })
        };
        let chunk = || error(Violation::Http1(h2sim_proto::Http1Error::InvalidChunk));
        assert_eq!(
            Ending::server(&chunk(), H1, Some(400)).to_string(),
            "by error (400: invalid chunk (RFC 9112 §7.1))"
        );
        assert_eq!(
            Ending::server(&chunk(), H1, None).to_string(),
            "by error (invalid chunk (RFC 9112 §7.1))"
        );
        assert_eq!(
            Ending::client(&chunk(), H1, false).to_string(),
            "by error (invalid chunk (RFC 9112 §7.1))"
        );
        assert_eq!(
            Ending::server(&error(Violation::BadPreface), H2, None).to_string(),
            "by error (connection error PROTOCOL_ERROR: invalid connection preface \
             (RFC 9113 §3.4))"
        );
    }

    /// Both sides count in the words of the connection's protocol.
    #[test]
    fn counts_are_told_in_the_words_of_the_protocol() {
        let counts = Counts {
            requests: 2000,
            responses: 1998,
            resets: 2,
            pushes: 3,
            http1: false,
        };
        let life = Duration::from_millis(2072);
        assert_eq!(
            counts.line("127.0.0.1:8080", "by local GOAWAY", life),
            "127.0.0.1:8080 DISCONNECTED by local GOAWAY: 964 tps (2.072 secs for 2000 reqs \
             1998 rsps 2 rsts 2003 streams)"
        );
        let http1 = Counts {
            pushes: 0,
            http1: true,
            ..counts
        };
        assert_eq!(http1.to_string(), "2000 reqs 1998 rsps 2 unanswered");
        assert_eq!(http1.tps(Duration::ZERO), 0.0);
    }

    /// The server's line says a timeout or a transport failure once, in the
    /// core's words, not inside its error form ("by error (by request head
    /// timeout)").
    #[test]
    fn timeouts_and_transport_failures_are_said_once() {
        for (cause, words) in [
            (CloseCause::HeadReadTimeout, "by request head timeout"),
            (CloseCause::DrainExpired, "by drain timeout"),
            (CloseCause::KeepaliveTimeout, "by keep-alive PING timeout"),
            (
                CloseCause::TransportError("reset".into()),
                "by transport error: reset",
            ),
        ] {
            assert_eq!(Ending::server(&cause, H2, None).to_string(), words);
        }
    }
}
