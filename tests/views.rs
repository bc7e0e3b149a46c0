//! `export --format mcp|openai|unified`: each view checked against the format it
//! claims, by an independent validator (the official MCP schemas, the ADR's
//! contract schema), plus the mapping rules that a schema cannot see.

use serde_json::{Value, json};
use skill_tests::{root, run_ok, skill_examples};

fn export(format: &str) -> Value {
    let out = run_ok(&mut skill_examples(&["export", "--format", format]));
    serde_json::from_slice(&out.stdout).expect("export prints JSON")
}

/// Violations of `instance` against definition `def` of a schema file.
fn violations(schema_file: &str, def: &str, instance: &Value) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(schema_file)).expect("schema file");
    let mut schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    if !def.is_empty() {
        schema["$ref"] = json!(format!("#/$defs/{def}"));
    }
    let validator = jsonschema::draft202012::new(&schema).expect("schema compiles");
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
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
