//! What one invocation shares with its handler: the resources capabilities
//! grant, the job's identity and limits, what the handler reports back, and,
//! for a pipeline, what runs its steps.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Waker;
use std::time::SystemTime;

use crate::contract::watch::{Halt, ProgressState, Watch};
use crate::model::caller::Caller;
use crate::model::envelope::{JobConstraints, JobEnvelope, RagContext, Scope};
use crate::model::error::{InvokeError, OverBudget};
use crate::model::graph::GraphState;
use crate::model::id::Id;
use crate::model::record::Progress;
use crate::model::record::StepRun;
use crate::model::result::{Artifact, NextAction, SkillResult};
use crate::sync::BoxFuture;
use crate::sync::lock;

/// Shared values that capabilities grant access to (database handles, HTTP clients,
/// file roots, caches, ...), keyed by type.
#[derive(Clone, Default)]
pub struct Resources {
    map: HashMap<TypeId, (Arc<dyn Any + Send + Sync>, &'static str)>,
}

impl Resources {
    /// No resources.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register `value`; a capability whose `Resource` is `R` grants access to it.
    pub fn with<R: Send + Sync + 'static>(mut self, value: R) -> Self {
        self.insert(value);
        self
    }

    /// Add `value`, replacing one of the same type.
    pub fn insert<R: Send + Sync + 'static>(&mut self, value: R) {
        self.map.insert(
            TypeId::of::<R>(),
            (Arc::new(value), std::any::type_name::<R>()),
        );
    }

    /// Whether a resource of type `ty` is there.
    pub fn contains(&self, ty: TypeId) -> bool {
        ty == TypeId::of::<()>() || self.map.contains_key(&ty)
    }

    /// The registered `R`. Skills reach resources through their capabilities
    /// ([`Ctx::resource`](crate::contract::skill::Ctx::resource)); this is for code around them, such as rollback actions.
    pub fn get<R: 'static>(&self) -> Option<&R> {
        if let Some(unit) = (&() as &dyn Any).downcast_ref::<R>() {
            return Some(unit);
        }
        self.map.get(&TypeId::of::<R>())?.0.downcast_ref()
    }
}

impl fmt::Debug for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<_> = self.map.values().map(|(_, n)| *n).collect();
        names.sort_unstable();
        f.debug_set().entries(names).finish()
    }
}

/// Per-invocation data shared by a skill and the skills it calls.
pub(crate) struct Invocation {
    pub(crate) resources: Arc<Resources>,
    pub(crate) caller: Caller,
    pub(crate) trace_id: Id,
    pub(crate) job_id: Id,
    pub(crate) parent_job_id: Option<Id>,
    pub(crate) started_at: SystemTime,
    pub(crate) constraints: JobConstraints,
    /// What the job is for and what it processes (the seed's `intent` and
    /// `scope`), when the caller said.
    pub(crate) intent: Option<String>,
    pub(crate) scope: Option<Box<Scope>>,
    /// What retrieval found for the job, when the caller sent it.
    pub(crate) rag_context: Option<Box<RagContext>>,
    pub(crate) attempt: AtomicU32,
    /// Whether the handler asked `Ctx::dry_run` (a dry run of a skill with
    /// side effects that never asked is noted in its result).
    pub(crate) dry_run_read: AtomicBool,
    pub(crate) report: Mutex<Report>,
    /// Set when the job must end before its handler does (a budget crossed):
    /// the runtime drops the handler at its next await.
    pub(crate) stop: Stop,
    /// Only for pipelines, set once the job has resolved to one (boxed, so
    /// other jobs carry one pointer).
    pub(crate) pipeline: OnceLock<Box<PipelineRun>>,
    /// The job's hold on its idempotency key, once it has one.
    pub(crate) fence: OnceLock<Fence>,
    /// Who hears the job's progress and may cancel it.
    pub(crate) watch: Watch,
    /// The handler's last progress report.
    pub(crate) progress: Mutex<ProgressState>,
}

/// A job's hold on its idempotency key ([`Ctx::fence`]): the key, and a
/// token that grows each time a job takes the key (across the fleet, when
/// the store is Redis). A worker paused past its lock's lifetime, then
/// resumed, holds a lower token than the job that took the key over.
///
/// A resource that must apply an effect at most once per key records the
/// key with the effect and applies no second one; a resource that must not
/// let a stale holder overwrite a newer one refuses a token lower than the
/// highest it has seen for the key. The runtime does its part: a holder that
/// lost its key stores no result, and a worker that lost its delivery
/// records no outcome.
///
/// [`Ctx::fence`]: crate::contract::skill::Ctx::fence
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fence {
    pub(crate) key: String,
    pub(crate) token: u64,
}

impl Fence {
    /// A hold on `key` with `token`.
    pub fn new(key: impl Into<String>, token: u64) -> Fence {
        Fence {
            key: key.into(),
            token,
        }
    }

    /// The idempotency key (as the store names it: a dry run's is apart).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The token: higher for each later holder of the key.
    pub fn token(&self) -> u64 {
        self.token
    }
}

