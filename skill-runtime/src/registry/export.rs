//! The JSON artifacts: `skill-registry.json` (Brain OS registry v2 field names, with
//! the other seeds' fields as additional fields) and `capabilities.json`.
//!
//! Output is canonical: object keys sorted, two-space indentation, one trailing
//! newline, arrays in registry order. Same code, same bytes.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use skill_core::capability::CapabilityInfo;
use skill_core::manifest::{CallTarget, Kind, OpRuntime, PipelineStep, Status};

use crate::contract::conditions::Conditions;
use crate::contract::entry::SkillEntry;
use crate::registry::index::Registry;
use crate::registry::rules::pipeline::Closure;
use crate::registry::skill::RegisteredSkill;
use crate::schema::with_standard_formats;

/// Version of the `skill-registry.json` format this crate writes; it is also the
/// `registry_version` of every export. The format is published as
/// `skill-registry.schema.json` at the repository root; changing it means a new
/// version here and there, and a note in `docs/registry-format.md`.
pub const REGISTRY_FORMAT_VERSION: &str = "2.5.0";

/// Version of the `op-registry.json` format (`op-registry.schema.json`).
pub const OP_REGISTRY_FORMAT_VERSION: &str = "1.0.0";

/// Version of the `capabilities.json` format.
pub const CAPABILITIES_FORMAT_VERSION: &str = "1.0.0";

impl Registry {
    /// The registry as the `skill-registry.json` value.
    pub fn to_json(&self) -> Value {
        json!({
            "registry_version": REGISTRY_FORMAT_VERSION,
            "skills": self.skills().iter().filter(|s| !s.is_op()).map(|s| skill_json(&s.exported())).collect::<Vec<_>>(),
        })
    }

    /// The ops as the `op-registry.json` value.
    pub fn ops_json(&self) -> Value {
        json!({
            "registry_version": OP_REGISTRY_FORMAT_VERSION,
            "ops": self.skills().iter().filter(|s| s.is_op()).map(|s| op_json(&s.exported())).collect::<Vec<_>>(),
        })
    }

    /// Whether the linked crates define any op (and `op-registry.json` is due).
    pub fn has_ops(&self) -> bool {
        self.skills().iter().any(RegisteredSkill::is_op)
    }

    /// The canonical bytes of `op-registry.json`.
    pub fn export_ops(&self) -> String {
        canonical(&self.ops_json())
    }

    /// The capability catalog as the `capabilities.json` value.
    pub fn capabilities_json(&self) -> Value {
        json!({
            "catalog_version": CAPABILITIES_FORMAT_VERSION,
            "capabilities": self.catalog().iter().map(|c| capability_json(c)).collect::<Vec<_>>(),
        })
    }

    /// The canonical bytes of `skill-registry.json`.
    pub fn export(&self) -> String {
        canonical(&self.to_json())
    }

    /// The canonical bytes of `capabilities.json`.
    pub fn export_capabilities(&self) -> String {
        canonical(&self.capabilities_json())
    }
}

/// What of a skill (or op) its artifacts carry: the entry, its schemas, the
/// text of its conditions, and, for a pipeline, what its steps can do.
pub(crate) struct Exported<'a> {
    pub(crate) entry: &'a SkillEntry,
    pub(crate) input_schema: &'a Value,
    pub(crate) output_schema: &'a Value,
    pub(crate) conditions: &'a Conditions,
    pub(crate) closure: Option<&'a Closure>,
}

impl RegisteredSkill {
    pub(crate) fn exported(&self) -> Exported<'_> {
        Exported {
            entry: self.entry,
            input_schema: &self.input_schema,
            output_schema: &self.output_schema,
            conditions: &self.conditions,
            closure: self.closure(),
        }
    }
}

/// One capability of `capabilities.json`.
pub(crate) fn capability_json(c: &CapabilityInfo) -> Value {
    let mut v = json!({
        "id": c.id,
        "description": c.description,
        "effect_type": c.effect.as_str(),
        "operation": c.operation.as_str(),
    });
    if !c.ambient_allowances.is_empty() {
        v["ambient_allowances"] = c
            .ambient_allowances
            .iter()
            .map(|a| json!({"kind": a.kind, "reason": a.reason}))
            .collect();
    }
    v
}

fn target_json(t: &CallTarget) -> Value {
    let mut o = Map::new();
    o.insert("kind".into(), t.kind.as_str().into());
    o.insert("name".into(), t.name.into());
    if let Some(v) = t.version {
        o.insert("version".into(), v.into());
    }
    Value::Object(o)
}

