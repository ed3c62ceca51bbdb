//! What is checked of a rule at start, whether it comes from the command
//! line or a rules file: what the rule asks for that it could never do.
//! The caller names the rule (`-m GET -p /a`, `--rules f.yaml: rule 3`) in
//! the one line the user sees.

use std::fmt;

use super::matcher::PathMatch;
use super::rules::{Body, Kind, Reply, Rule};

/// A rule that asks for what it could never do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleError {
    /// A 204 or 304 with a body, which could never be sent (RFC 9110
    /// §6.4.1); `push` names the pushed response, if it is one.
    NoContent { status: u16, push: Option<String> },
    /// A path capture whose name the rule's kind gives a meaning of its
    /// own: a resource rule's `{id}` (its item's id), a list rule's
    /// `{items}` (the items found). Elsewhere a capture wins over a
    /// placeholder of its name (`super::template`).
    ReservedCapture {
        name: &'static str,
        kind: &'static str,
    },
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleError::NoContent { status, push } => {
                if let Some(path) = push {
                    write!(f, "push {path}: ")?;
                }
                write!(
                    f,
                    "a {status} has no content (RFC 9110 §6.4.1): give it no body (text, hex, file, size, dir)"
                )
            }
            RuleError::ReservedCapture { name, kind } => write!(
                f,
                "path capture {{{name}}} clashes with ${{{name}}}, which a {kind} rule fills itself: rename the capture"
            ),
        }
    }
}

impl std::error::Error for RuleError {}

/// The first thing `rule` asks for that it could never do.
pub fn rule(rule: &Rule) -> Result<(), RuleError> {
    reserved_capture(rule)?;
    let serves_files = rule.dir.is_some();
    no_content(&rule.reply, serves_files, None)?;
    for push in &rule.pushes {
        no_content(&push.reply, false, Some(&push.path))?;
    }
    Ok(())
}

fn reserved_capture(rule: &Rule) -> Result<(), RuleError> {
    let (name, kind) = match rule.kind {
        Kind::Resource(_) => ("id", "resource"),
        Kind::List(_) => ("items", "list"),
        Kind::Reply | Kind::Token(_) => return Ok(()),
    };
    let path = PathMatch::parse(rule.path_prefix.as_deref());
    if path.names().iter().any(|n| n == name) {
        return Err(RuleError::ReservedCapture { name, kind });
    }
    Ok(())
}

/// A written 204 or 304 whose rule gives a body: the core drops it, so
/// the rule says something that never happens.
fn no_content(reply: &Reply, serves_files: bool, push: Option<&str>) -> Result<(), RuleError> {
    let has_body = serves_files || !matches!(reply.body, Body::Empty);
    if has_body && matches!(reply.status, 204 | 304) {
        return Err(RuleError::NoContent {
            status: reply.status,
            push: push.map(str::to_owned),
        });
    }
    Ok(())
}
