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
    /// The agent's role: what `reusable_by` of its skills must admit.
    pub role: AgentRole,
    /// The business domain it works in.
    pub domain: &'static str,
    /// semver.
    pub version: &'static str,
    /// Who maintains it.
    pub owner: &'static str,
    /// The tools it may use, each with a permission and a rate limit.
    pub tools: &'static [AgentTool],
    /// The skills it runs through `ctx.run::<S>`.
    pub skills: &'static [AgentSkill],
    /// How long what it remembers lasts, and where it is kept.
    pub memory: Memory,
    /// The text of each pre- and post-condition, as exported; the checks
    /// themselves are `Agent::PRE_CONDITIONS` and `Agent::POST_CONDITIONS`.
    pub pre_conditions: &'static [ConditionText],
    /// Conditions on the output, each with its error code.
    pub post_conditions: &'static [ConditionText],
    /// What must always hold, for people and reviewers.
    pub invariants: &'static [&'static str],
    /// When and to whom the agent hands over.
    pub escalation: Option<Escalation>,
    /// The measures the agent is judged by.
    pub kpis: &'static [Kpi],
    /// The Rust module path of the handler, where the audit of the compiled
    /// code finds its body.
    pub module: &'static str,
    /// The function's name, for messages.
    pub handler: &'static str,
    /// Where the agent was declared.
    pub location: Location,
}

/// A condition as the contract exports it.
#[derive(Clone, Copy, Debug)]
pub struct ConditionText {
    /// The condition's Rust source.
    pub expression: &'static str,
    /// The code a failed run reports.
    pub error_code: &'static str,
}

/// An MCP tool the agent may use.
#[derive(Clone, Copy, Debug)]
pub struct AgentTool {
    /// The tool's id.
    pub tool_id: &'static str,
    /// What the agent may do with it.
    pub permission: ToolPermission,
    /// Calls per minute, at least 1.
    pub rate_limit: u32,
}

/// A skill the agent may run: its manifest (the skill's marker type names it,
/// so it exists), and whether the agent needs it to work.
#[derive(Clone, Copy, Debug)]
pub struct AgentSkill {
    /// The skill's manifest.
    pub manifest: &'static Manifest,
    /// Whether the agent cannot work without it.
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
    /// Any of these escalates a run.
    pub triggers: &'static [Trigger],
    /// The id of the agent that takes over; the registry checks it exists.
    pub target_agent: &'static str,
    /// Whether a human must take over (not only another agent).
    pub human_required: bool,
    /// How long the target has to answer.
    pub timeout_hours: u32,
}

/// A typed escalation trigger, evaluated on each run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// A number of the output (at a JSON pointer) below `value`: the seed's
    /// `confidence < 0.7`.
    ConfidenceBelow {
        /// The JSON pointer of the number in the output.
        field: &'static str,
        /// The threshold.
        value: f64,
    },
    /// More than `count` failed skill calls in the run: `error_count > 3`.
    ErrorCountAbove {
        /// The most failures tolerated.
        count: u32,
    },
    /// A boolean of the output (at a JSON pointer) is true:
    /// `human_required == true`.
    HumanRequired {
        /// The JSON pointer of the boolean in the output.
        field: &'static str,
    },
}

/// A KPI: computed from the agent's run records, with a status against its
/// thresholds.
#[derive(Clone, Copy, Debug)]
pub struct Kpi {
    /// The measure's id.
    pub metric_id: &'static str,
    /// The value aimed at.
    pub target: f64,
    /// The value from which the status is `warning`.
    pub threshold_warning: f64,
    /// The value from which the status is `critical`.
    pub threshold_critical: f64,
    /// The unit the value is in.
    pub unit: &'static str,
    /// Whether higher or lower is better.
    pub direction: Direction,
    /// What the value is computed from.
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
    /// The condition's Rust source.
    pub expression: &'static str,
    /// The code a refused input reports.
    pub error_code: &'static str,
    /// The check, on the input.
    pub check: fn(&I) -> bool,
}

/// A check on the output after the agent ran (on the input too, when it
/// takes both).
pub struct PostCondition<I, O> {
    /// The condition's Rust source.
    pub expression: &'static str,
    /// The code a rejected output reports.
    pub error_code: &'static str,
    /// The check, on the output (and the input).
    pub check: PostCheck<I, O>,
}

/// A post-condition's function.
pub enum PostCheck<I, O> {
    /// A check of the output alone.
    Output(fn(&O) -> bool),
    /// A check of the input and the output.
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
        if r.agent_role as u8 == role as u8 && r.runs(PermissionLevel::Execute) {
            return;
        }
        i += 1;
    }
    panic!("{}", message);
}
