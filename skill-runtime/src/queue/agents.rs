//! Agents on the queue: every [`Queue`] takes an agent's hand-overs
//! ([`Enqueue`]), and a worker that serves agents
//! ([`Worker::with_agents`](crate::queue::worker::Worker::with_agents)) runs
//! an agent's job through its [`AgentRunner`], its outcome stored like a
//! skill's: the run's output as the result's data, its notes (the
//! escalation, who decided, where it came from and went) with it; a failed
//! run as the error of its code.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use skill_core::agent::timeout_hours;

use crate::agent::escalate::Enqueue;
use crate::agent::outcome::{AgentError, AgentResult};
use crate::agent::runner::AgentRunner;
use crate::exec::policy::BoxFuture;
use crate::model::envelope::JobEnvelope;
use crate::model::error::InvokeError;
use crate::model::id::Id;
use crate::model::result::{Metrics, SkillResult};
use crate::queue::api::Queue;

impl<Q: Queue + ?Sized> Enqueue for Q {
    fn enqueue_job(&self, job: JobEnvelope) -> BoxFuture<'_, Result<Id, String>> {
        Box::pin(async move { self.enqueue(job).await.map_err(|e| e.to_string()) })
    }
}

/// Whether `job` names an agent of `runner`, and if a person must decide on
/// it first (a hand-over with `human_required`), how long they have.
pub(super) fn agent_job(runner: &AgentRunner, job: &JobEnvelope) -> Option<Option<Duration>> {
    runner.agents().get(&job.skill)?;
    Some(
        job.escalated_from
            .as_ref()
            .filter(|f| f.human_required)
            .map(|f| {
                runner
                    .hour_length()
                    .saturating_mul(timeout_hours(f.timeout_hours))
            }),
    )
}

/// An agent run's outcome, as a job's; `cancelled` when the job was
/// cancelled while it ran (a failed run is then `cancelled`).
pub(super) fn outcome(
    skill: &str,
    run: Result<AgentResult, AgentError>,
    started_at: SystemTime,
    cancelled: bool,
) -> Result<SkillResult, InvokeError> {
    let r = match run {
        Ok(r) => r,
        Err(AgentError::NotApproved { id, detail }) => {
            return Err(InvokeError::NotApproved {
                skill: id,
                reason: "human_required".to_owned(),
                detail,
            });
        }
        Err(e @ AgentError::UnknownAgent { .. }) => {
            return Err(InvokeError::UnknownSkill {
                reference: skill.to_owned(),
                hint: format!("; {e}"),
            });
        }
        Err(e @ AgentError::InsideHandler { .. }) => {
            return Err(InvokeError::Denied {
                skill: skill.to_owned(),
                reason: e.to_string(),
            });
        }
    };
    if let Some(f) = r.error {
        // The job's own cancellation, not a code an agent might also use.
        if cancelled {
            return Err(InvokeError::Cancelled { skill: r.agent });
        }
        return Err(InvokeError::Failed {
            skill: r.agent,
            code: f.code,
            retryable: f.retryable,
            message: f.message,
            attempts: 1,
        });
    }
    Ok(SkillResult {
        success: true,
        job_id: r.job_id,
        trace_id: r.trace_id,
        skill: Arc::from(r.agent),
        data: r.data.into(),
        artifacts: r.artifacts,
        metrics: Metrics {
            duration_ms: r.metrics.duration_ms,
            attempts: 1,
            ..Metrics::default()
        },
        next_action: r.next_action,
        notes: r.notes,
        started_at,
        replayed: false,
        pipeline_steps: Vec::new(),
        approval: None,
    })
}
