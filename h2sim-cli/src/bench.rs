//! `h2sim bench`: h2simple's performance test in one process. A server with
//! its rules (POST /user1k/, /user4k/, /user10k/ answered 200 with 1k/4k/10k
//! JSON) on loopback, driven by the client with 100 requests in flight and
//! `-R __MDN__=01092%06d`, over h2c, h2 with TLS and HTTP/1.1.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use h2sim_proto::HeaderField;
use h2sim_tokio::{ListenerSpec, Server, ServerOptions};

use crate::client::scenario::Step;
use crate::client::symbol::Symbol;
use crate::options::client::ClientArgs;
use crate::options::tls::TlsFiles;
use crate::options::{Runtime, UsageError, usage};
use crate::server::app::{ServerApp, Shared};
use crate::server::rules::{Body, Reply, Rule};

/// `h2sim bench` options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchArgs {
    pub count: u64,
    pub parallel: usize,
    pub duration: Option<Duration>,
    pub threads: Option<usize>,
}

/// Parses the arguments after `bench` (what `main` does through the
/// top-level command), for tests.
#[cfg(test)]
pub fn parse(args: Vec<String>) -> Result<BenchArgs, UsageError> {
    let matches = crate::options::cli::subcommand("bench")
        .try_get_matches_from(args)
        .map_err(|e| crate::options::cli::one_line(&e))?;
    from_matches(&matches)
}

/// Builds the options from what clap matched for `bench`.
pub fn from_matches(matches: &clap::ArgMatches) -> Result<BenchArgs, UsageError> {
    use clap::FromArgMatches;
    let flags = crate::options::cli::BenchFlags::from_arg_matches(matches)
        .map_err(|e| crate::options::cli::one_line(&e))?;
    // A count the user gave runs that many requests per cell; otherwise
    // each cell runs for a while, so its figure is stable.
    let count_given = matches.value_source("count") == Some(clap::parser::ValueSource::CommandLine);
    let duration = match flags.duration {
        None if !count_given => Some(DEFAULT_CELL),
        given => given,
    };
    Ok(BenchArgs {
        count: flags.count,
        parallel: flags.parallel as usize,
        duration,
        threads: flags.threads.map(|n| n as usize),
    })
}

/// How long a cell runs unless `-C` or `--duration` says otherwise: 20,000
/// requests (0.1 s) swung the 4k h2c figure between 85k and 245k TPS; 2 s
/// is stable to a few percent here, and nine cells stay under 30 s.
const DEFAULT_CELL: Duration = Duration::from_secs(2);

/// The CPU time this process (client and server together) has used, from
/// `/proc/self/stat` (utime + stime, in USER_HZ ticks, 100 a second on
/// Linux); `None` where that file is not there.
fn process_cpu() -> Option<Duration> {
    const USER_HZ: u64 = 100;
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may
    // hold spaces: state is the first, utime the 12th, stime the 13th.
    let rest = stat.rsplit_once(')')?.1;
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 1000 / USER_HZ))
}

/// CPU per request, in microseconds, or "-" when it could not be read.
fn cpu_per_request(cpu: Option<Duration>, requests: u64) -> String {
    match cpu {
        Some(cpu) if requests > 0 => format!("{:.1}", cpu.as_secs_f64() * 1e6 / requests as f64),
        _ => "-".into(),
    }
}

/// The dev certificates, built in so the bench runs from any directory.
const CERT: &[u8] = include_bytes!("../../certs/server-ec.crt");
const KEY: &[u8] = include_bytes!("../../certs/server-ec.key");

const SIZES: [(&str, &str); 3] = [("1k", "/user1k/"), ("4k", "/user4k/"), ("10k", "/user10k/")];

fn rules() -> Vec<Rule> {
    SIZES
        .iter()
        .map(|(size, path)| Rule {
            path_prefix: Some((*path).to_owned()),
            reply: Reply {
                status: 200,
                headers: vec![HeaderField::new("content-type", "application/json")],
                body: Body::Fixed(crate::body::sized(size).unwrap_or_default()),
            },
            ..Rule::new("POST")
        })
        .collect()
}

/// One row of the table: a protocol and how the client reaches the server.
struct Row {
    name: &'static str,
    scheme: &'static str,
    http1: bool,
}

const ROWS: [Row; 3] = [
    Row {
        name: "h2c",
        scheme: "http",
        http1: false,
    },
    Row {
        name: "h2 (TLS)",
        scheme: "https",
        http1: false,
    },
    Row {
        name: "HTTP/1.1",
        scheme: "http",
        http1: true,
    },
];

