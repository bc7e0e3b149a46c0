//! Run records: one per job, with each stage it went through,
//! each attempt of its handler, and, for a pipeline, each of its steps' jobs.
//!
//! Records never hold a redacted field: the runtime redacts params, output and
//! messages before a record is built.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use serde::{Deserialize, Serialize, Serializer};
use skill_core::manifest::Severity;

use crate::model::caller::Caller;
use crate::model::data::Data;
use crate::model::envelope::{JobConstraints, Scope};
use crate::model::id::Id;
use crate::model::recorded::RecordedValue;
use crate::model::time::{deserialize_time, serialize_time};

/// One invocation, from resolution to the last check.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    /// The job's id.
    pub job_id: Id,
    /// The job's trace.
    pub trace_id: Id,
    /// The job that started this one, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_job_id: Option<Id>,
    /// The skill's name (as asked for, when it did not resolve).
    pub skill: Cow<'static, str>,
    /// The version that was resolved, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<&'static str>,
    /// What the job was for and what it processed (the seed's `intent` and
    /// `scope`), when the caller said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// The scope the job covered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<Box<Scope>>,
    /// When the caller made the envelope (a queued job waited from then to
    /// `started_at`).
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::model::time::optional"
    )]
    pub created_at: Option<SystemTime>,
    /// Who asked for the job.
    pub caller: Caller,
    /// The input, with redacted fields replaced; `null` when it did not parse.
    pub params: RecordedValue,
    /// The limits it ran under (the seed's defaults filled in): deadline,
    /// budgets, dry run.
    pub constraints: JobConstraints,
    /// The idempotency key it ran under, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The result came from an earlier job with the same key.
    pub replayed: bool,
    /// When the runtime took the job.
    #[serde(serialize_with = "serialize_time")]
    pub started_at: SystemTime,
    /// When it finished.
    #[serde(serialize_with = "serialize_time")]
    pub completed_at: SystemTime,
    /// How long it took.
    pub duration_us: u64,
    /// How it ended.
    pub status: RunStatus,
    /// Each stage the job went through, with its outcome and duration
    /// (JSON `steps`: the record format's field name since its first version).
    pub steps: Stages,
    /// Each attempt of the handler.
    pub attempts: Attempts,
    /// The output, with redacted fields replaced; only on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Data>,
    /// Why it failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    /// Validation-rule warnings and runtime notes.
    pub notes: Vec<RuleNote>,
    /// The handler's last progress report, if it made any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Progress>,
    /// A pipeline's steps, in the order they ran (each step's output is in the
    /// step's own record, under its job id).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pipeline_steps: Vec<StepRun>,
}

/// One step of a pipeline as it ran (the Chimera seed's workflow run record).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRun {
    /// The step's id in the pipeline.
    pub id: Cow<'static, str>,
    /// `name@version` of the skill or op that ran (as referenced, when it did
    /// not resolve).
    pub skill_name: Arc<str>,
    /// The step's own job, child of the pipeline's.
    pub job_id: Id,
    /// How it ended.
    pub status: RunStatus,
    /// The step's output; in results only, never in records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Data>,
    /// The error's code and message, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(
        serialize_with = "serialize_time",
        deserialize_with = "deserialize_time"
    )]
    /// When it finished.
    pub completed_at: SystemTime,
}

/// How far a job has come, as its handler reported it
/// ([`Ctx::report_progress`](crate::Ctx::report_progress)): `done` of
/// `total` (when known), and what it is doing. The run record keeps the last
/// report; an MCP client that asked for progress receives reports as
/// `notifications/progress`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Work done so far, in the handler's own unit (items, steps, bytes).
    pub done: u64,
    /// The work there is, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// What the handler is doing now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl fmt::Display for Progress {
    /// `12 of 20 (counted 12 of 20)`, `12`, `12 (reading)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.done)?;
        if let Some(t) = self.total {
            write!(f, " of {t}")?;
        }
        if let Some(m) = &self.message {
            write!(f, " ({m})")?;
        }
        Ok(())
    }
}

/// How a job ended: in its run record, a pipeline's step list and a queue's
/// outcome alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// The job produced a result.
    Succeeded,
    /// The job ended with an error.
    Failed,
    /// Cancelled: not run, or stopped while it ran (its error is `cancelled`).
    Cancelled,
    /// Past its `expiresAt` when it was taken: not run (its error is `expired`).
    Expired,
    /// A pipeline step whose guard did not hold: it did not run.
    Skipped,
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Expired => "expired",
            RunStatus::Skipped => "skipped",
        })
    }
}

