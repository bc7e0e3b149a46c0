//! The runtime: runs skills by name from JSON, or by type from Rust, through every
//! policy their manifests declare, and leaves a record of each invocation.
//!
//! The order is DESIGN §7's: resolve, authorize, rate limit, validate input,
//! preconditions, idempotency, approval, execute (timeout, retries, panics),
//! budget, validate output, postconditions (rollback), validation rules. Each step
//! is in the run record, with its outcome and duration.

use std::any::Any;
use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

// The step clock (see `State::t0`); std's and tokio's `Instant` are written in
// full where they are used.
use quanta::Instant;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tracing::Instrument;

use crate::ctx::{Invocation, PipelineRun, Resources};
use crate::entry::{AnyBox, CheckFailed, HandlerFailure};
use crate::envelope::{JobEnvelope, Metrics, NextAction, RuleNote, SkillResult};
use crate::error::{InvokeError, StartError};
use crate::manifest::{Backoff, Kind, Status, TargetKind};
use crate::policy::{
    Approval, ApprovalRequest, Approver, Claim, DenyApprovals, IdempotencyStore, RateLimiter,
    Rollback, RollbackRequest, authorize, idempotency_key, measure,
};
use crate::record::{
    AttemptOutcome, AttemptRecord, Attempts, ErrorRecord, MemorySink, RecordSink, RunRecord,
    RunStatus, SkillStats, StatsCell, Step, StepOutcome, StepRun, Steps, lock,
};
use crate::registry::{RegisteredSkill, Registry, split_reference};
use crate::schema::SchemaViolation;
use crate::skill::Skill;

/// Runs the skills of a registry. Cheap to clone; clones share everything
/// (stats, rate limits, idempotency, sinks).
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Arc<Registry>,
    resources: Arc<Resources>,
    skills: Vec<SkillState>,
    sink: Arc<dyn RecordSink>,
    memory: Option<Arc<MemorySink>>,
    approver: Arc<dyn Approver>,
    rollbacks: HashMap<String, Arc<dyn Rollback>>,
    idempotency: Arc<IdempotencyStore>,
    limits: Limits,
    retry_base: Duration,
    /// Invocations that named no registered skill.
    unresolved: AtomicU64,
}

/// Per-skill state: stats and the rate limiter.
struct SkillState {
    stats: StatsCell,
    limiter: Option<RateLimiter>,
    /// `requires_hitl`, `destructive`, both, or none.
    approval: Option<&'static str>,
    /// Writes, deletes, upserts, network or processes: repeated jobs are
    /// deduplicated by their default idempotency key.
    effectful: bool,
}

/// Limits on JSON params, which come from outside the process: params beyond
/// them are refused before they are parsed further. A typed call's input is
/// not measured; the calling code built it.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Size of the JSON text of the params.
    pub max_input_bytes: usize,
    /// Nesting depth of the params (a flat object is 1).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: 1 << 20,
            max_depth: 64,
        }
    }
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
    /// ([`DenyApprovals`](crate::DenyApprovals)).
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

    /// How long a stored result answers jobs with the same idempotency key;
    /// default one hour (the seed's `resultTTL`).
    pub fn idempotency_ttl(mut self, ttl: Duration) -> Self {
        self.idempotency_ttl = ttl;
        self
    }

    /// Check that every declared capability has its resource and every rollback
    /// action its handler, then start.
    pub fn build(self) -> Result<Runtime, StartError> {
        calibrate_step_clock();
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
                    approval: match (m.constraints.requires_hitl, m.constraints.is_destructive) {
                        (true, true) => Some("requires_hitl, destructive"),
                        (true, false) => Some("requires_hitl"),
                        (false, true) => Some("destructive"),
                        (false, false) => None,
                    },
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
                idempotency: Arc::new(IdempotencyStore::new(self.idempotency_ttl)),
                limits: self.limits,
                retry_base: self.retry_base,
                unresolved: AtomicU64::new(0),
            }),
        })
    }
}

/// What the pipeline produced for a job that succeeded.
struct Done {
    result: SkillResult,
    /// The typed output, for typed calls (absent when replayed).
    typed: Option<AnyBox>,
}

/// Everything known about a job while it runs, turned into its record at the end.
struct State {
    /// What the job asks to run, and on what.
    job: Target,
    /// The job's ids, caller and constraints, taken out of the envelope when
    /// the job starts and shared with the handler's context from then on.
    inv: Arc<Invocation>,
    /// Carries the job and trace ids to the handler's events and the outcome's.
    span: tracing::Span,
    started_at: SystemTime,
    /// Readings of the step clock (`quanta`: the time-stamp counter where it
    /// is invariant, scaled to the OS clock; the OS clock elsewhere). Timeouts
    /// that tokio waits on read tokio's clock.
    t0: Instant,
    last: Instant,
    skill: Option<usize>,
    typed_input: Option<AnyBox>,
    /// Why a typed input could not be serialized (its validation step fails).
    unserializable: Option<String>,
    /// The size of the params' text, when it came as text.
    text_len: Option<usize>,
    steps: Steps,
    attempts: Attempts,
    key: Option<String>,
    replayed: bool,
    /// When the successful attempt ended, read once for the attempt and the step.
    executed: Option<Instant>,
    /// A pipeline's steps as they ran.
    pipeline_steps: Vec<StepRun>,
}

/// The envelope's fields that stay with the job's state; the rest (ids, caller,
/// constraints) go to its invocation. Kept apart so that the state does not
/// carry an emptied copy of them (about 220 bytes, copied into every job's box).
struct Target {
    skill: Cow<'static, str>,
    kind: TargetKind,
    version: Option<Cow<'static, str>>,
    params: Value,
    idempotency_key: Option<String>,
}

