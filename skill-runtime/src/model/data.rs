//! A job's output as JSON: written once as text by the skill's serializer, parsed
//! into a value only for a reader that needs one.

use std::cell::Cell;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::spare::{ArcSlot, arc_block, let_go_arc, room};

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

thread_local! {
    /// The thread's spare block for an output (see [`Data::let_go`]).
    static SPARE: ArcSlot<Held> = const { Cell::new(None) };
}

/// What a `Data` was made from, and the other form once made. The form it
/// was made from is held as it is, not in a `OnceLock`: reading an
/// initialized `OnceLock` goes through its `Once`, which every job would
/// pay to read its own output.
enum Held {
    /// As written: not shrunk to fit, which would copy it.
    Text {
        text: String,
        value: OnceLock<Value>,
    },
    /// Short text ([`Written::ROOM`] bytes at most), held in this block: a
    /// small skill's output costs one allocation, not two.
    Short {
        len: u8,
        bytes: [u8; Written::ROOM],
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

    /// What `serde_json` wrote into `out`: one JSON value.
    pub(crate) fn from_written(out: Written) -> Data {
        match out.spilled {
            None => {
                // Written into the thread's spare block, if it has one
                // (`crate::spare`).
                let mut block = arc_block(&SPARE);
                room(&mut block).write(Held::Short {
                    len: out.len,
                    bytes: out.room,
                    value: OnceLock::new(),
                });
                // SAFETY: written just above.
                Data(unsafe { block.assume_init() })
            }
            Some(text) => Data::written(spilled_text(text)),
        }
    }

    /// Let this go: its block becomes the thread's spare for the next output
    /// made on it, if nothing else holds it (`crate::spare`).
    #[inline]
    pub(crate) fn let_go(self) {
        let_go_arc(&SPARE, self.0);
    }

    /// The output as a value (parsed from its text the first time).
    pub fn value(&self) -> &Value {
        match &*self.0 {
            Held::Text { value, .. } | Held::Short { value, .. } => {
                value.get_or_init(|| parse_written(self.text()))
            }
            Held::Value { value, .. } => value,
        }
    }

    /// The output as compact JSON text (written from its value the first time).
    pub fn text(&self) -> &str {
        match &*self.0 {
            Held::Text { text, .. } => text,
            Held::Short { len, bytes, .. } => short(bytes, *len),
            Held::Value { value, text } => text.get_or_init(|| write_value(value)),
        }
    }

    /// The output as an owned value: parsed afresh from the text when no value
    /// is kept (nothing is cached, nothing cloned), else a copy of the value.
    pub fn to_value(&self) -> Value {
        match &*self.0 {
            Held::Text { value, .. } | Held::Short { value, .. } => match value.get() {
                Some(v) => v.clone(),
                None => parse_written(self.text()),
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
            Ok(Held::Short { len, bytes, value }) => value
                .into_inner()
                .unwrap_or_else(|| parse_written(short(&bytes, len))),
            Ok(Held::Value { value, .. }) => value,
            Err(shared) => Data(shared).to_value(),
        }
    }

    /// The text, when the output is held as text: its length is then the
    /// output's size, with no walk.
    pub(crate) fn held_text(&self) -> Option<&str> {
        match &*self.0 {
            Held::Text { text, .. } => Some(text),
            Held::Short { len, bytes, .. } => Some(short(bytes, *len)),
            Held::Value { text, .. } => text.get().map(|t| &**t),
        }
    }
}

/// `value` as compact JSON text, written through [`Written`] as outputs are:
/// compiled here, `serde_json`'s writer for it is reused by crates of skills
/// (an unoptimized build shares the instantiations of the crates it uses)
/// rather than compiled again in each.
fn write_value(value: &Value) -> String {
    let mut out = Written::new();
    // (A `Value` always serializes: its keys are strings, and `Written`
    // takes every write.)
    let _ = serde::Serialize::serialize(value, &mut serde_json::Serializer::new(&mut out));
    match out.spilled {
        Some(text) => spilled_text(text),
        None => short(&out.room, out.len).to_owned(),
    }
}

/// The text `serde_json` wrote into a `Written` past its room.
fn spilled_text(text: Vec<u8>) -> String {
    // SAFETY: `serde_json` writes UTF-8 (strings as they were, with ASCII
    // escapes), and `Written` keeps every byte in order.
    unsafe { String::from_utf8_unchecked(text) }
}

/// The text of a [`Held::Short`]. Not checked again as UTF-8 on every read
/// (that was more than the rest of a read).
#[inline]
fn short(bytes: &[u8; Written::ROOM], len: u8) -> &str {
    // SAFETY: called only on what `serde_json` wrote into a `Written` (a
    // `Held::Short`, which only `Data::from_written` makes, or `write_value`'s
    // own): UTF-8 (strings as they were, with ASCII escapes), in its first
    // `len` bytes, never past `ROOM` (`Written::write_all`).
    unsafe { std::str::from_utf8_unchecked(bytes.get_unchecked(..usize::from(len))) }
}

/// Where a skill's serializer writes its output: into a few bytes of its
/// own while the text is short, into a heap buffer from the first write
/// that would not fit (the text so far moved there). One type for every
/// output, so a skill compiles one serializer, as it did for a `Vec`.
pub(crate) struct Written {
    len: u8,
    room: [u8; Written::ROOM],
    spilled: Option<Vec<u8>>,
}

impl Written {
    /// The longest text held in the output's own block.
    pub(crate) const ROOM: usize = 96;

    pub(crate) fn new() -> Written {
        Written {
            len: 0,
            room: [0; Written::ROOM],
            spilled: None,
        }
    }

    /// The text written so far, spilled to the heap, with `more` to come.
    #[cold]
    fn spill(&mut self, more: &[u8]) {
        let held = &self.room[..usize::from(self.len)];
        let mut text = Vec::with_capacity((held.len() + more.len()).max(256));
        text.extend_from_slice(held);
        text.extend_from_slice(more);
        self.spilled = Some(text);
    }
}

impl std::io::Write for Written {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        let at = usize::from(self.len);
        match &mut self.spilled {
            Some(text) => text.extend_from_slice(buf),
            None => match self.room.get_mut(at..at + buf.len()) {
                Some(room) => {
                    room.copy_from_slice(buf);
                    // At most `ROOM` (< 256): the slice was within it.
                    self.len = (at + buf.len()) as u8;
                }
                None => self.spill(buf),
            },
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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

    /// Output text is held in the output's block up to its room, on the heap
    /// past it, and reads the same either way.
    #[test]
    fn short_and_long_outputs_read_back_as_written() {
        use std::io::Write;
        for n in [0, 1, 40, 80, 200] {
            let value = json!({"label": "é".repeat(n), "n": n});
            let mut out = Written::new();
            serde_json::to_writer(&mut out, &value).unwrap();
            let short = out.spilled.is_none();
            let data = Data::from_written(out);
            assert_eq!(short, value.to_string().len() <= Written::ROOM, "{n}");
            assert_eq!(data.text(), value.to_string());
            assert_eq!(data.held_text(), Some(&*value.to_string()));
            assert_eq!(*data.value(), value);
            assert_eq!(data.to_value(), value);
            assert_eq!(data.into_value(), value);
        }
        // Written piece by piece across the room's end.
        let mut out = Written::new();
        for _ in 0..50 {
            out.write_all(b"[1,").unwrap();
        }
        assert_eq!(out.spilled.as_ref().map(Vec::len), Some(150));
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
