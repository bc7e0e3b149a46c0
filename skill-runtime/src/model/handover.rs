//! Where an agent's job comes from when another agent escalated to it (the
//! agent model's escalation): carried in the job's envelope
//! (`escalatedFrom`) when the hand-over goes through a queue, so the worker
//! that runs the target knows why, who asked, and whether a person decides.

use serde::{Deserialize, Serialize};

use crate::model::id::Id;

/// The run that handed a job over, and on what terms.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Handover {
    /// The agent whose run escalated.
    pub agent: String,
    /// That run's job.
    #[serde(alias = "job_id")]
    pub job_id: Id,
    /// The triggers that held, as text.
    #[serde(default)]
    pub reasons: Vec<String>,
    /// Every agent of the chain so far, the first first: none is escalated
    /// to twice, and a chain stops at [`Handover::MAX_CHAIN`] agents.
    #[serde(default)]
    pub chain: Vec<String>,
    /// Whether a person decides before the target runs.
    #[serde(default, alias = "human_required")]
    pub human_required: bool,
    /// How long that person has, in hours; past it the hand-over goes on by
    /// itself.
    #[serde(default, alias = "timeout_hours")]
    pub timeout_hours: u32,
}

impl Handover {
    /// How many agents one chain of hand-overs may hold.
    pub const MAX_CHAIN: usize = 4;
}
