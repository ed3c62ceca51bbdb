//! The command line as clap sees it: the subcommands, their typed options
//! with defaults and ranges, the generated help, and clap's errors turned
//! into one line. The order-dependent rule and step options are added by
//! `server::command`/`client::command` through `grammar`.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, Command, CommandFactory, Parser, Subcommand};

use super::{Runtime, UsageError, usage};
use crate::help;

/// `h2sim`: the top level, for dispatch and completions.
#[derive(Debug, Parser)]
#[command(
    name = "h2sim",
    version,
    about = "HTTP/2 and HTTP/1.1 simulator for 5G SBI network functions",
    long_about = help::TOP,
    subcommand_required = true,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Sub,
}

/// The subcommands. Only their definitions are used (main dispatches on
/// the matches), so the size difference between variants costs nothing.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)]
pub enum Sub {
    /// Answer requests by rules (a successor of h2svr)
    #[command(long_about = help::SERVER_ABOUT)]
    Server(ServerFlags),
    /// Drive request scenarios (a successor of h2cli)
    #[command(long_about = help::CLIENT_ABOUT)]
    Client(ClientFlags),
    /// Server and client in one process on loopback: h2simple's performance test
    #[command(long_about = help::BENCH)]
    Bench(BenchFlags),
    /// One report from several `client --json` reports
    #[command(long_about = help::MERGE)]
    Merge(MergeFlags),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(CompletionsFlags),
}

/// `h2sim server`: the options whose order does not matter; the rule
/// grammar (`-S -k -c -V -m ... -o ... --rules`) is added by
/// `server::command`.
#[derive(Debug, Args)]
#[command(
    disable_version_flag = true,
    after_long_help = help::SERVER_AFTER
)]
pub struct ServerFlags {
    /// HTTP/2 setting: header_table_size, enable_push, max_concurrent_streams,
    /// initial_window_size, max_frame_size, max_header_list_size,
    /// enable_connect_protocol; or h2simple's req_max_per_sess,
    /// single_request (repeatable)
    #[arg(short = 'H', long = "setting", value_name = "NAME=VALUE")]
    pub settings: Vec<String>,
    /// Plain listeners speak HTTP/1.1 only (an `Upgrade: h2c` request is answered in HTTP/1.1)
    #[arg(short = '1', long)]
    pub http1: bool,
    /// Plain listeners speak HTTP/2 only (prior knowledge, like nghttpd):
    /// other input gets GOAWAY(PROTOCOL_ERROR), not an HTTP/1.1 answer
    #[arg(short = '2', long, conflicts_with = "http1")]
    pub http2: bool,
    /// No per-request output
    #[arg(short, long)]
    pub quiet: bool,
    /// No protocol trace (overrides -v)
    #[arg(short = 'Q', long)]
    pub no_trace: bool,
    /// Trace HTTP/2 frames
    #[arg(short, long)]
    pub verbose: bool,
    /// Close connections idle for DURATION (30s, 500ms, 2m); one that never
    /// sends is accepted 1s after it connected (TCP_DEFER_ACCEPT)
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = above_zero)]
    pub idle_timeout: Option<Duration>,
    /// End a connection whose request head (or HTTP/2 preface) is still
    /// incomplete DURATION after its first byte (slowloris), or that sent
    /// nothing DURATION after its accept [default: 30s]
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = above_zero)]
    pub head_read_timeout: Option<Duration>,
    /// Drop a TLS connection whose handshake is not done within DURATION
    /// of its accept [default: 10s]; one that sends nothing is accepted 1s
    /// after it connected (the kernel holds it back: TCP_DEFER_ACCEPT)
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = above_zero)]
    pub handshake_timeout: Option<Duration>,
    /// Take N requests on a connection, then end it gracefully: HTTP/2 with
    /// one GOAWAY naming the Nth stream, HTTP/1.1 with `connection: close`
    /// on the Nth answer (nginx's keepalive_requests; tests how clients
    /// move to a new connection)
    #[arg(long, value_name = "N", value_parser = request_limit)]
    pub requests_per_connection: Option<NonZeroU32>,
    /// HTTP/2: the connection's receive window, 65535 to 1024m [default:
    /// 8m], raised from the 65,535 every connection starts with by a
    /// WINDOW_UPDATE at start (RFC 9113 §6.9.2; it has no setting; 64k is
    /// 65,536, an increment of 1). 65535, nghttpd's, sends none: a client
    /// that queues all a window lets out stays small (Node's http2 client
    /// refuses its own streams past 10 MB queued, met by 100 uploads of 100
    /// KiB against 8m)
    #[arg(allow_negative_numbers = true, long, value_name = "N|Nk|Nm", value_parser = connection_window)]
    pub connection_window: Option<u32>,
    /// The largest request body taken, over HTTP/1.1 and HTTP/2 alike
    /// [default: 64m]; a larger one is answered 413 (see REQUEST BODIES
    /// below)
    #[arg(allow_negative_numbers = true, long, value_name = "N|Nk|Nm|Ng", value_parser = request_body_limit)]
    pub request_body_limit: Option<u64>,
    /// Which runtime drives the sockets (see below)
    #[arg(long, value_enum, default_value_t = Runtime::Tokio)]
    pub runtime: Runtime,
    /// Worker threads (tokio) or cores (glommio); 0 or unset: one per core
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = thread_count)]
    pub threads: Option<usize>,
}

