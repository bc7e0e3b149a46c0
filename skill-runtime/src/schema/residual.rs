//! What of a schema a value of its Rust type can still violate: the checks a
//! call needs beyond what decoding into the type (or serializing from it)
//! already guarantees.

use serde_json::Value;

use crate::schema::formats::width_bounds;

/// Whether `schema` only states what serializing a value of the type it was
/// derived from guarantees: object shapes, arrays, strings, booleans, integers
/// within their Rust width, alternatives (`anyOf`) of such, references to such,
/// and annotations. Anything else (lengths, patterns, ranges narrower than the
/// type, formats beyond integer widths, `enum`, `const`, `oneOf`, and `number`,
/// since a float may be NaN and serialize as `null`) needs the validator.
pub fn implied_by_type(schema: &Value) -> bool {
    let defs = schema.get("$defs").and_then(Value::as_object);
    implied_at(schema, defs, &mut Vec::new())
}

fn implied_at<'a>(
    schema: &'a Value,
    defs: Option<&'a serde_json::Map<String, Value>>,
    seen: &mut Vec<&'a str>,
) -> bool {
    let Some(map) = schema.as_object() else {
        // `true` allows anything; `false` allows nothing a type produces.
        return schema.as_bool() == Some(true);
    };
    let sub = |v: &'a Value, seen: &mut Vec<&'a str>| implied_at(v, defs, seen);
    let format = map.get("format").and_then(Value::as_str);
    let range = format.and_then(integer_range);
    for (key, value) in map {
        let ok = match key.as_str() {
            "$schema" | "$id" | "$comment" | "title" | "description" | "default" | "examples"
            | "deprecated" | "readOnly" | "writeOnly" | "required" | "$defs" => true,
            "type" | "format" | "minimum" | "maximum" => implied_scalar(key, value, range),
            "properties" => value
                .as_object()
                .is_some_and(|props| props.values().all(|p| sub(p, seen))),
            "items" => sub(value, seen),
            // A struct writes only its own fields.
            "additionalProperties" => value == &Value::Bool(false) || sub(value, seen),
            "anyOf" => value
                .as_array()
                .is_some_and(|alts| alts.iter().all(|a| sub(a, seen))),
            // The root, being checked: it holds if everything else does.
            "$ref" if value == "#" => true,
            "$ref" => {
                let target = value.as_str().and_then(|r| r.strip_prefix("#/$defs/"));
                match (target, defs) {
                    (Some(name), _) if seen.contains(&name) => true,
                    (Some(name), Some(defs)) => defs.get(name).is_some_and(|def| {
                        seen.push(name);
                        let ok = sub(def, seen);
                        seen.pop();
                        ok
                    }),
                    _ => false,
                }
            }
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// What of `schema` a value of the Rust type it was derived from can still
/// violate, as a schema of its own: `None` when nothing
/// ([`implied_by_type`]). A value that decoded into the type, or was
/// serialized from it, is valid against `schema` exactly when it is valid
/// against the residual, which is cheaper to check: the shapes, types and
/// required fields are gone, and the constraints the type does not carry
/// (lengths, patterns, ranges, formats, `enum`, `const`) stay where they were.
/// "Exactly" holds where serde and schemars agree on the type, as their
/// derives do; the one known exception, a field's `#[serde(alias)]`, which
/// serde accepts and schemars does not write into the schema, is refused
/// when the registry is built (`contract/ordered.rs`, `Shape::learn`).
///
/// The residual keeps `$ref`s to definitions that have constraints left (each
/// definition reduced the same way) and drops those to definitions that have
/// none. `anyOf` alternatives of different JSON types (`Option<T>`) are reduced
/// each under its own `type`. A keyword it cannot reduce soundly (`oneOf`,
/// `allOf`, `not`, `if`/`then`/`else`, `patternProperties`, an `anyOf` with
/// constrained alternatives of overlapping types: a sibling's residual could
/// hold where the value's own alternative does not) makes the residual the
/// whole schema.
pub fn residual(schema: &Value) -> Option<Value> {
    if implied_by_type(schema) {
        return None;
    }
    let defs = schema.get("$defs").and_then(Value::as_object);
    let reduce = || -> Result<Option<Value>, Irreducible> {
        let Some(Value::Object(mut root)) = residual_at(schema, defs)? else {
            return Ok(None);
        };
        let mut kept = serde_json::Map::new();
        for (name, def) in defs.into_iter().flatten() {
            if let Some(def) = residual_at(def, defs)? {
                kept.insert(name.clone(), def);
            }
        }
        if !kept.is_empty() {
            root.insert("$defs".to_owned(), Value::Object(kept));
        }
        if let Some(dialect) = schema.get("$schema") {
            root.insert("$schema".to_owned(), dialect.clone());
        }
        Ok(Some(Value::Object(root)))
    };
    reduce().unwrap_or_else(|Irreducible| Some(schema.clone()))
}

/// Whether the schema states an object shape only at its top: no object type
/// below the root and no `$ref` (which leads to a definition or back to the
/// root). Only then does decoding params check every shape the schema states:
/// the runtime's decoder takes the top-level struct from an object only, but
/// serde_json, which decodes what is nested, also takes a struct from an
/// array of its fields. Values serialized from the type need no such care:
/// serializing writes every struct as an object.
pub fn shapes_only_at_the_top(schema: &Value) -> bool {
    /// Whether `schema` (the top one when `top`) states no object below the top.
    fn flat(schema: &Value, top: bool) -> bool {
        let Some(map) = schema.as_object() else {
            return true;
        };
        map.iter().all(|(key, value)| match key.as_str() {
            "$ref" => false,
            "type" => {
                top || !match value {
                    Value::Array(types) => types.iter().any(|t| t == "object"),
                    t => t == "object",
                }
            }
            // Data, not schemas.
            "default" | "examples" | "const" | "enum" | "required" => true,
            // Maps of names to schemas.
            "properties" | "$defs" | "patternProperties" | "dependentSchemas" => value
                .as_object()
                .is_none_or(|m| m.values().all(|s| flat(s, false))),
            // A schema, or a list of them.
            _ => match value {
                Value::Array(schemas) => schemas.iter().all(|s| flat(s, false)),
                s => flat(s, false),
            },
        })
    }
    flat(schema, true)
}

/// A keyword [`residual`] cannot reduce.
struct Irreducible;

/// The residual of one schema object: `None` when the type guarantees it.
/// Keywords with subschemas (`properties`, `items`, `additionalProperties`,
/// `$ref`) are reduced; constraints on the value itself are kept as they are;
/// annotations are dropped.
fn residual_at(
    schema: &Value,
    defs: Option<&serde_json::Map<String, Value>>,
) -> Result<Option<Value>, Irreducible> {
    let Some(map) = schema.as_object() else {
        return Ok((schema.as_bool() != Some(true)).then(|| schema.clone()));
    };
    let format = map.get("format").and_then(Value::as_str);
    let range = format.and_then(integer_range);
    let mut left = serde_json::Map::new();
    for (key, value) in map {
        let kept = match key.as_str() {
            "$schema" | "$id" | "$comment" | "title" | "description" | "default" | "examples"
            | "deprecated" | "readOnly" | "writeOnly" | "required" | "$defs" => None,
            // What the type guarantees (as in `implied_at`) goes; the rest stays.
            "type" | "format" | "minimum" | "maximum" => {
                (!implied_scalar(key, value, range)).then(|| value.clone())
            }
            "maxLength" | "minLength" | "pattern" | "exclusiveMinimum" | "exclusiveMaximum"
            | "multipleOf" | "enum" | "const" | "maxItems" | "minItems" | "uniqueItems"
            | "maxProperties" | "minProperties" => Some(value.clone()),
            "properties" => {
                let Some(props) = value.as_object() else {
                    return Err(Irreducible);
                };
                let mut kept = serde_json::Map::new();
                for (name, p) in props {
                    if let Some(p) = residual_at(p, defs)? {
                        kept.insert(name.clone(), p);
                    }
                }
                (!kept.is_empty()).then_some(Value::Object(kept))
            }
            "items" => residual_at(value, defs)?,
            "additionalProperties" if value == &Value::Bool(false) => None,
            "additionalProperties" => residual_at(value, defs)?,
            "$ref" if value == "#" => Some(value.clone()),
            "$ref" => {
                let target = value.as_str().and_then(|r| r.strip_prefix("#/$defs/"));
                match target.and_then(|name| defs?.get(name)) {
                    Some(def) if implied_at(def, defs, &mut Vec::new()) => None,
                    Some(_) => Some(value.clone()),
                    None => return Err(Irreducible),
                }
            }
            // Any other keyword with subschemas: dropped when it only states
            // shapes; else `anyOf` is reduced alternative by alternative, and
            // anything else is not reducible.
            _ => {
                let alone = Value::Object([(key.clone(), value.clone())].into_iter().collect());
                if implied_at(&alone, defs, &mut Vec::new()) {
                    None
                } else if key == "anyOf" {
                    Some(residual_alternatives(value, defs)?)
                } else {
                    return Err(Irreducible);
                }
            }
        };
        if let Some(kept) = kept {
            left.insert(key.clone(), kept);
        }
    }
    // `additionalProperties` applies to the properties `properties` does not
    // name: with properties dropped, it would apply to them too.
    if left.contains_key("additionalProperties")
        && let Some(props) = map.get("properties").and_then(Value::as_object)
    {
        let Value::Object(kept) = left
            .entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()))
        else {
            unreachable!("`properties` was built as an object")
        };
        for name in props.keys() {
            kept.entry(name.clone()).or_insert(Value::Bool(true));
        }
    }
    Ok((!left.is_empty()).then_some(Value::Object(left)))
}

/// The residual of `anyOf` alternatives whose JSON types do not overlap (an
/// `Option<T>` is `T`'s schema or `null`; an untagged enum of different
/// shapes): a value of the Rust type took the one alternative of its JSON
/// type, so each alternative keeps its `type` and is reduced under it. Where
/// the types overlap or cannot be told, a sibling's residual could hold where
/// the value's own alternative does not: not reducible.
fn residual_alternatives(
    alternatives: &Value,
    defs: Option<&serde_json::Map<String, Value>>,
) -> Result<Value, Irreducible> {
    let alternatives = alternatives.as_array().ok_or(Irreducible)?;
    let mut seen: Vec<&str> = Vec::new();
    let mut reduced = Vec::with_capacity(alternatives.len());
    for alternative in alternatives {
        let types = json_types(alternative, defs, 0).ok_or(Irreducible)?;
        for t in &types {
            let overlaps = |s: &&str| {
                s == t || matches!((*s, *t), ("integer", "number") | ("number", "integer"))
            };
            if seen.iter().any(overlaps) {
                return Err(Irreducible);
            }
        }
        seen.extend(types.iter().copied());
        let mut branch = match residual_at(alternative, defs)? {
            Some(Value::Object(map)) => map,
            Some(_) => return Err(Irreducible),
            None => serde_json::Map::new(),
        };
        let types = match types.as_slice() {
            [one] => Value::from(*one),
            many => Value::from(many.to_vec()),
        };
        branch.insert("type".to_owned(), types);
        reduced.push(Value::Object(branch));
    }
    Ok(Value::Array(reduced))
}

/// The JSON types a schema admits, from its `type` or, through `$ref`, its
/// definition's; `None` when it does not say.
fn json_types<'a>(
    schema: &'a Value,
    defs: Option<&'a serde_json::Map<String, Value>>,
    depth: usize,
) -> Option<Vec<&'a str>> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(vec![t.as_str()]),
        Some(Value::Array(ts)) => ts.iter().map(Value::as_str).collect(),
        Some(_) => None,
        None if depth < 8 => {
            let name = schema.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
            json_types(defs?.get(name)?, defs, depth + 1)
        }
        None => None,
    }
}

