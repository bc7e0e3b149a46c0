//! A command whose reader goes away (`| head`) ends quietly, in both binaries:
//! no panic, no backtrace, success.

use std::process::{Command, Stdio};

use skill_tests::{cargo, skill_examples};

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
