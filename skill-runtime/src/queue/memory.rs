//! The in-process queue: jobs wait in memory, by priority, for workers that
//! are tasks of this process. No server; what a process's jobs need when they
//! do not share a fleet (and the reference the Redis backend is tested
//! against).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

use crate::agent::runner::AgentRunner;
use crate::exec::policy::BoxFuture;
use crate::exec::runtime::Runtime;
use crate::model::approval::Decision;
use crate::model::caller::Priority;
use crate::model::envelope::JobEnvelope;
use crate::model::id::Id;
use crate::model::record::Progress;
use crate::queue::api::{
    AwaitingApproval, Bound, Cancelled, Decided, JobProgress, OnceMarks, Outcome, Queue,
    QueueError, QueueStatus, check_job, delay_until,
};
use crate::queue::source::{Delivery, Parking, WorkSource};
use crate::queue::worker::{Worker, WorkerOptions, WorkerReport};
use crate::sync::lock;

/// A queue in this process, served by its own worker.
pub struct InProcessQueue {
    state: Arc<State>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    worker: Mutex<Option<JoinHandle<WorkerReport>>>,
}

/// What the queue and its worker share.
struct State {
    /// Waiting messages, by priority (highest first, as `Priority::SERVED`).
    /// The envelopes themselves: nothing is written out and parsed back.
    waiting: Mutex<[VecDeque<(String, JobEnvelope)>; 4]>,
    /// The most JSON a job's params may hold: what the runtime takes.
    max_params_bytes: usize,
    /// Wakes the worker when a job comes.
    arrived: Notify,
    /// Outcomes, kept `result_ttl`; wakes callers waiting on one.
    outcomes: Mutex<HashMap<String, (Outcome, Instant)>>,
    completed: Notify,
    result_ttl: Duration,
    in_flight: AtomicU64,
    /// The ids of jobs queued within `result_ttl`, with each job's digest: a
    /// job id names one job.
    ids: Mutex<HashMap<Id, (String, Instant)>>,
    dead: Mutex<Vec<(String, String)>>,
    next_id: AtomicU64,
    /// Ids of jobs cancelled before they ended.
    cancelled: Mutex<HashSet<String>>,
    /// Jobs set to run later, not due yet.
    delayed: AtomicU64,
    /// Running jobs' last progress reports.
    progress: Mutex<HashMap<String, Progress>>,
    /// Jobs parked for approval, by job id: their line, envelope and
    /// deadline.
    parked: Mutex<HashMap<String, (usize, JobEnvelope, SystemTime)>>,
    /// Decisions on jobs that need approval, until the job ends.
    decisions: Mutex<HashMap<String, Decision>>,
    /// The queue's secret ([`Queue::secret`]), made when it was.
    secret: [u8; 32],
    /// Marks used once ([`Queue::use_once`]).
    marks: OnceMarks,
}

/// The worker's side of the queue.
struct Source(Arc<State>);

fn slot(p: Priority) -> usize {
    Priority::SERVED.iter().position(|&q| q == p).unwrap_or(2)
}

impl InProcessQueue {
    /// A queue whose worker runs jobs on `runtime` with `options`, started on
    /// the current tokio runtime; outcomes are kept `result_ttl`.
    /// Refused when an option is outside its bound ([`WorkerOptions::check`],
    /// [`Bound::RESULT_TTL`]).
    pub fn start(
        runtime: Runtime,
        options: WorkerOptions,
        result_ttl: Duration,
    ) -> Result<InProcessQueue, QueueError> {
        InProcessQueue::serving(runtime, options, result_ttl, None)
    }

    /// [`InProcessQueue::start`], its worker serving the agents of `agents`
    /// too ([`Worker::with_agents`]).
    pub fn start_with_agents(
        runtime: Runtime,
        options: WorkerOptions,
        result_ttl: Duration,
        agents: AgentRunner,
    ) -> Result<InProcessQueue, QueueError> {
        InProcessQueue::serving(runtime, options, result_ttl, Some(agents))
    }

