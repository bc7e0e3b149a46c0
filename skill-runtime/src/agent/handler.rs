//! What `#[agent]` implements (the `Agent` trait, `Uses` for each listed
//! skill) and what an agent's body holds: the runtime, with the agent as the
//! caller of every skill it runs.

use std::fmt::Display;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use skill_core::failure::FailureModes;

use crate::agent::contract::{AgentContract, PostCondition, PreCondition};
use crate::contract::skill::Skill;
use crate::exec::runtime::Runtime;
use crate::model::caller::Caller;
use crate::model::envelope::JobEnvelope;
use crate::model::error::InvokeError;
use crate::model::id::Id;
use crate::model::result::SkillResult;

/// Implemented by `#[agent(...)]` on the marker type named like the function.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an agent",
    label = "not an agent",
    note = "agents are `async fn`s with `#[agent(id = \"...\", ...)]`, named by their function"
)]
pub trait Agent: Sized + Send + Sync + 'static {
    /// What the agent takes.
    type Input: DeserializeOwned + Serialize + JsonSchema + Send + 'static;
    /// What it returns.
    type Output: Serialize + JsonSchema + Send + 'static;
    /// Its failure modes.
    type Error: FailureModes + Display + Send + 'static;

    /// The contract `#[agent]` declared.
    const CONTRACT: &'static AgentContract;
    /// Checks of the input before the body runs.
    const PRE_CONDITIONS: &'static [PreCondition<Self::Input>] = &[];
    /// Checks of the output after it.
    const POST_CONDITIONS: &'static [PostCondition<Self::Input, Self::Output>] = &[];

    /// The agent's body. Its skill calls go through the runtime as the agent.
    fn execute(
        ctx: AgentCtx<'_, Self>,
        input: Self::Input,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;
}

/// `A: Uses<S>` holds when agent `A` lists skill `S` in `skills(...)`: the
/// bound of the typed call [`AgentCtx::run`].
///
/// # Safety
///
/// Only `#[agent]` implements it, beside the check that the skill's
/// `reusable_by` allows the agent's role.
#[diagnostic::on_unimplemented(
    message = "agent `{Self}` runs skill `{S}`, which its contract does not list",
    label = "`{S}` is not among the skills of agent `{Self}`",
    note = "add `{S}` to `skills(...)` in the #[agent] attribute of `{Self}`"
)]
pub unsafe trait Uses<S>: sealed::Sealed {}

pub(crate) mod sealed {
    /// Only the agent macro's marker types are agents' markers.
    pub trait Sealed {}
    impl<A: super::Agent> Sealed for A {}
}

/// The context of one agent run. Every skill it runs goes through the
/// runtime's stages of a job with the agent's role and `execute` level as the
/// caller, and the run's job id as the parent: a skill whose `reusable_by`
/// does not admit the agent is refused, as for any caller. Bound to the run,
/// as a skill's [`Ctx`](crate::Ctx) is to its call: nothing that outlives
/// the run (a `static`, a thread-local, a spawned task) can keep it.
pub struct AgentCtx<'call, A> {
    pub(crate) runtime: Runtime,
    pub(crate) caller: Caller,
    pub(crate) job_id: Id,
    pub(crate) trace_id: Id,
    pub(crate) dry_run: bool,
    pub(crate) errors: Arc<AtomicU32>,
    pub(crate) calls: Arc<AtomicU32>,
    /// The run's state: each skill call is a node of it.
    pub(crate) graph: Arc<std::sync::Mutex<crate::model::graph::GraphState>>,
    /// The run is a job's and may be taken up again (see `Started::durable`).
    pub(crate) durable: bool,
    /// The run's cancellation: each call carries it, and none starts after it.
    pub(crate) cancel: Option<crate::contract::watch::Cancel>,
    pub(crate) _agent: PhantomData<fn() -> A>,
    pub(crate) _call: PhantomData<fn(&'call ()) -> &'call ()>,
}

