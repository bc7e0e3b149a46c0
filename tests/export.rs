//! End to end: the real build script of `skill-examples` writes the real files.

use std::fs;

use serde_json::Value;
use skill_tests::*;

fn build_with_out(path: &std::path::Path) {
    run_ok(
        cargo()
            .args(["build", "-q", "-p", "skill-examples"])
            .env("SKILL_REGISTRY_OUT", path),
    );
}

#[test]
fn build_script_export_matches_cli_is_deterministic_and_valid() {
    let dir = temp_dir("export");
    let first = dir.join("first/reg.json");
    let second = dir.join("second/reg.json");
    build_with_out(&first);
    build_with_out(&second);
    let a = fs::read(&first).expect("SKILL_REGISTRY_OUT written");
    let b = fs::read(&second).expect("SKILL_REGISTRY_OUT written on the second build");
    assert_eq!(a, b, "two builds wrote different bytes");
    assert!(
        dir.join("first/capabilities.json").is_file(),
        "capabilities.json beside the registry"
    );

    let cli = run_ok(&mut skill_examples(&["export"])).stdout;
    assert_eq!(
        String::from_utf8_lossy(&a),
        String::from_utf8_lossy(&cli),
        "`export` prints the exported bytes"
    );
    let caps_cli = run_ok(&mut skill_examples(&["export", "--capabilities"])).stdout;
    assert_eq!(
        fs::read(dir.join("first/capabilities.json")).unwrap(),
        caps_cli
    );

    let registry: Value = serde_json::from_slice(&a).expect("registry is JSON");
    assert_eq!(format_violations(&registry), Vec::<String>::new());
    assert_eq!(invalid_skill_schemas(&registry), Vec::<String>::new());
    assert_eq!(registry["skills"].as_array().unwrap().len(), 24);
    let ops_cli = run_ok(&mut skill_examples(&["export", "--format", "ops"])).stdout;
    assert_eq!(
        fs::read(dir.join("first/op-registry.json")).expect("op-registry.json beside the registry"),
        ops_cli,
        "`export --format ops` prints the exported op registry"
    );
    let ops: Value = serde_json::from_slice(&ops_cli).expect("op registry is JSON");
    assert_eq!(ops["ops"].as_array().unwrap().len(), 3);

    // The published files pass every rule of the tool that never compiles Rust.
    let path = |name: &str| dir.join("first").join(name).to_string_lossy().into_owned();
    let (code, out, err) = registry_cli(&[
        "validate",
        &path("reg.json"),
        "--capabilities",
        &path("capabilities.json"),
        "--ops",
        &path("op-registry.json"),
        "--agents",
        &path("agent-registry.json"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("valid skill-build export (24 skills, 6 pipelines, 3 ops, 4 agents)"),
        "{out}"
    );

    // With no options, the files beside the registry are read.
    let (code, out, err) = registry_cli(&["validate", &path("reg.json")]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("valid skill-build export (24 skills, 6 pipelines, 3 ops, 4 agents)"),
        "{out}"
    );

    // agent-registry.json beside it: the bytes `export --agents` prints, the
    // same on both builds, valid for the published schema by an independent
    // validator, with the seed's agent whole and the team's cross-crate one.
    let agents = fs::read(dir.join("first/agent-registry.json"))
        .expect("agent-registry.json beside the registry");
    assert_eq!(
        agents,
        fs::read(dir.join("second/agent-registry.json")).unwrap()
    );
    assert_eq!(
        agents,
        run_ok(&mut skill_examples(&["export", "--agents"])).stdout
    );
    let out = run_ok(std::process::Command::new("python3").args([
        "-c",
        "import json, sys, jsonschema\n\
         schema = json.load(open(sys.argv[1]))\n\
         jsonschema.Draft202012Validator.check_schema(schema)\n\
         errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))\n\
         print('\\n'.join(e.message for e in errors) or 'ok')",
    ]).arg(root().join("agent-registry.schema.json")).arg(dir.join("first/agent-registry.json")));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
    let agents: Value = serde_json::from_slice(&agents).unwrap();
    let by_id = |id: &str| {
        agents["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} exported"))
    };
    let vlevel = by_id("agent.seo.vlevel");
    let skills: Vec<&str> = vlevel["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["skill_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        skills,
        ["seo_role_audit", "canonical_check", "vlevel_calculator"]
    );
    assert_eq!(vlevel["role"], "executor");
    assert_eq!(vlevel["tools"][0]["tool_id"], "mcp__supabase__execute_sql");
    assert_eq!(vlevel["tools"][1]["rate_limit"], 30);
    assert_eq!(vlevel["memory"]["short_term"]["max_tokens"], 50000);
    assert_eq!(vlevel["memory"]["long_term"]["storage"], "supabase");
    assert_eq!(
        vlevel["memory"]["shared"]["namespaces"],
        serde_json::json!(["seo:scores", "seo:audit"])
    );
    assert_eq!(
        vlevel["validation"]["pre_conditions"][0]["error_code"],
        "INVALID_URL_COUNT"
    );
    assert_eq!(
        vlevel["validation"]["post_conditions"][0]["error_code"],
        "SCORE_MISMATCH"
    );
    assert_eq!(vlevel["escalation"]["target_agent"], "agent.seo.architect");
    assert_eq!(vlevel["kpis"][0]["metric_id"], "task_success_rate");
    assert_eq!(vlevel["kpis"][1]["threshold_critical"], 30000.0);
    assert_eq!(vlevel["inputs"][1]["name"], "urls");
    assert_eq!(vlevel["inputs"][1]["required"], true);
    assert_eq!(
        vlevel["capabilities"],
        serde_json::json!(["database.read", "database.write", "seo.audit", "seo.read"]),
        "the union of its skills' capabilities"
    );
    let digest = by_id("agent.team.digest");
    assert_eq!(digest["skills"][0]["skill_id"], "summarize_text");

    let out = brainos_validate(&first, &dir.join("first/capabilities.json"));
    assert!(
        out.status.success(),
        "Brain OS validator rejected the export:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn out_dir_holds_both_artifacts() {
    run_ok(cargo().args(["build", "-q", "-p", "skill-examples"]));
    let build = root().join("target/debug/build");
    let out_dirs: Vec<_> = fs::read_dir(&build)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path().join("out"))
        .filter(|p| p.join("skill-registry.json").is_file())
        .collect();
    assert!(
        !out_dirs.is_empty(),
        "no OUT_DIR with skill-registry.json under {}",
        build.display()
    );
    for dir in out_dirs {
        let caps: Value =
            serde_json::from_slice(&fs::read(dir.join("capabilities.json")).unwrap()).unwrap();
        assert!(
            caps["capabilities"]
                .as_array()
                .is_some_and(|c| !c.is_empty())
        );
    }
}

#[test]
fn published_format_rejects_what_the_seed_forbids() {
    let good: Value = serde_json::from_str(&run_cli_export()).unwrap();
    assert!(format_violations(&good).is_empty());
    let mutate = |f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        format_violations(&v)
    };
    assert!(!mutate(&|v| v["skills"][0]["name"] = "NotSnake".into()).is_empty());
    assert!(!mutate(&|v| v["skills"][0]["version"] = "1.0".into()).is_empty());
    assert!(
        !mutate(&|v| {
            v["skills"][0]
                .as_object_mut()
                .unwrap()
                .remove("failure_modes");
        })
        .is_empty()
    );
    assert!(!mutate(&|v| v["skills"][0]["status"] = "deprecated".into()).is_empty());
    assert!(!mutate(&|v| v["skills"][0]["capabilities"] = serde_json::json!(["nodot"])).is_empty());
    assert!(
        !mutate(&|v| {
            v["skills"][0].as_object_mut().unwrap().remove("entrypoint");
        })
        .is_empty()
    );
}

