//! What a caller gets back from a job that succeeded: the skill result (the
//! AI-COS skill model's `SkillOutput`), its metrics and artifacts, and what to do
//! next. Failures are [`InvokeError`](crate::model::error::InvokeError)s.

use std::sync::Arc;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::model::approval::Decision;
use crate::model::data::Data;
use crate::model::id::Id;
use crate::model::record::{RuleNote, StepRun};
use crate::model::time::{deserialize_time, serialize_time};

/// A successful job (the seed's `SkillOutput` with `success: true`); failures are
/// [`InvokeError`](crate::model::error::InvokeError)s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillResult {
    /// Always true: a failed job is an error, not a result.
    pub success: bool,
    /// The job's id.
    pub job_id: Id,
    /// The job's trace.
    pub trace_id: Id,
    /// `name@version` of the skill that ran.
    pub skill: Arc<str>,
    /// The output. Shared with the run record, so keeping records costs no copy.
    pub data: Data,
    /// Files or links the job produced.
    pub artifacts: Vec<Artifact>,
    /// Duration, attempts, items, tokens, documents and cost.
    pub metrics: Metrics,
    /// What the caller should do next.
    pub next_action: NextAction,
    /// Validation rules of severity warning or info that did not hold.
    #[serde(default)]
    pub notes: Vec<RuleNote>,
    /// When the runtime started the job, RFC 3339.
    #[serde(
        serialize_with = "serialize_time",
        deserialize_with = "deserialize_time"
    )]
    pub started_at: SystemTime,
    /// True when the result was stored by an earlier job with the same
    /// idempotency key and returned without running the skill again.
    pub replayed: bool,
    /// A pipeline's steps, in the order they ran, with their outputs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pipeline_steps: Vec<StepRun>,
    /// The decision that let the job run, when it needed a person's
    /// (`requires_hitl`, destructive, `requires_review`): who approved, and
    /// when. What its record's approval step says too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Box<Decision>>,
}

/// What the job cost.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// How long the job took.
    pub duration_ms: u64,
    /// As reported by the handler through its context.
    pub items_processed: u64,
    /// As reported by the handler; absent when it reported none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_used: Option<u64>,
    /// Documents retrieved, as reported by the handler; absent when it
    /// reported none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs_retrieved: Option<u64>,
    /// Dollars, as reported by the handler; absent when it reported none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Handler attempts, retries included.
    pub attempts: u32,
}

/// Something a job produced besides its data, for example a report file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    /// The artifact's name.
    pub name: String,
    /// Media type, for example `text/markdown`.
    pub kind: String,
    /// Where it is, if stored elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
}

impl Artifact {
    /// A file kept at `uri` (a path, a store's key) under its `name`, its
    /// kind read from the name's extension (`.md` Markdown, `.json` JSON,
    /// else bytes).
    pub fn file(name: impl Into<String>, uri: impl Into<String>) -> Artifact {
        let name = name.into();
        let kind = match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("md") => "text/markdown",
            Some("json") => "application/json",
            _ => "application/octet-stream",
        };
        Artifact {
            kind: kind.to_owned(),
            name,
            uri: Some(uri.into()),
        }
    }
}

/// What the caller should do next (the seed's `nextAction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NextAction {
    /// Go on with the next job.
    Continue,
    /// Try the job again later.
    Retry,
    /// Hand the job to someone who can decide.
    Escalate,
    /// Nothing more to do.
    #[default]
    Complete,
}

impl NextAction {
    /// The seed's word for it, as results write it (`escalate`).
    pub fn as_str(self) -> &'static str {
        match self {
            NextAction::Continue => "continue",
            NextAction::Retry => "retry",
            NextAction::Escalate => "escalate",
            NextAction::Complete => "complete",
        }
    }
}

impl std::fmt::Display for NextAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
