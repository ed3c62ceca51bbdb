//! A server's parts whatever the runtime, and its closing summary.

use std::process::ExitCode;
use std::sync::Arc;

use super::config::config_with;
use h2sim_proto::host::{AcceptErrorHook, HandshakeErrorHook, ListenerSpec, ServerOptions};

use crate::options::server::ServerArgs;
use crate::options::tls::server_tls_files;
use crate::options::{UsageError, usage};
use crate::server::app::{Shared, Totals};
use crate::server::rules::Kind;
use crate::trace::{self, Trace, errln};

/// What a server needs whatever the runtime: the listeners, the adapter
/// options (all but the runtime's own part), and the rules' shared state.
pub struct ServerParts<R> {
    pub specs: Vec<ListenerSpec>,
    pub options: ServerOptions<R>,
    pub shared: Arc<Shared>,
}

/// `runtime`: the adapter's own part of its options (glommio's executors).
pub fn server_parts<R: Default>(
    args: &ServerArgs,
    runtime: R,
) -> Result<ServerParts<R>, UsageError> {
    let mut config = config_with(&args.settings, args.connection_window)?;
    config.trace_frames = args.verbose && !args.no_trace;
    if args.idle_timeout.is_some() {
        config.idle_timeout = args.idle_timeout;
    }
    if args.head_read_timeout.is_some() {
        config.head_read_timeout = args.head_read_timeout;
    }
    config.max_requests = args.requests_per_connection;
    if let Some(limit) = args.request_body_limit {
        config.max_request_body = limit;
    }
    let mut specs = Vec::new();
    for listen in &args.listen {
        let addr = listen.addr.to_string();
        let spec = match &listen.tls {
            Some(files) => ListenerSpec::tls(&addr, server_tls_files(files)?),
            None => ListenerSpec::plain(&addr),
        };
        specs.push(spec.map_err(|e| usage(format!("-S {addr}: {e}")))?);
    }
    let mut shared = Shared::new(
        args.rules.clone(),
        (!args.quiet).then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>),
        (!args.quiet).then(|| Arc::new(trace::Stderr) as Arc<dyn Trace>),
    )
    .with_store(args.store);
    shared.frames = config
        .trace_frames
        .then(|| Arc::new(trace::Stdout) as Arc<dyn Trace>);
    shared.notifier.set_log(Arc::new(trace::Stderr));
    let mut options = ServerOptions {
        plain_protocol: args.plain_protocol,
        // Even with -q (which hides per-request output): a rejected
        // handshake is an error nothing else reports, as h2svr printed it.
        on_handshake_error: Some(HandshakeErrorHook::new(|peer, why| {
            errln!("{peer} TLS handshake failed: {why}");
        })),
        on_accept_error: Some(AcceptErrorHook::new(accept_failed)),
        config,
        runtime,
        ..ServerOptions::default()
    };
    if let Some(timeout) = args.handshake_timeout {
        options.handshake_timeout = timeout;
    }
    Ok(ServerParts {
        specs,
        options,
        shared: Arc::new(shared),
    })
}

/// One line per listener, `who` naming what listens ("h2sim server", or a
/// client's notification listener), so a script can wait for the line.
pub fn print_listening(who: &str, addrs: &[(std::net::SocketAddr, bool)]) {
    for (addr, secure) in addrs {
        errln!(
            "{who} listening on {}://{addr}",
            if *secure { "https" } else { "http" }
        );
    }
}

/// Failing accepts, said even with -q (at most a line per 10 s): out of
/// file descriptors, the server keeps serving what it has while new
/// clients wait in the listen queue, and nothing else would say why.
fn accept_failed(listener: Option<std::net::SocketAddr>, error: &std::io::Error, failures: u64) {
    const ENFILE: i32 = 23;
    const EMFILE: i32 = 24;
    let on = listener.map(|a| format!(" on {a}")).unwrap_or_default();
    let times = if failures > 1 {
        format!(" ({failures} times since the last line)")
    } else {
        String::new()
    };
    let hint = match error.raw_os_error() {
        Some(EMFILE | ENFILE) => {
            "; new connections wait in the listen queue until some close (raise `ulimit -n`)"
        }
        _ => "",
    };
    errln!("h2sim server: cannot accept{on}: {error}{times}{hint}");
}

/// The server's closing summary, once every connection ended.
pub fn finish_server(args: &ServerArgs, shared: &Shared) -> ExitCode {
    let totals = shared.totals.lock().map(|t| t.clone()).unwrap_or_default();
    trace::print_err(&server_summary(args, &totals));
    if let Some(line) = nf_summary(args, shared) {
        trace::print_err(&line);
    }
    ExitCode::SUCCESS
}

/// The store's size, the tokens issued and what notifications did, when
/// the rules use them.
fn nf_summary(args: &ServerArgs, shared: &Shared) -> Option<String> {
    let uses = |f: fn(&Kind) -> bool| args.rules.iter().any(|r| f(&r.kind));
    let mut lines = Vec::new();
    if uses(|k| matches!(k, Kind::Resource(_))) {
        let (items, bytes) = shared.store.size();
        let limits = shared.store.limits();
        lines.push(format!(
            "  store: {items} items, {bytes} bytes (limits {} items, {} bytes)",
            limits.max_items, limits.max_bytes
        ));
    }
    if uses(|k| matches!(k, Kind::Token(_))) {
        lines.push(format!("  tokens: {} held", shared.tokens.len()));
    }
    if args.rules.iter().any(|r| !r.notify.is_empty()) {
        lines.push(format!("  {}", shared.notifier.stats().line()));
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// How the server connects to callback URIs for notifications, whatever
/// the runtime (`runtime`: the adapter's part): HTTP/2, replacing a lost
/// connection a few times while notifications wait, and for `https://`
/// callbacks TLS without verifying the peer, as the client does by default.
pub fn notify_options<R: Default>(runtime: R) -> h2sim_proto::host::ClientOptions<R> {
    h2sim_proto::host::ClientOptions {
        reconnect: Some(h2sim_proto::host::Reconnect {
            max_attempts: 3,
            delay: std::time::Duration::from_millis(100),
        }),
        runtime,
        ..h2sim_proto::host::ClientOptions::default()
    }
}

/// `options` for `target`: with TLS when it is `https://`.
pub fn notify_target_options<R: Clone>(
    options: &h2sim_proto::host::ClientOptions<R>,
    target: &str,
) -> h2sim_proto::host::ClientOptions<R> {
    let mut options = options.clone();
    if target.starts_with("https://") {
        options.tls = crate::options::tls::client_tls(&Default::default()).ok();
    }
    options
}

fn server_summary(args: &ServerArgs, t: &Totals) -> String {
    let mut out = format!(
        "h2sim server: {} connections, {} requests, {} responses ({} 1xx, {} 2xx, {} 3xx, {} 4xx, {} 5xx), {} pushes, {} resets, {} unanswered, {} refused, {} unmatched",
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
        t.unanswered,
        t.refused,
        t.not_found
    );
    if t.bytes_unsent > 0 {
        out.push_str(&format!(
            ", {} of {} body bytes unsent",
            t.bytes_unsent, t.bytes_out
        ));
    }
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
            rule.answers(),
            t.rule_hits.get(i).copied().unwrap_or(0)
        ));
    }
    out
}