/// What a pipeline's handler needs beyond a skill's: what runs its steps as
/// jobs of their own (the runtime that runs the pipeline), and where their
/// records go.
pub(crate) struct PipelineRun {
    pub(crate) jobs: Box<dyn JobRunner>,
    pub(crate) steps: Mutex<Vec<StepRun>>,
    /// The job's envelope, as its run's state keeps it.
    pub(crate) envelope: JobEnvelope,
}

/// Runs a job through every stage: the execution layer's runtime, seen
/// from the handlers below it (a pipeline's steps are jobs of their own).
pub(crate) trait JobRunner: Send + Sync {
    fn run_job(&self, job: JobEnvelope) -> BoxFuture<'_, Result<SkillResult, InvokeError>>;

    /// The saved state of multi-step run `run` (its job id), if any.
    fn load_run<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<GraphState>, String>>;

    /// Save a multi-step run's state, replacing the last.
    fn save_run<'a>(&'a self, state: &'a GraphState) -> BoxFuture<'a, Result<(), String>>;

    /// The `name@version` a job for `name` (at `version`, or the latest)
    /// runs, when the registry has it: how step records name what ran, even
    /// when it failed.
    fn label_of(
        &self,
        kind: skill_core::manifest::TargetKind,
        name: &str,
        version: Option<&str>,
    ) -> Option<Arc<str>>;
}

impl fmt::Debug for Invocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Invocation")
            .field("job_id", &self.job_id)
            .field("trace_id", &self.trace_id)
            .field("parent_job_id", &self.parent_job_id)
            .field("caller", &self.caller)
            .finish_non_exhaustive()
    }
}

std::thread_local! {
    /// How many handlers this thread is polling now (nested: an agent's
    /// body awaiting a skill job polls both).
    static IN_HANDLER: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Marks the current thread as polling a handler while it lives: a runtime
/// is not built there ([`in_handler`]).
pub(crate) struct InHandler(());

impl InHandler {
    pub(crate) fn enter() -> InHandler {
        IN_HANDLER.with(|c| c.set(c.get() + 1));
        InHandler(())
    }
}

impl Drop for InHandler {
    fn drop(&mut self) {
        IN_HANDLER.with(|c| c.set(c.get().saturating_sub(1)));
    }
}

/// A handler's future, each poll marked with [`InHandler`].
pub(crate) struct Handler<F>(pub(crate) Pin<Box<F>>);

impl<F: Future> Future for Handler<F> {
    type Output = F::Output;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let _inside = InHandler::enter();
        self.0.as_mut().poll(cx)
    }
}

/// Whether this thread is polling a skill's or an agent's handler: code
/// there runs other skills through its context, never through a runtime of
/// its own, which would run any skill with no `calls(...)` checked.
pub(crate) fn in_handler() -> bool {
    IN_HANDLER.with(|c| c.get() > 0)
}

/// Why a job's handler was stopped before it returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// A report crossed one of the job's budgets.
    Budget,
    /// The job's watcher cancelled it.
    Cancelled,
}

/// A request that the job's handler stop, and the waker of the task that
/// polls it, so that a request from another task is seen at once.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    /// 0 while the handler may go on; a [`StopReason`] plus one after.
    reason: AtomicU8,
    waker: Mutex<Option<Waker>>,
}

impl Stop {
    /// Ask the handler to stop; the first reason given is kept.
    pub(crate) fn request(&self, why: StopReason) {
        let code = why as u8 + 1;
        if self
            .reason
            .compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
            && let Some(w) = lock(&self.waker).take()
        {
            w.wake();
        }
    }

    /// Why the handler must stop, once asked.
    #[inline]
    pub(crate) fn reason(&self) -> Option<StopReason> {
        match self.reason.load(Ordering::Acquire) {
            0 => None,
            1 => Some(StopReason::Budget),
            _ => Some(StopReason::Cancelled),
        }
    }

    /// Wake `waker` when a stop is asked for.
    pub(crate) fn register(&self, waker: &Waker) {
        let mut w = lock(&self.waker);
        if !w.as_ref().is_some_and(|old| old.will_wake(waker)) {
            *w = Some(waker.clone());
        }
    }
}

/// What the handler reported through its context.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) tokens: Option<u64>,
    /// Documents retrieved, like tokens kept across attempts.
    pub(crate) docs: Option<u64>,
    /// Dollars, like tokens kept across attempts: what was spent was spent.
    pub(crate) cost: Option<f64>,
    pub(crate) items: u64,
    pub(crate) artifacts: Vec<Artifact>,
    pub(crate) next_action: Option<NextAction>,
}