    fn serving(
        runtime: Runtime,
        options: WorkerOptions,
        result_ttl: Duration,
        agents: Option<AgentRunner>,
    ) -> Result<InProcessQueue, QueueError> {
        Bound::RESULT_TTL.check(result_ttl)?;
        let state = Arc::new(State {
            waiting: Mutex::new(Default::default()),
            max_params_bytes: runtime.limits().max_input_bytes,
            arrived: Notify::new(),
            outcomes: Mutex::new(HashMap::new()),
            completed: Notify::new(),
            result_ttl,
            in_flight: AtomicU64::new(0),
            ids: Mutex::new(HashMap::new()),
            dead: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(0),
            cancelled: Mutex::new(HashSet::new()),
            delayed: AtomicU64::new(0),
            progress: Mutex::new(HashMap::new()),
            parked: Mutex::new(HashMap::new()),
            decisions: Mutex::new(HashMap::new()),
            secret: rand::random(),
            marks: OnceMarks::default(),
        });
        let (tx, rx) = oneshot::channel();
        let mut worker = Worker::new(runtime, Arc::new(Source(state.clone())), options)?;
        if let Some(agents) = agents {
            worker = worker.with_agents(agents);
        }
        let handle = tokio::spawn(worker.run(async {
            let _ = rx.await;
        }));
        Ok(InProcessQueue {
            state,
            stop: Mutex::new(Some(tx)),
            worker: Mutex::new(Some(handle)),
        })
    }

    /// Stop the worker (running jobs finish within its grace period) and say
    /// what it did.
    pub async fn shutdown(&self) -> WorkerReport {
        if let Some(tx) = lock(&self.stop).take() {
            let _ = tx.send(());
        }
        let handle = lock(&self.worker).take();
        match handle {
            Some(h) => h.await.unwrap_or_default(),
            None => WorkerReport::default(),
        }
    }

    /// Messages that could not be run, with the reason.
    pub fn dead_letters(&self) -> Vec<(String, String)> {
        lock(&self.state.dead).clone()
    }
}

/// A job the queue took: its id, and the message to put in line (none when
/// the same job was queued already).
struct Accepted {
    id: Id,
    message: Option<(usize, JobEnvelope)>,
}

impl InProcessQueue {
    fn accept(&self, mut job: JobEnvelope) -> Result<Accepted, QueueError> {
        if lock(&self.stop).is_none() {
            return Err(QueueError::Closed);
        }
        check_job(&job, self.state.max_params_bytes)?;
        let digest = job.digest();
        {
            let mut ids = lock(&self.state.ids);
            let ttl = self.state.result_ttl;
            if ids.len() % 1024 == 1023 {
                ids.retain(|_, (_, at)| at.elapsed() < ttl);
            }
            match ids.get(&job.job_id) {
                Some((held, at)) if at.elapsed() < ttl => {
                    if *held == digest {
                        return Ok(Accepted {
                            id: job.job_id,
                            message: None,
                        });
                    }
                    return Err(QueueError::JobIdTaken {
                        job_id: job.job_id.to_string(),
                    });
                }
                _ => {
                    ids.insert(job.job_id.clone(), (digest, Instant::now()));
                }
            }
        }
        let mut job = job.seal();
        let _publish = crate::exec::trace::publish("in_process", "in-process", &mut job);
        Ok(Accepted {
            id: job.job_id.clone(),
            message: Some((slot(job.caller.priority), job)),
        })
    }
}

impl State {
    /// Put a message in line for the worker.
    fn push(&self, slot: usize, job: JobEnvelope) {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.waiting)[slot].push_back((n.to_string(), job));
        self.arrived.notify_one();
    }

    /// Put parked job `id` back in line, if it is parked.
    fn unpark(&self, id: &str) -> bool {
        let Some((slot, job, _)) = lock(&self.parked).remove(id) else {
            return false;
        };
        self.push(slot, job);
        true
    }
}

