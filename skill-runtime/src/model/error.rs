//! Why an invocation produced no result, and why a runtime could not start.
//!
//! Every error names the skill it concerns and carries its own context; it is
//! rendered for humans only at the edges (CLI, MCP), through `Display`.

use std::fmt;

use crate::model::record::RunStatus;
use crate::model::result::NextAction;
use crate::schema::compiled::SchemaViolation;

/// Why an invocation did not produce a result. Bad input is one of these, never a
/// panic, and the runtime keeps serving after any of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvokeError {
    #[error("unknown skill `{reference}`{hint}")]
    /// No registered skill has that name (or name and version).
    UnknownSkill {
        /// The skill as the job named it.
        reference: String,
        /// What the caller may have meant: `; did you mean `x`?`, or that the
        /// name is an op's; empty when nothing is close.
        hint: String,
    },
    #[error(
        "no skill serves intent `{intent}`; name the skill, or list the intent in its #[skill(intents(...))]"
    )]
    /// No skill lists the job's intent.
    UnknownIntent {
        /// The intent the job named.
        intent: String,
    },
    #[error("the job names no skill and no intent")]
    /// The job names neither a skill nor an intent.
    NoTarget,
    #[error("the job for skill `{skill}` expired at {expired_at} and was not run")]
    /// The job's deadline (`expires_at`) passed before it ran.
    Expired {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The deadline, RFC 3339.
        expired_at: String,
    },
    #[error("skill `{skill}` has no version `{version}`; registered: {}", .known.join(", "))]
    /// The skill exists, but not at the version asked for.
    UnknownVersion {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The version asked for.
        version: String,
        /// The versions registered.
        known: Vec<String>,
    },
    #[error("skill `{skill}` is disabled")]
    /// The skill's status is `disabled`.
    Disabled {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
    },
    #[error("caller may not run skill `{skill}`: {reason}")]
    /// The caller's role or permission level is not in the skill's `reusable_by`, or a listed skill was not declared by the calling agent.
    Denied {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// Why.
        reason: String,
    },
    #[error(
        "skill `{skill}` is rate limited to {max_per_minute} calls per minute; retry in {retry_after_ms} ms"
    )]
    /// The skill's `rate_limit` is reached for this minute.
    RateLimited {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The limit, jobs per minute.
        max_per_minute: u32,
        /// When a job would be admitted again.
        retry_after_ms: u64,
    },
    #[error("input for skill `{skill}` is {size} bytes; the limit is {limit}")]
    /// The input is bigger than the runtime's `Limits`.
    TooLarge {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The input's size in bytes.
        size: usize,
        /// The limit.
        limit: usize,
    },
    #[error("input for skill `{skill}` nests deeper than {limit} levels")]
    /// The input nests deeper than the runtime's `Limits`.
    TooDeep {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The limit.
        limit: usize,
    },
    #[error("input for skill `{skill}` is not JSON: {message}")]
    /// The input text is not JSON.
    MalformedJson {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// What went wrong, for people.
        message: String,
    },
    #[error("invalid input for skill `{skill}`:{}", list(.violations))]
    /// The input breaks the skill's input schema.
    InvalidInput {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// Each place that breaks the schema.
        violations: Vec<SchemaViolation>,
    },
    #[error("input for skill `{skill}` does not decode: {message}")]
    /// The input matches the schema but does not decode into the input type.
    MalformedInput {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// What went wrong, for people.
        message: String,
    },
    #[error(
        "the job for skill `{skill}` is not one a reader of its envelope would take: {message}"
    )]
    /// The envelope, built in code, breaks a rule its JSON is held to when
    /// read ([`JobEnvelope::readable`](crate::JobEnvelope::readable)): the
    /// runtime refuses an empty idempotency key, which would make unrelated
    /// jobs one (a queue refuses every such envelope when it is queued).
    InvalidEnvelope {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The rule it breaks, in the reader's words.
        message: String,
    },
    #[error("skill `{skill}` refused the input: {error_code}: {message}")]
    /// A precondition refused the input.
    Precondition {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The precondition's error code (the result's and record's code).
        error_code: String,
        /// What went wrong, for people.
        message: String,
    },
    #[error("skill `{skill}` needs human approval ({reason}) and it was not given: {detail}")]
    /// The skill requires human approval and the approver did not give it.
    NotApproved {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// Why.
        reason: String,
        /// What the approver said.
        detail: String,
    },
    #[error("skill `{skill}` needs human approval ({reason}) and nobody decided before {}", crate::model::time::format_time(*.deadline))]
    /// The job waited for a person's approval past its deadline.
    ApprovalExpired {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// Why approval was needed.
        reason: String,
        /// The deadline that passed.
        deadline: std::time::SystemTime,
    },
    #[error("skill `{skill}` failed with `{code}`{} after {attempts} attempt{}: {message}",
        if *.retryable { " (retryable)" } else { "" }, if *.attempts == 1 { "" } else { "s" })]
    /// The handler returned one of its failure modes, after every attempt allowed.
    Failed {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The failure mode's code.
        code: String,
        /// Whether the failure mode is retryable.
        retryable: bool,
        /// What went wrong, for people.
        message: String,
        /// How many attempts ran.
        attempts: u32,
    },
    #[error("skill `{skill}` timed out after {timeout_ms} ms ({attempts} attempt{})", if *.attempts == 1 { "" } else { "s" })]
    /// Every attempt ran past the skill's timeout or the job's deadline.
    TimedOut {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The time limit of an attempt.
        timeout_ms: u64,
        /// How many attempts ran.
        attempts: u32,
    },
    #[error("skill `{skill}` panicked: {message}")]
    /// The handler panicked (caught: the runtime keeps serving).
    Panicked {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// What went wrong, for people.
        message: String,
    },
    #[error("skill `{skill}` returned output that breaks its own schema:{}", list(.violations))]
    /// The handler's output breaks the skill's output schema.
    InvalidOutput {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// Each place that breaks the schema.
        violations: Vec<SchemaViolation>,
    },
    #[error("skill `{skill}` broke its postcondition `{assertion}`{}", rollback_text(.rollback_action, .rollback))]
    /// A postcondition rejected the output; its rollback action, if any, was run.
    Postcondition {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The postcondition's text.
        assertion: String,
        /// The rollback action it names, if any.
        rollback_action: Option<&'static str>,
        /// What running the rollback action gave, when there is one.
        rollback: Option<Result<(), RollbackError>>,
        /// The output the postcondition rejected, redacted as the manifest
        /// says: what the run found is not lost with it.
        output: Option<std::sync::Arc<serde_json::Value>>,
    },
    #[error("skill `{skill}` broke validation rule `{rule_id}`: {message}{}", rollback_text(.rollback_action, .rollback))]
    /// A validation rule of severity `error` rejected the output; like a
    /// broken postcondition, the skill's rollback action, if it has one, was
    /// run, so that a rejected output leaves no effect behind.
    ValidationRule {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// The rule's id.
        rule_id: String,
        /// What went wrong, for people.
        message: String,
        /// The skill's rollback action, if it has one.
        rollback_action: Option<&'static str>,
        /// What running it gave, when there is one.
        rollback: Option<Result<(), RollbackError>>,
        /// The output the rule rejected, redacted as the manifest says.
        output: Option<std::sync::Arc<serde_json::Value>>,
    },
    #[error("skill `{skill}` used {used} {budget}, over the job's budget of {limit}")]
    /// The job used more than a budget of its constraints allows (tokens,
    /// documents, cost): stopped at the report that crossed it.
    BudgetExceeded {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// Which budget: `tokens`, `documents` or `cents`.
        budget: &'static str,
        /// What the job used.
        used: u64,
        /// The limit.
        limit: u64,
    },
    #[error(
        "skill `{skill}` is declared to run in a {sandbox} sandbox, and this runtime runs handlers in its own process only; run it where a {sandbox} runner is, or declare `sandbox = \"local\"`"
    )]
    /// The skill must run isolated (the ADR's `sandbox_type` DOCKER or WASM)
    /// and this runtime has no runner for that sandbox: it is not run
    /// without its isolation.
    SandboxUnavailable {
        /// The skill.
        skill: String,
        /// `DOCKER` or `WASM`.
        sandbox: &'static str,
    },
    #[error(
        "the job with the same idempotency key that skill `{skill}` was waiting for stopped without a result"
    )]
    /// The job waited on another with the same idempotency key, which stopped without a result.
    Abandoned {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
    },
    #[error("skill `{skill}` was cancelled by its caller")]
    /// The job's watcher cancelled it ([`Cancel`](crate::Cancel)): its
    /// handler was stopped at its next await, or never started.
    Cancelled {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
    },
    #[error("skill `{skill}` could not run: {store} is unavailable: {message}")]
    /// A shared store (idempotency, rate limits, queue) could not be reached.
    Unavailable {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// Which store.
        store: String,
        /// What went wrong, for people.
        message: String,
    },
    #[error("skill `{skill}`: internal error: {message}")]
    /// A bug in the runtime or a handler's plumbing, not in the input.
    Internal {
        /// The skill the job named (`name@version` once resolved).
        skill: String,
        /// What went wrong, for people.
        message: String,
    },
}