impl Target {
    /// `name` or `name@version`, as [`JobEnvelope::reference`] writes it.
    fn reference(&self) -> String {
        crate::envelope::reference(&self.skill, self.version.as_deref())
    }
}

impl State {
    fn step(&mut self, step: Step, outcome: StepOutcome, detail: Option<String>) {
        // Steps that only consult the manifest take well under a microsecond;
        // they are not timed (a clock reading costs as much as the step), and
        // their time counts toward the next timed step.
        let untimed = matches!(
            step,
            Step::Resolve | Step::Authorize | Step::RateLimit | Step::Budget
        );
        if outcome == StepOutcome::Skipped || untimed {
            self.steps.set(step, outcome, 0, detail);
            return;
        }
        self.step_at(step, outcome, detail, Instant::now());
    }

    /// A timed step that ended at `now`.
    fn step_at(&mut self, step: Step, outcome: StepOutcome, detail: Option<String>, now: Instant) {
        let took = micros(now.saturating_duration_since(self.last));
        self.steps.set(step, outcome, took, detail);
        self.last = now;
    }
}

/// The step clock's first reading, which calibrates it against the OS clock (a
/// busy loop of about 0.6 ms, once per process): made when a runtime is built,
/// not in its first job. A function of its own so that instruction counts can
/// leave it out (`bench/invoke-instructions.sh`): its length varies from run to
/// run.
#[inline(never)]
fn calibrate_step_clock() {
    Instant::now();
}

