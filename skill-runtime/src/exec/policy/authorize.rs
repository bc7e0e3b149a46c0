//! Who may run a skill: an agent caller against `reusable_by`, a caller with
//! granted permissions against the skill's MCP permissions.

use std::collections::BTreeSet;

use skill_core::manifest::{Manifest, PermissionLevel};

use crate::model::caller::Caller;

/// Why `caller` may not run the skill of manifest `m`, if it may not.
///
/// - A caller presenting an agent role must match a `reusable_by` entry for that
///   role and hold at least the entry's permission level (read < execute <
///   admin). A skill with no `reusable_by` entries is open to every role.
/// - A caller presenting a permission level without a role holds that level for
///   every role: it must reach the lowest level any `reusable_by` entry asks
///   (so `read` does not run a skill every role needs `admin` for).
/// - A caller with a set of granted permissions must hold every MCP permission of
///   the skill.
pub(crate) fn authorize(m: &Manifest, caller: &Caller) -> Result<(), String> {
    if caller.agent_role.is_none()
        && let Some(held) = caller.permission_level
        && let Some(lowest) = m.reusable_by.iter().map(|r| r.permission_level).min()
        && held < lowest
    {
        return Err(format!(
            "permission level `{}` is below `{}`, the lowest any role in reusable_by needs",
            held.as_str(),
            lowest.as_str()
        ));
    }
    if let Some(role) = caller.agent_role
        && !m.reusable_by.is_empty()
    {
        let held = caller.permission_level.unwrap_or(PermissionLevel::Read);
        let entry = m.reusable_by.iter().find(|r| r.agent_role == role);
        match entry {
            None => {
                let roles: Vec<&str> = m
                    .reusable_by
                    .iter()
                    .map(|r| r.agent_role.as_str())
                    .collect();
                return Err(format!(
                    "agent role `{}` is not in reusable_by ({})",
                    role.as_str(),
                    roles.join(", ")
                ));
            }
            Some(r) if held < r.permission_level => {
                return Err(format!(
                    "agent role `{}` needs permission level `{}`, the caller holds `{}`",
                    role.as_str(),
                    r.permission_level.as_str(),
                    held.as_str()
                ));
            }
            Some(_) => {}
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
