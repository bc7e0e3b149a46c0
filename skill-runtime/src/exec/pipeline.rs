//! Pipeline skills: ordered steps, each a job of its own through the whole
//! invocation pipeline (authorization, rate limits, schemas, approvals and
//! records apply per step), the first failure stopping the run.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::SystemTime;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use skill_core::failure::{FailureMode, FailureModes};
use skill_core::manifest::{Manifest, PipelineStep, TargetKind};

use crate::contract::invocation::{Invocation, JobRunner, PipelineRun};
use crate::contract::skill::Ctx;
use crate::contract::skill::Skill;
use crate::model::envelope::JobEnvelope;
use crate::model::graph::{GraphJob, GraphState, GraphStatus};
use crate::model::record::{RunStatus, StepRun};
use crate::model::time::parse_time;
use crate::registry::rules::pipeline::Reference;
use crate::sync::lock;

/// Why a pipeline stopped: the step that failed and its error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineFailed {
    message: String,
}

impl fmt::Display for PipelineFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PipelineFailed {}

static PIPELINE_FAILED: FailureMode = FailureMode {
    code: "pipeline_failed",
    description: "Pipeline execution failed.",
    retryable: false,
};

impl FailureModes for PipelineFailed {
    const FAILURE_MODES: &'static [FailureMode] = &[PIPELINE_FAILED];

    fn failure_mode(&self) -> &'static FailureMode {
        &PIPELINE_FAILED
    }
}

fn failed(message: String) -> PipelineFailed {
    PipelineFailed { message }
}

/// The handler `#[pipeline]` generates: run the steps of `S`'s manifest.
pub async fn run<S: Skill>(ctx: Ctx<S>, input: S::Input) -> Result<S::Output, PipelineFailed>
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
    let Some(PipelineRun { jobs, steps }) = inv.pipeline.get().map(|p| &**p) else {
        return Err(failed(format!(
            "pipeline `{}` runs through a runtime (`Runtime::invoke`), not as a direct call",
            m.name
        )));
    };
    let run = inv.job_id.to_string();
    let mut state = resumed(inv, m, &input, jobs.load_run(&run).await);
    let waits = waits(m);
    let mut finished = vec![false; m.steps.len()];
    let mut done: Vec<(&'static str, Arc<Value>)> = Vec::with_capacity(m.steps.len());
    let mut outputs = Map::new();
    loop {
        let ready: Vec<usize> = (0..m.steps.len())
            .filter(|&i| !finished[i] && waits[i].iter().all(|&w| finished[w]))
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
        // The steps whose waits are over run at the same time.
        let batch = ready.into_iter().map(|i| {
            let job = step_job(inv, &run, &state, &input, &done, &m.steps[i]);
            async move {
                let job_id = job.job_id.clone();
                let reference = job.reference();
                let started_at = SystemTime::now();
                let result = jobs.run_job(job).await;
                (i, job_id, reference, started_at, SystemTime::now(), result)
            }
        });
        let results = join_all(batch.collect()).await;
        let mut failure = None;
        for (i, job_id, reference, started_at, completed_at, result) in results {
            let step = &m.steps[i];
            let t = step.target;
            state.note(step.id, job_id.clone(), started_at, completed_at, &result);
            match result {
                Ok(r) => {
                    lock(steps).push(StepRun {
                        id: Cow::Borrowed(step.id),
                        skill_name: r.skill.clone(),
                        job_id,
                        status: RunStatus::Succeeded,
                        output: Some(r.data.clone()),
                        error: None,
                        completed_at,
                    });
                    collect(step.outputs, &r.data, &mut outputs);
                    done.push((step.id, r.data));
                    finished[i] = true;
                }
                Err(e) => {
                    let what = match t.kind {
                        TargetKind::Skill => "skill",
                        TargetKind::Op => "op",
                    };
                    let message = format!(
                        "step `{}` ({what} `{reference}`) failed: {e} [{}]",
                        step.id,
                        e.code()
                    );
                    // Named as a successful step is: `name@version` of what
                    // ran, or the reference as written when nothing resolved.
                    let skill_name = jobs
                        .label_of(t.kind, t.name, t.version)
                        .unwrap_or_else(|| Arc::from(reference.as_str()));
                    lock(steps).push(StepRun {
                        id: Cow::Borrowed(step.id),
                        skill_name,
                        job_id,
                        status: RunStatus::Failed,
                        output: None,
                        error: Some(e.to_string()),
                        completed_at,
                    });
                    failure.get_or_insert((step.id, message));
                }
            }
        }
        if let Some((node, message)) = failure {
            state.current_node = Some(node.to_owned());
            state.status = GraphStatus::Failed;
            save(&**jobs, &state).await;
            return Err(failed(message));
        }
        // The first step not completed, in the order written.
        state.current_node = (0..m.steps.len())
            .find(|&i| !finished[i])
            .map(|i| m.steps[i].id.to_owned());
        save(&**jobs, &state).await;
    }
    let output = Value::Object(outputs);
    state.output = Some(output.clone());
    state.status = GraphStatus::Succeeded;
    state.current_node = None;
    save(&**jobs, &state).await;
    Ok(output)
}

/// Each step's waits, as indexes ([`skill_core::steps`]: `after(...)`, or
/// the step written before; the macro refused any other).
fn waits(m: &Manifest) -> Vec<Vec<usize>> {
    let ids: Vec<&str> = m.steps.iter().map(|s| s.id).collect();
    (0..m.steps.len())
        .map(|i| {
            skill_core::steps::waits(&ids, i, m.steps[i].after)
                .into_iter()
                .filter_map(|w| match w {
                    skill_core::steps::Wait::On(j) => Some(j),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// A completed step's output, from the state, with its step record as its
/// run left it.
fn reused(
    jobs: &dyn JobRunner,
    steps: &std::sync::Mutex<Vec<StepRun>>,
    state: &GraphState,
    inv: &Invocation,
    step: &PipelineStep,
) -> Arc<Value> {
    let t = step.target;
    let output = Arc::new(
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
    done: &[(&'static str, Arc<Value>)],
    step: &PipelineStep,
) -> JobEnvelope {
    let mut params = Map::new();
    for (field, source) in step.inputs {
        let value = match Reference::parse(source) {
            Some(Reference::Input(f)) => input.get(f),
            Some(Reference::Step(id, f)) => done
                .iter()
                .find(|(d, _)| *d == id)
                .and_then(|(_, out)| out.get(f)),
            // The macro and the registry reject anything else.
            _ => None,
        };
        // An absent optional field stays absent.
        if let Some(v) = value {
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
    m: &Manifest,
    input: &Value,
    saved: Result<Option<GraphState>, String>,
) -> GraphState {
    let skill = format!("{}@{}", m.name, m.version);
    match saved {
        // Only a state of this very pipeline: another version's steps may
        // have other ids and other outputs.
        Ok(Some(mut s)) if s.job.skill == skill => {
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
                    tracing::warn!(run = %inv.job_id, saved = %s.job.skill, now = %skill, "the run's saved state is another pipeline's; the run starts from its first step")
                }
                Ok(None) => {}
            }
            let job = GraphJob {
                job_id: inv.job_id.clone(),
                trace_id: inv.trace_id.clone(),
                skill,
                intent: inv.intent.clone(),
            };
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