/// Whether `type`, `format`, `minimum` or `maximum` says only what the type
/// does: JSON types a value can take without a float, integer formats, and the
/// bounds of the integer's width (`range`, from the schema's `format`).
fn implied_scalar(key: &str, value: &Value, range: Option<(f64, f64)>) -> bool {
    match key {
        "type" => {
            let allowed = |t: &Value| {
                matches!(
                    t.as_str(),
                    Some("object" | "array" | "string" | "boolean" | "integer" | "null")
                )
            };
            match value {
                Value::Array(types) => types.iter().all(allowed),
                t => allowed(t),
            }
        }
        "format" => range.is_some(),
        "minimum" => range.is_some_and(|(min, _)| value.as_f64() == Some(min)),
        "maximum" => range.is_some_and(|(_, max)| value.as_f64() == Some(max)),
        _ => false,
    }
}

/// The bounds of the integer width a format names (schemars writes them as
/// `minimum`/`maximum` when a JSON number can state them), from the one table
/// of widths ([`width_bounds`]); unbounded sides are infinite.
fn integer_range(format: &str) -> Option<(f64, f64)> {
    let (min, max) = width_bounds(format)?;
    Some((
        min.as_f64().unwrap_or(f64::NEG_INFINITY),
        max.as_f64().unwrap_or(f64::INFINITY),
    ))
}
