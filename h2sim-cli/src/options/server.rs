//! `h2sim server [options] [rules]`.

use std::path::PathBuf;
use std::time::Duration;

use super::tls::{TlsFiles, Verify};
use super::{Args, Runtime, Token, UsageError, canonical, header, usage};
use crate::body;
use crate::server::rules::{Body, Delay, Push, Reply, Rule};

/// One `-S URL` listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listen {
    pub addr: std::net::SocketAddr,
    /// `https://`: TLS with these files; `http://`: plain.
    pub tls: Option<TlsFiles>,
}

/// Everything `h2sim server` was told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    pub listen: Vec<Listen>,
    pub settings: Vec<String>,
    pub http1: bool,
    pub quiet: bool,
    pub no_trace: bool,
    pub verbose: bool,
    pub rules: Vec<Rule>,
    pub runtime: Runtime,
    pub threads: Option<usize>,
    pub idle_timeout: Option<Duration>,
}

const FLAGS: &[(&str, &str)] = &[
    ("-S", "--listen"),
    ("-k", "--key"),
    ("-c", "--cert"),
    ("-V", "--verify"),
    ("-H", "--setting"),
    ("-1", "--http1"),
    ("-q", "--quiet"),
    ("-Q", "--no-trace"),
    ("-v", "--verbose"),
    ("-m", "--method"),
    ("-a", "--authority"),
    ("-p", "--path"),
    ("-s", "--status"),
    ("-x", "--header"),
    ("-t", "--text"),
    ("-b", "--hex"),
    ("-f", "--file"),
    ("-e", "--size"),
    ("-d", "--dir"),
    ("-o", "--push"),
];

/// Parses a listen URL: `http://ip:port`, `https://[v6]:port`.
pub fn parse_listen(url: &str) -> Result<(bool, std::net::SocketAddr), UsageError> {
    let (secure, rest) = if let Some(rest) = url.strip_prefix("https://") {
        (true, rest)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (false, rest)
    } else {
        return Err(usage(format!(
            "-S {url:?}: expected http://ip:port or https://ip:port"
        )));
    };
    let rest = rest.trim_end_matches('/');
    let addr = rest
        .parse()
        .or_else(|_| match rest.rsplit_once(':') {
            Some(("localhost", port)) => format!("127.0.0.1:{port}").parse(),
            _ => rest.parse(),
        })
        .map_err(|_| {
            usage(format!(
                "-S {url:?}: {rest:?} is not ip:port (IPv6 as [addr]:port)"
            ))
        })?;
    Ok((secure, addr))
}

/// Where the flags after `-m` and `-o` go.
enum Target {
    None,
    Rule,
    Push,
}

