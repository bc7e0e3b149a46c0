//! A struct's fields handed to its derived visitor in declaration order, as
//! the sequence form of the struct (`visit_seq`), instead of as a map.
//!
//! A derived visitor's map form (`visit_map`) needs, for every input type,
//! a loop that reads each key through the type's field identifier (three
//! more functions per type: the identifier's `deserialize`, the
//! deserializer's `deserialize_identifier`, its visitor's `visit_str`) and
//! checks each field for a duplicate. Its sequence form is straight-line
//! code: one `next_element` per field, in order. serde hands the struct's
//! field names to `deserialize_struct` (`fields`), so the fields can be
//! looked up by name here, by code compiled once, and passed in order. In
//! the compile-time benchmark that is about a seventh of what a skill costs
//! the compiler over a plain function (docs/performance.md).
//!
//! What the map form does that the sequence form does not is done here,
//! with the same outcome and the same messages:
//! - **A missing field** the visitor's own way: a field with a default (its
//!   own or the struct's) takes it when the sequence says there is no
//!   element; a field without one gets serde's missing-field deserializer
//!   ([`Missing`]: `None` for an `Option`, "missing field" otherwise).
//!   Which fields have no default is learned per skill ([`Shape`]): the
//!   first time such a field is absent, the visitor answers "invalid length
//!   k", and the decode is run again with field k marked.
//! - **Unknown fields** are ignored, or refused ("unknown field") when the
//!   input schema has `additionalProperties: false`, which schemars writes
//!   for `#[serde(deny_unknown_fields)]`.
//! - **A field named twice** in params text is refused ("duplicate field").
//!
//! Two shapes cannot be decoded this way, and the registry refuses them when
//! it is built, with the reason ([`Shape::learn`]): field names the input
//! schema does not list (a `#[serde(alias)]`: serde lists aliases among the
//! field names, and they cannot be told apart from fields), and a hand-written
//! `Deserialize` that takes no sequence.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Deserializer;
use serde::de::{DeserializeSeed, Error as _, SeqAccess, Unexpected, Visitor};
use serde_json::{Error, Value};

use crate::contract::field::{Field, Found};

/// A skill's params, as a deserializer of its input: where they come from,
/// and the record of one decode ([`Seen`]).
#[derive(Clone, Copy)]
pub(crate) struct Params<'de> {
    pub(crate) input: Input<'de>,
    pub(crate) seen: &'de Seen<'de>,
}

/// Where a skill's params come from.
#[derive(Clone, Copy)]
pub(crate) enum Input<'de> {
    /// A parsed value.
    Value(&'de Value),
    /// The fields of an object read from text, without the map
    /// ([`fields`](crate::contract::field::fields)).
    Fields(&'de [Field<'de>]),
    /// None: the registry learning the input type's fields
    /// ([`Shape::learn`]).
    Probe,
}

/// What the runtime knows of a skill's input type as a struct: its field
/// names in order, which fields have no default (learned), and whether
/// unknown fields are refused.
#[derive(Debug, Default)]
pub(crate) struct Shape {
    names: &'static [&'static str],
    /// Per field: its absence is an error of its own (no default), as
    /// learned from the visitor ([`decode`]).
    no_default: Box<[AtomicBool]>,
    denies_unknown: bool,
}

