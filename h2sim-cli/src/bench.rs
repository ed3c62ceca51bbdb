//! `h2sim bench`: h2simple's performance test in one process. A server with
//! its rules (POST /user1k/, /user4k/, /user10k/ answered 200 with 1k/4k/10k
//! JSON) on loopback, driven by the client with 100 requests in flight and
//! `-R __MDN__=01092%06d`, over h2c, h2 with TLS and HTTP/1.1.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use h2sim_proto::HeaderField;
use h2sim_proto::host::tls::{self, Certified, ClientAuth, TlsVersions};
use h2sim_tokio::{ListenerSpec, Server, ServerOptions, Shutdown};

use crate::client::app::Plan;
use crate::client::capture::Capture;
use crate::client::scenario::Step;
use crate::client::symbol::Symbol;
use crate::options::client::ClientArgs;
use crate::options::rules_file::{self, Format};
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
    let interrupt = Arc::new(Interrupt::default());
    let stop = interrupt.clone();
    crate::signals::on_ctrl_c("h2sim bench", move || {
        eprintln!(
            "h2sim bench: stopping: the running cell ends early and no other starts (Ctrl-C again to quit at once)"
        );
        stop.stop();
    });
    let identity = Certified::from_pem(CERT, KEY).map_err(|e| usage(e.to_string()))?;
    let tls = tls::server_config_for(identity, &ClientAuth::None, TlsVersions::default())
        .map_err(|e| usage(e.to_string()))?;
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
        let mut columns = String::new();
        for (size, path) in SIZES {
            if interrupt.is_stopped() {
                break;
            }
            let step = post_step(row.scheme, &addr.to_string(), path, size)?;
            let cell = Cell::run(&client_args(&args, step, row.http1)?, &interrupt).await?;
            all_ok &= cell.ok;
            columns.push_str(&cell.columns());
        }
        // The cells measured, the one Ctrl-C cut short included.
        if !columns.is_empty() {
            println!("{:<10}{columns}", row.name);
        }
    }
    shutdown.trigger();
    let _ = running.await;
    if !interrupt.is_stopped() {
        all_ok &= nf_section(&args, &interrupt).await?;
    }
    if !all_ok {
        println!("(!: some requests failed)");
    }
    Ok(if interrupt.is_stopped() {
        println!(
            "(interrupted: the last cell shown may be cut short; the cells after it did not run)"
        );
        ExitCode::from(130)
    } else if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Ctrl-C during the bench: the cell that runs stops as a client run
/// does on Ctrl-C (no new requests, those in flight finish), so its figures
/// still print, and no other cell starts.
#[derive(Debug, Default)]
pub struct Interrupt {
    stopped: AtomicBool,
    /// The running cell's plan and connections.
    cell: Mutex<Option<(Arc<Plan>, Shutdown)>>,
}

impl Interrupt {
    fn stop(&self) {
        // Set before the lock, and read under it by `watch`: a cell that
        // registers after this either sees the flag or is stopped here.
        self.stopped.store(true, Ordering::SeqCst);
        let cell = self.cell.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((plan, shutdown)) = cell.as_ref() {
            plan.stop();
            shutdown.trigger();
        }
    }

    fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// The cell about to run, which a Ctrl-C stops (at once, if one came
    /// already).
    pub fn watch(&self, plan: Arc<Plan>, shutdown: Shutdown) {
        let mut cell = self.cell.lock().unwrap_or_else(PoisonError::into_inner);
        if self.is_stopped() {
            plan.stop();
            shutdown.trigger();
        }
        *cell = Some((plan, shutdown));
    }
}

/// h2simple's step: POST `path__MDN__` with `size` of JSON.
fn post_step(scheme: &str, authority: &str, path: &str, size: &str) -> Result<Step, UsageError> {
    Ok(Step {
        method: "POST".into(),
        scheme: Bytes::copy_from_slice(scheme.as_bytes()),
        authority: Bytes::copy_from_slice(authority.as_bytes()),
        path: format!("{path}__MDN__").into(),
        headers: vec![HeaderField::new("content-type", "application/json")],
        body: crate::body::sized(size).map_err(|e| usage(e.to_string()))?,
        ..Step::default()
    })
}

fn client_args(args: &BenchArgs, step: Step, http1: bool) -> Result<ClientArgs, UsageError> {
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

/// One cell's figures.
struct Cell {
    tps: f64,
    /// The process's CPU per request, when it could be read.
    cpu: Option<f64>,
    p50: Duration,
    p99: Duration,
    ok: bool,
}

impl Cell {
    async fn run(client: &ClientArgs, interrupt: &Interrupt) -> Result<Cell, UsageError> {
        let before = process_cpu();
        let report = crate::tokio_run::run_client(client, Some(interrupt)).await?;
        let cpu = process_cpu()
            .zip(before)
            .map(|(after, before)| after - before);
        Ok(Cell {
            tps: report.requests_per_second(),
            cpu: cpu
                .filter(|_| report.done > 0)
                .map(|cpu| cpu.as_secs_f64() * 1e6 / report.done as f64),
            p50: report.request_time.percentile(50.0),
            p99: report.request_time.percentile(99.0),
            ok: report.is_success(),
        })
    }

    /// TPS (marked `!` when requests failed), CPU/req, p50, p99.
    fn columns(&self) -> String {
        let mark = if self.ok { " " } else { "!" };
        let cpu = self.cpu.map_or("-".into(), |us| format!("{us:.1}"));
        format!(
            "{:>11.0}{mark}{:>8}{:>8}{:>8}",
            self.tps,
            cpu,
            short(self.p50),
            short(self.p99)
        )
    }
}

/// The rules of the NF section, each answering GET with about 1 KiB of
/// JSON: a plain prefix rule; a path template whose reply is filled from
/// the request (capture, query, uuid, counter, time; a `location`); a
/// stored resource. `PAD` is replaced by padding.
const NF_RULES: &str = r#"rule:
  - method: GET
    path: /plain/
    headers: { content-type: application/json }
    size: 1k
  - method: GET
    path: /nudm-sdm/v2/{supi}/am-data
    headers:
      content-type: application/json
      location: /nudm-sdm/v2/${supi}/am-data/${uuid}
    text: '{"supi":"${supi}","gpsis":["msisdn-${counter}"],"time":"${now}","plmn":"${query.plmn-id}","pad":"PAD"}'
  - path: /store/items
    resource: {}
"#;

/// The NF section's cells: what a request-aware rule, a stored resource
/// and a step that captures from its answer cost next to a plain rule.
const NF_CELLS: [(&str, &str, &[&str]); 4] = [
    ("plain rule", "/plain/__MDN__", &[]),
    (
        "templated rule",
        "/nudm-sdm/v2/imsi-__MDN__/am-data?plmn-id=00101",
        &[],
    ),
    ("resource GET", "/store/items/bench", &[]),
    (
        "captured step",
        "/nudm-sdm/v2/imsi-__MDN__/am-data?plmn-id=00101",
        &["__LOC__=header:location", "__SUPI__=json:/supi"],
    ),
];

/// Runs the NF section on a server of its own (h2c, tokio), after
/// storing the item the resource cell reads. Whether every request
/// succeeded.
async fn nf_section(args: &BenchArgs, interrupt: &Interrupt) -> Result<bool, UsageError> {
    let text = NF_RULES.replace("PAD", &"x".repeat(880));
    let rules = rules_file::parse(&text, Format::Yaml, "h2sim bench", Path::new("."))?;
    let specs = vec![ListenerSpec::plain("127.0.0.1:0").map_err(|e| usage(e.to_string()))?];
    let server = Server::bind(specs, ServerOptions::default())
        .await
        .map_err(|e| usage(e.to_string()))?;
    let authority = server.local_addrs()[0].0.to_string();
    let shared = Arc::new(Shared::new(rules.rules, None, None));
    let shutdown = server.shutdown();
    let running = tokio::spawn(server.run(move |info| ServerApp::new(shared.clone(), info.peer)));
    let get = |path: &str| Step {
        method: "GET".into(),
        scheme: "http".into(),
        authority: Bytes::from(authority.clone()),
        path: Bytes::copy_from_slice(path.as_bytes()),
        ..Step::default()
    };
    let item = Step {
        method: "PUT".into(),
        headers: vec![HeaderField::new("content-type", "application/json")],
        body: crate::body::sized("1k").map_err(|e| usage(e.to_string()))?,
        ..get("/store/items/bench")
    };
    let store = ClientArgs {
        count: Some(1),
        duration: None,
        ..client_args(args, item, false)?
    };
    let mut all_ok = crate::tokio_run::run_client(&store, Some(interrupt))
        .await?
        .is_success();
    println!();
    println!(
        "NF rules (h2c, GET, 1k JSON answers): extra = CPU/req over the plain rule's, in the same run"
    );
    println!("{:<16}        TPS  CPU/req     p50     p99   extra", "");
    let mut plain_cpu = None;
    for (name, path, captures) in NF_CELLS {
        let step = Step {
            captures: captures
                .iter()
                .map(|c| Capture::parse(c).map_err(usage))
                .collect::<Result<_, _>>()?,
            ..get(path)
        };
        if interrupt.is_stopped() {
            break;
        }
        let cell = Cell::run(&client_args(args, step, false)?, interrupt).await?;
        all_ok &= cell.ok;
        plain_cpu = plain_cpu.or(cell.cpu);
        let extra = match (cell.cpu, plain_cpu) {
            (Some(cpu), Some(plain)) if name != NF_CELLS[0].0 => format!("{:+.1}", cpu - plain),
            _ => String::new(),
        };
        println!("{name:<16}{}{extra:>8}", cell.columns());
    }
    shutdown.trigger();
    let _ = running.await;
    Ok(all_ok)
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
