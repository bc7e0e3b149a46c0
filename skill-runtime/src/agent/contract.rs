//! The agent contract of the AI-COS agent model (seed 002) as `const` data,
//! and the compile-time check that ties an agent to the skills it lists.

use skill_core::agent::{Direction, Storage, ToolPermission};
use skill_core::manifest::{AgentRole, Location, Manifest, PermissionLevel};

/// An agent's contract: every field of the seed's `AgentManifest` but its
/// inputs and outputs, which are the schemas of `Agent::Input` and
/// `Agent::Output`, and its capabilities, which are computed from its
/// skills.
#[derive(Debug)]
pub struct AgentContract {
    /// Dotted snake_case, unique in a registry (`agent.seo.vlevel`).
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// What the agent does (its doc comment).
    pub description: &'static str,
    pub role: AgentRole,
    pub domain: &'static str,
    /// semver.
    pub version: &'static str,
    pub owner: &'static str,
    pub tools: &'static [AgentTool],
    pub skills: &'static [AgentSkill],
    pub memory: Memory,
    /// The text of each pre- and post-condition, as exported; the checks
    /// themselves are `Agent::PRE_CONDITIONS` and `Agent::POST_CONDITIONS`.
    pub pre_conditions: &'static [ConditionText],
    pub post_conditions: &'static [ConditionText],
    pub invariants: &'static [&'static str],
    pub escalation: Option<Escalation>,
    pub kpis: &'static [Kpi],
    /// The function's name, for messages.
    pub handler: &'static str,
    pub location: Location,
}

/// A condition as the contract exports it.
#[derive(Clone, Copy, Debug)]
pub struct ConditionText {
    pub expression: &'static str,
    pub error_code: &'static str,
}

/// An MCP tool the agent may use.
#[derive(Clone, Copy, Debug)]
pub struct AgentTool {
    pub tool_id: &'static str,
    pub permission: ToolPermission,
    /// Calls per minute, at least 1.
    pub rate_limit: u32,
}

/// A skill the agent may run: its manifest (the skill's marker type names it,
/// so it exists), and whether the agent needs it to work.
#[derive(Clone, Copy, Debug)]
pub struct AgentSkill {
    pub manifest: &'static Manifest,
    pub required: bool,
}

/// The agent's memory (the seed's `memory`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Memory {
    /// `Some(max_tokens)` when short-term memory is on.
    pub short_term: Option<u32>,
    /// `Some(storage)` when long-term memory is on.
    pub long_term: Option<Storage>,
    /// `Some(namespaces)` when shared memory is on.
    pub shared: Option<&'static [&'static str]>,
}

/// When to hand a run to another agent, or to a human.
#[derive(Clone, Copy, Debug)]
pub struct Escalation {
    pub triggers: &'static [Trigger],
    /// The id of the agent that takes over; the registry checks it exists.
    pub target_agent: &'static str,
    pub human_required: bool,
    pub timeout_hours: u32,
}

/// A typed escalation trigger, evaluated on each run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// A number of the output (at a JSON pointer) below `value`: the seed's
    /// `confidence < 0.7`.
    ConfidenceBelow { field: &'static str, value: f64 },
    /// More than `count` failed skill calls in the run: `error_count > 3`.
    ErrorCountAbove { count: u32 },
    /// A boolean of the output (at a JSON pointer) is true:
    /// `human_required == true`.
    HumanRequired { field: &'static str },
}

/// A KPI: computed from the agent's run records, with a status against its
/// thresholds.
#[derive(Clone, Copy, Debug)]
pub struct Kpi {
    pub metric_id: &'static str,
    pub target: f64,
    pub threshold_warning: f64,
    pub threshold_critical: f64,
    pub unit: &'static str,
    pub direction: Direction,
    pub source: KpiSource,
}

/// What a KPI's value is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KpiSource {
    /// `task_success_rate`: succeeded runs over all runs, 0 to 1.
    SuccessRate,
    /// `avg_processing_time`: the mean run duration, in milliseconds.
    ProcessingTime,
    /// The mean of a number in the outputs of succeeded runs (a JSON pointer).
    OutputMean(&'static str),
}

/// A check on the input before the agent runs; its `error_code` is the code
/// of the error when it does not hold.
pub struct PreCondition<I> {
    pub expression: &'static str,
    pub error_code: &'static str,
    pub check: fn(&I) -> bool,
}

/// A check on the output after the agent ran (on the input too, when it
/// takes both).
pub struct PostCondition<I, O> {
    pub expression: &'static str,
    pub error_code: &'static str,
    pub check: PostCheck<I, O>,
}

/// A post-condition's function.
pub enum PostCheck<I, O> {
    Output(fn(&O) -> bool),
    Both(fn(&I, &O) -> bool),
}

/// The compile-time check of one listed skill: its `reusable_by` allows the
/// agent's `role` at `execute` or above (a skill with no `reusable_by` is open
/// to every role). A panic in a constant is the compile error; `message` is
/// its text, written by the macro with the agent, skill, role and fix.
#[doc(hidden)]
#[track_caller]
pub const fn assert_reusable(skill: &Manifest, role: AgentRole, message: &str) {
    let reuse = skill.reusable_by;
    if reuse.is_empty() {
        return;
    }
    let mut i = 0;
    while i < reuse.len() {
        let r = &reuse[i];
        if r.agent_role as u8 == role as u8
            && r.permission_level as u8 >= PermissionLevel::Execute as u8
        {
            return;
        }
        i += 1;
    }
    panic!("{}", message);
}
