//! Registry files as other runtimes write them: the Brain OS format's own
//! examples (seed 001's "Example Registry (Valid)", with its closing bracket
//! fixed, its pipeline example and its op example) validate, diff and
//! convert; what the format's document refuses is refused; what skill-build
//! exports stays held to its stricter format, and is a valid Brain OS file.

use serde_json::{Value, json};
use skill_tests::{exported_registry, registry_cli, root, temp_dir, violations};

use seed_skills as _;
use team_skills as _;

fn fixture(name: &str) -> String {
    root()
        .join("tests/fixtures/brainos")
        .join(name)
        .display()
        .to_string()
}

fn read(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn write(dir: &std::path::Path, name: &str, v: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    path.display().to_string()
}

fn validate_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["validate"];
    all.extend_from_slice(args);
    all.push("--json");
    let (code, out, err) = registry_cli(&all);
    let report = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    (code, report)
}

#[test]
fn the_formats_own_examples_validate() {
    let skills = fixture("seed-001-registry.json");
    let pipeline = fixture("seed-001-pipeline-registry.json");
    let ops = fixture("seed-001-op-registry.json");

    // registry_version 1.0.0, a `python` entrypoint with a dotted module.
    let (code, report) = validate_json(&[&skills]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["format"], "brainos");
    // Its call target is an op of another file: not checked alone...
    let note = report["not_checked"][0].as_str().unwrap();
    assert!(
        note.contains("obsidian_search") && note.contains("--ops"),
        "{note}"
    );
    // ... and resolved with it.
    let (code, report) = validate_json(&[&skills, "--ops", &ops]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["not_checked"], json!([]));
    assert_eq!(report["counts"]["ops"], 1);

    // A pipeline whose steps are skills of other files.
    let (code, report) = validate_json(&[&pipeline]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["format"], "brainos");
    assert_eq!(report["not_checked"].as_array().unwrap().len(), 2);

    // The op registry on its own: a `native` op with a dotted module.
    let (code, report) = validate_json(&[&ops]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["format"], "brainos");

    // The text says which format it read.
    let (code, out, _) = registry_cli(&["validate", &skills]);
    assert_eq!(code, 0);
    assert!(out.contains("valid Brain OS registry"), "{out}");
}

