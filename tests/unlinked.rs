//! A crate listed for export that contributes nothing fails the export.

use skill_tests::*;

#[test]
fn link_of_a_crate_without_skills_fails_the_export() {
    let err = skill_build::registry(skill_build::link!(no_skills))
        .expect_err("no_skills contributes nothing");
    assert!(
        matches!(&err, skill_build::ExportError::NothingFrom(c) if c == "no_skills"),
        "{err}"
    );
    assert!(
        err.to_string().contains(
            "crate `no_skills` is listed in skill_build::link! but contributed no skills"
        )
    );
}

#[test]
fn real_build_of_an_app_expecting_missing_skills_fails() {
    let fixture = root().join("tests/fixtures/unlinked-app");
    // The fixture is outside the workspace; pin it to the workspace's versions.
    std::fs::copy(root().join("Cargo.lock"), fixture.join("Cargo.lock")).expect("copy Cargo.lock");
    let out = cargo()
        .args(["build", "-q", "--manifest-path"])
        .arg(fixture.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root().join("target/fixtures"))
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the build must fail:\n{stderr}");
    assert!(stderr.contains("skill registry export failed"), "{stderr}");
    assert!(
        stderr.contains(
            "crate `no_skills` is listed in skill_build::link! but contributed no skills"
        ),
        "{stderr}"
    );
}
