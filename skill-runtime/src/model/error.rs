//! Why an invocation produced no result, and why a runtime could not start.
//!
//! Every error names the skill it concerns and carries its own context; it is
//! rendered for humans only at the edges (CLI, MCP), through `Display`.

use std::fmt;

use crate::model::result::NextAction;
use crate::schema::compiled::SchemaViolation;

/// Why an invocation did not produce a result. Bad input is one of these, never a
/// panic, and the runtime keeps serving after any of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvokeError {
    #[error("unknown skill `{reference}`{hint}")]
    UnknownSkill {
        reference: String,
        /// What the caller may have meant: `; did you mean `x`?`, or that the
        /// name is an op's; empty when nothing is close.
        hint: String,
    },
    #[error(
        "no skill serves intent `{intent}`; name the skill, or list the intent in its #[skill(intents(...))]"
    )]
    UnknownIntent { intent: String },
    #[error("the job names no skill and no intent")]
    NoTarget,
    #[error("the job for skill `{skill}` expired at {expired_at} and was not run")]
    Expired { skill: String, expired_at: String },
    #[error("skill `{skill}` has no version `{version}`; registered: {}", .known.join(", "))]
    UnknownVersion {
        skill: String,
        version: String,
        known: Vec<String>,
    },
    #[error("skill `{skill}` is disabled")]
    Disabled { skill: String },
    #[error("caller may not run skill `{skill}`: {reason}")]
    Denied { skill: String, reason: String },
    #[error(
        "skill `{skill}` is rate limited to {max_per_minute} calls per minute; retry in {retry_after_ms} ms"
    )]
    RateLimited {
        skill: String,
        max_per_minute: u32,
        retry_after_ms: u64,
    },
    #[error("input for skill `{skill}` is {size} bytes; the limit is {limit}")]
    TooLarge {
        skill: String,
        size: usize,
        limit: usize,
    },
    #[error("input for skill `{skill}` nests deeper than {limit} levels")]
    TooDeep { skill: String, limit: usize },
    #[error("input for skill `{skill}` is not JSON: {message}")]
    MalformedJson { skill: String, message: String },
    #[error("invalid input for skill `{skill}`:{}", list(.violations))]
    InvalidInput {
        skill: String,
        violations: Vec<SchemaViolation>,
    },
    #[error("input for skill `{skill}` does not decode: {message}")]
    MalformedInput { skill: String, message: String },
    #[error("skill `{skill}` refused the input: {error_code}: {message}")]
    Precondition {
        skill: String,
        error_code: String,
        message: String,
    },
    #[error("skill `{skill}` needs human approval ({reason}) and it was not given: {detail}")]
    NotApproved {
        skill: String,
        reason: String,
        detail: String,
    },
    #[error("skill `{skill}` failed with `{code}`{} after {attempts} attempt{}: {message}",
        if *.retryable { " (retryable)" } else { "" }, if *.attempts == 1 { "" } else { "s" })]
    Failed {
        skill: String,
        code: String,
        retryable: bool,
        message: String,
        attempts: u32,
    },
    #[error("skill `{skill}` timed out after {timeout_ms} ms ({attempts} attempt{})", if *.attempts == 1 { "" } else { "s" })]
    TimedOut {
        skill: String,
        timeout_ms: u64,
        attempts: u32,
    },
    #[error("skill `{skill}` panicked: {message}")]
    Panicked { skill: String, message: String },
    #[error("skill `{skill}` returned output that breaks its own schema:{}", list(.violations))]
    InvalidOutput {
        skill: String,
        violations: Vec<SchemaViolation>,
    },
    #[error("skill `{skill}` broke its postcondition `{assertion}`{}", rollback_text(.rollback_action, .rollback))]
    Postcondition {
        skill: String,
        assertion: String,
        rollback_action: Option<String>,
        /// What running the rollback action gave, when there is one.
        rollback: Option<Result<(), String>>,
        /// The output the postcondition rejected, redacted as the manifest
        /// says: what the run found is not lost with it.
        output: Option<std::sync::Arc<serde_json::Value>>,
    },
    #[error("skill `{skill}` broke validation rule `{rule_id}`: {message}")]
    ValidationRule {
        skill: String,
        rule_id: String,
        message: String,
        /// The output the rule rejected, redacted as the manifest says.
        output: Option<std::sync::Arc<serde_json::Value>>,
    },
    #[error("skill `{skill}` used {used} {budget}, over the job's budget of {limit}")]
    OverBudget {
        skill: String,
        budget: &'static str,
        used: u64,
        limit: u64,
    },
    #[error(
        "the job with the same idempotency key that skill `{skill}` was waiting for stopped without a result"
    )]
    Abandoned { skill: String },
    #[error("skill `{skill}` could not run: {store} is unavailable: {message}")]
    Unavailable {
        skill: String,
        store: String,
        message: String,
    },
    #[error("skill `{skill}`: internal error: {message}")]
    Internal { skill: String, message: String },
}

fn list(violations: &[SchemaViolation]) -> String {
    violations.iter().map(|v| format!("\n  {v}")).collect()
}

