//! The binaries as a shell user meets them: a command whose reader goes away
//! (`| head`) ends quietly, in both (no panic, no backtrace, success); a run
//! record that cannot be written is never a silent success, in `invoke` or in
//! the MCP server; an error names its next action in the seed's word; the
//! example app finds its data from any working directory.

use std::process::{Command, Stdio};

use skill_tests::{cargo, run_ok, skill_examples};

/// Run `cmd` with its standard output's reading end closed before it writes.
fn with_closed_stdout(mut cmd: Command) -> (bool, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("command starts");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("command ends");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn skill_examples_ends_quietly_when_its_reader_is_gone() {
    for args in [&["export"][..], &["list"], &["export", "--format", "mcp"]] {
        let (ok, stderr) = with_closed_stdout(skill_examples(args));
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(ok, "{args:?} must succeed: {stderr}");
    }
}

#[test]
fn skill_registry_ends_quietly_when_its_reader_is_gone() {
    let mut cmd = cargo();
    cmd.args([
        "run",
        "-q",
        "-p",
        "skill-build",
        "--features",
        "cli",
        "--bin",
        "skill-registry",
        "--",
        "--help",
    ]);
    let (ok, stderr) = with_closed_stdout(cmd);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(ok, "{stderr}");
}

#[test]
fn a_run_record_that_cannot_be_written_fails_the_invoke() {
    let out = skill_examples(&[
        "invoke",
        "summarize_text",
        r#"{"text": "One. Two."}"#,
        "--record",
        "/dev/full",
    ])
    .output()
    .expect("skill-examples runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a lost record must not exit 0");
    assert!(
        stderr.contains("1 run record could not be written to /dev/full"),
        "{stderr}"
    );
    // The job itself ran: its result is printed.
    assert!(String::from_utf8_lossy(&out.stdout).contains("summary"));
}

#[test]
fn a_run_record_the_mcp_server_cannot_write_fails_its_exit() {
    use std::io::Write;
    let mut child = skill_examples(&["mcp", "--role", "executor", "--record", "/dev/full"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("skill-examples starts");
    let frames = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"summarize_text","arguments":{"text":"One. Two."}}}"#,
    ];
    let mut stdin = child.stdin.take().unwrap();
    for frame in frames {
        writeln!(stdin, "{frame}").unwrap();
    }
    // Closing stdin ends the session once the call is answered.
    drop(stdin);
    let out = child.wait_with_output().expect("the server ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains(r#""id":2"#) && stdout.contains("summary"),
        "{stdout}"
    );
    assert!(
        !out.status.success(),
        "a lost record must not exit 0: {stderr}"
    );
    assert!(
        stderr.contains("1 run record could not be written to /dev/full"),
        "{stderr}"
    );
}

#[test]
fn errors_name_the_next_action_as_results_write_it() {
    let out = skill_examples(&["invoke", "seo_role_audit", r#"{"urls": []}"#])
        .output()
        .expect("skill-examples runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("EMPTY_INPUT"), "{stderr}");
    // The seed's word, as in a result's `next_action`, not a Rust variant.
    assert!(stderr.contains("next action: escalate"), "{stderr}");
}

/// The app's binary finds the example data from any working directory, by
/// where the binary is; never by a path of the machine that built it.
#[test]
fn the_app_finds_its_data_from_another_directory() {
    run_ok(cargo().args(["build", "-q", "-p", "skill-examples"]));
    let elsewhere = skill_tests::temp_dir("elsewhere");
    let out = Command::new(skill_tests::root().join("target/debug/skill-examples"))
        .args(["invoke", "read_note", r#"{"path": "rust-ownership.md"}"#])
        .env_remove("SKILL_DATA_DIR")
        .current_dir(&elsewhere)
        .output()
        .expect("skill-examples runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"success\": true"));
}