/// The wall-clock time at `now`, without a second clock reading per job: each
/// thread reads the system clock at most once a second and adds the time the
/// step clock measured since. The two differ by the system clock's rate
/// correction (parts per million: microseconds over that second), and a step of
/// the system clock (`date -s`, an NTP step) shows in records within a second.
fn wall_clock(now: Instant) -> SystemTime {
    const RESYNC: Duration = Duration::from_secs(1);
    thread_local! {
        static ANCHOR: Cell<Option<(Instant, SystemTime)>> = const { Cell::new(None) };
    }
    ANCHOR.with(|anchor| match anchor.get() {
        Some((at, wall)) if now >= at && now - at < RESYNC => wall + (now - at),
        _ => {
            let wall = SystemTime::now();
            anchor.set(Some((now, wall)));
            wall
        }
    })
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

const MAX_BACKOFF: Duration = Duration::from_secs(30);

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
        }
    }

    /// A runtime with default policies; refuses to start when a declared
    /// capability's resource is missing or a rollback action has no handler.
    pub fn new(registry: Arc<Registry>, resources: Resources) -> Result<Runtime, StartError> {
        Runtime::builder(registry).resources(resources).build()
    }

    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The resources the runtime's skills reach through their capabilities.
    pub fn resources(&self) -> &Resources {
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

    /// Invocations that named no registered skill.
    pub fn unresolved(&self) -> u64 {
        self.inner.unresolved.load(Ordering::Relaxed)
    }

    /// Run a job through the whole pipeline.
    ///
    /// The job starts (its clock, its ids' span) when this is called, not when
    /// the future is first polled.
    pub fn invoke(
        &self,
        job: JobEnvelope,
    ) -> impl Future<Output = Result<SkillResult, InvokeError>> + Send + '_ {
        self.run(self.state(job, None, None), |d| Ok(d.result))
    }

    /// Run skill `reference` (`name` or `name@version`) on `params`.
    pub async fn invoke_json(
        &self,
        reference: &str,
        params: Value,
        caller: crate::Caller,
    ) -> Result<SkillResult, InvokeError> {
        self.invoke(JobEnvelope::for_reference(reference, params).with_caller(caller))
            .await
    }

    /// Run `job` with params given as JSON text: the size limit applies to the
    /// text before it is parsed, and text that is not JSON is an answer (with a
    /// record), like any other bad input.
    pub async fn invoke_text(
        &self,
        mut job: JobEnvelope,
        text: &str,
    ) -> Result<SkillResult, InvokeError> {
        let limit = self.inner.limits.max_input_bytes;
        let parsed = if text.len() > limit {
            Err(InvokeError::TooLarge {
                skill: job.reference(),
                size: text.len(),
                limit,
            })
        } else {
            serde_json::from_str::<Value>(text).map_err(|e| InvokeError::MalformedJson {
                skill: job.reference(),
                message: e.to_string(),
            })
        };
        match parsed {
            Ok(params) => {
                job.params = params;
                self.run(self.state(job, None, Some(text.len())), |d| Ok(d.result))
                    .await
            }
            Err(e) => {
                job.params = Value::Null;
                let mut st = self.state(job, None, Some(text.len()));
                // Attribute the bad input to its skill when there is one; an
                // unknown skill is the more basic error.
                let e = match self.resolve(&mut st) {
                    Ok(_) => {
                        st.step(Step::ValidateInput, StepOutcome::Failed, None);
                        e
                    }
                    Err(unknown) => unknown,
                };
                self.finish(st, Err(e)).map(|d| d.result)
            }
        }
    }

    /// Run skill `S` on a typed input, in-process. Every policy applies; what
    /// the types guarantee is not checked again: the input and the output are
    /// not decoded, and each side is checked only against what its schema says
    /// beyond its type ([`crate::schema::residual`]: lengths, ranges, formats),
    /// as on every call.
    pub fn call<S: Skill>(
        &self,
        input: S::Input,
    ) -> impl Future<Output = Result<S::Output, InvokeError>> + Send + '_
    where
        S::Input: Serialize,
        S::Output: DeserializeOwned,
    {
        self.call_with::<S>(input, crate::Caller::default())
    }

    /// [`Runtime::call`] on behalf of `caller`.
    ///
    /// Not an `async fn`, like [`Runtime::invoke`]: the job's future is returned
    /// as it is, not wrapped (and copied) in one more layer.
    pub fn call_with<S: Skill>(
        &self,
        input: S::Input,
        caller: crate::Caller,
    ) -> impl Future<Output = Result<S::Output, InvokeError>> + Send + '_
    where
        S::Input: Serialize,
        S::Output: DeserializeOwned,
    {
        let m = S::MANIFEST;
        // An input that does not serialize fails its validation step, with a
        // record like any other bad input.
        let (params, unserializable) = match serde_json::to_value(&input) {
            Ok(params) => (params, None),
            Err(e) => (
                Value::Null,
                Some(format!("the input does not serialize: {e}")),
            ),
        };
        let job = JobEnvelope::new(m.name, params)
            .with_version(m.version)
            .with_caller(caller);
        let mut st = self.state(job, Some(Box::new(Some(input))), None);
        st.unserializable = unserializable;
        self.run(st, typed_output::<S>)
    }

    /// The job's state, on the heap: the job's future holds a pointer to it, not
    /// its 600 bytes (see [`Runtime::run`]).
    fn state(
        &self,
        job: JobEnvelope,
        typed: Option<AnyBox>,
        text_len: Option<usize>,
    ) -> Box<State> {
        let now = Instant::now();
        let started_at = wall_clock(now);
        let JobEnvelope {
            job_id,
            trace_id,
            parent_job_id,
            skill,
            kind,
            version,
            params,
            constraints,
            caller,
            idempotency_key,
        } = job;
        let span = tracing::info_span!(
            "skill",
            skill = %skill,
            job_id = %job_id,
            trace_id = %trace_id,
        );
        // Moved once, here, and out again into the record.
        let inv = Arc::new(Invocation {
            resources: self.inner.resources.clone(),
            caller,
            trace_id,
            job_id,
            parent_job_id,
            started_at,
            constraints,
            attempt: AtomicU32::new(0),
            report: Default::default(),
            pipeline: OnceLock::new(),
        });
        Box::new(State {
            span,
            job: Target {
                skill,
                kind,
                version,
                params,
                idempotency_key,
            },
            inv,
            started_at,
            t0: now,
            last: now,
            skill: None,
            unserializable: None,
            typed_input: typed,
            text_len,
            steps: Steps::default(),
            attempts: Attempts::default(),
            key: None,
            replayed: false,
            executed: None,
            pipeline_steps: Vec::new(),
        })
    }

    /// The whole job, boxed: the future (about 840 bytes) and the job's state
    /// ([`Runtime::state`], about 600) are each a heap block of their own, so that every
    /// move of the job (into `block_on`, into a task, through each entry point)
    /// copies a pointer. Unboxed, the future was 1.4 KB, copied several times per
    /// call: 12% of a typed call's instructions. Both blocks stay within the
    /// sizes the allocator serves from its per-thread cache (a unit test checks),
    /// which is what made an earlier, 1.9 KB box cost more than it saved.
    ///
    /// `pick` turns what the job produced into what the entry point returns, so
    /// that no entry point needs an `async` layer of its own around this one.
    fn run<T: 'static>(
        &self,
        mut st: Box<State>,
        pick: fn(Done) -> Result<T, InvokeError>,
    ) -> Pin<Box<impl Future<Output = Result<T, InvokeError>> + Send + '_>> {
        Box::pin(async move {
            let result = self.pipeline(&mut st).await;
            self.finish(st, result).and_then(pick)
        })
    }

    /// Resolve, then every step up to and including idempotency; the rest runs
    /// in [`Runtime::guarded`], whose result the idempotency store shares.
    async fn pipeline(&self, st: &mut State) -> Result<Done, InvokeError> {
        let inner = &*self.inner;
        let i = self.resolve(st)?;
        let skill = &inner.registry.skills()[i];
        let state = &inner.skills[i];
        let m = skill.entry.manifest;
        let name = m.name;

        if let Err(reason) = authorize(m, &st.inv.caller) {
            st.step(Step::Authorize, StepOutcome::Failed, Some(reason.clone()));
            return Err(InvokeError::Denied {
                skill: name.to_owned(),
                reason,
            });
        }
        st.step(Step::Authorize, StepOutcome::Passed, None);

        match &state.limiter {
            None => st.step(Step::RateLimit, StepOutcome::Skipped, None),
            Some(l) => match l.admit(std::time::Instant::now()) {
                Ok(()) => st.step(Step::RateLimit, StepOutcome::Passed, None),
                Err(wait) => {
                    let max = m.rate_limit.map_or(0, |r| r.max_per_minute);
                    st.step(Step::RateLimit, StepOutcome::Failed, None);
                    return Err(InvokeError::RateLimited {
                        skill: name.to_owned(),
                        max_per_minute: max,
                        retry_after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1),
                    });
                }
            },
        }

        let input = match self.validate_input(st, skill) {
            Ok(input) => input,
            Err(e) => {
                st.step(Step::ValidateInput, StepOutcome::Failed, None);
                return Err(e);
            }
        };
        st.step(Step::ValidateInput, StepOutcome::Passed, None);

        if !skill.entry.erased.checks_before {
            st.step(Step::Preconditions, StepOutcome::Skipped, None);
        } else {
            match skill.entry.erased.before(&*input, &st.inv.caller) {
                Ok(()) => st.step(Step::Preconditions, StepOutcome::Passed, None),
                Err(f) => {
                    let e = check_error(skill, f, None);
                    st.step(Step::Preconditions, StepOutcome::Failed, None);
                    return Err(e);
                }
            }
        }

        let key = match &st.job.idempotency_key {
            Some(k) => Some(k.clone()),
            None if state.effectful => Some(idempotency_key(
                name,
                &st.job.params,
                st.inv.constraints.dry_run,
            )),
            None => None,
        };
        let claimed = match key {
            None => {
                st.step(Step::Idempotency, StepOutcome::Skipped, None);
                None
            }
            Some(key) => {
                st.key = Some(key.clone());
                // A dry run and a real run of the same params are different jobs.
                let slot = if st.inv.constraints.dry_run {
                    format!("dry:{key}")
                } else {
                    key
                };
                // Boxed: only keyed jobs wait here, and its state would otherwise
                // widen every job's future.
                match Box::pin(inner.idempotency.claim(i, &slot, name)).await {
                    Claim::Replay(shared) => {
                        st.replayed = true;
                        st.step(Step::Idempotency, StepOutcome::Replayed, None);
                        return match &*shared {
                            Ok(result) => Ok(Done {
                                result: SkillResult {
                                    replayed: true,
                                    ..result.clone()
                                },
                                typed: None,
                            }),
                            Err(e) => Err(e.clone()),
                        };
                    }
                    Claim::Run(claimed) => {
                        st.step(Step::Idempotency, StepOutcome::Passed, None);
                        Some(claimed)
                    }
                }
            }
        };
        // One await of the rest of the job, so its state is laid out once.
        let done = self.guarded(st, i, input).await;
        if let Some(claimed) = claimed {
            let shared = match &done {
                Ok(d) => Ok(d.result.clone()),
                Err(e) => Err(e.clone()),
            };
            claimed.finish(Arc::new(shared));
        }
        done
    }

    fn resolve(&self, st: &mut State) -> Result<usize, InvokeError> {
        let registry = &self.inner.registry;
        let job = &st.job;
        let found = registry.index_of_kind(job.kind, &job.skill, job.version.as_deref());
        let i = match found {
            Ok(i) => i,
            Err(known) => {
                let e = match (&job.version, known.is_empty()) {
                    (Some(v), false) => InvokeError::UnknownVersion {
                        skill: job.skill.to_string(),
                        version: v.to_string(),
                        known,
                    },
                    _ => InvokeError::UnknownSkill {
                        reference: job.reference(),
                    },
                };
                st.step(Step::Resolve, StepOutcome::Failed, None);
                return Err(e);
            }
        };
        st.skill = Some(i);
        let m = registry.skills()[i].entry.manifest;
        match m.status {
            Status::Disabled => {
                st.step(Step::Resolve, StepOutcome::Failed, Some("disabled".into()));
                Err(InvokeError::Disabled {
                    skill: m.name.to_owned(),
                })
            }
            Status::Deprecated => {
                let detail = match m.deprecation.and_then(|d| d.replaced_by) {
                    Some(r) => format!("deprecated; replaced by `{r}`"),
                    None => "deprecated".to_owned(),
                };
                st.step(Step::Resolve, StepOutcome::Passed, Some(detail));
                Ok(i)
            }
            Status::Enabled => {
                st.step(Step::Resolve, StepOutcome::Passed, None);
                Ok(i)
            }
        }
    }

    /// Size, depth, schema, then decoding (unless the caller brought a typed
    /// input).
    fn validate_input(
        &self,
        st: &mut State,
        skill: &RegisteredSkill,
    ) -> Result<AnyBox, InvokeError> {
        let limits = self.inner.limits;
        let name = skill.name();
        if let Some(message) = st.unserializable.take() {
            return Err(InvokeError::MalformedInput {
                skill: name.to_owned(),
                message,
            });
        }
        let params = &st.job.params;
        // The limits guard against hostile payloads: a typed input was built by
        // the calling code itself (and serializing it has walked it already).
        if st.typed_input.is_none() {
            let Some(estimate) = measure(params, limits.max_depth) else {
                return Err(InvokeError::TooDeep {
                    skill: name.to_owned(),
                    limit: limits.max_depth,
                });
            };
            let size = st.text_len.unwrap_or(estimate);
            if size > limits.max_input_bytes {
                return Err(InvokeError::TooLarge {
                    skill: name.to_owned(),
                    size,
                    limit: limits.max_input_bytes,
                });
            }
        }
        let schema = &skill.input_validator;
        let invalid = || InvokeError::InvalidInput {
            skill: name.to_owned(),
            violations: schema.violations(params),
        };
        // Decoded first: a value of the input type needs only the checks its
        // type does not make (`CompiledSchema::is_valid_for_type`, or, for
        // decoded params, `is_valid_decoded`). Params that do not decode get
        // the whole schema, for every violation with its path; the decoder's
        // message is the answer only when the schema has nothing to say.
        let (input, valid) = match st.typed_input.take() {
            Some(typed) => (typed, schema.is_valid_for_type(params)),
            None => match skill.entry.erased.decode(params) {
                Ok(input) => (input, schema.is_valid_decoded(params)),
                Err(_) if !schema.is_valid(params) => return Err(invalid()),
                Err(e) => {
                    return Err(InvokeError::MalformedInput {
                        skill: name.to_owned(),
                        message: e.to_string(),
                    });
                }
            },
        };
        if !valid {
            return Err(invalid());
        }
        Ok(input)
    }

    /// Approval, execution, budget, output checks: the part of a job whose
    /// result is shared with jobs of the same idempotency key.
    async fn guarded(&self, st: &mut State, i: usize, input: AnyBox) -> Result<Done, InvokeError> {
        let inner = &*self.inner;
        let skill = &inner.registry.skills()[i];
        let m = skill.entry.manifest;
        let name = m.name;

        match inner.skills[i].approval {
            None => st.step(Step::Approval, StepOutcome::Skipped, None),
            // Boxed: only skills that need approval wait here, and the request's
            // state would otherwise widen every job's future.
            Some(reason) => Box::pin(self.approval(st, skill, reason)).await?,
        }

        if m.kind == Kind::Pipeline {
            // Set before the handler starts, which is the only reader.
            let _ = st.inv.pipeline.set(Box::new(PipelineRun {
                runtime: self.clone(),
                steps: Default::default(),
            }));
        }
        let output = self.execute(st, skill, input).await;
        let report = st.inv.take_report();
        if let Some(p) = st.inv.pipeline.get() {
            st.pipeline_steps = std::mem::take(&mut *lock(&p.steps));
        }
        let attempts = st.attempts.len() as u32;
        let output = match output {
            Ok(o) => {
                let end = st.executed.take().unwrap_or_else(Instant::now);
                st.step_at(Step::Execute, StepOutcome::Passed, None, end);
                o
            }
            Err(e) => {
                st.step(Step::Execute, StepOutcome::Failed, None);
                return Err(e);
            }
        };

        let c = &st.inv.constraints;
        let over = [
            ("tokens", report.tokens.unwrap_or(0), c.max_tokens),
            ("items", report.items, c.max_items),
        ]
        .into_iter()
        .find_map(|(budget, used, limit)| {
            limit
                .filter(|&l| used > l)
                .map(|limit| (budget, used, limit))
        });
        match (over, c.max_tokens.is_some() || c.max_items.is_some()) {
            (Some((budget, used, limit)), _) => {
                st.step(Step::Budget, StepOutcome::Failed, None);
                return Err(InvokeError::OverBudget {
                    skill: name.to_owned(),
                    budget,
                    used,
                    limit,
                });
            }
            (None, true) => st.step(Step::Budget, StepOutcome::Passed, None),
            (None, false) => st.step(Step::Budget, StepOutcome::Skipped, None),
        }

        let e = &skill.entry.erased;
        let data = match e.encode(&*output) {
            Some(Ok(v)) => v,
            Some(Err(err)) => {
                st.step(Step::ValidateOutput, StepOutcome::Failed, None);
                return Err(InvokeError::InvalidOutput {
                    skill: name.to_owned(),
                    violations: vec![SchemaViolation {
                        instance_path: String::new(),
                        schema_path: String::new(),
                        message: format!("the output does not serialize to JSON: {err}"),
                    }],
                });
            }
            None => return Err(mismatch(name)),
        };
        // The output was serialized from the handler's value: only what its
        // type does not guarantee is checked.
        if !skill.output_validator.is_valid_for_type(&data) {
            st.step(Step::ValidateOutput, StepOutcome::Failed, None);
            return Err(InvokeError::InvalidOutput {
                skill: name.to_owned(),
                violations: skill.output_validator.violations(&data),
            });
        }
        st.step(Step::ValidateOutput, StepOutcome::Passed, None);

        let mut notes = Vec::new();
        if e.checks_after {
            // The handler consumed its input; the checks get a fresh copy.
            let input = e.decode(&st.job.params).map_err(|_| mismatch(name))?;
            let mut failed_rules = Vec::new();
            // Bound first: a borrow of the erased values must not live across the
            // rollback's await (the future would stop being `Send`).
            let checked = e.after(&*input, &*output, &mut failed_rules);
            match checked {
                Ok(()) => {}
                Err(f @ CheckFailed::Postcondition(p)) => {
                    let action = skill.conditions.postconditions[p].rollback_action;
                    let rollback = match action {
                        // Boxed: rare, and it would widen every job's future.
                        Some(a) => Some(
                            Box::pin(self.rollback(
                                skill,
                                a,
                                &st.inv.job_id,
                                &st.job.params,
                                &data,
                            ))
                            .await,
                        ),
                        None => None,
                    };
                    st.step(Step::Postconditions, StepOutcome::Failed, None);
                    return Err(check_error(skill, f, rollback));
                }
                Err(f @ CheckFailed::Rule(_)) => {
                    st.step(Step::Postconditions, StepOutcome::Passed, None);
                    st.step(Step::ValidationRules, StepOutcome::Failed, None);
                    return Err(check_error(skill, f, None));
                }
                Err(f) => return Err(check_error(skill, f, None)),
            }
            let c = &skill.conditions;
            st.step(
                Step::Postconditions,
                passed_unless_empty(&c.postconditions),
                None,
            );
            for r in failed_rules {
                let r = &skill.conditions.validation_rules[r];
                notes.push(RuleNote {
                    rule_id: r.rule_id,
                    severity: r.severity,
                    message: r.message,
                });
            }
            st.step(
                Step::ValidationRules,
                passed_unless_empty(&c.validation_rules),
                None,
            );
        } else {
            st.step(Step::Postconditions, StepOutcome::Skipped, None);
            st.step(Step::ValidationRules, StepOutcome::Skipped, None);
        }

        Ok(Done {
            result: SkillResult {
                success: true,
                job_id: st.inv.job_id.clone(),
                trace_id: st.inv.trace_id.clone(),
                skill: skill.shared_label(),
                data: Arc::new(data),
                artifacts: report.artifacts,
                metrics: Metrics {
                    // Set by `finish`, which reads the clock once for the record too.
                    duration_ms: 0,
                    items_processed: report.items,
                    tokens_used: report.tokens,
                    attempts,
                },
                next_action: report.next_action.unwrap_or(NextAction::Complete),
                notes,
                started_at: st.started_at,
                replayed: false,
                pipeline_steps: if st.pipeline_steps.is_empty() {
                    Vec::new()
                } else {
                    st.pipeline_steps.clone()
                },
            },
            typed: Some(output),
        })
    }

    /// Ask the approver; a denial is the job's error.
    async fn approval(
        &self,
        st: &mut State,
        skill: &RegisteredSkill,
        reason: &'static str,
    ) -> Result<(), InvokeError> {
        let m = skill.entry.manifest;
        let request = ApprovalRequest {
            skill: skill.label().to_owned(),
            job_id: st.inv.job_id.clone(),
            reason: reason.to_owned(),
            params: redacted(&st.job.params, m.redaction.inputs),
            dry_run: st.inv.constraints.dry_run,
            caller: st.inv.caller.clone(),
        };
        match self.inner.approver.approve(&request).await {
            Approval::Approved { by } => {
                st.step(
                    Step::Approval,
                    StepOutcome::Passed,
                    Some(format!("approved by {by}")),
                );
                Ok(())
            }
            Approval::Denied { reason: detail } => {
                st.step(Step::Approval, StepOutcome::Failed, Some(detail.clone()));
                Err(InvokeError::NotApproved {
                    skill: m.name.to_owned(),
                    reason: reason.to_owned(),
                    detail,
                })
            }
        }
    }

    /// Run the handler: each attempt bounded by the skill's timeout and the job's
    /// deadline, panics caught, retryable failures retried with the declared
    /// backoff. Timeouts are retried only for idempotent skills, since a
    /// timed-out attempt may have done its work.
    async fn execute(
        &self,
        st: &mut State,
        skill: &RegisteredSkill,
        first: AnyBox,
    ) -> Result<AnyBox, InvokeError> {
        let m = skill.entry.manifest;
        let name = m.name;
        let e = &skill.entry.erased;
        let per_attempt = Duration::from_millis(m.execution.timeout_ms);
        let deadline = st
            .inv
            .constraints
            .timeout_ms
            .map(|t| st.t0 + Duration::from_millis(t));
        let max_attempts = m.execution.retries.saturating_add(1);
        let mut input = Some(first);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let input = match input.take() {
                Some(i) => i,
                None => e.decode(&st.job.params).map_err(|_| mismatch(name))?,
            };
            st.inv.begin_attempt(attempt);
            // The first attempt starts where the last timed step ended.
            let now = if attempt == 1 {
                st.last
            } else {
                Instant::now()
            };
            let budget = match deadline {
                Some(d) => per_attempt.min(d.saturating_duration_since(now)),
                None => per_attempt,
            };
            let mut input = input;
            let handler = e.run(&st.inv, &mut *input);
            // Empty now: the handler owns the input.
            drop(input);
            let mut run = std::pin::pin!(CatchUnwind(handler).instrument(st.span.clone()));
            // A handler that is done at its first poll needs no timer (setting
            // one up reaches for the runtime's handle and its timer wheel); one
            // that is not gets the deadline counted from the attempt's start, as
            // before. Either way a handler is only ever interrupted between polls.
            let first = std::future::poll_fn(|cx| Poll::Ready(run.as_mut().poll(cx))).await;
            let outcome = match first {
                Poll::Ready(done) => Ok(done),
                // Still counted from the attempt's start: tokio's clock now, less
                // the time the attempt has taken so far.
                Poll::Pending => {
                    let until = tokio::time::Instant::now() + budget.saturating_sub(now.elapsed());
                    tokio::time::timeout_at(until, run).await
                }
            };
            let end = Instant::now();
            let took = micros(end.saturating_duration_since(now));
            let (record, retry, error) = match outcome {
                Ok(Ok(Ok(output))) => {
                    st.executed = Some(end);
                    st.attempts.push(AttemptRecord {
                        attempt,
                        outcome: AttemptOutcome::Succeeded,
                        duration_us: took,
                        error: None,
                        backoff_ms: None,
                    });
                    return Ok(output);
                }
                Ok(Ok(Err(HandlerFailure { mode, message }))) => (
                    (AttemptOutcome::Failed, format!("{}: {message}", mode.code)),
                    mode.retryable,
                    InvokeError::Failed {
                        skill: name.to_owned(),
                        code: mode.code.to_owned(),
                        retryable: mode.retryable,
                        message,
                        attempts: attempt,
                    },
                ),
                Ok(Err(panic)) => (
                    (AttemptOutcome::Panicked, panic.clone()),
                    false,
                    InvokeError::Panicked {
                        skill: name.to_owned(),
                        message: panic,
                    },
                ),
                Err(_) => (
                    (
                        AttemptOutcome::TimedOut,
                        format!("no answer within {} ms", budget.as_millis()),
                    ),
                    m.execution.idempotent,
                    InvokeError::TimedOut {
                        skill: name.to_owned(),
                        timeout_ms: u64::try_from(budget.as_millis()).unwrap_or(u64::MAX),
                        attempts: attempt,
                    },
                ),
            };
            let wait = backoff(m.execution.backoff, self.inner.retry_base, attempt);
            let time_left = deadline.is_none_or(|d| Instant::now() + wait < d);
            let again = retry && attempt < max_attempts && time_left;
            st.attempts.push(AttemptRecord {
                attempt,
                outcome: record.0,
                duration_us: took,
                error: Some(record.1),
                backoff_ms: again.then(|| u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
            });
            if !again {
                return Err(error);
            }
            tokio::time::sleep(wait).await;
        }
    }

    async fn rollback(
        &self,
        skill: &RegisteredSkill,
        action: &'static str,
        job_id: &str,
        input: &Value,
        output: &Value,
    ) -> Result<(), String> {
        let Some(handler) = self.inner.rollbacks.get(action) else {
            // `build` refuses to start without it.
            return Err(format!("no handler for rollback action `{action}`"));
        };
        let name = skill.label();
        let request = RollbackRequest {
            skill: name,
            action,
            job_id,
            input,
            output,
            resources: &self.inner.resources,
        };
        match CatchUnwind(handler.rollback(request)).await {
            Ok(r) => r,
            Err(panic) => Err(format!("the rollback action panicked: {panic}")),
        }
    }

    /// Turn the job's state and outcome into its record, update the stats, and
    /// hand the record to the sink.
    fn finish(
        &self,
        st: Box<State>,
        mut result: Result<Done, InvokeError>,
    ) -> Result<Done, InvokeError> {
        let inner = &*self.inner;
        // A job that succeeded ended at its last timed step (the output checks);
        // only building the result came after. Failures read the clock: some end
        // on a step that is not timed.
        let end = match &result {
            Ok(_) => st.last,
            Err(_) => Instant::now(),
        };
        let duration = end.saturating_duration_since(st.t0);
        if let Ok(done) = &mut result
            && !done.result.replayed
        {
            done.result.metrics.duration_ms =
                u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        }
        let skill = st.skill.map(|i| &inner.registry.skills()[i]);
        match st.skill {
            Some(i) => inner.skills[i].stats.add(duration, result.is_err()),
            None => {
                inner.unresolved.fetch_add(1, Ordering::Relaxed);
            }
        }
        let (inputs, outputs) = match skill {
            Some(s) => (
                s.entry.manifest.redaction.inputs,
                s.entry.manifest.redaction.outputs,
            ),
            None => (&[][..], &[][..]),
        };
        let mut secrets = Vec::new();
        let mut params = st.job.params;
        redact_in_place(&mut params, inputs, &mut secrets);
        let output = match &result {
            Ok(done) if !outputs.is_empty() => {
                let mut o = (*done.result.data).clone();
                redact_in_place(&mut o, outputs, &mut secrets);
                Some(Arc::new(o))
            }
            Ok(done) => Some(done.result.data.clone()),
            Err(_) => None,
        };
        let scrub = |text: String| scrub(text, &secrets);
        let error = result.as_ref().err().map(|e| ErrorRecord {
            code: e.code().to_owned(),
            message: scrub(redacted_error(e, inputs)),
        });
        let mut attempts = st.attempts;
        if !secrets.is_empty() {
            for a in attempts.iter_mut() {
                a.error = a.error.take().map(&scrub);
            }
        }
        let mut steps = st.steps;
        if !secrets.is_empty() {
            steps.map_details(&scrub);
        }
        st.span.in_scope(|| match &error {
            None => tracing::info!(status = "succeeded", duration_us = micros(duration)),
            Some(e) => {
                tracing::info!(status = "failed", code = %e.code, duration_us = micros(duration))
            }
        });
        let notes = match &result {
            Ok(d) => d.result.notes.clone(),
            Err(_) => Vec::new(),
        };
        // The handler's context is usually gone by now; a spawned task that
        // kept a clone of it leaves the invocation shared, and then the ids are
        // copied.
        let (job_id, trace_id, parent_job_id, caller, dry_run) = match Arc::try_unwrap(st.inv) {
            Ok(inv) => (
                inv.job_id,
                inv.trace_id,
                inv.parent_job_id,
                inv.caller,
                inv.constraints.dry_run,
            ),
            Err(inv) => (
                inv.job_id.clone(),
                inv.trace_id.clone(),
                inv.parent_job_id.clone(),
                inv.caller.clone(),
                inv.constraints.dry_run,
            ),
        };
        let record = RunRecord {
            job_id,
            trace_id,
            parent_job_id,
            skill: match skill {
                Some(s) => Cow::Borrowed(s.name()),
                None => st.job.skill,
            },
            version: skill.map(|s| s.entry.manifest.version),
            caller,
            params,
            dry_run,
            idempotency_key: st.key,
            replayed: st.replayed,
            started_at: st.started_at,
            completed_at: st.started_at + duration,
            duration_us: micros(duration),
            status: if result.is_ok() {
                RunStatus::Succeeded
            } else {
                RunStatus::Failed
            },
            steps,
            attempts,
            output,
            error,
            notes,
            pipeline_steps: if st.pipeline_steps.is_empty() {
                Vec::new()
            } else {
                st.pipeline_steps
                    .into_iter()
                    .map(|s| StepRun { output: None, ..s })
                    .collect()
            },
        };
        inner.sink.record(Arc::new(record));
        result
    }
}

