//! Command-line parsing. h2simple's options are positional in a way derive
//! parsers do not model (`-m` opens a rule or step that the following flags
//! describe), so the parser is a small hand-written one: every problem is
//! one line naming the flag, and the caller exits with status 2.

pub mod client;
pub mod server;
pub mod tls;

use std::fmt;

use h2sim_proto::{HeaderField, LocalSettings};

/// A bad command line: the message names the flag or value at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

pub fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

/// The arguments, one flag at a time.
pub struct Args {
    items: std::vec::IntoIter<String>,
    /// The value of a `--flag=value` already split off.
    pending: Option<String>,
}

/// One flag as written, with its canonical short name when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// `-x` or `--long` (already mapped to the short name by the caller's
    /// table), as written for messages.
    Flag(String),
    /// Anything that is not a flag (a bare URI).
    Word(String),
}

impl Args {
    pub fn new(args: Vec<String>) -> Args {
        Args {
            items: args.into_iter(),
            pending: None,
        }
    }

    /// The next flag or word.
    pub fn next_token(&mut self) -> Option<Result<Token, UsageError>> {
        if let Some(value) = self.pending.take() {
            return Some(Err(usage(format!("unexpected value {value:?}"))));
        }
        let arg = self.items.next()?;
        if let Some(long) = arg.strip_prefix("--") {
            if let Some((name, value)) = long.split_once('=') {
                self.pending = Some(value.to_owned());
                return Some(Ok(Token::Flag(format!("--{name}"))));
            }
            return Some(Ok(Token::Flag(arg)));
        }
        if arg.len() > 1 && arg.starts_with('-') {
            return Some(Ok(Token::Flag(arg)));
        }
        Some(Ok(Token::Word(arg)))
    }

    /// The value that `flag` takes.
    pub fn value(&mut self, flag: &str) -> Result<String, UsageError> {
        if let Some(value) = self.pending.take() {
            return Ok(value);
        }
        self.items
            .next()
            .ok_or_else(|| usage(format!("{flag} needs a value")))
    }

    /// A flag that takes no value must not have been given `--flag=value`.
    pub fn no_value(&mut self, flag: &str) -> Result<(), UsageError> {
        match self.pending.take() {
            Some(value) => Err(usage(format!("{flag} takes no value (got {value:?})"))),
            None => Ok(()),
        }
    }

    pub fn number<T: std::str::FromStr>(&mut self, flag: &str) -> Result<T, UsageError> {
        let value = self.value(flag)?;
        value
            .trim()
            .parse()
            .map_err(|_| usage(format!("{flag} {value:?}: not a valid number")))
    }
}

/// Maps a long flag to its short form using `(short, long)` pairs; unknown
/// flags come back unchanged for the caller to reject.
pub fn canonical(flag: &str, table: &[(&str, &str)]) -> String {
    table
        .iter()
        .find(|(_, long)| *long == flag)
        .map_or_else(|| flag.to_owned(), |(short, _)| (*short).to_owned())
}

/// `-H name=value`: one HTTP/2 setting.
pub fn apply_setting(settings: &mut LocalSettings, spec: &str) -> Result<(), UsageError> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| usage(format!("-H {spec:?}: expected name=value")))?;
    let n: u32 = value
        .trim()
        .parse()
        .map_err(|_| usage(format!("-H {spec:?}: {value:?} is not a number")))?;
    let bad = |why: &str| usage(format!("-H {spec:?}: {why}"));
    match name.trim().to_ascii_lowercase().as_str() {
        "header_table_size" => settings.header_table_size = n,
        "enable_push" if n <= 1 => settings.enable_push = n == 1,
        "enable_push" => return Err(bad("enable_push is 0 or 1")),
        "max_concurrent_streams" => settings.max_concurrent_streams = n,
        "initial_window_size" if n < (1 << 31) => settings.initial_window_size = n,
        "initial_window_size" => return Err(bad("at most 2147483647")),
        "max_frame_size" if (16_384..=16_777_215).contains(&n) => settings.max_frame_size = n,
        "max_frame_size" => return Err(bad("between 16384 and 16777215")),
        "max_header_list_size" => settings.max_header_list_size = n,
        _ => {
            return Err(bad(
                "unknown setting (header_table_size, enable_push, max_concurrent_streams, initial_window_size, max_frame_size, max_header_list_size)",
            ));
        }
    }
    Ok(())
}

