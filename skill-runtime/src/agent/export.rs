//! `agent-registry.json`: every agent's contract in the seed's field names,
//! with its capability closure (the union of its skills' capabilities,
//! computed here, never declared), and the rules that hold across files.
//!
//! The same rules run on a registry built from Rust (`Registry` and
//! `AgentRegistry` exported) and on files (`skill-registry validate
//! --agents`): they read only the exported JSON.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};
use skill_core::agent::{Direction, thresholds_ordered};
use skill_core::manifest::{AgentRole, PermissionLevel};
use skill_core::names::{is_agent_id, is_semver};

use crate::agent::contract::{AgentContract, ConditionText, KpiSource, Trigger};
use crate::agent::registry::{AgentRegistry, RegisteredAgent};
use crate::schema::with_standard_formats;

/// The version of the agent registry format.
pub const AGENT_REGISTRY_VERSION: &str = "1.0.0";

impl AgentRegistry {
    /// The registry as `agent-registry.json` holds it (agents sorted by id),
    /// each agent's capabilities computed from `skills`, the skill registry's
    /// JSON (where a pipeline's capabilities are its steps').
    pub fn to_json(&self, skills: &Value) -> Value {
        json!({
            "agent_registry_version": AGENT_REGISTRY_VERSION,
            "agents": self.agents().iter().map(|a| agent_json(a, skills)).collect::<Vec<_>>(),
        })
    }

    /// The canonical bytes of `agent-registry.json`.
    pub fn export(&self, skills: &Value) -> String {
        crate::registry::export::canonical(&self.to_json(skills))
    }
}

fn agent_json(a: &RegisteredAgent, skills: &Value) -> Value {
    let c: &AgentContract = a.contract();
    let mut capabilities: BTreeSet<&str> = BTreeSet::new();
    for s in c.skills {
        let m = skills
            .get("skills")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|m| {
                m.get("name").and_then(Value::as_str) == Some(s.manifest.name)
                    && m.get("version").and_then(Value::as_str) == Some(s.manifest.version)
            });
        for cap in m
            .and_then(|m| m.get("capabilities"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            capabilities.extend(cap.as_str());
        }
    }
    json!({
        "id": c.id,
        "name": c.name,
        "description": c.description,
        "role": c.role.as_str(),
        "domain": c.domain,
        "version": c.version,
        "owner": c.owner,
        "inputs": fields(&a.input_schema, true),
        "outputs": fields(&a.output_schema, false),
        "input_schema": with_standard_formats(&a.input_schema),
        "output_schema": with_standard_formats(&a.output_schema),
        "tools": c.tools.iter().map(|t| json!({
            "tool_id": t.tool_id,
            "permissions": t.permission.as_str(),
            "rate_limit": t.rate_limit,
        })).collect::<Vec<_>>(),
        "skills": c.skills.iter().map(|s| json!({
            "skill_id": s.manifest.name,
            "version": s.manifest.version,
            "required": s.required,
        })).collect::<Vec<_>>(),
        "capabilities": capabilities,
        "memory": {
            "short_term": {"enabled": c.memory.short_term.is_some(), "max_tokens": c.memory.short_term.unwrap_or(0)},
            "long_term": {"enabled": c.memory.long_term.is_some(), "storage": c.memory.long_term.map(|s| s.as_str())},
            "shared": {"enabled": c.memory.shared.is_some(), "namespaces": c.memory.shared.unwrap_or(&[])},
        },
        "validation": {
            "pre_conditions": conditions(c.pre_conditions),
            "post_conditions": conditions(c.post_conditions),
            "invariants": c.invariants,
        },
        "escalation": c.escalation.map(|e| json!({
            "triggers": e.triggers.iter().map(trigger_json).collect::<Vec<_>>(),
            "target_agent": e.target_agent,
            "human_required": e.human_required,
            "timeout_hours": e.timeout_hours,
        })),
        "kpis": c.kpis.iter().map(|k| json!({
            "metric_id": k.metric_id,
            "target": k.target,
            "threshold_warning": k.threshold_warning,
            "threshold_critical": k.threshold_critical,
            "unit": k.unit,
            "direction": k.direction.as_str(),
            "source": match k.source {
                KpiSource::SuccessRate => json!({"kind": "task_success_rate"}),
                KpiSource::ProcessingTime => json!({"kind": "avg_processing_time"}),
                KpiSource::OutputMean(field) => json!({"kind": "output_mean", "field": field}),
            },
        })).collect::<Vec<_>>(),
    })
}

fn conditions(list: &[ConditionText]) -> Vec<Value> {
    list.iter()
        .map(|c| json!({"expression": c.expression, "error_code": c.error_code}))
        .collect()
}

fn trigger_json(t: &Trigger) -> Value {
    match *t {
        Trigger::ConfidenceBelow { field, value } => json!({
            "kind": "confidence_below", "field": field, "value": value,
            "expression": format!("confidence < {value}"),
        }),
        Trigger::ErrorCountAbove { count } => json!({
            "kind": "error_count_above", "count": count,
            "expression": format!("error_count > {count}"),
        }),
        Trigger::HumanRequired { field } => json!({
            "kind": "human_required", "field": field,
            "expression": "human_required == true",
        }),
    }
}

