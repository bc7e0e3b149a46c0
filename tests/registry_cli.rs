//! `skill-registry` as a user meets it: per-command help, `--version`, typo
//! hints, `--json` on the read commands, completions, `convert --protocol`,
//! and `import --from unified` (the ADR's `validateSkillContract`).

use serde_json::{Value, json};
use skill_tests::{exported_registry, registry_cli, temp_dir, violations};

// The example skills, so the registry these tests export is a real one.
use seed_skills as _;
use team_skills as _;

fn write(dir: &std::path::Path, name: &str, v: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn help_version_and_typos_are_what_a_cli_user_expects() {
    let (code, out, _) = registry_cli(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("skill-registry {}", env!("CARGO_PKG_VERSION"))
    );

    for args in [&["validate", "--help"][..], &["help", "validate"]] {
        let (code, out, _) = registry_cli(args);
        assert_eq!(code, 0, "{args:?}");
        assert!(out.contains("Usage: skill-registry validate"), "{out}");
        for option in ["--capabilities", "--ops", "--agents", "--json"] {
            assert!(out.contains(option), "{option} in {out}");
        }
    }
    let (code, out, _) = registry_cli(&["convert", "--help"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("--protocol") && out.contains("2026-07-28"),
        "{out}"
    );

    let (code, _, err) = registry_cli(&["validat", "x.json"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("similar subcommand") && err.contains("validate"),
        "{err}"
    );
    let (code, _, err) = registry_cli(&["diff", "a.json", "b.json", "--jsn"]);
    assert_eq!(code, 2);
    assert!(err.contains("--json"), "{err}");
    let (code, _, err) = registry_cli(&["convert", "--to", "yaml", "r.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("mcp") && err.contains("openai"), "{err}");
    let (code, _, err) = registry_cli(&[
        "convert",
        "--to",
        "mcp",
        "--protocol",
        "2024-01-01",
        "r.json",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("choose 2025-11-25 or 2026-07-28"), "{err}");
}

#[test]
fn validate_json_reports_validity_counts_and_each_problem() {
    let dir = temp_dir("registry-cli-validate");
    let registry = exported_registry();
    let file = write(&dir, "skill-registry.json", &registry);
    let ops = skill_runtime::Registry::from_inventory()
        .unwrap()
        .export_ops();
    std::fs::write(dir.join("op-registry.json"), ops).unwrap();
    let (code, out, err) = registry_cli(&["validate", &file, "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let report: Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(report["valid"], true);
    assert_eq!(report["problems"], json!([]));
    assert_eq!(
        report["counts"]["skills"],
        registry["skills"].as_array().unwrap().len()
    );
    assert_eq!(
        report["read"]["ops"],
        dir.join("op-registry.json").display().to_string()
    );
    assert_eq!(report["read"]["capabilities"], Value::Null);
    assert!(report["counts"]["ops"].as_u64().unwrap() > 0);

    let mut broken = registry.clone();
    broken["skills"][0]["version"] = json!("one");
    broken["skills"][1]["description"] = json!(7);
    let file = write(&dir, "broken.json", &broken);
    let (code, out, _) = registry_cli(&["validate", &file, "--json"]);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["valid"], false);
    let problems = report["problems"].as_array().unwrap();
    assert!(problems.len() >= 2, "{problems:#?}");
    assert!(
        problems
            .iter()
            .any(|p| p.as_str().unwrap().contains("/skills/0/version")),
        "{problems:#?}"
    );

    // Execution values past their bounds: a registry file is a door too.
    let mut absurd = registry.clone();
    absurd["skills"][0]["execution"]["timeout_ms"] = json!(18_446_744_073_709_551_u64);
    absurd["skills"][1]["execution"]["retries"] = json!(1_000_000_000);
    let file = write(&dir, "absurd.json", &absurd);
    let (code, out, _) = registry_cli(&["validate", &file, "--json"]);
    assert_eq!(code, 1, "{out}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let problems = report["problems"].to_string();
    // The format says it first (its maximums), the rules say it too.
    for said in ["18446744073709551", "2592000000", "1000000000", "10"] {
        assert!(problems.contains(said), "{said}: {problems}");
    }
    assert!(
        problems.contains("timeout_ms") && problems.contains("retries"),
        "{problems}"
    );

    // An export that lost a field the export's format requires, or spells
    // one wrong, is a broken export, not a valid Brain OS registry.
    for (what, edit) in [
        (
            "no execution",
            &(|s: &mut Value| {
                s.as_object_mut().unwrap().remove("execution");
            }) as &dyn Fn(&mut Value),
        ),
        ("no mcp", &|s: &mut Value| {
            s.as_object_mut().unwrap().remove("mcp");
        }),
        ("no reusable_by", &|s: &mut Value| {
            s.as_object_mut().unwrap().remove("reusable_by");
        }),
        ("postcgnditions", &|s: &mut Value| {
            let o = s.as_object_mut().unwrap();
            let p = o.remove("postconditions").unwrap();
            o.insert("postcgnditions".into(), p);
        }),
    ] {
        let mut broken = registry.clone();
        edit(&mut broken["skills"][0]);
        let file = write(&dir, "broken-export.json", &broken);
        let (code, out, _) = registry_cli(&["validate", &file, "--json"]);
        assert_eq!(code, 1, "{what}: {out}");
        let report: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(report["format"], "export", "{what}: {out}");
    }
}

#[test]
fn completions_cover_every_command_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = registry_cli(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        for command in ["validate", "diff", "convert", "import", "backstop"] {
            assert!(out.contains(command), "{shell} completions name {command}");
        }
    }
    // bash reads the script it is given.
    let (_, script, _) = registry_cli(&["completions", "bash"]);
    let status = std::process::Command::new("bash")
        .args(["-n", "-c", &script])
        .status()
        .expect("bash runs");
    assert!(status.success(), "bash parses the completion script");
}

/// The 2026-07-28 result validates against that revision's `ListToolsResult`,
/// the default against 2025-11-25's; the tools are the same.
#[test]
fn convert_writes_each_protocol_revisions_tools_list() {
    let dir = temp_dir("registry-cli-convert");
    let file = write(&dir, "skill-registry.json", &exported_registry());
    let view = |extra: &[&str]| -> Value {
        let mut args = vec!["convert", "--to", "mcp", file.as_str()];
        args.extend_from_slice(extra);
        let (code, out, err) = registry_cli(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let old = view(&[]);
    let new = view(&["--protocol", "2026-07-28"]);
    assert_eq!(old, view(&["--protocol", "2025-11-25"]));
    assert_eq!(old["tools"], new["tools"]);
    assert_eq!(
        (&new["resultType"], &new["cacheScope"], &new["ttlMs"]),
        (&json!("complete"), &json!("public"), &json!(0))
    );
    for (schema, doc, ok) in [
        ("tests/mcp/schema-2025-11-25.json", &old, true),
        ("tests/mcp/schema-2026-07-28.json", &new, true),
        // The 2025 shape lacks what 2026-07-28 requires.
        ("tests/mcp/schema-2026-07-28.json", &old, false),
    ] {
        let errors = violations(schema, "ListToolsResult", doc);
        assert_eq!(errors.is_empty(), ok, "{schema}: {errors:#?}");
    }
}

fn contract(id: &str) -> Value {
    json!({
        "skill_id": id,
        "metadata": {"name": "Fetch page", "description": "Fetch a page's HTML by URL.", "source": "GLOBAL", "vendor": "acme"},
        "interface": {
            "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
            "output_schema": {"type": "object", "properties": {"html": {"type": "string"}}}
        },
        "constraints": {"is_destructive": false, "requires_hitl": false, "sandbox_type": "DOCKER"}
    })
}

#[test]
fn import_accepts_global_contracts_and_names_every_problem() {
    let dir = temp_dir("registry-cli-import");
    // One contract, or a list; extra optional fields are allowed (the ADR).
    let one = write(&dir, "one.json", &contract("acme.fetch@1.0.0"));
    let (code, out, err) = registry_cli(&["import", "--from", "unified", &one]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 contract accepted, 0 problems"), "{out}");

    let mut missing = contract("acme.missing");
    missing["constraints"]
        .as_object_mut()
        .unwrap()
        .remove("requires_hitl");
    let mut wrong_type = contract("acme.typed");
    wrong_type["constraints"]["is_destructive"] = json!("no");
    let mut local = contract("acme.local");
    local["metadata"]["source"] = json!("LOCAL");
    let mut bad_schema = contract("acme.schema");
    bad_schema["interface"]["input_schema"] = json!({"type": "array", "minItems": "two"});
    let mut blank = contract("acme.blank");
    blank["metadata"]["description"] = json!("   ");
    let list = json!([
        contract("acme.fetch@1.0.0"),
        missing,
        wrong_type,
        local,
        bad_schema,
        blank,
        contract("acme.fetch@1.0.0"),
        "not a contract"
    ]);
    let file = write(&dir, "list.json", &list);
    let (code, out, _) = registry_cli(&["import", "--from", "unified", &file]);
    assert_eq!(code, 1, "{out}");
    for expected in [
        "contract 1 (`acme.missing`)",
        "requires_hitl",
        "contract 2 (`acme.typed`)",
        "/constraints/is_destructive",
        "contract 3 (`acme.local`): /metadata/source is LOCAL",
        "contract 4 (`acme.schema`): /interface/input_schema is not a valid JSON Schema",
        "contract 4 (`acme.schema`): /interface/input_schema must describe an object",
        "contract 5 (`acme.blank`): /metadata/description is blank",
        "contract 6 (`acme.fetch@1.0.0`): skill_id `acme.fetch@1.0.0` is already used",
        "contract 7:",
        "1 contract accepted",
    ] {
        assert!(out.contains(expected), "`{expected}` in:\n{out}");
    }

    let (code, out, _) = registry_cli(&["import", "--from", "unified", &file, "--json"]);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["accepted"], json!(["acme.fetch@1.0.0"]));
    assert!(report["problems"].as_array().unwrap().len() >= 8);

    // The project's own view, marked GLOBAL as a published package's would
    // be, imports cleanly.
    let registry = write(&dir, "skill-registry.json", &exported_registry());
    let (_, view, _) = registry_cli(&["convert", "--to", "unified", &registry]);
    let mut contracts: Value = serde_json::from_str(&view).unwrap();
    for c in contracts.as_array_mut().unwrap() {
        c["metadata"]["source"] = json!("GLOBAL");
    }
    let file = write(&dir, "ours.json", &contracts);
    let (code, out, _) = registry_cli(&["import", "--from", "unified", &file]);
    assert_eq!(code, 0, "{out}");
}
