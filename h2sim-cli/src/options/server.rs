//! `h2sim server [options] [rules]`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::path::Path;
use std::time::Duration;

use clap::{ArgMatches, Command, FromArgMatches};
use h2sim_proto::Protocol;

use super::cli::{self, ServerFlags};
use super::grammar::{self, Occurrence, Spec};
use super::tls::{TlsFiles, Verify};
use super::{H2simpleKey, Runtime, UsageError, check_rule, header, usage};
use crate::body;
use crate::client::scenario::parse_port;
use crate::server::rules::{Body, Delay, Push, Reply, Rule};
use crate::server::status::final_status;
use crate::server::store::Limits;
use crate::trace::errln;

/// One `-S URL` listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listen {
    pub addr: std::net::SocketAddr,
    /// `https://`: TLS with these files; `http://`: plain.
    pub tls: Option<TlsFiles>,
}

/// Everything `h2sim server` was told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerArgs {
    pub listen: Vec<Listen>,
    pub settings: Vec<String>,
    /// What plain listeners speak (`-1`, `-2`); `None`: told by the first
    /// bytes (HTTP/2 prior knowledge, else HTTP/1.1 and its h2c upgrade).
    pub plain_protocol: Option<Protocol>,
    pub quiet: bool,
    pub no_trace: bool,
    pub verbose: bool,
    pub rules: Vec<Rule>,
    /// The bounds of the resource rules' store (the last rules file that
    /// sets them wins).
    pub store: Limits,
    pub runtime: Runtime,
    pub threads: Option<usize>,
    pub idle_timeout: Option<Duration>,
    pub head_read_timeout: Option<Duration>,
    pub handshake_timeout: Option<Duration>,
    /// `--requests-per-connection`: `Config::max_requests`.
    pub requests_per_connection: Option<NonZeroU32>,
    /// `--connection-window`: `Config::connection_window_size`.
    pub connection_window: Option<u32>,
    /// `--request-body-limit`: `Config::max_request_body`, which the core
    /// keeps over both protocols.
    pub request_body_limit: Option<u64>,
}

/// h2simple's `-H req_max_per_sess=N` and `-H single_request=1`: the
/// requests a connection takes, as on the client (`None`: no limit);
/// `reconn_max` is the client's alone.
fn limit_from_h2simple(spec: &str, key: H2simpleKey) -> Result<Option<NonZeroU32>, UsageError> {
    let limit = match key {
        H2simpleKey::ReqMaxPerSess(n) => u32::try_from(n).ok().and_then(NonZeroU32::new),
        H2simpleKey::SingleRequest(one) => NonZeroU32::new(u32::from(one)),
        H2simpleKey::ReconnMax(_) => {
            return Err(usage(format!(
                "-H {spec}: a client option ({}), not a server setting",
                key.flag()
            )));
        }
    };
    errln!("h2sim: -H {spec} is {} in h2sim", key.flag());
    Ok(limit)
}

