//! JSON Schemas of skill inputs and outputs: generated from the Rust types with
//! `schemars` (draft 2020-12, one self-contained schema per skill side), compiled
//! once with `jsonschema`, and reused for every call.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The schema of what a caller may send as `T`, self-contained: its own `$defs`,
/// no references outside it. Fields with defaults are optional.
pub fn input_schema_for<T: JsonSchema>() -> Value {
    let schema: Schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>();
    schema.to_value()
}

/// The schema of what serializing `T` produces: every field that is always
/// written is required, so consumers can rely on it.
pub fn output_schema_for<T: JsonSchema>() -> Value {
    let schema: Schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    schema.to_value()
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