fn rollback_text(action: &Option<String>, outcome: &Option<Result<(), String>>) -> String {
    match (action, outcome) {
        (Some(a), Some(Ok(()))) => format!("; rollback action `{a}` ran"),
        (Some(a), Some(Err(e))) => format!("; rollback action `{a}` failed: {e}"),
        (Some(a), None) => format!("; rollback action: {a}"),
        (None, _) => String::new(),
    }
}

impl InvokeError {
    /// A stable snake_case code for the error; for a handler failure, its failure
    /// mode's code.
    pub fn code(&self) -> &str {
        match self {
            InvokeError::UnknownSkill { .. } => "unknown_skill",
            InvokeError::UnknownIntent { .. } => "unknown_intent",
            InvokeError::NoTarget => "no_target",
            InvokeError::Expired { .. } => "expired",
            InvokeError::UnknownVersion { .. } => "unknown_version",
            InvokeError::Disabled { .. } => "disabled",
            InvokeError::Denied { .. } => "denied",
            InvokeError::RateLimited { .. } => "rate_limited",
            InvokeError::TooLarge { .. } => "too_large",
            InvokeError::TooDeep { .. } => "too_deep",
            InvokeError::MalformedJson { .. } => "malformed_json",
            InvokeError::InvalidInput { .. } => "invalid_input",
            InvokeError::MalformedInput { .. } => "malformed_input",
            InvokeError::Precondition { error_code, .. } => error_code,
            InvokeError::NotApproved { .. } => "not_approved",
            InvokeError::Failed { code, .. } => code,
            InvokeError::TimedOut { .. } => "timed_out",
            InvokeError::Panicked { .. } => "panicked",
            InvokeError::InvalidOutput { .. } => "invalid_output",
            InvokeError::Postcondition { .. } => "postcondition_failed",
            InvokeError::ValidationRule { .. } => "validation_rule_failed",
            InvokeError::OverBudget { .. } => "over_budget",
            InvokeError::Abandoned { .. } => "abandoned",
            InvokeError::Unavailable { .. } => "unavailable",
            InvokeError::Internal { .. } => "internal",
        }
    }

    /// The output a postcondition or an error-severity rule rejected: the job
    /// failed, and this is what it produced (redacted as its manifest says).
    pub fn rejected_output(&self) -> Option<&serde_json::Value> {
        self.rejected_output_shared().map(|o| &**o)
    }

    /// [`Self::rejected_output`] as the error holds it, to share, not copy.
    pub(crate) fn rejected_output_shared(&self) -> Option<&std::sync::Arc<serde_json::Value>> {
        match self {
            InvokeError::Postcondition { output, .. }
            | InvokeError::ValidationRule { output, .. } => output.as_ref(),
            _ => None,
        }
    }

    /// Whether the caller's input was at fault (as opposed to the skill, the
    /// policies, or the runtime).
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            InvokeError::UnknownSkill { .. }
                | InvokeError::UnknownIntent { .. }
                | InvokeError::NoTarget
                | InvokeError::UnknownVersion { .. }
                | InvokeError::TooLarge { .. }
                | InvokeError::TooDeep { .. }
                | InvokeError::MalformedJson { .. }
                | InvokeError::InvalidInput { .. }
                | InvokeError::MalformedInput { .. }
                | InvokeError::Precondition { .. }
        )
    }

    /// What the caller should do next (the seed's `nextAction`): retry what may
    /// pass later, escalate what needs a human or a fix.
    pub fn next_action(&self) -> NextAction {
        match self {
            InvokeError::RateLimited { .. }
            | InvokeError::Abandoned { .. }
            | InvokeError::Unavailable { .. } => NextAction::Retry,
            InvokeError::Failed { retryable, .. } if *retryable => NextAction::Retry,
            InvokeError::TimedOut { .. } => NextAction::Retry,
            _ => NextAction::Escalate,
        }
    }
}

/// What a runtime needs and was not given; it refuses to start rather than let a
/// skill find out at run time.
#[derive(Debug, Default, thiserror::Error)]
pub struct StartError {
    /// (skill, capability id, resource type): a declared capability's resource
    /// was not registered.
    pub missing_resources: Vec<(String, &'static str, &'static str)>,
    /// (skill, action): a postcondition's rollback action has no handler.
    pub missing_rollbacks: Vec<(String, &'static str)>,
}

impl StartError {
    pub(crate) fn is_empty(&self) -> bool {
        self.missing_resources.is_empty() && self.missing_rollbacks.is_empty()
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "the runtime cannot start:")?;
        for (skill, cap, ty) in &self.missing_resources {
            writeln!(
                f,
                "  - skill `{skill}` declares `{cap}`, which needs a `{ty}` in Resources"
            )?;
        }
        for (skill, action) in &self.missing_rollbacks {
            writeln!(
                f,
                "  - skill `{skill}` declares rollback action `{action}`; register it with RuntimeBuilder::rollback"
            )?;
        }
        Ok(())
    }
}
