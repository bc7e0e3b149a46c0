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
