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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Value, json};
use skill_runtime::rules::{accepts, property_at, resolve, types_of};

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
        if !d.changes.is_empty() {
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
    for key in keys {
        if !CLASSIFIED.contains(&key.as_str()) && o.get(key) != n.get(key) {
            add(Level::Patch, format!("{key} changed"));
        }
    }

    let required = changes.iter().map(|c| c.level).max().unwrap_or(Level::None);
    let (ov, nv) = (version_of(o), version_of(n));
    let declared = declared_bump(&ov, &nv);
    let failure = match declared {
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
        old_version: Some(ov.to_string()),
        new_version: Some(nv.to_string()),
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
}

impl Side {
    fn word(self) -> &'static str {
        match self {
            Side::Input => "input",
            Side::Output => "output",
        }
    }

    /// The level of a change that narrows what values are allowed.
    fn narrowed(self) -> Level {
        match self {
            Side::Input => Level::Major,
            Side::Output => Level::Minor,
        }
    }

    fn widened(self) -> Level {
        match self {
            Side::Input => Level::Minor,
            Side::Output => Level::Major,
        }
    }
}

/// Property names of an object schema (its own and its `allOf` members').
fn field_names(root: &Value, schema: &Value) -> BTreeSet<String> {
    let schema = resolve(schema, root);
    let mut out: BTreeSet<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.keys().cloned())
        .collect();
    for s in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.extend(field_names(root, s));
    }
    out
}

/// An object schema that starts or stops refusing unknown fields
/// (`additionalProperties: false`).
fn closing(side: Side, what: &str, o: &Value, n: &Value, add: &mut impl FnMut(Level, String)) {
    let closed = |v: &Value| v.get("additionalProperties") == Some(&Value::Bool(false));
    if closed(o) == closed(n) {
        return;
    }
    let (level, how) = if closed(n) {
        (side.narrowed(), "no longer accepts")
    } else {
        (side.widened(), "now accepts")
    };
    add(level, format!("{what} {how} unknown fields"));
}

fn schema_changes(side: Side, o: &Value, n: &Value, add: &mut impl FnMut(Level, String)) {
    closing(side, &format!("the {}", side.word()), o, n, add);
    object_changes(side, "", (o, o), (n, n), 0, add);
}

/// Compare two object schemas field by field; `root`s resolve their `$ref`s.
fn object_changes(
    side: Side,
    path: &str,
    (o_root, o): (&Value, &Value),
    (n_root, n): (&Value, &Value),
    depth: usize,
    add: &mut impl FnMut(Level, String),
) {
    if depth > 8 {
        return;
    }
    let w = side.word();
    let (before, after) = (field_names(o_root, o), field_names(n_root, n));
    let removed: Vec<&String> = before.difference(&after).collect();
    let added: Vec<&String> = after.difference(&before).collect();
    let field_types = |root: &Value, schema: &Value, f: &str| {
        property_at(root, schema, f).and_then(|(s, _)| types_of(s, root))
    };
    let mut renamed: Vec<&String> = Vec::new();
    for r in &removed {
        let t = field_types(o_root, o, r);
        let renamed_to = added
            .iter()
            .find(|a| t.is_some() && !renamed.contains(a) && field_types(n_root, n, a) == t);
        match renamed_to {
            Some(a) => {
                renamed.push(a);
                add(
                    Level::Major,
                    format!(
                        "{w} field `{path}{r}` renamed to `{path}{a}` (a rename breaks every caller that uses the old name)"
                    ),
                )
            }
            None => add(Level::Major, format!("{w} field `{path}{r}` removed")),
        }
    }
    for a in added.iter().filter(|a| !renamed.contains(a)) {
        let required = property_at(n_root, n, a).is_some_and(|(_, r)| r);
        let level = match (side, required) {
            (Side::Input, true) => Level::Major,
            _ => Level::Minor,
        };
        let what = if required { "required" } else { "optional" };
        add(level, format!("{w} field `{path}{a}` added ({what})"));
    }
    for f in before.intersection(&after) {
        let (Some((os, or)), Some((ns, nr))) =
            (property_at(o_root, o, f), property_at(n_root, n, f))
        else {
            continue;
        };
        let at = format!("{path}{f}");
        match (side, or, nr) {
            (Side::Input, false, true) => {
                add(Level::Major, format!("input field `{at}` is now required"))
            }
            (Side::Input, true, false) => {
                add(Level::Minor, format!("input field `{at}` is now optional"))
            }
            (Side::Output, true, false) => add(
                Level::Major,
                format!("output field `{at}` may now be absent"),
            ),
            (Side::Output, false, true) => add(
                Level::Minor,
                format!("output field `{at}` is now always present"),
            ),
            _ => {}
        }
        value_changes(side, &at, (o_root, os), (n_root, ns), depth, add);
    }
}

