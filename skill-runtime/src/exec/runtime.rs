//! The runtime: a registry, the resources its capabilities grant, the state of
//! its policies (stats, rate limits, idempotency) and where records go. Built
//! once, shared by every job; the path of one job is in [`job`](crate::exec::job).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::contract::direct::AppCtx;
use crate::contract::invocation::{Resources, in_handler};
use crate::exec::clock::calibrate_step_clock;
use crate::exec::policy::approval::{Approver, DenyApprovals};
use crate::exec::policy::idempotency::{IdempotencyStore, MemoryIdempotency};
use crate::exec::policy::limits::Limits;
use crate::exec::policy::rate::{RateLimitStore, RateLimiter};
use crate::exec::policy::rollback::Rollback;
use crate::exec::policy::runs::{MemoryRuns, RunStore};
use crate::exec::sink::{MemorySink, RecordSink};
use crate::exec::stats::{SkillStats, StatsCell};
use crate::model::envelope::{JobEnvelope, split_reference};
use crate::model::error::StartError;
use crate::registry::contract::Contract;
use crate::registry::index::Registry;

/// Runs the skills of a registry. Cheap to clone; clones share everything
/// (stats, rate limits, idempotency, sinks).
#[derive(Clone)]
pub struct Runtime {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) registry: Arc<Registry>,
    pub(super) resources: Arc<Resources>,
    pub(super) skills: Vec<SkillState>,
    pub(super) sink: Arc<dyn RecordSink>,
    pub(super) memory: Option<Arc<MemorySink>>,
    pub(super) approver: Arc<dyn Approver>,
    pub(super) rollbacks: HashMap<String, Arc<dyn Rollback>>,
    pub(super) idempotency: Arc<dyn IdempotencyStore>,
    /// Rate limits shared with other processes; `None`: each skill's own
    /// limiter, in this process.
    pub(super) shared_rates: Option<Arc<dyn RateLimitStore>>,
    /// Where pipeline runs keep their state.
    pub(super) runs: Arc<dyn RunStore>,
    pub(super) limits: Limits,
    pub(super) retry_base: Duration,
    /// Invocations that named no registered skill.
    pub(super) unresolved: AtomicU64,
}

/// Per-skill state: stats and the rate limiter.
pub(super) struct SkillState {
    pub(super) stats: StatsCell,
    pub(super) limiter: Option<RateLimiter>,
    /// `requires_hitl`, `destructive`, both, or none.
    pub(super) approval: Option<&'static str>,
    /// Writes, deletes, upserts, network or processes: repeated jobs are
    /// deduplicated by their default idempotency key.
    pub(super) effectful: bool,
}

/// Configures a [`Runtime`]; see [`Runtime::builder`].
pub struct RuntimeBuilder {
    registry: Arc<Registry>,
    resources: Resources,
    sink: Option<Arc<dyn RecordSink>>,
    approver: Arc<dyn Approver>,
    rollbacks: HashMap<String, Arc<dyn Rollback>>,
    limits: Limits,
    retry_base: Duration,
    idempotency_ttl: Duration,
    idempotency: Option<Arc<dyn IdempotencyStore>>,
    shared_rates: Option<Arc<dyn RateLimitStore>>,
    runs: Option<Arc<dyn RunStore>>,
    contract: Option<Contract>,
}

impl RuntimeBuilder {
    /// Values that capabilities grant (database handles, file roots, ...).
    pub fn resources(mut self, resources: Resources) -> Self {
        self.resources = resources;
        self
    }