impl Queue for InProcessQueue {
    fn enqueue(&self, job: JobEnvelope) -> BoxFuture<'_, Result<Id, QueueError>> {
        Box::pin(async move {
            let accepted = self.accept(job)?;
            if let Some((slot, job)) = accepted.message {
                self.state.push(slot, job);
            }
            Ok(accepted.id)
        })
    }

    fn enqueue_at(
        &self,
        job: JobEnvelope,
        due: SystemTime,
    ) -> BoxFuture<'_, Result<Id, QueueError>> {
        Box::pin(async move {
            let delay = delay_until(due)?;
            let accepted = self.accept(job)?;
            if let Some((slot, job)) = accepted.message {
                let state = self.state.clone();
                state.delayed.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    state.delayed.fetch_sub(1, Ordering::Relaxed);
                    state.push(slot, job);
                });
            }
            Ok(accepted.id)
        })
    }

    fn outcome<'a>(
        &'a self,
        id: &'a str,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Option<Outcome>, QueueError>> {
        Box::pin(async move {
            // A wait past what the clock holds is a wait without end.
            let deadline = tokio::time::Instant::now().checked_add(wait);
            loop {
                // Registered before looking, so a completion in between wakes it.
                let completed = self.state.completed.notified();
                if let Some((o, at)) = lock(&self.state.outcomes).get(id)
                    && at.elapsed() < self.state.result_ttl
                {
                    return Ok(Some(o.clone()));
                }
                match deadline {
                    Some(d) => {
                        if tokio::time::timeout_at(d, completed).await.is_err() {
                            return Ok(None);
                        }
                    }
                    None => completed.await,
                }
            }
        })
    }

    fn status(&self) -> BoxFuture<'_, Result<QueueStatus, QueueError>> {
        Box::pin(async move {
            let waiting = lock(&self.state.waiting);
            Ok(QueueStatus {
                queue: "in-process".to_owned(),
                waiting: Priority::SERVED
                    .iter()
                    .map(|&p| (p, waiting[slot(p)].len() as u64))
                    .collect(),
                delayed: self.state.delayed.load(Ordering::Relaxed),
                in_flight: self.state.in_flight.load(Ordering::Relaxed),
                dead_letters: lock(&self.state.dead).len() as u64,
                workers: vec!["in-process".to_owned()],
                heartbeats: Vec::new(),
                running: {
                    let mut running: Vec<JobProgress> = lock(&self.state.progress)
                        .iter()
                        .map(|(id, p)| JobProgress {
                            job_id: id.clone(),
                            worker: "in-process".to_owned(),
                            progress: p.clone(),
                        })
                        .collect();
                    running.sort_by(|a, b| a.job_id.cmp(&b.job_id));
                    running
                },
                awaiting_approval: {
                    let mut awaiting: Vec<AwaitingApproval> = lock(&self.state.parked)
                        .iter()
                        .map(|(id, (_, _, deadline))| AwaitingApproval {
                            job_id: id.clone(),
                            deadline: *deadline,
                        })
                        .collect();
                    awaiting.sort_by_key(|a| a.deadline);
                    awaiting.truncate(QueueStatus::LISTED);
                    awaiting
                },
                not_streams: Vec::new(),
            })
        })
    }

    fn progress<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<JobProgress>, QueueError>> {
        let found = lock(&self.state.progress).get(id).map(|p| JobProgress {
            job_id: id.to_owned(),
            worker: "in-process".to_owned(),
            progress: p.clone(),
        });
        Box::pin(std::future::ready(Ok(found)))
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Cancelled, QueueError>> {
        let answer = if lock(&self.state.outcomes).contains_key(id) {
            Cancelled::AlreadyDone
        } else if lock(&self.state.ids).contains_key(id) {
            lock(&self.state.cancelled).insert(id.to_owned());
            // A parked job goes back in line, where the worker ends it.
            self.state.unpark(id);
            Cancelled::Requested
        } else {
            Cancelled::Unknown
        };
        Box::pin(std::future::ready(Ok(answer)))
    }

    fn outcomes_kept(&self) -> Duration {
        self.state.result_ttl
    }

    fn secret(&self) -> BoxFuture<'_, Result<[u8; 32], QueueError>> {
        Box::pin(std::future::ready(Ok(self.state.secret)))
    }

    fn use_once<'a>(
        &'a self,
        mark: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, QueueError>> {
        Box::pin(std::future::ready(Ok(self.state.marks.use_once(mark, ttl))))
    }

    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
    ) -> BoxFuture<'a, Result<Decided, QueueError>> {
        let answer = if lock(&self.state.outcomes).contains_key(id) {
            Decided::AlreadyDone
        } else if !lock(&self.state.ids).contains_key(id) {
            Decided::Unknown
        } else {
            let mut decisions = lock(&self.state.decisions);
            if decisions.contains_key(id) {
                Decided::AlreadyDecided
            } else {
                decisions.insert(id.to_owned(), decision);
                drop(decisions);
                if self.state.unpark(id) {
                    Decided::Released
                } else {
                    Decided::Recorded
                }
            }
        };
        Box::pin(std::future::ready(Ok(answer)))
    }
}

impl WorkSource for Source {
    fn worker(&self) -> &str {
        "in-process"
    }