/// `-x name=value`.
/// Built once as a `HeaderField` (lowercase name), so every request or
/// response that carries it only clones two `Bytes`.
pub fn header(spec: &str) -> Result<HeaderField, UsageError> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| usage(format!("-x {spec:?}: expected name=value")))?;
    let name = name.trim();
    if name.is_empty() || name.bytes().any(|b| !b.is_ascii_graphic() || b == b':') {
        return Err(usage(format!("-x {spec:?}: {name:?} is not a field name")));
    }
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(usage(format!("-x {spec:?}: value has a control character")));
    }
    Ok(HeaderField::new(
        name.to_ascii_lowercase(),
        value.to_owned(),
    ))
}

/// Which runtime drives the sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    Tokio,
    Glommio,
}

pub fn runtime(value: &str) -> Result<Runtime, UsageError> {
    match value {
        "tokio" => Ok(Runtime::Tokio),
        "glommio" => Ok(Runtime::Glommio),
        other => Err(usage(format!(
            "--runtime {other:?}: expected tokio or glommio"
        ))),
    }
}

/// `30s`, `500ms`, `2m`, or plain seconds.
pub fn duration(flag: &str, value: &str) -> Result<std::time::Duration, UsageError> {
    let v = value.trim();
    let (digits, scale) = if let Some(d) = v.strip_suffix("ms") {
        (d, 0.001)
    } else if let Some(d) = v.strip_suffix('s') {
        (d, 1.0)
    } else if let Some(d) = v.strip_suffix('m') {
        (d, 60.0)
    } else {
        (v, 1.0)
    };
    digits
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0 && *n * scale < 1e9)
        .map(|n| std::time::Duration::from_secs_f64(n * scale))
        .ok_or_else(|| usage(format!("{flag} {value:?}: not a duration (30s, 500ms, 2m)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings() {
        let mut s = h2sim_proto::Config::default();
        let mut l = LocalSettings::from_config(&s);
        apply_setting(&mut l, "max_concurrent_streams=1000").unwrap();
        apply_setting(&mut l, "enable_push=0").unwrap();
        assert_eq!(l.max_concurrent_streams, 1000);
        assert!(!l.enable_push);
        assert!(apply_setting(&mut l, "max_frame_size=10").is_err());
        assert!(apply_setting(&mut l, "bogus=1").is_err());
        assert!(apply_setting(&mut l, "noequals").is_err());
        s.set_local_settings(l);
        assert!(!s.enable_push);
        assert_eq!(s.max_concurrent_streams, 1000);
    }

    #[test]
    fn durations() {
        assert_eq!(duration("--duration", "30s").unwrap().as_secs(), 30);
        assert_eq!(duration("--duration", "500ms").unwrap().as_millis(), 500);
        assert_eq!(duration("--duration", "2m").unwrap().as_secs(), 120);
        assert_eq!(duration("--duration", "3").unwrap().as_secs(), 3);
        assert!(duration("--duration", "x").is_err());
        assert!(duration("--duration", "-1s").is_err());
    }

    #[test]
    fn tokens() {
        let mut a = Args::new(vec!["--count=5".into(), "-q".into(), "http://h/".into()]);
        assert_eq!(
            a.next_token().unwrap().unwrap(),
            Token::Flag("--count".into())
        );
        assert_eq!(a.value("--count").unwrap(), "5");
        assert_eq!(a.next_token().unwrap().unwrap(), Token::Flag("-q".into()));
        assert_eq!(
            a.next_token().unwrap().unwrap(),
            Token::Word("http://h/".into())
        );
        assert!(a.next_token().is_none());
        let mut b = Args::new(vec!["--quiet=yes".into()]);
        let _ = b.next_token();
        assert!(b.no_value("--quiet").is_err());
    }
}