    /// Add one resource to those already given.
    pub fn resource<R: Send + Sync + 'static>(mut self, value: R) -> Self {
        self.resources.insert(value);
        self
    }

    /// Where run records go; by default a [`MemorySink`] of
    /// [`MemorySink::DEFAULT_CAPACITY`] records ([`Runtime::memory_records`]).
    pub fn sink(mut self, sink: Arc<dyn RecordSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// Who approves skills that require a human; by default nobody
    /// ([`DenyApprovals`]).
    pub fn approver(mut self, approver: impl Approver) -> Self {
        self.approver = Arc::new(approver);
        self
    }

    /// The handler of rollback action `action`. Every rollback action a skill
    /// declares must have one, or the runtime does not start.
    pub fn rollback(mut self, action: impl Into<String>, rollback: impl Rollback) -> Self {
        self.rollbacks.insert(action.into(), Arc::new(rollback));
        self
    }

    /// Size and depth limits on inputs and records.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The first retry waits `base` (linear: `base × n`; exponential:
    /// `base × 2ⁿ⁻¹`); default 100 ms, and no wait exceeds 30 s.
    pub fn retry_base(mut self, base: Duration) -> Self {
        self.retry_base = base;
        self
    }

    /// Where idempotency keys and results live; by default in this process
    /// ([`MemoryIdempotency`], results kept [`RuntimeBuilder::idempotency_ttl`]).
    /// A store shared by a fleet makes one key run once across every process
    /// that uses it.
    pub fn idempotency_store(mut self, store: Arc<dyn IdempotencyStore>) -> Self {
        self.idempotency = Some(store);
        self
    }

    /// Rate limits counted across every process that uses `store`, instead of
    /// in this process alone.
    pub fn shared_rate_limits(mut self, store: Arc<dyn RateLimitStore>) -> Self {
        self.shared_rates = Some(store);
        self
    }

    /// Where pipeline runs keep their state between steps
    /// ([`GraphState`](crate::record::GraphState)); by default in this
    /// process ([`MemoryRuns`]). A store shared by a fleet lets a run whose
    /// worker died resume on another at the first step not completed.
    pub fn run_store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.runs = Some(store);
        self
    }

    /// How long a stored result answers jobs with the same idempotency key in
    /// the in-process store; default one hour (the seed's `resultTTL`).
    pub fn idempotency_ttl(mut self, ttl: Duration) -> Self {
        self.idempotency_ttl = ttl;
        self
    }

    /// Start only if the compiled skills are the ones of a published
    /// registry file, and serve them with its overlays applied (see
    /// [`Contract`]): a skill missing from the file, or differing from it
    /// in any exported field, refuses the start with every difference
    /// listed; so does an overlay that would widen a skill.
    pub fn contract(mut self, contract: Contract) -> Self {
        self.contract = Some(contract);
        self
    }

    /// Check the registry against its contract (when one is given), that
    /// every declared capability has its resource and every rollback action
    /// its handler, then start.
    pub fn build(mut self) -> Result<Runtime, StartError> {
        if in_handler() {
            return Err(StartError {
                inside_handler: true,
                ..StartError::default()
            });
        }
        calibrate_step_clock();
        if let Some(c) = &self.contract {
            self.registry = c.apply(&self.registry).map_err(|contract| StartError {
                contract,
                ..StartError::default()
            })?;
        }
        let mut missing = StartError::default();
        for s in self.registry.skills() {
            let m = s.entry.manifest;
            for c in m.capabilities {
                if c.needs_resource() && !self.resources.contains((c.resource)()) {
                    missing
                        .missing_resources
                        .push((s.label().to_owned(), c.id, c.resource_name));
                }
            }
            for p in &s.conditions.postconditions {
                if let Some(a) = p.rollback_action
                    && !self.rollbacks.contains_key(a)
                {
                    missing.missing_rollbacks.push((s.label().to_owned(), a));
                }
            }
        }
        if !missing.is_empty() {
            return Err(missing);
        }
        let skills = self
            .registry
            .skills()
            .iter()
            .map(|s| {
                let m = s.entry.manifest;
                SkillState {
                    stats: StatsCell::new(),
                    limiter: m.rate_limit.map(|r| RateLimiter::new(r.max_per_minute)),
                    approval: approval_reason(m),
                    effectful: m.side_effects.iter().any(|e| e.capability.is_effectful()),
                }
            })
            .collect();
        let (sink, memory) = match self.sink {
            Some(sink) => (sink, None),
            None => {
                let memory = Arc::new(MemorySink::default());
                (memory.clone() as Arc<dyn RecordSink>, Some(memory))
            }
        };
        Ok(Runtime {
            inner: Arc::new(Inner {
                registry: self.registry,
                resources: Arc::new(self.resources),
                skills,
                sink,
                memory,
                approver: self.approver,
                rollbacks: self.rollbacks,
                idempotency: self
                    .idempotency
                    .unwrap_or_else(|| Arc::new(MemoryIdempotency::new(self.idempotency_ttl))),
                shared_rates: self.shared_rates,
                runs: self.runs.unwrap_or_else(|| Arc::new(MemoryRuns::default())),
                limits: self.limits,
                retry_base: self.retry_base,
                unresolved: AtomicU64::new(0),
            }),
        })
    }
}

impl Runtime {
    /// Start configuring a runtime for `registry`.
    pub fn builder(registry: Arc<Registry>) -> RuntimeBuilder {
        RuntimeBuilder {
            registry,
            resources: Resources::new(),
            sink: None,
            approver: Arc::new(DenyApprovals),
            rollbacks: HashMap::new(),
            limits: Limits::default(),
            retry_base: Duration::from_millis(100),
            idempotency_ttl: Duration::from_secs(3600),
            idempotency: None,
            shared_rates: None,
            runs: None,
            contract: None,
        }
    }

    /// A runtime with default policies; refuses to start when a declared
    /// capability's resource is missing or a rollback action has no handler.
    pub fn new(registry: Arc<Registry>, resources: Resources) -> Result<Runtime, StartError> {
        Runtime::builder(registry).resources(resources).build()
    }

