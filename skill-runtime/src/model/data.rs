//! A job's output as JSON: written once as text by the skill's serializer, parsed
//! into a value only for a reader that needs one.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// A job's output: JSON held as its text, as a [`Value`], or both, each made
/// from the other the first time it is asked for and then kept. Clones share
/// it (the run record holds the same output as the result).
///
/// A skill's output is written straight to text, which is what a caller over
/// MCP, HTTP or a queue receives: no tree is built, walked or freed for it
/// unless something reads it as a value ([`Data::value`], or through `Deref`,
/// e.g. `result.data["sum"]`).
#[derive(Clone)]
pub struct Data(Arc<Held>);

/// What a `Data` was made from, and the other form once made. The form it
/// was made from is held as it is: an initialized `OnceLock` costs a pass
/// through its `Once` (about 90 instructions, on every job).
enum Held {
    /// As written: not shrunk to fit, which would copy it.
    Text {
        text: String,
        value: OnceLock<Value>,
    },
    /// A value made otherwise than by a skill's serializer (a pipeline's
    /// output, a redacted copy for the record, a result read back).
    Value {
        value: Value,
        text: OnceLock<String>,
    },
}

impl Data {
    /// Text that `serde_json` wrote: one JSON value.
    pub(crate) fn written(text: String) -> Data {
        Data(Arc::new(Held::Text {
            text,
            value: OnceLock::new(),
        }))
    }

    /// The output as a value (parsed from its text the first time).
    pub fn value(&self) -> &Value {
        match &*self.0 {
            Held::Text { text, value } => value.get_or_init(|| parse_written(text)),
            Held::Value { value, .. } => value,
        }
    }

    /// The output as compact JSON text (written from its value the first time).
    pub fn text(&self) -> &str {
        match &*self.0 {
            Held::Text { text, .. } => text,
            Held::Value { value, text } => text.get_or_init(|| value.to_string()),
        }
    }

    /// The output as an owned value: parsed afresh from the text when no value
    /// is kept (nothing is cached, nothing cloned), else a copy of the value.
    pub fn to_value(&self) -> Value {
        match &*self.0 {
            Held::Text { text, value } => match value.get() {
                Some(v) => v.clone(),
                None => parse_written(text),
            },
            Held::Value { value, .. } => value.clone(),
        }
    }

    /// The output as an owned value, taken without a copy when this is the
    /// last holder.
    pub fn into_value(self) -> Value {
        match Arc::try_unwrap(self.0) {
            Ok(Held::Text { text, value }) => {
                value.into_inner().unwrap_or_else(|| parse_written(&text))
            }
            Ok(Held::Value { value, .. }) => value,
            Err(shared) => Data(shared).to_value(),
        }
    }

    /// The text, when the output is held as text: its length is then the
    /// output's size, with no walk.
    pub(crate) fn held_text(&self) -> Option<&str> {
        match &*self.0 {
            Held::Text { text, .. } => Some(text),
            Held::Value { text, .. } => text.get().map(|t| &**t),
        }
    }
}

/// Parses text that `serde_json` wrote from a Rust value. It is one JSON value
/// by construction; it nests as deep as that value did, which `serde_json`'s
/// reader would refuse past 128 levels, so the limit is lifted: the writer
/// already went that deep on the same stack.
pub(crate) fn parse_written(text: &str) -> Value {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    Value::deserialize(&mut de).unwrap_or_default()
}

impl From<Value> for Data {
    fn from(value: Value) -> Data {
        Data(Arc::new(Held::Value {
            value,
            text: OnceLock::new(),
        }))
    }
}

/// The output as a value: `result.data["field"]`, `*result.data == json!(..)`.
impl Deref for Data {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl PartialEq for Data {
    fn eq(&self, other: &Data) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.value() == other.value()
    }
}

impl PartialEq<Value> for Data {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl fmt::Debug for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.value(), f)
    }
}

/// The output as compact JSON text.
impl fmt::Display for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

/// Written as the value it holds (parsed then, when held as text: see
/// [`RecordedValue`](crate::model::recorded::RecordedValue) for why not as raw
/// text).
impl Serialize for Data {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Data {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Data::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_and_value_are_made_from_each_other_and_kept() {
        let written = Data::written(r#"{"sum":42,"label":"x"}"#.to_owned());
        assert_eq!(written.held_text(), Some(r#"{"sum":42,"label":"x"}"#));
        assert_eq!(written["sum"], 42);
        assert_eq!(written, json!({"label": "x", "sum": 42}));
        let value = Data::from(json!({"b": [1, 2], "a": null}));
        assert_eq!(value.held_text(), None);
        assert_eq!(value.text(), r#"{"a":null,"b":[1,2]}"#);
        assert_eq!(value.held_text(), Some(r#"{"a":null,"b":[1,2]}"#));
        assert_eq!(
            written.clone().into_value(),
            json!({"sum": 42, "label": "x"})
        );
        assert_eq!(value.into_value(), json!({"b": [1, 2], "a": null}));
        assert_eq!(
            serde_json::to_value(&written).unwrap(),
            json!({"sum": 42, "label": "x"})
        );
    }

    #[test]
    fn text_nested_past_the_readers_limit_is_read_back() {
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        let data = Data::written(deep.clone());
        let mut v = data.value();
        for _ in 0..300 {
            v = &v[0];
        }
        assert_eq!(*v, 1);
        assert_eq!(data.to_value().to_string(), deep);
    }
}
