//! A worker: takes jobs from a queue backend ([`WorkSource`]), runs each
//! through every stage of a job, stores its outcome and acknowledges
//! it; keeps what it holds from being reclaimed while it runs, takes over what
//! dead workers held, and stops gracefully.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::{AbortHandle, JoinSet};

use crate::agent::runner::AgentRunner;
use crate::contract::watch::{Cancel, Watch};
use crate::exec::lend;
use crate::exec::policy::BoxFuture;
use crate::exec::runtime::Runtime;
use crate::exec::stages::execute::{CatchUnwind, backoff};
use crate::model::caller::Priority;
use crate::model::error::InvokeError;
use crate::model::record::Progress;
use crate::model::result::SkillResult;
use crate::queue::agents::{self, agent_job};
use crate::queue::api::{Bound, CANCEL_HEARD_WITHIN, Outcome, QueueError};
use crate::queue::source::{Delivery, Parking, WorkSource};
use crate::sync::lock;
use skill_core::manifest::Backoff;

/// How a worker works.
#[derive(Clone, Copy, Debug)]
pub struct WorkerOptions {
    /// Jobs run at once.
    pub concurrency: usize,
    /// How long a job a worker holds may go without a sign of life before
    /// another worker takes it over; the worker signs every third of it, and
    /// looks for such jobs every half of it.
    pub visibility: Duration,
    /// On shutdown, how long running jobs may take to finish before they are
    /// handed back to the queue.
    pub grace: Duration,
    /// How long one wait for new jobs lasts (the longest a shutdown waits for
    /// the worker to notice it).
    pub poll: Duration,
    /// How long a job that needs a person's approval (`requires_hitl`,
    /// destructive) waits parked for a decision before it fails
    /// `approval_expired`. `None`: such a job is not parked, the runtime's
    /// approver decides at once (the CLI's `--approve`).
    pub approvals: Option<Duration>,
}

impl WorkerOptions {
    /// The most jobs a worker runs at once.
    pub const MAX_CONCURRENCY: usize = 4096;

    /// These options, when each is within its bound ([`Bound::VISIBILITY`],
    /// [`Bound::GRACE`], [`Bound::POLL`], 1 to
    /// [`WorkerOptions::MAX_CONCURRENCY`] jobs at once).
    pub fn check(self) -> Result<WorkerOptions, QueueError> {
        if !(1..=Self::MAX_CONCURRENCY).contains(&self.concurrency) {
            return Err(QueueError::Invalid(format!(
                "`concurrency` of {} is outside 1 to {}",
                self.concurrency,
                Self::MAX_CONCURRENCY
            )));
        }
        Bound::VISIBILITY.check(self.visibility)?;
        Bound::GRACE.check(self.grace)?;
        Bound::POLL.check(self.poll)?;
        if let Some(wait) = self.approvals {
            Bound::APPROVAL.check(wait)?;
        }
        Ok(self)
    }
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            concurrency: 8,
            visibility: Duration::from_secs(30),
            grace: Duration::from_secs(30),
            poll: Duration::from_secs(1),
            approvals: Some(Duration::from_secs(86_400)),
        }
    }
}

/// What a worker did, when it stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerReport {
    /// Jobs run to an outcome.
    pub completed: u64,
    /// Jobs moved to the dead-letter queue.
    pub dead_lettered: u64,
    /// Jobs handed back to the queue at shutdown.
    pub handed_back: u64,
}

/// A worker over `source`, running jobs on `runtime`.
pub struct Worker {
    runtime: Runtime,
    source: Arc<dyn WorkSource>,
    options: WorkerOptions,
    agents: Option<AgentRunner>,
}

/// A delivery in flight, and the task that works on it once started.
type Working = (Arc<Delivery>, Option<AbortHandle>);

/// What the worker's tasks share.
struct Shared {
    runtime: Runtime,
    /// The agents it serves: a job naming one runs through this runner.
    agents: Option<AgentRunner>,
    /// How long a job that needs approval waits parked for it.
    approvals: Option<Duration>,
    source: Arc<dyn WorkSource>,
    /// Deliveries being worked on, by [`Delivery::key`], with the task that
    /// works on each (once it is started).
    in_flight: Mutex<HashMap<String, Working>>,
    completed: AtomicU64,
    dead_lettered: AtomicU64,
    handed_back: AtomicU64,
    /// The cancellation handle of each job running, by job id.
    cancels: Mutex<HashMap<String, Cancel>>,
    /// The queue's cancellations, as last read.
    cancelled: Mutex<HashSet<String>>,
    /// The last progress report of each running job that made one, and
    /// whether it is still to be stored.
    progress: Mutex<HashMap<String, (Progress, bool)>>,
}

