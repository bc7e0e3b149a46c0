//! Where an agent's job comes from when another agent escalated to it (the
//! agent model's escalation): carried in the job's envelope
//! (`escalatedFrom`) when the hand-over goes through a queue, so the worker
//! that runs the target knows why, who asked, and whether a person decides.

use serde::{Deserialize, Serialize};
use skill_core::agent::MAX_TIMEOUT_HOURS;

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
    /// itself. At most 720 (30 days); 0 or absent waits 1 hour, the least.
    #[serde(
        default,
        alias = "timeout_hours",
        deserialize_with = "within_max_hours"
    )]
    pub timeout_hours: u32,
}

/// `timeoutHours` of at most [`MAX_TIMEOUT_HOURS`]: a longer wait is refused
/// with the envelope, not left to hold a job for years.
fn within_max_hours<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let hours = u32::deserialize(d)?;
    if hours > MAX_TIMEOUT_HOURS {
        return Err(serde::de::Error::custom(format!(
            "timeoutHours is {hours}; an escalation waits at most {MAX_TIMEOUT_HOURS} hours (30 days)"
        )));
    }
    Ok(hours)
}

impl Handover {
    /// How many agents one chain of hand-overs may hold.
    pub const MAX_CHAIN: usize = 4;
}
