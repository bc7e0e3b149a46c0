//! An independent consumer in its strict and default modes: ajv 8 (draft
//! 2020-12, with ajv-formats) compiles every published format schema, every
//! input and output schema of the exported skills and ops, and every schema of
//! the MCP and OpenAI views, and validates each exported document against its
//! format schema. ajv's strict mode refuses unknown formats and keywords and
//! `required` without matching `properties`: what the runtime's own validator
//! lets through.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use skill_tests::{root, run_ok, skill_examples};

fn export(args: &[&str]) -> Value {
    let out = run_ok(&mut skill_examples(args));
    serde_json::from_slice(&out.stdout).expect("the export is JSON")
}

/// Problems ajv finds, each naming the mode, the schema and the place.
fn ajv(input: &Value) -> Vec<String> {
    let mut child = Command::new("node")
        .arg(root().join("tests/mcp/ajv-check.cjs"))
        .current_dir(root().join("tests/mcp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs (README: npm ci --prefix tests/mcp)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON list")
}

fn schema_file(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn brainos(name: &str) -> Value {
    let path = skill_tests::root()
        .join("tests/fixtures/brainos")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn ajv_strict_and_default_accept_every_schema_and_exported_document() {
    let registry = export(&["export"]);
    let ops = export(&["export", "--format", "ops"]);
    let agents = export(&["export", "--agents"]);
    let unified = export(&["export", "--format", "unified"]);
    let mcp = export(&["export", "--format", "mcp", "--protocol", "2026-07-28"]);
    let openai = export(&["export", "--format", "openai"]);

    let mut schemas = Vec::new();
    for file in [
        "skill-registry.schema.json",
        "op-registry.schema.json",
        "agent-registry.schema.json",
        "unified-skill-contract-v1.schema.json",
        "job-envelope.schema.json",
        "brainos-registry.schema.json",
    ] {
        schemas.push(json!({"name": file, "schema": schema_file(file)}));
    }
    for (doc, list, label) in [(&registry, "skills", "skill"), (&ops, "ops", "op")] {
        for s in doc[list].as_array().unwrap() {
            for side in ["inputs_schema", "outputs_schema"] {
                schemas.push(json!({
                    "name": format!("{label} {}@{} {side}", s["name"].as_str().unwrap(), s["version"].as_str().unwrap()),
                    "schema": s[side],
                }));
            }
        }
    }
    for t in mcp["tools"].as_array().unwrap() {
        for side in ["inputSchema", "outputSchema"] {
            if let Some(schema) = t.get(side) {
                schemas.push(
                    json!({"name": format!("MCP tool {} {side}", t["name"]), "schema": schema}),
                );
            }
        }
    }
    for t in openai.as_array().unwrap() {
        let f = &t["function"];
        schemas.push(json!({"name": format!("OpenAI tool {} parameters", f["name"]), "schema": f["parameters"]}));
    }
    let documents = json!([
        {"name": "skill-registry.json", "schema": "skill-registry.schema.json", "doc": registry},
        {"name": "op-registry.json", "schema": "op-registry.schema.json", "doc": ops},
        {"name": "agent-registry.json", "schema": "agent-registry.schema.json", "doc": agents},
        {"name": "the unified view", "schema": "unified-skill-contract-v1.schema.json", "doc": unified},
        {"name": "skill-registry.json read as Brain OS", "schema": "brainos-registry.schema.json", "doc": registry},
        {"name": "seed 001's example", "schema": "brainos-registry.schema.json", "doc": brainos("seed-001-registry.json")},
        {"name": "seed 001's pipeline example", "schema": "brainos-registry.schema.json", "doc": brainos("seed-001-pipeline-registry.json")},
    ]);
    assert!(schemas.len() > 60, "{} schemas", schemas.len());
    let problems = ajv(&json!({"schemas": schemas, "documents": documents}));
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The check can fail: ajv's strict mode refuses what it must refuse.
#[test]
fn ajv_strict_refuses_unknown_formats_and_orphan_required() {
    let problems = ajv(&json!({
        "schemas": [
            {"name": "uint", "schema": {"type": "integer", "format": "uint8"}},
            {"name": "orphan", "schema": {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}},
        ],
        "documents": [],
    }));
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("strict: schema uint:")),
        "{problems:#?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("default: schema uint:")),
        "{problems:#?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("strict: schema orphan:")),
        "{problems:#?}"
    );
}