impl Worker {
    /// A worker running jobs from `source` on `runtime`; refused when an
    /// option is outside its bound ([`WorkerOptions::check`]).
    pub fn new(
        runtime: Runtime,
        source: Arc<dyn WorkSource>,
        options: WorkerOptions,
    ) -> Result<Worker, QueueError> {
        Ok(Worker {
            runtime,
            source,
            options: options.check()?,
            agents: None,
        })
    }

    /// Serve the agents of `runner` too: a job whose `skill` is an agent's
    /// id runs as that agent ([`AgentRunner::run_job`]). A job another
    /// agent handed over with `human_required` is parked for a person's
    /// decision first (when the worker parks jobs for approval), for the
    /// hand-over's `timeout_hours`; past them it runs anyway, and its record
    /// says nobody decided.
    pub fn with_agents(mut self, runner: AgentRunner) -> Worker {
        self.agents = Some(runner);
        self
    }

    /// Work until `shutdown` completes; then take no more jobs, let running
    /// ones finish within the grace period, and hand back the rest.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> WorkerReport {
        let options = self.options;
        let shared = Arc::new(Shared {
            runtime: self.runtime,
            agents: self.agents,
            approvals: options.approvals,
            source: self.source,
            in_flight: Mutex::new(HashMap::new()),
            completed: AtomicU64::new(0),
            dead_lettered: AtomicU64::new(0),
            handed_back: AtomicU64::new(0),
            cancels: Mutex::new(HashMap::new()),
            cancelled: Mutex::new(HashSet::new()),
            progress: Mutex::new(HashMap::new()),
        });
        let slots = Arc::new(Semaphore::new(options.concurrency.max(1)));
        let mut tasks = JoinSet::new();
        // Bounded: at least a second of visibility (`WorkerOptions::check`).
        let mut sign = tokio::time::interval(options.visibility / 3);
        let mut look = tokio::time::interval(options.visibility / 2);
        let mut hear = tokio::time::interval(CANCEL_HEARD_WITHIN);
        hear.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut errors = Patience::default();
        tokio::pin!(shutdown);
        loop {
            // Finished tasks are collected as they go.
            while tasks.try_join_next().is_some() {}
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                // A sign of life every third of the visibility timeout, even
                // with nothing in flight: the fleet sees this worker alive.
                _ = sign.tick() => {
                    let held: Vec<(Priority, String)> = lock(&shared.in_flight)
                        .values()
                        .map(|(d, _)| (d.priority, d.id.clone()))
                        .collect();
                    match shared.source.keep_alive(&held).await {
                        Ok(lost) => stop_lost(&shared, &lost),
                        Err(e) => tracing::warn!("cannot sign the jobs in flight: {e}"),
                    }
                }
                // Cancellations of the jobs running here, asked for
                // elsewhere; and jobs set to run later that are due.
                _ = hear.tick() => {
                    if let Err(e) = shared.source.promote_due().await {
                        tracing::warn!("cannot move due jobs: {e}");
                    }
                    let reports: Vec<(String, Progress)> = lock(&shared.progress)
                        .iter_mut()
                        .filter(|(_, (_, fresh))| *fresh)
                        .map(|(id, (p, fresh))| {
                            *fresh = false;
                            (id.clone(), p.clone())
                        })
                        .collect();
                    if !reports.is_empty()
                        && let Err(e) = shared.source.report_progress(&reports).await
                    {
                        tracing::warn!("cannot store progress: {e}");
                    }
                    match shared.source.cancellations().await {
                        Ok(ids) => {
                            for (id, c) in lock(&shared.cancels).iter() {
                                if ids.contains(id) {
                                    c.cancel();
                                }
                            }
                            *lock(&shared.cancelled) = ids;
                        }
                        Err(e) => tracing::warn!("cannot read cancellations: {e}"),
                    }
                }
                _ = look.tick() => {
                    let free = slots.available_permits();
                    if free > 0 {
                        match shared.source.reclaim(free).await {
                            Ok(taken) => start(&shared, &slots, &mut tasks, taken).await,
                            Err(e) => tracing::warn!("cannot reclaim stale jobs: {e}"),
                        }
                    }
                }
                permit = slots.clone().acquire_owned() => {
                    let Ok(permit) = permit else { break };
                    let n = slots.available_permits() + 1;
                    drop(permit);
                    match shared.source.take(n, options.poll).await {
                        Ok(taken) => {
                            errors.reset();
                            start(&shared, &slots, &mut tasks, taken).await;
                        }
                        Err(e) => {
                            tracing::warn!("cannot take jobs: {e}");
                            tokio::time::sleep(errors.next()).await;
                        }
                    }
                }
            }
        }
        // Shutdown: running jobs get the grace period, the rest go back.
        let drained = tokio::time::timeout(options.grace, async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        let mut handed_back = shared.handed_back.load(Ordering::Relaxed);
        if drained.is_err() {
            tasks.shutdown().await;
            let left: Vec<Arc<Delivery>> = lock(&shared.in_flight)
                .drain()
                .map(|(_, (d, _))| d)
                .collect();
            for d in left {
                if retry(|| shared.source.hand_back(&d), options.grace).await {
                    handed_back += 1;
                }
            }
        }
        shared.source.stopping().await;
        WorkerReport {
            completed: shared.completed.load(Ordering::Relaxed),
            dead_lettered: shared.dead_lettered.load(Ordering::Relaxed),
            handed_back,
        }
    }
}

