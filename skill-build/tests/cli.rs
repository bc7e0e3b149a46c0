//! The `skill-registry` command on files: validate (format and cross rules),
//! diff (every change class, and the version bump it needs), convert.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};
use skill_build::diff::{Level, diff};

fn skill(name: &str, version: &str) -> Value {
    json!({
        "name": name,
        "version": version,
        "status": "enabled",
        "description": "Search notes in the vault.",
        "kind": "logic",
        "inputs_schema": {
            "type": "object",
            "required": ["query"],
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 200},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "mode": {"enum": ["fast", "full"]}
            }
        },
        "outputs_schema": {
            "type": "object",
            "required": ["results"],
            "properties": {
                "results": {"type": "array", "items": {"type": "string"}},
                "took_ms": {"type": "integer"}
            }
        },
        "capabilities": ["vault.search"],
        "side_effects": [],
        "autonomy": "L1",
        "failure_modes": [{"code": "search_failed", "description": "Backend error.", "retryable": true}],
        "entrypoint": {"runtime": "native", "module": "notes::search", "handler": "search_notes"},
        "call_targets": [],
        "mcp": {"exposed": true, "tool_name": "search_notes", "permissions": []}
    })
}

/// `s` as another runtime writes it: a Python entry point, none of the
/// fields only an export writes (a file with them is read as an export).
fn brainos(mut s: Value) -> Value {
    s["entrypoint"] = json!({"runtime": "python", "module": "notes.search", "handler": "run"});
    s.as_object_mut().unwrap().remove("mcp");
    s
}

fn registry(skills: Vec<Value>) -> Value {
    json!({"registry_version": "2.0.0", "skills": skills})
}

type Edit = fn(&mut Value);

/// One change, the level it needs, and a word of its message.
const TABLE: &[(&str, Edit, Level, &str)] = &[
    (
        "input field removed",
        |s| {
            s["inputs_schema"]["properties"]
                .as_object_mut()
                .unwrap()
                .remove("limit");
        },
        Level::Major,
        "input field `limit` removed",
    ),
    (
        "quiet rename",
        |s| {
            let p = s["inputs_schema"]["properties"].as_object_mut().unwrap();
            let v = p.remove("query").unwrap();
            p.insert("q".into(), v);
            s["inputs_schema"]["required"] = json!(["q"]);
        },
        Level::Major,
        "renamed to `q`",
    ),
    (
        "type narrowed",
        |s| s["inputs_schema"]["properties"]["limit"]["type"] = json!("null"),
        Level::Major,
        "type narrowed",
    ),
    (
        "input type widened",
        |s| s["inputs_schema"]["properties"]["query"]["type"] = json!(["string", "null"]),
        Level::Minor,
        "type widened",
    ),
    (
        "output type widened",
        |s| s["outputs_schema"]["properties"]["took_ms"]["type"] = json!("number"),
        Level::Major,
        "type widened",
    ),
    (
        "constraint narrowed",
        |s| s["inputs_schema"]["properties"]["limit"]["maximum"] = json!(10),
        Level::Major,
        "maximum 50 -> 10 (narrowed)",
    ),
    (
        "constraint widened",
        |s| s["inputs_schema"]["properties"]["query"]["maxLength"] = json!(500),
        Level::Minor,
        "maxLength 200 -> 500 (widened)",
    ),
    (
        "enum value removed",
        |s| s["inputs_schema"]["properties"]["mode"]["enum"] = json!(["fast"]),
        Level::Major,
        "no longer allows \"full\"",
    ),
    (
        "enum value added",
        |s| s["inputs_schema"]["properties"]["mode"]["enum"] = json!(["fast", "full", "deep"]),
        Level::Minor,
        "now allows \"deep\"",
    ),
    (
        "required input added",
        |s| {
            s["inputs_schema"]["properties"]["vault"] = json!({"type": "string"});
            s["inputs_schema"]["required"] = json!(["query", "vault"]);
        },
        Level::Major,
        "input field `vault` added (required)",
    ),
    (
        "optional input added",
        |s| s["inputs_schema"]["properties"]["vault"] = json!({"type": "string"}),
        Level::Minor,
        "input field `vault` added (optional)",
    ),
    (
        "input made required",
        |s| s["inputs_schema"]["required"] = json!(["query", "limit"]),
        Level::Major,
        "input field `limit` is now required",
    ),
    (
        "output field added",
        |s| s["outputs_schema"]["properties"]["total"] = json!({"type": "integer"}),
        Level::Minor,
        "output field `total` added",
    ),
    (
        "output field removed",
        |s| {
            s["outputs_schema"]["properties"]
                .as_object_mut()
                .unwrap()
                .remove("took_ms");
        },
        Level::Major,
        "output field `took_ms` removed",
    ),
    (
        "output no longer always present",
        |s| s["outputs_schema"]["required"] = json!([]),
        Level::Major,
        "output field `results` may now be absent",
    ),
    (
        "capability added",
        |s| s["capabilities"] = json!(["vault.search", "obsidian.read"]),
        Level::Major,
        "capability `obsidian.read` added",
    ),
    (
        "side effect added",
        |s| {
            s["capabilities"] = json!(["vault.search", "vault.write"]);
            s["side_effects"] = json!(["vault.write"]);
        },
        Level::Major,
        "side effect `vault.write` added",
    ),
    (
        "status to disabled",
        |s| s["status"] = json!("disabled"),
        Level::Major,
        "status enabled -> disabled",
    ),
    (
        "status to deprecated",
        |s| {
            s["status"] = json!("deprecated");
            s["deprecation"] = json!({"deprecated": true, "notes": "use find_notes"});
        },
        Level::Minor,
        "status enabled -> deprecated",
    ),
    (
        "MCP tool renamed",
        |s| s["mcp"]["tool_name"] = json!("notes_search"),
        Level::Major,
        "MCP tool name",
    ),
    (
        "input closed to unknown fields",
        |s| s["inputs_schema"]["additionalProperties"] = json!(false),
        Level::Major,
        "the input no longer accepts unknown fields",
    ),
    (
        "description",
        |s| s["description"] = json!("Search the notes of the vault."),
        Level::Patch,
        "description changed",
    ),
    (
        "owners",
        |s| s["owners"] = json!(["core"]),
        Level::Patch,
        "owners changed",
    ),
];

