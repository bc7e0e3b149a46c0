//! What callers of a queue see: enqueue a job, read its outcome, see the
//! queue's state. The backends are in-process ([`InProcessQueue`]) and Redis
//! (feature `redis`).
//!
//! [`InProcessQueue`]: crate::queue::memory::InProcessQueue

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::exec::policy::BoxFuture;
use crate::exec::policy::limits::{Limits, measure};
use crate::model::approval::Decision;
use crate::model::caller::Priority;
use crate::model::envelope::JobEnvelope;
use crate::model::error::InvokeError;
use crate::model::id::Id;
use crate::model::record::{Progress, RunStatus};
use crate::model::result::{NextAction, SkillResult};
use crate::model::time::{deserialize_time, serialize_time};

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

    /// Put `job` on the queue to run at `due` (now, when `due` has passed):
    /// until then it waits apart, counted as delayed, and moves to its
    /// priority's line once across the fleet. Refused past
    /// [`Bound::DELAY`] from now.
    fn enqueue_at(
        &self,
        job: JobEnvelope,
        due: SystemTime,
    ) -> BoxFuture<'_, Result<Id, QueueError>>;

    /// How far running job `id` has come, as its worker last reported
    /// (every [`CANCEL_HEARD_WITHIN`] at most); `None` for a job that has
    /// not reported progress, or has ended.
    fn progress<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<JobProgress>, QueueError>>;

    /// Cancel job `id`: one still waiting is never run, one running is
    /// stopped at its handler's next await (its worker hears of it within
    /// [`CANCEL_HEARD_WITHIN`]); either way its outcome is `cancelled`.
    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Cancelled, QueueError>>;

    /// How long an outcome is kept after its job ended.
    fn outcomes_kept(&self) -> Duration;

    /// Record a person's `decision` on job `id`, which needs approval: a job
    /// parked `awaiting_approval` goes back in line at once, and a job no
    /// worker has taken yet runs on the decision when one does. Approved, it
    /// runs; denied, it ends `not_approved`; either way its record says who
    /// decided and when. The first decision stands.
    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
    ) -> BoxFuture<'a, Result<Decided, QueueError>>;

    /// A secret every caller of this queue shares (on a shared backend, the
    /// whole fleet's), made the first time it is asked for: what seals the
    /// ids and states the front doors hand out for jobs on this queue (MCP
    /// task ids, approval round trips), so that no one without it can make
    /// or alter one.
    fn secret(&self) -> BoxFuture<'_, Result<[u8; 32], QueueError>>;

    /// Mark `mark` used for `ttl`: whether it was not used already. One
    /// caller wins across everything that shares the queue: what makes an
    /// approval answer count once.
    fn use_once<'a>(
        &'a self,
        mark: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, QueueError>>;
}

/// The most deliveries a job may get on a shared backend before it goes to
/// the dead letters.
pub const MAX_DELIVERIES: u32 = 1000;

/// The bounds a shared backend's configuration is held to (Redis,
/// PostgreSQL): [`Bound::VISIBILITY`], [`Bound::RESULT_TTL`] (outcomes and
/// idempotent results), [`Bound::LOCK_TTL`], 1 to [`MAX_DELIVERIES`]
/// deliveries, at least one run record.
#[cfg_attr(
    not(any(feature = "redis", feature = "postgres")),
    expect(dead_code, reason = "the shared backends' configurations")
)]
pub(crate) fn check_store(
    visibility: Duration,
    result_ttl: Duration,
    idempotency: &crate::exec::policy::idempotency::IdempotencyConfig,
    max_deliveries: u32,
    records_max: usize,
) -> Result<(), QueueError> {
    Bound::VISIBILITY.check(visibility)?;
    Bound::RESULT_TTL.check(result_ttl)?;
    Bound::RESULT_TTL.check(idempotency.result_ttl)?;
    Bound::LOCK_TTL.check(idempotency.lock_ttl)?;
    if !(1..=MAX_DELIVERIES).contains(&max_deliveries) {
        return Err(QueueError::Invalid(format!(
            "`max-deliveries` of {max_deliveries} is outside 1 to {MAX_DELIVERIES}"
        )));
    }
    if records_max == 0 {
        return Err(QueueError::Invalid(
            "`records_max` of 0 would keep no run record; keep at least 1".to_owned(),
        ));
    }
    Ok(())
}