/// The rule grammar, in command-line order: `-S` takes the `-k -c -V`
/// given before it; `-m` opens a rule, `-o` a push of it; `--rules` puts a
/// file's rules at its place.
const RULES: &[Spec] = &[
    Spec {
        id: "listen",
        short: Some('S'),
        long: "listen",
        value: "URL",
        help: "Listen on http://ip:port (HTTP/2 prior knowledge, HTTP/1.1 and h2c upgrade detected; -1, -2 choose one) or https://ip:port (ALPN); IPv6 as [addr]:port; localhost is 127.0.0.1 alone, and a client that tries localhost's ::1 is refused there: add -S http://[::1]:PORT to take ::1 too; repeatable",
    },
    Spec {
        id: "key",
        short: Some('k'),
        long: "key",
        value: "FILE",
        help: "Private key (PEM) for the https listeners after it [default: ./eckey.pem, else a generated certificate]",
    },
    Spec {
        id: "cert",
        short: Some('c'),
        long: "cert",
        value: "FILE",
        help: "Certificate chain (PEM) for the https listeners after it [default: ./eccert.pem, else generated]",
    },
    Spec {
        id: "verify",
        short: Some('V'),
        long: "verify",
        value: "SPEC",
        help: "Client certificates, for the listeners after it: none | verify (or peer) | pass, trust_file=PEM, trust_dir=DIR, crl, crl_all, purpose (comma-separated; see TLS below)",
    },
    Spec {
        id: "method",
        short: Some('m'),
        long: "method",
        value: "METHOD",
        help: "Start a rule matching this method",
    },
    Spec {
        id: "authority",
        short: Some('a'),
        long: "authority",
        value: "HOST",
        help: "Match :authority exactly",
    },
    Spec {
        id: "path",
        short: Some('p'),
        long: "path",
        value: "PREFIX",
        help: "Match paths starting with PREFIX",
    },
    Spec {
        id: "status",
        short: Some('s'),
        long: "status",
        value: "CODE",
        help: "Response status, a final one: 200-599 [default: 200]",
    },
    Spec {
        id: "header",
        short: Some('x'),
        long: "header",
        value: "NAME=VALUE",
        help: "Response field (repeatable); ${path}, ${suffix}, ${seg1}... in the value as in -t",
    },
    Spec {
        id: "text",
        short: Some('t'),
        long: "text",
        value: "TEXT",
        help: "Body; ${path}, ${suffix} (after the -p prefix), ${seg1}... (its segments) echo the request path, in pushes too",
    },
    Spec {
        id: "hex",
        short: Some('b'),
        long: "hex",
        value: "HEX",
        help: "Body as hex digits (optional 0x prefix, spaces allowed)",
    },
    Spec {
        id: "file",
        short: Some('f'),
        long: "file",
        value: "FILE",
        help: "Body from a file",
    },
    Spec {
        id: "size",
        short: Some('e'),
        long: "size",
        value: "N|Nk|Nm",
        help: "Generated JSON body of exactly this size",
    },
    Spec {
        id: "dir",
        short: Some('d'),
        long: "dir",
        value: "DIR",
        help: "Serve files under DIR: the path after the rule's -p prefix names the file (never outside DIR)",
    },
    Spec {
        id: "delay",
        short: None,
        long: "delay",
        value: "MS|MIN-MAX",
        help: "Hold the response back (a slow network function)",
    },
    Spec {
        id: "push",
        short: Some('o'),
        long: "push",
        value: "PATH",
        help: "Push PATH before the response; -s -x -t -b -f -e after it describe the pushed response",
    },
    Spec {
        id: "rules",
        short: None,
        long: "rules",
        value: "FILE",
        help: "Rules from a .toml or .yaml file, at this place in the order (see below); files can also match query, fields and JSON body, keep resources, answer with problem details, issue OAuth2 tokens and send notifications (h2sim-cli/examples/README.md)",
    },
];

/// `server`'s command: clap's options plus the rule grammar.
pub fn add_grammar(command: Command) -> Command {
    grammar::add(
        command,
        "Listeners and rules (in order; checked in order, first match wins, no match is 404)",
        RULES,
    )
}

/// h2simple's key and certificate, read from the working directory when
/// no `-k`/`-c` is given.
pub const DEFAULT_KEY: &str = "eckey.pem";
pub const DEFAULT_CERT: &str = "eccert.pem";

/// Parses a listen URL: `http://ip:port`, `https://[v6]:port`,
/// `http://localhost:port`, a `/` after it allowed. localhost is
/// 127.0.0.1 alone, not what the resolver says: a listener is one socket on
/// one address, and `--help` says how to take ::1 as well (a second `-S
/// http://[::1]:port`, which the same port allows). Scheme and
/// host are case-insensitive (RFC 3986 §3.1, §3.2.2), as the client takes
/// them. `Err` says why, for the caller to prefix with its option (`-S`,
/// the client's `--listen`).
pub fn parse_listen(url: &str) -> Result<(bool, SocketAddr), String> {
    let expected = || "expected http://ip:port or https://ip:port".to_owned();
    let (scheme, rest) = url.split_once("://").ok_or_else(expected)?;
    let secure = if scheme.eq_ignore_ascii_case("https") {
        true
    } else if scheme.eq_ignore_ascii_case("http") {
        false
    } else {
        return Err(expected());
    };
    let rest = rest.trim_end_matches('/');
    if let Ok(addr) = rest.parse() {
        return Ok((secure, addr));
    }
    let not_ip_port = || format!("{rest:?} is not ip:port (IPv6 as [addr]:port)");
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() => (host, port),
        Some(_) => return Err(not_ip_port()),
        None => return Err(format!("{rest:?}: no port (ip:port, IPv6 as [addr]:port)")),
    };
    let ip: IpAddr = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6.parse::<Ipv6Addr>().map_err(|_| not_ip_port())?.into(),
        None if host.eq_ignore_ascii_case("localhost") => Ipv4Addr::LOCALHOST.into(),
        None => host.parse::<Ipv4Addr>().map_err(|_| not_ip_port())?.into(),
    };
    let port = parse_port(port, 0)?;
    Ok((secure, SocketAddr::new(ip, port)))
}