    /// The context of code that owns this runtime: it runs any skill
    /// directly with the runtime's resources, outside any job,
    /// `skill(&runtime.context(), input)` (see [`AppCtx`]). It borrows the
    /// runtime, and runs nothing while a handler runs.
    pub fn context(&self) -> AppCtx<'_> {
        AppCtx {
            resources: self.inner.resources.clone(),
            _runtime: std::marker::PhantomData,
        }
    }

    /// The skills this runtime runs.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The size and depth limits it holds inputs and records to.
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// The resources the runtime's skills reach through their capabilities:
    /// for the application and its tests. Asked for while a handler runs,
    /// it panics, naming the rule (a handler reaches the resources its
    /// capabilities grant through its context, and no others).
    pub fn resources(&self) -> &Resources {
        crate::contract::direct::refuse_inside_handler(
            "a runtime's resources (`Runtime::resources`)",
        );
        &self.inner.resources
    }

    /// The records kept by the default in-memory sink (none when a sink was set).
    pub fn memory_records(&self) -> Option<&Arc<MemorySink>> {
        self.inner.memory.as_ref()
    }

    /// Statistics of every skill that ran at least once, in registry order.
    pub fn stats(&self) -> Vec<SkillStats> {
        self.inner
            .registry
            .skills()
            .iter()
            .zip(&self.inner.skills)
            .map(|(s, st)| st.stats.snapshot(s.label()))
            .filter(|s| s.runs > 0)
            .collect()
    }

    /// Statistics of one skill (`name` or `name@version`).
    pub fn stats_of(&self, reference: &str) -> Option<SkillStats> {
        let (name, version) = split_reference(reference);
        let i = self.inner.registry.index_of(name, version).ok()?;
        let s = &self.inner.registry.skills()[i];
        Some(self.inner.skills[i].stats.snapshot(s.label()))
    }

    /// The limits on params and on what records keep.
    pub(crate) fn params_limits(&self) -> Limits {
        self.inner.limits
    }

    /// Hand a record made outside the job path (an agent run) to the sink.
    pub(crate) fn record(&self, record: crate::model::record::RunRecord) {
        self.inner.sink.record(Arc::new(record));
    }

    /// Run records the runtime's sink could not keep (see
    /// [`RecordSink::lost`]): a non-zero count means the record of some jobs
    /// is missing.
    pub fn records_lost(&self) -> u64 {
        self.inner.sink.lost()
    }

    /// Why `job` must wait for a person's decision before it runs
    /// (`requires_hitl`, `destructive`, or both), as its manifest says; `None`
    /// when it needs none, or names nothing registered (it fails on its own
    /// when it runs). A queue parks such a job until someone decides; an MCP
    /// server asks its client's user.
    pub fn needs_approval(&self, job: &JobEnvelope) -> Option<&'static str> {
        let registry = &self.inner.registry;
        let i = match (job.skill.is_empty(), job.intent.as_deref()) {
            (true, Some(intent)) => registry.index_of_intent(intent)?,
            (true, None) => return None,
            (false, _) => registry
                .index_of_kind(job.kind, &job.skill, job.version.as_deref())
                .ok()?,
        };
        self.inner.skills[i].approval
    }

    /// The state of pipeline run `run` (its job id), from the runtime's run
    /// store, when it kept one.
    pub async fn run_state(
        &self,
        run: &str,
    ) -> Result<Option<crate::model::graph::GraphState>, String> {
        self.inner.runs.load(run).await
    }

    /// Who decides what needs a person.
    pub(crate) fn approver(&self) -> &dyn crate::exec::policy::approval::Approver {
        &*self.inner.approver
    }

    /// Save a multi-step run's state in the runtime's run store.
    pub(crate) async fn save_run(
        &self,
        state: &crate::model::graph::GraphState,
    ) -> Result<(), String> {
        self.inner.runs.save(state).await
    }

    /// Invocations that named no registered skill.
    pub fn unresolved(&self) -> u64 {
        self.inner.unresolved.load(Ordering::Relaxed)
    }
}

/// Why a skill with manifest `m` needs a person's approval before it runs:
/// `requires_hitl`, `destructive`, the policy tag `requires_review`, or
/// several; `None` when it needs none.
pub(crate) fn approval_reason(m: &skill_core::manifest::Manifest) -> Option<&'static str> {
    let review = m.policy_tags.contains(&REQUIRES_REVIEW);
    match (
        m.constraints.requires_hitl,
        m.constraints.is_destructive,
        review,
    ) {
        (true, true, true) => Some("requires_hitl, destructive, requires_review"),
        (true, true, false) => Some("requires_hitl, destructive"),
        (true, false, true) => Some("requires_hitl, requires_review"),
        (true, false, false) => Some("requires_hitl"),
        (false, true, true) => Some("destructive, requires_review"),
        (false, true, false) => Some("destructive"),
        (false, false, true) => Some("requires_review"),
        (false, false, false) => None,
    }
}

/// The policy tag (Brain OS `policy_tags`) that makes every run of a skill
/// wait for a person, as `requires_hitl` does.
pub const REQUIRES_REVIEW: &str = "requires_review";