/// Marks used once, in this process, each until its deadline: the
/// in-process queue's [`Queue::use_once`], and a front door's without a
/// queue. Bounded: past [`OnceMarks::MAX`] live marks, new ones are refused.
#[derive(Default)]
pub struct OnceMarks(std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>);

impl OnceMarks {
    /// The most marks held at once.
    pub const MAX: usize = 100_000;

    /// Mark `mark` used for `ttl`; whether it was not used already (and
    /// there was room).
    pub fn use_once(&self, mark: &str, ttl: Duration) -> bool {
        let now = std::time::Instant::now();
        let mut marks = crate::sync::lock(&self.0);
        if marks.get(mark).is_some_and(|until| *until > now) {
            return false;
        }
        if marks.len() >= OnceMarks::MAX {
            marks.retain(|_, until| *until > now);
            if marks.len() >= OnceMarks::MAX {
                return false;
            }
        }
        marks.insert(mark.to_owned(), now + ttl);
        true
    }
}

/// What a decision on a job found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decided {
    /// The job waited for it: it is back in line.
    Released,
    /// No worker has parked the job yet: the decision waits for it.
    Recorded,
    /// Someone decided already; that decision stands.
    AlreadyDecided,
    /// The job has an outcome already: too late.
    AlreadyDone,
    /// No job with that id is known (never queued, or long gone).
    Unknown,
}

/// A job parked until a person decides on it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AwaitingApproval {
    /// The job.
    pub job_id: String,
    /// When it fails `approval_expired` unless someone decides.
    #[serde(
        serialize_with = "serialize_time",
        deserialize_with = "deserialize_time"
    )]
    pub deadline: SystemTime,
}

/// A worker's last heartbeat: how long it is alive for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    /// The worker.
    pub worker: String,
    /// Until when its heartbeat keeps it alive.
    #[serde(
        serialize_with = "serialize_time",
        deserialize_with = "deserialize_time"
    )]
    pub alive_until: SystemTime,
}

/// A job given up on, as the dead letters keep it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadLetter {
    /// The dead letter's own id (what discarding or retrying it names).
    pub id: String,
    /// The job's message as it was stored (a poisoned one may not be a
    /// job).
    pub message: String,
    /// Why it was given up on.
    pub reason: String,
    /// How many times it was delivered.
    pub deliveries: u64,
    /// The worker that gave up on it, when one did.
    pub worker: Option<String>,
    /// When.
    pub at: SystemTime,
}

/// How often a worker asks whether its running jobs were cancelled.
pub const CANCEL_HEARD_WITHIN: Duration = Duration::from_millis(500);

/// A running job's last progress report, and its worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobProgress {
    /// The job.
    pub job_id: String,
    /// The worker running it.
    pub worker: String,
    /// Its handler's last report.
    pub progress: Progress,
}

/// What a cancellation found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cancelled {
    /// The job waits or runs: it will end `cancelled`.
    Requested,
    /// The job has an outcome already: too late.
    AlreadyDone,
    /// No job with that id is known (never queued, or long gone).
    Unknown,
}