/// Types, constraints and nested fields of one field.
fn value_changes(
    side: Side,
    at: &str,
    (o_root, o): (&Value, &Value),
    (n_root, n): (&Value, &Value),
    depth: usize,
    add: &mut impl FnMut(Level, String),
) {
    let w = side.word();
    let (ot, nt) = (types_of(o, o_root), types_of(n, n_root));
    if let (Some(ot), Some(nt)) = (&ot, &nt)
        && ot != nt
    {
        let widened = accepts(nt, ot);
        let level = if widened {
            side.widened()
        } else {
            side.narrowed()
        };
        let how = if widened { "widened" } else { "narrowed" };
        let show = |t: &BTreeSet<String>| t.iter().cloned().collect::<Vec<_>>().join(" | ");
        add(
            level,
            format!("{w} field `{at}` type {how}: {} -> {}", show(ot), show(nt)),
        );
    }
    let (o, n) = (resolve(o, o_root), resolve(n, n_root));
    // Lower bounds: raising one narrows. Upper bounds: lowering one narrows.
    for (key, lower) in [
        ("minimum", true),
        ("exclusiveMinimum", true),
        ("minLength", true),
        ("minItems", true),
        ("maximum", false),
        ("exclusiveMaximum", false),
        ("maxLength", false),
        ("maxItems", false),
    ] {
        let (a, b) = (
            o.get(key).and_then(Value::as_f64),
            n.get(key).and_then(Value::as_f64),
        );
        let narrowed = match (a, b) {
            (None, None) => continue,
            (Some(a), Some(b)) if a == b => continue,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => (b > a) == lower,
        };
        let show = |v: Option<f64>| v.map_or("none".to_owned(), |v| v.to_string());
        let level = if narrowed {
            side.narrowed()
        } else {
            side.widened()
        };
        add(
            level,
            format!(
                "{w} field `{at}` {key} {} -> {} ({})",
                show(a),
                show(b),
                if narrowed { "narrowed" } else { "widened" }
            ),
        );
    }
    let values = |v: &Value| -> Option<BTreeSet<String>> {
        Some(
            v.get("enum")?
                .as_array()?
                .iter()
                .map(Value::to_string)
                .collect(),
        )
    };
    match (values(o), values(n)) {
        (Some(a), Some(b)) if a != b => {
            let removed: Vec<_> = a.difference(&b).cloned().collect();
            let added: Vec<_> = b.difference(&a).cloned().collect();
            if !removed.is_empty() {
                add(
                    side.narrowed(),
                    format!("{w} field `{at}` no longer allows {}", removed.join(", ")),
                );
            }
            if !added.is_empty() {
                add(
                    side.widened(),
                    format!("{w} field `{at}` now allows {}", added.join(", ")),
                );
            }
        }
        (None, Some(_)) => add(
            side.narrowed(),
            format!("{w} field `{at}` is now an enumeration"),
        ),
        (Some(_), None) => add(
            side.widened(),
            format!("{w} field `{at}` is no longer an enumeration"),
        ),
        _ => {}
    }
    for key in ["pattern", "format", "const"] {
        match (o.get(key), n.get(key)) {
            (a, b) if a == b => {}
            (None, Some(_)) => add(side.narrowed(), format!("{w} field `{at}` {key} added")),
            (Some(_), None) => add(side.widened(), format!("{w} field `{at}` {key} removed")),
            _ => add(Level::Major, format!("{w} field `{at}` {key} changed")),
        }
    }
    closing(side, &format!("{w} field `{at}`"), o, n, add);
    if o.get("properties").is_some() || n.get("properties").is_some() {
        object_changes(
            side,
            &format!("{at}."),
            (o_root, o),
            (n_root, n),
            depth + 1,
            add,
        );
    }
    if let (Some(oi), Some(ni)) = (o.get("items"), n.get("items")) {
        value_changes(
            side,
            &format!("{at}[]"),
            (o_root, oi),
            (n_root, ni),
            depth + 1,
            add,
        );
    }
}