#[test]
fn every_change_class_needs_its_bump() {
    for (what, edit, level, message) in TABLE {
        let old = registry(vec![skill("search_notes", "1.0.0")]);
        let mut changed = skill("search_notes", "1.0.0");
        edit(&mut changed);
        let d = diff(&old, &registry(vec![changed.clone()]));
        let s = &d.skills[0];
        assert_eq!(s.required, *level, "{what}: {:#?}", s.changes);
        assert!(
            s.changes
                .iter()
                .any(|c| c.level == *level && c.message.contains(message)),
            "{what}: no {level} change mentioning {message:?} in {:#?}",
            s.changes
        );
        // The same change with no version bump fails; with the needed bump passes.
        assert!(!d.ok(), "{what}: an unbumped change must fail");
        let bumped = match level {
            Level::Major => "2.0.0",
            Level::Minor => "1.1.0",
            _ => "1.0.1",
        };
        changed["version"] = json!(bumped);
        let d = diff(&old, &registry(vec![changed.clone()]));
        assert!(d.ok(), "{what}: {bumped} must be enough: {d}");
        if *level > Level::Patch {
            let smaller = if *level == Level::Major {
                "1.1.0"
            } else {
                "1.0.1"
            };
            changed["version"] = json!(smaller);
            let d = diff(&old, &registry(vec![changed]));
            assert!(!d.ok(), "{what}: {smaller} must not be enough");
        }
    }
}