/// The stages of a job, in the order they run (a record's JSON calls them
/// `steps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Find the skill.
    Resolve,
    /// Only for jobs with an `expiresAt`.
    Expiry,
    /// Check the caller against `reusable_by`.
    Authorize,
    /// Admit the job under the rate limit.
    RateLimit,
    /// Check the input against its schema.
    ValidateInput,
    /// Run the preconditions.
    Preconditions,
    /// Claim the idempotency key, or replay its result.
    Idempotency,
    /// Ask for human approval.
    Approval,
    /// Run the handler (with retries).
    Execute,
    /// Check the job's budgets.
    Budget,
    /// Check the output against its schema.
    ValidateOutput,
    /// Run the postconditions.
    Postconditions,
    /// Run the validation rules.
    ValidationRules,
}

/// How one stage ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StageOutcome {
    /// The stage passed.
    Passed,
    /// The stage ended the job.
    Failed,
    /// Nothing to do for this skill (no rate limit, no approval needed, ...).
    Skipped,
    /// Idempotency: an earlier job's result was returned.
    Replayed,
}

/// As its name ([`Stage::as_str`]): one spelling for records, spans and logs.
impl Serialize for Stage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl Stage {
    /// Its name, as a record writes it (`validate_input`).
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Resolve => "resolve",
            Stage::Expiry => "expiry",
            Stage::Authorize => "authorize",
            Stage::RateLimit => "rate_limit",
            Stage::ValidateInput => "validate_input",
            Stage::Preconditions => "preconditions",
            Stage::Idempotency => "idempotency",
            Stage::Approval => "approval",
            Stage::Execute => "execute",
            Stage::Budget => "budget",
            Stage::ValidateOutput => "validate_output",
            Stage::Postconditions => "postconditions",
            Stage::ValidationRules => "validation_rules",
        }
    }

    /// Every stage, in the order they run.
    pub const ALL: [Stage; 13] = [
        Stage::Resolve,
        Stage::Expiry,
        Stage::Authorize,
        Stage::RateLimit,
        Stage::ValidateInput,
        Stage::Preconditions,
        Stage::Idempotency,
        Stage::Approval,
        Stage::Execute,
        Stage::Budget,
        Stage::ValidateOutput,
        Stage::Postconditions,
        Stage::ValidationRules,
    ];
}

/// One stage of a job, as [`Stages`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StageRecord<'a> {
    /// Which stage (JSON `step`).
    pub step: Stage,
    /// How it went.
    pub outcome: StageOutcome,
    /// How long it took.
    pub duration_us: u64,
    /// Why it failed or who approved, for the stages that say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'a str>,
}

/// The stages a job went through, in the order they ran; serialized as a list of
/// [`StageRecord`]s.
///
/// A job runs each stage at most once and in [`Stage`]'s order, so the stages
/// are a table with a slot per stage, inside the record, rather than a list on the
/// heap: making a record fills slots instead of growing a vector, and a record
/// dropped from memory long after it was made frees one heap block fewer (most
/// records are dropped cold, so each block is a cache miss).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Stages {
    outcome: [Option<StageOutcome>; Stage::ALL.len()],
    duration_us: [u64; Stage::ALL.len()],
    /// The few stages that carry a detail; usually none, which allocates nothing.
    details: Vec<(Stage, String)>,
}

impl Stages {
    /// No stage yet.
    pub(crate) const fn new() -> Stages {
        Stages {
            outcome: [None; Stage::ALL.len()],
            duration_us: [0; Stage::ALL.len()],
            details: Vec::new(),
        }
    }

    /// The stages, moved out; these keep their slots and lose their details
    /// (a `mem::take` would build an empty table, then copy both).
    pub(crate) fn take(&mut self) -> Stages {
        Stages {
            outcome: self.outcome,
            duration_us: self.duration_us,
            details: std::mem::take(&mut self.details),
        }
    }

    /// The stages that ran, in order.
    pub fn iter(&self) -> impl Iterator<Item = StageRecord<'_>> + '_ {
        Stage::ALL.into_iter().filter_map(|step| self.get(step))
    }

    /// How `step` went, when the job reached it.
    pub fn get(&self, step: Stage) -> Option<StageRecord<'_>> {
        let i = step as usize;
        Some(StageRecord {
            step,
            outcome: self.outcome[i]?,
            duration_us: self.duration_us[i],
            detail: self
                .details
                .iter()
                .find(|(s, _)| *s == step)
                .map(|(_, d)| d.as_str()),
        })
    }

    /// How many stages ran.
    pub fn len(&self) -> usize {
        self.outcome.iter().flatten().count()
    }

    /// Whether no stage was recorded.
    pub fn is_empty(&self) -> bool {
        self.outcome.iter().all(Option::is_none)
    }

    /// Record `step`. Stages come in order, each once (checked in debug builds).
    #[inline]
    pub(crate) fn set(
        &mut self,
        step: Stage,
        outcome: StageOutcome,
        duration_us: u64,
        detail: Option<String>,
    ) {
        let i = step as usize;
        debug_assert!(
            self.outcome[i..].iter().all(Option::is_none),
            "step {step:?} recorded out of order or twice"
        );
        self.outcome[i] = Some(outcome);
        self.duration_us[i] = duration_us;
        if let Some(detail) = detail {
            self.details.push((step, detail));
        }
    }

    /// Rewrite every detail (to scrub redacted values out of them).
    pub(crate) fn map_details(&mut self, mut f: impl FnMut(String) -> String) {
        for (_, detail) in &mut self.details {
            *detail = f(std::mem::take(detail));
        }
    }
}

