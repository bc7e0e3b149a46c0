//! `export --format mcp|openai|unified`: each view checked against the format it
//! claims, by an independent validator (the official MCP schemas, the ADR's
//! contract schema), plus the mapping rules that a schema cannot see.

use serde_json::{Value, json};
use skill_tests::{run_ok, skill_examples, violations};

fn export(format: &str) -> Value {
    let out = run_ok(&mut skill_examples(&["export", "--format", format]));
    serde_json::from_slice(&out.stdout).expect("export prints JSON")
}

#[test]
fn mcp_view_is_a_valid_tools_list_result_with_derived_annotations() {
    let tools = export("mcp");
    // The 2025-11-25 result is exactly this; a 2026-07-28 result adds the
    // revision's cache fields around the same tools, checked one by one.
    let bad = violations(
        "tests/mcp/schema-2025-11-25.json",
        "ListToolsResult",
        &tools,
    );
    assert!(bad.is_empty(), "{bad:#?}");
    let list = tools["tools"].as_array().unwrap();
    for t in list {
        let bad = violations("tests/mcp/schema-2026-07-28.json", "Tool", t);
        assert!(bad.is_empty(), "{}: {bad:#?}", t["name"]);
    }
    let names: Vec<&str> = list.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "tools/list order is by name");
    let by_name = |n: &str| list.iter().find(|t| t["name"] == n).unwrap();

    for t in list {
        for side in ["inputSchema", "outputSchema"] {
            let s = &t[side];
            assert_eq!(
                s["type"], "object",
                "{}: {side} root is an object",
                t["name"]
            );
            assert!(
                !s.to_string().contains("#/$defs/"),
                "{}: {side} is self-contained (no recursive types here): {s}",
                t["name"]
            );
            jsonschema::meta::validate(s).expect("a valid JSON Schema");
        }
        let meta = &t["_meta"]["dev.skill-runtime/manifest"];
        assert!(
            meta["capabilities"].is_array() && meta["version"].is_string(),
            "{meta}"
        );
    }

    // No side effects: read-only, and the effect hints stay unset.
    let vlevel = by_name("ai_cos_vlevel_calc");
    assert_eq!(
        vlevel["annotations"],
        json!({"title": "V-Level Calculator", "readOnlyHint": true, "openWorldHint": false})
    );
    // Reversible writes: not read-only, not destructive, idempotent as declared.
    let reindex = &by_name("ai_cos_rag_reindex")["annotations"];
    assert_eq!(reindex["readOnlyHint"], false);
    assert_eq!(reindex["destructiveHint"], false);
    assert_eq!(reindex["idempotentHint"], true);
    // An irreversible delete: destructive.
    let purge = &by_name("ai_cos_rag_cache_purge")["annotations"];
    assert_eq!(purge["destructiveHint"], true);
    // The tool name is mcp.tool_name, the skill name otherwise.
    assert!(names.contains(&"creator_profile") && names.contains(&"echo"));
}

