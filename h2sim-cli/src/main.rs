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

use std::path::Path;
use std::process::ExitCode;

use clap::FromArgMatches;

use options::cli::{self, CompletionsFlags, MergeFlags};

fn main() -> ExitCode {
    let matches = match cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => return clap_exit(&e),
    };
    let outcome = match matches.subcommand() {
        // Relative paths on the command line are the working directory's.
        Some(("server", m)) => {
            options::server::from_matches(m, Path::new(".")).map(run::Command::Server)
        }
        Some(("client", m)) => options::client::from_matches(m, Path::new("."))
            .map(|a| run::Command::Client(Box::new(a))),
        Some(("bench", m)) => bench::from_matches(m).map(run::Command::Bench),
        Some(("merge", m)) => {
            return match MergeFlags::from_arg_matches(m) {
                Ok(flags) => merge(&flags),
                Err(e) => clap_exit(&e),
            };
        }
        Some(("completions", m)) => {
            return match CompletionsFlags::from_arg_matches(m) {
                Ok(flags) => {
                    clap_complete::generate(
                        flags.shell,
                        &mut cli::command(),
                        "h2sim",
                        &mut std::io::stdout(),
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => clap_exit(&e),
            };
        }
        _ => Err(options::usage(
            "a command is needed: server, client, bench, merge or completions",
        )),
    };
    match outcome {
        Ok(command) => run::run(command),
        Err(e) => {
            eprintln!("h2sim: {e}");
            ExitCode::from(2)
        }
    }
}

/// `--help` and `--version` print and succeed; any other clap error is one
/// line naming the option, exit status 2.
fn clap_exit(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = error.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = error.print();
            ExitCode::from(2)
        }
        _ => {
            eprintln!("h2sim: {}", cli::one_line(error));
            ExitCode::from(2)
        }
    }
}

/// `h2sim merge [--json FILE] FILE...`.
fn merge(flags: &MergeFlags) -> ExitCode {
    run::merge(&flags.files, flags.json.as_deref())
}
