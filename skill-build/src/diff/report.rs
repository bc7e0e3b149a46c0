//! What a diff found: each change with the bump it requires, per skill, and
//! whether the declared version bumps suffice.

use std::fmt;

use serde_json::{Value, json};

/// How much of a version a change needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    None,
    Patch,
    Minor,
    Major,
}

impl Level {
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
    pub level: Level,
    pub message: String,
}

/// Everything that changed in one skill (or op), and whether its version says so.
#[derive(Clone, Debug)]
pub struct SkillDiff {
    pub name: String,
    pub old_version: Option<String>,
    pub new_version: Option<String>,
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
    pub skills: Vec<SkillDiff>,
}

impl RegistryDiff {
    pub fn ok(&self) -> bool {
        self.skills.iter().all(|s| s.failure.is_none())
    }

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