/// Parses the arguments after `server` (what `main` does through the
/// top-level command), for tests, with relative paths in the working
/// directory.
#[cfg(test)]
pub fn parse(args: Vec<String>) -> Result<ServerArgs, UsageError> {
    parse_in(args, Path::new("."))
}

/// `parse`, with relative paths in `dir`.
#[cfg(test)]
pub fn parse_in(args: Vec<String>, dir: &Path) -> Result<ServerArgs, UsageError> {
    let matches = cli::subcommand("server")
        .try_get_matches_from(args)
        .map_err(|e| cli::one_line(&e))?;
    from_matches(&matches, dir)
}

/// Builds the options from what clap matched for `server`. Relative paths
/// (`-k -c -f -d --rules`, `-V`'s trust files, h2simple's default
/// `eckey.pem`/`eccert.pem`) are taken from `dir`: the binary passes its
/// working directory, tests a scratch directory of their own.
pub fn from_matches(matches: &ArgMatches, dir: &Path) -> Result<ServerArgs, UsageError> {
    let flags = ServerFlags::from_arg_matches(matches).map_err(|e| cli::one_line(&e))?;
    let mut opts = ServerArgs {
        listen: Vec::new(),
        settings: Vec::new(),
        plain_protocol: match (flags.http1, flags.http2) {
            (true, _) => Some(Protocol::Http1),
            (_, true) => Some(Protocol::Http2),
            _ => None,
        },
        quiet: flags.quiet,
        no_trace: flags.no_trace,
        verbose: flags.verbose,
        rules: Vec::new(),
        store: Limits::default(),
        runtime: flags.runtime,
        threads: flags.threads.filter(|&n| n > 0),
        idle_timeout: flags.idle_timeout,
        head_read_timeout: flags.head_read_timeout,
        handshake_timeout: flags.handshake_timeout,
        requests_per_connection: flags.requests_per_connection,
        connection_window: flags.connection_window,
        request_body_limit: flags.request_body_limit,
    };
    for spec in flags.settings {
        if let Some(key) = H2simpleKey::parse(&spec) {
            let limit = limit_from_h2simple(&spec, key?)?;
            opts.requests_per_connection = opts.requests_per_connection.or(limit);
            continue;
        }
        let mut probe = h2sim_proto::LocalSettings::from_config(&h2sim_proto::Config::default());
        super::apply_setting(&mut probe, &spec)?;
        opts.settings.push(spec);
    }
    replay(&mut opts, &grammar::ordered(matches, RULES), dir)?;
    if opts.listen.is_empty() {
        return Err(usage(
            "no listener: give -S http://ip:port or -S https://ip:port",
        ));
    }
    for listen in &mut opts.listen {
        if let Some(tls) = &mut listen.tls {
            default_identity(tls, listen.addr, dir)?;
        }
    }
    Ok(opts)
}

/// An https listener without `-k`/`-c`: h2simple's `eckey.pem`/`eccert.pem`
/// from `dir` (the working directory) when both are there, else a
/// certificate generated at start for the listener's names.
fn default_identity(
    tls: &mut TlsFiles,
    addr: std::net::SocketAddr,
    dir: &Path,
) -> Result<(), UsageError> {
    match (&tls.key, &tls.cert) {
        (Some(_), Some(_)) => Ok(()),
        (None, None) => {
            let (key, cert) = (dir.join(DEFAULT_KEY), dir.join(DEFAULT_CERT));
            if key.is_file() && cert.is_file() {
                tls.key = Some(key);
                tls.cert = Some(cert);
            } else {
                tls.self_signed_for = listener_names(addr);
            }
            Ok(())
        }
        _ => Err(usage(format!(
            "-S https://{addr}: -k KEY and -c CERT go together"
        ))),
    }
}

