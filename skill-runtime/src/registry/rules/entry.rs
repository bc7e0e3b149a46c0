//! The rules of one skill, op or capability on its own: names, versions,
//! descriptions, capabilities against the catalog, side effects, failure
//! modes, lifecycle, MCP exposure, redaction and schema roots.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use skill_core::capability::{EffectType, Operation, is_effectful};
use skill_core::manifest::Domain;
use skill_core::names::{
    DescriptionProblem, MAX_DESCRIPTION, check_description, check_semver, is_capability_id,
    is_mcp_tool_name, is_snake_case,
};

use crate::registry::json::{array, bool_of, str_of, strings};
use crate::registry::rules::schema::property;
use crate::registry::views::tool_name;

/// The catalog's entries by id (`capabilities.json`).
pub(super) type Catalog<'a> = BTreeMap<&'a str, &'a Value>;

/// Whether an entry is a skill (of `skill-registry.json`) or an op.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Skill,
    Op,
}

/// The rules of one skill or op on its own, each broken one reported through
/// `problem`. Capabilities are checked against `catalog` when there is one.
pub(super) fn one_entry(
    v: &Value,
    kind: Kind,
    catalog: Option<&Catalog<'_>>,
    problem: &mut impl FnMut(String),
) {
    identity(v, problem);
    execution(v, problem);
    capabilities(v, catalog, problem);
    lifecycle(v, problem);
    for intent in strings(v, "intents") {
        if !is_snake_case(&intent) {
            problem(format!("intent `{intent}` is not snake_case"));
        }
    }
    let mut codes = BTreeSet::new();
    for f in array(v, "failure_modes") {
        let code = str_of(f, "code");
        if !is_snake_case(code) {
            problem(format!("failure mode code `{code}` is not snake_case"));
        }
        if !codes.insert(code) {
            problem(format!("failure mode code `{code}` appears twice"));
        }
    }
    match (kind, bool_of(v, "/mcp/exposed")) {
        (Kind::Op, true) => {
            problem("ops are not served over MCP; expose a skill that calls the op".to_owned())
        }
        (Kind::Skill, true) if !is_mcp_tool_name(tool_name(v)) => problem(format!(
            "MCP tool name `{}` must be 1 to 128 of A-Z a-z 0-9 _ - .",
            tool_name(v)
        )),
        _ => {}
    }
    match (str_of(v, "kind"), array(v, "steps").is_empty()) {
        ("pipeline", _) | (_, true) => {}
        _ => problem("only pipeline skills have steps; declare it with #[pipeline]".to_owned()),
    }
    schemas(v, problem);
}

/// Name, version and description.
fn identity(v: &Value, problem: &mut impl FnMut(String)) {
    let name = str_of(v, "name");
    if !is_snake_case(name) {
        problem(format!("name `{name}` is not snake_case"));
    }
    let version = str_of(v, "version");
    if let Err(e) = check_semver(version) {
        problem(format!("version `{version}` is not semver: {e}"));
    }
    if let Some(domain) = v.get("domain").and_then(Value::as_str)
        && Domain::parse(domain).is_none()
    {
        let words: Vec<&str> = Domain::ALL.iter().map(|d| d.as_str()).collect();
        problem(format!(
            "domain `{domain}` is not one of the AI-COS domains ({})",
            words.join(", ")
        ));
    }
    match check_description(str_of(v, "description")) {
        Ok(()) => {}
        Err(DescriptionProblem::Empty) => problem("description is empty".to_owned()),
        Err(DescriptionProblem::TooLong(_)) => problem(format!(
            "description is longer than {MAX_DESCRIPTION} characters"
        )),
    }
}