/// Parses the arguments after `server`.
pub fn parse(args: Vec<String>) -> Result<ServerOptions, UsageError> {
    let mut args = Args::new(args);
    let mut opts = ServerOptions {
        listen: Vec::new(),
        settings: Vec::new(),
        http1: false,
        quiet: false,
        no_trace: false,
        verbose: false,
        rules: Vec::new(),
        runtime: Runtime::Tokio,
        threads: None,
        idle_timeout: None,
    };
    let mut tls = TlsFiles::default();
    let mut target = Target::None;
    let mut rules_files = Vec::new();
    while let Some(token) = args.next_token() {
        let flag = match token? {
            Token::Word(w) => return Err(usage(format!("unexpected argument {w:?}"))),
            Token::Flag(f) => f,
        };
        let short = canonical(&flag, FLAGS);
        match short.as_str() {
            "-S" => {
                let (secure, addr) = parse_listen(&args.value(&flag)?)?;
                opts.listen.push(Listen {
                    addr,
                    tls: secure.then(|| tls.clone()),
                });
            }
            "-k" => tls.key = Some(PathBuf::from(args.value(&flag)?)),
            "-c" => tls.cert = Some(PathBuf::from(args.value(&flag)?)),
            "-V" => tls.verify = Verify::parse(&args.value(&flag)?)?,
            "-H" => opts.settings.push(args.value(&flag)?),
            "-1" => {
                args.no_value(&flag)?;
                opts.http1 = true;
            }
            "-q" => {
                args.no_value(&flag)?;
                opts.quiet = true;
            }
            "-Q" => {
                args.no_value(&flag)?;
                opts.no_trace = true;
            }
            "-v" => {
                args.no_value(&flag)?;
                opts.verbose = true;
            }
            "--rules" => rules_files.push(PathBuf::from(args.value(&flag)?)),
            "--runtime" => opts.runtime = super::runtime(&args.value(&flag)?)?,
            "--threads" => opts.threads = Some(args.number(&flag)?).filter(|&n| n > 0),
            "--idle-timeout" => {
                opts.idle_timeout = Some(super::duration(&flag, &args.value(&flag)?)?)
            }
            "-m" => {
                opts.rules.push(Rule::new(&args.value(&flag)?));
                target = Target::Rule;
            }
            "-o" => {
                let path = args.value(&flag)?;
                let rule = opts.rules.last_mut().ok_or_else(|| {
                    usage(format!("{flag}: a push needs a rule; put -m METHOD first"))
                })?;
                rule.pushes.push(Push {
                    path,
                    reply: Reply::default(),
                });
                target = Target::Push;
            }
            "-a" | "-p" | "-d" | "--delay" => {
                let value = args.value(&flag)?;
                let rule = match target {
                    Target::Rule => opts.rules.last_mut(),
                    // These describe the rule, not a push: a push's path is its -o.
                    Target::Push => opts.rules.last_mut(),
                    Target::None => None,
                }
                .ok_or_else(|| usage(format!("{flag}: rule option before the first -m METHOD")))?;
                match short.as_str() {
                    "-a" => rule.authority = Some(value),
                    "-p" => rule.path_prefix = Some(value),
                    "-d" => {
                        let dir = PathBuf::from(&value);
                        if !dir.is_dir() {
                            return Err(usage(format!("{flag} {value:?}: not a directory")));
                        }
                        rule.dir = Some(dir);
                    }
                    _ => {
                        rule.delay = Some(Delay::parse(&value).ok_or_else(|| {
                            usage(format!(
                                "{flag} {value:?}: expected MS or MIN-MAX milliseconds"
                            ))
                        })?);
                    }
                }
            }
            "-s" | "-x" | "-t" | "-b" | "-f" | "-e" => {
                let value = args.value(&flag)?;
                let reply = match target {
                    Target::Rule => opts.rules.last_mut().map(|r| &mut r.reply),
                    Target::Push => opts
                        .rules
                        .last_mut()
                        .and_then(|r| r.pushes.last_mut())
                        .map(|p| &mut p.reply),
                    Target::None => None,
                }
                .ok_or_else(|| usage(format!("{flag}: rule option before the first -m METHOD")))?;
                apply_reply(reply, &short, &flag, &value)?;
            }
            _ => {
                return Err(usage(format!(
                    "unknown option {flag} (see h2sim server --help)"
                )));
            }
        }
    }
    for file in rules_files {
        opts.rules.extend(crate::server::rules_file::load(&file)?);
    }
    if opts.listen.is_empty() {
        return Err(usage(
            "no listener: give -S http://ip:port or -S https://ip:port",
        ));
    }
    for listen in &opts.listen {
        if let Some(tls) = &listen.tls
            && (tls.key.is_none() || tls.cert.is_none())
        {
            return Err(usage(format!(
                "-S https://{}: needs -k KEY and -c CERT before it",
                listen.addr
            )));
        }
    }
    Ok(opts)
}

/// Applies `-s -x -t -b -f -e` to a reply.
pub fn apply_reply(
    reply: &mut Reply,
    short: &str,
    flag: &str,
    value: &str,
) -> Result<(), UsageError> {
    match short {
        "-s" => {
            reply.status = value
                .parse()
                .ok()
                .filter(|s| (100..=999).contains(s))
                .ok_or_else(|| usage(format!("{flag} {value:?}: not a status code")))?;
        }
        "-x" => reply.headers.push(header(value)?),
        "-t" => reply.body = Body::from_text(value),
        "-b" => reply.body = Body::Fixed(body::hex(value).map_err(|e| usage(e.to_string()))?),
        "-f" => {
            reply.body = Body::Fixed(body::file(value.as_ref()).map_err(|e| usage(e.to_string()))?)
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

    #[test]
    fn bad_input_names_the_problem() {
        let err = |s: &str| parse(args(s)).unwrap_err().0;
        assert!(err("-S http://1.2.3.4:1 -p /x").contains("before the first -m"));
        assert!(err("-S http://1.2.3.4:1 --bogus").contains("unknown option --bogus"));
        assert!(err("-S ftp://x").contains("-S"));
        assert!(err("-S http://nohost").contains("not ip:port"));
        assert!(err("-m GET").contains("no listener"));
        assert!(err("-S https://127.0.0.1:1").contains("-k KEY"));
        assert!(err("-S http://127.0.0.1:1 -m GET -s abc").contains("not a status"));
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
}
