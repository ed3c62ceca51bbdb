//! `h2sim client [options] [steps | URI]`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use clap::{ArgMatches, Command, FromArgMatches};
use h2sim_proto::HeaderField;

use super::cli::{self, ClientFlags};
use super::grammar::{self, Occurrence, Spec};
use super::tls::{TlsFiles, Verify};
use super::{H2simpleKey, Runtime, UsageError, header, scenario_file, usage};
use crate::body;
use crate::client::capture::{Capture, Expect};
use crate::client::scenario::{Step, literal_target, split_uri};
use crate::client::symbol::{Format, Symbol};
use crate::client::token::TokenSpec;
use crate::trace::errln;

/// Everything `h2sim client` was told.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientArgs {
    pub steps: Vec<Step>,
    /// `-P`: scenarios in flight per connection.
    pub parallel: usize,
    /// `-C`: scenarios in all (default 1, or unbounded with `--duration`).
    pub count: Option<u64>,
    /// `-T`: scenarios started per second, over all connections.
    pub tps: Option<f64>,
    /// `-S`: connections per server.
    pub connections: usize,
    /// `--server URL`: more instances of the same network function; each
    /// scenario runs on one server, with its authority.
    pub servers: Vec<(String, String)>,
    /// `--connections N`: connections in all, spread over the servers
    /// (instead of `-S` per server).
    pub total_connections: Option<usize>,
    pub symbols: Vec<Symbol>,
    /// `-M`: scenario numbers wrap at this.
    pub wrap: Option<u64>,
    pub tls: TlsFiles,
    pub settings: Vec<String>,
    /// `--connection-window`: `Config::connection_window_size`.
    pub connection_window: Option<u32>,
    pub http1: bool,
    pub quiet: bool,
    pub no_trace: bool,
    /// `-v`: trace HTTP/2 frames.
    pub verbose: bool,
    /// `-D MS`.
    pub dump_slow: Option<Duration>,
    pub retry: bool,
    pub duration: Option<Duration>,
    pub warmup: Option<Duration>,
    pub timeout: Option<Duration>,
    pub json: Option<PathBuf>,
    pub runtime: Runtime,
    pub threads: Option<usize>,
    /// `--reconnect-max N` (h2simple's `-H reconn_max=N`): replacements of
    /// a lost connection in a row, per connection slot; planned ends (a
    /// server closing after its response, our own per-connection limit)
    /// are replaced without limit.
    pub reconnect_max: Option<u32>,
    /// `--requests-per-connection N` (h2simple's `-H req_max_per_sess=N`,
    /// and `-H single_request=1` for N = 1): a connection is closed and
    /// replaced after N requests.
    pub requests_per_connection: Option<u64>,
    /// `--keepalive DURATION`: the PING interval on an idle connection.
    pub keepalive: Option<Duration>,
    /// `--connect-timeout DURATION`: `ClientOptions::connect_timeout` and
    /// `Config::settings_timeout`.
    pub connect_timeout: Option<Duration>,
    /// `--listen URL`: serve notifications there during the run.
    pub listen: Option<String>,
    /// `--listen-rules FILE`: answer them by these rules, not 204.
    pub listen_rules: Option<PathBuf>,
    /// `--listen-linger DURATION`: how long the listener outlives the
    /// run's last response (zero when not given).
    pub listen_linger: Duration,
    /// `--token-url` and its fields: fetch an OAuth2 token first.
    pub token: Option<TokenSpec>,
}

/// The step grammar: `-m` opens a step, the others describe it; before the
/// first `-m`, `-s` and `-a` are every step's defaults and the rest
/// describe the first step (or the positional URI's request), as in h2cli.
/// The symbol that stands for the `--listen` URL (without a trailing
/// slash) in steps, so a callback URI follows the listener it names.
pub const LISTEN_SYMBOL: &str = "__LISTEN__";

const STEPS: &[Spec] = &[
    Spec {
        id: "method",
        short: Some('m'),
        long: "method",
        value: "METHOD",
        help: "Start a step with this method (GET, POST, PUT, PATCH, DELETE, ...)",
    },
    Spec {
        id: "uri",
        short: Some('u'),
        long: "uri",
        value: "URI",
        help: "The step's target: scheme://authority/path (instead of -s -a -p)",
    },
    Spec {
        id: "scheme",
        short: Some('s'),
        long: "scheme",
        value: "SCHEME",
        help: "http or https (before any -m: every step's default)",
    },
    Spec {
        id: "authority",
        short: Some('a'),
        long: "authority",
        value: "HOST:PORT",
        help: "The step's authority (before any -m: every step's default)",
    },
    Spec {
        id: "path",
        short: Some('p'),
        long: "path",
        value: "PATH",
        help: "The step's path, starting with /",
    },
    Spec {
        id: "header",
        short: Some('x'),
        long: "header",
        value: "NAME=VALUE",
        help: "Request field (repeatable; -R symbols are replaced in it)",
    },
    Spec {
        id: "text",
        short: Some('t'),
        long: "text",
        value: "TEXT",
        help: "Body: this text",
    },
    Spec {
        id: "hex",
        short: Some('b'),
        long: "hex",
        value: "HEX",
        help: "Body: hex digits (optional 0x prefix, spaces allowed)",
    },
    Spec {
        id: "file",
        short: Some('f'),
        long: "file",
        value: "FILE",
        help: "Body: the file's content",
    },
    Spec {
        id: "size",
        short: Some('e'),
        long: "size",
        value: "N|Nk|Nm",
        help: "Body: generated JSON of exactly this size",
    },
    Spec {
        id: "capture",
        short: None,
        long: "capture",
        value: "SYM=SOURCE",
        help: "Take a value from the step's response into SYM for the later steps of its scenario: status, header:NAME, segment:NAME (last path segment, e.g. of location), json:/POINTER (RFC 6901); repeatable",
    },
    Spec {
        id: "expect",
        short: None,
        long: "expect",
        value: "STATUS",
        help: "The statuses that count as the step's success (201, 200,204, 2xx); any other fails it and ends its scenario",
    },
];

/// `client`'s command: clap's options plus the step grammar.
pub fn add_grammar(command: Command) -> Command {
    grammar::add(command, "Steps (in order; -m starts each)", STEPS)
}

