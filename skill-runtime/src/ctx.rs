//! The context a skill runs in: resources reachable through declared capabilities,
//! the invocation's identity, and calls to other skills.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use crate::capability::{Calls, Capability, Declares};
use crate::envelope::{Artifact, Caller, Id, JobConstraints, NextAction};
use crate::record::lock;
use crate::skill::Skill;

/// Shared values that capabilities grant access to (database handles, HTTP clients,
/// file roots, caches, ...), keyed by type.
#[derive(Clone, Default)]
pub struct Resources {
    map: HashMap<TypeId, (Arc<dyn Any + Send + Sync>, &'static str)>,
}

impl Resources {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register `value`; a capability whose `Resource` is `R` grants access to it.
    pub fn with<R: Send + Sync + 'static>(mut self, value: R) -> Self {
        self.insert(value);
        self
    }

    pub fn insert<R: Send + Sync + 'static>(&mut self, value: R) {
        self.map.insert(
            TypeId::of::<R>(),
            (Arc::new(value), std::any::type_name::<R>()),
        );
    }

    pub fn contains(&self, ty: TypeId) -> bool {
        ty == TypeId::of::<()>() || self.map.contains_key(&ty)
    }

    /// The registered `R`. Skills reach resources through their capabilities
    /// ([`Ctx::resource`]); this is for code around them, such as rollback actions.
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
    pub(crate) attempt: AtomicU32,
    pub(crate) report: Mutex<Report>,
    /// Only for pipelines, set once the job has resolved to one (boxed, so
    /// other jobs carry one pointer).
    pub(crate) pipeline: OnceLock<Box<PipelineRun>>,
}

/// What a pipeline's handler needs beyond a skill's: the runtime its steps run
/// on as jobs of their own, and where their records go.
pub(crate) struct PipelineRun {
    pub(crate) runtime: crate::invoke::Runtime,
    pub(crate) steps: Mutex<Vec<crate::record::StepRun>>,
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

/// What the handler reported through its context.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) tokens: Option<u64>,
    pub(crate) items: u64,
    pub(crate) artifacts: Vec<Artifact>,
    pub(crate) next_action: Option<NextAction>,
}

impl Invocation {
    /// A new attempt starts from a clean report, except for tokens: tokens spent
    /// by a failed attempt were spent.
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

    pub(crate) fn take_report(&self) -> Report {
        std::mem::take(&mut *lock(&self.report))
    }
}

/// The context of skill `S`. It hands out a capability's resource only when `S`
/// declares that capability, and calls only the skills `S` declares as call targets.
pub struct Ctx<S> {
    pub(crate) inv: Arc<Invocation>,
    pub(crate) _skill: PhantomData<fn() -> S>,
}

impl<S> Clone for Ctx<S> {
    fn clone(&self) -> Self {
        Ctx {
            inv: self.inv.clone(),
            _skill: PhantomData,
        }
    }
}

impl<S> fmt::Debug for Ctx<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("skill", &std::any::type_name::<S>())
            .field("trace_id", &self.inv.trace_id)
            .field("job_id", &self.inv.job_id)
            .finish_non_exhaustive()
    }
}

impl<S> Ctx<S> {
    /// Only the runtime builds contexts, after checking that every resource the
    /// skill's capabilities grant is registered.
    pub(crate) fn new(inv: Arc<Invocation>) -> Self {
        Ctx {
            inv,
            _skill: PhantomData,
        }
    }

    pub(crate) fn invocation(&self) -> &Invocation {
        &self.inv
    }

    /// The resource granted by capability `C`, which `S` must declare.
    pub fn resource<C: Capability>(&self) -> &C::Resource
    where
        S: Declares<C>,
    {
        match self.inv.resources.get::<C::Resource>() {
            Some(r) => r,
            // The runtime refuses to start when a declared capability's resource is
            // missing (`Runtime::new`), so this is a bug in the runtime, not input.
            None => unreachable!(
                "resource `{}` of capability `{}` checked at runtime start",
                std::any::type_name::<C::Resource>(),
                C::INFO.id
            ),
        }
    }

    /// Call skill `T`, which `S` must declare in `calls(...)`. The callee runs
    /// within this invocation: same job, same limits, its reports added to this
    /// job's; the caller's policies (timeout, retries) cover it. `#[skill]` checks
    /// there that `S` declares every capability of `T` ([`CallableBy`]), so the
    /// rule is reported once, at the declaration.
    ///
    /// [`CallableBy`]: crate::CallableBy
    pub async fn call<T: Skill>(&self, input: T::Input) -> Result<T::Output, T::Error>
    where
        S: Calls<T>,
    {
        T::run(Ctx::new(self.inv.clone()), input).await
    }

    /// Who started the job.
    pub fn caller(&self) -> &Caller {
        &self.inv.caller
    }

    /// The job that started this one, if any.
    pub fn parent_job_id(&self) -> Option<&str> {
        self.inv.parent_job_id.as_deref()
    }

    /// The caller's limits for this job.
    pub fn constraints(&self) -> &JobConstraints {
        &self.inv.constraints
    }

    /// True when the caller asked for a dry run: read, compute, report, but
    /// change nothing.
    pub fn dry_run(&self) -> bool {
        self.inv.constraints.dry_run
    }

    /// 1 for the first attempt, 2 for the first retry, ...
    pub fn attempt(&self) -> u32 {
        self.inv.attempt.load(Ordering::Relaxed)
    }

    /// Count `n` more items processed (the result's `metrics.items_processed`;
    /// checked against the job's `max_items`).
    pub fn report_items(&self, n: u64) {
        let mut r = lock(&self.inv.report);
        r.items = r.items.saturating_add(n);
    }

    /// Count `n` more tokens used (the result's `metrics.tokens_used`; checked
    /// against the job's `max_tokens`).
    pub fn report_tokens(&self, n: u64) {
        let mut r = lock(&self.inv.report);
        r.tokens = Some(r.tokens.unwrap_or(0).saturating_add(n));
    }

    /// Attach an artifact to the result.
    pub fn add_artifact(&self, artifact: Artifact) {
        lock(&self.inv.report).artifacts.push(artifact);
    }

    /// What the caller should do after a success (default: `complete`).
    pub fn set_next_action(&self, next: NextAction) {
        lock(&self.inv.report).next_action = Some(next);
    }

    pub fn trace_id(&self) -> &str {
        &self.inv.trace_id
    }

    pub fn job_id(&self) -> &str {
        &self.inv.job_id
    }

    /// When the runtime started this invocation; handlers never compute it.
    pub fn started_at(&self) -> SystemTime {
        self.inv.started_at
    }
}