/// The seed's `inputs` / `outputs` lists, read from a schema's top-level
/// properties: name, schema, required (inputs only), description.
fn fields(schema: &Value, inputs: bool) -> Vec<Value> {
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, ty)| {
            let mut o = Map::new();
            o.insert("name".into(), json!(name));
            o.insert("type".into(), ty.clone());
            if inputs {
                o.insert("required".into(), json!(required.contains(name.as_str())));
            }
            o.insert(
                "description".into(),
                ty.get("description").cloned().unwrap_or(json!("")),
            );
            Value::Object(o)
        })
        .collect()
}

/// Every rule an agent registry file must keep, alone and against the skill
/// registry it was exported with: ids, versions, tool permissions and rate
/// limits, KPI thresholds for their direction, one agent per id, escalation
/// targets that are agents, listed skills that exist and admit the agent's
/// role at `execute` or above, and a capability closure equal to its skills'.
/// Each finding names the agent and what to change.
pub fn check_agents(agents: &Value, skills: Option<&Value>) -> Vec<String> {
    let mut out = Vec::new();
    let list = agents
        .get("agents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let skill_index: Option<BTreeMap<&str, &Value>> = skills.map(|s| {
        s.get("skills")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| Some((m.get("name")?.as_str()?, m)))
            .collect()
    });
    let ids: Vec<&str> = list.iter().filter_map(|a| a.get("id")?.as_str()).collect();
    let mut seen = BTreeSet::new();
    for a in &list {
        let id = a.get("id").and_then(Value::as_str).unwrap_or("");
        let mut say = |m: String| out.push(format!("agent `{id}`: {m}"));
        if !is_agent_id(id) {
            say("the id must be dotted snake_case words, like `agent.seo.vlevel`".into());
        }
        if !seen.insert(id) {
            say("the id is used by two agents; give one another id".into());
        }
        let version = a.get("version").and_then(Value::as_str).unwrap_or("");
        if !is_semver(version) {
            say(format!(
                "version `{version}` is not semver (MAJOR.MINOR.PATCH)"
            ));
        }
        for t in a
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let tool = t.get("tool_id").and_then(Value::as_str).unwrap_or("");
            if t.get("rate_limit").and_then(Value::as_u64).unwrap_or(0) < 1 {
                say(format!(
                    "tool `{tool}` needs a rate_limit of at least 1 call per minute"
                ));
            }
        }
        for k in a
            .get("kpis")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let metric = k.get("metric_id").and_then(Value::as_str).unwrap_or("");
            let num = |f: &str| k.get(f).and_then(Value::as_f64).unwrap_or(f64::NAN);
            let dir = k
                .get("direction")
                .and_then(Value::as_str)
                .and_then(Direction::parse);
            match dir {
                Some(d)
                    if thresholds_ordered(
                        d,
                        num("target"),
                        num("threshold_warning"),
                        num("threshold_critical"),
                    ) => {}
                Some(d) => say(format!(
                    "KPI `{metric}` is `{}` is better, so its thresholds must be ordered target {} warning {} critical",
                    d.as_str(),
                    if d == Direction::Higher { ">" } else { "<" },
                    if d == Direction::Higher { ">" } else { "<" },
                )),
                None => say(format!(
                    "KPI `{metric}` needs a direction, `higher` or `lower`"
                )),
            }
        }
        if let Some(target) = a
            .pointer("/escalation/target_agent")
            .and_then(Value::as_str)
            && !ids.contains(&target)
        {
            say(format!(
                "escalates to `{target}`, which is not an agent of this registry"
            ));
        }
        let Some(index) = &skill_index else { continue };
        let role = a
            .get("role")
            .and_then(Value::as_str)
            .and_then(AgentRole::parse);
        let mut closure = BTreeSet::new();
        for s in a
            .get("skills")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = s.get("skill_id").and_then(Value::as_str).unwrap_or("");
            let Some(m) = index.get(name) else {
                say(format!(
                    "lists skill `{name}`, which the skill registry does not have"
                ));
                continue;
            };
            for cap in m
                .get("capabilities")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(cap) = cap.as_str() {
                    closure.insert(cap.to_owned());
                }
            }
            if let Some(role) = role
                && !admits(m, role)
            {
                say(format!(
                    "lists skill `{name}`, whose reusable_by does not allow role `{}` at `execute` or above; add `{} = \"execute\"` to the skill's reusable_by, or remove the skill",
                    role.as_str(),
                    role.as_str()
                ));
            }
        }
        let declared: BTreeSet<String> = a
            .get("capabilities")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str().map(str::to_owned))
            .collect();
        if declared != closure {
            say(format!(
                "capabilities {declared:?} are not the union of its skills' capabilities {closure:?}; they are computed, never declared"
            ));
        }
    }
    out
}

/// Whether skill manifest `m` (exported JSON) admits `role` at `execute`.
fn admits(m: &Value, role: AgentRole) -> bool {
    let reuse = m.get("reusable_by").and_then(Value::as_array);
    let Some(reuse) = reuse.filter(|r| !r.is_empty()) else {
        return true;
    };
    reuse.iter().any(|r| {
        r.get("agent_role").and_then(Value::as_str) == Some(role.as_str())
            && r.get("permission_level")
                .and_then(Value::as_str)
                .and_then(PermissionLevel::parse)
                .is_some_and(|l| l >= PermissionLevel::Execute)
    })
}
