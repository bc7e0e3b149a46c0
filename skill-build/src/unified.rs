//! The ADR's `validateSkillContract` (ADR-0002, UnifiedSkillContract v1) for
//! contracts that come from a global source: every required field present
//! with its type (a contract with any problem is rejected whole, never
//! coerced), `metadata.source` GLOBAL, both schemas valid JSON Schemas, the
//! input schema an object schema (it validates tool-call arguments), and each
//! `skill_id` unique.

use std::collections::BTreeSet;

use serde_json::Value;
use skill_runtime::schema::CompiledSchema;

/// The ADR's UnifiedSkillContract v1: a list of contracts.
pub const UNIFIED_CONTRACT_SCHEMA: &str =
    include_str!("../schemas/unified-skill-contract-v1.schema.json");

/// The `skill_id`s of the contracts in `doc` (one contract or a list) that
/// pass every rule, and each problem found, named by contract.
pub fn check_contracts(doc: &Value) -> (Vec<String>, Vec<String>) {
    let contracts: Vec<&Value> = match doc {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![doc],
        _ => {
            return (
                Vec::new(),
                vec!["expected a contract (an object) or a list of contracts".to_owned()],
            );
        }
    };
    let item_schema = match contract_schema() {
        Ok(s) => s,
        Err(e) => return (Vec::new(), vec![e]),
    };
    let mut accepted = Vec::new();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, contract) in contracts.into_iter().enumerate() {
        let id = contract.get("skill_id").and_then(Value::as_str);
        let label = match id {
            Some(id) if !id.trim().is_empty() => format!("contract {i} (`{id}`)"),
            _ => format!("contract {i}"),
        };
        let mut own: Vec<String> = item_schema
            .violations(contract)
            .into_iter()
            .map(|v| format!("{label}: {v}"))
            .collect();
        // Past the format, the rules a schema does not say.
        if own.is_empty() {
            own.extend(rules(contract).into_iter().map(|p| format!("{label}: {p}")));
        }
        if let Some(id) = id
            && !seen.insert(id.to_owned())
        {
            own.push(format!(
                "{label}: skill_id `{id}` is already used by an earlier contract; each skill_id is globally unique"
            ));
        }
        if own.is_empty() {
            accepted.push(id.unwrap_or_default().to_owned());
        }
        problems.extend(own);
    }
    (accepted, problems)
}

/// The published schema's contract (its `items`), compiled.
fn contract_schema() -> Result<CompiledSchema, String> {
    let schema: Value = serde_json::from_str(UNIFIED_CONTRACT_SCHEMA)
        .map_err(|e| format!("the published contract schema does not parse: {e}"))?;
    let mut item = schema.get("items").cloned().unwrap_or_default();
    if let (Some(o), Some(dialect)) = (item.as_object_mut(), schema.get("$schema")) {
        o.insert("$schema".to_owned(), dialect.clone());
    }
    CompiledSchema::compile(&item)
        .map_err(|e| format!("the published contract schema does not compile: {e}"))
}

/// The ADR's rules past types: a contract already valid for the format.
fn rules(c: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for field in ["/skill_id", "/metadata/name", "/metadata/description"] {
        if c.pointer(field)
            .and_then(Value::as_str)
            .is_some_and(|s| s.trim().is_empty())
        {
            problems.push(format!("{field} is blank; the ADR requires it"));
        }
    }
    if c.pointer("/metadata/source").and_then(Value::as_str) == Some("LOCAL") {
        problems.push(
            "/metadata/source is LOCAL: import takes GLOBAL contracts; a local skill is declared with #[skill] and exported by skill-build".to_owned(),
        );
    }
    for side in ["input_schema", "output_schema"] {
        let Some(schema) = c.pointer(&format!("/interface/{side}")) else {
            continue;
        };
        if let Err(e) = CompiledSchema::compile(schema) {
            problems.push(format!("/interface/{side} is not a valid JSON Schema: {e}"));
        }
    }
    let input_type = c.pointer("/interface/input_schema/type");
    if input_type != Some(&Value::String("object".to_owned())) {
        problems.push(format!(
            "/interface/input_schema must describe an object (`\"type\": \"object\"`): it validates tool-call arguments; found type {}",
            input_type.map_or("none".to_owned(), Value::to_string)
        ));
    }
    problems
}