/// Start a task for each delivery of `taken`, each holding a slot.
async fn start(
    shared: &Arc<Shared>,
    slots: &Arc<Semaphore>,
    tasks: &mut JoinSet<()>,
    taken: Vec<Delivery>,
) {
    for d in taken {
        // Never more than the free slots were asked for; a slot taken since
        // (by a reclaim) is waited for.
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let d = Arc::new(d);
        let key = d.key();
        // In flight before the task starts, so that the task's end (which
        // removes it) always comes after.
        lock(&shared.in_flight).insert(key.clone(), (d.clone(), None));
        let held = Arc::new(Held {
            slots: slots.clone(),
            permit: Mutex::new(Some(permit)),
            worker: shared.source.worker().to_owned(),
        });
        let task = tasks.spawn(lend::scope(held, run_one(shared.clone(), d)));
        if let Some(entry) = lock(&shared.in_flight).get_mut(&key) {
            entry.1 = Some(task);
        }
    }
}

/// Stop working on deliveries another worker took over (this one did not
/// answer for longer than the visibility timeout: paused, or cut off): their
/// tasks are dropped at their next await, and their outcomes are the other
/// worker's.
fn stop_lost(shared: &Shared, lost: &[(Priority, String)]) {
    for (p, id) in lost {
        let key = format!("{}:{id}", p.as_str());
        if let Some((d, task)) = lock(&shared.in_flight).remove(&key) {
            let job = d
                .job
                .as_ref()
                .map(|j| j.job_id.to_string())
                .unwrap_or_default();
            tracing::warn!(
                job_id = %job,
                "delivery {id} was taken over by another worker while this one did not answer; stopped"
            );
            if let Some(task) = task {
                task.abort();
            }
        }
    }
}

/// A job's slot, which it gives back while it waits on another job.
struct Held {
    slots: Arc<Semaphore>,
    permit: Mutex<Option<OwnedSemaphorePermit>>,
    worker: String,
}

impl lend::Lender for Held {
    fn lend(&self) {
        lock(&self.permit).take();
    }

    fn take_back(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Ok(p) = self.slots.clone().acquire_owned().await {
                *lock(&self.permit) = Some(p);
            }
        })
    }

    fn holder(&self) -> &str {
        &self.worker
    }
}

/// Removes a delivery from those in flight when its task ends, however it
/// ends (finished, aborted, or unwinding from a panic): a delivery no task
/// works on is never signed for, so another worker takes it over.
struct InFlight<'a> {
    shared: &'a Shared,
    key: String,
}

/// A running job's cancellation handle, known to the worker's loop while the
/// job runs.
struct Watched<'a> {
    shared: &'a Shared,
    job_id: String,
}

impl<'a> Watched<'a> {
    fn new(shared: &'a Shared, job_id: &str, cancel: &Cancel) -> Watched<'a> {
        lock(&shared.cancels).insert(job_id.to_owned(), cancel.clone());
        Watched {
            shared,
            job_id: job_id.to_owned(),
        }
    }
}

impl Drop for Watched<'_> {
    fn drop(&mut self) {
        lock(&self.shared.cancels).remove(&self.job_id);
        // A task stopped before its end (taken over) reports no more.
        lock(&self.shared.progress).remove(&self.job_id);
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        lock(&self.shared.in_flight).remove(&self.key);
    }
}