pub async fn run(args: BenchArgs) -> Result<ExitCode, UsageError> {
    let dir = std::env::temp_dir().join(format!("h2sim-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| usage(format!("{}: {e}", dir.display())))?;
    let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
    std::fs::write(&cert, CERT)
        .and_then(|()| std::fs::write(&key, KEY))
        .map_err(|e| usage(format!("{}: {e}", dir.display())))?;
    let tls = crate::options::tls::server_tls_files(&TlsFiles {
        key: Some(key),
        cert: Some(cert),
        ..TlsFiles::default()
    })?;
    let specs = vec![
        ListenerSpec::plain("127.0.0.1:0").map_err(|e| usage(e.to_string()))?,
        ListenerSpec::tls("127.0.0.1:0", tls).map_err(|e| usage(e.to_string()))?,
    ];
    let server = Server::bind(specs, ServerOptions::default())
        .await
        .map_err(|e| usage(e.to_string()))?;
    let addrs = server.local_addrs();
    let (plain, secure) = (addrs[0].0, addrs[1].0);
    let shared = Arc::new(Shared::new(rules(), None, None));
    let shutdown = server.shutdown();
    let running = tokio::spawn(server.run(move |info| ServerApp::new(shared.clone(), info.peer)));

    let workers = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let amount = match args.duration {
        Some(d) => format!("{:.0}s per cell", d.as_secs_f64()),
        None => format!("{} requests per cell", args.count),
    };
    println!(
        "h2sim bench: POST with 1k/4k/10k JSON answers, {} in flight, {amount}, client and server in one process (tokio, {workers} worker threads); CPU: µs of the process's CPU (client and server) per request",
        args.parallel
    );
    println!("{:<10}{:>35}{:>35}{:>35}", "", "1k", "4k", "10k");
    println!(
        "{:<10}{}",
        "",
        "        TPS  CPU/req     p50     p99".repeat(3)
    );
    let mut all_ok = true;
    for row in ROWS {
        let addr = if row.scheme == "https" { secure } else { plain };
        let mut line = format!("{:<10}", row.name);
        for (size, path) in SIZES {
            let client = client_args(&args, row.scheme, &addr.to_string(), path, size, row.http1)?;
            let cpu_before = process_cpu();
            let report = crate::tokio_run::run_client(&client, true).await?;
            let cpu = process_cpu()
                .zip(cpu_before)
                .map(|(after, before)| after - before);
            all_ok &= report.is_success();
            let mark = if report.is_success() { " " } else { "!" };
            line.push_str(&format!(
                "{:>11.0}{mark}{:>8}{:>8}{:>8}",
                report.requests_per_second(),
                cpu_per_request(cpu, report.done),
                short(report.request_time.percentile(50.0)),
                short(report.request_time.percentile(99.0)),
            ));
        }
        println!("{line}");
    }
    shutdown.trigger();
    let _ = running.await;
    let _ = std::fs::remove_dir_all(&dir);
    if !all_ok {
        println!("(!: some requests failed)");
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn client_args(
    args: &BenchArgs,
    scheme: &str,
    authority: &str,
    path: &str,
    size: &str,
    http1: bool,
) -> Result<ClientArgs, UsageError> {
    let step = Step {
        method: "POST".into(),
        scheme: scheme.into(),
        authority: authority.into(),
        path: format!("{path}__MDN__"),
        headers: vec![HeaderField::new("content-type", "application/json")],
        body: crate::body::sized(size).map_err(|e| usage(e.to_string()))?,
        ..Step::default()
    };
    // HTTP/1.1 has no streams: the same requests in flight spread over
    // connections pipelining a few each.
    let (connections, parallel) = if http1 {
        let per = args.parallel.min(10);
        (args.parallel.div_ceil(per), per)
    } else {
        (1, args.parallel)
    };
    Ok(ClientArgs {
        steps: vec![step],
        parallel,
        count: if args.duration.is_some() {
            None
        } else {
            Some(args.count)
        },
        tps: None,
        connections,
        servers: Vec::new(),
        total_connections: None,
        symbols: vec![Symbol::parse("__MDN__=01092%06d").map_err(usage)?],
        wrap: None,
        tls: TlsFiles::default(),
        settings: Vec::new(),
        http1,
        quiet: true,
        no_trace: true,
        verbose: false,
        dump_slow: None,
        retry: false,
        duration: args.duration,
        warmup: None,
        timeout: None,
        json: None,
        runtime: Runtime::Tokio,
        threads: None,
        reconnect_max: None,
        requests_per_connection: None,
        keepalive: None,
        listen: None,
        listen_rules: None,
        listen_linger: Duration::ZERO,
        token: None,
    })
}

fn short(d: Duration) -> String {
    let us = d.as_micros();
    if us < 1000 {
        format!("{us}us")
    } else if us < 1_000_000 {
        format!("{:.1}ms", us as f64 / 1000.0)
    } else {
        format!("{:.1}s", us as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_with_defaults_and_ranges() {
        let a = parse(vec![]).unwrap();
        assert_eq!((a.parallel, a.duration), (100, Some(DEFAULT_CELL)));
        // A count given runs that many requests per cell, not a duration.
        let a = parse(["-C", "300"].map(String::from).to_vec()).unwrap();
        assert_eq!((a.count, a.duration), (300, None));
        let a = parse(
            ["-C", "5", "-P", "2", "--duration", "2s", "--threads", "1"]
                .map(String::from)
                .to_vec(),
        )
        .unwrap();
        assert_eq!((a.count, a.parallel, a.threads), (5, 2, Some(1)));
        assert_eq!(a.duration, Some(Duration::from_secs(2)));
        assert!(
            parse(vec!["-C".into(), "0".into()])
                .unwrap_err()
                .0
                .contains("at least 1")
        );
        assert!(
            parse(vec!["--bogus".into()])
                .unwrap_err()
                .0
                .contains("--bogus")
        );
    }
}
