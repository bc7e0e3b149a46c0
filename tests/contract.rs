//! The registry file as a deployment's contract (seed 001: the reviewed
//! registry is required for runtime startup): a binary whose skills drifted
//! from the published `skill-registry.json` does not start, and says how;
//! overlays narrow a deployment's skills and never widen them; the effective
//! registry is printable.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use skill_tests::fleet::app;
use skill_tests::temp_dir;

const VLEVEL: &str =
    r#"{"page_data": {"url": "https://shop.example.com/p/1", "gamme": "plaquettes"}}"#;

fn run(args: &[&str]) -> Output {
    Command::new(app())
        .args(args)
        .output()
        .expect("the app runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The published files of this binary, written to `dir`.
fn publish(dir: &Path) -> (String, Value) {
    let registry = run(&["export"]);
    assert!(registry.status.success());
    let ops = run(&["export", "--format", "ops"]);
    std::fs::write(dir.join("op-registry.json"), &ops.stdout).unwrap();
    let path = dir.join("skill-registry.json");
    std::fs::write(&path, &registry.stdout).unwrap();
    (
        path.display().to_string(),
        serde_json::from_slice(&registry.stdout).unwrap(),
    )
}

fn write(dir: &Path, name: &str, v: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    path.display().to_string()
}

#[test]
fn a_binary_that_drifted_from_its_published_registry_does_not_start() {
    let dir = temp_dir("contract-drift");
    let (file, published) = publish(&dir);
    // The file this binary exported: it starts and serves.
    let out = run(&["invoke", "vlevel_calculator", VLEVEL, "--registry", &file]);
    assert!(out.status.success(), "{}", text(&out));

    // The reviewed file lacks a capability the code declares.
    let mut reviewed = published.clone();
    let audit = reviewed["skills"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["name"] == "seo_role_audit")
        .unwrap();
    audit["capabilities"] = json!(["database.read"]);
    audit["side_effects"] = json!([]);
    let file = write(&dir, "skill-registry.json", &reviewed);
    let out = run(&["invoke", "vlevel_calculator", VLEVEL, "--registry", &file]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("skill `seo_role_audit@1.0.0`: `capabilities` differs")
            && said.contains("database.write"),
        "{said}"
    );
    assert!(!said.contains("\"vlevel\""), "nothing ran: {said}");

    // A skill the file does not list, and one only the file lists.
    let mut reviewed = published.clone();
    let skills = reviewed["skills"].as_array_mut().unwrap();
    let mut ghost = skills[0].clone();
    ghost["name"] = json!("ghost_skill");
    skills.retain(|s| s["name"] != "echo");
    skills.push(ghost);
    let file = write(&dir, "skill-registry.json", &reviewed);
    let said = text(&run(&["mcp", "--registry", &file]));
    assert!(
        said.contains("skill `echo@1.0.0` is in this binary but not in")
            && said.contains("skill `ghost_skill@")
            && said.contains("is in ")
            && said.contains("but not in this binary"),
        "{said}"
    );
}

#[test]
fn overlays_narrow_and_never_widen() {
    let dir = temp_dir("contract-overlay");
    let (file, _) = publish(&dir);
    let overlay = write(
        &dir,
        "narrow.json",
        &json!({"overlay_version": "1.0.0", "skills": {
            "vlevel_calculator": {"status": "disabled"},
            "seo_role_audit@1.0.0": {"rate_limit": {"max_per_minute": 2}, "mcp": {"exposed": false}},
            "canonical_check": {"mcp": {"permissions": ["database:read", "seo:read", "seo:admin"]},
                                 "reusable_by": [{"agent_role": "executor", "permission_level": "execute"}]},
            "rag_reindex": {"timeout_ms": 1000, "requires_hitl": true}
        }}),
    );
    // Disabled: refused, as the seed's status says.
    let out = run(&[
        "invoke",
        "vlevel_calculator",
        VLEVEL,
        "--registry",
        &file,
        "--overlay",
        &overlay,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("disabled"), "{}", text(&out));

    // What a runtime started with them serves.
    let out = run(&[
        "export",
        "--effective",
        "--registry",
        &file,
        "--overlay",
        &overlay,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let effective: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skill = |name: &str| {
        effective["skills"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(skill("vlevel_calculator")["status"], "disabled");
    assert_eq!(skill("seo_role_audit")["rate_limit"]["max_per_minute"], 2);
    assert_eq!(skill("seo_role_audit")["mcp"]["exposed"], false);
    assert_eq!(
        skill("canonical_check")["mcp"]["permissions"],
        json!(["database:read", "seo:read", "seo:admin"])
    );
    assert_eq!(
        skill("canonical_check")["reusable_by"],
        json!([{"agent_role": "executor", "permission_level": "execute"}])
    );
    assert_eq!(skill("rag_reindex")["execution"]["timeout_ms"], 1000);
    assert_eq!(skill("rag_reindex")["constraints"]["requires_hitl"], true);
    // The hidden tool is gone from the MCP view.
    let out = run(&[
        "export",
        "--effective",
        "--overlay",
        &overlay,
        "--format",
        "mcp",
    ]);
    let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"ai_cos_seo_role_audit"), "{names:?}");
    assert!(names.contains(&"ai_cos_canonical_check"), "{names:?}");

    // Each way of widening is refused, and nothing starts.
    for (change, why) in [
        (
            json!({"search_notes": {"rate_limit": {"max_per_minute": 1000}}}),
            "only lowers it",
        ),
        (
            json!({"canonical_check": {"mcp": {"permissions": ["seo:read"]}}}),
            "drops `database:read`",
        ),
        (
            json!({"canonical_check": {"reusable_by": [{"agent_role": "orchestrator", "permission_level": "admin"}]}}),
            "adds role `orchestrator`",
        ),
        (
            json!({"vlevel_calculator": {"reusable_by": [{"agent_role": "analyzer", "permission_level": "execute"}]}}),
            "raises role `analyzer` from `read` to `execute`",
        ),
        (
            json!({"rag_cache_purge": {"capabilities": ["cache.write"]}}),
            "unknown field `capabilities`",
        ),
        (
            json!({"rag_cache_purge": {"status": "enabled"}}),
            "may only be \"disabled\"",
        ),
        (
            json!({"rag_cache_purge": {"mcp": {"exposed": true}}}),
            "may only be false",
        ),
        (
            json!({"no_such_skill": {"status": "disabled"}}),
            "names no skill",
        ),
        // Read as the runtime reads it: an empty list opens the skill to
        // every role.
        (
            json!({"canonical_check": {"reusable_by": []}}),
            "opens the skill to every role",
        ),
        (
            json!({"canonical_check": {"reusable_by": [
                {"agent_role": "executor", "permission_level": "read"},
                {"agent_role": "executor", "permission_level": "execute"}]}}),
            "names role `executor` twice",
        ),
    ] {
        let wide = write(
            &dir,
            "wide.json",
            &json!({"overlay_version": "1.0.0", "skills": change}),
        );
        let out = run(&["invoke", "echo", r#"{"message": "x"}"#, "--overlay", &wide]);
        assert_eq!(out.status.code(), Some(1), "{change}: {}", text(&out));
        assert!(text(&out).contains(why), "{change}: {}", text(&out));
    }
    // A key given twice (the later one would undo the first), and a FIFO
    // in a file's place: refused at once, saying why.
    let twice = dir.join("twice.json");
    std::fs::write(
        &twice,
        r#"{"overlay_version": "1.0.0", "skills": {"rag_cache_purge": {"status": "disabled"}, "rag_cache_purge": {}}}"#,
    )
    .unwrap();
    let out = run(&[
        "invoke",
        "echo",
        r#"{"message": "x"}"#,
        "--overlay",
        twice.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("`/skills/rag_cache_purge` appears twice"),
        "{}",
        text(&out)
    );
    let fifo = dir.join("fifo.json");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for flag in ["--overlay", "--registry"] {
        let started = std::time::Instant::now();
        let out = run(&[
            "invoke",
            "echo",
            r#"{"message": "x"}"#,
            flag,
            fifo.to_str().unwrap(),
        ]);
        assert!(!out.status.success(), "{flag}: {}", text(&out));
        assert!(
            text(&out).contains("a FIFO, not a regular file"),
            "{flag}: {}",
            text(&out)
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{flag}"
        );
    }

    // --registry and --overlay without --effective: a usage error.
    let out = run(&["export", "--overlay", &overlay]);
    assert_eq!(out.status.code(), Some(2));
}
