//! Schemas with their definitions inlined, for clients that cannot resolve `$ref`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

const ANNOTATION_KEYWORDS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// The most schema nodes inlining may write for one schema. Definitions that
/// each refer to the next twice double the size at every level (a small
/// schema can inline to gigabytes); past this budget the schema is left as
/// it is, its `$ref`s and `$defs` kept, which every client resolving `$ref`
/// reads the same.
pub const MAX_INLINED_NODES: usize = 20_000;

/// `schema` with every `$ref` to a non-recursive definition replaced by the
/// definition itself, so that clients that cannot resolve `$ref` still see the
/// whole shape. Definitions that refer to themselves (directly or through
/// others) stay in `$defs` and are referenced as before. A schema that would
/// inline to more than [`MAX_INLINED_NODES`] nodes is returned unchanged.
pub fn self_contained(schema: &Value) -> Value {
    let Some(root) = schema.as_object() else {
        return schema.clone();
    };
    let defs_key = if root.contains_key("$defs") {
        "$defs"
    } else {
        "definitions"
    };
    let defs: Map<String, Value> = root
        .get(defs_key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if defs.is_empty() {
        return schema.clone();
    }
    let recursive = recursive_defs(&defs, defs_key);
    let inliner = Inliner {
        defs: &defs,
        defs_key,
        recursive: &recursive,
        left: std::cell::Cell::new(MAX_INLINED_NODES),
    };
    let mut out = Map::new();
    for (k, v) in root {
        if k != defs_key {
            out.insert(k.clone(), inliner.inline(v));
        }
    }
    if !recursive.is_empty() {
        let kept: Map<String, Value> = recursive
            .iter()
            .map(|name| (name.clone(), inliner.inline(&defs[name])))
            .collect();
        out.insert(defs_key.to_owned(), Value::Object(kept));
    }
    if inliner.left.get() == 0 {
        return schema.clone();
    }
    Value::Object(out)
}

struct Inliner<'a> {
    defs: &'a Map<String, Value>,
    defs_key: &'a str,
    recursive: &'a BTreeSet<String>,
    /// Nodes it may still write; at 0 it writes nothing more (and the result
    /// is dropped).
    left: std::cell::Cell<usize>,
}

impl Inliner<'_> {
    fn target<'v>(&self, reference: &'v str) -> Option<&'v str> {
        reference
            .strip_prefix("#/")?
            .strip_prefix(self.defs_key)?
            .strip_prefix('/')
    }

    fn inline(&self, value: &Value) -> Value {
        match self.left.get() {
            0 => return Value::Null,
            n => self.left.set(n - 1),
        }
        match value {
            Value::Object(o) => {
                let target = o
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| self.target(r))
                    .filter(|name| {
                        self.defs.contains_key(*name) && !self.recursive.contains(*name)
                    });
                let Some(name) = target else {
                    return Value::Object(
                        o.iter().map(|(k, v)| (k.clone(), self.inline(v))).collect(),
                    );
                };
                let definition = self.inline(&self.defs[name]);
                let siblings: Map<String, Value> = o
                    .iter()
                    .filter(|(k, _)| k.as_str() != "$ref")
                    .map(|(k, v)| (k.clone(), self.inline(v)))
                    .collect();
                if siblings.is_empty() {
                    return definition;
                }
                let only_annotations = siblings
                    .keys()
                    .all(|k| ANNOTATION_KEYWORDS.contains(&k.as_str()));
                match definition {
                    Value::Object(mut d) if only_annotations => {
                        // The referring site's annotations describe the field;
                        // they win over the type's own.
                        d.extend(siblings);
                        Value::Object(d)
                    }
                    definition => {
                        let mut all = siblings;
                        all.insert("allOf".into(), Value::Array(vec![definition]));
                        Value::Object(all)
                    }
                }
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.inline(v)).collect()),
            other => other.clone(),
        }
    }
}

/// Definitions that can reach themselves through `$ref`s.
fn recursive_defs(defs: &Map<String, Value>, defs_key: &str) -> BTreeSet<String> {
    let prefix = format!("#/{defs_key}/");
    let edges: BTreeMap<&str, BTreeSet<String>> = defs
        .iter()
        .map(|(name, d)| {
            let mut refs = BTreeSet::new();
            collect_refs(d, &prefix, &mut refs);
            (name.as_str(), refs)
        })
        .collect();
    let mut recursive = BTreeSet::new();
    for start in defs.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = edges[start.as_str()].iter().collect();
        while let Some(n) = stack.pop() {
            if n == start {
                recursive.insert(start.clone());
                break;
            }
            if seen.insert(n.clone())
                && let Some(next) = edges.get(n.as_str())
            {
                stack.extend(next.iter());
            }
        }
    }
    recursive
}

fn collect_refs(value: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(o) => {
            if let Some(name) = o
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(prefix))
            {
                out.insert(name.to_owned());
            }
            o.values().for_each(|v| collect_refs(v, prefix, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, prefix, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn inlines_plain_definitions_and_keeps_recursive_ones() {
        let schema = json!({
            "type": "object",
            "properties": {
                "page": {"$ref": "#/$defs/Page", "description": "The page."},
                "tree": {"$ref": "#/$defs/Node"},
                "limit": {"$ref": "#/$defs/Limit", "maximum": 10},
            },
            "$defs": {
                "Page": {"type": "object", "properties": {"url": {"type": "string"}}, "description": "A page."},
                "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}, "page": {"$ref": "#/$defs/Page"}}},
                "Limit": {"type": "integer", "minimum": 0},
            },
        });
        let out = self_contained(&schema);
        assert_eq!(
            out["properties"]["page"],
            json!({"type": "object", "properties": {"url": {"type": "string"}}, "description": "The page."})
        );
        assert_eq!(
            out["properties"]["limit"],
            json!({"maximum": 10, "allOf": [{"type": "integer", "minimum": 0}]})
        );
        assert_eq!(out["properties"]["tree"], json!({"$ref": "#/$defs/Node"}));
        let defs = out["$defs"].as_object().unwrap();
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["Node"]);
        assert_eq!(
            defs["Node"]["properties"]["page"]["properties"]["url"],
            json!({"type": "string"})
        );
    }

    #[test]
    fn a_schema_that_would_inline_past_the_budget_is_kept_as_it_is() {
        // Each definition refers to the next twice: 2^20 copies of the last.
        let mut defs = Map::new();
        for i in 0..20 {
            let next = json!({"$ref": format!("#/$defs/D{}", i + 1)});
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "properties": {"a": next.clone(), "b": next}}),
            );
        }
        defs.insert("D20".into(), json!({"type": "string"}));
        let schema =
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": defs});
        assert_eq!(self_contained(&schema), schema);
        // A small one still inlines.
        let small = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/D19"}}, "$defs": {
            "D19": {"type": "object", "properties": {"a": {"$ref": "#/$defs/D20"}}},
            "D20": {"type": "string"}}});
        assert_eq!(
            self_contained(&small)["properties"]["x"]["properties"]["a"],
            json!({"type": "string"})
        );
    }

    #[test]
    fn mutual_recursion_is_kept() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
            },
        });
        let out = self_contained(&schema);
        assert_eq!(out["properties"]["a"], json!({"$ref": "#/$defs/A"}));
        assert_eq!(
            out["$defs"].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["A", "B"]
        );
    }
}