/// A typed call's output: the handler's own value, or, when the result was
/// replayed from the idempotency store, the stored JSON decoded.
fn typed_output<S: Skill>(done: Done) -> Result<S::Output, InvokeError>
where
    S::Output: DeserializeOwned,
{
    match done.typed.map(|b| b.downcast::<S::Output>()) {
        Some(Ok(output)) => Ok(*output),
        _ => serde_json::from_value(Arc::unwrap_or_clone(done.result.data)).map_err(|e| {
            InvokeError::Internal {
                skill: S::MANIFEST.name.to_owned(),
                message: format!("stored output does not decode: {e}"),
            }
        }),
    }
}

/// `passed` for a step that had checks to run, `skipped` for one that had none.
fn passed_unless_empty<T>(checks: &[T]) -> StepOutcome {
    if checks.is_empty() {
        StepOutcome::Skipped
    } else {
        StepOutcome::Passed
    }
}

fn mismatch(skill: &str) -> InvokeError {
    InvokeError::Internal {
        skill: skill.to_owned(),
        message: "a value did not have the skill's type".to_owned(),
    }
}

fn check_error(
    skill: &RegisteredSkill,
    failed: CheckFailed,
    rollback: Option<Result<(), String>>,
) -> InvokeError {
    let name = skill.name().to_owned();
    let c = &skill.conditions;
    match failed {
        CheckFailed::Precondition(i) => InvokeError::Precondition {
            skill: name,
            error_code: c.preconditions[i].error_code.to_owned(),
            message: c.preconditions[i].message.to_owned(),
        },
        CheckFailed::Postcondition(i) => InvokeError::Postcondition {
            skill: name,
            assertion: c.postconditions[i].assertion.to_owned(),
            rollback_action: c.postconditions[i].rollback_action.map(str::to_owned),
            rollback,
        },
        CheckFailed::Rule(i) => InvokeError::ValidationRule {
            skill: name,
            rule_id: c.validation_rules[i].rule_id.to_owned(),
            message: c.validation_rules[i].message.to_owned(),
        },
        CheckFailed::Mismatch => mismatch(&name),
    }
}

