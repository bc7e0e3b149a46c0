//! The path of one job, top to bottom: the runtime's entry points, then the
//! stages (resolve, authorize, rate limit, validate input, preconditions,
//! idempotency, approval, execute with timeout, retries and panics caught,
//! budget, validate output, postconditions with rollback, validation rules),
//! then the record. The order is the cheapest refusal first: nothing is
//! claimed, asked of a person or run for a caller who may not, over the rate,
//! or with input that cannot pass. Each stage is a function of
//! [`stages`](crate::exec::stages) and records itself, with its outcome and
//! duration, in the job's state.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use skill_core::manifest::{Kind, Severity};

use crate::contract::boxed::Boxed;
use crate::contract::invocation::{Fence, Invocation, JobRunner, PipelineRun};
use crate::contract::skill::Skill;
use crate::contract::watch::Watch;
use crate::exec::policy::idempotency::Claimed;
use crate::exec::runtime::Runtime;
use crate::exec::spare;
use crate::exec::stages::idempotency::Keyed;
use crate::exec::stages::output::After;
use crate::exec::stages::{
    approval, authorize, execute, expiry, idempotency, input, output, rate_limit, resolve,
};
use crate::exec::state::{Done, Refused, State};
use crate::model::caller::Caller;
use crate::model::envelope::JobEnvelope;
use crate::model::error::InvokeError;
use crate::model::graph::GraphState;
use crate::model::record::RuleNote;
use crate::model::record::{Stage, StageOutcome};
use crate::model::result::SkillResult;
use crate::spare::Spared;
use crate::sync::BoxFuture;
use crate::sync::lock;

