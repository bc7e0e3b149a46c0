//! Who may use a skill: the agent roles, the permission levels, a skill's
//! `reusable_by` entries, and the one reading of them that authorization,
//! the MCP tool list, `#[agent]`'s compile-time check and the overlays'
//! "never widen" rule all share.

/// Who may reuse a skill (AI-COS `reusable_by`): a role, and what that role
/// may do with the skill. `read` lets the role see the skill (list it,
/// describe it), not run it; `execute` and `admin` let it run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reuse {
    /// The role allowed.
    pub agent_role: AgentRole,
    /// What the role may do with the skill.
    pub permission_level: PermissionLevel,
}

impl Reuse {
    /// Whether a caller acting as this entry's role and holding `held` may
    /// run the skill: both what the skill grants the role and what the caller
    /// holds must reach `execute`. The one rule for every caller: the
    /// runtime's authorization, the MCP tool list and `#[agent]`'s
    /// compile-time check all ask it.
    pub const fn runs(&self, held: PermissionLevel) -> bool {
        may_run(self.permission_level, held)
    }
}

/// What a `reusable_by` list grants `role` (`None`: a caller that presents
/// no role): the one reading of the list, which authorization and the
/// overlays' "never widen" rule both ask.
///
/// An empty list is open to every role, at `admin`. A role the list names
/// gets its entry's level; a role it does not name gets nothing. A caller
/// that presents no role gets the least any role gets, so leaving a claim
/// out never grants more than presenting one: nothing, unless the list
/// names every role.
pub fn granted(reusable_by: &[Reuse], role: Option<AgentRole>) -> Option<PermissionLevel> {
    if reusable_by.is_empty() {
        return Some(PermissionLevel::Admin);
    }
    let of = |role: AgentRole| {
        reusable_by
            .iter()
            .find(|r| r.agent_role == role)
            .map(|r| r.permission_level)
    };
    match role {
        Some(role) => of(role),
        None => AgentRole::ALL.iter().map(|r| of(*r)).min().flatten(),
    }
}

/// Whether a role granted `granted` on a skill, held by a caller at `held`,
/// may run it: the lower of the two reaches `execute`.
pub const fn may_run(granted: PermissionLevel, held: PermissionLevel) -> bool {
    let lower = if (granted as u8) < (held as u8) {
        granted
    } else {
        held
    };
    lower as u8 >= PermissionLevel::Execute as u8
}

words! {
    /// An agent's role (the AI-COS agent model).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum AgentRole {
        Architect = "architect",
        Analyzer = "analyzer",
        Executor = "executor",
        Validator = "validator",
        Orchestrator = "orchestrator",
    }
}

words! {
    /// What a role may do with a skill, in increasing order: read < execute < admin.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum PermissionLevel {
        Read = "read",
        Execute = "execute",
        Admin = "admin",
    }
}