/// A step being described: `-u` or `-s/-a/-p`, headers, body.
#[derive(Debug, Default)]
struct Draft {
    /// `None` until a `-m`: the options before the first `-m`, which
    /// describe the first step (a positional URI's request, or the first
    /// `-m` step).
    method: Option<String>,
    uri: Option<(String, String, String)>,
    scheme: Option<String>,
    authority: Option<String>,
    path: Option<String>,
    headers: Vec<HeaderField>,
    body: Option<Bytes>,
    captures: Vec<Capture>,
    expect: Option<Expect>,
    /// Where the path came from (`-u`, `-p`, the URI argument, a scenario
    /// file's step), for a message about it.
    target_from: String,
}

impl Draft {
    /// The step, its path checked with `names` (the run's symbols) known.
    fn finish(
        self,
        default_scheme: &Option<String>,
        default_authority: &Option<String>,
        names: &[&str],
    ) -> Result<Step, UsageError> {
        let method = self.method.unwrap_or_else(|| "GET".to_owned());
        check_method(&method).map_err(|why| usage(format!("-m {method:?}: {why}")))?;
        let (scheme, authority, path) = match self.uri {
            Some(parts) => parts,
            None => {
                let scheme = self
                    .scheme
                    .or_else(|| default_scheme.clone())
                    .unwrap_or_else(|| "http".into());
                let authority = self
                    .authority
                    .or_else(|| default_authority.clone())
                    .ok_or_else(|| {
                        usage(format!(
                            "-m {method}: no target; give -u URI or -a AUTHORITY"
                        ))
                    })?;
                check_authority("-a", &authority)?;
                let path = self.path.unwrap_or_else(|| "/".into());
                check_path(&path).map_err(|why| usage(format!("-p {path:?}: {why}")))?;
                (scheme, authority, path)
            }
        };
        let path = literal_target(&path, names)
            .map_err(|why| usage(format!("{} {path:?}: {why}", self.target_from)))?
            .to_owned();
        if scheme != "http" && scheme != "https" {
            return Err(usage(format!(
                "-s {scheme:?}: scheme must be http or https"
            )));
        }
        Ok(Step {
            method: method.into(),
            scheme: scheme.into(),
            authority: authority.into(),
            path: path.into(),
            headers: self.headers,
            body: self.body.unwrap_or_default(),
            captures: self.captures,
            expect: self.expect,
            ..Step::default()
        })
    }
}

/// Why `method` cannot be a request's method: the command line's `-m` and
/// a scenario file's `method:` say so in their own words.
pub(super) fn check_method(method: &str) -> Result<(), &'static str> {
    if h2sim_proto::is_method(method.as_bytes()) {
        Ok(())
    } else {
        Err("a method is a token (RFC 9110 §9.1): letters, digits and !#$%&'*+-.^_`|~")
    }
}

/// Why `path` cannot be a step's path (`-p`, or a scenario file's `path:`).
pub(super) fn check_path(path: &str) -> Result<(), &'static str> {
    if path.starts_with('/') {
        Ok(())
    } else {
        Err("a path starts with /")
    }
}

/// A step's own `content-length` (`-x content-length=N`) must be its
/// body's size (RFC 9110 §8.6): over HTTP/1.1 another would end the
/// request short or run it into the next one, and the server would read
/// the connection's later requests wrong. A body with symbols in it (`-R`,
/// captures) varies in size, so none can be right for it.
fn own_lengths(opts: &ClientArgs) -> Result<(), UsageError> {
    let symbols: Vec<&str> = opts
        .symbols
        .iter()
        .map(|s| s.name.as_str())
        .chain(
            opts.steps
                .iter()
                .flat_map(|s| s.captures.iter().map(|c| c.symbol.as_str())),
        )
        .collect();
    for (n, step) in opts.steps.iter().enumerate() {
        let Some(given) = step
            .headers
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(b"content-length"))
        else {
            continue;
        };
        let given = String::from_utf8_lossy(&given.value).trim().to_owned();
        let body = &step.body[..];
        let varies = symbols
            .iter()
            .any(|name| !name.is_empty() && body.windows(name.len()).any(|w| w == name.as_bytes()));
        let problem = if varies {
            format!("content-length {given} for a body whose size varies")
        } else if given.parse() != Ok(body.len()) {
            format!(
                "content-length {given} but the body has {} bytes",
                body.len()
            )
        } else {
            continue;
        };
        return Err(usage(format!(
            "step {} ({} {}): {problem} (RFC 9110 §8.6): drop the field, the client sends the right one",
            n + 1,
            String::from_utf8_lossy(&step.method),
            String::from_utf8_lossy(&step.path)
        )));
    }
    Ok(())
}

/// `-a HOST:PORT` checked as `-u` checks its authority.
fn check_authority(flag: &str, authority: &str) -> Result<(), UsageError> {
    split_uri(&format!("http://{authority}/"))
        .map(|_| ())
        .map_err(|e| usage(format!("{flag} {e}")))
}

/// Parses the arguments after `client` (what `main` does through the
/// top-level command), for tests, with relative paths in the working
/// directory.
#[cfg(test)]
pub fn parse(args: Vec<String>) -> Result<ClientArgs, UsageError> {
    parse_in(args, Path::new("."))
}

/// `parse`, with relative paths in `dir`.
#[cfg(test)]
pub fn parse_in(args: Vec<String>, dir: &Path) -> Result<ClientArgs, UsageError> {
    let matches = cli::subcommand("client")
        .try_get_matches_from(args)
        .map_err(|e| cli::one_line(&e))?;
    from_matches(&matches, dir)
}

