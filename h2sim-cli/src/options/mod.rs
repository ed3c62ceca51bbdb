//! Command-line parsing. clap (derive) reads the options and writes the
//! help; h2simple's order-dependent grammar (`-m` opens a rule or step that
//! the following flags describe, `-o` a push) is replayed from the
//! positions clap reports (`grammar`). Every problem is one line naming the
//! flag, and the caller exits with status 2.

pub mod cli;
pub mod client;
#[cfg(test)]
mod examples;
pub mod grammar;
pub mod rules_file;
mod scenario_file;
pub mod server;
pub mod tls;

use std::fmt;

use h2sim_proto::{HeaderField, LocalSettings, octets};

use crate::server::check;
use crate::server::rules::Rule;
use crate::trace::errln;

/// A command that cannot run: the message names the flag or value at
/// fault, and the fault gives the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String, pub Fault);

/// Why a command cannot run, which its exit status tells a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A bad command line (exit status 2).
    Options,
    /// A server the run needs before it starts (`--token-url`'s) could not
    /// be reached or gave nothing: exit status 1, as for the servers the
    /// run drives, which the help promises for "a server could not be
    /// reached".
    Unreachable,
}

impl UsageError {
    /// The exit status it ends the process with.
    pub fn exit_status(&self) -> u8 {
        match self.1 {
            Fault::Options => 2,
            Fault::Unreachable => 1,
        }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

pub fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into(), Fault::Options)
}

/// A server the run needs first failed it (see [`Fault::Unreachable`]).
pub fn unreachable(message: impl Into<String>) -> UsageError {
    UsageError(message.into(), Fault::Unreachable)
}

/// `-H name=value`: one HTTP/2 setting. The ranges RFC 9113 §6.5.2 sets
/// are the core's to check (`LocalSettings::check`, as every connection's
/// configuration is checked), so a value a peer would refuse is the same
/// one-line usage error here as in a library's hands; `settings` is left
/// as it was.
pub fn apply_setting(settings: &mut LocalSettings, spec: &str) -> Result<(), UsageError> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| usage(format!("-H {spec:?}: expected name=value")))?;
    let n: u32 = value
        .trim()
        .parse()
        .map_err(|_| usage(format!("-H {spec:?}: {value:?} is not a number")))?;
    let bad = |why: &str| usage(format!("-H {spec:?}: {why}"));
    let mut next = *settings;
    match name.trim().to_ascii_lowercase().as_str() {
        "header_table_size" => next.header_table_size = n,
        "enable_push" if n <= 1 => next.enable_push = n == 1,
        "enable_push" => return Err(bad("enable_push is 0 or 1")),
        "max_concurrent_streams" => next.max_concurrent_streams = n,
        "initial_window_size" => next.initial_window_size = n,
        "max_frame_size" => next.max_frame_size = n,
        "max_header_list_size" => next.max_header_list_size = n,
        "enable_connect_protocol" if n <= 1 => next.enable_connect_protocol = n == 1,
        "enable_connect_protocol" => return Err(bad("enable_connect_protocol is 0 or 1")),
        _ => {
            return Err(bad(
                "unknown setting (header_table_size, enable_push, max_concurrent_streams, initial_window_size, max_frame_size, max_header_list_size, enable_connect_protocol; the client also takes reconn_max, req_max_per_sess, single_request)",
            ));
        }
    }
    next.check().map_err(|e| bad(&e.to_string()))?;
    *settings = next;
    Ok(())
}

