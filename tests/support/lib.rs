//! Helpers shared by the workspace tests: paths, running cargo, and the
//! independent checks every exported registry must pass.

pub mod cluster;
pub mod fleet;
pub mod issuer;
pub mod mcp_http;
pub mod mcp_stdio;
pub mod postgres;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `cargo` as the test was run with, in the workspace root, with the outer
/// build's variables that would confuse a nested build removed.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    for var in [
        "SKILL_REGISTRY_OUT",
        "CARGO_TARGET_DIR",
        "RUSTC_WRAPPER",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// `cargo run -q -p skill-examples -- ARGS`: the example app's CLI.
pub fn skill_examples(args: &[&str]) -> Command {
    let mut cmd = cargo();
    cmd.args(["run", "-q", "-p", "skill-examples", "--"])
        .args(args);
    cmd
}

/// Run `cmd`, panicking with its output when it fails.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A fresh empty directory under `target/test-tmp`.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = root()
        .join("target/test-tmp")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// `skill-registry ARGS`, in process: its exit status, stdout and stderr.
pub fn registry_cli(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = skill_build::cli::run(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).expect("UTF-8 output"),
        String::from_utf8(err).expect("UTF-8 errors"),
    )
}

/// The registry of every skill linked into the test binary, as exported.
pub fn exported_registry() -> Value {
    let registry = skill_runtime::Registry::from_inventory().expect("valid registry");
    serde_json::from_str(&registry.export()).expect("the export is JSON")
}

/// Every way `registry` breaks the published format `skill-registry.schema.json`.
pub fn format_violations(registry: &Value) -> Vec<String> {
    let text = std::fs::read_to_string(root().join("skill-registry.schema.json"))
        .expect("published schema");
    let schema: Value = serde_json::from_str(&text).expect("published schema is JSON");
    jsonschema::meta::validate(&schema).expect("published schema is a valid JSON Schema");
    let validator = jsonschema::draft202012::new(&schema).expect("published schema compiles");
    validator
        .iter_errors(registry)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Violations of `instance` against definition `def` of the schema file
/// `schema_file` (relative to the workspace root; `def` empty: the whole
/// schema), each with its instance path.
pub fn violations(schema_file: &str, def: &str, instance: &Value) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(schema_file)).expect("schema file");
    let mut schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    if !def.is_empty() {
        schema["$ref"] = serde_json::json!(format!("#/$defs/{def}"));
    }
    let validator = jsonschema::draft202012::new(&schema).expect("schema compiles");
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Every inputs/outputs schema in `registry` that is not a valid JSON Schema.
pub fn invalid_skill_schemas(registry: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    for skill in registry["skills"].as_array().expect("skills array") {
        for side in ["inputs_schema", "outputs_schema"] {
            let schema = &skill[side];
            if let Err(e) = jsonschema::meta::validate(schema) {
                bad.push(format!("{}.{side}: {e}", skill["name"]));
            } else if let Err(e) = jsonschema::draft202012::new(schema) {
                bad.push(format!("{}.{side}: does not compile: {e}", skill["name"]));
            }
        }
    }
    bad
}

/// Run the independent Brain OS registry v2 validator (`tests/brainos_validator.py`).
pub fn brainos_validate(registry: &Path, capabilities: &Path) -> Output {
    Command::new("python3")
        .arg(root().join("tests/brainos_validator.py"))
        .arg(registry)
        .arg(capabilities)
        .output()
        .expect("python3 runs the Brain OS validator")
}
