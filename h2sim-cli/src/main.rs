//! `h2sim`: an HTTP/2 and HTTP/1.1 simulator for 5G SBI network functions.
//! This file only reads the command line and hands over.

mod bench;
mod body;
mod client;
mod cpus;
mod ending;
#[cfg(all(feature = "glommio", target_os = "linux"))]
mod glommio_run;
mod help;
mod json_pointer;
mod lasting;
mod limits;
mod merge;
mod options;
mod progress;
mod report;
#[cfg(test)]
mod scratch;
mod server;
mod setup;
mod signals;
#[cfg(test)]
mod sim_tests;
mod tokio_run;
mod trace;

use std::path::Path;
use std::process::ExitCode;

use clap::FromArgMatches;

use options::cli::{self, CompletionsFlags, MergeFlags};
use options::client::ClientArgs;
use options::server::ServerArgs;
use options::{Runtime, UsageError};

use crate::trace::errln;

/// A parsed command that runs on a runtime.
enum Command {
    Server(ServerArgs),
    /// Boxed: the client's arguments are the largest by far.
    Client(Box<ClientArgs>),
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    limits::copy_without_rep_movsb();
    limits::keep_freed_heap();
    let code = command_line();
    trace::flush();
    code
}

/// Reads the command line and runs what it asks for.
fn command_line() -> ExitCode {
    let matches = match cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => return clap_exit(&e),
    };
    let outcome = match matches.subcommand() {
        // Relative paths on the command line are the working directory's.
        Some(("server", m)) => {
            options::server::from_matches(m, Path::new(".")).map(Command::Server)
        }
        Some(("client", m)) => {
            options::client::from_matches(m, Path::new(".")).map(|a| Command::Client(Box::new(a)))
        }
        Some(("bench", m)) => bench::from_matches(m).map(Command::Bench),
        Some(("merge", m)) => {
            return match MergeFlags::from_arg_matches(m) {
                Ok(flags) => merge::run(&flags.files, flags.json.as_deref()),
                Err(e) => clap_exit(&e),
            };
        }
        Some(("completions", m)) => {
            return match CompletionsFlags::from_arg_matches(m) {
                Ok(flags) => {
                    // Written whole, and a closed standard output (`| true`)
                    // ends it quietly: `generate` panics when a write fails.
                    let mut script = Vec::new();
                    clap_complete::generate(flags.shell, &mut cli::command(), "h2sim", &mut script);
                    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), &script);
                    ExitCode::SUCCESS
                }
                Err(e) => clap_exit(&e),
            };
        }
        _ => Err(options::usage(
            "a command is needed: server, client, bench, merge or completions",
        )),
    };
    match outcome.and_then(run) {
        Ok(code) => code,
        Err(e) => usage_exit(&e),
    }
}

/// Hands a command to the runtime it asked for.
fn run(command: Command) -> Result<ExitCode, UsageError> {
    limits::raise_open_files();
    match command {
        Command::Server(args) => match args.runtime {
            Runtime::Tokio => Ok(tokio_run::run(args.threads, tokio_run::serve(args))),
            #[cfg(all(feature = "glommio", target_os = "linux"))]
            Runtime::Glommio => glommio_run::serve(args),
            #[cfg(not(all(feature = "glommio", target_os = "linux")))]
            Runtime::Glommio => Err(without_glommio()),
        },
        Command::Client(args) => match args.runtime {
            Runtime::Tokio => Ok(tokio_run::run(args.threads, tokio_run::drive(*args))),
            #[cfg(all(feature = "glommio", target_os = "linux"))]
            Runtime::Glommio => glommio_run::drive(&args),
            #[cfg(not(all(feature = "glommio", target_os = "linux")))]
            Runtime::Glommio => Err(without_glommio()),
        },
        Command::Bench(args) => Ok(tokio_run::run(
            Some(args.threads().client),
            bench::run(args),
        )),
    }
}

/// `--runtime glommio` in a binary built without it (the `glommio`
/// feature is off, or not Linux: glommio needs io_uring).
#[cfg(not(all(feature = "glommio", target_os = "linux")))]
fn without_glommio() -> UsageError {
    options::usage(
        "--runtime glommio: this h2sim was built without glommio (cargo feature `glommio`, Linux only); use --runtime tokio",
    )
}

/// A command that cannot run: one line, exit status 2 for bad options
/// (1 for a server it needed first, see `options::Fault`).
fn usage_exit(error: &UsageError) -> ExitCode {
    errln!("h2sim: {error}");
    ExitCode::from(error.exit_status())
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
            errln!("h2sim: {}", cli::one_line(error));
            ExitCode::from(2)
        }
    }
}

#[cfg(all(test, not(all(feature = "glommio", target_os = "linux"))))]
mod tests {
    use super::*;

    /// Issue 11 §8: built without glommio, `--runtime glommio` is a usage
    /// error (one line, exit 2) before anything starts.
    #[test]
    fn glommio_without_the_feature_is_a_usage_error() {
        let args = options::server::parse(
            ["--runtime", "glommio", "-S", "http://127.0.0.1:0"]
                .map(String::from)
                .to_vec(),
        );
        let error = run(Command::Server(args.unwrap())).unwrap_err();
        assert!(error.0.contains("--runtime glommio"), "{error}");
        assert!(!error.0.contains('\n'));
    }
}