/// Capability ids, their presence in the catalog, effectful ones listed as
/// side effects, side effects among the capabilities, and irreversible
/// deletes only on skills marked destructive.
fn capabilities(v: &Value, catalog: Option<&Catalog<'_>>, problem: &mut impl FnMut(String)) {
    let capabilities = strings(v, "capabilities");
    let side_effects = strings(v, "side_effects");
    for c in &capabilities {
        if !is_capability_id(c) {
            problem(format!("capability `{c}` is not of the form `domain.verb`"));
        }
        match catalog.map(|k| k.get(c.as_str())) {
            Some(None) => problem(format!(
                "capability `{c}` is not in the capability catalog; is the crate (or the capabilities file) that declares it included?"
            )),
            Some(Some(info)) => {
                let effect = str_of(info, "effect_type");
                let operation = str_of(info, "operation");
                let effectful = match (EffectType::parse(effect), Operation::parse(operation)) {
                    (Some(e), Some(o)) => is_effectful(e, o),
                    // Words outside the vocabularies are the format schema's finding.
                    _ => false,
                };
                if effectful && !side_effects.contains(c) {
                    problem(format!(
                        "capability `{c}` changes the world ({effect} {operation}) but is not listed in side_effects"
                    ));
                }
            }
            None => {}
        }
    }
    for s in side_effects.difference(&capabilities) {
        problem(format!("side effect `{s}` is not among the capabilities"));
    }
    if !bool_of(v, "/constraints/is_destructive") {
        for e in array(v, "side_effect_details") {
            if str_of(e, "operation") == "delete" && e.get("reversible") == Some(&false.into()) {
                problem(format!(
                    "side effect `{}` is an irreversible delete but the skill is not marked destructive",
                    str_of(e, "capability")
                ));
            }
        }
    }
}

/// The execution policy's values within their bounds: a registry file read
/// back (or an overlaid one) is a door like the attribute.
fn execution(v: &Value, problem: &mut impl FnMut(String)) {
    let Some(e) = v.get("execution") else {
        return;
    };
    let number = |key: &str| e.get(key).and_then(Value::as_u64);
    if let (Some(timeout), Some(retries)) = (number("timeout_ms"), number("retries")) {
        for p in skill_core::manifest::Execution::problems(timeout, retries) {
            problem(p);
        }
    }
}

/// Status against deprecation metadata, and the removal version.
fn lifecycle(v: &Value, problem: &mut impl FnMut(String)) {
    match (str_of(v, "status"), v.get("deprecation")) {
        ("deprecated", None) => {
            problem("status is `deprecated` but there is no deprecation metadata".to_owned())
        }
        ("enabled" | "disabled", Some(_)) => {
            problem("has deprecation metadata but its status is not `deprecated`".to_owned())
        }
        _ => {}
    }
    let Some(removal) = v
        .pointer("/deprecation/removal_version")
        .and_then(Value::as_str)
    else {
        return;
    };
    match (check_semver(removal), check_semver(str_of(v, "version"))) {
        (Err(_), _) => problem(format!("removal_version `{removal}` is not semver")),
        (Ok(r), Ok(version)) if r <= version => problem(format!(
            "removal_version `{removal}` is not after version `{version}`"
        )),
        _ => {}
    }
}

/// Input and output schemas have an object root, and redacted fields are
/// properties of them.
fn schemas(v: &Value, problem: &mut impl FnMut(String)) {
    for (side, key) in [("input", "inputs_schema"), ("output", "outputs_schema")] {
        let Some(schema) = v.get(key) else { continue };
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            problem(format!(
                "the {side} type must serialize to a JSON object (a struct with named fields); its schema is {schema}"
            ));
            continue;
        }
        if side == "input" {
            for field in strings_at(v, "/idempotency/key_fields") {
                let payload_field = field
                    .strip_prefix("payload.")
                    .and_then(|f| f.split('.').next());
                if let Some(f) = payload_field
                    && property(schema, f).is_none()
                {
                    problem(format!(
                        "idempotency key field `{field}` reads input field `{f}`, which is not a property of the input schema"
                    ));
                }
            }
        }
        let redacted = v
            .pointer(&format!("/redaction/{side}s"))
            .and_then(Value::as_array);
        for field in redacted.into_iter().flatten().filter_map(Value::as_str) {
            if property(schema, field).is_none() {
                problem(format!(
                    "redacted {side} field `{field}` is not a property of the {side} schema"
                ));
            }
        }
    }
}

/// The rules of one capability of a catalog: its id is `domain.verb`.
pub(super) fn one_capability(c: &Value, problem: &mut impl FnMut(String)) {
    let id = str_of(c, "id");
    if !is_capability_id(id) {
        problem(format!("id `{id}` is not of the form `domain.verb`"));
    }
}

/// The strings of the array at `pointer` in `v`.
fn strings_at<'a>(v: &'a Value, pointer: &str) -> impl Iterator<Item = &'a str> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}