/// Why a rollback action did not undo a skill's work: kept in the
/// [`InvokeError::Postcondition`] it was run for, and in the run record.
///
/// `?` converts a `String` or `&str` into one, so an action can write
/// `resources.get::<Db>().ok_or("no database is registered")?`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RollbackError {
    message: String,
}

impl RollbackError {
    /// A failure described by `message`.
    pub fn new(message: impl fmt::Display) -> RollbackError {
        RollbackError {
            message: message.to_string(),
        }
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<String> for RollbackError {
    fn from(message: String) -> RollbackError {
        RollbackError { message }
    }
}

impl From<&str> for RollbackError {
    fn from(message: &str) -> RollbackError {
        RollbackError::new(message)
    }
}

fn list(violations: &[SchemaViolation]) -> String {
    violations.iter().map(|v| format!("\n  {v}")).collect()
}

fn rollback_text(
    action: &Option<&'static str>,
    outcome: &Option<Result<(), RollbackError>>,
) -> String {
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
            InvokeError::InvalidEnvelope { .. } => "invalid_envelope",
            InvokeError::Precondition { error_code, .. } => error_code,
            InvokeError::NotApproved { .. } => "not_approved",
            InvokeError::ApprovalExpired { .. } => "approval_expired",
            InvokeError::Failed { code, .. } => code,
            InvokeError::TimedOut { .. } => "timed_out",
            InvokeError::Panicked { .. } => "panicked",
            InvokeError::InvalidOutput { .. } => "invalid_output",
            InvokeError::Postcondition { .. } => "postcondition_failed",
            InvokeError::ValidationRule { .. } => "validation_rule_failed",
            InvokeError::BudgetExceeded { .. } => "budget_exceeded",
            InvokeError::SandboxUnavailable { .. } => "sandbox_unavailable",
            InvokeError::Abandoned { .. } => "abandoned",
            InvokeError::Cancelled { .. } => "cancelled",
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
                | InvokeError::InvalidEnvelope { .. }
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
            // The caller chose to stop it: nothing to escalate.
            InvokeError::Cancelled { .. } => NextAction::Continue,
            _ => NextAction::Escalate,
        }
    }
}

