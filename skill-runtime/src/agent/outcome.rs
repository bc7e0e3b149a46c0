//! What running an agent gives ([`AgentResult`], [`AgentMetrics`]), and why
//! no agent ran ([`AgentError`]).

use serde::Serialize;
use serde_json::Value;

use crate::agent::run::{AgentFailure, EscalationDecision};
use crate::model::id::Id;
use crate::model::record::RuleNote;
use crate::model::result::Artifact;
use crate::model::result::NextAction;

/// What running an agent gives.
#[derive(Clone, Debug, Serialize)]
pub struct AgentResult {
    /// Whether the run produced an output that passed every check.
    pub success: bool,
    /// The run's id.
    pub job_id: Id,
    /// The run's trace.
    pub trace_id: Id,
    /// `id@version` of the agent that ran.
    pub agent: String,
    /// The output; `null` when the run failed.
    pub data: Value,
    /// Why the run failed, with the contract's error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<AgentFailure>,
    /// Duration and error count.
    pub metrics: AgentMetrics,
    /// What the caller should do next.
    pub next_action: NextAction,
    /// The hand-over, when a trigger fired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<EscalationDecision>,
    /// The target's run, when the escalation ran it (one that needs no
    /// person, to an agent of the registry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalated: Option<Box<AgentResult>>,
    /// The target's job, when the escalation was enqueued
    /// ([`AgentRunner::with_queue`](crate::agent::runner::AgentRunner::with_queue)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation_job: Option<Id>,
    /// What the run's record notes: the escalation, who decided on it, where
    /// it went, and where this run came from.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<RuleNote>,
    /// The R3 files the run wrote (`audit.md`, `backlog.json`,
    /// `graph.json`), when the runner keeps them: artifacts as a skill's
    /// result has them, `uri` where each is (a path, a store's key).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
}

/// What a run cost.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AgentMetrics {
    /// How long the run took.
    pub duration_ms: u64,
    /// Skill calls the run made, and how many failed.
    pub skill_calls: u32,
    /// How many skill jobs of the run failed.
    pub errors: u32,
}

/// Why no agent ran.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("unknown agent `{id}`{}", if .known.is_empty() { String::new() } else { format!("; agents: {}", .known.join(", ")) })]
    /// No agent has this id.
    UnknownAgent {
        /// The id asked for.
        id: String,
        /// The registered ids.
        known: Vec<String>,
    },
    #[error(
        "the hand-over to agent `{id}` needs a person's approval, and it was not given: {detail}"
    )]
    /// A job handed over to agent `id` needs a person, who said no.
    NotApproved {
        /// The agent the job names.
        id: String,
        /// What the person said.
        detail: String,
    },
    #[error(
        "agent `{id}` was started through a runner while a skill's handler runs: a handler runs the skills it lists in `calls(...)` through its own context, never agents through a runner, which would run any skill with nothing checked"
    )]
    /// A runner was used while a handler ran on this thread (kept in a
    /// static, handed to a helper): refused.
    InsideHandler {
        /// The agent asked for.
        id: String,
    },
}