fn backoff(kind: Backoff, base: Duration, attempt: u32) -> Duration {
    let wait = match kind {
        Backoff::None => Duration::ZERO,
        Backoff::Linear => base.saturating_mul(attempt),
        Backoff::Exponential => base.saturating_mul(1u32 << (attempt - 1).min(20)),
    };
    wait.min(MAX_BACKOFF)
}

/// Replace the top-level `fields` of `value` by `"[REDACTED]"`, collecting the
/// replaced strings (every string inside them) so messages can be scrubbed too.
fn redact_in_place(value: &mut Value, fields: &[&str], secrets: &mut Vec<String>) {
    let Value::Object(map) = value else { return };
    for f in fields {
        if let Some(v) = map.get_mut(*f) {
            collect_strings(v, secrets);
            *v = Value::String(REDACTED.to_owned());
        }
    }
}

fn redacted(value: &Value, fields: &[&str]) -> Value {
    let mut v = value.clone();
    redact_in_place(&mut v, fields, &mut Vec::new());
    v
}

const REDACTED: &str = "[REDACTED]";

/// Strings shorter than this are not scrubbed from messages: replacing every
/// `a` or `42` would destroy the message and hide nothing.
const MIN_SECRET: usize = 3;

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.chars().count() >= MIN_SECRET => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_strings(i, out)),
        Value::Number(n) if n.to_string().len() >= MIN_SECRET => out.push(n.to_string()),
        _ => {}
    }
}

