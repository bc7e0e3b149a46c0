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

/// Durations, timeouts and expiries past their bounds, through every door
/// of the command line: each refused with exit status 2 and the bound named,
/// before anything runs or is queued (a panic would exit 101).
#[test]
fn extreme_values_are_refused_at_every_door() {
    let dir = skill_tests::temp_dir("extreme-values");
    let envelope = |name: &str, job: Value| {
        let path = dir.join(name);
        std::fs::write(&path, job.to_string()).unwrap();
        path.display().to_string()
    };
    let huge_timeout = envelope(
        "timeout.json",
        serde_json::json!({
            "skill": "echo", "payload": {"message": "x"},
            "constraints": {"timeout": 18_446_744_073_709_551_u64},
            "context": {"source": "manual"}
        }),
    );
    let far_expiry = envelope(
        "expiry.json",
        serde_json::json!({
            "skill": "echo", "payload": {"message": "x"},
            "context": {"source": "manual"},
            "expiresAt": "+570399320-01-01T00:00:00Z"
        }),
    );
    let nowhere = "redis://127.0.0.1:1/0";
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "invoke",
                "echo",
                r#"{"message":"x"}"#,
                "--timeout-ms",
                "18446744073709551",
            ],
            "18446744073709551",
        ),
        (
            &["invoke", "echo", r#"{"message":"x"}"#, "--timeout-ms", "0"],
            "0",
        ),
        (
            &["worker", "--redis", nowhere, "--visibility", "0s"],
            "outside 1s to 1d",
        ),
        (
            &[
                "worker",
                "--redis",
                nowhere,
                "--visibility",
                "5000000000000h",
            ],
            "outside 1s to 1d",
        ),
        (
            &["worker", "--redis", nowhere, "--lock-ttl", "400d"],
            "outside 1s to 1d",
        ),
        (
            &["worker", "--redis", nowhere, "--result-ttl", "0s"],
            "outside 1s to 30d",
        ),
        (
            &["worker", "--redis", nowhere, "--grace", "2d"],
            "outside 0ms to 1d",
        ),
        (&["worker", "--redis", nowhere, "--concurrency", "0"], "0"),
        (
            &["worker", "--redis", nowhere, "--max-deliveries", "0"],
            "0",
        ),
        (
            &[
                "enqueue",
                "echo",
                r#"{"message":"x"}"#,
                "--redis",
                nowhere,
                "--expires-in",
                "5000000000000h",
            ],
            "outside 0ms to 3650d",
        ),
        (
            &[
                "enqueue",
                "echo",
                r#"{"message":"x"}"#,
                "--redis",
                nowhere,
                "--wait",
                "--wait-limit",
                "99999999999999999999d",
            ],
            "outside 0ms to 30d",
        ),
        (
            &["enqueue", "--redis", nowhere, "--envelope", &huge_timeout],
            "outside 1 ms to",
        ),
        (
            &["enqueue", "--redis", nowhere, "--envelope", &far_expiry],
            "not an RFC 3339 date-time",
        ),
    ];
    for (args, says) in cases {
        let out = skill_examples(args).output().expect("the app runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} says {says:?}: {err}");
    }
}
