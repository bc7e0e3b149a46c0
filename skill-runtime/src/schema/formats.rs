//! Published schemas carry only the formats JSON Schema defines.
//!
//! schemars names Rust number types in `format` (`uint8`, `int64`, `double`,
//! ...). Validators treat an unknown format as an annotation at best: ajv's
//! default and strict modes refuse the schema, Python's jsonschema ignores it.
//! What such a format says is a range, so an integer format becomes the
//! `minimum` and `maximum` of its width (where the schema does not already
//! bound it tighter) and the format goes; `float` and `double` go (any JSON
//! number reads as a double). The runtime keeps the generated schemas as they
//! are for its own checks; the registry files, agent files and tool views get
//! the standard form.

use serde_json::{Map, Value};

/// The formats the JSON Schema specification (2020-12) defines.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The bounds of an integer format's width, as JSON numbers (exact: `u64` and
/// `i64` bounds are written as integers, not doubles); null where the width
/// has none a JSON number states. `None` for a format that is no integer's.
pub(crate) fn width_bounds(format: &str) -> Option<(Value, Value)> {
    Some(match format {
        "uint8" => (0.into(), u8::MAX.into()),
        "uint16" => (0.into(), u16::MAX.into()),
        "uint32" => (0.into(), u32::MAX.into()),
        "uint64" => (0.into(), u64::MAX.into()),
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        // `usize`, `u128` and the like: at least non-negative.
        "uint" | "uint128" => (0.into(), Value::Null),
        "int" | "int128" => (Value::Null, Value::Null),
        _ => return None,
    })
}

/// Rewrite every non-standard `format` in `schema` as described in the module
/// documentation, at every depth.
pub fn standard_formats_only(schema: &mut Value) {
    match schema {
        Value::Object(o) => {
            // A `format` keyword has a string value; a property named `format`
            // (under `properties`) has a schema, which is walked, not rewritten.
            if let Some(format) = o.get("format").and_then(Value::as_str)
                && !STANDARD_FORMATS.contains(&format)
            {
                if let Some((min, max)) = width_bounds(format) {
                    bound(o, "minimum", min);
                    bound(o, "maximum", max);
                }
                o.remove("format");
            }
            o.values_mut().for_each(standard_formats_only);
        }
        Value::Array(items) => items.iter_mut().for_each(standard_formats_only),
        _ => {}
    }
}

/// Set `key` to `value` unless the schema states it already (schemars writes
/// tighter bounds from `#[schemars(range)]`), or `value` is null.
fn bound(o: &mut Map<String, Value>, key: &str, value: Value) {
    if !value.is_null() && !o.contains_key(key) {
        o.insert(key.to_owned(), value);
    }
}

/// [`standard_formats_only`] on a copy.
pub fn with_standard_formats(schema: &Value) -> Value {
    let mut out = schema.clone();
    standard_formats_only(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::with_standard_formats;

    #[test]
    fn integer_formats_become_their_bounds_and_others_go() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 20},
                "b": {"type": "integer", "format": "uint32", "minimum": 0},
                "c": {"type": "integer", "format": "int64"},
                "d": {"type": "number", "format": "double"},
                "e": {"type": "string", "format": "date-time"},
                "f": {"type": "integer", "format": "uint"},
                "format": {"type": "string"},
                "g": {"type": "array", "items": {"type": "integer", "format": "uint64"}},
            },
            "$defs": {"N": {"type": "integer", "format": "int8"}},
        });
        assert_eq!(
            with_standard_formats(&schema),
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "minimum": 0, "maximum": 20},
                    "b": {"type": "integer", "minimum": 0, "maximum": 4294967295_u32},
                    "c": {"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX},
                    "d": {"type": "number"},
                    "e": {"type": "string", "format": "date-time"},
                    "f": {"type": "integer", "minimum": 0},
                    "format": {"type": "string"},
                    "g": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": u64::MAX}},
                },
                "$defs": {"N": {"type": "integer", "minimum": -128, "maximum": 127}},
            })
        );
    }
}