#[test]
fn the_formats_defaults_and_entrypoints_are_read_and_its_rules_kept() {
    let dir = temp_dir("brainos-rules");
    let base = read(&fixture("seed-001-registry.json"));
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut doc = base.clone();
        edit(&mut doc);
        doc
    };
    let good: Vec<(&str, Value)> = vec![
        (
            "a failure mode without retryable (default false)",
            with(&|d| {
                d["skills"][0]["failure_modes"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("retryable");
            }),
        ),
        (
            "an http entrypoint",
            with(&|d| {
                d["skills"][0]["entrypoint"] =
                    json!({"runtime": "http", "url": "https://skills.example/search"})
            }),
        ),
        (
            "a script entrypoint",
            with(&|d| {
                d["skills"][0]["entrypoint"] = json!({"runtime": "script", "command": "bin/search"})
            }),
        ),
        (
            "registry_version 2.x",
            with(&|d| d["registry_version"] = json!("2.3.1")),
        ),
        (
            "no side_effects (optional)",
            with(&|d| {
                d["skills"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("side_effects");
            }),
        ),
        (
            "fields of its own (kept)",
            with(&|d| d["skills"][0]["x_team"] = json!("search")),
        ),
    ];
    for (why, doc) in good {
        let path = write(&dir, "good.json", &doc);
        let (code, report) = validate_json(&[&path]);
        assert_eq!(code, 0, "{why}: {report:#}");
        assert_eq!(report["format"], "brainos", "{why}");
    }
    let bad: Vec<(&str, Value, &str)> = vec![
        (
            "a python entrypoint without handler",
            with(&|d| {
                d["skills"][0]["entrypoint"] =
                    json!({"runtime": "python", "module": "skills.search"})
            }),
            "handler",
        ),
        (
            "an http entrypoint without url",
            with(&|d| d["skills"][0]["entrypoint"] = json!({"runtime": "http"})),
            "url",
        ),
        (
            "an entrypoint runtime of no format",
            with(&|d| {
                d["skills"][0]["entrypoint"] =
                    json!({"runtime": "ruby", "module": "m", "handler": "h"})
            }),
            "ruby",
        ),
        (
            "registry_version 3",
            with(&|d| d["registry_version"] = json!("3.0.0")),
            "registry_version",
        ),
        (
            "a logic skill without call_targets",
            with(&|d| {
                d["skills"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("call_targets");
            }),
            "call_targets",
        ),
        (
            "a domain outside the AI-COS domains",
            with(&|d| d["skills"][0]["domain"] = json!("marketing")),
            "marketing",
        ),
        (
            "side effects outside capabilities",
            with(&|d| d["skills"][0]["side_effects"] = json!(["obsidian.write"])),
            "obsidian.write",
        ),
        (
            "deprecated without deprecation metadata",
            with(&|d| d["skills"][0]["status"] = json!("deprecated")),
            "deprecation",
        ),
    ];
    for (why, doc, needle) in bad {
        let path = write(&dir, "bad.json", &doc);
        let (code, out, _) = registry_cli(&["validate", &path]);
        assert_eq!(code, 1, "{why}: {out}");
        assert!(out.contains(needle), "{why}: {out}");
    }
}

#[test]
fn diff_and_convert_read_brain_os_files() {
    let dir = temp_dir("brainos-diff");
    let old = fixture("seed-001-registry.json");
    let mut changed = read(&old);
    // A new required input field is a breaking change...
    changed["skills"][0]["inputs_schema"]["required"] = json!(["query", "limit"]);
    changed["skills"][0]["inputs_schema"]["properties"]["limit"] = json!({"type": "integer"});
    let new = write(&dir, "new.json", &changed);
    let (code, out, _) = registry_cli(&["diff", &old, &new]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("search_notes") && out.contains("major"),
        "{out}"
    );
    // ... and a major version makes it allowed.
    changed["skills"][0]["version"] = json!("2.0.0");
    let new = write(&dir, "new.json", &changed);
    let (code, out, _) = registry_cli(&["diff", &old, &new]);
    assert_eq!(code, 0, "{out}");

    // The format says nothing of MCP: each skill is offered as a tool of its
    // own name, valid against the MCP schema.
    let (code, out, err) = registry_cli(&["convert", "--to", "mcp", &old]);
    assert_eq!(code, 0, "{err}");
    let tools: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(tools["tools"][0]["name"], "search_notes");
    assert_eq!(
        violations(
            "tests/mcp/schema-2025-11-25.json",
            "ListToolsResult",
            &tools
        ),
        Vec::<String>::new()
    );
    let (code, out, _) = registry_cli(&["convert", "--to", "unified", &old]);
    assert_eq!(code, 0);
    assert!(out.contains("search_notes"), "{out}");
}

#[test]
fn an_export_keeps_its_stricter_format_and_is_a_brain_os_file_too() {
    let dir = temp_dir("brainos-export");
    let exported = exported_registry();
    let brainos = read(
        &root()
            .join("brainos-registry.schema.json")
            .display()
            .to_string(),
    );
    let validator = jsonschema::draft202012::new(&brainos).expect("the format schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&exported)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert_eq!(
        errors,
        Vec::<String>::new(),
        "a Brain OS reader takes the export"
    );
    let registry = skill_runtime::Registry::from_inventory().unwrap();
    write(&dir, "op-registry.json", &registry.ops_json());
    write(&dir, "capabilities.json", &registry.capabilities_json());
    let path = write(&dir, "skill-registry.json", &exported);
    let (code, report) = validate_json(&[&path]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["format"], "export");

    // A native skill that claims a sandbox it cannot have: valid, with a
    // warning that says what a runtime does with it.
    let mut sandboxed = exported.clone();
    let native = sandboxed["skills"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["kind"] == "logic")
        .unwrap();
    native["constraints"]["sandbox_type"] = json!("WASM");
    let path = write(&dir, "skill-registry.json", &sandboxed);
    let (code, report) = validate_json(&[&path]);
    assert_eq!(code, 0, "{report:#}");
    let warning = report["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("sandbox WASM") && warning.contains("sandbox_unavailable"),
        "{warning}"
    );

    // An export with a dangling call target is not whole: an error, not a note.
    let mut broken = exported.clone();
    let logic = broken["skills"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["kind"] == "logic")
        .unwrap();
    logic["call_targets"] = json!([{"kind": "skill", "name": "no_such_skill", "version": "1.0.0"}]);
    let path = write(&dir, "skill-registry.json", &broken);
    let (code, out, _) = registry_cli(&["validate", &path]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no_such_skill") && !out.contains("not checked"),
        "{out}"
    );
}

/// The Brain OS format is written from the export's formats, so a field both
/// know keeps one definition; `SKILL_BLESS=1` writes it again.
#[test]
fn the_brain_os_format_is_generated_from_the_export_formats() {
    let schema = |name: &str| read(&root().join(name).display().to_string());
    let generated = skill_build::formats::brainos_schema(
        &schema("skill-registry.schema.json"),
        &schema("op-registry.schema.json"),
    );
    let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
    let path = root().join("skill-build/schemas/brainos-registry.schema.json");
    if std::env::var_os("SKILL_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == text,
        "{} is stale; run SKILL_BLESS=1 cargo test --test brainos_files",
        path.display()
    );
}
