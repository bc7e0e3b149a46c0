//! Classify the changes between two registries, skill by skill, and check each
//! declared version bump against what the changes require (semver: breaking
//! changes need a new major version; additions a new minor; the rest a patch).
//!
//! Schemas are compared as contracts. On the input side a caller's valid input
//! must stay valid: a field removed or renamed, a field becoming required, a type
//! or constraint narrowed is major; an optional field added or a constraint
//! widened is minor. On the output side a consumer's expectations must hold: a
//! field removed, a type widened, a field no longer always present is major; a
//! field added or a type narrowed is minor. A removed field and an added field
//! of the same type are reported as a probable rename, which is breaking however
//! quiet it looks.

mod report;
mod schema;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::diff::schema::{Side, schema_changes};

pub use crate::diff::report::{Change, Level, RegistryDiff, SkillDiff};

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn version_of(v: &Value) -> semver::Version {
    semver::Version::parse(str_of(v, "version")).unwrap_or(semver::Version::new(0, 0, 0))
}

/// The highest version of every name in a registry (`skills`) or op registry (`ops`).
fn latest(doc: &Value) -> BTreeMap<&str, &Value> {
    let mut out: BTreeMap<&str, &Value> = BTreeMap::new();
    let items = doc
        .get("skills")
        .or_else(|| doc.get("ops"))
        .and_then(Value::as_array);
    for v in items.into_iter().flatten() {
        let name = str_of(v, "name");
        if out
            .get(name)
            .is_none_or(|kept| version_of(v) > version_of(kept))
        {
            out.insert(name, v);
        }
    }
    out
}

/// Compare two registry files (both `skill-registry.json` or both
/// `op-registry.json`), the highest version of each name against each other.
pub fn diff(old: &Value, new: &Value) -> RegistryDiff {
    let (old, new) = (latest(old), latest(new));
    let names: BTreeSet<&str> = old.keys().chain(new.keys()).copied().collect();
    let mut out = RegistryDiff::default();
    for name in names {
        let d = match (old.get(name), new.get(name)) {
            (Some(o), Some(n)) => compare(name, o, n),
            (Some(o), None) => {
                let deprecated = str_of(o, "status") == "deprecated";
                SkillDiff {
                    name: name.to_owned(),
                    old_version: Some(str_of(o, "version").to_owned()),
                    new_version: None,
                    changes: vec![Change {
                        level: Level::Major,
                        message: "removed".to_owned(),
                    }],
                    required: Level::Major,
                    declared: Level::Major,
                    failure: (!deprecated).then(|| {
                        "removed without being deprecated first (set status = deprecated with its replacement and removal_version in a release before)".to_owned()
                    }),
                }
            }
            (None, Some(n)) => SkillDiff {
                name: name.to_owned(),
                old_version: None,
                new_version: Some(str_of(n, "version").to_owned()),
                changes: vec![Change {
                    level: Level::Minor,
                    message: "new".to_owned(),
                }],
                required: Level::Minor,
                declared: Level::Minor,
                failure: None,
            },
            (None, None) => continue,
        };
        if !d.changes.is_empty() || d.failure.is_some() {
            out.skills.push(d);
        }
    }
    out
}

/// The bump from `old` to `new` as semver reads it; below 1.0.0 a minor bump
/// may break and a patch bump may add.
fn declared_bump(old: &semver::Version, new: &semver::Version) -> Option<Level> {
    if new < old {
        return None;
    }
    Some(if new.major > old.major {
        Level::Major
    } else if new.minor > old.minor {
        if old.major == 0 {
            Level::Major
        } else {
            Level::Minor
        }
    } else if new.patch > old.patch {
        if old.major == 0 {
            Level::Minor
        } else {
            Level::Patch
        }
    } else if new != old {
        Level::Patch
    } else {
        Level::None
    })
}

