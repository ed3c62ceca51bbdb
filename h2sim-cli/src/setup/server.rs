//! A server's parts whatever the runtime, and its closing summary.

use std::process::ExitCode;
use std::sync::Arc;

use super::config::config_with;
use crate::options::UsageError;
use crate::options::server::ServerArgs;
use crate::options::tls::server_tls_files;
use crate::server::app::{Shared, Totals};
use crate::trace::{self, Trace};

/// What a server needs whatever the runtime: the core's configuration,
/// the listeners (address and TLS), and the rules' shared state.
pub struct ServerParts {
    pub config: h2sim_proto::Config,
    pub listeners: Vec<(String, Option<Arc<rustls::ServerConfig>>)>,
    pub shared: Arc<Shared>,
}

pub fn server_parts(args: &ServerArgs) -> Result<ServerParts, UsageError> {
    let mut config = config_with(&args.settings)?;
    config.trace_frames = args.verbose && !args.no_trace;
    let mut listeners = Vec::new();
    for listen in &args.listen {
        let tls = match &listen.tls {
            Some(files) => Some(server_tls_files(files)?),
            None => None,
        };
        listeners.push((listen.addr.to_string(), tls));
    }
    let mut shared = Shared::new(
        args.rules.clone(),
        (!args.quiet).then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>),
        (!args.quiet).then(|| Arc::new(trace::Stderr) as Arc<dyn Trace>),
    );
    shared.frames = config
        .trace_frames
        .then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>);
    let shared = Arc::new(shared);
    Ok(ServerParts {
        config,
        listeners,
        shared,
    })
}

pub fn print_listening(addrs: &[(std::net::SocketAddr, bool)]) {
    for (addr, secure) in addrs {
        eprintln!(
            "h2sim server listening on {}://{addr}",
            if *secure { "https" } else { "http" }
        );
    }
}

/// The server's closing summary, once every connection ended.
pub fn finish_server(args: &ServerArgs, shared: &Shared) -> ExitCode {
    let totals = shared.totals.lock().map(|t| t.clone()).unwrap_or_default();
    eprintln!("{}", server_summary(args, &totals));
    ExitCode::SUCCESS
}

fn server_summary(args: &ServerArgs, t: &Totals) -> String {
    let mut out = format!(
        "h2sim server: {} connections, {} requests, {} responses ({} 1xx, {} 2xx, {} 3xx, {} 4xx, {} 5xx), {} pushes, {} resets, {} unmatched",
        t.connections,
        t.requests,
        t.responses,
        t.status_classes[0],
        t.status_classes[1],
        t.status_classes[2],
        t.status_classes[3],
        t.status_classes[4],
        t.pushes,
        t.resets,
        t.not_found
    );
    for (i, rule) in args.rules.iter().enumerate() {
        out.push_str(&format!(
            "\n  rule {}: {} {}{} -> {}: {} hits",
            i + 1,
            rule.method,
            rule.authority
                .as_deref()
                .map(|a| format!("//{a}"))
                .unwrap_or_default(),
            rule.path_prefix.as_deref().unwrap_or("*"),
            rule.reply.status,
            t.rule_hits.get(i).copied().unwrap_or(0)
        ));
    }
    out
}
