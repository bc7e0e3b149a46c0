//! `skill-examples` read commands in JSON, its completions, and the MCP export
//! for each protocol revision, checked against that revision's schema.

use serde_json::Value;
use skill_tests::{run_ok, skill_examples, violations};

fn json_of(args: &[&str]) -> Value {
    let out = run_ok(&mut skill_examples(args));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?} prints JSON: {e}"))
}

#[test]
fn list_and_agents_print_json_with_the_table_fields() {
    let skills = json_of(&["list", "--json"]);
    let exported = json_of(&["export"]);
    let ops = json_of(&["export", "--format", "ops"]);
    let (listed_ops, listed_skills): (Vec<&Value>, Vec<&Value>) = skills
        .as_array()
        .unwrap()
        .iter()
        .partition(|s| s["kind"].as_str().unwrap().starts_with("op:"));
    assert_eq!(
        listed_skills.len(),
        exported["skills"].as_array().unwrap().len()
    );
    assert_eq!(listed_ops.len(), ops["ops"].as_array().unwrap().len());
    let vlevel = skills
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "vlevel_calculator")
        .expect("vlevel listed");
    assert_eq!(vlevel["kind"], "logic");
    assert!(vlevel["capabilities"].is_array() && vlevel["description"].is_string());

    let agents = json_of(&["agents", "--json"]);
    let vlevel = agents
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == "agent.seo.vlevel")
        .expect("agent listed");
    assert_eq!(vlevel["role"], "executor");
    assert!(vlevel["skills"].as_array().unwrap().len() >= 3, "{vlevel}");
}

#[test]
fn completions_are_scripts_the_shells_read() {
    let out = run_ok(&mut skill_examples(&["completions", "bash"]));
    let script = String::from_utf8(out.stdout).unwrap();
    for command in ["invoke", "mcp", "worker", "enqueue", "agents"] {
        assert!(script.contains(command), "{command}");
    }
    let status = std::process::Command::new("bash")
        .args(["-n", "-c", &script])
        .status()
        .expect("bash runs");
    assert!(status.success());
}

#[test]
fn mcp_export_validates_against_each_protocol_revision() {
    for (protocol, schema) in [
        ("2025-11-25", "tests/mcp/schema-2025-11-25.json"),
        ("2026-07-28", "tests/mcp/schema-2026-07-28.json"),
    ] {
        let doc = json_of(&["export", "--format", "mcp", "--protocol", protocol]);
        let errors = violations(schema, "ListToolsResult", &doc);
        assert!(errors.is_empty(), "{protocol}: {errors:#?}");
        assert_eq!(doc.get("resultType").is_some(), protocol == "2026-07-28");
    }
}
