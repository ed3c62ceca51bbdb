//! `--listen`: the notification server a client runs beside its
//! connections, built as `h2sim server` builds one (its command line, so
//! its rules, TLS listeners and defaults stay the server's own), with the
//! run's `client::listener::Inbox` watching what arrives.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::client::app::Plan;

use crate::options::client::ClientArgs;
use crate::options::server::{self, ServerArgs};
use crate::options::{UsageError, cli, usage};

/// The methods notifications and callbacks use; each is answered 204 (No
/// Content, as TS 29.510's NFStatusNotify and TS 29.503's callbacks are)
/// unless `--listen-rules` says otherwise.
const METHODS: [&str; 5] = ["POST", "PUT", "PATCH", "DELETE", "GET"];

/// The notification server's arguments, when the run listens.
pub fn listener_args(args: &ClientArgs) -> Result<Option<ServerArgs>, UsageError> {
    let Some(url) = &args.listen else {
        return Ok(None);
    };
    let mut line: Vec<String> = vec!["h2sim".into(), "server".into(), "-S".into(), url.clone()];
    if args.quiet {
        line.push("-q".into());
    }
    match &args.listen_rules {
        Some(file) => {
            line.push("--rules".into());
            line.push(file.display().to_string());
        }
        None => {
            for method in METHODS {
                line.extend(["-m", method, "-s", "204"].map(String::from));
            }
        }
    }
    let matches = cli::command()
        .try_get_matches_from(line)
        .map_err(|e| usage(format!("--listen: {}", cli::one_line(&e))))?;
    let Some(("server", m)) = matches.subcommand() else {
        return Err(usage("--listen: not a server command line"));
    };
    server::from_matches(m, Path::new("."))
        .map(Some)
        .map_err(|e| usage(format!("--listen: {e}")))
}

/// `--listen-linger`: the wait between the run's last response and the
/// listener's shutdown, in short pauses so that Ctrl-C (which stops the
/// plan) ends it at once. Each runtime sleeps the pauses its own way.
pub struct Linger<'a> {
    until: Instant,
    plan: &'a Plan,
}

impl<'a> Linger<'a> {
    /// How often a lingering run looks at Ctrl-C.
    const PAUSE: Duration = Duration::from_millis(20);

    pub fn new(args: &ClientArgs, plan: &'a Plan) -> Self {
        Linger {
            until: Instant::now() + args.listen_linger,
            plan,
        }
    }

    /// The next pause to sleep, or `None` when the wait is over.
    pub fn next_pause(&self) -> Option<Duration> {
        let left = self.until.saturating_duration_since(Instant::now());
        (!left.is_zero() && !self.plan.is_stopping()).then(|| left.min(Self::PAUSE))
    }
}