fn run_cli_export() -> String {
    String::from_utf8(run_ok(&mut skill_examples(&["export"])).stdout).unwrap()
}

#[test]
fn cli_invoke_output_matches_the_exported_schema_and_bad_input_names_paths() {
    let registry: Value = serde_json::from_str(&run_cli_export()).unwrap();
    let skill = registry["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "vlevel_calculator")
        .unwrap();
    let input = r#"{"page_data": {"url": "https://shop.example.com/p/1", "gamme": "plaquettes", "marque": "renault", "modele": "clio"}}"#;
    let out = run_ok(&mut skill_examples(&["invoke", "vlevel_calculator", input]));
    let result: Value = serde_json::from_slice(&out.stdout).expect("invoke prints JSON");
    assert_eq!(result["success"], true);
    assert_eq!(result["skill"], "vlevel_calculator@1.0.0");
    let output = &result["data"];
    let validator = jsonschema::draft202012::new(&skill["outputs_schema"]).unwrap();
    assert!(validator.is_valid(output), "{output}");
    assert_eq!(output["vlevel"], "V3");
    assert_eq!(output["score"], 50);

    let bad = skill_examples(&["invoke", "vlevel_calculator"])
        .arg(r#"{"page_data": {"url": 42, "marque": null}}"#)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    for expected in [
        "at /page_data: \"gamme\" is a required property",
        "at /page_data/url: 42 is not of type \"string\"",
        "at /page_data/marque: null is not of type \"string\"",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
    assert!(bad.stdout.is_empty());

    let malformed = skill_examples(&["invoke", "echo", "{not json"])
        .output()
        .unwrap();
    assert_eq!(malformed.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&malformed.stderr).contains("input for skill `echo` is not JSON")
    );
}