/// The names a generated certificate covers: the listener's address, and
/// for a wildcard address the loopback ones and localhost.
fn listener_names(addr: std::net::SocketAddr) -> Vec<String> {
    let mut names = vec!["localhost".to_owned()];
    if addr.ip().is_unspecified() {
        names.extend(["127.0.0.1".to_owned(), "::1".to_owned()]);
    } else {
        names.push(addr.ip().to_string());
    }
    names
}

/// Where the flags after `-m` and `-o` go.
enum Target {
    None,
    Rule,
    Push,
    /// Right after `--rules`: the file's last rule is not open for more.
    AfterFile,
}

/// Replays the listener and rule grammar in order.
fn replay(opts: &mut ServerArgs, occurrences: &[Occurrence], dir: &Path) -> Result<(), UsageError> {
    let mut tls = TlsFiles::default();
    // A `-k -c -V` no https listener has taken yet: one left at the end
    // would be ignored, and its listener would run without it.
    let mut untaken: Option<&str> = None;
    let mut target = Target::None;
    // The rules the flags made, by index.
    let mut from_flags = Vec::new();
    for Occurrence { id, flag, value } in occurrences {
        let flag = flag.as_str();
        let value = value.as_str();
        match *id {
            "listen" => {
                let (secure, addr) =
                    parse_listen(value).map_err(|why| usage(format!("{flag} {value:?}: {why}")))?;
                // Port 0 is a new port each time; any other, bound twice,
                // fails with "Address already in use" once the run starts.
                if addr.port() != 0 && opts.listen.iter().any(|l| l.addr == addr) {
                    return Err(usage(format!(
                        "{flag} {value:?}: {addr} is given twice: each -S needs an address of its own"
                    )));
                }
                if secure {
                    untaken = None;
                }
                opts.listen.push(Listen {
                    addr,
                    tls: secure.then(|| tls.clone()),
                });
            }
            "key" | "cert" | "verify" => {
                untaken.get_or_insert(flag);
                match *id {
                    "key" => tls.key = Some(dir.join(value)),
                    "cert" => tls.cert = Some(dir.join(value)),
                    _ => tls.verify = Verify::parse(value)?.relative_to(dir),
                }
            }
            "rules" => {
                // The file's rules take their place in the order given.
                let file = super::rules_file::load(&dir.join(value))?;
                opts.rules.extend(file.rules);
                if let Some(limits) = file.store {
                    opts.store = limits;
                }
                target = Target::AfterFile;
            }
            "method" => {
                from_flags.push(opts.rules.len());
                opts.rules.push(Rule::new(value));
                target = Target::Rule;
            }
            "push" => {
                let rule = match target {
                    Target::Rule | Target::Push => opts.rules.last_mut(),
                    Target::None | Target::AfterFile => None,
                }
                .ok_or_else(|| {
                    usage(format!("{flag}: a push needs a rule; put -m METHOD first"))
                })?;
                rule.pushes.push(Push {
                    path: value.to_owned(),
                    reply: Reply::default(),
                });
                target = Target::Push;
            }
            "authority" | "path" | "dir" | "delay" => {
                // These describe the rule, not a push: a push's path is its -o.
                let rule = open_rule(opts, &target, flag)?;
                match *id {
                    "authority" => rule.authority = Some(value.to_owned()),
                    "path" => rule.path_prefix = Some(value.to_owned()),
                    "dir" => {
                        let files = dir.join(value);
                        if !files.is_dir() {
                            return Err(usage(format!("{flag} {value:?}: not a directory")));
                        }
                        rule.dir = Some(files);
                    }
                    _ => {
                        rule.delay = Some(Delay::parse(value).ok_or_else(|| {
                            usage(format!(
                                "{flag} {value:?}: expected MS or MIN-MAX milliseconds"
                            ))
                        })?);
                    }
                }
            }
            _ => {
                let reply = match target {
                    Target::Push => opts
                        .rules
                        .last_mut()
                        .and_then(|r| r.pushes.last_mut())
                        .map(|p| &mut p.reply),
                    _ => Some(&mut open_rule(opts, &target, flag)?.reply),
                }
                .ok_or_else(|| usage(format!("{flag}: rule option before the first -m METHOD")))?;
                apply_reply(reply, &format!("-{}", short_of(id)), flag, value, dir)?;
            }
        }
    }
    if let Some(flag) = untaken {
        return Err(usage(format!(
            "{flag}: no https listener follows it (-k, -c and -V apply to the -S https://... after them)"
        )));
    }
    // A rules file's rules were checked as it was read, named by file and
    // number; these are named by their flags.
    for &i in &from_flags {
        let rule = &opts.rules[i];
        let path = rule.path_prefix.as_deref().map(|p| format!(" -p {p}"));
        let at = format!("-m {}{}", rule.method, path.unwrap_or_default());
        check_rule(rule, &at)?;
    }
    Ok(())
}

