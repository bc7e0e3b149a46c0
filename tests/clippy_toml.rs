//! The skills crates' clippy.toml files are exactly what skill-build generates.
//! Regenerate with `SKILL_BLESS=1 cargo test --test clippy_toml`.

use skill_tests::root;

#[test]
fn skills_crates_use_the_generated_clippy_toml() {
    let expected = skill_build::clippy_toml();
    for krate in ["examples/seed-skills", "examples/team-skills"] {
        let path = root().join(krate).join("clippy.toml");
        if std::env::var_os("SKILL_BLESS").is_some() {
            std::fs::write(&path, &expected).unwrap();
        }
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            actual,
            expected,
            "{} is stale; run SKILL_BLESS=1 cargo test --test clippy_toml",
            path.display()
        );
    }
}