impl Runtime {
    /// Run a job through every stage.
    ///
    /// The job starts (its clock, its ids' span) when this is called, not when
    /// the future is first polled.
    pub fn invoke(
        &self,
        job: JobEnvelope,
    ) -> impl Future<Output = Result<SkillResult, InvokeError>> + Send + '_ {
        self.run(self.outside(job, None, None), result_of)
    }

    /// [`Runtime::invoke`], watched: the handler's progress reports go to
    /// `watch`'s callback, and cancelling its [`Cancel`](crate::Cancel)
    /// stops the job at the handler's next await (before the handler starts,
    /// it never runs). A cancelled job fails `cancelled`, is not retried,
    /// gives its idempotency key back, and its record says `cancelled`.
    pub fn invoke_watched(
        &self,
        job: JobEnvelope,
        watch: Watch,
    ) -> impl Future<Output = Result<SkillResult, InvokeError>> + Send + '_ {
        let st = self.outside(job, None, None);
        self.watched(st, watch)
    }

    /// A job a handler starts through the runtime's own path (an agent's
    /// skill call): not refused for being inside a handler.
    pub(crate) fn invoke_nested(
        &self,
        job: JobEnvelope,
        watch: Watch,
    ) -> impl Future<Output = Result<SkillResult, InvokeError>> + Send + '_ {
        let st = self.state(job, None, None);
        self.watched(st, watch)
    }

    fn watched(
        &self,
        mut st: Box<State>,
        watch: Watch,
    ) -> impl Future<Output = Result<SkillResult, InvokeError>> + Send + '_ {
        let cancel = watch.cancel.clone();
        // The state was made just now: nothing else holds its invocation.
        if let Some(inv) = Arc::get_mut(&mut st.inv) {
            inv.watch = watch;
        }
        if let Some(cancel) = cancel {
            cancel.attach(Arc::<Invocation>::clone(&st.inv));
        }
        self.run(st, result_of)
    }

    /// Run skill `reference` (`name` or `name@version`) on `params`.
    pub async fn invoke_json(
        &self,
        reference: &str,
        params: Value,
        caller: Caller,
    ) -> Result<SkillResult, InvokeError> {
        self.invoke(JobEnvelope::for_reference(reference, params).with_caller(caller))
            .await
    }

    /// Run `job` with params given as JSON text: the size limit applies to
    /// the text before it is read, and text over it, or not JSON,
    /// is refused by the job's input stage like any other bad input (after
    /// the cheaper stages: an unknown skill or a caller who may not run it is
    /// told so first). An object is decoded from its fields' text, and the
    /// record keeps the text, unless a stage needs the params as a value.
    #[inline]
    pub fn invoke_text(
        &self,
        mut job: JobEnvelope,
        text: &str,
    ) -> impl Future<Output = Result<SkillResult, InvokeError>> + Send + '_ {
        let limits = &self.inner.limits;
        let len = text.len();
        job.params = Value::Null;
        let (text, refused) = match text.len() > limits.max_input_bytes {
            true => (None, Some(Refused::TooLarge)),
            // Copied into the thread's spare buffer when it fits
            // (`exec/spare.rs`).
            false => (Some(spare::params_text(text)), None),
        };
        let mut st = self.outside(job, None, text);
        st.text_len = Some(len);
        st.refused = refused;
        self.run(st, result_of)
    }

    /// Run skill `S` on a typed input, in-process. Every policy applies; what
    /// the types guarantee is not checked again: the input and the output are
    /// not decoded, and each side is checked only against what its schema says
    /// beyond its type ([`residual`](crate::schema::residual::residual):
    /// lengths, ranges, formats), as on every call.
    pub fn call<S: Skill>(
        &self,
        input: S::Input,
    ) -> impl Future<Output = Result<S::Output, InvokeError>> + Send + '_
    where
        S::Input: Serialize,
        S::Output: DeserializeOwned,
    {
        self.call_with::<S>(input, Caller::default())
    }

    /// [`Runtime::call`] on behalf of `caller`.
    ///
    /// Not an `async fn`, like [`Runtime::invoke`]: the job's future is returned
    /// as it is, not wrapped (and copied) in one more layer.
    pub fn call_with<S: Skill>(
        &self,
        input: S::Input,
        caller: Caller,
    ) -> impl Future<Output = Result<S::Output, InvokeError>> + Send + '_
    where
        S::Input: Serialize,
        S::Output: DeserializeOwned,
    {
        let m = S::MANIFEST;
        // An input that does not serialize fails its validation step, with a
        // record like any other bad input.
        let (params, refused) = match serde_json::to_value(&input) {
            Ok(params) => (params, None),
            Err(e) => (
                Value::Null,
                Some(Refused::Unserializable(format!(
                    "the input does not serialize: {e}"
                ))),
            ),
        };
        let job = JobEnvelope::of(
            Cow::Borrowed(m.name),
            Some(Cow::Borrowed(m.version)),
            params,
            caller,
        );
        let mut st = self.outside(job, Some(Boxed::new(input)), None);
        st.refused = refused;
        self.run(st, typed_output::<S>)
    }

    pub(crate) fn state(
        &self,
        job: JobEnvelope,
        typed: Option<Boxed>,
        text: Option<String>,
    ) -> Box<State> {
        State::new(&self.inner.resources, job, typed, text)
    }

    /// The state of a job started through a public entry point: marked when
    /// a handler runs on this thread (a runtime reached from a handler, a
    /// static or a helper, would run any skill with no `calls(...)`
    /// checked), and then refused when it resolves.
    fn outside(&self, job: JobEnvelope, typed: Option<Boxed>, text: Option<String>) -> Box<State> {
        let mut st = self.state(job, typed, text);
        st.from_handler = crate::contract::invocation::in_handler();
        st
    }

    /// The whole job, boxed: the future and the job's state ([`State::new`])
    /// are each a heap block of their own, so that every move of the job (into
    /// `block_on`, into a task, through each entry point) copies a pointer, not
    /// the future. Both blocks stay within the sizes the allocator serves from
    /// its per-thread cache (a unit test checks): a larger block would take
    /// the allocator's slow path on every job that finds no spare block of
    /// its thread to use ([`Spared`], and `State::let_go`).
    ///
    /// `pick` turns what the job produced into what the entry point returns, so
    /// that no entry point needs an `async` layer of its own around this one.
    /// A function item, not a pointer: inlined, it takes the result out of
    /// the outcome where it lies instead of through a call's copies.
    fn run<T: 'static, P: FnOnce(Done) -> Result<T, InvokeError> + Send + 'static>(
        &self,
        mut st: Box<State>,
        pick: P,
    ) -> Spared<impl Future<Output = Result<T, InvokeError>> + Send + '_> {
        Spared::new(async move {
            let mut result = self.run_stages(&mut st).await;
            // Finished in place: the outcome is not moved in and out again.
            self.finish(st, &mut result);
            result.and_then(pick)
        })
    }

    /// Resolve, then every stage up to and including idempotency, then the
    /// rest in [`Runtime::guarded`] (through [`Runtime::keyed`] when the job
    /// has an idempotency key, whose store shares the result): the job's
    /// whole outcome, or its replay.
    async fn run_stages(&self, st: &mut State) -> Result<Done, InvokeError> {
        let inner = &*self.inner;
        let i = resolve::resolve(&inner.registry, st)?;
        let skill = &inner.registry.skills()[i];
        let state = &inner.skills[i];
        let m = skill.entry.manifest;

        expiry::check(m.name, st)?;
        authorize::caller(m, st)?;
        match (&state.limiter, &inner.shared_rates) {
            // Boxed: only rate-limited skills of a fleet wait here.
            (Some(_), Some(shared)) => {
                Box::pin(rate_limit::shared_rate(&**shared, m, skill.label(), st)).await?
            }
            (limiter, _) => rate_limit::local_rate(m, limiter.as_ref(), st)?,
        }
        let mut input = input::validate(inner.limits, skill, st)?;
        input::preconditions(skill, &input, st)?;

        let claimed = match idempotency::slot(m, state.effectful, st)? {
            None => None,
            // Boxed: only keyed jobs wait here, and its state would otherwise
            // widen every job's future.
            Some(slot) => {
                let store = &*inner.idempotency;
                match Box::pin(idempotency::claim(store, skill.label(), &slot, st)).await {
                    Keyed::Replayed(done) => return *done,
                    Keyed::Run(claimed) => {
                        let fence = Fence::new(slot, claimed.token());
                        let _ = st.inv.fence.set(fence);
                        Some(claimed)
                    }
                }
            }
        };
        match claimed {
            // One await of the rest of the job, so its state is laid out once.
            None => self.guarded(st, i, &mut input).await,
            // Boxed: the outcome is held while the store takes it, which would
            // otherwise widen every job's future.
            Some(claimed) => Box::pin(self.keyed(st, i, &mut input, claimed)).await,
        }
    }

    /// The rest of a keyed job: run it, then publish its outcome to the jobs
    /// waiting on its key.
    async fn keyed(
        &self,
        st: &mut State,
        i: usize,
        input: &mut Boxed,
        claimed: Box<dyn Claimed>,
    ) -> Result<Done, InvokeError> {
        let done = self.guarded(st, i, input).await;
        idempotency::publish(claimed, &done).await;
        done
    }

    /// Approval, execution, budget, output checks: the part of a job whose
    /// result is shared with jobs of the same idempotency key.
    ///
    /// The input is borrowed, not moved in: the handler takes it out of its
    /// box, and a box held by value in each of these futures would widen the
    /// job's by its size each time.
    async fn guarded(
        &self,
        st: &mut State,
        i: usize,
        input: &mut Boxed,
    ) -> Result<Done, InvokeError> {
        let inner = &*self.inner;
        let skill = &inner.registry.skills()[i];

        match inner.skills[i].approval {
            None => st.skip(Stage::Approval),
            // Boxed: only skills that need approval wait here, and the request's
            // state would otherwise widen every job's future.
            Some(reason) => {
                Box::pin(approval::approval(&*inner.approver, skill, reason, st)).await?
            }
        }

        if skill.entry.manifest.kind == Kind::Pipeline {
            // Set before the handler starts, which is the only reader.
            let envelope = st.envelope();
            let _ = st.inv.pipeline.set(Box::new(PipelineRun {
                jobs: Box::new(self.clone()),
                steps: Default::default(),
                envelope,
            }));
        }
        let output = execute::execute(inner.retry_base, skill, input, st).await;
        let report = st.inv.take_report();
        if let Some(p) = st.inv.pipeline.get() {
            st.pipeline_steps = std::mem::take(&mut *lock(&p.steps));
        }
        let output = match output {
            Ok(o) => {
                output::executed(st);
                o
            }
            Err(e) => {
                st.step(Stage::Execute, StageOutcome::Failed, None);
                return Err(e);
            }
        };

        output::budget(skill, &report, st)?;
        let data = output::encode(skill, &output, st)?;
        // Bound first: a borrow of the output must not live across the
        // rollback's await (the future would stop being `Send`).
        let after = output::after(skill, &output, st)?;
        let notes = match after {
            After::Held(notes) => notes,
            // Boxed: rare, and it would widen every job's future.
            After::Broke { failed, action } => {
                let broke = (failed, action);
                return Err(Box::pin(output::roll_back(
                    &inner.rollbacks,
                    &inner.resources,
                    skill,
                    broke,
                    data.value(),
                    st,
                ))
                .await);
            }
        };
        let mut notes = notes;
        if st.inv.constraints.dry_run
            && !skill.entry.manifest.side_effects.is_empty()
            && !st
                .inv
                .dry_run_read
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            notes.push(RuleNote {
                rule_id: Cow::Borrowed("dry_run_not_read"),
                severity: Severity::Warning,
                message: Cow::Owned(format!(
                    "skill `{}` declares side effects but did not ask ctx.dry_run() on this dry run: it may have changed something",
                    skill.name()
                )),
            });
        }
        Ok(Done {
            result: output::result(skill, data, report, notes, st),
            typed: Some(output),
        })
    }
}

