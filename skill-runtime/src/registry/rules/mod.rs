//! The registry's rules, checked over the exported JSON: one implementation
//! for every registry, whether built from Rust or read from files.
//!
//! [`Registry::build`](crate::registry::build) exports what the linked crates
//! declare, runs [`check_registry`] on it and maps each finding back to the
//! source location of the entry it names; `skill-registry validate` runs the
//! same function on files from anywhere. A registry built from Rust and a
//! registry written by hand are therefore held to the same rules, word for word.

mod closure;
mod entry;
pub mod finding;
mod index;
pub mod pipeline;
pub mod schema;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::registry::json::{array, label, str_of, strings};
use crate::registry::rules::entry::{Catalog, Kind, one_capability, one_entry};
use crate::registry::rules::finding::{At, Finding, subject};
use crate::registry::rules::index::Index;
use crate::registry::rules::pipeline::check_pipelines;
use crate::registry::views::tool_name;

/// Every rule of a `skill-registry.json` value, with its ops
/// (`op-registry.json`) and capability catalog (`capabilities.json`) when given:
/// each entry on its own, then the rules between entries (duplicates, call
/// targets, replacements, MCP tool names, pipelines). The format itself (field
/// names and types) is the published JSON Schema's business; this checks what
/// a schema cannot say.
pub fn check_registry(
    registry: &Value,
    ops: Option<&Value>,
    catalog: Option<&Value>,
) -> Vec<Finding> {
    let skills = array(registry, "skills");
    let op_list = ops.map(|o| array(o, "ops")).unwrap_or_default();
    let mut findings = Vec::new();
    let known = catalog.map(|c| check_catalog(array(c, "capabilities"), &mut findings));
    let index = Index::new(skills, op_list);
    let lists = [
        (Kind::Skill, "skill", skills, At::Skills as fn(usize) -> At),
        (Kind::Op, "op", op_list, At::Ops),
    ];
    for (kind, word, items, at) in lists {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (i, v) in items.iter().enumerate() {
            let who = subject(word, v);
            if let Some(&first) = seen.get(&label(v)) {
                findings.push(Finding {
                    also: Some(at(first)),
                    ..Finding::new(who.clone(), at(i), "defined twice")
                });
            } else {
                seen.insert(label(v), i);
            }
            let mut problem =
                |message: String| findings.push(Finding::new(who.clone(), at(i), message));
            one_entry(v, kind, known.as_ref(), &mut problem);
            let mut unresolved =
                |message: String| findings.push(Finding::unresolved(who.clone(), at(i), message));
            let names = if kind == Kind::Op {
                &index.ops
            } else {
                &index.skills
            };
            if let Some(r) = v
                .pointer("/deprecation/replaced_by")
                .and_then(Value::as_str)
                && !names.contains_key(r)
            {
                unresolved(format!(
                    "replaced_by names `{r}`, which is not in the registry"
                ));
            }
            for t in array(v, "call_targets") {
                if str_of(t, "kind") == "op" && ops.is_none() {
                    unresolved(format!(
                        "call target op `{}` cannot be checked without the op registry (pass --ops FILE)",
                        str_of(t, "name")
                    ));
                } else if let Err(e) = index.target(t) {
                    unresolved(format!(
                        "call target {e}; is the crate (or registry file) that defines it included?"
                    ));
                }
            }
        }
    }
    check_tool_names(skills, &mut findings);
    check_intents(skills, &mut findings);
    check_closures(skills, op_list, &mut findings);
    findings
}

/// The rules of each capability of a catalog on its own, and no id twice;
/// the catalog by id.
fn check_catalog<'a>(capabilities: &'a [Value], findings: &mut Vec<Finding>) -> Catalog<'a> {
    let mut known: Catalog<'a> = BTreeMap::new();
    let mut first: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, c) in capabilities.iter().enumerate() {
        let id = str_of(c, "id");
        let who = format!("capability `{id}`");
        one_capability(c, &mut |message| {
            findings.push(Finding::new(who.clone(), At::Capabilities(i), message))
        });
        match first.get(id) {
            Some(&f) => findings.push(Finding {
                also: Some(At::Capabilities(f)),
                ..Finding::new(who, At::Capabilities(i), "declared twice")
            }),
            None => {
                first.insert(id, i);
                known.insert(id, c);
            }
        }
    }
    known
}

/// Exposed skills of different names do not share an MCP tool name.
fn check_tool_names(skills: &[Value], findings: &mut Vec<Finding>) {
    let mut tools: BTreeMap<&str, &str> = BTreeMap::new();
    for (i, s) in skills.iter().enumerate() {
        if s.pointer("/mcp/exposed").and_then(Value::as_bool) == Some(true) {
            let tool = tool_name(s);
            let name = str_of(s, "name");
            if let Some(other) = tools.insert(tool, name)
                && other != name
            {
                findings.push(Finding::new(
                    subject("skill", s),
                    At::Skills(i),
                    format!("MCP tool name `{tool}` is also used by skill `{other}`"),
                ));
            }
        }
    }
}

/// An intent is served by one skill (any of its versions): a job that names the
/// intent must know what runs.
fn check_intents(skills: &[Value], findings: &mut Vec<Finding>) {
    let mut served: BTreeMap<String, &str> = BTreeMap::new();
    for (i, s) in skills.iter().enumerate() {
        let name = str_of(s, "name");
        for intent in strings(s, "intents") {
            match served.get(intent.as_str()) {
                Some(&other) if other != name => findings.push(Finding::new(
                    subject("skill", s),
                    At::Skills(i),
                    format!("intent `{intent}` is also served by skill `{other}`"),
                )),
                _ => {
                    served.insert(intent, name);
                }
            }
        }
    }
}

/// Pipelines' steps, and their capabilities: the union of their steps', never
/// declared otherwise.
fn check_closures(skills: &[Value], ops: &[Value], findings: &mut Vec<Finding>) {
    let (pipeline_findings, closures) = check_pipelines(skills, ops);
    findings.extend(pipeline_findings);
    for (i, p) in skills.iter().enumerate() {
        if str_of(p, "kind") != "pipeline" {
            continue;
        }
        // A part of a closure says nothing of the whole.
        let Some(c) = closures.get(&label(p)).filter(|c| !c.partial) else {
            continue;
        };
        let declared = strings(p, "capabilities");
        if declared != c.capabilities {
            findings.push(Finding::new(
                subject("pipeline", p),
                At::Skills(i),
                format!(
                    "capabilities are [{}] but its steps need [{}]; a pipeline's capabilities are the union of its steps'",
                    declared.into_iter().collect::<Vec<_>>().join(", "),
                    c.capabilities.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
}
