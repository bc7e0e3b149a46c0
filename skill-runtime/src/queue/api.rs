//! What callers of a queue see: enqueue a job, read its outcome, see the
//! queue's state. The backends are in-process ([`InProcessQueue`]) and Redis
//! (feature `redis`).
//!
//! [`InProcessQueue`]: crate::queue::memory::InProcessQueue

use std::fmt;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::exec::policy::BoxFuture;
use crate::model::caller::Priority;
use crate::model::envelope::JobEnvelope;
use crate::model::error::InvokeError;
use crate::model::id::Id;
use crate::model::result::{NextAction, SkillResult};
use crate::model::time::{deserialize_time, format_time, serialize_time};

/// Where jobs wait for a worker. Every backend delivers each job at least
/// once, serves higher priorities first, and keeps each job's outcome for a
/// while after it ran (see `docs/queue.md`).
pub trait Queue: Send + Sync {
    /// Put `job` on the queue, sealed first ([`JobEnvelope::seal`]: its
    /// creation time and, for a job with an intent, the seed's stable
    /// idempotency key); its id.
    fn enqueue(&self, job: JobEnvelope) -> BoxFuture<'_, Result<Id, QueueError>>;

    /// The outcome of job `id`, waiting up to `wait` for it (zero: look once);
    /// `None` when it has not run yet, or its outcome is no longer kept.
    fn outcome<'a>(
        &'a self,
        id: &'a str,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Option<Outcome>, QueueError>>;

    /// Jobs waiting per priority, in flight, dead letters, workers seen.
    fn status(&self) -> BoxFuture<'_, Result<QueueStatus, QueueError>>;
}

/// What became of a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The job's id.
    pub job_id: String,
    /// Succeeded or failed.
    pub status: OutcomeStatus,
    /// The skill's result, when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<SkillResult>,
    /// Why it produced no result, otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<OutcomeError>,
    /// The worker that ran it.
    pub worker: String,
    #[serde(
        serialize_with = "serialize_time",
        deserialize_with = "deserialize_time"
    )]
    /// When the job finished.
    pub completed_at: SystemTime,
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeStatus {
    /// The job produced a result.
    Succeeded,
    /// The job ended with an error.
    Failed,
    /// Past its `expiresAt` when a worker took it: not run.
    Expired,
}

impl std::fmt::Display for OutcomeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutcomeStatus::Succeeded => "succeeded",
            OutcomeStatus::Failed => "failed",
            OutcomeStatus::Expired => "expired",
        })
    }
}

/// A failed job's error, as a caller of another process reads it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeError {
    /// The stable code (`InvokeError::code`): `invalid_input`, `timed_out`, a
    /// failure mode's code, ...
    pub code: String,
    /// The error, for people.
    pub message: String,
    /// What the caller should do next.
    pub next_action: NextAction,
    /// Whether the caller's input was at fault.
    pub input_error: bool,
}

impl Outcome {
    /// The outcome of job `job_id`, run by `worker`, that ended with `result`.
    pub fn of(job_id: &str, worker: &str, result: Result<SkillResult, InvokeError>) -> Outcome {
        let (status, result, error) = match result {
            Ok(r) => (OutcomeStatus::Succeeded, Some(r), None),
            Err(e) => (
                if matches!(e, InvokeError::Expired { .. }) {
                    OutcomeStatus::Expired
                } else {
                    OutcomeStatus::Failed
                },
                None,
                Some(OutcomeError {
                    code: e.code().to_owned(),
                    message: e.to_string(),
                    next_action: e.next_action(),
                    input_error: e.is_input_error(),
                }),
            ),
        };
        Outcome {
            job_id: job_id.to_owned(),
            status,
            result,
            error,
            worker: worker.to_owned(),
            completed_at: SystemTime::now(),
        }
    }
}

/// The state of a queue, as `queue status` prints it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueStatus {
    /// The queue's name.
    pub queue: String,
    /// Jobs no worker has taken yet, by priority (highest first).
    pub waiting: Vec<(Priority, u64)>,
    /// Jobs a worker has taken and not finished.
    pub in_flight: u64,
    /// Jobs given up on, with their reasons, in the dead-letter stream.
    pub dead_letters: u64,
    /// Workers that reported in recently, by name.
    pub workers: Vec<String>,
}

impl fmt::Display for QueueStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "queue `{}`", self.queue)?;
        for (p, n) in &self.waiting {
            writeln!(f, "  waiting ({:<8}) {n}", p.as_str())?;
        }
        writeln!(f, "  in flight          {}", self.in_flight)?;
        writeln!(f, "  dead letters       {}", self.dead_letters)?;
        write!(f, "  workers            {}", self.workers.len())?;
        for w in &self.workers {
            write!(f, "\n    {w}")?;
        }
        Ok(())
    }
}

/// Why a queue could not do what it was asked (the job's own failures are
/// [`Outcome`]s, not these).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// The store could not be reached or answered with an error.
    #[error("{store}: {message}")]
    Store {
        /// The store (a Redis URL without its password).
        store: String,
        /// What it answered.
        message: String,
    },
    /// What the store holds is not what this version writes.
    #[error("{store}: unreadable {what}: {message}")]
    Corrupt {
        /// The store.
        store: String,
        /// What could not be read (a job, a result, ...).
        what: &'static str,
        /// Why.
        message: String,
    },
    /// Another job was queued with this job's id while outcomes are kept: a
    /// job id names one job, so the second is refused (the same envelope
    /// sent again is taken as the job it already is).
    #[error(
        "job id `{job_id}` already names another job on this queue; give the new job an id of its own (or leave `jobId` out for a fresh one)"
    )]
    JobIdTaken {
        /// The id.
        job_id: String,
    },
    /// The queue no longer runs (its workers were shut down).
    #[error("the queue is shut down")]
    Closed,
}

/// `completed_at` of an outcome, for people.
pub fn completed(outcome: &Outcome) -> String {
    format_time(outcome.completed_at)
}