fn scrub(mut text: String, secrets: &[String]) -> String {
    for s in secrets {
        if text.contains(s.as_str()) {
            text = text.replace(s.as_str(), REDACTED);
        }
    }
    text
}

/// The error's message for a record: schema violations inside a redacted input
/// field keep their location but lose their text (it quotes the value).
fn redacted_error(e: &InvokeError, inputs: &[&str]) -> String {
    match e {
        InvokeError::InvalidInput { skill, violations } if !inputs.is_empty() => {
            let violations = violations
                .iter()
                .map(|v| {
                    let field = v.instance_path.split('/').nth(1).unwrap_or("");
                    if inputs.contains(&field) {
                        SchemaViolation {
                            message: format!("{REDACTED} (fails `{}`)", v.schema_path),
                            ..v.clone()
                        }
                    } else {
                        v.clone()
                    }
                })
                .collect();
            InvokeError::InvalidInput {
                skill: skill.clone(),
                violations,
            }
            .to_string()
        }
        other => other.to_string(),
    }
}

/// Turns a panic inside the wrapped future into an error carrying its message.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(payload) => Poll::Ready(Err(panic_message(&*payload))),
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_follows_the_declared_shape() {
        let base = Duration::from_millis(100);
        let ms = |k, n| backoff(k, base, n).as_millis();
        assert_eq!([1, 2, 3].map(|n| ms(Backoff::None, n)), [0, 0, 0]);
        assert_eq!([1, 2, 3].map(|n| ms(Backoff::Linear, n)), [100, 200, 300]);
        assert_eq!(
            [1, 2, 3, 4].map(|n| ms(Backoff::Exponential, n)),
            [100, 200, 400, 800]
        );
        assert_eq!(backoff(Backoff::Exponential, base, 40), MAX_BACKOFF);
    }

    #[test]
    fn redaction_replaces_fields_and_scrubs_their_text() {
        let mut v = serde_json::json!({"query": "hunter2-secret", "limit": 5});
        let mut secrets = Vec::new();
        redact_in_place(&mut v, &["query"], &mut secrets);
        assert_eq!(v, serde_json::json!({"query": REDACTED, "limit": 5}));
        assert_eq!(
            scrub("no match for hunter2-secret".into(), &secrets),
            "no match for [REDACTED]"
        );
    }
}
#[cfg(test)]
mod future_size {
    use super::*;

