//! A schema compiled once with `jsonschema` and reused for every call, and the
//! violations it reports.

use serde_json::Value;

use crate::schema::formats::standard_formats_only;
use crate::schema::residual::{residual, shapes_only_at_the_top};

/// A compiled schema, and what of it a value of its Rust type can still
/// violate (see [`residual`]).
pub struct CompiledSchema {
    validator: jsonschema::Validator,
    /// `None` when the type guarantees the whole schema.
    residual: Option<jsonschema::Validator>,
    /// Whether decoding params checks every shape the schema states (see
    /// [`shapes_only_at_the_top`]).
    decoding_checks_shapes: bool,
    /// See [`CompiledSchema::residual_fields`].
    residual_fields: Option<Box<[(String, FieldCheck)]>>,
}

/// What the residual asks of one top-level field (see
/// [`CompiledSchema::residual_fields`]).
pub(crate) enum FieldCheck {
    /// Only a string's length, in characters (what `#[schemars(length(...))]`
    /// writes on a `String`): counted here, without the validator's dispatch.
    Length { min: u64, max: u64 },
    /// Anything else: the field's residual schema, compiled.
    Schema(jsonschema::Validator),
}

/// Whether `s` has from `min` to `max` characters. A string has at most as
/// many characters as bytes, and at least a quarter as many: most are told
/// without counting.
fn length_within(s: &str, min: u64, max: u64) -> bool {
    let bytes = s.len() as u64;
    if bytes <= max && bytes.div_ceil(4) >= min {
        return true;
    }
    let n = s.chars().count() as u64;
    min <= n && n <= max
}

impl FieldCheck {
    /// Whether `value` holds. Length bounds apply to strings only, as in JSON
    /// Schema (`minLength` and `maxLength` count Unicode code points).
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        match (self, value) {
            (FieldCheck::Length { min, max }, Value::String(s)) => length_within(s, *min, *max),
            (FieldCheck::Length { .. }, _) => true,
            (FieldCheck::Schema(schema), value) => schema.is_valid(value),
        }
    }

    /// Whether the string `s` holds, when the check is of a string's length
    /// only; `None` when the check needs the value.
    pub(crate) fn holds_for_str(&self, s: &str) -> Option<bool> {
        match self {
            FieldCheck::Length { min, max } => Some(length_within(s, *min, *max)),
            FieldCheck::Schema(_) => None,
        }
    }

    /// The check of a field's residual schema `own`: its length bounds when
    /// that is all it says (each absent, or a non-negative integer), else
    /// the schema compiled by `build`.
    fn of(
        own: &Value,
        build: impl Fn(&Value) -> Result<jsonschema::Validator, String>,
    ) -> Result<FieldCheck, String> {
        let lengths_only = own.as_object().is_some_and(|o| {
            !o.is_empty()
                && o.keys()
                    .all(|k| matches!(k.as_str(), "minLength" | "maxLength" | "$schema" | "$defs"))
        });
        // `Some(None)` when absent; `None` when present but not a `u64`.
        let bound = |key: &str| own.get(key).map_or(Some(None), |v| v.as_u64().map(Some));
        match (lengths_only, bound("minLength"), bound("maxLength")) {
            (true, Some(min), Some(max)) => Ok(FieldCheck::Length {
                min: min.unwrap_or(0),
                max: max.unwrap_or(u64::MAX),
            }),
            _ => Ok(FieldCheck::Schema(build(own)?)),
        }
    }
}

/// One violation of a schema, located by JSON pointer into the instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON pointer into the checked value; empty for the root.
    pub instance_path: String,
    /// JSON pointer into the schema, to the keyword that failed.
    pub schema_path: String,
    /// What is wrong there.
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
        let rest = residual(schema);
        let decoding_checks_shapes = shapes_only_at_the_top(schema);
        // The whole check is the published schema's: integer widths as
        // bounds (a number out of a field's range is refused at its path,
        // not by the decoder), exactly what a consumer of the registry
        // checks. The residual is of the generated schema, whose type
        // guarantees the widths.
        let mut published = schema.clone();
        standard_formats_only(&mut published);
        Ok(CompiledSchema {
            validator: build(&published)?,
            residual: rest.as_ref().map(build).transpose()?,
            residual_fields: match fields_of(schema, rest.as_ref(), decoding_checks_shapes) {
                Some(fields) => Some(
                    fields
                        .into_iter()
                        .map(|(name, schema)| Ok((name, FieldCheck::of(&schema, build)?)))
                        .collect::<Result<_, String>>()?,
                ),
                None => None,
            },
            decoding_checks_shapes,
        })
    }

    /// Whether every value of the Rust type the schema was generated from,
    /// serialized, satisfies it: the schema says nothing the type does not
    /// (see [`implied_by_type`](crate::schema::residual::implied_by_type)).
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

    /// The top-level fields the residual constrains, each with the
    /// residual's schema of that field compiled alone, when the residual
    /// constrains nothing else, the schema is a struct's, and decoding
    /// checks every shape: params that decoded into this type are then
    /// valid exactly when each of these fields they hold is valid against
    /// its own schema. Empty when the type guarantees the whole schema;
    /// `None` when the whole params value is needed.
    pub(crate) fn residual_fields(&self) -> Option<&[(String, FieldCheck)]> {
        self.residual_fields.as_deref()
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

    /// Whether `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }
}

/// The top-level fields `residual` constrains, each with a schema of its
/// own (the field's, with the residual's definitions and dialect), if it
/// constrains nothing but them (see [`CompiledSchema::residual_fields`]).
fn fields_of(
    schema: &Value,
    residual: Option<&Value>,
    shapes: bool,
) -> Option<Vec<(String, Value)>> {
    if !shapes || schema.get("properties").is_none_or(|p| !p.is_object()) {
        return None;
    }
    let Some(residual) = residual else {
        return Some(Vec::new());
    };
    let root = residual.as_object()?;
    if !root
        .keys()
        .all(|k| matches!(k.as_str(), "properties" | "$defs" | "$schema"))
    {
        return None;
    }
    let mut fields = Vec::new();
    for (name, field) in root.get("properties")?.as_object()? {
        let mut own = match field {
            Value::Object(own) => own.clone(),
            _ => return None,
        };
        for shared in ["$defs", "$schema"] {
            if let Some(v) = root.get(shared) {
                if own.contains_key(shared) {
                    return None;
                }
                own.insert(shared.to_owned(), v.clone());
            }
        }
        fields.push((name.clone(), Value::Object(own)));
    }
    Some(fields)
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledSchema")
    }
}
