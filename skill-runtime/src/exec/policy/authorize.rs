//! Who may run a skill: a caller against `reusable_by` and the skill's MCP
//! permissions.

use std::collections::BTreeSet;

use skill_core::manifest::{Manifest, PermissionLevel, granted, may_run};

use crate::model::caller::Caller;

/// Why `caller` may not run the skill of manifest `m`, if it may not.
///
/// The process's own operator (a caller that presents nothing: no role, no
/// level, no set of permissions, as the CLI without flags and in-process
/// code) is not held to `reusable_by`. Every other caller is, by one rule:
/// what the list grants the caller's role ([`granted`]: an empty list is
/// open to every role; a caller that presents no role gets the least any
/// role gets, so leaving a claim out never grants more than presenting one)
/// and the level the caller holds must both reach `execute`
/// ([`may_run`]). A role presented without a level holds `read`; a level
/// presented without a role holds that level. A caller with a set of
/// granted permissions must also hold every MCP permission of the skill.
#[inline]
pub(crate) fn authorize(m: &Manifest, caller: &Caller) -> Result<(), String> {
    let operator = caller.agent_role.is_none()
        && caller.permission_level.is_none()
        && caller.permissions.is_none();
    if !operator {
        reuse(m, caller)?;
    }
    if let Some(held) = &caller.permissions {
        let missing = missing_permissions(held, m.mcp.permissions);
        if !missing.is_empty() {
            return Err(format!("missing {}", permission_list(&missing)));
        }
    }
    Ok(())
}

/// Why `caller`, held to `reusable_by`, may not run the skill of `m`.
fn reuse(m: &Manifest, caller: &Caller) -> Result<(), String> {
    let role = caller.agent_role;
    let held = caller.permission_level.unwrap_or(match role {
        Some(_) => PermissionLevel::Read,
        // Neither role nor level: what the list grants decides alone.
        None => PermissionLevel::Admin,
    });
    let Some(grant) = granted(m.reusable_by, role) else {
        return Err(match role {
            Some(role) => format!(
                "agent role `{}` is not in reusable_by ({})",
                role.as_str(),
                roles(m)
            ),
            None => format!(
                "the caller presents no agent role, and this skill is reusable by {} only: present one of these roles",
                roles(m)
            ),
        });
    };
    if !may_run(grant, PermissionLevel::Admin) {
        return Err(format!(
            "{} granted `{}` on this skill, which lets it see the skill, not run it; running needs `execute` or `admin` in reusable_by",
            who(caller),
            grant.as_str()
        ));
    }
    if !may_run(grant, held) {
        return Err(format!(
            "{} runs this skill at permission level `execute` or above; the caller holds `{}`",
            who(caller),
            held.as_str()
        ));
    }
    Ok(())
}

/// The caller as messages name it.
fn who(caller: &Caller) -> String {
    match caller.agent_role {
        Some(role) => format!("agent role `{}` is", role.as_str()),
        None => "a caller with no agent role is".to_owned(),
    }
}

/// The roles of `reusable_by`, with what each is granted.
fn roles(m: &Manifest) -> String {
    m.reusable_by
        .iter()
        .map(|r| format!("{}: {}", r.agent_role.as_str(), r.permission_level.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The permissions of `required` that `granted` lacks, in manifest order.
pub(crate) fn missing_permissions<'a>(
    granted: &BTreeSet<String>,
    required: &[&'a str],
) -> Vec<&'a str> {
    required
        .iter()
        .copied()
        .filter(|p| !granted.contains(*p))
        .collect()
}

/// "permission `a`" or "permissions `a`, `b`".
pub(crate) fn permission_list(permissions: &[&str]) -> String {
    format!(
        "permission{} {}",
        if permissions.len() == 1 { "" } else { "s" },
        permissions
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
