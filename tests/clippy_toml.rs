//! The backstop every skills crate gets: the `clippy.toml` skill-build
//! generates, in the example crates and in a crate made by `skill-registry new`,
//! where a real `cargo clippy` refuses ambient calls the macro cannot see.
//! Regenerate the examples' files with `SKILL_BLESS=1 cargo test --test clippy_toml`.

use std::path::Path;

use skill_tests::{cargo, registry_cli, root};

#[test]
fn skills_crates_use_the_generated_clippy_toml() {
    for krate in [
        "examples/seed-skills",
        "examples/team-skills",
        "examples/conformance",
    ] {
        let dir = root().join(krate);
        if std::env::var_os("SKILL_BLESS").is_some() {
            skill_build::scaffold::backstop(&dir, false).unwrap();
        }
        if let Err(e) = skill_build::scaffold::backstop(&dir, true) {
            panic!("{e}; or run SKILL_BLESS=1 cargo test --test clippy_toml");
        }
    }
}

/// `cargo clippy -- -D warnings` on the crate at `dir`, in a target directory
/// of the workspace's (the crate is outside the workspace, pinned to its lock).
fn clippy(dir: &Path) -> (bool, String) {
    let out = cargo()
        .args(["clippy", "-q", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .args(["--", "-D", "warnings"])
        .env("CARGO_TARGET_DIR", root().join("target/fixtures"))
        .output()
        .expect("cargo clippy runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_new_skills_crate_gets_the_backstop_and_clippy_enforces_it() {
    // Outside the workspace's directory, where cargo would take it for a
    // member that is not listed.
    let dir = std::env::temp_dir().join(format!("skill-backstop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let crate_dir = dir.join("my-skills");
    let runtime = root().join("skill-runtime");
    let (code, out, err) = registry_cli(&[
        "new",
        crate_dir.to_str().unwrap(),
        "--runtime-path",
        runtime.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("clippy.toml"), "{out}");
    std::fs::copy(root().join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();

    // As generated: it compiles, and the backstop finds nothing.
    let (ok, stderr) = clippy(&crate_dir);
    assert!(ok, "the new crate must pass its own backstop:\n{stderr}");
    let (code, _, err) = registry_cli(&["backstop", crate_dir.to_str().unwrap(), "--check"]);
    assert_eq!(code, 0, "{err}");

    // What the macro cannot see: a module-level import used in a helper, and a
    // helper with a full path. The backstop refuses both, by name.
    let lib = crate_dir.join("src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text.push_str(
        "\nuse std::fs::remove_file;\n\n\
         pub fn tidy(path: &str) {\n    let _ = remove_file(path);\n}\n\n\
         pub fn save(path: &str) {\n    std::fs::write(path, b\"x\").unwrap();\n}\n",
    );
    std::fs::write(&lib, text).unwrap();
    let (ok, stderr) = clippy(&crate_dir);
    assert!(!ok, "the backstop must refuse the helpers");
    for method in ["std::fs::remove_file", "std::fs::write"] {
        assert!(
            stderr.contains(&format!("use of a disallowed method `{method}`")),
            "{method} not reported:\n{stderr}"
        );
    }

    // A stale or missing file is reported, and `backstop` writes it back.
    std::fs::write(crate_dir.join("clippy.toml"), "").unwrap();
    let (code, _, err) = registry_cli(&["backstop", crate_dir.to_str().unwrap(), "--check"]);
    assert_eq!(code, 1);
    assert!(err.contains("is missing or stale"), "{err}");
    let (code, _, _) = registry_cli(&["backstop", crate_dir.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(crate_dir.join("clippy.toml")).unwrap(),
        skill_build::clippy_toml()
    );

    // `new` never overwrites.
    let (code, _, err) = registry_cli(&["new", crate_dir.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("already exists and is not empty"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
