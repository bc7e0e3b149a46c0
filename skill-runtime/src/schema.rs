//! JSON Schemas of skill inputs and outputs: generated from the Rust types with
//! `schemars` (draft 2020-12, one self-contained schema per skill side), compiled
//! once with `jsonschema`, and reused for every call.

use std::borrow::Cow;
use std::cell::Cell;

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The schema of what a caller may send as `T`, self-contained: its own `$defs`,
/// no references outside it. Fields with defaults are optional.
pub fn input_schema_for<T: JsonSchema>() -> Value {
    input_schema(RootFns::of::<T>())
}

/// The schema of what serializing `T` produces: every field that is always
/// written is required, so consumers can rely on it.
pub fn output_schema_for<T: JsonSchema>() -> Value {
    output_schema(RootFns::of::<T>())
}

/// [`input_schema_for`] from the type's pointers: what a registry entry keeps,
/// so no schema function is compiled per skill.
pub(crate) fn input_schema(fns: &'static RootFns) -> Value {
    root_schema(SchemaSettings::draft2020_12().for_deserialize(), fns)
}

/// [`output_schema_for`] from the type's pointers.
pub(crate) fn output_schema(fns: &'static RootFns) -> Value {
    root_schema(SchemaSettings::draft2020_12().for_serialize(), fns)
}

/// The `JsonSchema` functions of one type, as pointers.
///
/// `SchemaGenerator::into_root_schema_for::<T>` is a sizeable generic function;
/// instantiated for the input and output type of every skill, it was a tenth of
/// the code a skills crate compiles. The root is therefore generated through one
/// non-generic stand-in type, [`Root`], whose `JsonSchema` methods forward to the
/// pointers of the type being generated. Everything below the root goes through
/// the type's own derived impl, exactly as before.
pub(crate) struct RootFns {
    name: fn() -> Cow<'static, str>,
    id: fn() -> Cow<'static, str>,
    inline: fn() -> bool,
    json_schema: fn(&mut SchemaGenerator) -> Schema,
}

impl RootFns {
    pub(crate) const fn of<T: JsonSchema>() -> &'static RootFns {
        const {
            &RootFns {
                name: T::schema_name,
                id: T::schema_id,
                inline: T::inline_schema,
                json_schema: T::json_schema,
            }
        }
    }
}

thread_local! {
    /// The type [`Root`] stands for while [`root_schema`] runs on this thread.
    static ROOT: Cell<Option<&'static RootFns>> = const { Cell::new(None) };
}

fn root_schema(settings: SchemaSettings, fns: &'static RootFns) -> Value {
    // Restore the previous value on the way out, so a `JsonSchema` impl that
    // itself builds a root schema (unusual, but legal) does not confuse the outer one.
    struct Restore(Option<&'static RootFns>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ROOT.with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(ROOT.with(|r| r.replace(Some(fns))));
    let schema: Schema = settings.into_generator().into_root_schema_for::<Root>();
    schema.to_value()
}

/// Stands for the type whose root schema is being generated; see [`RootFns`].
struct Root;

impl Root {
    fn fns() -> &'static RootFns {
        match ROOT.with(Cell::get) {
            Some(fns) => fns,
            // Only `root_schema` names `Root`, and it sets the pointers first.
            None => unreachable!("`Root` used outside `root_schema`"),
        }
    }
}

impl JsonSchema for Root {
    fn inline_schema() -> bool {
        (Root::fns().inline)()
    }

    fn schema_name() -> Cow<'static, str> {
        (Root::fns().name)()
    }

    fn schema_id() -> Cow<'static, str> {
        (Root::fns().id)()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        (Root::fns().json_schema)(generator)
    }
}

/// A compiled schema, and what of it a value of its Rust type can still
/// violate (see [`residual`]).
pub struct CompiledSchema {
    validator: jsonschema::Validator,
    /// `None` when the type guarantees the whole schema.
    residual: Option<jsonschema::Validator>,
    /// Whether decoding params checks every shape the schema states (see
    /// [`shapes_only_at_the_top`]).
    decoding_checks_shapes: bool,
}