impl fmt::Debug for Stages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Stages {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// One run of the handler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AttemptRecord {
    /// Its number, from 1.
    pub attempt: u32,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// How long it took.
    pub duration_us: u64,
    /// The failure, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wait before the next attempt, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<u64>,
}

/// The handler's runs, in order; serialized as a list of [`AttemptRecord`]s.
///
/// Most jobs make one attempt, so the first is kept inside the record and only
/// retries go to the heap: like [`Stages`], one block fewer to make per job and
/// to free when the record is dropped.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Attempts {
    first: Option<AttemptRecord>,
    retries: Vec<AttemptRecord>,
}

impl Attempts {
    /// The attempts, in order.
    pub fn iter(&self) -> impl Iterator<Item = &AttemptRecord> + '_ {
        self.first.iter().chain(&self.retries)
    }

    /// How many attempts ran.
    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.retries.len()
    }

    /// Whether none ran.
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// Attempt `i` (from 0).
    pub fn get(&self, i: usize) -> Option<&AttemptRecord> {
        match i {
            0 => self.first.as_ref(),
            i => self.retries.get(i - 1),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, attempt: AttemptRecord) {
        if self.first.is_none() {
            self.first = Some(attempt);
        } else {
            self.retries.push(attempt);
        }
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut AttemptRecord> + '_ {
        self.first.iter_mut().chain(&mut self.retries)
    }
}

impl std::ops::Index<usize> for Attempts {
    type Output = AttemptRecord;

    fn index(&self, i: usize) -> &AttemptRecord {
        self.get(i)
            .unwrap_or_else(|| panic!("attempt {i} of {}", self.len()))
    }
}

impl fmt::Debug for Attempts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Attempts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// How one attempt of the handler ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// It returned an output.
    Succeeded,
    /// It returned a failure mode.
    Failed,
    /// It ran past its time limit.
    TimedOut,
    /// It panicked.
    Panicked,
    /// The runtime stopped it before it returned (it crossed a budget).
    Stopped,
}

/// Why a job failed, as its record keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorRecord {
    /// The error's code (`invalid_input`, a failure mode's code, ...).
    pub code: String,
    /// The error, redacted as the manifest says.
    pub message: String,
}

/// A validation rule of severity warning or info that did not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleNote {
    /// The rule's id.
    pub rule_id: Cow<'static, str>,
    /// Its severity.
    pub severity: Severity,
    /// What it reported.
    pub message: Cow<'static, str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A status is spelt alike in records, outcomes and `queue` output.
    #[test]
    fn a_status_is_written_alike_in_json_and_text() {
        use super::RunStatus;
        for status in [
            RunStatus::Succeeded,
            RunStatus::Failed,
            RunStatus::Cancelled,
            RunStatus::Expired,
            RunStatus::Skipped,
        ] {
            let json = serde_json::to_value(status).unwrap();
            assert_eq!(json, status.to_string());
            assert_eq!(serde_json::from_value::<RunStatus>(json).unwrap(), status);
        }
    }

    /// The table reads and serializes as the list of steps that ran, in order,
    /// each with its detail when it has one.
    #[test]
    fn steps_read_as_the_list_they_ran_in() {
        // A step's slot is its position in the enum, which is the order they run in.
        for (i, step) in Stage::ALL.into_iter().enumerate() {
            assert_eq!(step as usize, i);
            assert_eq!(serde_json::to_value(step).unwrap(), step.as_str());
        }
        let mut steps = Stages::default();
        assert!(steps.is_empty());
        steps.set(Stage::Resolve, StageOutcome::Passed, 0, None);
        steps.set(
            Stage::Approval,
            StageOutcome::Failed,
            12,
            Some("denied".into()),
        );
        assert_eq!(steps.len(), 2);
        assert_eq!(steps.get(Stage::Execute), None);
        assert_eq!(steps.get(Stage::Approval).unwrap().detail, Some("denied"));
        assert_eq!(
            serde_json::to_value(&steps).unwrap(),
            serde_json::json!([
                {"step": "resolve", "outcome": "passed", "duration_us": 0},
                {"step": "approval", "outcome": "failed", "duration_us": 12, "detail": "denied"},
            ])
        );
        steps.map_details(|d| d.replace("denied", "[redacted]"));
        assert_eq!(
            steps.get(Stage::Approval).unwrap().detail,
            Some("[redacted]")
        );
    }
}
