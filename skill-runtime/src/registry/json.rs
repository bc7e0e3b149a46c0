//! Reading fields of registry values (`skill-registry.json`, `op-registry.json`,
//! `capabilities.json`) that may be absent or of the wrong type: absent reads as
//! empty, so rules and views need no error path of their own for it (the
//! published format schemas say what is required).

use std::collections::BTreeSet;

use serde_json::Value;

/// The string at `key`, or `""`.
pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The boolean at JSON pointer `pointer`, or `false`.
pub fn bool_of(v: &Value, pointer: &str) -> bool {
    v.pointer(pointer).and_then(Value::as_bool).unwrap_or(false)
}

/// The array at `key`, or an empty slice.
pub fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The strings of the array at `key`.
pub fn strings(v: &Value, key: &str) -> BTreeSet<String> {
    array(v, key)
        .iter()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

/// `name@version` of a skill or op value.
pub fn label(v: &Value) -> String {
    format!("{}@{}", str_of(v, "name"), str_of(v, "version"))
}