#[test]
fn new_removed_and_unchanged_skills() {
    let old = registry(vec![
        skill("search_notes", "1.0.0"),
        skill("old_one", "1.0.0"),
    ]);
    let new = registry(vec![
        skill("search_notes", "1.0.0"),
        skill("new_one", "1.0.0"),
    ]);
    let d = diff(&old, &new);
    let by_name = |n: &str| d.skills.iter().find(|s| s.name == n).unwrap();
    assert_eq!(by_name("new_one").required, Level::Minor);
    assert!(by_name("new_one").failure.is_none());
    assert_eq!(by_name("old_one").required, Level::Major);
    assert!(
        by_name("old_one")
            .failure
            .as_deref()
            .unwrap()
            .contains("without being deprecated"),
        "{d}"
    );
    assert!(
        d.skills.iter().all(|s| s.name != "search_notes"),
        "unchanged skills are not listed"
    );
    assert_eq!(diff(&old, &old).skills.len(), 0);

    let mut deprecated = skill("old_one", "1.1.0");
    deprecated["status"] = json!("deprecated");
    deprecated["deprecation"] =
        json!({"deprecated": true, "replaced_by": "new_one", "notes": "use new_one"});
    let d = diff(&registry(vec![deprecated]), &registry(vec![]));
    assert!(d.ok(), "removing a deprecated skill is allowed: {d}");
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_skill-registry"))
}

fn temp(name: &str, value: &Value) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skill-registry-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    path
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    bin().args(args).output().expect("skill-registry runs")
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn validate_reports_one_line_per_problem_and_exits_non_zero() {
    let good = temp(
        "good.json",
        &registry(vec![brainos(skill("search_notes", "1.0.0"))]),
    );
    // A file without a command is a usage error.
    let out = run(&[good.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));

    let out = bin().arg("validate").arg(&good).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("valid Brain OS registry (1 skills, 0 pipelines)"));

    let mut broken = brainos(skill("search_notes", "1.0.0"));
    broken["side_effects"] = json!(["vault.write"]);
    broken["call_targets"] = json!([{"kind": "skill", "name": "missing_skill"}]);
    let bad = temp(
        "bad.json",
        &registry(vec![broken, brainos(skill("search_notes", "1.0.0"))]),
    );
    let out = bin().arg("validate").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = text(&out);
    for expected in [
        "defined twice (skills[0] and skills[1])",
        "side effect `vault.write` is not among the capabilities",
        "call target skill `missing_skill` is not in the registry",
    ] {
        assert!(lines.contains(expected), "{expected}: {lines}");
    }

    let mut wrong = registry(vec![brainos(skill("search_notes", "1.0.0"))]);
    wrong["skills"][0]["version"] = json!("one");
    let wrong = temp("wrong.json", &wrong);
    let out = bin().arg("validate").arg(&wrong).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("/skills/0/version"), "{}", text(&out));
}

#[test]
fn diff_prints_for_people_and_for_machines() {
    let old = temp("old.json", &registry(vec![skill("search_notes", "1.0.0")]));
    let mut s = skill("search_notes", "1.0.1");
    s["inputs_schema"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("limit");
    let new = temp("new.json", &registry(vec![s]));
    let out = bin().args(["diff"]).arg(&old).arg(&new).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("needs major, declares patch: FAIL"),
        "{}",
        text(&out)
    );

    let out = bin()
        .args(["diff", "--json"])
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["skills"][0]["required"], "major");
    assert_eq!(v["skills"][0]["declared"], "patch");
}

#[test]
fn convert_prints_each_view() {
    let file = temp(
        "convert.json",
        &registry(vec![skill("search_notes", "1.0.0")]),
    );
    for (view, check) in [
        ("mcp", "/tools/0/inputSchema"),
        ("openai", "/0/function/parameters"),
        ("unified", "/0/skill_id"),
    ] {
        let out = bin()
            .args(["convert", "--to", view])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{view}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v.pointer(check).is_some(), "{view}: {v}");
    }
    let out = bin()
        .args(["convert", "--to", "yaml"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn op_registries_are_compared_the_same_way() {
    let op = |version: &str, extra: bool| {
        let mut s = skill("obsidian_search", version);
        for key in ["kind", "entrypoint", "call_targets", "mcp"] {
            s.as_object_mut().unwrap().remove(key);
        }
        s["runtime"] = json!("mcp");
        s["tool"] = json!("search");
        if extra {
            s["outputs_schema"]["properties"]["total"] = json!({"type": "integer"});
        }
        s
    };
    let ops = |s: Value| json!({"registry_version": "1.0.0", "ops": [s]});
    let d = diff(&ops(op("1.0.0", false)), &ops(op("1.0.0", true)));
    assert_eq!(d.skills[0].required, Level::Minor);
    assert!(!d.ok());
    assert!(diff(&ops(op("1.0.0", false)), &ops(op("1.1.0", true))).ok());
}