/// `h2sim client`: the options whose order does not matter; the step
/// grammar (`-m -u -s -a -p -x -t -b -f -e`) is added by `client::command`.
#[derive(Debug, Args)]
#[command(
    disable_version_flag = true,
    after_long_help = help::CLIENT_AFTER,
    // One URI: the positional is a list only so that a second one gets
    // "give one URI" rather than clap's own words.
    override_usage = "h2sim client [OPTIONS] [URI]"
)]
pub struct ClientFlags {
    /// One request to this URI (GET unless -m says otherwise); step options
    /// before any -m apply to it
    #[arg(value_name = "URI")]
    pub target: Vec<String>,
    /// Scenarios in flight per connection (streams, or pipelined HTTP/1.1 requests)
    #[arg(short = 'P', long, value_name = "N", allow_negative_numbers = true, default_value_t = 1,
          value_parser = at_least_one, help_heading = "Run")]
    pub parallel: u64,
    /// Scenarios to run [default: 1, or unbounded with --duration]
    #[arg(short = 'C', long, value_name = "N", allow_negative_numbers = true,
          value_parser = at_least_one, help_heading = "Run")]
    pub count: Option<u64>,
    /// Run for DURATION (30s, 2m) instead of a count
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = above_zero, help_heading = "Run",
          conflicts_with = "count")]
    pub duration: Option<Duration>,
    /// Do not count the requests of the first DURATION (--duration starts
    /// after it; needs --duration)
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = duration, help_heading = "Run")]
    pub warmup: Option<Duration>,
    /// Start N scenarios per second over all connections; a connection
    /// grows past -P (to at most 1024) when the rate needs it (see below)
    #[arg(allow_negative_numbers = true, short = 'T', long, value_name = "N", value_parser = rate, help_heading = "Run")]
    pub tps: Option<f64>,
    /// Connections to each server
    #[arg(short = 'S', long = "connections-per-server", value_name = "N", allow_negative_numbers = true, default_value_t = 1,
          value_parser = per_server, help_heading = "Run")]
    pub connections: u64,
    /// Another instance to load (scheme://host:port, repeatable); each
    /// scenario runs on one server, with its authority
    #[arg(long = "server", value_name = "URL", help_heading = "Run")]
    pub servers: Vec<String>,
    /// Connections in all, dealt out over the servers (instead of -S)
    #[arg(long = "connections", value_name = "N", allow_negative_numbers = true,
          value_parser = at_least_one, conflicts_with = "connections", help_heading = "Run")]
    pub total_connections: Option<u64>,
    /// Replace SYM in paths, header values and bodies by the scenario
    /// number, printf-style (e.g. __MDN__=01092%06d)
    #[arg(
        short = 'R',
        long = "replace",
        value_name = "SYM=FORMAT",
        help_heading = "Run"
    )]
    pub symbols: Vec<String>,
    /// Scenario numbers wrap at N
    #[arg(short = 'M', long, value_name = "N", allow_negative_numbers = true,
          value_parser = at_least_one, help_heading = "Run")]
    pub wrap: Option<u64>,
    /// Send again, up to 3 times, a request that was reset or lost with
    /// its connection (not one that timed out); replaces lost connections
    #[arg(short, long, help_heading = "Run")]
    pub retry: bool,
    /// Reset a request unanswered after DURATION
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = above_zero, help_heading = "Run")]
    pub timeout: Option<Duration>,
    /// Replace a lost connection at most N times in a row, per connection
    /// [default: 3 with -r or --requests-per-connection, else never];
    /// planned ends reconnect without limit (see below; h2simple's -H
    /// reconn_max=N)
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        help_heading = "Connections"
    )]
    pub reconnect_max: Option<u32>,
    /// Close a connection gracefully after N requests and open a new one
    /// (connection churn; h2simple's -H req_max_per_sess=N)
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least_one,
          help_heading = "Connections")]
    pub requests_per_connection: Option<u64>,
    /// HTTP/2: send a PING when nothing came for DURATION, and end the
    /// connection if its answer does not come within DURATION (long idle
    /// runs; HTTP/1.1 has no PING)
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = above_zero, help_heading = "Connections")]
    pub keepalive: Option<Duration>,
    /// How long a connection may take to come up: the TCP connect and the
    /// TLS handshake, then the server's acknowledgement of our HTTP/2
    /// SETTINGS (RFC 9113 §6.5.3) [default: 10s]; thousands of connections
    /// to one busy server may need more
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = above_zero, help_heading = "Connections")]
    pub connect_timeout: Option<Duration>,
    /// Private key (PEM) to present when the server asks (https only)
    #[arg(short = 'k', long, value_name = "FILE", help_heading = "TLS")]
    pub key: Option<PathBuf>,
    /// Certificate chain (PEM) to present when the server asks (https only)
    #[arg(short = 'c', long, value_name = "FILE", help_heading = "TLS")]
    pub cert: Option<PathBuf>,
    /// Server certificate check: none (default) | verify (or peer) | pass,
    /// with trust_file=PEM, trust_dir=DIR (else the system's trust store),
    /// crl, crl_all, purpose (see TLS below); comma-separated
    #[arg(short = 'V', long, value_name = "SPEC", help_heading = "TLS")]
    pub verify: Option<String>,
    /// HTTP/2 setting (as the server's -H), or h2simple's reconn_max,
    /// req_max_per_sess, single_request (repeatable)
    #[arg(
        short = 'H',
        long = "setting",
        value_name = "NAME=VALUE",
        help_heading = "Protocol"
    )]
    pub settings: Vec<String>,
    /// HTTP/1.1 instead of HTTP/2
    #[arg(short = '1', long, help_heading = "Protocol")]
    pub http1: bool,
    /// HTTP/2: the connection's receive window, 65535 to 1024m [default:
    /// 8m], raised from the 65,535 every connection starts with by a
    /// WINDOW_UPDATE at start (h2load's -W N sets 2^N-1, e.g. -W 30 is
    /// --connection-window 1024m less one; 64k is 65,536)
    #[arg(allow_negative_numbers = true, long, value_name = "N|Nk|Nm", value_parser = connection_window,
          help_heading = "Protocol")]
    pub connection_window: Option<u32>,
    /// No per-request output (a progress bar on a terminal)
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,
    /// Trace HTTP/2 frames
    #[arg(short, long, help_heading = "Output")]
    pub verbose: bool,
    /// No protocol trace (overrides -v)
    #[arg(short = 'Q', long, help_heading = "Output")]
    pub no_trace: bool,
    /// Print transactions taking MS milliseconds or more (from the intended
    /// send time), numbered, with request and response
    #[arg(short = 'D', long, value_name = "MS", help_heading = "Output")]
    pub dump_slow: Option<u64>,
    /// Write the report as JSON (histograms mergeable with `h2sim merge`);
    /// `-`: on standard output, the text report and dumps then on standard
    /// error
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<PathBuf>,
    /// The steps from a scenario file (YAML or TOML; see
    /// examples/README-client.md), instead of -m steps; the target is the
    /// URI argument (scheme://host:port) or -s/-a
    #[arg(long, value_name = "FILE", help_heading = "Run")]
    pub scenario: Option<PathBuf>,
    /// Serve notifications on this URL (http:// or https://ip:port) during
    /// the run: answered 204 (or by --listen-rules), counted, and timed
    /// from the request of the scenario whose value they carry
    #[arg(long, value_name = "URL", help_heading = "Notifications")]
    pub listen: Option<String>,
    /// Answer notifications by these rules (the server's --rules file)
    /// instead of 204
    #[arg(
        long,
        value_name = "FILE",
        requires = "listen",
        help_heading = "Notifications"
    )]
    pub listen_rules: Option<PathBuf>,
    /// Keep serving notifications for DURATION after the run's last
    /// response (Ctrl-C cuts it short), for those that follow the last
    /// requests; the run's rates still end at its last response
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = duration,
        requires = "listen",
        help_heading = "Notifications"
    )]
    pub listen_linger: Option<Duration>,
    /// OAuth2 token endpoint (RFC 6749 client credentials, TS 33.501
    /// §13.4.1), e.g. http://nrf:8080/oauth2/token: a token is fetched
    /// before the run, renewed before it expires, and sent as
    /// authorization: Bearer on every request; each token request waits
    /// --timeout for its answer [default: 10s]
    #[arg(long, value_name = "URL", help_heading = "OAuth2")]
    pub token_url: Option<String>,
    /// The token request's nfInstanceId (the client's id)
    #[arg(
        long,
        visible_alias = "client-id",
        value_name = "ID",
        requires = "token_url",
        help_heading = "OAuth2"
    )]
    pub nf_instance_id: Option<String>,
    /// The token request's nfType (the requester's, e.g. AMF)
    #[arg(
        long,
        value_name = "TYPE",
        requires = "token_url",
        help_heading = "OAuth2"
    )]
    pub nf_type: Option<String>,
    /// The token request's targetNfType (e.g. UDM)
    #[arg(
        long,
        value_name = "TYPE",
        requires = "token_url",
        help_heading = "OAuth2"
    )]
    pub target_nf_type: Option<String>,
    /// The token request's scope (service names, e.g. nudm-sdm)
    #[arg(
        long,
        value_name = "SCOPE",
        requires = "token_url",
        help_heading = "OAuth2"
    )]
    pub scope: Option<String>,
    /// Which runtime drives the sockets (see below)
    #[arg(long, value_enum, default_value_t = Runtime::Tokio, help_heading = "Runtime")]
    pub runtime: Runtime,
    /// Worker threads (tokio) or cores (glommio); 0 or unset: one per core
    #[arg(long, value_name = "N", help_heading = "Runtime", allow_negative_numbers = true,
          value_parser = thread_count)]
    pub threads: Option<usize>,
}

