//! `h2sim client [options] [steps | URI]`.

use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use h2sim_proto::HeaderField;

use super::tls::{TlsFiles, Verify};
use super::{Args, Runtime, Token, UsageError, canonical, header, usage};
use crate::body;
use crate::client::scenario::{Step, split_uri};
use crate::client::symbol::Symbol;

/// Everything `h2sim client` was told.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientOptions {
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
    /// `--reconnect-max N`: replacements of a lost connection, per slot.
    pub reconnect_max: Option<u32>,
    /// `--requests-per-connection N`: go away after N requests and go on
    /// on a new connection.
    pub requests_per_connection: Option<u64>,
    /// `--keepalive DURATION`: PING an idle connection this often.
    pub keepalive: Option<Duration>,
}

const FLAGS: &[(&str, &str)] = &[
    ("-P", "--parallel"),
    ("-C", "--count"),
    ("-T", "--tps"),
    ("-S", "--connections-per-server"),
    ("-R", "--replace"),
    ("-M", "--wrap"),
    ("-k", "--key"),
    ("-c", "--cert"),
    ("-V", "--verify"),
    ("-H", "--setting"),
    ("-1", "--http1"),
    ("-q", "--quiet"),
    ("-Q", "--no-trace"),
    ("-D", "--dump-slow"),
    ("-r", "--retry"),
    ("-v", "--verbose"),
    ("-m", "--method"),
    ("-u", "--uri"),
    ("-s", "--scheme"),
    ("-a", "--authority"),
    ("-p", "--path"),
    ("-x", "--header"),
    ("-t", "--text"),
    ("-b", "--hex"),
    ("-f", "--file"),
    ("-e", "--size"),
];

/// A step being described: `-u` or `-s/-a/-p`, headers, body.
#[derive(Debug, Default)]
struct Draft {
    method: String,
    uri: Option<(String, String, String)>,
    scheme: Option<String>,
    authority: Option<String>,
    path: Option<String>,
    headers: Vec<HeaderField>,
    body: Option<Bytes>,
}

impl Draft {
    fn finish(
        self,
        default_scheme: &Option<String>,
        default_authority: &Option<String>,
    ) -> Result<Step, UsageError> {
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
                            "-m {}: no target; give -u URI or -a AUTHORITY",
                            self.method
                        ))
                    })?;
                let path = self.path.unwrap_or_else(|| "/".into());
                if !path.starts_with('/') {
                    return Err(usage(format!("-p {path:?}: a path starts with /")));
                }
                (scheme, authority, path)
            }
        };
        if scheme != "http" && scheme != "https" {
            return Err(usage(format!(
                "-s {scheme:?}: scheme must be http or https"
            )));
        }
        Ok(Step {
            method: self.method,
            scheme,
            authority,
            path,
            headers: self.headers,
            body: self.body.unwrap_or_default(),
        })
    }
}