fn step_json(step: &PipelineStep) -> Value {
    let mapping = |pairs: &[(&str, &str)]| {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
                .collect(),
        )
    };
    let mut v = json!({
        "id": step.id,
        "target": target_json(&step.target),
        "inputs": mapping(step.inputs),
        "outputs": mapping(step.outputs),
    });
    // The graph is an addition: a step that follows the one before it (the
    // straight line every reader of `steps` knows) says nothing more.
    if let Some(after) = step.after {
        v["after"] = Value::from(after.to_vec());
    }
    if let Some(g) = step.guard {
        v[g.key()] = Value::from(g.source);
    }
    if step.is_handler() {
        v["on_error"] = Value::from(step.on_error.to_vec());
    }
    if step.retries > 0 {
        v["retries"] = Value::from(step.retries);
    }
    v
}

fn strs(v: &[&str]) -> Value {
    Value::Array(v.iter().map(|s| Value::from(*s)).collect())
}

/// One op: the Brain OS op registry's fields, and its runtime's field.
pub(crate) fn op_json(s: &Exported<'_>) -> Value {
    let m = s.entry.manifest;
    let full = skill_json(s);
    let mut o = Map::new();
    for key in [
        "name",
        "version",
        "status",
        "description",
        "inputs_schema",
        "outputs_schema",
        "capabilities",
        "autonomy",
        "failure_modes",
        "side_effects",
        "policy_tags",
        "owners",
        "rate_limit",
        "redaction",
        "deprecation",
        "title",
        "domain",
        "execution",
        "side_effect_details",
    ] {
        if let Some(v) = full.get(key) {
            o.insert(key.to_owned(), v.clone());
        }
    }
    // Ops are not served over MCP; an op that says otherwise shows it, for
    // the rules to refuse.
    if m.mcp.exposed {
        o.insert("mcp".into(), full["mcp"].clone());
    }
    let runtime = m.op.unwrap_or(OpRuntime::Native);
    o.insert("runtime".into(), runtime.as_str().into());
    match runtime {
        OpRuntime::Native => {
            o.insert("module".into(), m.entrypoint.module.into());
            o.insert("handler".into(), m.entrypoint.handler.into());
        }
        OpRuntime::Mcp { tool } => {
            o.insert("tool".into(), tool.into());
        }
        OpRuntime::Http { url } => {
            o.insert("url".into(), url.into());
        }
        OpRuntime::Script { command } => {
            o.insert("command".into(), command.into());
        }
    }
    Value::Object(o)
}