/// What became of a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The job's id.
    pub job_id: String,
    /// Succeeded or failed.
    pub status: RunStatus,
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
        let status = RunStatus::of(&result);
        let (result, error) = match result {
            Ok(r) => (Some(r), None),
            Err(e) => (
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
    /// Jobs set to run later ([`Queue::enqueue_at`]), not due yet.
    #[serde(default)]
    pub delayed: u64,
    /// Jobs a worker has taken and not finished.
    pub in_flight: u64,
    /// Jobs given up on, with their reasons, in the dead-letter stream.
    pub dead_letters: u64,
    /// Workers alive (their heartbeat has not run out), by name.
    pub workers: Vec<String>,
    /// Each worker alive, with the time its last heartbeat keeps it alive
    /// until (it signs again well before; past it, its jobs are taken
    /// over). Shared backends only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heartbeats: Vec<Heartbeat>,
    /// Running jobs that report progress, with their last report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub running: Vec<JobProgress>,
    /// Jobs parked until a person decides (the first
    /// [`QueueStatus::LISTED`], soonest deadline first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub awaiting_approval: Vec<AwaitingApproval>,
    /// The queue's keys that hold something other than a stream (written by
    /// hand): their jobs cannot be queued or taken until they are deleted or
    /// renamed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_streams: Vec<String>,
}

impl QueueStatus {
    /// The most jobs awaiting approval a status lists.
    pub const LISTED: usize = 100;
}

impl fmt::Display for QueueStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "queue `{}`", self.queue)?;
        for (p, n) in &self.waiting {
            writeln!(f, "  waiting ({:<8}) {n}", p.as_str())?;
        }
        writeln!(f, "  delayed            {}", self.delayed)?;
        writeln!(f, "  in flight          {}", self.in_flight)?;
        writeln!(f, "  dead letters       {}", self.dead_letters)?;
        write!(f, "  workers            {}", self.workers.len())?;
        for w in &self.workers {
            write!(f, "\n    {w}")?;
        }
        for r in &self.running {
            write!(
                f,
                "\n  running            {} on {}: {}",
                r.job_id, r.worker, r.progress
            )?;
        }
        for a in &self.awaiting_approval {
            write!(
                f,
                "\n  awaiting approval  {} until {} (`approve` or `deny` it)",
                a.job_id,
                crate::model::time::format_time(a.deadline)
            )?;
        }
        for k in &self.not_streams {
            write!(
                f,
                "\n  not a stream       {k} (delete or rename it: its jobs cannot be queued or taken)"
            )?;
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
    /// A value given to a queue or a worker is outside what it may be (a
    /// duration past its [`Bound`], an expiry too far ahead): the caller's
    /// mistake, refused where it enters, before anything is queued.
    #[error("{0}")]
    Invalid(String),
}

/// The range a duration given to a queue or a worker falls in. Each is
/// checked where it enters (the command line, a configuration, an envelope),
/// so no deadline computed from one can overflow a clock or ask Redis for an
/// expiry it refuses, and a value that makes no sense (a visibility of zero,
/// an expiry in the year 570 million) is a clear error, not a stuck job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// The value's name, as the command line spells it.
    pub name: &'static str,
    /// The least it may be.
    pub min: Duration,
    /// The most it may be.
    pub max: Duration,
}

impl Bound {
    const fn new(name: &'static str, min: Duration, max: Duration) -> Bound {
        Bound { name, min, max }
    }

    /// `d`, when it is within the bound.
    pub fn check(&self, d: Duration) -> Result<Duration, QueueError> {
        if d < self.min || d > self.max {
            return Err(QueueError::Invalid(format!(
                "`{}` of {} is outside {} to {}",
                self.name,
                show_duration(d),
                show_duration(self.min),
                show_duration(self.max)
            )));
        }
        Ok(d)
    }