/// One violation of a schema, located by JSON pointer into the instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON pointer into the checked value; empty for the root.
    pub instance_path: String,
    /// JSON pointer into the schema, to the keyword that failed.
    pub schema_path: String,
    pub message: String,
}

impl std::fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.instance_path.is_empty() {
            "/"
        } else {
            &self.instance_path
        };
        write!(f, "at {path}: {}", self.message)
    }
}

impl CompiledSchema {
    /// Check `schema` against the 2020-12 meta-schema, then compile it. Formats
    /// (`uri`, `date-time`, ...) are asserted, not just annotated: a demanding caller
    /// expects `format: uri` to reject a non-URI.
    pub fn compile(schema: &Value) -> Result<Self, String> {
        if let Err(e) = jsonschema::meta::validate(schema) {
            return Err(format!(
                "not a valid JSON Schema: {e} (at {})",
                e.instance_path()
            ));
        }
        let build = |schema: &Value| {
            jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(schema)
                .map_err(|e| e.to_string())
        };
        Ok(CompiledSchema {
            validator: build(schema)?,
            residual: residual(schema).as_ref().map(build).transpose()?,
            decoding_checks_shapes: shapes_only_at_the_top(schema),
        })
    }

    /// Whether every value of the Rust type the schema was generated from,
    /// serialized, satisfies it: the schema says nothing the type does not
    /// (see [`implied_by_type`]).
    pub fn implied_by_type(&self) -> bool {
        self.residual.is_none()
    }

    /// Whether `instance`, known to be a value of the schema's Rust type (it
    /// was serialized from one, or decoded into one), is valid: only what the
    /// type does not guarantee is checked ([`residual`]).
    pub fn is_valid_for_type(&self, instance: &Value) -> bool {
        self.residual.as_ref().is_none_or(|r| r.is_valid(instance))
    }

    /// Whether `instance`, which decoded into the schema's Rust type, is valid:
    /// only the residual is checked when decoding has checked every shape
    /// ([`shapes_only_at_the_top`]), else the whole schema.
    pub fn is_valid_decoded(&self, instance: &Value) -> bool {
        if self.decoding_checks_shapes {
            self.is_valid_for_type(instance)
        } else {
            self.is_valid(instance)
        }
    }

    /// Every violation, in the validator's order.
    pub fn violations(&self, instance: &Value) -> Vec<SchemaViolation> {
        self.validator
            .iter_errors(instance)
            .map(|e| SchemaViolation {
                instance_path: e.instance_path().to_string(),
                schema_path: e.schema_path().to_string(),
                message: e.to_string(),
            })
            .collect()
    }

    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }
}

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
/// derives do; the one known exception is a field's `#[serde(alias)]`, which
/// the decoder accepts and schemars does not write into the schema.
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

