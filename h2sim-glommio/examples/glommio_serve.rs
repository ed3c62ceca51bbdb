//! A glommio server answering every request with a short body: the server
//! side of `bench/scale.sh`, and a quick way to try the adapter by hand.
//!
//!     cargo run --release -p h2sim-glommio --example glommio_serve -- \
//!         [--executors N] [--cpus LIST] [--io-memory BYTES] \
//!         [--listen ADDR]... [--tls-listen ADDR]...
//!
//! `--cpus 0-3` pins executor i to the i-th CPU of the list (default: the
//! CPUs this process may use). It prints `listening on ADDR` once every
//! executor serves, runs until SIGINT/SIGTERM, then prints what each
//! executor accepted and the merged traffic counters.

use std::path::PathBuf;
use std::process::ExitCode;

use bytes::Bytes;
use h2sim_glommio::{Executors, HandlerApp, ListenerSpec, Reply, Server, ServerOptions};
use h2sim_proto::host::tls::{self, ClientAuth, Identity, ServerTls, TlsVersions};

const BODY: &[u8] = b"hello from h2sim on glommio\n";

fn usage() -> ExitCode {
    eprintln!(
        "usage: serve [--executors N] [--cpus LIST] [--io-memory BYTES] \
         [--listen ADDR]... [--tls-listen ADDR]..."
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut executors = Executors::default();
    let mut specs = Vec::new();
    let certs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../certs");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let Some(value) = args.next() else {
            return usage();
        };
        let parsed = match flag.as_str() {
            "--io-memory" => value
                .parse()
                .map(|n| executors.io_memory = n)
                .map_err(|e| e.to_string()),
            "--executors" => value
                .parse()
                .map(|n| executors.count = n)
                .map_err(|e| e.to_string()),
            "--cpus" => h2sim_glommio::parse_cpu_list(&value)
                .map(|cpus| executors.cpus = Some(cpus))
                .ok_or_else(|| format!("bad CPU list {value:?}")),
            "--listen" => ListenerSpec::plain(&value)
                .map(|s| specs.push(s))
                .map_err(|e| e.to_string()),
            "--tls-listen" => tls::server_config(&ServerTls {
                identity: Identity {
                    chain: certs.join("server-ec.crt"),
                    key: certs.join("server-ec.key"),
                },
                client_auth: ClientAuth::None,
                versions: TlsVersions::default(),
            })
            .map_err(|e| e.to_string())
            .and_then(|config| ListenerSpec::tls(&value, config).map_err(|e| e.to_string()))
            .map(|s| specs.push(s)),
            _ => return usage(),
        };
        if let Err(e) = parsed {
            eprintln!("{flag} {value}: {e}");
            return ExitCode::from(2);
        }
    }
    if specs.is_empty() {
        specs.push(ListenerSpec::plain("127.0.0.1:8080").expect("a valid address"));
    }
    let options = ServerOptions {
        runtime: executors,
        ..ServerOptions::default()
    };
    let server = match Server::bind(specs, options) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("serve: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = server.shutdown().trigger_on_signals() {
        eprintln!("serve: cannot handle signals: {e}");
    }
    let running = match server.start(|_| {
        HandlerApp::new(|_| {
            let mut reply = Reply::new(200, Bytes::from_static(BODY));
            reply.head = reply.head.field("content-type", "text/plain");
            reply
        })
    }) {
        Ok(running) => running,
        Err(e) => {
            eprintln!("serve: {e}");
            return ExitCode::FAILURE;
        }
    };
    for (addr, tls) in running.local_addrs() {
        let scheme = if tls { "https" } else { "http" };
        println!("listening on {scheme}://{addr}/");
    }
    let stats = running.join();
    let traffic = stats.traffic();
    println!(
        "accepted {} connections (per executor {:?}); {} bytes in, {} bytes out",
        stats.accepted(),
        stats.accepted_per_executor(),
        traffic.bytes_received,
        traffic.bytes_sent
    );
    ExitCode::SUCCESS
}