/// Builds the options from what clap matched for `client`. Relative paths
/// (`-f`, `-k`, `-c`, `-V`'s trust files) are taken from `dir`: the binary
/// passes its working directory, tests a scratch directory of their own.
pub fn from_matches(matches: &ArgMatches, dir: &Path) -> Result<ClientArgs, UsageError> {
    let flags = ClientFlags::from_arg_matches(matches).map_err(|e| cli::one_line(&e))?;
    let mut opts = ClientArgs {
        steps: Vec::new(),
        parallel: flags.parallel as usize,
        count: flags.count,
        tps: flags.tps,
        connections: flags.connections as usize,
        servers: Vec::new(),
        total_connections: flags.total_connections.map(|n| n as usize),
        symbols: Vec::new(),
        wrap: flags.wrap,
        tls: TlsFiles {
            key: flags.key.map(|p| dir.join(p)),
            cert: flags.cert.map(|p| dir.join(p)),
            verify: match &flags.verify {
                Some(spec) => Verify::parse(spec)?.relative_to(dir),
                None => Verify::default(),
            },
            ..TlsFiles::default()
        },
        settings: Vec::new(),
        connection_window: flags.connection_window,
        http1: flags.http1,
        quiet: flags.quiet,
        no_trace: flags.no_trace,
        verbose: flags.verbose,
        dump_slow: flags.dump_slow.map(Duration::from_millis),
        retry: flags.retry,
        duration: flags.duration,
        warmup: flags.warmup,
        timeout: flags.timeout,
        json: flags.json,
        runtime: flags.runtime,
        threads: flags.threads.filter(|&n| n > 0),
        reconnect_max: flags.reconnect_max,
        requests_per_connection: flags.requests_per_connection,
        keepalive: flags.keepalive,
        connect_timeout: flags.connect_timeout,
        listen: flags.listen,
        listen_rules: flags.listen_rules.map(|p| dir.join(p)),
        listen_linger: flags.listen_linger.unwrap_or_default(),
        token: None,
    };
    if let Some(url) = &opts.listen {
        // Checked here, to be named as the client's option: the listener
        // is then built from a server command line (`setup::listen`).
        super::server::parse_listen(url)
            .map_err(|why| usage(format!("--listen {url:?}: {why}")))?;
    }
    if let Some(url) = &flags.token_url {
        let mut spec = TokenSpec::parse(url).map_err(|e| usage(format!("--token-url {e}")))?;
        spec.nf_instance_id = flags.nf_instance_id;
        spec.nf_type = flags.nf_type;
        spec.target_nf_type = flags.target_nf_type;
        spec.scope = flags.scope;
        spec.wait = opts.timeout.unwrap_or(spec.wait);
        opts.token = Some(spec);
    }
    for url in &flags.servers {
        let (scheme, authority, path) =
            split_uri(url).map_err(|e| usage(format!("--server {e}")))?;
        if path != "/" {
            return Err(usage(format!(
                "--server {url:?}: a server is scheme://host:port"
            )));
        }
        opts.servers.push((scheme, authority));
    }
    // The steps' target and each --server: at most that many servers.
    let servers = 1 + opts.servers.len() as u64;
    if let Some(total) = flags.total_connections
        && total > cli::MAX_PER_SERVER * servers
    {
        return Err(usage(format!(
            "--connections {total}: at most {} per server ({servers} at most here): a client \
             address has no more ports to one server",
            cli::MAX_PER_SERVER
        )));
    }
    for spec in &flags.symbols {
        opts.symbols.push(Symbol::parse(spec).map_err(usage)?);
    }
    if let Some(url) = &opts.listen {
        // Callback URIs in steps name the listener without repeating it.
        opts.symbols.push(Symbol::new(
            LISTEN_SYMBOL,
            Format::constant(url.trim_end_matches('/')),
        ));
    }
    for spec in flags.settings {
        match H2simpleKey::parse(&spec) {
            Some(key) => apply_h2simple_key(&mut opts, &spec, key?),
            None => {
                // Checked now, so a bad -H is a bad option (exit 2) at once.
                let mut probe =
                    h2sim_proto::LocalSettings::from_config(&h2sim_proto::Config::default());
                super::apply_setting(&mut probe, &spec)?;
                opts.settings.push(spec);
            }
        }
    }
    let occurrences = grammar::ordered(matches, STEPS);
    opts.steps = match &flags.scenario {
        Some(file) => {
            let path = dir.join(file);
            let scenario = scenario_file::load(&path)?;
            opts.symbols.extend(scenario.symbols);
            let captured = scenario.steps.iter().flat_map(|s| &s.captures);
            let names = symbol_names(&opts.symbols, captured.map(|c| c.symbol.as_str()));
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            file_steps(&occurrences, &flags.target, &path, scenario.steps, &names)?
        }
        None => {
            // A capture's symbol, before the capture is parsed with its step.
            let captured = occurrences
                .iter()
                .filter(|o| o.id == "capture")
                .filter_map(|o| o.value.split_once('=').map(|(symbol, _)| symbol));
            let names = symbol_names(&opts.symbols, captured);
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            steps(&occurrences, &flags.target, dir, &names)?
        }
    };
    let first = &opts.steps[0];
    if opts
        .servers
        .iter()
        .any(|(scheme, _)| first.scheme != scheme.as_str())
    {
        return Err(usage(format!(
            "--server: every server must use the steps' scheme ({})",
            String::from_utf8_lossy(&first.scheme)
        )));
    }
    if opts
        .steps
        .iter()
        .any(|s| s.scheme != first.scheme || s.authority != first.authority)
    {
        return Err(usage(
            "all steps must target the same scheme://authority (run one client per server)",
        ));
    }
    own_lengths(&opts)?;
    if opts.warmup.is_some() && opts.duration.is_none() {
        // As h2load's --warm-up-time needs -D: with a count, a warm-up
        // takes from it and can leave nothing measured.
        return Err(usage(
            "--warmup needs --duration (the measured time after the warm-up)",
        ));
    }
    if opts.count.is_none() && opts.duration.is_none() {
        opts.count = Some(1);
    }
    if first.scheme == "http" && (opts.tls.key.is_some() || opts.tls.cert.is_some()) {
        // h2simple loads keys only for https targets; so do we, and say so:
        // `-c N` is also how h2load users ask for connections.
        errln!(
            "h2sim: -k/-c (the client's key and certificate) are for https targets; \
             this run is http, so they are not read (connections: -S or --connections)"
        );
        opts.tls = TlsFiles {
            verify: opts.tls.verify.clone(),
            ..TlsFiles::default()
        };
    }
    if opts.tls.key.is_some() != opts.tls.cert.is_some() {
        return Err(usage("-k KEY and -c CERT go together"));
    }
    if let Some(path) = &opts.json {
        crate::setup::output::check_json(path).map_err(usage)?;
    }
    Ok(opts)
}

/// The names a step's texts may hold for a value to fill in: the `-R`
/// symbols (with a scenario file's and `__LISTEN__`) and the captured ones.
fn symbol_names<'a>(symbols: &[Symbol], captured: impl Iterator<Item = &'a str>) -> Vec<String> {
    symbols
        .iter()
        .map(|s| s.name.clone())
        .chain(captured.map(str::to_owned))
        .collect()
}

