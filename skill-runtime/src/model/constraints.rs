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

impl JobConstraints {
    /// The rules the constraints are held to when read, checked on
    /// constraints built in code: a deadline of 1 ms to 30 days, a budget
    /// of a non-negative, finite amount of dollars.
    pub(crate) fn readable(&self) -> Result<(), String> {
        timeout_rule(self.timeout_ms)?;
        match self.budget {
            Some(dollars) => budget_rule(dollars).map(drop),
            None => Ok(()),
        }
    }
}

fn timeout_rule(ms: u64) -> Result<u64, String> {
    match ms == 0 || ms > JobConstraints::MAX_TIMEOUT_MS {
        true => Err(format!(
            "timeout {ms} ms is outside 1 ms to {} ms (30 days)",
            JobConstraints::MAX_TIMEOUT_MS
        )),
        false => Ok(ms),
    }
}

fn budget_rule(dollars: f64) -> Result<f64, String> {
    match !dollars.is_finite() || dollars < 0.0 {
        true => Err(format!(
            "budget {dollars} is not a non-negative amount of dollars"
        )),
        false => Ok(dollars),
    }
}

fn timeout<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    timeout_rule(u64::deserialize(d)?).map_err(serde::de::Error::custom)
}

fn budget<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    budget_rule(f64::deserialize(d)?)
        .map(Some)
        .map_err(serde::de::Error::custom)
}