/// The bounds schemars writes for an integer of the given format, when they
/// are the bounds of the Rust type itself.
fn integer_range(format: &str) -> Option<(f64, f64)> {
    Some(match format {
        "uint8" => (0.0, f64::from(u8::MAX)),
        "uint16" => (0.0, f64::from(u16::MAX)),
        "uint32" => (0.0, f64::from(u32::MAX)),
        "uint64" | "uint" | "uint128" => (0.0, f64::INFINITY),
        "int8" => (f64::from(i8::MIN), f64::from(i8::MAX)),
        "int16" => (f64::from(i16::MIN), f64::from(i16::MAX)),
        "int32" => (f64::from(i32::MIN), f64::from(i32::MAX)),
        "int64" | "int" | "int128" => (f64::NEG_INFINITY, f64::INFINITY),
        _ => return None,
    })
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledSchema")
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Serialize;
    use serde_json::json;

    use super::{
        CompiledSchema, implied_by_type, input_schema_for, output_schema_for, residual,
        shapes_only_at_the_top,
    };

    #[derive(Serialize, JsonSchema)]
    struct Plain {
        count: u32,
        small: u8,
        signed: i64,
        label: String,
        tags: Vec<String>,
        flag: bool,
        inner: Option<Inner>,
        map: std::collections::BTreeMap<String, Inner>,
    }

    #[derive(Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        /// Documented.
        n: u64,
    }

    #[derive(Serialize, JsonSchema)]
    struct Tree {
        name: String,
        children: Vec<Tree>,
    }

    #[derive(Serialize, JsonSchema)]
    struct Bounded {
        #[schemars(length(max = 3))]
        label: String,
    }

    #[derive(Serialize, JsonSchema)]
    struct Float {
        ratio: f64,
    }

    #[derive(Serialize, JsonSchema)]
    struct Email {
        #[schemars(email)]
        to: String,
    }

    #[derive(Serialize, JsonSchema)]
    struct Narrow {
        #[schemars(range(min = 1))]
        count: u32,
    }

    #[derive(Serialize, JsonSchema)]
    #[allow(dead_code)] // only its schema is used
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Serialize, JsonSchema)]
    struct WithMode {
        mode: Mode,
    }

    #[test]
    fn shapes_the_type_guarantees_are_implied() {
        let plain = output_schema_for::<Plain>();
        assert!(implied_by_type(&plain), "{plain:#}");
        let tree = output_schema_for::<Tree>();
        assert!(implied_by_type(&tree), "recursive: {tree:#}");
    }

    #[test]
    fn constraints_beyond_the_type_are_not() {
        for (what, schema) in [
            ("a length", output_schema_for::<Bounded>()),
            (
                "a float (NaN serializes as null)",
                output_schema_for::<Float>(),
            ),
            ("a format", output_schema_for::<Email>()),
            ("a range narrower than u32", output_schema_for::<Narrow>()),
            ("an enum", output_schema_for::<WithMode>()),
            ("a dangling reference", json!({"$ref": "#/$defs/Missing"})),
            ("`false`", json!(false)),
        ] {
            assert!(!implied_by_type(&schema), "{what}: {schema}");
        }
    }

    #[derive(Serialize, JsonSchema)]
    struct Named {
        #[schemars(length(max = 3))]
        name: String,
        children: Vec<Named>,
        inner: Option<Inner>,
    }

    #[derive(Serialize, JsonSchema)]
    struct MaybeNamed {
        child: Option<Named>,
    }

    #[derive(Serialize, JsonSchema)]
    #[allow(dead_code)] // only its schema is used
    enum Shape {
        Circle { radius: u32 },
        Square { side: u32 },
    }

    #[derive(Serialize, JsonSchema)]
    struct WithShape {
        shape: Shape,
    }

    fn without_dialect(mut schema: serde_json::Value) -> serde_json::Value {
        schema.as_object_mut().unwrap().remove("$schema");
        schema
    }

    #[test]
    fn a_residual_keeps_only_what_the_type_does_not_guarantee() {
        assert_eq!(residual(&output_schema_for::<Plain>()), None);
        assert_eq!(residual(&output_schema_for::<Tree>()), None);
        let bounded = residual(&input_schema_for::<Bounded>()).unwrap();
        assert_eq!(
            without_dialect(bounded),
            json!({"properties": {"label": {"maxLength": 3}}})
        );
        let narrow = residual(&output_schema_for::<Narrow>()).unwrap();
        assert_eq!(
            without_dialect(narrow),
            json!({"properties": {"count": {"minimum": 1}}})
        );
        // The recursion stays; the reference to a definition with nothing left
        // to check goes.
        let named = residual(&output_schema_for::<Named>()).unwrap();
        assert_eq!(
            without_dialect(named),
            json!({"properties": {
                "name": {"maxLength": 3},
                "children": {"items": {"$ref": "#"}},
            }})
        );
    }

    #[test]
    fn an_option_is_reduced_under_each_alternatives_type() {
        let schema = output_schema_for::<MaybeNamed>();
        let left = without_dialect(residual(&schema).unwrap());
        assert_eq!(
            left["properties"],
            json!({"child": {"anyOf": [
                {"$ref": "#/$defs/Named", "type": "object"},
                {"type": "null"},
            ]}}),
            "{left:#}"
        );
        assert_eq!(
            left["$defs"]["Named"]["properties"]["name"],
            json!({"maxLength": 3})
        );
        // Alternatives of one JSON type cannot be told apart by it.
        let same_type = json!({"anyOf": [
            {"type": "string", "maxLength": 2},
            {"type": "string", "pattern": "^x"},
        ]});
        assert_eq!(residual(&same_type), Some(same_type));
    }

    #[test]
    fn decoding_checks_the_shapes_of_flat_schemas_only() {
        assert!(shapes_only_at_the_top(&input_schema_for::<Bounded>()));
        assert!(shapes_only_at_the_top(&input_schema_for::<Narrow>()));
        for (what, schema) in [
            ("a nested struct", input_schema_for::<Plain>()),
            ("a recursive struct", input_schema_for::<Named>()),
            ("an optional struct", input_schema_for::<MaybeNamed>()),
            (
                "an object under an annotation's name",
                json!({"type": "object", "properties": {"default": {"type": "object"}}}),
            ),
        ] {
            assert!(!shapes_only_at_the_top(&schema), "{what}: {schema}");
        }
    }

    #[test]
    fn what_a_residual_cannot_reduce_it_keeps_whole() {
        let schema = output_schema_for::<WithShape>();
        assert_eq!(residual(&schema), Some(schema));
        // Named properties stay named (as `true`), or the remaining
        // `additionalProperties` would apply to them.
        let map = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "string", "maxLength": 2},
        });
        assert_eq!(
            residual(&map),
            Some(json!({
                "properties": {"a": true},
                "additionalProperties": {"maxLength": 2},
            }))
        );
    }

    /// On values of the schema's type, the residual and the whole schema agree.
    #[test]
    fn on_values_of_the_type_the_residual_decides_as_the_schema_does() {
        let named = |name: &str, children| Named {
            name: name.into(),
            children,
            inner: Some(Inner { n: 1 }),
        };
        let cases = [
            (
                output_schema_for::<Named>(),
                vec![
                    json!(named("ok", vec![named("ok", vec![])])),
                    json!(named("ok", vec![named("too long", vec![])])),
                    json!(named("too long", vec![])),
                ],
            ),
            (
                output_schema_for::<MaybeNamed>(),
                vec![
                    json!(MaybeNamed { child: None }),
                    json!(MaybeNamed {
                        child: Some(named("ok", vec![]))
                    }),
                    json!(MaybeNamed {
                        child: Some(named("ok", vec![named("too long", vec![])]))
                    }),
                ],
            ),
            (
                output_schema_for::<Bounded>(),
                vec![
                    json!(Bounded {
                        label: "abc".into()
                    }),
                    json!(Bounded {
                        label: "abcd".into()
                    }),
                ],
            ),
            (
                output_schema_for::<Narrow>(),
                vec![json!(Narrow { count: 0 }), json!(Narrow { count: 1 })],
            ),
            (
                output_schema_for::<Email>(),
                vec![
                    json!(Email {
                        to: "a@example.com".into()
                    }),
                    json!(Email {
                        to: "not an address".into()
                    }),
                ],
            ),
        ];
        for (schema, values) in cases {
            let compiled = CompiledSchema::compile(&schema).unwrap();
            assert!(!compiled.implied_by_type());
            let verdicts: Vec<_> = values.iter().map(|v| compiled.is_valid(v)).collect();
            assert!(
                verdicts.contains(&true) && verdicts.contains(&false),
                "{schema}"
            );
            for (value, valid) in values.iter().zip(verdicts) {
                assert_eq!(
                    compiled.is_valid_for_type(value),
                    valid,
                    "{value} against {schema}"
                );
            }
        }
    }
}