/// `-H reconn_max=N` and friends: the flag's value unless the flag was
/// given too, with one line saying which flag it is.
fn apply_h2simple_key(opts: &mut ClientArgs, spec: &str, key: H2simpleKey) {
    errln!("h2sim: -H {spec} is {} in h2sim", key.flag());
    match key {
        H2simpleKey::ReconnMax(n) => {
            opts.reconnect_max.get_or_insert(n);
        }
        H2simpleKey::ReqMaxPerSess(0) | H2simpleKey::SingleRequest(false) => {}
        H2simpleKey::ReqMaxPerSess(n) => {
            opts.requests_per_connection.get_or_insert(n);
        }
        H2simpleKey::SingleRequest(true) => {
            opts.requests_per_connection.get_or_insert(1);
        }
    }
}

/// `--scenario`'s steps, aimed at the positional URI (`scheme://host:port`)
/// or `-s`/`-a`, the only step options it takes.
fn file_steps(
    occurrences: &[Occurrence],
    uris: &[String],
    name: &Path,
    file: Vec<scenario_file::FileStep>,
    names: &[&str],
) -> Result<Vec<Step>, UsageError> {
    let (mut default_scheme, mut default_authority) = (None, None);
    for Occurrence { id, flag, value } in occurrences {
        match *id {
            "scheme" => default_scheme = Some(value.to_ascii_lowercase()),
            "authority" => {
                check_authority(flag, value)?;
                default_authority = Some(value.clone());
            }
            _ => {
                return Err(usage(format!(
                    "{flag}: the steps come from --scenario (only -s and -a go with it)"
                )));
            }
        }
    }
    match uris {
        [] => {}
        [uri] => {
            let (scheme, authority, path) = split_uri(uri).map_err(usage)?;
            if path != "/" {
                return Err(usage(format!(
                    "{uri:?}: with --scenario the URI is the target, scheme://host:port"
                )));
            }
            default_scheme = Some(scheme);
            default_authority = Some(authority);
        }
        [_, extra, ..] => {
            return Err(usage(format!(
                "unexpected argument {extra:?}: give one target URI"
            )));
        }
    }
    if default_authority.is_none()
        && let Some(i) = file.iter().position(|step| step.uri.is_none())
    {
        return Err(usage(format!(
            "--scenario {}: step {}: no target; give the URI argument (scheme://host:port), -a, or the step's uri",
            name.display(),
            i + 1
        )));
    }
    file.into_iter()
        .enumerate()
        .map(|(i, step)| {
            let word = if step.uri.is_some() { "uri" } else { "path" };
            Draft {
                method: Some(step.method),
                uri: step.uri,
                path: step.path,
                headers: step.headers,
                body: step.body,
                captures: step.captures,
                expect: step.expect,
                target_from: format!("--scenario {}: step {}: {word}", name.display(), i + 1),
                ..Draft::default()
            }
            .finish(&default_scheme, &default_authority, names)
        })
        .collect()
}