fn compare(name: &str, o: &Value, n: &Value) -> SkillDiff {
    let mut changes = Vec::new();
    let mut add = |level: Level, message: String| changes.push(Change { level, message });

    if str_of(o, "kind") != str_of(n, "kind") {
        add(
            Level::Major,
            format!("kind {} -> {}", str_of(o, "kind"), str_of(n, "kind")),
        );
    }
    let (os, ns) = (str_of(o, "status"), str_of(n, "status"));
    if os != ns {
        let level = if ns == "disabled" {
            Level::Major
        } else {
            Level::Minor
        };
        add(level, format!("status {os} -> {ns}"));
    }
    schema_changes(
        Side::Input,
        o.get("inputs_schema").unwrap_or(&Value::Null),
        n.get("inputs_schema").unwrap_or(&Value::Null),
        &mut add,
    );
    schema_changes(
        Side::Output,
        o.get("outputs_schema").unwrap_or(&Value::Null),
        n.get("outputs_schema").unwrap_or(&Value::Null),
        &mut add,
    );
    for (key, what) in [
        ("capabilities", "capability"),
        ("side_effects", "side effect"),
    ] {
        let (before, after) = (set(o, key), set(n, key));
        for c in after.difference(&before) {
            add(Level::Major, format!("{what} `{c}` added"));
        }
        for c in before.difference(&after) {
            add(Level::Minor, format!("{what} `{c}` removed"));
        }
    }
    let codes = |v: &Value| -> BTreeSet<String> {
        v.get("failure_modes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|f| str_of(f, "code").to_owned())
            .collect()
    };
    for c in codes(n).difference(&codes(o)) {
        add(Level::Minor, format!("failure mode `{c}` added"));
    }
    for c in codes(o).difference(&codes(n)) {
        add(Level::Patch, format!("failure mode `{c}` removed"));
    }
    mcp_changes(o, n, &mut add);
    let limit = |v: &Value| {
        v.pointer("/rate_limit/max_per_minute")
            .and_then(Value::as_u64)
    };
    match (limit(o), limit(n)) {
        (a, b) if a == b => {}
        (Some(a), Some(b)) if b > a => {
            add(Level::Minor, format!("rate limit {a} -> {b} per minute"))
        }
        (None, _) | (Some(_), Some(_)) => add(
            Level::Major,
            format!(
                "rate limit {} -> {} per minute (callers may be refused)",
                limit(o).map_or("none".to_owned(), |v| v.to_string()),
                limit(n).map_or("none".to_owned(), |v| v.to_string()),
            ),
        ),
        (Some(a), None) => add(Level::Minor, format!("rate limit {a} per minute removed")),
    }
    for key in ["constraints", "reusable_by"] {
        if o.get(key) != n.get(key) {
            add(
                Level::Major,
                format!("{key} changed (who may run it, and how)"),
            );
        }
    }
    if o.get("steps") != n.get("steps") {
        add(Level::Minor, "steps changed".to_owned());
    }
    // Everything else is documentation and metadata.
    let mut keys: BTreeSet<&String> = BTreeSet::new();
    for v in [o, n] {
        keys.extend(v.as_object().into_iter().flat_map(|m| m.keys()));
    }
    const CLASSIFIED: &[&str] = &[
        "name",
        "version",
        "kind",
        "status",
        "inputs_schema",
        "outputs_schema",
        "capabilities",
        "side_effects",
        "failure_modes",
        "mcp",
        "rate_limit",
        "constraints",
        "reusable_by",
        "steps",
    ];
    // What an audit found in the compiled code (`skill-registry audit
    // --stamp`) describes a build, not the contract: no bump.
    for key in keys.into_iter().filter(|k| *k != "audit") {
        if !CLASSIFIED.contains(&key.as_str()) && o.get(key) != n.get(key) {
            add(Level::Patch, format!("{key} changed"));
        }
    }

    let required = changes.iter().map(|c| c.level).max().unwrap_or(Level::None);
    let (ov, nv) = (version_of(o), version_of(n));
    let declared = declared_bump(&ov, &nv);
    // A version that is not semver cannot be compared: read as 0.0.0 above,
    // it would pass or fail for the wrong reason.
    let unreadable = [("old", o), ("new", n)]
        .into_iter()
        .find(|(_, v)| semver::Version::parse(str_of(v, "version")).is_err());
    let failure = match declared {
        _ if let Some((side, v)) = unreadable => Some(format!(
            "the {side} version `{}` is not semver (MAJOR.MINOR.PATCH); versions cannot be compared",
            str_of(v, "version")
        )),
        None => Some(format!("version went down ({ov} -> {nv})")),
        Some(d) if d < required => Some(format!(
            "the changes need a {required} version bump but {ov} -> {nv} is {}",
            if d == Level::None {
                "no bump".to_owned()
            } else {
                format!("a {d} bump")
            }
        )),
        Some(_) => None,
    };
    SkillDiff {
        name: name.to_owned(),
        old_version: Some(str_of(o, "version").to_owned()),
        new_version: Some(str_of(n, "version").to_owned()),
        changes,
        required,
        declared: declared.unwrap_or(Level::None),
        failure,
    }
}

fn set(v: &Value, key: &str) -> BTreeSet<String> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

fn mcp_changes(o: &Value, n: &Value, add: &mut impl FnMut(Level, String)) {
    let exposed = |v: &Value| v.pointer("/mcp/exposed").and_then(Value::as_bool) == Some(true);
    match (exposed(o), exposed(n)) {
        (true, false) => add(Level::Major, "no longer exposed over MCP".to_owned()),
        (false, true) => add(Level::Minor, "now exposed over MCP".to_owned()),
        (true, true) => {
            let tool = |v: &Value| skill_runtime::views::tool_name(v).to_owned();
            if tool(o) != tool(n) {
                add(
                    Level::Major,
                    format!("MCP tool name `{}` -> `{}`", tool(o), tool(n)),
                );
            }
            let (before, after) = (
                set(o.get("mcp").unwrap_or(&Value::Null), "permissions"),
                set(n.get("mcp").unwrap_or(&Value::Null), "permissions"),
            );
            for p in after.difference(&before) {
                add(Level::Major, format!("MCP permission `{p}` now required"));
            }
            for p in before.difference(&after) {
                add(
                    Level::Minor,
                    format!("MCP permission `{p}` no longer required"),
                );
            }
        }
        (false, false) => {}
    }
}
