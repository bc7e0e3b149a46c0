//! Pipeline skills: ordered steps, each a job of its own through the whole
//! invocation pipeline (authorization, rate limits, schemas, approvals and
//! records apply per step), the first failure stopping the run.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use skill_core::failure::{FailureMode, FailureModes};
use skill_core::manifest::{Manifest, TargetKind};

use crate::contract::invocation::{Invocation, PipelineRun};
use crate::contract::skill::Ctx;
use crate::contract::skill::Skill;
use crate::model::envelope::JobEnvelope;
use crate::model::record::{RunStatus, StepRun};
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
    let mut done: Vec<(&'static str, Arc<Value>)> = Vec::with_capacity(m.steps.len());
    let mut outputs = Map::new();
    for step in m.steps {
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
        // A step is held to the pipeline's limits, and sees what retrieval
        // found for it.
        let mut job = JobEnvelope::new(t.name, Value::Object(params))
            .with_caller(inv.caller.clone())
            .with_constraints(inv.constraints.clone());
        job.rag_context = inv.rag_context.clone();
        job.kind = t.kind;
        job.version = t.version.map(std::borrow::Cow::Borrowed);
        job.trace_id = inv.trace_id.clone();
        job.parent_job_id = Some(inv.job_id.clone());
        let job_id = job.job_id.clone();
        let reference = job.reference();
        let result = jobs.run_job(job).await;
        let completed_at = SystemTime::now();
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
                for (field, dest) in step.outputs {
                    if let (Some(Reference::Output(name)), Some(v)) =
                        (Reference::parse(dest), r.data.get(*field))
                    {
                        outputs.insert(name.to_owned(), v.clone());
                    }
                }
                done.push((step.id, r.data));
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
                // Named as a successful step is: `name@version` of what ran,
                // or the reference as written when nothing resolved.
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
                return Err(failed(message));
            }
        }
    }
    Ok(Value::Object(outputs))
}
