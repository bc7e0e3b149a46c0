//! What an agent run walked: its skill calls as the nodes of its
//! `GraphState`, and the escalation it calls for. Below `handler` (which
//! notes each call), `run` and `runner` (which read them).

use std::sync::Mutex;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::model::graph::{GraphBudget, GraphError, NodeRun};
use crate::model::id::Id;
use crate::sync::lock;

/// The escalation a run calls for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EscalationDecision {
    /// The agent to hand over to.
    pub target_agent: &'static str,
    /// Whether a human must take over.
    pub human_required: bool,
    /// How long the target has to answer.
    pub timeout_hours: u32,
    /// Each trigger that held, as text (`confidence 0.62 < 0.7`).
    pub reasons: Vec<String>,
}

/// An agent run's skill calls, as the nodes of its `GraphState`: each call
/// is a node (`{skill}#{n}`, the n-th call of the run).
#[derive(Debug, Default)]
pub(crate) struct Walked {
    pub nodes: Vec<NodeRun>,
    pub intermediate: Map<String, Value>,
    pub errors: Vec<GraphError>,
    pub budget: GraphBudget,
    pub artifacts: Vec<String>,
}

/// Note skill call `node` (job `job_id`, started at `started_at`) with its
/// outcome.
pub(crate) fn walked(
    walked: &Mutex<Walked>,
    node: String,
    job_id: &Id,
    started_at: std::time::SystemTime,
    result: &Result<crate::model::result::SkillResult, crate::model::error::InvokeError>,
) {
    use crate::model::graph::GraphStatus;
    use crate::model::result::NextAction;
    use crate::model::time::format_time;
    let completed_at = std::time::SystemTime::now();
    let mut w = lock(walked);
    w.budget.api_calls += 1;
    let (status, replayed) = match result {
        Ok(r) => {
            w.budget.tokens_used += r.metrics.tokens_used.unwrap_or(0);
            w.budget.docs_retrieved += r.metrics.docs_retrieved.unwrap_or(0);
            let artifacts = r
                .artifacts
                .iter()
                .map(|a| a.uri.clone().unwrap_or_else(|| a.name.clone()));
            w.artifacts.extend(artifacts);
            w.intermediate.insert(node.clone(), (*r.data).clone());
            (GraphStatus::Succeeded, r.replayed)
        }
        Err(e) => {
            w.errors.push(GraphError {
                node: node.clone(),
                message: e.to_string(),
                timestamp: format_time(completed_at),
                recoverable: e.next_action() == NextAction::Retry,
            });
            (GraphStatus::Failed, false)
        }
    };
    w.nodes.push(NodeRun {
        node,
        job_id: job_id.clone(),
        started_at: format_time(started_at),
        completed_at: format_time(completed_at),
        status,
        replayed,
    });
}
