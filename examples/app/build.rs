//! Export the registry of every skill this app links: `$OUT_DIR/skill-registry.json`,
//! `$OUT_DIR/capabilities.json`, and `$SKILL_REGISTRY_OUT` when set.

fn main() {
    let exported = skill_build::export_or_exit(skill_build::link!(seed_skills, team_skills));
    if let Some(path) = exported.extra {
        println!(
            "cargo::warning=skill registry ({} skills) written to {}",
            exported.skills,
            path.display()
        );
    }
}
