//! `--token-url`: the token fetched before the run and renewed during it.
//! One thread of its own runs the requests (on a current-thread tokio
//! runtime through the adapter's `fetch`, whichever runtime drives the
//! run's connections): a token request every three quarters of a
//! lifetime does not belong on the hot path of either runtime. Every
//! token request waits at most the spec's `wait` (`--timeout`, else 10 s):
//! a first token that does not come stops the client before its run, and
//! a renewal that does not come keeps the token the run has, so a hung
//! endpoint shows as renewal lines and, once that token expires, as the
//! server's refusals, never as a client that waits for ever.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use h2sim_tokio::{ClientOptions, ClientProtocol, FetchRequest};

use crate::client::token::{Bearer, Grant, TokenError, TokenSpec, parse_grant};
use crate::signals::Interrupt;
use crate::trace::errln;

/// The run's token; dropping it stops the renewals.
pub struct Renewal {
    pub bearer: Arc<Bearer>,
    _stop: mpsc::Sender<()>,
}

/// How long to wait before asking again after a failed renewal (the old
/// token is kept meanwhile).
const RETRY: Duration = Duration::from_secs(1);

/// Fetches the first token (an error if none comes), then renews it in
/// the background until the `Renewal` is dropped. `None` when a Ctrl-C
/// (`interrupt`) came first: the wait ends at once, and so do the token
/// thread's renewals once its request does.
pub fn start(
    spec: TokenSpec,
    tls: Option<Arc<rustls::ClientConfig>>,
    http1: bool,
    interrupt: &Interrupt,
) -> Result<Option<Renewal>, TokenError> {
    // The first token, or `None` from the Ctrl-C. The Ctrl-C holds the
    // sender weakly: a token thread that ended without a word (a panic)
    // still ends the wait, as the last sender goes with it.
    let (first_tx, first_rx) = mpsc::channel();
    let first_tx = Arc::new(first_tx);
    let woken = Arc::downgrade(&first_tx);
    if !interrupt.watch(move || {
        if let Some(woken) = woken.upgrade() {
            let _ = woken.send(None);
        }
    }) {
        return Ok(None);
    }
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("h2sim-token".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = first_tx.send(Some(Err(TokenError::Transport(e.to_string()))));
                    return;
                }
            };
            let fetch = || runtime.block_on(fetch(&spec, tls.clone(), http1));
            let grant = fetch();
            let mut wait = grant.as_ref().ok().and_then(Grant::renew_after);
            let mut expires = grant.as_ref().ok().and_then(expiry);
            let bearer = grant.map(|g| Arc::new(Bearer::new(&g)));
            let _ = first_tx.send(Some(bearer.clone()));
            let Ok(bearer) = bearer else { return };
            while let Some(after) = wait {
                match stopped.recv_timeout(after) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                wait = match fetch() {
                    Ok(grant) => {
                        bearer.renew(&grant);
                        expires = expiry(&grant);
                        grant.renew_after()
                    }
                    Err(e) => {
                        let kept = match expires {
                            Some(at) if at <= Instant::now() => "the expired token",
                            _ => "the current token",
                        };
                        errln!(
                            "h2sim client: --token-url {}: renewal failed ({e}); requests keep {kept}, next try in {RETRY:?}",
                            spec.url()
                        );
                        Some(RETRY)
                    }
                };
            }
        })
        .map_err(|e| TokenError::Transport(e.to_string()))?;
    let first = first_rx
        .recv()
        .map_err(|_| TokenError::Transport("the token thread ended".into()))?;
    Ok(match first {
        Some(bearer) => Some(Renewal {
            bearer: bearer?,
            _stop: stop,
        }),
        None => None,
    })
}

/// When a token granted now expires, if the endpoint said.
fn expiry(grant: &Grant) -> Option<Instant> {
    grant.expires_in.map(|life| Instant::now() + life)
}

/// One token request, given up after `spec.wait`.
async fn fetch(
    spec: &TokenSpec,
    tls: Option<Arc<rustls::ClientConfig>>,
    http1: bool,
) -> Result<Grant, TokenError> {
    tokio::time::timeout(spec.wait, ask(spec, tls, http1))
        .await
        .map_err(|_| TokenError::Unanswered(spec.wait))?
}

async fn ask(
    spec: &TokenSpec,
    tls: Option<Arc<rustls::ClientConfig>>,
    http1: bool,
) -> Result<Grant, TokenError> {
    let (head, body) = spec.request();
    let options = ClientOptions {
        protocol: if http1 {
            ClientProtocol::Http1
        } else {
            ClientProtocol::Http2
        },
        tls,
        ..ClientOptions::default()
    };
    let outcomes = h2sim_tokio::fetch(
        &spec.origin(),
        options,
        1,
        vec![FetchRequest { head, body }],
    )
    .await
    .map_err(|e| TokenError::Transport(e.to_string()))?;
    match outcomes.into_iter().next() {
        Some(Ok(response)) => parse_grant(response.head.status, &response.body),
        Some(Err(e)) => Err(TokenError::Transport(e.to_string())),
        None => Err(TokenError::Transport("no response".into())),
    }
}