impl Invocation {
    /// The invocation of a direct call from code that owns a runtime: fresh
    /// ids, the operator as caller, the default limits, `resources`.
    pub(crate) fn fresh(resources: Arc<Resources>) -> Invocation {
        Invocation {
            resources,
            caller: Caller::default(),
            trace_id: Id::new_v4(),
            job_id: Id::new_v4(),
            parent_job_id: None,
            started_at: SystemTime::now(),
            constraints: JobConstraints::default(),
            intent: None,
            scope: None,
            rag_context: None,
            attempt: AtomicU32::new(1),
            dry_run_read: AtomicBool::new(false),
            report: Mutex::default(),
            stop: Stop::default(),
            pipeline: OnceLock::new(),
            fence: OnceLock::new(),
            watch: Watch::default(),
            progress: Mutex::default(),
        }
    }

    /// A new attempt starts from a clean report, except for tokens and cost:
    /// what a failed attempt spent was spent.
    #[inline]
    pub(crate) fn begin_attempt(&self, attempt: u32) {
        self.attempt.store(attempt, Ordering::Relaxed);
        let mut r = lock(&self.report);
        r.items = 0;
        r.artifacts.clear();
        r.next_action = None;
        drop(r);
        if let Some(p) = self.pipeline.get() {
            lock(&p.steps).clear();
        }
    }

    /// `used` of `budget` against its `limit`: past it, the job is asked to
    /// stop and the report that crossed it says so.
    pub(crate) fn within(
        &self,
        budget: &'static str,
        used: u64,
        limit: u64,
    ) -> Result<(), OverBudget> {
        if used <= limit {
            return Ok(());
        }
        self.stop.request(StopReason::Budget);
        Err(OverBudget {
            budget,
            used,
            limit,
        })
    }

    /// The first budget the report so far is over, if any: tokens, then
    /// documents, then cost in whole cents (what was spent rounded up, the
    /// budget rounded down).
    #[inline]
    pub(crate) fn over_budget(&self, r: &Report) -> Option<OverBudget> {
        let c = &self.constraints;
        [
            ("tokens", r.tokens.unwrap_or(0), Some(c.max_tokens)),
            ("documents", r.docs.unwrap_or(0), Some(c.max_docs)),
            (
                "cents",
                cents_up(r.cost.unwrap_or(0.0)),
                c.budget.map(cents_down),
            ),
        ]
        .into_iter()
        .find_map(|(budget, used, limit)| {
            limit.filter(|&l| used > l).map(|limit| OverBudget {
                budget,
                used,
                limit,
            })
        })
    }

    #[inline]
    pub(crate) fn take_report(&self) -> Report {
        std::mem::take(&mut *lock(&self.report))
    }
}

impl Halt for Invocation {
    fn halt(&self) {
        self.stop.request(StopReason::Cancelled);
    }
}

impl Invocation {
    /// Keep `p` as the job's progress, and pass it to the watcher unless the
    /// coalescing holds it back ([`ProgressState::offer`]).
    pub(crate) fn progress(&self, p: Progress) {
        let Some(hook) = &self.watch.progress else {
            lock(&self.progress).last = Some(p);
            return;
        };
        let pass = lock(&self.progress).offer(&p, std::time::Instant::now());
        if pass {
            hook(&p);
        }
    }

    /// The last report, passed on now if the coalescing held it back (the
    /// job has ended: its watcher hears where it stopped).
    #[inline]
    pub(crate) fn flush_progress(&self) -> Option<Progress> {
        let (last, held) = lock(&self.progress).take_last();
        if held && let (Some(hook), Some(p)) = (&self.watch.progress, &last) {
            hook(p);
        }
        last
    }
}

/// Dollars spent, in whole cents rounded up.
pub(crate) fn cents_up(dollars: f64) -> u64 {
    (dollars * 100.0).ceil() as u64
}

/// A budget in dollars, in whole cents rounded down.
pub(crate) fn cents_down(dollars: f64) -> u64 {
    (dollars * 100.0).floor() as u64
}

#[cfg(test)]
mod watch_tests {
    use super::*;
    use crate::contract::watch::Cancel;

    #[test]
    fn a_tight_loop_reaches_the_watcher_coalesced_and_its_last_report_always() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let mut inv = Invocation::fresh(Arc::new(Resources::new()));
        inv.watch = Watch::new().on_progress(move |p| lock(&sink).push(p.done));
        for done in 1..=10_000 {
            inv.progress(Progress {
                done,
                total: None,
                message: None,
            });
        }
        assert_eq!(inv.flush_progress().map(|p| p.done), Some(10_000));
        let seen = lock(&seen);
        assert!(seen.len() < 100, "{} reports passed", seen.len());
        assert_eq!(seen.first(), Some(&1));
        assert_eq!(seen.last(), Some(&10_000));
    }

    #[test]
    fn a_cancel_stops_jobs_attached_before_and_after() {
        let cancel = Cancel::new();
        let before = Arc::new(Invocation::fresh(Arc::new(Resources::new())));
        cancel.attach(before.clone());
        assert_eq!(before.stop.reason(), None);
        cancel.cancel();
        assert_eq!(before.stop.reason(), Some(StopReason::Cancelled));
        let after = Arc::new(Invocation::fresh(Arc::new(Resources::new())));
        cancel.attach(after.clone());
        assert_eq!(after.stop.reason(), Some(StopReason::Cancelled));
    }
}
