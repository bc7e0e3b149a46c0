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
    root_schema(
        SchemaSettings::draft2020_12().for_deserialize(),
        RootFns::of::<T>(),
    )
}

/// The schema of what serializing `T` produces: every field that is always
/// written is required, so consumers can rely on it.
pub fn output_schema_for<T: JsonSchema>() -> Value {
    root_schema(
        SchemaSettings::draft2020_12().for_serialize(),
        RootFns::of::<T>(),
    )
}

/// The `JsonSchema` functions of one type, as pointers.
///
/// `SchemaGenerator::into_root_schema_for::<T>` is a sizeable generic function;
/// instantiated for the input and output type of every skill, it was a tenth of
/// the code a skills crate compiles. The root is therefore generated through one
/// non-generic stand-in type, [`Root`], whose `JsonSchema` methods forward to the
/// pointers of the type being generated. Everything below the root goes through
/// the type's own derived impl, exactly as before.
struct RootFns {
    name: fn() -> Cow<'static, str>,
    id: fn() -> Cow<'static, str>,
    inline: fn() -> bool,
    json_schema: fn(&mut SchemaGenerator) -> Schema,
}

impl RootFns {
    fn of<T: JsonSchema>() -> &'static RootFns {
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

/// A compiled schema.
pub struct CompiledSchema {
    validator: jsonschema::Validator,
    implied: bool,
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
        jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(schema)
            .map(|validator| CompiledSchema {
                validator,
                implied: implied_by_type(schema),
            })
            .map_err(|e| e.to_string())
    }

    /// Whether every value of the Rust type the schema was generated from,
    /// serialized, satisfies it: the schema says nothing the type does not
    /// (see [`implied_by_type`]). A typed call does not check what its types
    /// already guarantee.
    pub fn implied_by_type(&self) -> bool {
        self.implied
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

    use super::{implied_by_type, output_schema_for};

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
}