/// Replays the step grammar in order; `uris` are the positional arguments.
/// `-f` files are read from `dir`.
fn steps(
    occurrences: &[Occurrence],
    uris: &[String],
    dir: &Path,
    names: &[&str],
) -> Result<Vec<Step>, UsageError> {
    let (mut default_scheme, mut default_authority) = (None, None);
    let mut steps = Vec::new();
    let mut draft = Draft::default();
    for Occurrence { id, flag, value } in occurrences {
        let value = value.clone();
        // One body a step, one target: the last would silently win (a
        // scenario file refuses the same).
        if matches!(*id, "text" | "hex" | "file" | "size") && draft.body.is_some() {
            return Err(usage(format!(
                "{flag}: this step has a body already: give one of -t, -b, -f, -e"
            )));
        }
        if (*id == "uri" && draft.path.is_some()) || (*id == "path" && draft.uri.is_some()) {
            return Err(usage(format!(
                "{flag}: this step has its target already: give -u, or -s -a -p"
            )));
        }
        match *id {
            "method" => {
                if draft.method.is_some() {
                    let done = std::mem::take(&mut draft);
                    steps.push(done.finish(&default_scheme, &default_authority, names)?);
                }
                // The first -m takes over what came before it (h2cli's step 0).
                draft.method = Some(value);
            }
            // Before any -m, -s and -a set every step's defaults.
            "scheme" if steps.is_empty() && draft.method.is_none() => {
                default_scheme = Some(value.to_ascii_lowercase())
            }
            "authority" if steps.is_empty() && draft.method.is_none() => {
                check_authority(flag, &value)?;
                default_authority = Some(value)
            }
            "uri" => {
                draft.uri = Some(split_uri(&value).map_err(|e| usage(format!("{flag} {e}")))?);
                draft.target_from = format!("{flag} {value:?}: path");
            }
            "scheme" => draft.scheme = Some(value.to_ascii_lowercase()),
            "authority" => draft.authority = Some(value),
            "path" => {
                draft.path = Some(value);
                draft.target_from = flag.clone();
            }
            "header" => draft.headers.push(header(&value)?),
            "text" => draft.body = Some(body::text(&value)),
            "hex" => draft.body = Some(body::hex(&value).map_err(|e| usage(e.to_string()))?),
            "file" => {
                draft.body = Some(body::file(&dir.join(value)).map_err(|e| usage(e.to_string()))?)
            }
            "capture" => draft
                .captures
                .push(Capture::parse(&value).map_err(|e| usage(format!("{flag} {e}")))?),
            "expect" => {
                draft.expect =
                    Some(Expect::parse(&value).map_err(|e| usage(format!("{flag} {e}")))?)
            }
            _ => draft.body = Some(body::sized(&value).map_err(|e| usage(e.to_string()))?),
        }
    }
    let opened = draft.method.is_some();
    // `-m 100 URI` is how h2load asks for 100 streams: not a method.
    let numeric = draft
        .method
        .as_deref()
        .is_some_and(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()));
    match uris {
        // Without -m, only -u or -p names a request.
        [] if !opened && draft.uri.is_none() && draft.path.is_none() => {
            return Err(usage(
                "nothing to request: give a URI, or steps with -m METHOD -u URI",
            ));
        }
        [] => steps.push(draft.finish(&default_scheme, &default_authority, names)?),
        [uri] if numeric => {
            return Err(usage(format!(
                "unexpected argument {uri:?} after -m {}: {}",
                draft.method.as_deref().unwrap_or_default(),
                cli::H2LOAD_FLAGS
            )));
        }
        [uri] if steps.is_empty() => {
            if draft.uri.is_some() || draft.path.is_some() {
                return Err(usage(format!(
                    "unexpected argument {uri:?}: the request already has -u or -p"
                )));
            }
            // The options describe it, with or without its -m (h2cli's
            // step 0; `-m POST -e 1k URI` as curl users write it).
            draft.uri = Some(split_uri(uri).map_err(usage)?);
            draft.target_from = format!("URI {uri:?}: path");
            steps.push(draft.finish(&default_scheme, &default_authority, names)?);
        }
        [uri] => {
            return Err(usage(format!(
                "unexpected argument {uri:?}: with more than one -m step, each names its \
                 target with -u (or -a and -p)"
            )));
        }
        [_, uri, ..] => {
            return Err(usage(format!("unexpected argument {uri:?}: give one URI")));
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn single_uri_is_one_get() {
        let o = parse(args(&["http://127.0.0.1:8080/user1k/nobody"])).unwrap();
        assert_eq!(o.steps.len(), 1);
        assert_eq!(o.steps[0].method, "GET");
        assert_eq!(o.steps[0].path, "/user1k/nobody");
        assert_eq!(o.count, Some(1));
    }

    /// `--threads 0` is one per core, as on the server (it was refused
    /// here while the server took it).
    #[test]
    fn zero_threads_is_one_per_core_as_on_the_server() {
        let o = parse(args(&["--threads", "0", "http://h:80/x"])).unwrap();
        assert_eq!(o.threads, None);
        let o = parse(args(&["--threads", "3", "http://h:80/x"])).unwrap();
        assert_eq!(o.threads, Some(3));
    }

    /// `-m POST -e 1k URI`, as curl and h2load users write a single
    /// request: the positional URI is the one step's target. With more
    /// steps each names its own; `-m 100 URI` is h2load's streams.
    #[test]
    fn one_step_with_its_method_takes_the_positional_uri() {
        let o = parse(args(&["-m", "POST", "-e", "1k", "http://h:80/x"])).unwrap();
        assert_eq!(o.steps.len(), 1);
        assert_eq!(
            (
                &o.steps[0].method[..],
                &o.steps[0].path[..],
                o.steps[0].body.len()
            ),
            (&b"POST"[..], &b"/x"[..], 1024)
        );
        let err = parse(args(&[
            "-m",
            "POST",
            "-u",
            "http://h/a",
            "-m",
            "GET",
            "http://h/b",
        ]))
        .unwrap_err();
        assert!(err.0.contains("more than one -m step"), "{err}");
        let err = parse(args(&["-m", "100", "http://h/a"])).unwrap_err();
        assert!(err.0.contains("h2load's -n is -C here"), "{err}");
        for method in ["", "GE T"] {
            let err = parse(args(&["-m", method, "http://h/a"])).unwrap_err();
            assert!(err.0.contains("a method is a token"), "{method:?}: {err}");
        }
    }

    #[test]
    fn three_step_scenario_with_defaults() {
        let o = parse(args(&[
            "-R",
            "__MDN__=01092%06d",
            "-s",
            "http",
            "-a",
            "127.0.0.1:8080",
            "-m",
            "POST",
            "-p",
            "/user/__MDN__",
            "-x",
            "content-type=application/json",
            "-t",
            "{ \"USER_MDN\" : \"__MDN__\" }",
            "-m",
            "GET",
            "-p",
            "/user/__MDN__",
            "-m",
            "DELETE",
            "-p",
            "/user/__MDN__",
        ]))
        .unwrap();
        assert_eq!(
            o.steps.iter().map(|s| &s.method[..]).collect::<Vec<_>>(),
            [&b"POST"[..], b"GET", b"DELETE"]
        );
        assert!(o.steps.iter().all(|s| s.authority == "127.0.0.1:8080"));
        assert_eq!(o.symbols.len(), 1);
    }

    #[test]
    fn loop_options() {
        let o = parse(args(&[
            "-P",
            "100",
            "-C",
            "100000",
            "-m",
            "GET",
            "-u",
            "http://127.0.0.1:8080/user1k/nobody",
            "-q",
        ]))
        .unwrap();
        assert_eq!((o.parallel, o.count, o.quiet), (100, Some(100_000), true));
    }

    /// A `--json` file that cannot be written is a bad option before the
    /// run, not an error after it.
    #[test]
    fn json_path_is_checked_before_the_run() {
        let e = parse(args(&["--json", "/nonexistent/dir/x.json", "http://h/"]))
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("--json /nonexistent/dir/x.json: ") && !e.contains('\n'),
            "{e}"
        );
    }

    #[test]
    fn bad_input_names_the_problem() {
        let err = |a: &[&str]| parse(args(a)).unwrap_err().0;
        assert!(err(&[]).contains("nothing to request"));
        // Step options before -m describe the first step (issue 10 item 9):
        // this one still has no target.
        assert!(err(&["-x", "a=b", "-m", "GET"]).contains("no target"));
        assert!(err(&["-m", "GET", "-u", "notauri"]).contains("not an absolute URI"));
        assert!(err(&["-P", "0", "http://h/"]).contains("at least 1"));
        assert!(err(&["-P", "many", "http://h/"]).contains("not a valid number"));
        for flag in ["--duration", "--timeout", "--keepalive"] {
            assert!(err(&[flag, "0", "http://h/"]).contains("above 0"), "{flag}");
            assert!(err(&[flag, "0ms", "http://h/"]).contains(flag), "{flag}");
        }
        assert!(
            err(&["-C", "500", "--warmup", "1s", "http://h/"])
                .contains("--warmup needs --duration")
        );
        // RFC 9110 §8.6: a step's own content-length is its body's size.
        let length = |x: &str, t: &str, more: &[&str]| {
            let mut a = vec!["-m", "POST", "-x", x, "-t", t];
            a.extend_from_slice(more);
            a.push("http://h/p");
            parse(args(&a))
        };
        assert!(
            length("content-length=2", "abc", &[])
                .unwrap_err()
                .0
                .contains(
                    "step 1 (POST /p): content-length 2 but the body has 3 bytes (RFC 9110 §8.6)"
                )
        );
        assert!(
            length("content-length=11", "__N__", &["-R", "__N__=%011d"])
                .unwrap_err()
                .0
                .contains("content-length 11 for a body whose size varies")
        );
        assert!(length("content-length=3", "abc", &[]).is_ok());
        // A rate whose send interval is no duration was a panic.
        for bad in ["0", "1e-300", "1e12", "nan"] {
            assert!(
                err(&["-T", bad, "http://h/"]).contains("a rate from 0.001 to"),
                "-T {bad}"
            );
        }
        assert!(parse(args(&["-T", "0.001", "http://h/"])).is_ok());
        assert!(err(&["--frobnicate", "http://h/"]).contains("unknown option --frobnicate"));
        assert!(err(&["-R", "X", "http://h/"]).contains("SYMBOL=FORMAT"));
        assert!(
            err(&[
                "-m",
                "GET",
                "-u",
                "http://a/",
                "-m",
                "GET",
                "-u",
                "http://b/"
            ])
            .contains("same scheme")
        );
        assert!(
            err(&["-m", "POST", "-u", "http://h/", "-f", "/no/such/file"])
                .contains("/no/such/file")
        );
        assert!(err(&["-m", "GET"]).contains("no target"));
    }

    /// Issue 10 item 9: step options before the first -m describe the
    /// first step, or the positional URI's single request (h2cli's step 0);
    /// -s and -a there stay every step's defaults.
    #[test]
    fn step_options_before_m_apply_to_the_first_step() {
        let o = parse(args(&["-x", "a=b", "-t", "hi", "http://h:80/x"])).unwrap();
        assert_eq!(o.steps.len(), 1);
        assert_eq!(o.steps[0].method, "GET");
        assert_eq!(o.steps[0].headers, vec![HeaderField::new("a", "b")]);
        assert_eq!(&o.steps[0].body[..], b"hi");
        let o = parse(args(&[
            "-a", "h:80", "-x", "a=b", "-p", "/first", "-m", "POST", "-m", "GET", "-p", "/second",
        ]))
        .unwrap();
        assert_eq!(o.steps.len(), 2);
        assert_eq!(
            (&o.steps[0].method[..], &o.steps[0].path[..]),
            (&b"POST"[..], &b"/first"[..])
        );
        assert_eq!(o.steps[0].headers.len(), 1);
        assert!(o.steps[1].headers.is_empty());
        assert_eq!(o.steps[1].authority, "h:80");
        let err = parse(args(&["-u", "http://h/a", "http://h/b"])).unwrap_err();
        assert!(err.0.contains("already has -u"), "{err}");
    }

    /// Issue 10 item 11: a malformed authority in a URI, -a or --server is
    /// a bad option naming it.
    #[test]
    fn malformed_authorities_are_bad_options() {
        let err = |a: &[&str]| parse(args(a)).unwrap_err().0;
        assert!(err(&["http://127.0.0.1:99999/x"]).contains("99999"));
        assert!(err(&["http://[::1/x"]).contains("closing ]"));
        assert!(err(&["-m", "GET", "-u", "http://a^b/"]).starts_with("-u "));
        assert!(err(&["-a", "h:70000", "-m", "GET"]).starts_with("-a "));
        assert!(err(&["--server", "http://h:0", "http://h:1/"]).starts_with("--server "));
    }

    /// h2simple's -H keys map to h2sim's flags; the flag wins when both are
    /// given; enable_connect_protocol stays an HTTP/2 setting.
    #[test]
    fn h2simple_h_keys() {
        let o = parse(args(&[
            "-H",
            "reconn_max=5",
            "-H",
            "req_max_per_sess=100",
            "-H",
            "enable_connect_protocol=1",
            "http://h/",
        ]))
        .unwrap();
        assert_eq!(
            (o.reconnect_max, o.requests_per_connection),
            (Some(5), Some(100))
        );
        assert_eq!(o.settings, ["enable_connect_protocol=1"]);
        let o = parse(args(&["-H", "single_request=1", "http://h/"])).unwrap();
        assert_eq!(o.requests_per_connection, Some(1));
        let o = parse(args(&[
            "--reconnect-max",
            "2",
            "-H",
            "reconn_max=9",
            "http://h/",
        ]))
        .unwrap();
        assert_eq!(o.reconnect_max, Some(2));
        let o = parse(args(&[
            "--keepalive",
            "30s",
            "--requests-per-connection",
            "7",
            "http://h/",
        ]))
        .unwrap();
        assert_eq!(o.keepalive, Some(Duration::from_secs(30)));
        assert_eq!(o.requests_per_connection, Some(7));
        assert!(
            parse(args(&["-H", "bogus=1", "http://h/"]))
                .unwrap_err()
                .0
                .contains("bogus")
        );
        assert!(
            parse(args(&["--requests-per-connection", "0", "http://h/"]))
                .unwrap_err()
                .0
                .contains("at least 1")
        );
        let o = parse(args(&["--connection-window", "1m", "http://h/"])).unwrap();
        assert_eq!(o.connection_window, Some(1 << 20));
        // The least is 65,535, which 64k (65,536) is not: the line said
        // "from 64k (65535)".
        let line = parse(args(&["--connection-window", "60k", "http://h/"]))
            .unwrap_err()
            .0;
        assert!(
            line.contains("from 65535 (the window every connection starts with; 64k is 65536)"),
            "{line}"
        );
    }

    /// `--capture` and `--expect` describe the step they follow; bad
    /// ones are bad options naming the flag.
    #[test]
    fn captures_and_expectations() {
        let o = parse(args(&[
            "-a",
            "h:80",
            "-m",
            "POST",
            "-p",
            "/s",
            "--expect",
            "201",
            "--capture",
            "__ID__=segment:location",
            "-m",
            "DELETE",
            "-p",
            "/s/__ID__",
        ]))
        .unwrap();
        assert_eq!(o.steps[0].captures.len(), 1);
        assert!(o.steps[0].expect.is_some() && o.steps[1].expect.is_none());
        assert!(o.steps[0].ends_scenario_on_failure());
        assert!(!o.steps[1].ends_scenario_on_failure());
        let err = |a: &[&str]| parse(args(a)).unwrap_err().0;
        assert!(err(&["-m", "GET", "-u", "http://h/", "--expect", "abc"]).starts_with("--expect "));
        assert!(
            err(&["-m", "GET", "-u", "http://h/", "--capture", "X=body"]).starts_with("--capture ")
        );
        assert!(err(&["--listen", "http://127.0.0.1:1/x", "http://h/"]).starts_with("--listen "));
        assert!(err(&["--token-url", "nrf/token", "http://h/"]).starts_with("--token-url "));
        assert!(err(&["--scope", "s", "http://h/"]).contains("--token-url"));
        let o = parse(args(&[
            "--token-url",
            "http://nrf:80/oauth2/token",
            "--client-id",
            "id-1",
            "--nf-type",
            "AMF",
            "http://h/",
        ]))
        .unwrap();
        let token = o.token.unwrap();
        assert_eq!(
            (
                token.path.as_str(),
                token.nf_instance_id.as_deref(),
                token.nf_type.as_deref()
            ),
            ("/oauth2/token", Some("id-1"), Some("AMF"))
        );
        // A token request waits --timeout, 10 s without it.
        assert_eq!(token.wait, Duration::from_secs(10));
        let with_timeout = |t: &str| {
            parse(args(&[
                "--timeout",
                t,
                "--token-url",
                "http://nrf/t",
                "http://h/",
            ]))
            .unwrap()
            .token
            .unwrap()
            .wait
        };
        assert_eq!(with_timeout("2s"), Duration::from_secs(2));
    }

    /// `--scenario FILE`: the steps from YAML or TOML, aimed at the URI
    /// argument; `-m` steps with it are refused.
    #[test]
    fn scenario_files() {
        let scratch = crate::scratch::scratch("scenario");
        let dir = scratch.path();
        std::fs::write(
            dir.join("s.yaml"),
            "replace: { __N__: \"%03d\" }\nstep:\n  - method: POST\n    path: /s/__N__\n    headers: { content-type: application/json }\n    text: '{}'\n    expect: 201\n    capture: { __ID__: \"json:/id\" }\n  - method: DELETE\n    path: /s/__ID__\n    expect: \"2xx\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("s.toml"),
            "[[step]]\nmethod = \"GET\"\nuri = \"http://h:1/x\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("bad.yaml"),
            "step:\n  - method: GET\n    path: /x\n    expct: 200\n",
        )
        .unwrap();
        let o = parse_in(args(&["--scenario", "s.yaml", "http://nrf:8080"]), dir).unwrap();
        assert_eq!(o.steps.len(), 2);
        assert_eq!(o.steps[0].authority, "nrf:8080");
        assert_eq!(o.steps[0].captures[0].symbol, "__ID__");
        assert!(o.steps[1].succeeds(204) && !o.steps[1].succeeds(404));
        assert_eq!(o.symbols[0].name, "__N__");
        let o = parse_in(args(&["--scenario", "s.toml"]), dir).unwrap();
        assert_eq!(o.steps[0].path, "/x");
        let err = |a: &[&str]| parse_in(args(a), dir).unwrap_err().0;
        assert!(err(&["--scenario", "bad.yaml", "http://h:1"]).contains("expct"));
        assert!(err(&["--scenario", "s.yaml"]).contains("no target"));
        assert!(
            err(&["--scenario", "s.yaml", "-m", "GET", "http://h:1"]).contains("only -s and -a")
        );
        assert!(err(&["--scenario", "s.yaml", "http://h:1/path"]).contains("scheme://host:port"));
        assert!(err(&["--scenario", "none.yaml", "http://h:1"]).starts_with("--scenario "));
        // A bad step names the file and the step, 1-based, in the file's words.
        for (text, says) in [
            (
                "  - method: GET\n    path: ok\n",
                "step 2: path \"ok\": a path starts with /",
            ),
            (
                "  - method: G T\n    path: /x\n",
                "step 2: method \"G T\": a method is a token",
            ),
            (
                "  - method: GET\n    uri: ftp://h/x\n",
                "step 2: uri \"ftp://h/x\": scheme must be",
            ),
        ] {
            let file = dir.join("bad-step.yaml");
            std::fs::write(
                &file,
                format!("step:\n  - method: GET\n    path: /x\n{text}"),
            )
            .unwrap();
            let e = err(&["--scenario", "bad-step.yaml", "http://h:1"]);
            assert!(
                e.starts_with(&format!("--scenario {}: {says}", file.display())),
                "{e}"
            );
        }
        std::fs::write(
            dir.join("half.yaml"),
            "step:\n  - method: GET\n    uri: http://h:1/x\n  - method: GET\n    path: /y\n",
        )
        .unwrap();
        assert!(err(&["--scenario", "half.yaml"]).ends_with("half.yaml: step 2: no target; give the URI argument (scheme://host:port), -a, or the step's uri"));
    }

    /// RFC 3986 §3.5, RFC 9110 §7.1: the fragment is not part of the
    /// target; it is cut off every form a step's path is given in, as curl,
    /// nghttp and h2load cut it off.
    #[test]
    fn a_fragment_is_not_sent() {
        for (line, path) in [
            (&["http://h:1/q?a=1#frag"][..], "/q?a=1"),
            (&["http://h:1#frag"], "/"),
            (&["-m", "GET", "-u", "http://h:1/x#f"], "/x"),
            (&["-m", "GET", "-a", "h:1", "-p", "/p#f"], "/p"),
            // A symbol's name is no URI syntax: its `#` stays.
            (
                &["-R", "#N#=%d", "-m", "GET", "-a", "h:1", "-p", "/u/#N##f"],
                "/u/#N#",
            ),
        ] {
            let o = parse(args(line)).unwrap();
            assert_eq!(o.steps[0].path, path, "{line:?}");
        }
        let scratch = crate::scratch::scratch("fragment");
        let dir = scratch.path();
        std::fs::write(
            dir.join("s.yaml"),
            "step:\n  - method: GET\n    uri: http://h:1/x#f\n",
        )
        .unwrap();
        let o = parse_in(args(&["--scenario", "s.yaml"]), dir).unwrap();
        assert_eq!(o.steps[0].path, "/x");
    }

    /// A byte no request-target may hold (RFC 3986 §3.3; RFC 9112 §3.2)
    /// is refused at start, in one line naming the option and the byte,
    /// as curl refuses such a URL; inside a symbol's name (`-R`, a
    /// capture) it is no part of the target and passes.
    #[test]
    fn a_byte_no_target_may_hold_is_refused_at_start() {
        for (line, says) in [
            (
                &["http://h:1/a b"][..],
                r#"URI "http://h:1/a b": path "/a b": ' ' is not allowed"#,
            ),
            (
                &["-m", "GET", "-u", "http://h:1/a\"b"],
                r#"-u "http://h:1/a\"b": path "/a\"b": '"' is not allowed"#,
            ),
            (
                &["-m", "GET", "-a", "h:1", "-p", "/a{x}"],
                r#"-p "/a{x}": '{' is not"#,
            ),
            (
                &["-m", "GET", "-a", "h:1", "--path", "/a\tb"],
                "-p \"/a\\tb\": '\\t' is not",
            ),
        ] {
            let e = parse(args(line)).unwrap_err().0;
            assert!(e.starts_with(says) && !e.contains('\n'), "{line:?}: {e}");
        }
        for (line, path) in [
            (
                &["-R", "{x}=%d", "-m", "GET", "-a", "h:1", "-p", "/a/{x}"][..],
                "/a/{x}",
            ),
            (
                &[
                    "-m",
                    "GET",
                    "-a",
                    "h:1",
                    "--capture",
                    "${id}=json:/id",
                    "-m",
                    "GET",
                    "-a",
                    "h:1",
                    "-p",
                    "/a/${id}",
                ],
                "/a/${id}",
            ),
        ] {
            let o = parse(args(line)).unwrap();
            assert_eq!(o.steps.last().unwrap().path, path, "{line:?}");
        }
        let scratch = crate::scratch::scratch("bad-target");
        let dir = scratch.path();
        std::fs::write(
            dir.join("s.yaml"),
            "step:\n  - method: GET\n    path: /x\n  - method: GET\n    path: /a|b\n",
        )
        .unwrap();
        let e = parse_in(args(&["--scenario", "s.yaml", "http://h:1"]), dir)
            .unwrap_err()
            .0;
        assert!(
            e.contains(r#"s.yaml: step 2: path "/a|b": '|' is not allowed"#),
            "{e}"
        );
    }

    /// `--listen` is checked as `-S` is, and named as itself.
    #[test]
    fn listen_is_named_as_itself() {
        let err = |url: &str| {
            parse(args(&["--listen", url, "http://h:1/"]))
                .unwrap_err()
                .0
        };
        assert_eq!(
            err("http://127.0.0.1"),
            r#"--listen "http://127.0.0.1": "127.0.0.1": no port (ip:port, IPv6 as [addr]:port)"#
        );
        assert!(err("http://127.0.0.1:1/x").starts_with(r#"--listen "http://127.0.0.1:1/x": "#));
        let o = parse(args(&["--listen", "HTTP://LOCALHOST:1", "http://h:1/"])).unwrap();
        assert_eq!(o.listen.as_deref(), Some("HTTP://LOCALHOST:1"));
    }

    /// clap's errors come out as one line naming the option.
    #[test]
    fn errors_are_one_line() {
        for bad in [
            &["-P"][..],
            &["--duration", "soon", "http://h/"],
            &["--runtime", "uring", "http://h/"],
            &["-T", "0", "http://h/"],
            &["--nope", "http://h/"],
        ] {
            let e = parse(args(bad)).unwrap_err().0;
            assert!(!e.contains('\n') && e.contains(bad[0]), "{bad:?}: {e}");
        }
    }

    /// Flags whose line named another (`-C -5`: "unknown option -5") or
    /// did not say what to write instead, and `--connections` with the
    /// `-S` it replaces, which was taken silently.
    #[test]
    fn bad_flags_are_named_with_what_is_wrong() {
        for (bad, said) in [
            (
                &["-C", "-5", "http://h/"][..],
                "-C/--count \"-5\": a count cannot be negative",
            ),
            (
                &["-P", "-1", "http://h/"],
                "-P/--parallel \"-1\": a count cannot be negative",
            ),
            (
                &["-a", "::1:18080", "-m", "GET", "-p", "/"],
                "(an IPv6 address goes in brackets: [::1]:18080)",
            ),
            (
                &["--connections", "3", "-S", "2", "http://h/"],
                "--connections cannot be used with -S/--connections-per-server",
            ),
            // u64::MAX threads panicked in tokio's builder; a million
            // aborted for memory.
            (
                &["--threads", "18446744073709551615", "http://h/"],
                "--threads \"18446744073709551615\": at most 1024 (0 or unset: one per core)",
            ),
            (
                &["--threads", "-2", "http://h/"],
                "--threads \"-2\": a count cannot be negative",
            ),
            // u64::MAX connections grew to 24 GB, and a SIGTERM went
            // unheard while they were made.
            // Sent, it made every request malformed (RFC 9113 §8.2.2): the
            // server reset each one, and nothing said why.
            (
                &["-x", "connection=close", "http://h/"],
                "-x \"connection=close\": connection is a field of the connection, not the message (RFC 9113 §8.2.2)",
            ),
            // The last body or target silently won.
            (
                &["-m", "POST", "-t", "body", "-b", "41", "http://h/"],
                "-b: this step has a body already: give one of -t, -b, -f, -e",
            ),
            (
                &["-m", "GET", "-u", "http://h/x", "-p", "/y"],
                "-p: this step has its target already: give -u, or -s -a -p",
            ),
            // A negative value was read as a flag: "--duration needs a value".
            (
                &["--duration", "-1s", "http://h/"],
                "--duration \"-1s\": not a duration",
            ),
            (
                &["-T", "-1", "http://h/"],
                "-T/--tps \"-1\": a rate from 0.001",
            ),
            (
                &["-C", "5", "--duration", "3s", "http://h/"],
                "-C/--count cannot be used with --duration",
            ),
            (
                &["-S", "65536", "http://h/"],
                "-S/--connections-per-server \"65536\": at most 65535: a client address has no more ports to one server",
            ),
            (
                &[
                    "--connections",
                    "131071",
                    "--server",
                    "http://g:80",
                    "http://h/",
                ],
                "--connections 131071: at most 65535 per server (2 at most here)",
            ),
        ] {
            let e = parse(args(bad)).unwrap_err().0;
            assert!(!e.contains('\n') && e.contains(said), "{bad:?}: {e}");
        }
        // A -C that is a negative number is -C's value, not an option.
        assert!(parse(args(&["-C", "-5x", "http://h/"])).is_err());
    }

    /// h2load's flags (`-n 1000 -c 10 -m 100`) get the line that names
    /// h2sim's: `-n` is unknown, `-m 100` starts a step with method 100
    /// and leaves the URI unexpected.
    #[test]
    fn h2load_flags_are_named() {
        for bad in [
            &["-n", "1000", "http://h/"][..],
            &["-m", "100", "-C", "10", "http://h/"],
        ] {
            let e = parse(args(bad)).unwrap_err().0;
            assert!(e.contains("h2load's -n is -C here"), "{bad:?}: {e}");
        }
        let e = parse(args(&["-m", "GET", "http://h/", "http://g/"]))
            .unwrap_err()
            .0;
        assert!(!e.contains("h2load"), "{e}");
    }
}