impl Shape {
    /// The shape of the input type `decode` decodes, against its input
    /// schema: probed once, without params (each field absent). `Err` with
    /// the reason when the type cannot be decoded in order.
    pub(crate) fn learn<R>(
        schema: &Value,
        mut decode: impl FnMut(Params<'_>) -> Result<R, Error>,
    ) -> Result<Shape, String> {
        let none = Shape::default();
        let seen = Seen::new(&none);
        let probed = decode(Params {
            input: Input::Probe,
            seen: &seen,
        })
        .map(drop);
        // Not a struct: decoded from the whole value, as serde_json does.
        let Some(names) = seen.names.get() else {
            return Ok(none);
        };
        if let (Err(e), false, false) = (probed, seen.asked.get(), names.is_empty()) {
            return Err(format!(
                "its input type's `Deserialize` does not take a struct's fields in order (`visit_seq`): {e}; derive `Deserialize`"
            ));
        }
        let listed = schema.get("properties").and_then(Value::as_object);
        let hidden: Vec<String> = names
            .iter()
            .filter(|n| !listed.is_some_and(|p| p.contains_key(**n)))
            .map(|n| format!("`{n}`"))
            .collect();
        if !hidden.is_empty() {
            return Err(format!(
                "its input type accepts field names its input schema does not list ({}): a `#[serde(alias)]`, or a field the schema skips; a skill's input is what its schema says, so remove the alias (or skip the field in both)",
                hidden.join(", ")
            ));
        }
        Ok(Shape {
            names,
            no_default: names.iter().map(|_| AtomicBool::new(false)).collect(),
            denies_unknown: schema.get("additionalProperties") == Some(&Value::Bool(false)),
        })
    }
}

/// One decode's record of what the visitor asked for.
pub(crate) struct Seen<'a> {
    shape: &'a Shape,
    /// The field names `deserialize_struct` was given: set when the input
    /// type is a struct.
    names: Cell<Option<&'static [&'static str]>>,
    /// How many of the fields were found in the params.
    found: Cell<usize>,
    /// The field just answered with "no element", while the visitor has not
    /// asked for the next.
    none_at: Cell<Option<usize>>,
    /// Whether the visitor asked for any element.
    asked: Cell<bool>,
}

