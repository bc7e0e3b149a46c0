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
            .map(|validator| CompiledSchema { validator })
            .map_err(|e| e.to_string())
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

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledSchema")
    }
}
