//! Who may run a skill: an agent caller against `reusable_by`, a caller with
//! granted permissions against the skill's MCP permissions.

use std::collections::BTreeSet;

use skill_core::manifest::{Manifest, PermissionLevel, may_run};

use crate::model::caller::Caller;

/// Why `caller` may not run the skill of manifest `m`, if it may not.
///
/// The rule is [`Reuse::runs`]: what the skill grants the caller's role
/// (`reusable_by`) and what the caller holds must both reach `execute`, so a
/// role granted `read` sees a skill but does not run it, whatever it holds.
/// A skill with no `reusable_by` entries is open to every role.
///
/// - A caller presenting an agent role must match an entry for that role; a
///   role presented without a level holds `read`.
/// - A caller presenting a level without a role holds it for every role: it
///   runs the skill when some entry lets it.
/// - A caller with a set of granted permissions must hold every MCP permission
///   of the skill.
///
/// [`Reuse::runs`]: skill_core::manifest::Reuse::runs
#[inline]
pub(crate) fn authorize(m: &Manifest, caller: &Caller) -> Result<(), String> {
    match (caller.agent_role, caller.permission_level) {
        (None, None) => {}
        _ if m.reusable_by.is_empty() => {
            if let Some(held) = caller.permission_level
                && !may_run(PermissionLevel::Admin, held)
            {
                return Err(format!(
                    "permission level `{}` does not run skills; running needs `execute`",
                    held.as_str()
                ));
            }
        }
        (None, Some(held)) => {
            if !m.reusable_by.iter().any(|r| r.runs(held)) {
                return Err(format!(
                    "permission level `{}` runs no role of reusable_by ({}); running needs `execute` for a role granted `execute` or `admin`",
                    held.as_str(),
                    roles(m)
                ));
            }
        }
        (Some(role), held) => {
            let held = held.unwrap_or(PermissionLevel::Read);
            match m.reusable_by.iter().find(|r| r.agent_role == role) {
                None => {
                    return Err(format!(
                        "agent role `{}` is not in reusable_by ({})",
                        role.as_str(),
                        roles(m)
                    ));
                }
                Some(r) if !may_run(r.permission_level, PermissionLevel::Admin) => {
                    return Err(format!(
                        "agent role `{}` is granted `{}` on this skill, which lets it see the skill, not run it; running needs `execute` or `admin` in reusable_by",
                        role.as_str(),
                        r.permission_level.as_str()
                    ));
                }
                Some(r) if !r.runs(held) => {
                    return Err(format!(
                        "agent role `{}` runs this skill at permission level `execute` or above; the caller holds `{}`",
                        role.as_str(),
                        held.as_str()
                    ));
                }
                Some(_) => {}
            }
        }
    }
    if let Some(granted) = &caller.permissions {
        let missing = missing_permissions(granted, m.mcp.permissions);
        if !missing.is_empty() {
            return Err(format!("missing {}", permission_list(&missing)));
        }
    }
    Ok(())
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