/// Run one delivery and store its outcome; a message that is not a job goes
/// to the dead letters.
async fn run_one(shared: Arc<Shared>, d: Arc<Delivery>) {
    let _in_flight = InFlight {
        shared: &shared,
        key: d.key(),
    };
    let source = &shared.source;
    match &d.job {
        Err(reason) => {
            let reason = format!("{reason} (delivery {} of {})", d.deliveries, d.id);
            if retry(|| source.dead_letter(&d, &reason), Duration::MAX).await {
                shared.dead_lettered.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(job) => {
            let job_id = job.job_id.to_string();
            source.starting(&job_id);
            let cancel = Cancel::new();
            let _watched = Watched::new(&shared, &job_id, &cancel);
            // Cancelled while it waited (as of the last reading, at most
            // CANCEL_HEARD_WITHIN ago): it ends `cancelled`, never run.
            if d.cancelled || lock(&shared.cancelled).contains(&job_id) {
                cancel.cancel();
            }
            let mut watch = Watch::new();
            let agent = shared
                .agents
                .as_ref()
                .and_then(|a| Some((a, agent_job(a, job)?)));
            // A job that needs a person waits for one apart, holding no slot;
            // it comes back with the decision (or its deadline passed).
            let needs_person = match agent {
                Some((_, handover)) => handover,
                None => shared.runtime.needs_approval(job).and(shared.approvals),
            };
            if let Some(wait) = needs_person
                && shared.approvals.is_some()
                && !cancel.is_cancelled()
            {
                match source.park(&d, &job_id, wait).await {
                    Ok(Parking::Decided(decision)) => watch = watch.decided(decision),
                    Ok(Parking::Parked | Parking::Lost) => return,
                    // Left unsigned: taken over once its visibility runs out.
                    Err(e) => {
                        tracing::warn!(job_id, "cannot park the job for approval: {e}");
                        return;
                    }
                }
            }
            let reports = shared.clone();
            let reporting = job_id.clone();
            let watch = watch.cancel_with(cancel.clone()).on_progress(move |p| {
                lock(&reports.progress).insert(reporting.clone(), (p.clone(), true));
            });
            let (system, queue) = source.queue();
            let process = crate::exec::trace::process(system, queue, job);
            // The job (and its span) starts when called: under `process`.
            let run: BoxFuture<'_, Result<SkillResult, InvokeError>> = match agent {
                Some((runner, _)) => {
                    let started_at = std::time::SystemTime::now();
                    let run = runner.run_job(job.clone(), watch);
                    let stopped = cancel.clone();
                    Box::pin(async move {
                        let run = run.await;
                        agents::outcome(&job.skill, run, started_at, stopped.is_cancelled())
                    })
                }
                None => {
                    Box::pin(process.in_scope(|| shared.runtime.invoke_watched(job.clone(), watch)))
                }
            };
            let result = CatchUnwind(Box::pin(tracing::Instrument::instrument(run, process)))
                .await
                .unwrap_or_else(|panic| {
                    Err(InvokeError::Internal {
                        skill: job.reference(),
                        message: format!("the runtime panicked running the job: {panic}"),
                    })
                });
            // Its last report is in its record now.
            if lock(&shared.progress).remove(&job_id).is_some() {
                source.progress_done(&job_id).await;
            }
            // A store the job needed (its idempotency key, its rate limit)
            // could not be reached: the job did not run, and goes back for
            // later rather than fail for good.
            if let Err(InvokeError::Unavailable { .. }) = &result {
                tracing::warn!(job_id, "a store is unavailable; handing the job back");
                if retry(|| source.hand_back(&d), Duration::MAX).await {
                    shared.handed_back.fetch_add(1, Ordering::Relaxed);
                }
                return;
            }
            let outcome = Outcome::of(&job_id, source.worker(), result);
            // The outcome is kept until the store takes it: a store that is
            // down loses nothing, the job is not run again.
            if retry(|| source.complete(&d, &outcome), Duration::MAX).await {
                shared.completed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Run `op` until it succeeds, with backoff between tries, for up to
/// `patience`; whether it succeeded.
async fn retry<'a, F>(mut op: F, patience: Duration) -> bool
where
    F: FnMut() -> BoxFuture<'a, Result<(), QueueError>>,
{
    let start = tokio::time::Instant::now();
    let mut waits = Patience::default();
    loop {
        match op().await {
            Ok(()) => return true,
            Err(e) => {
                if start.elapsed() >= patience {
                    tracing::error!("giving up: {e}");
                    return false;
                }
                tracing::warn!("will try again: {e}");
                tokio::time::sleep(waits.next()).await;
            }
        }
    }
}

/// Waits between tries of a store that did not answer: the runtime's one
/// backoff rule ([`backoff`]), exponential from 50 ms, at most 5 s.
#[derive(Default)]
struct Patience(u32);

impl Patience {
    fn next(&mut self) -> Duration {
        self.0 += 1;
        backoff(Backoff::Exponential, Duration::from_millis(50), self.0).min(Duration::from_secs(5))
    }

    fn reset(&mut self) {
        self.0 = 0;
    }
}