/// `-x name=value`: a name the core would send ([`octets::is_field_name`])
/// and a value without controls but HTAB, refused here with the flag
/// named rather than when the first message goes out.
/// Built once as a `HeaderField` (lowercase name), so every request or
/// response that carries it only clones two `Bytes`.
pub fn header(spec: &str) -> Result<HeaderField, UsageError> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| usage(format!("-x {spec:?}: expected name=value")))?;
    let name = name.trim();
    if !octets::is_field_name(name.as_bytes()) {
        return Err(usage(format!("-x {spec:?}: {name:?} is not a field name")));
    }
    // The core refuses only what would split a message (NUL, CR, LF,
    // `octets::is_field_value`); a value of ours holds no control but HTAB,
    // as RFC 9110 §5.5's field-value has none, and peers such as nghttp2
    // reset the stream that carries one.
    if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
        return Err(usage(format!("-x {spec:?}: value has a control character")));
    }
    let field = HeaderField::new(name.to_ascii_lowercase(), value.to_owned());
    // A field of the connection, not the message: HTTP/2 makes its message
    // malformed (RFC 9113 §8.2.2), so the peer would reset every stream
    // that carries it, and HTTP/1.1's core frames its messages and keeps
    // its connections itself (it drops such a field).
    if h2sim_proto::connection_specific(&field) {
        return Err(usage(format!(
            "-x {spec:?}: {name} is a field of the connection, not the message (RFC 9113 \
             §8.2.2): an HTTP/2 peer resets the stream that carries it, and HTTP/1.1 frames and \
             keeps its connections itself: drop it",
            name = String::from_utf8_lossy(&field.name)
        )));
    }
    Ok(field)
}

/// What is checked of a rule at start, wherever it was written (`at`
/// names it: its flags, or its file and number): what it could never do
/// stops the command (see [`check::rule`]); a `${...}` that names nothing
/// is told and the rule stands ([`check::unknown_placeholders`]).
fn check_rule(rule: &Rule, at: &str) -> Result<(), UsageError> {
    check::rule(rule).map_err(|e| usage(format!("{at}: {e}")))?;
    for warning in check::unknown_placeholders(rule) {
        errln!("h2sim: {at}: {warning}");
    }
    Ok(())
}

/// h2simple's `-H` keys that are not HTTP/2 settings but client behaviour,
/// which h2sim has flags for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H2simpleKey {
    /// `reconn_max=N`: `--reconnect-max N`.
    ReconnMax(u32),
    /// `req_max_per_sess=N`: `--requests-per-connection N` (0: no limit).
    ReqMaxPerSess(u64),
    /// `single_request=1`: h2simple's HTTP/1.1 non-persistent connections,
    /// one request each: `--requests-per-connection 1`.
    SingleRequest(bool),
}

impl H2simpleKey {
    /// The key if `spec` is one of them; `Err` when it is but the value is bad.
    pub fn parse(spec: &str) -> Option<Result<H2simpleKey, UsageError>> {
        let (name, value) = spec.split_once('=')?;
        let name = name.trim().to_ascii_lowercase();
        if !matches!(
            name.as_str(),
            "reconn_max" | "req_max_per_sess" | "single_request"
        ) {
            return None;
        }
        let Ok(n) = value.trim().parse::<u32>() else {
            return Some(Err(usage(format!(
                "-H {spec:?}: {value:?} is not a number"
            ))));
        };
        Some(Ok(match name.as_str() {
            "reconn_max" => H2simpleKey::ReconnMax(n),
            "req_max_per_sess" => H2simpleKey::ReqMaxPerSess(u64::from(n)),
            _ => H2simpleKey::SingleRequest(n != 0),
        }))
    }

    /// The h2sim flag it stands for, as a user would type it.
    pub fn flag(self) -> String {
        match self {
            H2simpleKey::ReconnMax(n) => format!("--reconnect-max {n}"),
            H2simpleKey::ReqMaxPerSess(0) | H2simpleKey::SingleRequest(false) => {
                "no --requests-per-connection (no limit)".to_owned()
            }
            H2simpleKey::ReqMaxPerSess(n) => format!("--requests-per-connection {n}"),
            H2simpleKey::SingleRequest(true) => "--requests-per-connection 1".to_owned(),
        }
    }
}

