//! Schemas compared as contracts, on the input side (what callers may send)
//! and the output side (what consumers may rely on).

use std::collections::BTreeSet;

use serde_json::Value;
use skill_runtime::rules::{
    MAX_DEPTH, MAX_STEPS, accepts, property_at, property_names, resolve, types_of,
};

use crate::diff::report::Level;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
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
    property_names(root, schema)
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

pub(super) fn schema_changes(
    side: Side,
    o: &Value,
    n: &Value,
    add: &mut impl FnMut(Level, String),
) {
    // The same schema: nothing to walk (most skills between two versions).
    if o == n {
        return;
    }
    closing(side, &format!("the {}", side.word()), o, n, add);
    unproven(&format!("the {}", side.word()), (o, o), (n, n), add);
    object_changes(side, "", (o, o), (n, n), 0, add);
}

/// Keywords that say nothing about which values validate.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "examples",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
    "$id",
    "$anchor",
    "$defs",
    "definitions",
    "contentMediaType",
];

/// Keywords the diff compares one by one (types, bounds, values, fields,
/// items; local `$ref`s are followed), so a change in them is described.
const COMPARED: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "enum",
    "pattern",
    "format",
    "const",
];

/// What of `v` (resolved through local `$ref`s) the diff does not compare
/// keyword by keyword: composition (`allOf`, `anyOf`, `oneOf`, `not`,
/// `if`/`then`/`else`), `dependentSchemas`, `patternProperties`,
/// `additionalProperties` as a schema, a remote `$ref`, and every other
/// keyword that changes what validates. An `allOf` whose members are only
/// object fields (how schemars writes a flattened struct) is compared field
/// by field, so it is left out.
fn residual(root: &Value, v: &Value) -> Vec<(String, Value)> {
    let v = resolve(v, root);
    let Some(map) = v.as_object() else {
        return Vec::new();
    };
    let fields_only = |m: &Value| {
        resolve(m, root).as_object().is_some_and(|m| {
            m.iter().all(|(k, v)| {
                ANNOTATIONS.contains(&k.as_str())
                    || matches!(k.as_str(), "properties" | "required")
                    || (k == "type" && v == "object")
                    || (k == "additionalProperties" && v.is_boolean())
            })
        })
    };
    map.iter()
        .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()) && !COMPARED.contains(&k.as_str()))
        .filter(|(k, v)| !(k.as_str() == "additionalProperties" && v.is_boolean()))
        .filter(|(k, v)| {
            !(k.as_str() == "allOf" && v.as_array().is_some_and(|a| a.iter().all(fields_only)))
        })
        // A local reference is followed; one that leads elsewhere stays.
        .filter(|(k, v)| !(k.as_str() == "$ref" && v.as_str().is_some_and(|r| r.starts_with('#'))))
        .map(|(k, v)| (k.clone(), expand(root, v, 0, &mut { EXPANSION })))
        .collect()
}

/// How many schemas one keyword's expansion visits at most: a tenth of a
/// whole walk's, since a diff expands at every field it compares.
const EXPANSION: usize = MAX_STEPS / 10;

/// `v` with its local `$ref`s replaced by what they name, so that two
/// schemas that say the same thing through differently named definitions
/// compare equal. Bounded like every walk over a user's schema: past
/// [`MAX_DEPTH`] levels or `steps` schemas (a definition referring to
/// itself, or to the next one twice at each level), a reference stays as
/// written.
fn expand(root: &Value, v: &Value, depth: usize, steps: &mut usize) -> Value {
    if depth > MAX_DEPTH || *steps == 0 {
        return v.clone();
    }
    *steps -= 1;
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str)
                && r.starts_with('#')
                && let Some(target) = root.pointer(&r[1..])
            {
                return expand(root, target, depth + 1, steps);
            }
            Value::Object(
                m.iter()
                    .filter(|(k, _)| !ANNOTATIONS.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), expand(root, v, depth + 1, steps)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|v| expand(root, v, depth + 1, steps))
                .collect(),
        ),
        v => v.clone(),
    }
}

/// Keywords the diff cannot compare one by one, changed: reported as a
/// breaking change (a major version), since no one can prove the new schema
/// accepts, or promises, what the old one did.
fn unproven(
    what: &str,
    (o_root, o): (&Value, &Value),
    (n_root, n): (&Value, &Value),
    add: &mut impl FnMut(Level, String),
) {
    let (before, after) = (residual(o_root, o), residual(n_root, n));
    let keys: BTreeSet<&String> = before.iter().chain(&after).map(|(k, _)| k).collect();
    let value = |side: &[(String, Value)], k: &str| {
        side.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    for k in keys {
        let (a, b) = (value(&before, k), value(&after, k));
        if a == b {
            continue;
        }
        let how = match (&a, &b) {
            (None, Some(_)) => "added",
            (Some(_), None) => "removed",
            _ => "changed",
        };
        add(
            Level::Major,
            format!(
                "{what}: `{k}` {how}, which the diff cannot prove compatible (a breaking change unless the major version moves)"
            ),
        );
    }
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
    // Nested fields and items, bounded like every walk over a user's schema
    // (`items: {"$ref": "#"}` would otherwise recurse forever).
    if depth > MAX_DEPTH {
        return;
    }
    let w = side.word();
    // A reference that leads nowhere describes nothing: a field that now
    // points at a missing definition is a breaking change, not no change.
    let dangling = |root: &Value, v: &Value| {
        v.get("$ref")
            .and_then(Value::as_str)
            .filter(|r| r.starts_with('#') && root.pointer(&r[1..]).is_none())
            .map(str::to_owned)
    };
    if let Some(r) = dangling(n_root, n)
        && dangling(o_root, o).is_none()
    {
        add(
            Level::Major,
            format!("{w} field `{at}` now refers to `{r}`, which the schema does not define"),
        );
    }
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
    unproven(&format!("{w} field `{at}`"), (o_root, o), (n_root, n), add);
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
    match (o.get("items"), n.get("items")) {
        (None, Some(_)) => add(
            side.narrowed(),
            format!("{w} field `{at}` items now constrained"),
        ),
        (Some(_), None) => add(
            side.widened(),
            format!("{w} field `{at}` items no longer constrained"),
        ),
        _ => {}
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
