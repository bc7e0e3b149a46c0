//! What a rule reports: the entry it concerns and what is wrong.

use std::fmt;

use serde_json::Value;

use crate::registry::json::label;

/// One broken rule: what it concerns (`` skill `x@1.0.0` ``), what is wrong,
/// and where in the checked documents the entry is, so that a registry built
/// from Rust can name the source location instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The skill, op or capability concerned.
    pub subject: String,
    /// What is wrong and how to fix it.
    pub message: String,
    /// The entry the finding concerns.
    pub at: Option<At>,
    /// For a duplicate: the entry defined first.
    pub also: Option<At>,
    /// The finding is a reference to an entry that the checked documents do
    /// not hold (a call target, a step's target, a replacement). An exported
    /// registry is whole, so for it this is an error; a file another runtime
    /// wrote may be one of several loaded together, so `skill-registry
    /// validate` reports it as not checked.
    pub unresolved: bool,
}

/// An entry of the checked documents, by position in its array. (The variants
/// are named for the arrays, not for what they hold, so that no public name
/// shadows the `Skill` or `Capability` traits in rustc's error messages.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// `skills[i]` of `skill-registry.json`.
    Skills(usize),
    /// `ops[i]` of `op-registry.json`.
    Ops(usize),
    /// `capabilities[i]` of `capabilities.json`.
    Capabilities(usize),
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Skills(i) => write!(f, "skills[{i}]"),
            At::Ops(i) => write!(f, "ops[{i}]"),
            At::Capabilities(i) => write!(f, "capabilities[{i}]"),
        }
    }
}

impl Finding {
    /// A finding about the entry `at`, named `subject`.
    pub fn new(subject: String, at: At, message: impl Into<String>) -> Finding {
        Finding {
            subject,
            message: message.into(),
            at: Some(at),
            also: None,
            unresolved: false,
        }
    }

    /// A reference to an entry the checked documents do not hold.
    pub fn unresolved(subject: String, at: At, message: impl Into<String>) -> Finding {
        Finding {
            unresolved: true,
            ..Finding::new(subject, at, message)
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.subject, self.message)?;
        match (self.also, self.at) {
            (Some(first), Some(at)) => write!(f, " ({first} and {at})"),
            _ => Ok(()),
        }
    }
}

/// `` kind `name@version` ``, as findings name an entry.
pub fn subject(kind: &str, v: &Value) -> String {
    format!("{kind} `{}`", label(v))
}