#[test]
fn openai_view_is_function_tools() {
    let tools = export("openai");
    let mcp = export("mcp");
    let list = tools.as_array().unwrap();
    assert_eq!(list.len(), mcp["tools"].as_array().unwrap().len());
    for t in list {
        assert_eq!(t["type"], "function");
        let f = &t["function"];
        let name = f["name"].as_str().unwrap();
        assert!(
            name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        );
        assert!(f["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert_eq!(f["parameters"]["type"], "object");
        assert!(f["parameters"].get("$schema").is_none());
        assert!(f["strict"].is_boolean());
        let same = mcp["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap();
        let mut params = same["inputSchema"].clone();
        params.as_object_mut().unwrap().remove("$schema");
        assert_eq!(
            f["parameters"], params,
            "{name}: the same parameters as the MCP tool"
        );
    }
}

#[test]
fn unified_view_is_strict_contract_v1_for_every_skill() {
    let contracts = export("unified");
    let bad = violations("unified-skill-contract-v1.schema.json", "", &contracts);
    assert!(bad.is_empty(), "{bad:#?}");
    let registry = export("registry");
    assert_eq!(
        contracts.as_array().unwrap().len(),
        registry["skills"].as_array().unwrap().len()
    );
    let purge = contracts
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["skill_id"] == "rag_cache_purge@1.0.0")
        .unwrap();
    assert_eq!(purge["constraints"]["is_destructive"], true);
    assert_eq!(purge["constraints"]["requires_hitl"], true);
    assert_eq!(purge["metadata"]["name"], "RAG Cache Purge");

    // The contract schema is strict: a missing or wrongly typed field is rejected.
    let mut missing = contracts.clone();
    missing[0]["constraints"]
        .as_object_mut()
        .unwrap()
        .remove("requires_hitl");
    assert!(!violations("unified-skill-contract-v1.schema.json", "", &missing).is_empty());
    let mut wrong = contracts.clone();
    wrong[0]["metadata"]["source"] = json!("global");
    assert!(!violations("unified-skill-contract-v1.schema.json", "", &wrong).is_empty());
}

/// OpenAI's structured-outputs rules for a strict function's parameters,
/// written here from OpenAI's documentation, apart from the view's own check:
/// the root is an object and not `anyOf`; every object lists every property in
/// `required` and sets `additionalProperties: false`; no keyword strict mode
/// does not support; `$ref` only inside the schema; nesting at most 10 deep.
fn openai_strict_violations(schema: &Value, at: &str, depth: usize, out: &mut Vec<String>) {
    const UNSUPPORTED: &[&str] = &[
        "patternProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "oneOf",
    ];
    let Some(o) = schema.as_object() else {
        out.push(format!("{at}: a boolean schema"));
        return;
    };
    if depth > 10 {
        out.push(format!("{at}: nested deeper than 10 levels"));
    }
    for k in o.keys().filter(|k| UNSUPPORTED.contains(&k.as_str())) {
        out.push(format!("{at}: keyword `{k}` is not supported"));
    }
    if let Some(r) = o.get("$ref").and_then(Value::as_str)
        && !r.starts_with('#')
    {
        out.push(format!("{at}: external $ref {r}"));
    }
    let typed_object = o.get("type") == Some(&json!("object"))
        || o.get("type")
            .and_then(Value::as_array)
            .is_some_and(|t| t.contains(&json!("object")));
    if typed_object || o.contains_key("properties") {
        if o.get("additionalProperties") != Some(&json!(false)) {
            out.push(format!("{at}: additionalProperties is not false"));
        }
        let required: Vec<&Value> = o
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().collect())
            .unwrap_or_default();
        for (name, p) in o
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if !required.contains(&&json!(name)) {
                out.push(format!("{at}/properties/{name}: not required"));
            }
            openai_strict_violations(p, &format!("{at}/properties/{name}"), depth + 1, out);
        }
    }
    if let Some(items) = o.get("items") {
        openai_strict_violations(items, &format!("{at}/items"), depth + 1, out);
    }
    for (i, b) in o
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        openai_strict_violations(b, &format!("{at}/anyOf/{i}"), depth + 1, out);
    }
    for (name, d) in o
        .get("$defs")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        openai_strict_violations(d, &format!("{at}/$defs/{name}"), depth + 1, out);
    }
}

#[test]
fn every_tool_marked_strict_meets_openais_strict_rules() {
    // The example tools, plus tools whose parameters are strict-clean, or
    // nearly so (a map, an optional property, an open nested object).
    let mut registry = export("registry");
    let template = registry["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["mcp"]["exposed"] == true)
        .unwrap()
        .clone();
    let closed = |props: Value, required: Value| json!({"type": "object", "properties": props, "required": required, "additionalProperties": false});
    let item = closed(json!({"id": {"type": "integer"}}), json!(["id"]));
    for (name, params) in [
        (
            "strict_clean",
            closed(
                json!({"q": {"type": "string"}, "items": {"type": "array", "items": item}, "mode": {"anyOf": [{"type": "string"}, {"type": "null"}]}}),
                json!(["q", "items", "mode"]),
            ),
        ),
        (
            "with_map",
            closed(
                json!({"tags": {"type": "object", "additionalProperties": {"type": "string"}}}),
                json!(["tags"]),
            ),
        ),
        (
            "with_optional",
            closed(
                json!({"q": {"type": "string"}, "n": {"type": "integer"}}),
                json!(["q"]),
            ),
        ),
        (
            "open_nested",
            closed(
                json!({"o": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}),
                json!(["o"]),
            ),
        ),
        (
            "via_defs",
            json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "required": ["p"], "additionalProperties": false, "$defs": {"P": {"type": "object", "properties": {"m": {"type": "object"}}, "required": ["m"], "additionalProperties": false}}}),
        ),
    ] {
        let mut s = template.clone();
        s["name"] = json!(name);
        s["mcp"]["tool_name"] = json!(name);
        s["inputs_schema"] = params;
        registry["skills"].as_array_mut().unwrap().push(s);
    }
    let tools = skill_runtime::views::openai_tools(&registry).unwrap();
    let strict_of = |n: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == n)
            .unwrap()["function"]["strict"]
            .clone()
    };
    assert_eq!(strict_of("strict_clean"), true);
    for n in ["with_map", "with_optional", "open_nested", "via_defs"] {
        assert_eq!(strict_of(n), false, "{n}");
    }
    let mut strict = 0;
    for t in tools.as_array().unwrap() {
        let f = &t["function"];
        let params = &f["parameters"];
        let mut problems = Vec::new();
        if params.get("anyOf").is_some() {
            problems.push("root anyOf".to_owned());
        }
        openai_strict_violations(params, "", 0, &mut problems);
        if f["strict"] == true {
            strict += 1;
            assert!(
                problems.is_empty(),
                "{} is marked strict: {problems:#?}",
                f["name"]
            );
        }
    }
    assert!(strict > 0);
}