    /// A job's future is one heap block, moved as a pointer (into `block_on`,
    /// into a task). The block must stay within the sizes glibc serves from its
    /// per-thread cache (1,032 bytes): past that, each job's allocation takes the
    /// slow path. Rare paths (approval, idempotency, rollback) are boxed so they
    /// do not widen it, and the job's state is a heap block of its own.
    /// The derived wall clock agrees with the system clock, on the reading that
    /// sets the anchor and on later ones.
    #[test]
    fn the_wall_clock_follows_the_system_clock() {
        for _ in 0..3 {
            let before = SystemTime::now();
            let wall = wall_clock(Instant::now());
            let after = SystemTime::now();
            let slack = Duration::from_millis(5);
            assert!(before <= wall + slack && wall <= after + slack);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_jobs_future_is_one_small_heap_block() {
        let registry = Arc::new(Registry::build(vec![], vec![]).unwrap());
        let rt = Runtime::builder(registry).build().unwrap();
        let job = JobEnvelope::new("x", Value::Null);
        let run = rt.run(rt.state(job.clone(), None, None), |d| Ok(d.result));
        assert!(size_of_val(&*run) <= 1_032, "{}", size_of_val(&*run));
        let invoke = rt.invoke(job);
        assert_eq!(size_of_val(&invoke), size_of::<usize>());
        assert!(size_of::<State>() <= 1_032, "{}", size_of::<State>());
    }
}