/// `h2sim bench`.
#[derive(Debug, Args)]
#[command(disable_version_flag = true)]
pub struct BenchFlags {
    /// Requests per cell, instead of the 2 s each cell runs by default
    #[arg(short = 'C', long, value_name = "N", allow_negative_numbers = true, default_value_t = 20_000,
          hide_default_value = true, value_parser = at_least_one)]
    pub count: u64,
    /// Streams (or pipelined requests) per connection
    #[arg(short = 'P', long, value_name = "N", allow_negative_numbers = true, default_value_t = 100,
          value_parser = in_flight)]
    pub parallel: u64,
    /// Run each cell for DURATION [default: 2s]
    #[arg(allow_hyphen_values = true, long, value_name = "DURATION", value_parser = above_zero, conflicts_with = "count")]
    pub duration: Option<Duration>,
    /// Threads: half (at least one) for the server, the rest for the client; with one, the two share it; 0 or unset: one per core
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = thread_count)]
    pub threads: Option<usize>,
}

/// `h2sim merge`.
#[derive(Debug, Args)]
#[command(disable_version_flag = true)]
pub struct MergeFlags {
    /// Also write the merged report as JSON, so merged runs merge again;
    /// `-`: on standard output, the text report then on standard error
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Reports written by `h2sim client --json FILE`
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<String>,
}