impl<'a> Seen<'a> {
    fn new(shape: &'a Shape) -> Seen<'a> {
        Seen {
            shape,
            names: Cell::new(None),
            found: Cell::new(0),
            none_at: Cell::new(None),
            asked: Cell::new(false),
        }
    }

    /// Whether `e` is the visitor's answer to field k's absence when k has
    /// no default and that was not known yet: it is marked, and the decode
    /// can run again.
    fn learned_from(&self, e: &Error) -> bool {
        let (Some(k), Some(names)) = (self.none_at.get(), self.names.get()) else {
            return false;
        };
        let Some(slot) = self.shape.no_default.get(k) else {
            return false;
        };
        if names != self.shape.names
            || slot.load(Ordering::Relaxed)
            || !e.to_string().starts_with(&format!("invalid length {k}, "))
        {
            return false;
        }
        slot.store(true, Ordering::Relaxed);
        true
    }

    /// After a struct decoded: the params were an object, and its other
    /// keys are neither refused unknown fields nor a field named twice.
    fn check(&self, input: Input<'_>) -> Result<(), Error> {
        let Some(names) = self.names.get() else {
            return Ok(());
        };
        let known = |key: &str| names.iter().find(|n| **n == key);
        let denied = |key: &str| match self.shape.denies_unknown {
            true => Err(Error::unknown_field(key, names)),
            false => Ok(()),
        };
        match input {
            Input::Value(Value::Object(map))
                if self.shape.denies_unknown && map.len() > self.found.get() =>
            {
                if let Some(key) = map.keys().find(|key| known(key).is_none()) {
                    return Err(Error::unknown_field(key, names));
                }
            }
            Input::Value(Value::Object(_)) | Input::Probe => {}
            Input::Value(other) => return Err(not_object(other)),
            Input::Fields(fields) if fields.len() > self.found.get() => {
                for (i, Field { name: key, .. }) in fields.iter().enumerate() {
                    match known(key) {
                        Some(name) if fields[..i].iter().any(|f| f.name == *key) => {
                            return Err(Error::duplicate_field(name));
                        }
                        Some(_) => {}
                        None => denied(key)?,
                    }
                }
            }
            Input::Fields(_) => {}
        }
        Ok(())
    }
}

/// Decode with `decode` (a skill's typed decoder) from `input`, learning
/// into `shape` which fields have no default: at most one more run per
/// field, the first time each is found absent.
pub(crate) fn decode<R>(
    shape: &Shape,
    input: Input<'_>,
    mut decode: impl FnMut(Params<'_>) -> Result<R, Error>,
) -> Result<R, Error> {
    loop {
        let seen = Seen::new(shape);
        match decode(Params { input, seen: &seen }) {
            Ok(decoded) => {
                seen.check(input)?;
                return Ok(decoded);
            }
            Err(e) if seen.learned_from(&e) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Not generic: what a struct's params that are not an object get.
#[inline(never)]
fn not_object(value: &Value) -> Error {
    Error::invalid_type(unexpected(value), &"a JSON object")
}

/// A struct's fields, in the order of its field names, as a sequence.
pub(crate) struct Ordered<'de> {
    params: Params<'de>,
    names: &'static [&'static str],
    /// The next field's position.
    at: usize,
    /// Where to look first for the next field in params text (fields
    /// usually come in order).
    hint: usize,
    /// The same in a parsed object: its keys not yet looked at.
    keys: Option<serde_json::map::Iter<'de>>,
}

/// What the next field is.
enum Next<'de> {
    Found(Found<'de>),
    /// Absent, and without a default.
    Missing(&'static str),
    /// Absent: the visitor's default, if it has one.
    Absent,
    NotObject(&'de Value),
}

impl<'de> Ordered<'de> {
    /// Not generic: `deserialize_struct`, compiled per input type, calls
    /// only this and the visitor.
    #[inline(never)]
    pub(crate) fn new(params: Params<'de>, names: &'static [&'static str]) -> Ordered<'de> {
        let seen = params.seen;
        seen.names.set(Some(names));
        Ordered {
            params,
            names,
            at: 0,
            hint: 0,
            keys: match params.input {
                Input::Value(Value::Object(map)) => Some(map.iter()),
                _ => None,
            },
        }
    }

    fn advance(&mut self) -> Next<'de> {
        let seen = self.params.seen;
        let k = self.at;
        self.at += 1;
        seen.asked.set(true);
        seen.none_at.set(None);
        let Some(&name) = self.names.get(k) else {
            return Next::Absent;
        };
        let found = match self.params.input {
            Input::Value(Value::Object(map)) => {
                // The next key (fields declared in the keys' order follow
                // each other), else a lookup.
                match self.keys.as_mut().and_then(Iterator::next) {
                    Some((key, value)) if key == name => Some(Found::Value(value)),
                    _ => map.get(name).map(Found::Value),
                }
            }
            Input::Value(other) => return Next::NotObject(other),
            Input::Fields(fields) => {
                // Where the last one was found, one on; then from the start.
                let at = match fields.get(self.hint) {
                    Some(f) if f.name == name => Some(self.hint),
                    _ => fields.iter().position(|f| f.name == name),
                };
                at.map(|i| {
                    self.hint = i + 1;
                    fields[i].found()
                })
            }
            Input::Probe => None,
        };
        match found {
            Some(value) => {
                seen.found.set(seen.found.get() + 1);
                Next::Found(value)
            }
            // What was learnt applies to the names it was learnt for (the
            // same static slice, as a rule: compared by address first).
            None if (std::ptr::eq(seen.shape.names, self.names)
                || seen.shape.names == self.names)
                && seen.shape.no_default[k].load(Ordering::Relaxed) =>
            {
                Next::Missing(name)
            }
            None => {
                seen.none_at.set(Some(k));
                Next::Absent
            }
        }
    }
}

impl<'de> SeqAccess<'de> for Ordered<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.advance() {
            Next::Found(value) => match seed.deserialize(value) {
                Ok(v) => Ok(Some(v)),
                Err(e) => Err(e),
            },
            Next::Missing(name) => match seed.deserialize(Missing(name)) {
                Ok(v) => Ok(Some(v)),
                Err(e) => Err(e),
            },
            Next::Absent => Ok(None),
            Next::NotObject(value) => Err(not_object(value)),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.names.len().saturating_sub(self.at))
    }
}

/// An absent field without a default, as serde's map form sees it: `None`
/// for an `Option`, "missing field" for anything else.
struct Missing(&'static str);

/// Not generic: the missing-field error.
#[inline(never)]
fn missing(name: &'static str) -> Error {
    Error::missing_field(name)
}

impl<'de> Deserializer<'de> for Missing {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Error> {
        Err(missing(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// Not generic: what serde's type errors name.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (_, Some(i), _) => Unexpected::Signed(i),
            (_, _, Some(f)) => Unexpected::Float(f),
            _ => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}