impl<A: Agent> AgentCtx<'_, A> {
    /// Run skill `S`, one the agent's contract lists (checked when the code
    /// compiles), on a typed input.
    ///
    /// The future is boxed: its type does not name `S`, so a skill the
    /// contract does not list is one error, at the call.
    pub fn run<S: Skill>(
        &self,
        input: S::Input,
    ) -> Pin<Box<dyn Future<Output = Result<S::Output, InvokeError>> + Send + '_>>
    where
        A: Uses<S>,
        S::Input: Serialize,
        S::Output: DeserializeOwned,
    {
        Box::pin(self.run_typed::<S>(input))
    }

    async fn run_typed<S: Skill>(&self, input: S::Input) -> Result<S::Output, InvokeError>
    where
        S::Input: Serialize,
        S::Output: DeserializeOwned,
    {
        let m = S::MANIFEST;
        let params = serde_json::to_value(&input).map_err(|e| InvokeError::MalformedInput {
            skill: m.name.to_owned(),
            message: format!("the input does not serialize: {e}"),
        })?;
        let result = self
            .run_json(&format!("{}@{}", m.name, m.version), params)
            .await?;
        serde_json::from_value::<S::Output>(result.data.into_value()).map_err(|e| {
            InvokeError::Internal {
                skill: m.name.to_owned(),
                message: format!("the output does not decode as the skill's type: {e}"),
            }
        })
    }

    /// Run skill `reference` (`name` or `name@version`) on JSON params. A
    /// skill the contract does not list is refused here, before the runtime
    /// sees it; a failed call counts toward the `error_count` trigger.
    pub async fn run_json(
        &self,
        reference: &str,
        params: Value,
    ) -> Result<SkillResult, InvokeError> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let name = reference.split_once('@').map_or(reference, |(n, _)| n);
        let node = format!("{name}#{n}");
        let started_at = std::time::SystemTime::now();
        if !A::CONTRACT.skills.iter().any(|s| s.manifest.name == name) {
            self.errors.fetch_add(1, Ordering::Relaxed);
            let e = InvokeError::Denied {
                skill: name.to_owned(),
                reason: format!(
                    "agent `{}` does not list skill `{name}` in its contract",
                    A::CONTRACT.id
                ),
            };
            let e = Err(e);
            self.note(&node, self.job_id.clone(), started_at, &e);
            return e;
        }
        // Completed by an earlier run of this job (taken up again after its
        // worker died): its output, as that run saved it.
        if let Some(done) = self.replayed(&node, name) {
            return Ok(done);
        }
        let mut job = JobEnvelope::for_reference(reference, params)
            .with_caller(self.caller.clone())
            .with_parent(self.job_id.clone());
        // A job's run, which a worker may take up again, keys each call by
        // the run and the call: one that completed but whose state was not
        // saved is answered by the skill's idempotency.
        if self.durable {
            job = job.with_idempotency_key(format!("{}/{node}", self.job_id));
        }
        job.trace_id = self.trace_id.clone();
        job.constraints.dry_run = self.dry_run;
        let job_id = job.job_id.clone();
        // Where the run is, for whoever looks while the call runs (`run
        // show`): this node.
        let running = {
            let mut state = crate::sync::lock(&self.graph);
            state.current_node = Some(node.clone());
            self.durable.then(|| state.clone())
        };
        if let Some(state) = running {
            self.save(&state).await;
        }
        let result = match &self.cancel {
            None => {
                self.runtime
                    .invoke_nested(job, crate::contract::watch::Watch::new())
                    .await
            }
            Some(c) if c.is_cancelled() => Err(InvokeError::Cancelled {
                skill: name.to_owned(),
            }),
            Some(c) => {
                let watch = crate::contract::watch::Watch::new().cancel_with(c.clone());
                self.runtime.invoke_nested(job, watch).await
            }
        };
        if result.is_err() {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.note(&node, job_id, started_at, &result);
        // Saved after each call, so a run taken over resumes after it (a run
        // no worker can take up, `AgentRunner::run`'s, is saved once, at
        // its end).
        if self.durable {
            let state = crate::sync::lock(&self.graph).clone();
            self.save(&state).await;
        }
        result
    }

    /// Save the run's state; a store that refuses it costs the run its
    /// resumability and its visibility, not its result.
    async fn save(&self, state: &crate::model::graph::GraphState) {
        if let Err(e) = self.runtime.save_run(state).await {
            tracing::warn!(run = %self.job_id, error = %e, "the agent run's state was not saved");
        }
    }

    /// The result of call `node` (of skill `name`) as the run's saved state
    /// holds it, when an earlier run of this job completed it.
    fn replayed(&self, node: &str, name: &str) -> Option<SkillResult> {
        let state = crate::sync::lock(&self.graph);
        if !state.visited_nodes.iter().any(|v| v == node) {
            return None;
        }
        let data = state.intermediate.get(node)?.clone();
        let ran = state.nodes.iter().rev().find(|n| n.node == node);
        Some(SkillResult {
            success: true,
            job_id: ran.map_or_else(|| self.job_id.clone(), |n| n.job_id.clone()),
            trace_id: self.trace_id.clone(),
            skill: std::sync::Arc::from(name),
            data: data.into(),
            artifacts: Vec::new(),
            metrics: Default::default(),
            next_action: crate::model::result::NextAction::Complete,
            notes: Vec::new(),
            started_at: std::time::SystemTime::now(),
            replayed: true,
            pipeline_steps: Vec::new(),
            approval: None,
        })
    }

    /// Note a skill call, ended now, as a node of the run's graph: the
    /// `n`-th call of skill `name` is node `{name}#{n}`.
    fn note(
        &self,
        node: &str,
        job_id: Id,
        started_at: std::time::SystemTime,
        result: &Result<SkillResult, InvokeError>,
    ) {
        let now = std::time::SystemTime::now();
        crate::sync::lock(&self.graph).note(node, job_id, started_at, now, result);
    }

    /// Skill calls that failed so far in this run.
    pub fn error_count(&self) -> u32 {
        self.errors.load(Ordering::Relaxed)
    }

    /// The caller the agent's skill calls carry.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// Whether the run is a dry run: skills run with it, so none writes.
    pub fn dry_run(&self) -> bool {
        self.dry_run
    }

    /// The id of this run: the parent of every skill job it starts.
    pub fn job_id(&self) -> &str {
        self.job_id.as_str()
    }

    /// The trace every skill job of this run shares.
    pub fn trace_id(&self) -> &str {
        self.trace_id.as_str()
    }
}