pub(crate) fn skill_json(s: &Exported<'_>) -> Value {
    let m = s.entry.manifest;
    let mut o = Map::new();
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_owned(), v);
    };
    // Brain OS registry v2: required fields.
    put("name", m.name.into());
    put("version", m.version.into());
    put("status", m.status.as_str().into());
    put("description", m.description.into());
    put("kind", m.kind.as_str().into());
    // Published with standard formats only (schema::formats): the runtime
    // keeps schemars' own for its checks.
    put("inputs_schema", with_standard_formats(s.input_schema));
    put("outputs_schema", with_standard_formats(s.output_schema));
    // A pipeline's capabilities and side effects are its steps' (Brain OS:
    // computed from the dependency closure), never declared.
    let closure = |f: fn(&Closure) -> &BTreeSet<String>| {
        Value::Array(
            s.closure
                .map(f)
                .into_iter()
                .flatten()
                .map(|c| c.as_str().into())
                .collect(),
        )
    };
    put(
        "capabilities",
        match m.kind {
            Kind::Pipeline => closure(|c| &c.capabilities),
            _ => Value::Array(m.capabilities.iter().map(|c| c.id.into()).collect()),
        },
    );
    put("autonomy", m.autonomy.as_str().into());
    put(
        "failure_modes",
        Value::Array(
            s.entry
                .failure_modes
                .iter()
                .map(|f| json!({"code": f.code, "description": f.description, "retryable": f.retryable}))
                .collect(),
        ),
    );
    // Brain OS registry v2: optional fields.
    put(
        "side_effects",
        match m.kind {
            Kind::Pipeline => closure(|c| &c.side_effects),
            _ => Value::Array(
                m.side_effects
                    .iter()
                    .map(|e| e.capability.id.into())
                    .collect(),
            ),
        },
    );
    put("policy_tags", strs(m.policy_tags));
    if !m.intents.is_empty() {
        put("intents", strs(m.intents));
    }
    put("owners", strs(m.owners));
    if let Some(r) = m.rate_limit {
        put("rate_limit", json!({"max_per_minute": r.max_per_minute}));
    }
    put(
        "redaction",
        json!({"inputs": strs(m.redaction.inputs), "outputs": strs(m.redaction.outputs)}),
    );
    if let (Status::Deprecated, Some(d)) = (m.status, &m.deprecation) {
        let mut dep = Map::new();
        dep.insert("deprecated".into(), true.into());
        if let Some(r) = d.replaced_by {
            dep.insert("replaced_by".into(), r.into());
        }
        if let Some(v) = d.removal_version {
            dep.insert("removal_version".into(), v.into());
        }
        dep.insert("notes".into(), d.notes.into());
        put("deprecation", Value::Object(dep));
    }
    // Steps whenever there are any: a logic skill with steps is a mistake the
    // rules report.
    if m.kind == Kind::Pipeline || !m.steps.is_empty() {
        put(
            "steps",
            Value::Array(m.steps.iter().map(step_json).collect()),
        );
    }
    if m.kind != Kind::Pipeline {
        put(
            "entrypoint",
            json!({"runtime": "native", "module": m.entrypoint.module, "handler": m.entrypoint.handler}),
        );
    }
    put(
        "call_targets",
        Value::Array(m.call_targets.iter().map(target_json).collect()),
    );
    if let Some(k) = m.idempotency {
        put(
            "idempotency",
            json!({"key_strategy": k.strategy.as_str(), "key_fields": strs(k.fields)}),
        );
    }
    put(
        "ambient_allowances",
        Value::Array(
            m.ambient_allowances
                .iter()
                .map(|a| json!({"kind": a.kind, "reason": a.reason}))
                .collect(),
        ),
    );
    // Additional fields from the AI-COS skill model and the ADR.
    if let Some(t) = m.title {
        put("title", t.into());
    }
    if let Some(d) = m.domain {
        put("domain", d.into());
    }
    put(
        "side_effect_details",
        Value::Array(
            m.side_effects
                .iter()
                .map(|e| {
                    json!({
                        "capability": e.capability.id,
                        "type": e.capability.effect.as_str(),
                        "target": e.target,
                        "operation": e.capability.operation.as_str(),
                        "reversible": e.reversible,
                        "description": e.description.unwrap_or(e.capability.description),
                    })
                })
                .collect(),
        ),
    );
    let c = &s.conditions;
    put(
        "preconditions",
        Value::Array(
            c.preconditions
                .iter()
                .map(|p| json!({"condition": p.condition, "error_code": p.error_code, "message": p.message}))
                .collect(),
        ),
    );
    put(
        "postconditions",
        Value::Array(
            c.postconditions
                .iter()
                .map(|p| json!({"assertion": p.assertion, "rollback_action": p.rollback_action}))
                .collect(),
        ),
    );
    put(
        "validation_rules",
        Value::Array(
            c.validation_rules
                .iter()
                .map(|r| {
                    json!({
                        "rule_id": r.rule_id,
                        "expression": r.expression,
                        "severity": r.severity.as_str(),
                        "message": r.message,
                    })
                })
                .collect(),
        ),
    );
    put(
        "reusable_by",
        Value::Array(
            m.reusable_by
                .iter()
                .map(|r| json!({"agent_role": r.agent_role.as_str(), "permission_level": r.permission_level.as_str()}))
                .collect(),
        ),
    );
    let e = m.execution;
    put(
        "execution",
        json!({
            "timeout_ms": e.timeout_ms,
            "retries": e.retries,
            "retry_backoff": e.backoff.as_str(),
            "idempotent": e.idempotent,
        }),
    );
    let k = m.constraints;
    put(
        "constraints",
        json!({
            "is_destructive": k.is_destructive,
            "requires_hitl": k.requires_hitl,
            "sandbox_type": k.sandbox_type.as_str(),
            "source": k.source.as_str(),
        }),
    );
    put(
        "mcp",
        json!({
            "exposed": m.mcp.exposed,
            "tool_name": m.mcp.tool_name.unwrap_or(m.name),
            "permissions": strs(m.mcp.permissions),
        }),
    );
    Value::Object(o)
}

/// Canonical text of `value`: keys sorted at every level, two-space indentation,
/// a trailing newline.
pub fn canonical(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(&sorted(value)).unwrap_or_default();
    text.push('\n');
    text
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
