//! h2simple's order-dependent options behind clap: `-m` opens a rule or a
//! step and the options after it describe it, `-o` opens a push, `-k`/`-c`
//! apply to the listeners after them. clap parses and checks each option;
//! this replays them in the order typed, from the positions it reports
//! (`ArgMatches::indices_of`).

use clap::{Arg, ArgAction, ArgMatches, Command};

/// One option of the grammar: clap id, short and long names, value name,
/// help line.
pub struct Spec {
    pub id: &'static str,
    pub short: Option<char>,
    pub long: &'static str,
    pub value: &'static str,
    pub help: &'static str,
}

/// Adds the grammar's options to `command` under `heading`. Each takes one
/// value, may repeat, and takes its value even when it starts with `-`
/// (as getopt did: `-t -1` is the text "-1").
pub fn add(mut command: Command, heading: &'static str, specs: &[Spec]) -> Command {
    command = command.next_help_heading(heading);
    for spec in specs {
        let mut arg = Arg::new(spec.id)
            .long(spec.long)
            .value_name(spec.value)
            .help(spec.help)
            .num_args(1)
            .allow_hyphen_values(true)
            .action(ArgAction::Append);
        if let Some(short) = spec.short {
            arg = arg.short(short);
        }
        command = command.arg(arg);
    }
    command.next_help_heading(None)
}

/// One occurrence, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// The clap id (the long name).
    pub id: &'static str,
    /// The flag for messages: `-m`, or `--delay` for options without short.
    pub flag: String,
    pub value: String,
}

/// Every occurrence of the grammar's options, in the order typed.
pub fn ordered(matches: &ArgMatches, specs: &[Spec]) -> Vec<Occurrence> {
    let mut all = Vec::new();
    for spec in specs {
        let (Some(indices), Some(values)) = (
            matches.indices_of(spec.id),
            matches.get_many::<String>(spec.id),
        ) else {
            continue;
        };
        let flag = spec
            .short
            .map_or_else(|| format!("--{}", spec.long), |c| format!("-{c}"));
        for (index, value) in indices.zip(values) {
            all.push((
                index,
                Occurrence {
                    id: spec.id,
                    flag: flag.clone(),
                    value: value.clone(),
                },
            ));
        }
    }
    all.sort_by_key(|(index, _)| *index);
    all.into_iter().map(|(_, o)| o).collect()
}
