//! `h2sim bench`: h2simple's performance test in one process. A server with
//! its rules (POST /user1k/, /user4k/, /user10k/ answered 200 with 1k/4k/10k
//! JSON) on loopback, driven by the client with 100 requests in flight and
//! `-R __MDN__=01092%06d`, over h2c, h2 with TLS and HTTP/1.1.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use h2sim_proto::HeaderField;
use h2sim_proto::host::ConnectionInfo;
use h2sim_proto::host::tls::{self, Certified, ClientAuth, TlsVersions};
use h2sim_tokio::{ListenerSpec, Server, ServerOptions, Shutdown};

use crate::client::capture::Capture;
use crate::client::scenario::Step;
use crate::client::symbol::Symbol;
use crate::cpus;
use crate::options::client::ClientArgs;
use crate::options::rules_file::{self, Format};
use crate::options::tls::TlsFiles;
use crate::options::{Runtime, UsageError, usage};
use crate::server::app::{ServerApp, Shared};
use crate::server::rules::{Body, Reply, Rule};
use crate::signals::Interrupt;
use crate::trace::{errln, outln};

/// `h2sim bench` options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchArgs {
    pub count: u64,
    pub parallel: usize,
    pub duration: Option<Duration>,
    pub threads: Option<usize>,
}

/// How the bench's threads are shared between its client and its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threads {
    /// The workers of the main runtime, which runs the client.
    pub client: usize,
    /// The workers of the server's own runtime, on threads of its own;
    /// `None`: the client's runtime runs the server too.
    pub server: Option<usize>,
}

impl BenchArgs {
    /// `--threads` (one per core by default), half of them (at least one)
    /// for the server and the rest for the client; with one thread, the
    /// two share it.
    pub fn threads(&self) -> Threads {
        let all = self
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        match all {
            0 | 1 => Threads {
                client: 1,
                server: None,
            },
            _ => Threads {
                client: all - all / 2,
                server: Some(all / 2),
            },
        }
    }

    /// Requests in flight: `-P`, or all of a cell's `-C` when that is less.
    fn in_flight(&self) -> u64 {
        let parallel = self.parallel as u64;
        match self.duration {
            Some(_) => parallel,
            None => parallel.min(self.count),
        }
    }
}

/// Where the bench runs its client and its servers: their threads, and
/// the CPUs that keep one thread each apart (see [`BenchServer`]).
#[derive(Debug, Clone, Copy)]
struct Placement {
    threads: Threads,
    cpus: Option<Cpus>,
}

/// A CPU for the client's thread and another for the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cpus {
    client: usize,
    server: usize,
}

impl Placement {
    /// With one thread each, the first two CPUs the process may run on;
    /// none for one thread in all, or for runtimes of several workers,
    /// which the kernel places. Made before any thread is pinned (see
    /// [`cpus::allowed`]).
    fn new(threads: Threads) -> Placement {
        let one_each = threads.client == 1 && threads.server == Some(1);
        let cpus = match cpus::allowed()[..] {
            [client, server, ..] if one_each => Some(Cpus { client, server }),
            _ => None,
        };
        Placement { threads, cpus }
    }

    /// Keeps the calling thread, which runs the client, on its CPU.
    fn pin_client(&self) {
        if let Some(cpus) = self.cpus {
            cpus::pin(cpus.client);
        }
    }
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.threads.server, self.cpus) {
            (None, _) => write!(f, "tokio: client and server on one thread"),
            (Some(_), Some(cpus)) => write!(
                f,
                "tokio: the client on one thread on cpu {}, the server on one on cpu {}",
                cpus.client, cpus.server
            ),
            (Some(server), None) => {
                let client = self.threads.client;
                let threads = if client == 1 { "thread" } else { "threads" };
                write!(
                    f,
                    "tokio: the client on {client} {threads}, the server on {server} of its own"
                )
            }
        }
    }
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
        threads: flags.threads.filter(|&n| n > 0),
    })
}