    fn take(&self, n: usize, wait: Duration) -> BoxFuture<'_, Result<Vec<Delivery>, QueueError>> {
        Box::pin(async move {
            let arrived = self.0.arrived.notified();
            let mut taken = self.pop(n);
            if taken.is_empty() {
                let _ = tokio::time::timeout(wait, arrived).await;
                taken = self.pop(n);
            }
            Ok(taken)
        })
    }

    fn reclaim(&self, _n: usize) -> BoxFuture<'_, Result<Vec<Delivery>, QueueError>> {
        // A job held here is held by a task of this process, which cannot die
        // alone.
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    fn keep_alive<'a>(
        &'a self,
        _in_flight: &'a [(Priority, String)],
    ) -> BoxFuture<'a, Result<Vec<(Priority, String)>, QueueError>> {
        // One worker, in this process: nothing is ever taken over.
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    fn complete<'a>(
        &'a self,
        _d: &'a Delivery,
        outcome: &'a Outcome,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        let mut outcomes = lock(&self.0.outcomes);
        let ttl = self.0.result_ttl;
        if outcomes.len() % 1024 == 1023 {
            outcomes.retain(|_, (_, at)| at.elapsed() < ttl);
        }
        outcomes.insert(outcome.job_id.clone(), (outcome.clone(), Instant::now()));
        drop(outcomes);
        lock(&self.0.cancelled).remove(&outcome.job_id);
        lock(&self.0.decisions).remove(&outcome.job_id);
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.0.completed.notify_waiters();
        Box::pin(std::future::ready(Ok(())))
    }

    fn hand_back<'a>(&'a self, d: &'a Delivery) -> BoxFuture<'a, Result<(), QueueError>> {
        // A delivery of this queue always holds its envelope.
        if let Ok(job) = &d.job {
            lock(&self.0.waiting)[slot(d.priority)].push_front((d.id.clone(), job.clone()));
        }
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        Box::pin(std::future::ready(Ok(())))
    }

    fn dead_letter<'a>(
        &'a self,
        d: &'a Delivery,
        reason: &'a str,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        lock(&self.0.dead).push((d.message().into_owned(), reason.to_owned()));
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        Box::pin(std::future::ready(Ok(())))
    }

    fn stopping(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    fn park<'a>(
        &'a self,
        d: &'a Delivery,
        job_id: &'a str,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Parking, QueueError>> {
        let decisions = lock(&self.0.decisions);
        if let Some(decision) = decisions.get(job_id) {
            return Box::pin(std::future::ready(Ok(Parking::Decided(decision.clone()))));
        }
        // Under the decisions' lock: a decision comes before or after, never
        // between the look and the parking.
        let deadline = SystemTime::now() + wait;
        // A delivery of this queue always holds its envelope.
        if let Ok(job) = &d.job {
            lock(&self.0.parked)
                .insert(job_id.to_owned(), (slot(d.priority), job.clone(), deadline));
        }
        drop(decisions);
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        let state = self.0.clone();
        let id = job_id.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let parked = lock(&state.parked).get(&id).map(|p| p.2);
            if parked == Some(deadline) {
                lock(&state.decisions)
                    .entry(id.clone())
                    .or_insert(Decision::Expired { deadline });
                state.unpark(&id);
            }
        });
        Box::pin(std::future::ready(Ok(Parking::Parked)))
    }

    fn report_progress<'a>(
        &'a self,
        reports: &'a [(String, Progress)],
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        let mut progress = lock(&self.0.progress);
        for (id, p) in reports {
            progress.insert(id.clone(), p.clone());
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn progress_done<'a>(&'a self, job_id: &'a str) -> BoxFuture<'a, ()> {
        lock(&self.0.progress).remove(job_id);
        Box::pin(std::future::ready(()))
    }

    fn cancellations(&self) -> BoxFuture<'_, Result<HashSet<String>, QueueError>> {
        let ids = lock(&self.0.cancelled).clone();
        Box::pin(std::future::ready(Ok(ids)))
    }
}

impl Source {
    /// Up to `n` waiting messages, highest priority first.
    /// Each says whether its job was cancelled while it waited.
    fn pop(&self, n: usize) -> Vec<Delivery> {
        let mut waiting = lock(&self.0.waiting);
        let cancelled = lock(&self.0.cancelled);
        let mut out = Vec::new();
        for (i, queue) in waiting.iter_mut().enumerate() {
            while out.len() < n {
                let Some((id, job)) = queue.pop_front() else {
                    break;
                };
                let mut d = Delivery::of(id, Priority::SERVED[i], 1, job);
                d.cancelled = d.job_id().is_some_and(|j| cancelled.contains(j));
                out.push(d);
            }
        }
        drop(cancelled);
        self.0
            .in_flight
            .fetch_add(out.len() as u64, Ordering::Relaxed);
        out
    }
}