/// `h2sim completions SHELL`.
#[derive(Debug, Args)]
#[command(
    disable_version_flag = true,
    after_long_help = "EXAMPLES\n  h2sim completions bash > /etc/bash_completion.d/h2sim\n  h2sim completions zsh > \"${fpath[1]}/_h2sim\"\n  h2sim completions fish > ~/.config/fish/completions/h2sim.fish"
)]
pub struct CompletionsFlags {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The whole command line, with the grammars added to `server` and `client`.
pub fn command() -> Command {
    Cli::command()
        .mut_subcommand("server", super::server::add_grammar)
        .mut_subcommand("client", super::client::add_grammar)
}

/// A subcommand's own command (for tests parsing the arguments after it).
#[cfg(test)]
pub fn subcommand(name: &'static str) -> Command {
    let mut top = command();
    match top.find_subcommand_mut(name) {
        Some(sub) => sub.clone().no_binary_name(true),
        None => Command::new(name).no_binary_name(true),
    }
}

/// What an h2load user types, in h2sim's flags (h2simple's where they
/// differ: its `-m` is the method, its `-D` dumps slow requests).
pub const H2LOAD_FLAGS: &str =
    "h2load's -n is -C here, -c is -S, -m is -P, -D is --duration and -d is -f (see --help)";

/// clap's error as one line naming the option (the usage and tips clap
/// adds are left out: `--help` has them).
pub fn one_line(error: &clap::Error) -> UsageError {
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    let arg = context(ContextKind::InvalidArg);
    let value = context(ContextKind::InvalidValue);
    let line = match (error.kind(), arg, value) {
        (ErrorKind::UnknownArgument, Some(arg), _) => {
            let shown = arg.split('=').next().unwrap_or(&arg).to_owned();
            let client = matches!(error.get(ContextKind::Usage),
                Some(ContextValue::StyledStr(u)) if u.to_string().contains(" client "));
            match shown.as_str() {
                "-n" if client => format!("unknown option -n: {H2LOAD_FLAGS}"),
                _ => format!("unknown option {shown} (see --help)"),
            }
        }
        (ErrorKind::MissingRequiredArgument, _, _) => {
            let missing = match error.get(ContextKind::InvalidArg) {
                Some(ContextValue::Strings(v)) => v.join(" "),
                _ => String::new(),
            };
            format!("missing {missing} (see --help)")
        }
        (ErrorKind::ArgumentConflict, Some(arg), _) => {
            let other = context(ContextKind::PriorArg).unwrap_or_default();
            format!(
                "{} cannot be used with {}",
                short_name(&arg),
                short_name(&other)
            )
        }
        (ErrorKind::InvalidSubcommand, _, _) => {
            let name = context(ContextKind::InvalidSubcommand).unwrap_or_default();
            format!("unknown command {name:?} (server, client, bench, merge or completions)")
        }
        (ErrorKind::InvalidValue, Some(arg), Some(v)) if v.is_empty() => {
            format!("{} needs a value", short_name(&arg))
        }
        (ErrorKind::NoEquals | ErrorKind::TooFewValues, Some(arg), _) => {
            format!("{} needs a value", short_name(&arg))
        }
        (ErrorKind::ValueValidation | ErrorKind::InvalidValue, Some(arg), Some(v)) => {
            let reason = error
                .source()
                .map(|s| s.to_string())
                .or_else(|| {
                    context(ContextKind::ValidValue).map(|_| {
                        let valid = match error.get(ContextKind::ValidValue) {
                            Some(ContextValue::Strings(v)) => v.join(", "),
                            _ => String::new(),
                        };
                        format!("expected one of {valid}")
                    })
                })
                .unwrap_or_else(|| "invalid value".to_owned());
            format!("{} {v:?}: {reason}", short_name(&arg))
        }
        _ => {
            let rendered = error.render().to_string();
            let first = rendered.lines().next().unwrap_or("bad command line");
            first.trim_start_matches("error: ").to_owned()
        }
    };
    usage(line)
}

/// `--parallel <N>` as `-P/--parallel`: clap names an argument by its long
/// form with its value, whichever form was typed.
fn short_name(arg: &str) -> String {
    let name = arg.split([' ', '=']).next().unwrap_or(arg);
    let Some(long) = name.strip_prefix("--") else {
        return name.to_owned();
    };
    let top = command();
    let short = top
        .get_subcommands()
        .flat_map(|sub| sub.get_arguments())
        .find(|a| a.get_long() == Some(long))
        .and_then(|a| a.get_short());
    match short {
        Some(c) => format!("-{c}/{name}"),
        None => name.to_owned(),
    }
}

use std::error::Error as _;

/// `30s`, `500ms`, `2m`, or plain seconds, as clap's value parser.
fn duration(value: &str) -> Result<Duration, String> {
    super::duration("", value).map_err(|_| "not a duration (30s, 500ms, 2m, or seconds)".to_owned())
}

/// A duration for which 0 means nothing sensible (a run of no time, a
/// request that fails as it is sent, a PING answer due at once, a server
/// connection ended as soon as it is idle, its head begun or its TLS
/// handshake started).
fn above_zero(value: &str) -> Result<Duration, String> {
    match duration(value)? {
        d if d.is_zero() => Err("must be above 0".to_owned()),
        d => Ok(d),
    }
}

/// A count of at least 1. The counts take negative numbers as values
/// (`allow_negative_numbers`), to be told here: `-C -5` was "unknown
/// option -5", naming neither -C nor what was wrong.
fn at_least_one(value: &str) -> Result<u64, String> {
    match value.trim().parse::<u64>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) if value.trim().parse::<i64>().is_ok() => {
            Err("a count cannot be negative".to_owned())
        }
        Err(_) => Err("not a valid number".to_owned()),
    }
}

