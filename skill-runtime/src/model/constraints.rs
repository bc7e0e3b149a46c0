//! The limits a caller puts on one job (the seed's `JobConstraints`):
//! tokens, documents, a deadline, a cost budget, a dry run.

use serde::{Deserialize, Deserializer, Serialize};

/// Limits the caller puts on one job (the seed's `JobConstraints`), with the
/// seed's defaults for what an envelope leaves out: 4,000 tokens, 10
/// documents, 5 minutes, not a dry run, no cost budget. Every job is held to
/// them, and its record shows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobConstraints {
    /// Token budget (the seed's `maxTokens`): a job fails `budget_exceeded`
    /// at the report ([`Ctx::report_tokens`]) that crosses it.
    ///
    /// [`Ctx::report_tokens`]: crate::contract::skill::Ctx::report_tokens
    #[serde(default = "default_max_tokens", alias = "max_tokens")]
    pub max_tokens: u64,
    /// Document budget (the seed's `maxDocs`: documents a job retrieves): a
    /// job fails `budget_exceeded` at the report ([`Ctx::report_docs`]) that
    /// crosses it.
    ///
    /// [`Ctx::report_docs`]: crate::contract::skill::Ctx::report_docs
    #[serde(default = "default_max_docs", alias = "max_docs")]
    pub max_docs: u64,
    /// Deadline for the whole job, in milliseconds, retries included (the
    /// seed's `timeout`), at most [`JobConstraints::MAX_TIMEOUT_MS`]. Each
    /// attempt is also bounded by the skill's own `timeout_ms`.
    #[serde(
        default = "default_timeout",
        rename = "timeout",
        alias = "timeout_ms",
        alias = "timeoutMs",
        deserialize_with = "timeout"
    )]
    pub timeout_ms: u64,
    /// Cost budget (the seed's `budget`, in dollars): a job fails
    /// `budget_exceeded` at the report ([`Ctx::report_cost`]) that crosses it.
    ///
    /// [`Ctx::report_cost`]: crate::contract::skill::Ctx::report_cost
    #[serde(
        default,
        deserialize_with = "budget",
        skip_serializing_if = "Option::is_none"
    )]
    pub budget: Option<f64>,
    /// Ask the skill not to change anything; it reads this from its context.
    #[serde(default, alias = "dry_run")]
    pub dry_run: bool,
}

impl JobConstraints {
    /// The seed's default token budget.
    pub const DEFAULT_MAX_TOKENS: u64 = 4_000;
    /// The seed's default document budget.
    pub const DEFAULT_MAX_DOCS: u64 = 10;
    /// The seed's default deadline: 5 minutes.
    pub const DEFAULT_TIMEOUT_MS: u64 = 300_000;
    /// The longest deadline a job may ask for: 30 days.
    pub const MAX_TIMEOUT_MS: u64 = skill_core::manifest::Execution::MAX_TIMEOUT_MS;
}

impl Default for JobConstraints {
    fn default() -> Self {
        JobConstraints {
            max_tokens: JobConstraints::DEFAULT_MAX_TOKENS,
            max_docs: JobConstraints::DEFAULT_MAX_DOCS,
            timeout_ms: JobConstraints::DEFAULT_TIMEOUT_MS,
            budget: None,
            dry_run: false,
        }
    }
}

fn default_max_tokens() -> u64 {
    JobConstraints::DEFAULT_MAX_TOKENS
}

fn default_max_docs() -> u64 {
    JobConstraints::DEFAULT_MAX_DOCS
}

fn default_timeout() -> u64 {
    JobConstraints::DEFAULT_TIMEOUT_MS
}

fn timeout<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let ms = u64::deserialize(d)?;
    if ms == 0 || ms > JobConstraints::MAX_TIMEOUT_MS {
        return Err(serde::de::Error::custom(format!(
            "timeout {ms} ms is outside 1 ms to {} ms (30 days)",
            JobConstraints::MAX_TIMEOUT_MS
        )));
    }
    Ok(ms)
}

fn budget<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let dollars = f64::deserialize(d)?;
    if !dollars.is_finite() || dollars < 0.0 {
        return Err(serde::de::Error::custom(format!(
            "budget {dollars} is not a non-negative amount of dollars"
        )));
    }
    Ok(Some(dollars))
}