    /// How long a worker's job may go unsigned before another worker takes it
    /// over: 1 s to 1 day.
    pub const VISIBILITY: Bound = Bound::new("visibility", Duration::from_secs(1), DAY);
    /// How long running jobs get to finish when a worker stops: up to 1 day.
    pub const GRACE: Bound = Bound::new("grace", Duration::ZERO, DAY);
    /// How long one wait for new jobs lasts: 1 ms to 1 minute.
    pub const POLL: Bound = Bound::new("poll", Duration::from_millis(1), Duration::from_secs(60));
    /// How long outcomes and idempotent results are kept: 1 s to 30 days.
    pub const RESULT_TTL: Bound = Bound::new("result-ttl", Duration::from_secs(1), MONTH);
    /// How long an idempotency key stays locked by the job running it: 1 s
    /// to 1 day.
    pub const LOCK_TTL: Bound = Bound::new("lock-ttl", Duration::from_secs(1), DAY);
    /// How far ahead a job may be set to expire: ten years.
    pub const EXPIRES_IN: Bound = Bound::new("expires-in", Duration::ZERO, DECADE);
    /// How long a caller waits for an outcome: up to 30 days.
    pub const WAIT: Bound = Bound::new("wait-limit", Duration::ZERO, MONTH);
    /// How far ahead a job may be set to run: up to 30 days.
    pub const DELAY: Bound = Bound::new("delay", Duration::ZERO, MONTH);
    /// How long a job that needs a person's approval waits parked for one:
    /// 1 s to 30 days.
    pub const APPROVAL: Bound = Bound::new("approval-timeout", Duration::from_secs(1), MONTH);
}

const DAY: Duration = Duration::from_secs(86_400);
const MONTH: Duration = Duration::from_secs(30 * 86_400);
const DECADE: Duration = Duration::from_secs(3650 * 86_400);

/// How long from now until `due`, within [`Bound::DELAY`] (zero when it has
/// passed).
pub fn delay_until(due: SystemTime) -> Result<Duration, QueueError> {
    Bound::DELAY.check(
        due.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// `d` as people write it: `250ms`, `30s`, `5m`, `2h`, `30d` when it is a
/// whole number of the unit, else in seconds (`1.5s`).
pub fn show_duration(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
    ] {
        if ms >= size && ms.is_multiple_of(size) && d.subsec_nanos().is_multiple_of(1_000_000) {
            return format!("{}{unit}", ms / size);
        }
    }
    if ms < 1000 && d.subsec_nanos().is_multiple_of(1_000_000) {
        return format!("{ms}ms");
    }
    format!("{}s", d.as_secs_f64())
}

/// Whether a queue may hold `job`: an envelope a worker reads back
/// ([`JobEnvelope::readable`]; the in-process queue passes envelopes without
/// writing them out, and holds them to the same rules); its params within what workers take
/// (`max_params_bytes` of JSON, nested at most as deep as the runtime's
/// limit), so that a job every worker would refuse is refused here, before
/// it is queued; its expiry, when it has one, no later than the last
/// instant RFC 3339 writes (9999-12-31T23:59:59Z), so that the worker reads
/// back the envelope the caller wrote. Every backend asks this before it
/// queues.
pub fn check_job(job: &JobEnvelope, max_params_bytes: usize) -> Result<(), QueueError> {
    const LAST: Duration = Duration::from_secs(253_402_300_799);
    if let Err(e) = job.readable() {
        return Err(QueueError::Invalid(format!(
            "no worker would read this job's envelope: {e}"
        )));
    }
    let depth = Limits::default().max_depth;
    match measure(&job.params, depth) {
        None => {
            return Err(QueueError::Invalid(format!(
                "the job's params nest deeper than {depth} levels, which no worker takes"
            )));
        }
        Some(bytes) if bytes > max_params_bytes => {
            return Err(QueueError::Invalid(format!(
                "the job's params are about {bytes} bytes of JSON, over the {max_params_bytes} bytes workers take; send a reference to the data instead"
            )));
        }
        Some(_) => {}
    }
    if let Some(at) = job.expires_at
        && at.duration_since(UNIX_EPOCH).is_ok_and(|d| d > LAST)
    {
        let years = at
            .duration_since(SystemTime::now())
            .map_or(0, |d| d.as_secs() / (365 * 86_400));
        return Err(QueueError::Invalid(format!(
            "`expiresAt` is about {years} years ahead, past 9999-12-31T23:59:59Z, the last instant an envelope can say; leave it out for a job that does not expire"
        )));
    }
    Ok(())
}