/// The rule that `-a -p -d --delay -s ...` describe.
fn open_rule<'a>(
    opts: &'a mut ServerArgs,
    target: &Target,
    flag: &str,
) -> Result<&'a mut Rule, UsageError> {
    match target {
        Target::Rule | Target::Push => opts.rules.last_mut(),
        Target::None => None,
        Target::AfterFile => {
            return Err(usage(format!(
                "{flag}: no rule open after --rules; start one with -m METHOD"
            )));
        }
    }
    .ok_or_else(|| usage(format!("{flag}: rule option before the first -m METHOD")))
}

/// The reply options' short letters, as `apply_reply` takes them.
fn short_of(id: &str) -> char {
    RULES
        .iter()
        .find(|s| s.id == id)
        .and_then(|s| s.short)
        .unwrap_or('?')
}

/// Applies `-s -x -t -b -f -e` to a reply; `-f` files are read from `dir`.
pub fn apply_reply(
    reply: &mut Reply,
    short: &str,
    flag: &str,
    value: &str,
    dir: &Path,
) -> Result<(), UsageError> {
    let body_flag = matches!(short, "-t" | "-b" | "-f" | "-e");
    if body_flag && !matches!(reply.body, Body::Empty) {
        // As a rules file's `give at most one of text, hex, file, size`:
        // the last would silently win.
        return Err(usage(format!(
            "{flag}: this response has a body already: give one of -t, -b, -f, -e"
        )));
    }
    match short {
        "-s" => {
            reply.status =
                final_status(value).map_err(|e| usage(format!("{flag} {value}: {e}")))?;
        }
        "-x" => reply.headers.push(header(value)?),
        "-t" => reply.body = Body::from_text(value),
        "-b" => reply.body = Body::Fixed(body::hex(value).map_err(|e| usage(e.to_string()))?),
        "-f" => {
            reply.body =
                Body::Fixed(body::file(&dir.join(value)).map_err(|e| usage(e.to_string()))?)
        }
        _ => reply.body = Body::Fixed(body::sized(value).map_err(|e| usage(e.to_string()))?),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use h2sim_proto::HeaderField;

    fn text(reply: &Reply) -> Bytes {
        reply.body.render("", "")
    }

    fn args(s: &str) -> Vec<String> {
        // Single quotes group words, like a shell.
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        for c in s.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                }
                c => cur.push(c),
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    #[test]
    fn h2simple_server_with_rules() {
        let o = parse(args(
            "-S http://0.0.0.0:8080 -S http://[::1]:8082 \
             -m POST -p /user/ -s 200 -x content-type=application/json -t '{ \"RESULT\" : \"SUCCESS\" }' \
             -m GET -p /user/ -s 200 -x content-type=application/json -t '{ \"USER_NAME\" : \"somebody\" }' \
             -m DELETE -p /user/ -s 200 \
             -m GET -p /user2/ -s 404",
        ))
        .unwrap();
        assert_eq!(o.listen.len(), 2);
        assert_eq!(o.listen[1].addr, "[::1]:8082".parse().unwrap());
        assert_eq!(o.rules.len(), 4);
        assert_eq!(o.rules[0].method, "POST");
        assert_eq!(
            o.rules[0].reply.headers,
            vec![HeaderField::new("content-type", "application/json")]
        );
        assert_eq!(
            &text(&o.rules[1].reply)[..],
            b"{ \"USER_NAME\" : \"somebody\" }"
        );
        assert_eq!(o.rules[3].reply.status, 404);
    }

    #[test]
    fn pushes_take_the_flags_after_o() {
        let o = parse(args(
            "-S http://127.0.0.1:8080 -m POST -p /user1k/ -s 200 -x content-type=application/json -e 1k \
             -o /user1k/name1 -s 200 -x content-type=application/json -t '1k_name1' \
             -o /user1k/name2 -s 201 -t '1k_name2' -m GET -p /x",
        ))
        .unwrap();
        let rule = &o.rules[0];
        assert_eq!(text(&rule.reply).len(), 1024);
        assert_eq!(rule.pushes.len(), 2);
        assert_eq!(rule.pushes[0].path, "/user1k/name1");
        assert_eq!(&text(&rule.pushes[0].reply)[..], b"1k_name1");
        assert_eq!(rule.pushes[1].reply.status, 201);
        assert_eq!(o.rules[1].method, "GET");
    }

    /// Schemes and hosts are case-insensitive (RFC 3986 §3.1, §3.2.2), as
    /// the client takes them; a port out of range is named in the client's
    /// words; the same address twice is a bad option, not a failed bind.
    #[test]
    fn listen_forms() {
        let addr = |s: &str| {
            let o = parse(args(&format!("-S {s} -m GET"))).unwrap();
            (o.listen[0].tls.is_some(), o.listen[0].addr.to_string())
        };
        for (url, secure, at) in [
            ("HTTP://127.0.0.1:8080", false, "127.0.0.1:8080"),
            ("http://LOCALHOST:8080", false, "127.0.0.1:8080"),
            ("Https://localhost:8443/", true, "127.0.0.1:8443"),
            ("http://0.0.0.0:8080", false, "0.0.0.0:8080"),
            ("https://[::1]:8082", true, "[::1]:8082"),
            ("http://[::]:0", false, "[::]:0"),
        ] {
            assert_eq!(addr(url), (secure, at.to_owned()), "{url}");
        }
        let err = |s: &str| parse(args(s)).unwrap_err().0;
        assert_eq!(
            err("-S http://127.0.0.1:99999 -m GET"),
            r#"-S "http://127.0.0.1:99999": port "99999" is not 0-65535"#
        );
        assert!(err("-S http://127.0.0.1:+80 -m GET").contains(r#"port "+80" is not"#));
        assert_eq!(
            err("-S http://127.0.0.1:8080 -S https://127.0.0.1:8080 -m GET"),
            r#"-S "https://127.0.0.1:8080": 127.0.0.1:8080 is given twice: each -S needs an address of its own"#
        );
        // Port 0 is a new port each time.
        let o = parse(args("-S http://127.0.0.1:0 -S http://127.0.0.1:0 -m GET")).unwrap();
        assert_eq!(o.listen.len(), 2);
        // localhost and ::1 on one port, as --help says to take both.
        let o = parse(args("-S http://localhost:8080 -S http://[::1]:8080 -m GET")).unwrap();
        let addrs: Vec<_> = o.listen.iter().map(|l| l.addr.to_string()).collect();
        assert_eq!(addrs, ["127.0.0.1:8080", "[::1]:8080"]);
    }

    #[test]
    fn bad_input_names_the_problem() {
        let err = |s: &str| parse(args(s)).unwrap_err().0;
        assert!(err("-S http://1.2.3.4:1 -p /x").contains("before the first -m"));
        assert!(err("-S http://1.2.3.4:1 --bogus").contains("unknown option --bogus"));
        assert!(err("-S ftp://x").contains("-S"));
        assert!(err("-S http://nohost:80").contains("not ip:port"));
        assert!(err("-S http://nohost").contains("no port"));
        assert!(err("-m GET").contains("no listener"));
        assert!(err("-k only.key -S https://127.0.0.1:1").contains("-k KEY and -c CERT"));
        assert!(err("-S http://127.0.0.1:1 -m GET -s abc").contains("not a status"));
        // RFC 9110 §8.6: a rule's own content-length is its body's size;
        // over HTTP/1.1 another would misframe the connection's answers.
        for (tail, says) in [
            (
                "-x content-length=5 -t hi",
                "-m GET -p /a: content-length 5 but the body has 2 bytes (RFC 9110 §8.6)",
            ),
            (
                "-x content-length=9 -t ${suffix}",
                "content-length 9 for a body whose size varies",
            ),
        ] {
            let line = err(&format!("-S http://127.0.0.1:1 -m GET -p /a {tail}"));
            assert!(line.contains(says), "{tail}: {line}");
        }
        for fine in [
            "-m GET -p /a -x content-length=3 -t abc",
            "-m HEAD -p /a -x content-length=100",
            "-m GET -p /a -s 304 -x content-length=100",
        ] {
            assert!(
                parse(args(&format!("-S http://127.0.0.1:1 {fine}"))).is_ok(),
                "{fine}"
            );
        }
        // A timeout of 0 would end every connection as it starts.
        for flag in [
            "--idle-timeout",
            "--head-read-timeout",
            "--handshake-timeout",
        ] {
            let line = err(&format!("-S http://127.0.0.1:1 {flag} 0 -m GET"));
            assert!(
                line.contains(flag) && line.contains("must be above 0"),
                "{line}"
            );
        }
        // RFC 9110 §15: 100-599; a rule's answer is final (§15.2), and
        // HTTP/2 has no 101 (RFC 9113 §8.6).
        for (tail, says) in [
            (
                "-s 999",
                "-s 999: 999 is not a status code (100-599, RFC 9110 §15)",
            ),
            ("-s 100", "-s 100: 100 is interim (RFC 9110 §15.2)"),
            ("-s 101", "RFC 9113 §8.6"),
            ("-o /x -s 103", "-s 103: 103 is interim"),
        ] {
            let line = err(&format!("-S http://127.0.0.1:1 -m GET -p /a {tail}"));
            assert!(line.contains(says), "{tail}: {line}");
        }
        // RFC 9110 §6.4.1: a 204 or 304 has no content to give.
        for (tail, says) in [
            (
                "-s 204 -t body",
                "-m GET -p /a: a 204 has no content (RFC 9110 §6.4.1)",
            ),
            ("-e 1k -s 304", "-m GET -p /a: a 304 has no content"),
            ("-o /x -s 204 -t body", "push /x: a 204 has no content"),
            ("-s 204 -d .", "a 204 has no content"),
        ] {
            let line = err(&format!("-S http://127.0.0.1:1 -m GET -p /a {tail}"));
            assert!(line.contains(says), "{tail}: {line}");
        }
        assert!(
            parse(args(
                "-S http://127.0.0.1:1 -m GET -s 204 -m GET -s 200 -t x"
            ))
            .is_ok()
        );
        // What no request has: a method that is no token, a path that
        // does not start with / or has a space (a push's too, which the
        // client reset while the server counted it pushed).
        for (rule, says) in [
            (
                "-m GE,T",
                "-m GE,T: method \"GE,T\" is not a token (RFC 9110 §9.1)",
            ),
            (
                "-m GET -p x",
                "-m GET -p x: path \"x\" is no request's path",
            ),
            (
                "-m GET -p /a -o rel",
                "-m GET -p /a: push path \"rel\" is no request's path",
            ),
        ] {
            let line = err(&format!("-S http://127.0.0.1:1 {rule}"));
            assert!(line.contains(says), "{rule}: {line}");
        }
        // Two bodies: the last one won, where a rules file refuses them.
        assert!(
            err("-S http://127.0.0.1:1 -m GET -p /a -t a -b 4243")
                .contains("-b: this response has a body already: give one of -t, -b, -f, -e")
        );
        assert!(parse(args("-S http://127.0.0.1:1 -m GET -p /a -e 1k -o /b -t x")).is_ok());
        // A brace that is no whole {name} segment is a capture mistyped.
        assert!(
            err("-S http://127.0.0.1:1 -m GET -p /a/{id")
                .contains("-m GET -p /a/{id: path /a/{id: a capture is a whole segment")
        );
        assert!(
            err("-S http://127.0.0.1:1 -m GET -f /definitely/missing")
                .contains("/definitely/missing")
        );
        assert!(err("-S http://127.0.0.1:1 -m").contains("needs a value"));
        assert!(err("-S http://127.0.0.1:1 -o /x").contains("needs a rule"));
    }

    #[test]
    fn long_forms_match_short_ones() {
        let a = parse(args("-S http://127.0.0.1:1 -m GET -p /a -s 201 -q")).unwrap();
        let b = parse(args(
            "--listen=http://127.0.0.1:1 --method GET --path /a --status=201 --quiet",
        ))
        .unwrap();
        assert_eq!(a, b);
    }

    /// Issue 10 item 13: `--rules FILE` rules take their place in the
    /// order given, between the rules before and after it.
    #[test]
    fn rules_file_takes_its_place() {
        let file = tempfile::Builder::new()
            .prefix("h2sim-order-")
            .suffix(".toml")
            .tempfile()
            .unwrap();
        std::fs::write(
            file.path(),
            "[[rule]]\nmethod = \"PUT\"\n[[rule]]\nmethod = \"PATCH\"\n",
        )
        .unwrap();
        let line = format!(
            "-S http://127.0.0.1:1 -m GET -s 201 --rules {} -m DELETE",
            file.path().display()
        );
        let o = parse(args(&line)).unwrap();
        let methods: Vec<_> = o.rules.iter().map(|r| r.method.as_str()).collect();
        assert_eq!(methods, ["GET", "PUT", "PATCH", "DELETE"]);
        assert_eq!(o.rules[0].reply.status, 201);
        let err = parse(args(&format!(
            "-S http://127.0.0.1:1 --rules {} -s 404",
            file.path().display()
        )))
        .unwrap_err();
        assert!(err.0.contains("after --rules"), "{err}");
        file.close().unwrap();
    }

    /// -k/-c/-V apply to the listeners after them, in order.
    #[test]
    fn tls_files_apply_to_later_listeners() {
        let o = parse(args(
            "-S https://127.0.0.1:1 -k a.key -c a.crt -S https://127.0.0.1:2 -m GET",
        ))
        .unwrap();
        // After the last https listener they would apply to none.
        let err = |s: &str| parse(args(s)).unwrap_err().0;
        for tail in [
            "-k a.key -c a.crt",
            "-V verify",
            "-k a.key -c a.crt -S http://127.0.0.1:2",
        ] {
            let line = format!("-S https://127.0.0.1:1 {tail} -m GET");
            assert!(
                err(&line).contains("no https listener follows it"),
                "{line}"
            );
        }
        let first = o.listen[0].tls.clone().unwrap();
        let second = o.listen[1].tls.clone().unwrap();
        assert!(first.key.is_none() && !first.self_signed_for.is_empty());
        assert_eq!(second.key, Some("./a.key".into()));
        assert!(
            parse(args("-S http://1.2.3.4:1 -H reconn_max=3"))
                .unwrap_err()
                .0
                .contains("--reconnect-max 3")
        );
        // The request limit is the server's too.
        for (spec, limit) in [
            ("req_max_per_sess=37", NonZeroU32::new(37)),
            ("single_request=1", NonZeroU32::new(1)),
            ("req_max_per_sess=0", None),
        ] {
            let o = parse(args(&format!("-S http://1.2.3.4:1 -H {spec}"))).unwrap();
            assert_eq!(o.requests_per_connection, limit, "{spec}");
        }
    }

    /// `--request-body-limit`: N, Nk, Nm or Ng, 0 included, and past the
    /// 1 GiB that sizes which are allocated stop at; anything else is one
    /// line.
    #[test]
    fn request_body_limit_takes_any_size() {
        let limit = |value: &str| {
            parse(args(&format!(
                "-S http://1.2.3.4:1 --request-body-limit {value}"
            )))
            .map(|o| o.request_body_limit)
        };
        assert_eq!(
            parse(args("-S http://1.2.3.4:1"))
                .unwrap()
                .request_body_limit,
            None
        );
        for (value, bytes) in [
            ("0", 0),
            ("100k", 100 << 10),
            ("64m", 64 << 20),
            ("4g", 4 << 30),
        ] {
            assert_eq!(limit(value).unwrap(), Some(bytes), "{value}");
        }
        for value in ["1.5m", "1t", "big", "99999999999g"] {
            let line = limit(value).unwrap_err().0;
            assert!(
                line.starts_with("--request-body-limit ")
                    && line.ends_with("not a size (N, Nk, Nm or Ng)"),
                "{value}: {line}"
            );
        }
    }

    /// `--connection-window`: N, Nk or Nm, from the 65,535 every connection
    /// starts with to 1 GiB; anything else is one line.
    #[test]
    fn connection_window_is_bounded() {
        for (value, window) in [("64k", 65_536), ("65535", 65_535), ("1024m", 1 << 30)] {
            let o = parse(args(&format!(
                "-S http://1.2.3.4:1 --connection-window {value}"
            )))
            .unwrap();
            assert_eq!(o.connection_window, Some(window), "{value}");
        }
        for value in ["65534", "1k", "1025m", "lots"] {
            let line = parse(args(&format!(
                "-S http://1.2.3.4:1 --connection-window {value}"
            )))
            .unwrap_err()
            .0;
            assert!(line.contains("--connection-window"), "{value}: {line}");
        }
    }
}