/// Parses the arguments after `client`.
pub fn parse(args: Vec<String>) -> Result<ClientOptions, UsageError> {
    let mut args = Args::new(args);
    let mut opts = ClientOptions {
        steps: Vec::new(),
        parallel: 1,
        count: None,
        tps: None,
        connections: 1,
        servers: Vec::new(),
        total_connections: None,
        symbols: Vec::new(),
        wrap: None,
        tls: TlsFiles::default(),
        settings: Vec::new(),
        http1: false,
        quiet: false,
        no_trace: false,
        verbose: false,
        dump_slow: None,
        retry: false,
        duration: None,
        warmup: None,
        timeout: None,
        json: None,
        runtime: Runtime::Tokio,
        threads: None,
        reconnect_max: None,
        requests_per_connection: None,
        keepalive: None,
    };
    let (mut default_scheme, mut default_authority) = (None, None);
    let mut draft: Option<Draft> = None;
    let mut bare_uris = Vec::new();
    while let Some(token) = args.next_token() {
        let flag = match token? {
            Token::Word(w) => {
                bare_uris.push(w);
                continue;
            }
            Token::Flag(f) => f,
        };
        let short = canonical(&flag, FLAGS);
        match short.as_str() {
            "-P" => opts.parallel = positive(args.number(&flag)?, &flag)? as usize,
            "-C" => opts.count = Some(positive(args.number(&flag)?, &flag)?),
            "-T" => {
                let tps: f64 = args.number(&flag)?;
                if !(tps.is_finite() && tps > 0.0) {
                    return Err(usage(format!("{flag}: a rate above 0")));
                }
                opts.tps = Some(tps);
            }
            "-S" => opts.connections = positive(args.number(&flag)?, &flag)? as usize,
            "--connections" => {
                opts.total_connections = Some(positive(args.number(&flag)?, &flag)? as usize);
            }
            "--server" => {
                let url = args.value(&flag)?;
                let (scheme, authority, path) =
                    split_uri(&url).map_err(|e| usage(format!("{flag} {e}")))?;
                if path != "/" {
                    return Err(usage(format!(
                        "{flag} {url:?}: a server is scheme://host:port"
                    )));
                }
                opts.servers.push((scheme, authority));
            }
            "-R" => opts
                .symbols
                .push(Symbol::parse(&args.value(&flag)?).map_err(usage)?),
            "-M" => opts.wrap = Some(positive(args.number(&flag)?, &flag)?),
            "-k" => opts.tls.key = Some(PathBuf::from(args.value(&flag)?)),
            "-c" => opts.tls.cert = Some(PathBuf::from(args.value(&flag)?)),
            "-V" => opts.tls.verify = Verify::parse(&args.value(&flag)?)?,
            "-H" => opts.settings.push(args.value(&flag)?),
            "-1" | "-q" | "-Q" | "-r" | "-v" => {
                args.no_value(&flag)?;
                match short.as_str() {
                    "-1" => opts.http1 = true,
                    "-q" => opts.quiet = true,
                    "-Q" => opts.no_trace = true,
                    "-v" => opts.verbose = true,
                    _ => opts.retry = true,
                }
            }
            "-D" => opts.dump_slow = Some(Duration::from_millis(args.number(&flag)?)),
            "--duration" => opts.duration = Some(super::duration(&flag, &args.value(&flag)?)?),
            "--warmup" => opts.warmup = Some(super::duration(&flag, &args.value(&flag)?)?),
            "--timeout" => opts.timeout = Some(super::duration(&flag, &args.value(&flag)?)?),
            "--reconnect-max" => opts.reconnect_max = Some(args.number(&flag)?),
            "--requests-per-connection" => {
                opts.requests_per_connection = Some(positive(args.number(&flag)?, &flag)?);
            }
            "--keepalive" => opts.keepalive = Some(super::duration(&flag, &args.value(&flag)?)?),
            "--json" => opts.json = Some(PathBuf::from(args.value(&flag)?)),
            "--runtime" => opts.runtime = super::runtime(&args.value(&flag)?)?,
            "--threads" => opts.threads = Some(positive(args.number(&flag)?, &flag)? as usize),
            "-m" => {
                if let Some(done) = draft.take() {
                    opts.steps
                        .push(done.finish(&default_scheme, &default_authority)?);
                }
                draft = Some(Draft {
                    method: args.value(&flag)?,
                    ..Draft::default()
                });
            }
            "-u" | "-s" | "-a" | "-p" | "-x" | "-t" | "-b" | "-f" | "-e" => {
                let value = args.value(&flag)?;
                let Some(step) = draft.as_mut() else {
                    // Before any -m, -s and -a set every step's defaults.
                    match short.as_str() {
                        "-s" => default_scheme = Some(value.to_ascii_lowercase()),
                        "-a" => default_authority = Some(value),
                        _ => {
                            return Err(usage(format!(
                                "{flag}: step option before the first -m METHOD"
                            )));
                        }
                    }
                    continue;
                };
                match short.as_str() {
                    "-u" => {
                        step.uri =
                            Some(split_uri(&value).map_err(|e| usage(format!("{flag} {e}")))?)
                    }
                    "-s" => step.scheme = Some(value.to_ascii_lowercase()),
                    "-a" => step.authority = Some(value),
                    "-p" => step.path = Some(value),
                    "-x" => step.headers.push(header(&value)?),
                    "-t" => step.body = Some(body::text(&value)),
                    "-b" => step.body = Some(body::hex(&value).map_err(|e| usage(e.to_string()))?),
                    "-f" => {
                        step.body =
                            Some(body::file(value.as_ref()).map_err(|e| usage(e.to_string()))?)
                    }
                    _ => step.body = Some(body::sized(&value).map_err(|e| usage(e.to_string()))?),
                }
            }
            _ => {
                return Err(usage(format!(
                    "unknown option {flag} (see h2sim client --help)"
                )));
            }
        }
    }
    if let Some(done) = draft.take() {
        opts.steps
            .push(done.finish(&default_scheme, &default_authority)?);
    }
    match (bare_uris.len(), opts.steps.is_empty()) {
        (0, true) => {
            return Err(usage(
                "nothing to request: give a URI, or steps with -m METHOD -u URI",
            ));
        }
        (0, false) => {}
        (1, true) => {
            let (scheme, authority, path) = split_uri(&bare_uris[0]).map_err(usage)?;
            opts.steps.push(Step {
                method: "GET".into(),
                scheme,
                authority,
                path,
                headers: Vec::new(),
                body: Bytes::new(),
            });
        }
        _ => {
            return Err(usage(format!(
                "unexpected argument {:?}: give one URI, or steps with -m",
                bare_uris[0]
            )));
        }
    }
    let first = &opts.steps[0];
    if opts
        .servers
        .iter()
        .any(|(scheme, _)| *scheme != first.scheme)
    {
        return Err(usage(format!(
            "--server: every server must use the steps' scheme ({})",
            first.scheme
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
    if opts.count.is_none() && opts.duration.is_none() {
        opts.count = Some(1);
    }
    if first.scheme == "http" && (opts.tls.key.is_some() || opts.tls.cert.is_some()) {
        // h2simple loads keys only for https targets; so do we.
        opts.tls = TlsFiles {
            verify: opts.tls.verify.clone(),
            ..TlsFiles::default()
        };
    }
    if opts.tls.key.is_some() != opts.tls.cert.is_some() {
        return Err(usage("-k KEY and -c CERT go together"));
    }
    Ok(opts)
}

fn positive(n: u64, flag: &str) -> Result<u64, UsageError> {
    if n == 0 {
        return Err(usage(format!("{flag}: must be at least 1")));
    }
    Ok(n)
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
            o.steps
                .iter()
                .map(|s| s.method.as_str())
                .collect::<Vec<_>>(),
            ["POST", "GET", "DELETE"]
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

    #[test]
    fn bad_input_names_the_problem() {
        let err = |a: &[&str]| parse(args(a)).unwrap_err().0;
        assert!(err(&[]).contains("nothing to request"));
        assert!(err(&["-x", "a=b", "-m", "GET"]).contains("before the first -m"));
        assert!(err(&["-m", "GET", "-u", "notauri"]).contains("not an absolute URI"));
        assert!(err(&["-P", "0", "http://h/"]).contains("at least 1"));
        assert!(err(&["-P", "many", "http://h/"]).contains("not a valid number"));
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
}