/// Threads past this many are refused: a thread each costs a stack and,
/// on glommio, pinned I/O memory, and a number meant as something else
/// (a count of connections) would try to start them all.
const MAX_THREADS: usize = 1024;

/// `--threads`: 0 (one per core) up to [`MAX_THREADS`].
fn thread_count(value: &str) -> Result<usize, String> {
    match value.trim().parse::<u64>() {
        Ok(n) if n <= MAX_THREADS as u64 => Ok(n as usize),
        Ok(_) => Err(format!("at most {MAX_THREADS} (0 or unset: one per core)")),
        Err(_) if value.trim().parse::<i64>().is_ok() => {
            Err("a count cannot be negative".to_owned())
        }
        Err(_) => Err("not a valid number".to_owned()),
    }
}

/// Connections to one server past this many cannot be made: a client
/// address has 65,535 ports to one server address (fewer by
/// `ip_local_port_range`), and each connection's state is made at start.
pub const MAX_PER_SERVER: u64 = 65_535;

/// `-S`: at least one connection, at most [`MAX_PER_SERVER`].
fn per_server(value: &str) -> Result<u64, String> {
    up_to_per_server(value, "a client address has no more ports to one server")
}

/// The bench's `-P`: its HTTP/1.1 cells take that many connections, one
/// for each 10 in flight, so it is bounded as `-S` is.
fn in_flight(value: &str) -> Result<u64, String> {
    up_to_per_server(
        value,
        "the HTTP/1.1 cells spread them over a connection for each 10",
    )
}

