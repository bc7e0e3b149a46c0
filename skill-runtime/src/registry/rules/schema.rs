//! Reading a JSON Schema the way the rules need: a property's schema and
//! whether it is required, the JSON types a schema admits, and whether one
//! side's types fit the other's. Shared with `skill-registry diff`.
//!
//! Schemas come from files anyone can write, so every walk here is bounded:
//! at most [`MAX_DEPTH`] nested combinators (`allOf`, `anyOf`, `oneOf`, and
//! `$ref`s through them) and [`MAX_STEPS`] schemas visited per question. A
//! schema that refers to itself through a combinator (`{"allOf": [{"$ref":
//! "#"}]}`) describes no value; its walk stops there instead of recursing.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::registry::json::array;

/// How deep a walk follows combinators and `$ref`s through them.
pub const MAX_DEPTH: usize = 32;

/// How many schemas one walk visits at most (a chain of definitions each
/// referring to the next twice would otherwise take 2^depth steps).
pub const MAX_STEPS: usize = 10_000;

/// The allowance of one walk: steps left, shared by its branches.
struct Budget(usize);

impl Budget {
    fn new() -> Self {
        Budget(MAX_STEPS)
    }

    /// One more schema visited at `depth`; `false` when the walk must stop.
    fn step(&mut self, depth: usize) -> bool {
        if depth > MAX_DEPTH || self.0 == 0 {
            return false;
        }
        self.0 -= 1;
        true
    }
}

/// Follow `$ref`s that point into `root` (`#/$defs/...`).
pub fn resolve<'a>(mut schema: &'a Value, root: &'a Value) -> &'a Value {
    for _ in 0..16 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) if r.starts_with('#') => match root.pointer(&r[1..]) {
                Some(target) => schema = target,
                None => return schema,
            },
            _ => return schema,
        }
    }
    schema
}

/// The schema of property `field` of an object schema and whether it is
/// required; `allOf` members (flattened structs) count.
pub fn property<'a>(root: &'a Value, field: &str) -> Option<(&'a Value, bool)> {
    property_at(root, root, field)
}

/// [`property`] of an object schema nested anywhere in `root` (its `$ref`s
/// resolve there).
pub fn property_at<'a>(
    root: &'a Value,
    schema: &'a Value,
    field: &str,
) -> Option<(&'a Value, bool)> {
    property_in(root, schema, field, 0, &mut Budget::new())
}

fn property_in<'a>(
    root: &'a Value,
    schema: &'a Value,
    field: &str,
    depth: usize,
    budget: &mut Budget,
) -> Option<(&'a Value, bool)> {
    if !budget.step(depth) {
        return None;
    }
    let schema = resolve(schema, root);
    if let Some(p) = schema.get("properties").and_then(|p| p.get(field)) {
        let required = array(schema, "required")
            .iter()
            .any(|r| r.as_str() == Some(field));
        return Some((p, required));
    }
    array(schema, "allOf")
        .iter()
        .find_map(|s| property_in(root, s, field, depth + 1, budget))
}

/// The property names of an object schema, its `allOf` members' included
/// (bounded like every walk here).
pub fn property_names(root: &Value, schema: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    names_in(root, schema, 0, &mut Budget::new(), &mut out);
    out
}

fn names_in(
    root: &Value,
    schema: &Value,
    depth: usize,
    budget: &mut Budget,
    out: &mut BTreeSet<String>,
) {
    if !budget.step(depth) {
        return;
    }
    let schema = resolve(schema, root);
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        out.extend(props.keys().cloned());
    }
    for s in array(schema, "allOf") {
        names_in(root, s, depth + 1, budget, out);
    }
}

/// The required properties of an object schema.
pub(super) fn required(root: &Value) -> Vec<&str> {
    let schema = resolve(root, root);
    let mut out: Vec<&str> = array(schema, "required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for s in array(schema, "allOf") {
        out.extend(
            array(resolve(s, root), "required")
                .iter()
                .filter_map(Value::as_str),
        );
    }
    out
}

/// The JSON types a schema admits; `None` when it does not say (any type).
pub fn types_of(schema: &Value, root: &Value) -> Option<BTreeSet<String>> {
    types_in(schema, root, 0, &mut Budget::new())
}

fn types_in(
    schema: &Value,
    root: &Value,
    depth: usize,
    budget: &mut Budget,
) -> Option<BTreeSet<String>> {
    if !budget.step(depth) {
        return None;
    }
    let schema = resolve(schema, root);
    match schema.get("type") {
        Some(Value::String(t)) => return Some(BTreeSet::from([t.clone()])),
        Some(Value::Array(ts)) => {
            return Some(
                ts.iter()
                    .filter_map(|t| t.as_str().map(String::from))
                    .collect(),
            );
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let mut all = BTreeSet::new();
            for b in branches {
                all.extend(types_in(b, root, depth + 1, budget)?);
            }
            return Some(all);
        }
    }
    let values: Vec<&Value> = match (schema.get("const"), schema.get("enum")) {
        (Some(c), _) => vec![c],
        (None, Some(Value::Array(e))) => e.iter().collect(),
        _ => return None,
    };
    Some(
        values
            .into_iter()
            .map(|v| json_type(v).to_owned())
            .collect(),
    )
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether every value of types `source` is of one of types `target`.
pub fn accepts(target: &BTreeSet<String>, source: &BTreeSet<String>) -> bool {
    source
        .iter()
        .all(|s| target.contains(s) || (s == "integer" && target.contains("number")))
}

pub(super) fn shown(types: &BTreeSet<String>) -> String {
    types.iter().cloned().collect::<Vec<_>>().join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_that_refer_to_themselves_are_walked_to_an_end() {
        use serde_json::json;
        for root in [
            json!({"allOf": [{"$ref": "#"}]}),
            json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}),
            json!({"allOf": [{"$ref": "#"}, {"$ref": "#"}], "oneOf": [{"$ref": "#"}]}),
            json!({"$ref": "#/$defs/A", "$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}]}}}),
        ] {
            assert_eq!(property(&root, "x"), None, "{root}");
            assert_eq!(types_of(&root, &root), None, "{root}");
            assert!(property_names(&root, &root).is_empty(), "{root}");
            let _ = required(&root);
        }
        // A chain of definitions each naming the next twice: 2^30 paths,
        // cut at the step budget.
        let mut defs = serde_json::Map::new();
        for i in 0..30 {
            let next = json!({"$ref": format!("#/$defs/D{}", i + 1)});
            defs.insert(format!("D{i}"), json!({"allOf": [next.clone(), next]}));
        }
        defs.insert(
            "D30".into(),
            json!({"properties": {"x": {"type": "string"}}}),
        );
        let root = json!({"$ref": "#/$defs/D0", "$defs": defs});
        assert!(property(&root, "y").is_none());
    }

    #[test]
    fn integers_fit_numbers_but_not_the_other_way() {
        let n = BTreeSet::from(["number".to_owned()]);
        let i = BTreeSet::from(["integer".to_owned()]);
        assert!(accepts(&n, &i));
        assert!(!accepts(&i, &n));
        let root = serde_json::json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
        assert_eq!(
            types_of(&root, &root),
            Some(BTreeSet::from(["null".to_owned(), "string".to_owned()]))
        );
    }
}
