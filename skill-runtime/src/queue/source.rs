//! The worker's side of a queue backend ([`WorkSource`]): what a worker
//! takes ([`Delivery`]) and every step it asks of the backend.

use std::borrow::Cow;
use std::collections::HashSet;
use std::time::Duration;

use crate::exec::policy::BoxFuture;
use crate::model::approval::Decision;
use crate::model::caller::Priority;
use crate::model::envelope::JobEnvelope;
use crate::model::record::Progress;
use crate::queue::api::{Outcome, QueueError};

/// One job a worker took from a queue.
#[derive(Debug)]
pub struct Delivery {
    /// The backend's id of this delivery (a stream entry id).
    pub id: String,
    /// The priority it was queued under.
    pub priority: Priority,
    /// How many times it has been delivered, this time included.
    pub deliveries: u64,
    /// The message as a backend that stores text read it: what a hand-back
    /// re-queues and a dead letter keeps. `None` from a backend that keeps
    /// the envelopes themselves (the in-process queue, which passes each job
    /// along without writing and parsing it).
    pub raw: Option<String>,
    /// The job, or why the message is not one.
    pub job: Result<JobEnvelope, String>,
    /// Whether the job was among the queue's cancellations when it was
    /// taken (the take itself answers it): a worker ends it `cancelled`
    /// without running it, whatever it has heard of cancellations so far.
    pub cancelled: bool,
}

impl Delivery {
    /// Unique among the deliveries of a queue (an id is unique in its
    /// priority's stream).
    pub fn key(&self) -> String {
        format!("{}:{}", self.priority.as_str(), self.id)
    }

    /// A delivery of message `raw`, read as a job envelope.
    pub fn read(id: String, priority: Priority, deliveries: u64, raw: String) -> Delivery {
        let job = serde_json::from_str::<JobEnvelope>(&raw)
            .map(JobEnvelope::delivered)
            .map_err(|e| format!("not a job envelope: {e}"));
        Delivery {
            id,
            priority,
            deliveries,
            raw: Some(raw),
            job,
            cancelled: false,
        }
    }

    /// A delivery of `job`, queued as it is by a backend of this process.
    pub fn of(id: String, priority: Priority, deliveries: u64, job: JobEnvelope) -> Delivery {
        Delivery {
            id,
            priority,
            deliveries,
            raw: None,
            job: Ok(job.delivered()),
            cancelled: false,
        }
    }

    /// The job's id, when the message is a job.
    pub fn job_id(&self) -> Option<&str> {
        self.job.as_ref().ok().map(|j| j.job_id.as_str())
    }

    /// The message as queued, as text: what was read, or the envelope written
    /// out.
    pub fn message(&self) -> Cow<'_, str> {
        match (&self.raw, &self.job) {
            (Some(raw), _) => Cow::Borrowed(raw),
            (None, Ok(job)) => Cow::Owned(serde_json::to_string(job).unwrap_or_default()),
            (None, Err(reason)) => Cow::Borrowed(reason),
        }
    }
}

/// Where a worker takes its jobs from and puts their outcomes: the worker's
/// side of a queue backend.
pub trait WorkSource: Send + Sync + 'static {
    /// Who this worker is, as the backend and the outcomes name it.
    fn worker(&self) -> &str;

    /// The queue's name and its messaging system, as traces name them
    /// (`process {queue}` spans).
    fn queue(&self) -> (&'static str, &str) {
        ("in_process", "in-process")
    }

    /// Up to `n` deliveries, highest priority first, waiting up to `wait` when
    /// there are none.
    fn take(&self, n: usize, wait: Duration) -> BoxFuture<'_, Result<Vec<Delivery>, QueueError>>;

    /// Up to `n` deliveries whose worker stopped answering, taken over; those
    /// delivered too many times go to the dead letters instead.
    fn reclaim(&self, n: usize) -> BoxFuture<'_, Result<Vec<Delivery>, QueueError>>;

    /// The worker is alive, and these deliveries are still being worked on:
    /// not to be reclaimed. Called every third of the visibility timeout,
    /// with nothing in flight too (a backend may note a heartbeat). Returns
    /// the deliveries of `in_flight` that are no longer this worker's
    /// (another worker took them over while this one did not answer): the
    /// worker stops working on them.
    fn keep_alive<'a>(
        &'a self,
        in_flight: &'a [(Priority, String)],
    ) -> BoxFuture<'a, Result<Vec<(Priority, String)>, QueueError>>;

    /// Job `job_id` is about to run (a backend may keep its run record, to
    /// store it with the outcome).
    fn starting(&self, _job_id: &str) {}

    /// Store the outcome of `d` and acknowledge it: it is not delivered again.
    fn complete<'a>(
        &'a self,
        d: &'a Delivery,
        outcome: &'a Outcome,
    ) -> BoxFuture<'a, Result<(), QueueError>>;

    /// Give `d` back unrun, for another worker.
    fn hand_back<'a>(&'a self, d: &'a Delivery) -> BoxFuture<'a, Result<(), QueueError>>;

    /// `d` cannot be run: to the dead letters, with `reason`.
    fn dead_letter<'a>(
        &'a self,
        d: &'a Delivery,
        reason: &'a str,
    ) -> BoxFuture<'a, Result<(), QueueError>>;

    /// The worker stops: write what is buffered, say it is gone.
    fn stopping(&self) -> BoxFuture<'_, ()>;

    /// Park `d`, job `job_id`, which needs a person's approval and has no
    /// decision yet, for up to `wait`: it leaves the worker (it holds no
    /// slot and survives worker restarts where the backend is shared) until
    /// [`Queue::decide`](crate::queue::api::Queue::decide), a cancellation
    /// or its deadline puts it back in line. A decision recorded already is
    /// returned instead, atomically, so none is missed.
    fn park<'a>(
        &'a self,
        d: &'a Delivery,
        job_id: &'a str,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Parking, QueueError>>;

    /// Move the jobs set to run later that are due to their lines, and the
    /// parked jobs whose approval deadline passed (decided expired); how
    /// many moved. Every worker asks, each job moves once.
    fn promote_due(&self) -> BoxFuture<'_, Result<u64, QueueError>> {
        Box::pin(std::future::ready(Ok(0)))
    }

    /// Store the last progress of running jobs, for
    /// [`Queue::progress`](crate::queue::api::Queue::progress).
    fn report_progress<'a>(
        &'a self,
        reports: &'a [(String, Progress)],
    ) -> BoxFuture<'a, Result<(), QueueError>>;

    /// Job `job_id`, which reported progress, has ended: forget its report.
    fn progress_done<'a>(&'a self, job_id: &'a str) -> BoxFuture<'a, ()>;

    /// The jobs cancelled ([`Queue::cancel`](crate::queue::api::Queue::cancel))
    /// that may not have ended yet. A worker reads them every
    /// [`CANCEL_HEARD_WITHIN`](crate::queue::api::CANCEL_HEARD_WITHIN): the jobs it runs that are among them are
    /// stopped, and a job it takes that is among them never starts.
    fn cancellations(&self) -> BoxFuture<'_, Result<HashSet<String>, QueueError>>;
}

/// What became of a delivery a worker asked to park for approval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parking {
    /// Parked: the worker lets it go; a decision, a cancellation or its
    /// deadline puts it back in line.
    Parked,
    /// Someone decided already: the worker runs it on this decision.
    Decided(Decision),
    /// Another worker took the delivery over: this one lets it go.
    Lost,
}
