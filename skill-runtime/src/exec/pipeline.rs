//! Pipeline skills: steps, each a job of its own through the whole
//! invocation pipeline (authorization, rate limits, schemas, approvals and
//! records apply per step). Steps whose waits are over run together; a
//! guard skips a step; a step retries on its own terms; the first failure
//! runs the error handlers of the steps that failed and stops the run.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::SystemTime;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use skill_core::manifest::{Manifest, PipelineStep, TargetKind};

use crate::contract::invocation::{Invocation, JobRunner, PipelineRun};
use crate::contract::skill::Ctx;
use crate::contract::skill::Skill;
use crate::model::data::Data;
use crate::model::envelope::JobEnvelope;
use crate::model::error::InvokeError;
use crate::model::graph::{GraphState, GraphStatus};
use crate::model::id::Id;
use crate::model::record::{RunStatus, StepRun};
use crate::model::result::{NextAction, SkillResult};
use crate::model::time::parse_time;
use crate::sync::lock;
use skill_core::steps::{Plan, Reference, Shape, on};

pub use crate::exec::provided::PipelineFailed;

fn failed(message: String) -> PipelineFailed {
    PipelineFailed::new(message)
}

/// The handler `#[pipeline]` generates: run the steps of `S`'s manifest.
pub async fn run<S: Skill>(ctx: Ctx<'_, S>, input: S::Input) -> Result<S::Output, PipelineFailed>
where
    S::Input: Serialize,
    S::Output: DeserializeOwned,
{
    let m = S::MANIFEST;
    let input = serde_json::to_value(&input)
        .map_err(|e| failed(format!("the pipeline's input does not serialize: {e}")))?;
    let output = run_steps(ctx.invocation(), m, input).await?;
    serde_json::from_value(output).map_err(|e| {
        failed(format!(
            "the steps' outputs do not make a `{}` output: {e}",
            m.name
        ))
    })
}

async fn run_steps(inv: &Invocation, m: &Manifest, input: Value) -> Result<Value, PipelineFailed> {
    let Some(PipelineRun {
        jobs,
        steps,
        envelope,
    }) = inv.pipeline.get().map(|p| &**p)
    else {
        return Err(failed(format!(
            "pipeline `{}` runs through a runtime (`Runtime::invoke`), not as a direct call",
            m.name
        )));
    };
    let run = inv.job_id.to_string();
    let mut state = resumed(inv, envelope, m, &input, jobs.load_run(&run).await);
    let plan = plan(m);
    let flow: Vec<usize> = (0..m.steps.len())
        .filter(|&i| !m.steps[i].is_handler())
        .collect();
    let mut finished = vec![false; m.steps.len()];
    let mut done: Vec<(&'static str, Data)> = Vec::with_capacity(m.steps.len());
    let mut outputs = Map::new();
    loop {
        let ready: Vec<usize> = flow
            .iter()
            .copied()
            .filter(|&i| !finished[i] && on(&plan.waits[i]).iter().all(|&w| finished[w]))
            .collect();
        if ready.is_empty() {
            break;
        }
        // Completed by an earlier run of this job (its worker died, or it
        // was retried): its output is in the state, and it does not run again.
        let kept: Vec<usize> = ready
            .iter()
            .copied()
            .filter(|&i| state.visited_nodes.iter().any(|v| v == m.steps[i].id))
            .collect();
        if !kept.is_empty() {
            for i in kept {
                let output = reused(&**jobs, steps, &state, inv, &m.steps[i]);
                collect(m.steps[i].outputs, &output, &mut outputs);
                done.push((m.steps[i].id, output));
                finished[i] = true;
            }
            continue;
        }
        // A step whose guard does not hold is skipped: it is over, and what
        // it would have written is absent.
        let (run_now, skipped): (Vec<usize>, Vec<usize>) = ready
            .into_iter()
            .partition(|&i| guard_holds(&m.steps[i], &input, &done));
        for &i in &skipped {
            skip(inv, steps, &mut state, &m.steps[i]);
            finished[i] = true;
        }
        if run_now.is_empty() {
            continue;
        }
        // The steps whose waits are over run at the same time.
        let batch = run_now.into_iter().map(|i| {
            let step = &m.steps[i];
            let job = || step_job(inv, &run, &state, &input, &done, None, step);
            async move { (i, attempts(&**jobs, job, step.retries).await) }
        });
        let results = join_all(batch.collect()).await;
        let mut failures: Vec<(usize, String, InvokeError)> = Vec::new();
        for (i, tries) in results {
            let step = &m.steps[i];
            let last = tries.len() - 1;
            for (k, t) in tries.into_iter().enumerate() {
                noted(&**jobs, steps, &mut state, step, &t);
                if k < last {
                    state.retry_count += 1;
                }
                match t.result {
                    Ok(r) => {
                        collect(step.outputs, &r.data, &mut outputs);
                        done.push((step.id, r.data));
                        finished[i] = true;
                    }
                    Err(e) => {
                        if k == last {
                            failures.push((i, t.reference, e));
                        }
                    }
                }
            }
        }
        if let Some((first, reference, e)) = failures.first() {
            let step = &m.steps[*first];
            let what = match step.target.kind {
                TargetKind::Skill => "skill",
                TargetKind::Op => "op",
            };
            let mut message = format!(
                "step `{}` ({what} `{reference}`) failed: {e} [{}]",
                step.id,
                e.code()
            );
            state.current_node = Some(step.id.to_owned());
            save(&**jobs, &state).await;
            let handled = handle(inv, &run, &mut state, &input, &done, &plan, m, &failures).await;
            for (h, result) in handled {
                match result {
                    Ok(()) => message.push_str(&format!("; error handler `{h}` ran")),
                    Err(e) => message.push_str(&format!("; error handler `{h}` failed too: {e}")),
                }
            }
            state.status = GraphStatus::Failed;
            save(&**jobs, &state).await;
            return Err(failed(message));
        }
        // The first step not completed, in the order written.
        state.current_node = flow
            .iter()
            .find(|&&i| !finished[i])
            .map(|&i| m.steps[i].id.to_owned());
        save(&**jobs, &state).await;
    }
    let output = Value::Object(outputs);
    state.output = Some(output.clone());
    state.status = GraphStatus::Succeeded;
    state.current_node = None;
    save(&**jobs, &state).await;
    Ok(output)
}

/// One run of a step's job.
struct Try {
    job_id: Id,
    reference: String,
    started_at: SystemTime,
    completed_at: SystemTime,
    result: Result<SkillResult, InvokeError>,
}

/// Run a step's job (made by `job`), and again up to `retries` more times
/// while it fails with an error worth retrying; every try, in order. The
/// tries share the step's idempotency key, which a failure releases.
async fn attempts(jobs: &dyn JobRunner, job: impl Fn() -> JobEnvelope, retries: u32) -> Vec<Try> {
    let mut tries = Vec::new();
    loop {
        let job = job();
        let job_id = job.job_id.clone();
        let reference = job.reference();
        let started_at = SystemTime::now();
        let result = jobs.run_job(job).await;
        let again = matches!(&result, Err(e) if e.next_action() == NextAction::Retry)
            && tries.len() < retries as usize;
        tries.push(Try {
            job_id,
            reference,
            started_at,
            completed_at: SystemTime::now(),
            result,
        });
        if !again {
            return tries;
        }
    }
}

/// Note a step's try in the run's state and in its step records.
fn noted(
    jobs: &dyn JobRunner,
    steps: &Mutex<Vec<StepRun>>,
    state: &mut GraphState,
    step: &PipelineStep,
    t: &Try,
) {
    state.note(
        step.id,
        t.job_id.clone(),
        t.started_at,
        t.completed_at,
        &t.result,
    );
    record(jobs, steps, step, t);
}

/// Add a step's try to the pipeline's step records, named `name@version`
/// of what ran, or the reference as written when nothing resolved.
fn record(jobs: &dyn JobRunner, steps: &Mutex<Vec<StepRun>>, step: &PipelineStep, t: &Try) {
    let target = step.target;
    let status = RunStatus::of(&t.result);
    let (output, error, skill_name) = match &t.result {
        Ok(r) => (Some(r.data.clone()), None, r.skill.clone()),
        Err(e) => (
            None,
            Some(e.to_string()),
            jobs.label_of(target.kind, target.name, target.version)
                .unwrap_or_else(|| Arc::from(t.reference.as_str())),
        ),
    };
    lock(steps).push(StepRun {
        id: Cow::Borrowed(step.id),
        skill_name,
        job_id: t.job_id.clone(),
        status,
        output,
        error,
        completed_at: t.completed_at,
    });
}

/// A step whose guard did not hold, in the records and the state.
fn skip(
    inv: &Invocation,
    steps: &Mutex<Vec<StepRun>>,
    state: &mut GraphState,
    step: &PipelineStep,
) {
    let now = SystemTime::now();
    state.skip(step.id, now);
    lock(steps).push(StepRun {
        id: Cow::Borrowed(step.id),
        skill_name: Arc::from(step.target.name),
        job_id: inv.job_id.clone(),
        status: RunStatus::Skipped,
        output: None,
        error: None,
        completed_at: now,
    });
}

/// Run the error handlers of the steps that failed (in the order written,
/// one after the other), each with the first failure among its steps as
/// `$error`; each handler's id and whether it succeeded.
#[allow(clippy::too_many_arguments)]
async fn handle(
    inv: &Invocation,
    run: &str,
    state: &mut GraphState,
    input: &Value,
    done: &[(&'static str, Data)],
    plan: &Plan,
    m: &Manifest,
    failures: &[(usize, String, InvokeError)],
) -> Vec<(&'static str, Result<(), String>)> {
    let Some(PipelineRun { jobs, steps, .. }) = inv.pipeline.get().map(|p| &**p) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (h, step) in m.steps.iter().enumerate().filter(|(_, s)| s.is_handler()) {
        let handled = plan.handled(h);
        let Some((failed, _, e)) = failures.iter().find(|(f, _, _)| handled.contains(f)) else {
            continue;
        };
        let error = serde_json::json!({
            "step": m.steps[*failed].id,
            "message": e.to_string(),
            "code": e.code(),
        });
        let job = || step_job(inv, run, state, input, done, Some(&error), step);
        let tries = attempts(&**jobs, job, step.retries).await;
        let mut outcome = Err(String::new());
        for t in tries {
            noted(&**jobs, steps, state, step, &t);
            outcome = t
                .result
                .as_ref()
                .map(|_| ())
                .map_err(|e| format!("{e} [{}]", e.code()));
        }
        out.push((step.id, outcome));
    }
    out
}

/// Whether `step` runs: it has no guard, or its boolean has the value the
/// guard asks for (an absent value runs neither `when` nor `unless`).
fn guard_holds(step: &PipelineStep, input: &Value, done: &[(&'static str, Data)]) -> bool {
    let Some(g) = step.guard else { return true };
    read(g.source, input, done, None) == Some(&Value::Bool(g.runs_if))
}

/// The value a reference reads: the run's input, a done step's output, or
/// (for an error handler) the failure.
fn read<'v>(
    source: &str,
    input: &'v Value,
    done: &'v [(&'static str, Data)],
    error: Option<&'v Value>,
) -> Option<&'v Value> {
    match Reference::parse(source) {
        Some(Reference::Input(f)) => input.get(f),
        Some(Reference::Step(id, f)) => done
            .iter()
            .find(|(d, _)| *d == id)
            .and_then(|(_, out)| out.get(f)),
        Some(Reference::Error(f)) => error.and_then(|e| e.get(f)),
        // The macro and the registry reject anything else.
        Some(Reference::Output(_)) | None => None,
    }
}

/// The waits and reads of `m`'s steps ([`skill_core::steps`]: the macro
/// refused any other shape).
fn plan(m: &Manifest) -> Plan {
    let ids: Vec<&str> = m.steps.iter().map(|s| s.id).collect();
    let shapes: Vec<Shape<'_>> = m
        .steps
        .iter()
        .map(|s| Shape {
            after: s.after,
            on_error: s.is_handler().then_some(s.on_error),
        })
        .collect();
    Plan::new(&ids, &shapes)
}

/// A completed step's output, from the state, with its step record as its
/// run left it.
fn reused(
    jobs: &dyn JobRunner,
    steps: &std::sync::Mutex<Vec<StepRun>>,
    state: &GraphState,
    inv: &Invocation,
    step: &PipelineStep,
) -> Data {
    let t = step.target;
    let output = Data::from(
        state
            .intermediate
            .get(step.id)
            .cloned()
            .unwrap_or(Value::Null),
    );
    let skill_name = jobs
        .label_of(t.kind, t.name, t.version)
        .unwrap_or_else(|| Arc::from(t.name));
    // As the step's run recorded it: its job, and when it completed.
    let ran = state.nodes.iter().rev().find(|n| n.node == step.id);
    let job_id = ran.map_or_else(|| inv.job_id.clone(), |n| n.job_id.clone());
    let completed_at = ran
        .and_then(|n| parse_time(&n.completed_at).ok())
        .unwrap_or_else(SystemTime::now);
    lock(steps).push(StepRun {
        id: Cow::Borrowed(step.id),
        skill_name,
        job_id,
        status: RunStatus::Succeeded,
        output: Some(output.clone()),
        error: None,
        completed_at,
    });
    output
}

/// The job of `step`: its input read from the run's input and the outputs
/// of the steps done, held to what is left of the run's limits, seeing what
/// retrieval found. Its key is the run's and the step's: a step run again
/// after its worker died is deduplicated by the step's own idempotency (a
/// success is replayed, a lock held by the dead worker is taken over).
fn step_job(
    inv: &Invocation,
    run: &str,
    state: &GraphState,
    input: &Value,
    done: &[(&'static str, Data)],
    error: Option<&Value>,
    step: &PipelineStep,
) -> JobEnvelope {
    let mut params = Map::new();
    for (field, source) in step.inputs {
        // An absent optional field stays absent.
        if let Some(v) = read(source, input, done, error) {
            params.insert((*field).to_owned(), v.clone());
        }
    }
    let t = step.target;
    let mut constraints = inv.constraints.clone();
    constraints.max_tokens = state.budget.tokens_remaining;
    constraints.max_docs = inv
        .constraints
        .max_docs
        .saturating_sub(state.budget.docs_retrieved);
    let mut job = JobEnvelope::new(t.name, Value::Object(params))
        .with_caller(inv.caller.clone())
        .with_constraints(constraints)
        .with_idempotency_key(format!("{run}/{}", step.id));
    job.rag_context = inv.rag_context.clone();
    job.kind = t.kind;
    job.version = t.version.map(std::borrow::Cow::Borrowed);
    job.trace_id = inv.trace_id.clone();
    job.parent_job_id = Some(inv.job_id.clone());
    job
}

/// Every future of `futures`, polled together; their outputs in order.
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, out) in futures.iter_mut().zip(outputs.iter_mut()) {
            if out.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => *out = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// The state a run starts from: the one saved by an earlier run of this job
/// (taken up again: a retry, or a worker that took the job over), or a new
/// one. A store that cannot be read starts the run afresh (its nodes' keys
/// still deduplicate what ran).
fn resumed(
    inv: &Invocation,
    envelope: &JobEnvelope,
    m: &Manifest,
    input: &Value,
    saved: Result<Option<GraphState>, String>,
) -> GraphState {
    let skill = format!("{}@{}", m.name, m.version);
    match saved {
        // Only a state of this very pipeline: another version's steps may
        // have other ids and other outputs.
        Ok(Some(mut s)) if s.job.reference() == skill => {
            s.retry_count += 1;
            s.status = GraphStatus::Running;
            s.current_node = s.errors.last().map(|e| e.node.clone()).or(s.current_node);
            s
        }
        other => {
            match other {
                Err(e) => {
                    tracing::warn!(run = %inv.job_id, error = %e, "the run store cannot be read; the run starts from its first step")
                }
                Ok(Some(s)) => {
                    tracing::warn!(run = %inv.job_id, saved = %s.job.reference(), now = %skill, "the run's saved state is another pipeline's; the run starts from its first step")
                }
                Ok(None) => {}
            }
            // The envelope as the run's job, named by the pipeline it runs.
            let mut job = envelope.clone();
            job.skill = m.name.into();
            job.version = Some(m.version.into());
            let mut state = GraphState::new(job, input.clone(), inv.constraints.max_tokens);
            state.current_node = m.steps.first().map(|s| s.id.to_owned());
            state.rag_context = inv
                .rag_context
                .as_ref()
                .and_then(|r| serde_json::to_value(r).ok());
            state
        }
    }
}

/// Save the run's state; a store that refuses it costs the run its
/// resumability, not its result.
async fn save(jobs: &dyn JobRunner, state: &GraphState) {
    if let Err(e) = jobs.save_run(state).await {
        tracing::warn!(run = %state.job.job_id, error = %e, "the run's state was not saved");
    }
}

/// Copy a step's output fields to the pipeline's outputs they map to.
fn collect(map: &[(&str, &str)], data: &Value, outputs: &mut Map<String, Value>) {
    for (field, dest) in map {
        if let (Some(Reference::Output(name)), Some(v)) = (Reference::parse(dest), data.get(*field))
        {
            outputs.insert(name.to_owned(), v.clone());
        }
    }
}
