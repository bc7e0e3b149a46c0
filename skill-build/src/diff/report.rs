//! What a diff found: each change with the bump it requires, per skill, and
//! whether the declared version bumps suffice.

use std::fmt;

use serde_json::{Value, json};

/// How much of a version a change needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// No version bump needed: nothing a consumer sees changed.
    None,
    /// A patch bump: descriptions and other text.
    Patch,
    /// A minor bump: additions every existing caller still works with.
    Minor,
    /// A major bump: a change that can break a caller.
    Major,
}

impl Level {
    /// The level's name: `none`, `patch`, `minor` or `major`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Patch => "patch",
            Level::Minor => "minor",
            Level::Major => "major",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One classified change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The bump this change needs.
    pub level: Level,
    /// What changed, for people.
    pub message: String,
}

/// Everything that changed in one skill (or op), and whether its version says so.
#[derive(Clone, Debug)]
pub struct SkillDiff {
    /// The skill's name.
    pub name: String,
    /// Its highest version in the old registry (`None`: added).
    pub old_version: Option<String>,
    /// Its highest version in the new registry (`None`: removed).
    pub new_version: Option<String>,
    /// Every change found, with the bump it needs.
    pub changes: Vec<Change>,
    /// The bump the changes need.
    pub required: Level,
    /// The bump the versions declare.
    pub declared: Level,
    /// Why the declared bump is not enough, when it is not.
    pub failure: Option<String>,
}

/// The whole comparison.
#[derive(Clone, Debug, Default)]
pub struct RegistryDiff {
    /// One entry per skill that changed, by name.
    pub skills: Vec<SkillDiff>,
}

impl RegistryDiff {
    /// Whether every skill's declared version bump covers its changes.
    pub fn ok(&self) -> bool {
        self.skills.iter().all(|s| s.failure.is_none())
    }

    /// The diff as JSON (what `skill-registry diff --json` prints).
    pub fn to_json(&self) -> Value {
        json!({
            "ok": self.ok(),
            "skills": self.skills.iter().map(|s| json!({
                "name": s.name,
                "old_version": s.old_version,
                "new_version": s.new_version,
                "required": s.required.as_str(),
                "declared": s.declared.as_str(),
                "ok": s.failure.is_none(),
                "failure": s.failure,
                "changes": s.changes.iter().map(|c| json!({"level": c.level.as_str(), "message": c.message})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for RegistryDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.skills.is_empty() {
            return writeln!(f, "no changes");
        }
        for s in &self.skills {
            let versions = match (&s.old_version, &s.new_version) {
                (Some(o), Some(n)) => format!("{o} -> {n}"),
                (Some(o), None) => format!("{o} -> removed"),
                (None, Some(n)) => format!("new at {n}"),
                (None, None) => String::new(),
            };
            let verdict = match &s.failure {
                None => "ok".to_owned(),
                Some(why) => format!("FAIL: {why}"),
            };
            writeln!(
                f,
                "{} {versions}: needs {}, declares {}: {verdict}",
                s.name, s.required, s.declared
            )?;
            for c in &s.changes {
                writeln!(f, "  {:<5}  {}", c.level.as_str(), c.message)?;
            }
        }
        Ok(())
    }
}