/// A report through the context crossed one of the job's budgets: the job
/// fails `budget_exceeded`, and the runtime stops its handler at its next
/// await.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{used} {budget} used, over the job's budget of {limit}")]
pub struct OverBudget {
    /// Which budget: `tokens`, `documents` or `cents`.
    pub budget: &'static str,
    /// What the job has used, this report included.
    pub used: u64,
    /// The budget.
    pub limit: u64,
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
    /// How the compiled skills differ from the registry file the runtime was
    /// started against, and overlays that would widen a skill.
    pub contract: Vec<String>,
    /// The runtime was being built inside a skill's or an agent's handler,
    /// which would run any skill with no `calls(...)` checked.
    pub inside_handler: bool,
}

impl StartError {
    pub(crate) fn is_empty(&self) -> bool {
        self.missing_resources.is_empty()
            && self.missing_rollbacks.is_empty()
            && self.contract.is_empty()
            && !self.inside_handler
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "the runtime cannot start:")?;
        if self.inside_handler {
            writeln!(
                f,
                "  - it is being built inside a skill's or an agent's handler; a handler runs other skills through its context: a skill those it lists in `calls(...)`, `other(&ctx, input)`; an agent those it lists in `skills(...)`, `ctx.run::<other>(input)`"
            )?;
        }
        for c in &self.contract {
            writeln!(f, "  - {c}")?;
        }
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

// Here rather than beside `RunStatus`: the error knows the record's words,
// the record does not know errors.
impl RunStatus {
    /// The status of a job that ended with `result`.
    pub(crate) fn of<T>(result: &Result<T, InvokeError>) -> RunStatus {
        match result {
            Ok(_) => RunStatus::Succeeded,
            Err(InvokeError::Cancelled { .. }) => RunStatus::Cancelled,
            Err(InvokeError::Expired { .. }) => RunStatus::Expired,
            Err(_) => RunStatus::Failed,
        }
    }
}