/// At least one, at most [`MAX_PER_SERVER`], for the reason `why`.
fn up_to_per_server(value: &str, why: &str) -> Result<u64, String> {
    let n = at_least_one(value)?;
    if n > MAX_PER_SERVER {
        return Err(format!("at most {MAX_PER_SERVER}: {why}"));
    }
    Ok(n)
}

/// The server's `--requests-per-connection`: what the core counts in.
fn request_limit(value: &str) -> Result<NonZeroU32, String> {
    let n = at_least_one(value)?;
    u32::try_from(n)
        .ok()
        .and_then(NonZeroU32::new)
        .ok_or_else(|| format!("must be at most {}", u32::MAX))
}

/// `--connection-window`: at least the 65,535 every connection starts
/// with (a WINDOW_UPDATE can only raise it, RFC 9113 §6.9.2), at most
/// 1 GiB (the sizes' bound; HTTP/2's is 2^31-1, §6.9.1).
fn connection_window(value: &str) -> Result<u32, String> {
    match crate::body::parse_size(value) {
        Some(n) if n >= 65_535 => u32::try_from(n).map_err(|e| e.to_string()),
        _ => Err(
            "from 65535 (the window every connection starts with; 64k is 65536) to 1024m, \
             as N, Nk or Nm"
                .to_owned(),
        ),
    }
}

/// The server's `--request-body-limit`: any size, 0 included (a server
/// that takes no body).
fn request_body_limit(value: &str) -> Result<u64, String> {
    crate::body::parse_limit(value).ok_or_else(|| "not a size (N, Nk, Nm or Ng)".to_owned())
}

/// `-T`: a rate within [`MIN_RATE`] and [`MAX_RATE`].
fn rate(value: &str) -> Result<f64, String> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|r| (MIN_RATE..=MAX_RATE).contains(r))
        .ok_or_else(|| "a rate from 0.001 to 1000000000 requests per second".to_owned())
}

/// `-T`'s bounds: the send interval (connections / rate) must be a
/// duration (one send in about 17 minutes at the slowest; `-T 1e-300`
/// overflowed it and panicked), and no machine sends a billion a second.
const MIN_RATE: f64 = 0.001;
const MAX_RATE: f64 = 1e9;
