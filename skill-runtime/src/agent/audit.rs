//! What the audit of the compiled code (`skill-registry audit`) checks each
//! handler against: for every linked skill, op and agent, where its code is
//! (module and function) and which ambient kinds it may reach, by a declared
//! capability ([`CapabilityInfo::covers`], the rule `#[skill]`'s scan uses)
//! or by an `ambient(...)` allowance. An agent may reach what the skills it
//! lists may. A capability's resource type may reach what the capability's
//! effect covers and its own `ambient(...)` allowances. The audit links a small probe against the user's crates and
//! prints this; it is not API.

use serde_json::{Value, json};
use skill_core::capability::{Ambient, CapabilityInfo};
use skill_core::manifest::{Kind, Manifest, OpRuntime};

use crate::agent::registry::AgentRegistry;
use crate::registry::index::Registry;

/// The audit's targets as canonical JSON, or why the linked crates do not
/// form a registry.
pub fn audit_targets() -> Result<String, String> {
    let registry = Registry::from_inventory().map_err(|e| e.to_string())?;
    let agents = AgentRegistry::from_inventory().map_err(|e| e.to_string())?;
    let mut targets = Vec::new();
    for s in registry.skills() {
        let m = s.entry.manifest;
        let kind = match (m.op.is_some(), m.kind) {
            (true, _) => "op",
            (false, Kind::Pipeline) => "pipeline",
            (false, Kind::Logic) => "skill",
        };
        // Only native code has a body to audit: a pipeline's steps are
        // audited each, an op served elsewhere runs no code of ours.
        let body = matches!(m.op, None | Some(OpRuntime::Native)) && m.kind == Kind::Logic;
        let mut t = grants(&[m]);
        t["kind"] = kind.into();
        t["name"] = m.name.into();
        t["version"] = m.version.into();
        t["module"] = m.entrypoint.module.into();
        t["handler"] = m.entrypoint.handler.into();
        t["body"] = body.into();
        targets.push(t);
    }
    for a in agents.agents() {
        let c = a.contract();
        let skills: Vec<&Manifest> = c.skills.iter().map(|s| s.manifest).collect();
        let mut t = grants(&skills);
        t["kind"] = "agent".into();
        t["name"] = c.id.into();
        t["version"] = c.version.into();
        t["module"] = c.module.into();
        t["handler"] = c.handler.into();
        t["body"] = true.into();
        targets.push(t);
    }
    // Each resource's code is its capability's: what the capability's effect
    // covers, and its own allowances.
    let capabilities: Vec<Value> = registry
        .catalog()
        .iter()
        .filter(|c| c.needs_resource())
        .map(|c| {
            let may: Vec<&str> = Ambient::ALL
                .iter()
                .filter(|k| c.covers(**k))
                .map(|k| k.as_str())
                .collect();
            let allowed: serde_json::Map<String, Value> = c
                .ambient_allowances
                .iter()
                .map(|a| (a.kind.to_owned(), a.reason.into()))
                .collect();
            json!({"id": c.id, "resource": (c.resource_type)(), "may": may, "allowed": allowed})
        })
        .collect();
    Ok(crate::registry::export::canonical(
        &json!({"targets": targets, "capabilities": capabilities}),
    ))
}

/// The ambient kinds `manifests` together may reach, and the allowances
/// with their reasons.
fn grants(manifests: &[&Manifest]) -> Value {
    let caps = manifests.iter().flat_map(|m| m.capabilities.iter());
    let covered = |k: Ambient| caps.clone().any(|c: &&CapabilityInfo| c.covers(k));
    let may: Vec<&str> = Ambient::ALL
        .iter()
        .filter(|k| covered(**k))
        .map(|k| k.as_str())
        .collect();
    let mut allowed = serde_json::Map::new();
    for a in manifests.iter().flat_map(|m| m.ambient_allowances) {
        allowed.insert(a.kind.into(), a.reason.into());
    }
    let resources: Vec<&str> = caps
        .clone()
        .filter(|c| c.needs_resource())
        .map(|c| (c.resource_type)())
        .collect();
    json!({
        "may": may,
        "resources": resources,
        "allowed": allowed,
        "capabilities": manifests.iter().flat_map(|m| m.capabilities.iter().map(|c| c.id)).collect::<Vec<_>>(),
    })
}
