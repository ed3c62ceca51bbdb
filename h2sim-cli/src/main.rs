//! `h2sim`: an HTTP/2 and HTTP/1.1 simulator for 5G SBI network functions.
//! This file only reads the command line and hands over.

mod bench;
mod body;
mod client;
mod help;
mod options;
mod report;
mod run;
mod run_glommio;
mod server;
#[cfg(test)]
mod sim_tests;
mod trace;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        eprint!("{}", help::TOP);
        return ExitCode::from(2);
    }
    let command = args.remove(0);
    let wants_help = args.iter().any(|a| a == "--help" || a == "-h");
    let outcome = match command.as_str() {
        "-h" | "--help" | "help" => {
            print!("{}", help::TOP);
            return ExitCode::SUCCESS;
        }
        "-V" | "--version" => {
            println!("h2sim {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        "server" if wants_help => {
            print!("{}", help::SERVER);
            return ExitCode::SUCCESS;
        }
        "client" if wants_help => {
            print!("{}", help::CLIENT);
            return ExitCode::SUCCESS;
        }
        "bench" if wants_help => {
            print!("{}", help::BENCH);
            return ExitCode::SUCCESS;
        }
        "merge" if wants_help => {
            print!("{}", help::MERGE);
            return ExitCode::SUCCESS;
        }
        "merge" => {
            let json = match args.iter().position(|a| a == "--json") {
                Some(i) if i + 1 < args.len() => {
                    let path = args.remove(i + 1);
                    args.remove(i);
                    Some(std::path::PathBuf::from(path))
                }
                Some(_) => {
                    eprintln!("h2sim: --json needs a FILE");
                    return ExitCode::from(2);
                }
                None => None,
            };
            return run::merge(&args, json.as_deref());
        }
        "server" => options::server::parse(args).map(run::Command::Server),
        "client" => options::client::parse(args).map(|a| run::Command::Client(Box::new(a))),
        "bench" => run::bench_options(args).map(run::Command::Bench),
        other => Err(options::usage(format!(
            "unknown command {other:?} (server, client, bench or merge)"
        ))),
    };
    match outcome {
        Ok(command) => run::run(command),
        Err(e) => {
            eprintln!("h2sim: {e}");
            ExitCode::from(2)
        }
    }
}
