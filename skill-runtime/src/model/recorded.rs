//! A JSON value as a run record keeps it: parsed, or as the text it came in.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// A JSON value as a run record keeps it: a parsed value, or, for params
/// that came as JSON text and that the job never needed parsed, that text
/// (no tree is built or freed for them unless the record is read or
/// written). Either way it serializes as the JSON value it is, and reads as
/// a [`Value`].
#[derive(Clone, Debug)]
pub struct RecordedValue(Recorded);

#[derive(Clone, Debug)]
enum Recorded {
    Value(Value),
    /// One JSON value, checked when the job read it.
    Text(String),
}

impl RecordedValue {
    /// Text the runtime read as one JSON value.
    pub(crate) fn text(text: String) -> RecordedValue {
        RecordedValue(Recorded::Text(text))
    }

    /// The text, taken out (its buffer to be used again), when it is kept as
    /// text; `null` left in its place.
    pub(crate) fn take_text(&mut self) -> Option<String> {
        match &mut self.0 {
            Recorded::Text(t) => {
                let text = std::mem::take(t);
                self.0 = Recorded::Value(Value::Null);
                Some(text)
            }
            Recorded::Value(_) => None,
        }
    }

    /// The value (parsed, when it is kept as text).
    pub fn to_value(&self) -> Cow<'_, Value> {
        match &self.0 {
            Recorded::Value(v) => Cow::Borrowed(v),
            Recorded::Text(t) => Cow::Owned(serde_json::from_str(t).unwrap_or(Value::Null)),
        }
    }

    /// The value, when it is kept parsed.
    pub fn as_value(&self) -> Option<&Value> {
        match &self.0 {
            Recorded::Value(v) => Some(v),
            Recorded::Text(_) => None,
        }
    }
}

impl From<Value> for RecordedValue {
    fn from(v: Value) -> RecordedValue {
        RecordedValue(Recorded::Value(v))
    }
}

impl PartialEq<Value> for RecordedValue {
    fn eq(&self, other: &Value) -> bool {
        *self.to_value() == *other
    }
}

impl PartialEq for RecordedValue {
    fn eq(&self, other: &RecordedValue) -> bool {
        self.to_value() == other.to_value()
    }
}

/// The value as compact JSON text.
impl fmt::Display for RecordedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Recorded::Value(v) => write!(f, "{v}"),
            Recorded::Text(t) => f.write_str(t),
        }
    }
}

/// Text is written out as the value it holds, parsed then: serde_json's
/// `raw_value`, which could copy it as it is, would make every struct
/// serialized into a `Value` compile a second path per field type, in every
/// crate of skills.
impl Serialize for RecordedValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Recorded::Value(v) => v.serialize(s),
            Recorded::Text(t) => match serde_json::from_str::<Value>(t) {
                Ok(v) => v.serialize(s),
                Err(e) => Err(serde::ser::Error::custom(e)),
            },
        }
    }
}

impl<'de> Deserialize<'de> for RecordedValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(RecordedValue::from)
    }
}