/// A pipeline's steps run as jobs of their own on the runtime that runs the
/// pipeline.
impl JobRunner for Runtime {
    fn run_job(&self, job: JobEnvelope) -> BoxFuture<'_, Result<SkillResult, InvokeError>> {
        Box::pin(self.run(self.state(job, None, None), result_of))
    }

    fn load_run<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<GraphState>, String>> {
        self.inner.runs.load(run)
    }

    fn save_run<'a>(&'a self, state: &'a GraphState) -> BoxFuture<'a, Result<(), String>> {
        self.inner.runs.save(state)
    }

    fn label_of(
        &self,
        kind: skill_core::manifest::TargetKind,
        name: &str,
        version: Option<&str>,
    ) -> Option<Arc<str>> {
        let registry = &self.inner.registry;
        let i = registry.index_of_kind(kind, name, version).ok()?;
        Some(registry.skills()[i].shared_label())
    }
}

/// An untyped call's answer: the job's result.
#[inline]
fn result_of(done: Done) -> Result<SkillResult, InvokeError> {
    Ok(done.result)
}

/// A typed call's output: the handler's own value, or, when the result was
/// replayed from the idempotency store, the stored JSON decoded.
fn typed_output<S: Skill>(done: Done) -> Result<S::Output, InvokeError>
where
    S::Output: DeserializeOwned,
{
    match done.typed.and_then(Boxed::downcast::<S::Output>) {
        Some(output) => Ok(output),
        _ => serde_json::from_value(done.result.data.into_value()).map_err(|e| {
            InvokeError::Internal {
                skill: S::MANIFEST.name.to_owned(),
                message: format!("stored output does not decode: {e}"),
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::index::Registry;

    /// A job's future is one heap block, moved as a pointer (into `block_on`,
    /// into a task). The block must stay within the sizes glibc serves from its
    /// per-thread cache (the bound this test asserts): past that, each job's
    /// allocation takes the slow path. Rare paths (approval, idempotency, shared rate limits,
    /// rollback) are boxed so they do not widen it, and the job's state is a
    /// heap block of its own.
    #[test]
    fn a_jobs_future_is_one_small_heap_block() {
        let registry = Arc::new(Registry::build(vec![], vec![]).unwrap());
        let rt = Runtime::builder(registry).build().unwrap();
        let job = JobEnvelope::new("x", Value::Null);
        let run = rt.run(rt.state(job.clone(), None, None), result_of);
        assert!(run.size() <= 1_032, "{}", run.size());
        let invoke = rt.invoke(job);
        assert_eq!(size_of_val(&invoke), size_of::<usize>());
        assert!(size_of::<State>() <= 1_032, "{}", size_of::<State>());
    }
}