/// Which runtime drives the sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Runtime {
    /// Work-stealing threads over epoll: the default, on any Linux.
    Tokio,
    /// One thread per core over io_uring (Linux 5.8+).
    Glommio,
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
        // RFC 9113 §6.5.2's ranges, the core's check: one line naming
        // the flag and the range, and the settings left as they were.
        let err = apply_setting(&mut l, "max_frame_size=10").unwrap_err();
        assert_eq!(
            err.0,
            "-H \"max_frame_size=10\": SETTINGS_MAX_FRAME_SIZE 10 is out of range: 16384 to 16777215 (RFC 9113 §6.5.2)"
        );
        assert_eq!(l.max_frame_size, 16_384);
        let err = apply_setting(&mut l, "initial_window_size=2147483648").unwrap_err();
        assert!(err.0.contains("0 to 2147483647"), "{err}");
        apply_setting(&mut l, "initial_window_size=2147483647").unwrap();
        apply_setting(&mut l, "max_frame_size=16777215").unwrap();
        assert!(apply_setting(&mut l, "bogus=1").is_err());
        assert!(apply_setting(&mut l, "noequals").is_err());
        s.set_local_settings(l);
        assert!(!s.enable_push);
        assert_eq!(s.max_concurrent_streams, 1000);
    }

    /// `-x` takes what the core would send (`octets`): one line naming
    /// the flag otherwise.
    #[test]
    fn header_fields() {
        assert!(
            header("x-tab=a\tb").is_ok(),
            "HTAB is whitespace in a value"
        );
        let field = header("X-Trace=a b").unwrap();
        assert_eq!(
            (&field.name[..], &field.value[..]),
            (&b"x-trace"[..], &b"a b"[..])
        );
        for (spec, why) in [
            ("a b=1", "is not a field name"),
            ("a:b=1", "is not a field name"),
            ("=1", "is not a field name"),
            ("a=b\r\nevil: 1", "value has a control character"),
            ("a=b\0", "value has a control character"),
            // No peer takes other controls (nghttp2 resets the stream).
            ("a=b\x01", "value has a control character"),
            ("a=b\x7f", "value has a control character"),
        ] {
            let err = header(spec).unwrap_err();
            assert!(err.0.starts_with("-x ") && err.0.ends_with(why), "{err}");
        }
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

    /// `--flag=value`, short flags and a bare URI, as the hand parser's
    /// tokenizer took them; a flag without value refuses `=value`.
    #[test]
    fn tokens() {
        let o = client::parse(vec!["--count=5".into(), "-q".into(), "http://h/".into()]).unwrap();
        assert_eq!((o.count, o.quiet), (Some(5), true));
        assert_eq!(o.steps[0].authority, "h");
        let err = client::parse(vec!["--quiet=yes".into(), "http://h/".into()]).unwrap_err();
        assert!(err.0.contains("--quiet"), "{err}");
    }

    #[test]
    fn h2simple_keys() {
        let mut l = LocalSettings::from_config(&h2sim_proto::Config::default());
        apply_setting(&mut l, "enable_connect_protocol=1").unwrap();
        assert!(l.enable_connect_protocol);
        assert!(apply_setting(&mut l, "enable_connect_protocol=2").is_err());
        assert_eq!(
            H2simpleKey::parse("reconn_max=3").unwrap().unwrap(),
            H2simpleKey::ReconnMax(3)
        );
        assert_eq!(
            H2simpleKey::parse("req_max_per_sess=100")
                .unwrap()
                .unwrap()
                .flag(),
            "--requests-per-connection 100"
        );
        assert_eq!(
            H2simpleKey::parse("single_request=1")
                .unwrap()
                .unwrap()
                .flag(),
            "--requests-per-connection 1"
        );
        assert!(H2simpleKey::parse("reconn_max=x").unwrap().is_err());
        assert!(H2simpleKey::parse("max_frame_size=16384").is_none());
    }
}