/// How long a cell runs unless `-C` or `--duration` says otherwise: 20,000
/// requests (0.1 s) swung the 4k h2c figure between 85k and 245k TPS; 2 s
/// is stable to a few percent here, and the thirteen cells (nine, then
/// the four NF rows) stay under 30 s.
const DEFAULT_CELL: Duration = Duration::from_secs(2);

/// The CPU time this process (client and server together) has used, to
/// the nanosecond (`CLOCK_PROCESS_CPUTIME_ID`). `/proc/self/stat` counts
/// in ticks of 10 ms, so a short cell's CPU per request came out as 0.0,
/// 10.0 or 30.0 µs.
#[cfg(unix)]
fn process_cpu() -> Option<Duration> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Some(Duration::new(
        u64::try_from(t.tv_sec).ok()?,
        u32::try_from(t.tv_nsec).ok()?,
    ))
}

#[cfg(not(unix))]
fn process_cpu() -> Option<Duration> {
    None
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
    // Ctrl-C during the bench: the cell that runs stops as a client run
    // does on Ctrl-C (no new requests, those in flight finish), so its
    // figures still print, and no other cell starts.
    let interrupt = Arc::new(Interrupt::default());
    let stop = interrupt.clone();
    crate::signals::on_ctrl_c("h2sim bench", move || {
        errln!(
            "{}",
            crate::signals::stopping(
                "h2sim bench",
                "the running cell ends early and no other starts"
            )
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
    let placement = Placement::new(args.threads());
    placement.pin_client();
    let server = BenchServer::start(specs, rules(), placement).await?;
    let (plain, secure) = (server.addrs[0], server.addrs[1]);
    let amount = per_cell(args.duration, args.count);
    outln!(
        "h2sim bench: POST with 1k/4k/10k JSON answers, {} in flight, {amount}, client and server in one process ({placement}); CPU: µs of the process's CPU (client and server) per request",
        args.in_flight()
    );
    outln!("{:<10}{:>35}{:>35}{:>35}", "", "1k", "4k", "10k");
    outln!(
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
            outln!("{:<10}{columns}", row.name);
        }
    }
    server.stop().await;
    if !interrupt.is_stopped() {
        all_ok &= nf_section(&args, placement, &interrupt).await?;
    }
    if !all_ok {
        outln!("(!: some requests failed)");
    }
    Ok(if interrupt.is_stopped() {
        outln!(
            "(interrupted: the last cell shown may be cut short; the cells after it did not run)"
        );
        ExitCode::from(130)
    } else if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// A server of the bench's. With threads of its own it runs on a runtime of
/// its own beside the client's, as h2simple's client and server run in two
/// processes: on one runtime, tokio's workers now and then ran the client's
/// and the server's connection on the same core, so a cell's figure came
/// out at one core's worth or at two from one run to the next (h2 over
/// TLS, 10k: 62k to 117k TPS on a 2-core machine). With one thread each,
/// the two are kept on CPUs of their own, as `bench/run.sh` pins its pair:
/// left to the kernel they still shared a CPU at times (h2c 4k: 252k to
/// 551k TPS in four runs, 480k to 506k pinned).
struct BenchServer {
    addrs: Vec<SocketAddr>,
    shutdown: Shutdown,
    running: Running,
}

/// Where a bench server runs.
enum Running {
    /// On the client's runtime.
    Task(tokio::task::JoinHandle<()>),
    /// On its own runtime, on its own thread.
    Thread(std::thread::JoinHandle<()>),
}

impl BenchServer {
    /// Binds `specs` and serves `rules` on them, where `placement` puts
    /// the server.
    async fn start(
        specs: Vec<ListenerSpec>,
        rules: Vec<Rule>,
        placement: Placement,
    ) -> Result<BenchServer, UsageError> {
        let shared = Arc::new(Shared::new(rules, None, None));
        let app = move |info: &ConnectionInfo| ServerApp::new(shared.clone(), info.peer);
        let cpu = placement.cpus.map(|cpus| cpus.server);
        let Some(threads) = placement.threads.server else {
            let server = bind(specs).await?;
            let (addrs, shutdown) = (addresses(&server), server.shutdown());
            let running = Running::Task(tokio::spawn(server.run(app)));
            return Ok(BenchServer {
                addrs,
                shutdown,
                running,
            });
        };
        let (bound_tx, bound_rx) = tokio::sync::oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("h2sim-bench-server".into())
            .spawn(move || {
                if let Some(cpu) = cpu {
                    cpus::pin(cpu);
                }
                let rt = match crate::tokio_run::runtime(Some(threads)) {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = bound_tx.send(Err(usage(format!(
                            "cannot start the server's tokio runtime: {e}"
                        ))));
                        return;
                    }
                };
                rt.block_on(async move {
                    match bind(specs).await {
                        Ok(server) => {
                            let _ = bound_tx.send(Ok((addresses(&server), server.shutdown())));
                            server.run(app).await;
                        }
                        Err(e) => {
                            let _ = bound_tx.send(Err(e));
                        }
                    }
                });
            })
            .map_err(|e| usage(format!("cannot start the server's thread: {e}")))?;
        let (addrs, shutdown) = bound_rx
            .await
            .map_err(|_| usage("the server's thread ended before it listened"))??;
        Ok(BenchServer {
            addrs,
            shutdown,
            running: Running::Thread(thread),
        })
    }

    /// Shuts the server down and waits until it has.
    async fn stop(self) {
        self.shutdown.trigger();
        match self.running {
            Running::Task(task) => {
                let _ = task.await;
            }
            Running::Thread(thread) => {
                let _ = tokio::task::spawn_blocking(move || thread.join()).await;
            }
        }
    }
}

async fn bind(specs: Vec<ListenerSpec>) -> Result<Server, UsageError> {
    Server::bind(specs, ServerOptions::default())
        .await
        .map_err(|e| usage(e.to_string()))
}

fn addresses(server: &Server) -> Vec<SocketAddr> {
    server
        .local_addrs()
        .into_iter()
        .map(|(addr, _)| addr)
        .collect()
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
        connection_window: None,
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
        connect_timeout: None,
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
async fn nf_section(
    args: &BenchArgs,
    placement: Placement,
    interrupt: &Interrupt,
) -> Result<bool, UsageError> {
    let text = NF_RULES.replace("PAD", &"x".repeat(880));
    let rules = rules_file::parse(&text, Format::Yaml, "h2sim bench", Path::new("."))?;
    let specs = vec![ListenerSpec::plain("127.0.0.1:0").map_err(|e| usage(e.to_string()))?];
    let server = BenchServer::start(specs, rules.rules, placement).await?;
    let authority = server.addrs[0].to_string();
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
    outln!("");
    outln!(
        "NF rules (h2c, GET, 1k JSON answers): extra = CPU/req over the plain rule's, in the same run"
    );
    outln!("{:<16}        TPS  CPU/req     p50     p99   extra", "");
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
        outln!("{name:<16}{}{extra:>8}", cell.columns());
    }
    server.stop().await;
    Ok(all_ok)
}

/// What each cell runs, for the header: `--duration` as given (`300ms`,
/// `2s`, `1.5s`), not rounded to whole seconds, or the count.
fn per_cell(duration: Option<Duration>, count: u64) -> String {
    match duration {
        Some(d) => format!("{d:?} per cell"),
        None => format!("{count} requests per cell"),
    }
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
    fn the_header_says_how_many_are_in_flight() {
        let args = |flags: &[&str]| parse(flags.iter().map(|f| f.to_string()).collect()).unwrap();
        assert_eq!(args(&[]).in_flight(), 100);
        assert_eq!(args(&["-P", "1000", "-C", "100"]).in_flight(), 100);
        assert_eq!(args(&["-P", "10", "-C", "100"]).in_flight(), 10);
        assert_eq!(args(&["-P", "1000", "--duration", "1s"]).in_flight(), 1000);
    }

    /// The clock reads below a tick of `/proc/self/stat` (10 ms), which
    /// made a short cell's CPU per request 0.0, 10.0 or 30.0 µs.
    #[test]
    fn process_cpu_reads_below_a_tick() {
        let before = process_cpu().unwrap();
        let spent = loop {
            let spent = process_cpu().unwrap() - before;
            if spent >= Duration::from_millis(1) {
                break spent;
            }
            std::hint::black_box(spent);
        };
        assert_ne!(spent.as_nanos() % 10_000_000, 0, "{spent:?}");
    }

    #[test]
    fn the_header_says_how_long_a_cell_runs() {
        let cell = |ms| per_cell(Some(Duration::from_millis(ms)), 1);
        assert_eq!(cell(300), "300ms per cell");
        assert_eq!(cell(2000), "2s per cell");
        assert_eq!(cell(1500), "1.5s per cell");
        assert_eq!(per_cell(None, 20_000), "20000 requests per cell");
    }

    #[test]
    fn options_with_defaults_and_ranges() {
        let a = parse(vec![]).unwrap();
        assert_eq!((a.parallel, a.duration), (100, Some(DEFAULT_CELL)));
        // A count given runs that many requests per cell, not a duration.
        let a = parse(["-C", "300"].map(String::from).to_vec()).unwrap();
        assert_eq!((a.count, a.duration), (300, None));
        let a = parse(
            ["-P", "2", "--duration", "2s", "--threads", "1"]
                .map(String::from)
                .to_vec(),
        )
        .unwrap();
        assert_eq!((a.parallel, a.threads), (2, Some(1)));
        assert_eq!(a.duration, Some(Duration::from_secs(2)));
        // A million in flight opened 88,000 HTTP/1.1 connections, to the
        // open-file limit.
        assert!(
            parse(["-P", "65536"].map(String::from).to_vec())
                .unwrap_err()
                .0
                .contains("-P/--parallel \"65536\": at most 65535")
        );
        // Both: one of them was silently dropped.
        assert!(
            parse(["-C", "5", "--duration", "2s"].map(String::from).to_vec())
                .unwrap_err()
                .0
                .contains("-C/--count cannot be used with --duration")
        );
        assert!(
            parse(vec!["-C".into(), "0".into()])
                .unwrap_err()
                .0
                .contains("at least 1")
        );
        assert!(
            parse(vec!["--duration".into(), "0".into()])
                .unwrap_err()
                .0
                .contains("above 0")
        );
        let threads = |n| {
            BenchArgs {
                threads: Some(n),
                ..parse(vec![]).unwrap()
            }
            .threads()
        };
        assert_eq!(
            threads(1),
            Threads {
                client: 1,
                server: None
            }
        );
        assert_eq!(
            threads(2),
            Threads {
                client: 1,
                server: Some(1)
            }
        );
        assert_eq!(
            threads(5),
            Threads {
                client: 3,
                server: Some(2)
            }
        );
        assert!(
            parse(vec!["--bogus".into()])
                .unwrap_err()
                .0
                .contains("--bogus")
        );
    }

    #[test]
    fn cpus_only_for_one_thread_each_and_two_cpus() {
        let one_each = Threads {
            client: 1,
            server: Some(1),
        };
        match cpus::allowed()[..] {
            [client, server, ..] => {
                assert_eq!(Placement::new(one_each).cpus, Some(Cpus { client, server }));
            }
            _ => assert_eq!(Placement::new(one_each).cpus, None),
        }
        let shared = Threads {
            client: 1,
            server: None,
        };
        assert_eq!(Placement::new(shared).cpus, None);
        let several = Threads {
            client: 2,
            server: Some(2),
        };
        assert_eq!(Placement::new(several).cpus, None);
    }
}
