//! Decoding a skill's input from its JSON params, with as little generic code per
//! skill as serde allows.
//!
//! `S::Input::deserialize(&Value)` would instantiate, for every skill, serde_json's
//! whole struct path for the input's visitor: the object form and the array form
//! (`visit_seq`, which the input schema rules out before decoding starts), and
//! serde_json's general map-key deserializer. [`Params`] takes structs the short
//! way: objects only, keys handed over as borrowed strings. Everything else is
//! forwarded to serde_json unchanged. In the compile-time benchmark
//! (`bench/compile-time.py`), decoding was the largest piece of a skill's glue.
//!
//! Params that came as JSON text are read, when they are an object, as its
//! list of fields ([`fields`], [`Params::Fields`]): no map is built (no
//! node, no key copied unless it has escapes), and the record keeps the text
//! rather than a tree. Each field's value is a `Value` decoded as above, so
//! no deserializer of the input's types is compiled for text: the same
//! visitor, and the same functions per field type, serve both sources. An
//! input that is not a struct is refused by the field list
//! ([`needs_value`]), and the runtime decodes it from the whole value.

use std::borrow::Cow;
use std::fmt;

use serde::Deserializer;
use serde::de::{DeserializeSeed, Error as _, MapAccess, Unexpected, Visitor};
use serde_json::{Error, Value};

/// A skill's params, as a deserializer of its input.
#[derive(Clone, Copy)]
pub(crate) enum Params<'de> {
    /// A parsed value.
    Value(&'de Value),
    /// The fields of an object read from text, without the map
    /// ([`fields`]).
    Fields(&'de [Field<'de>]),
}

/// One field of an object: its name and its value.
pub(crate) type Field<'de> = (Cow<'de, str>, Value);

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Error> {
            match self {
                Params::Value(value) => value.$method($($arg,)* visitor),
                Params::Fields(_) => Err(needs_value()),
            }
        }
    )*};
}

/// What the text source answers an input that is not a struct: the runtime
/// then decodes it from the parsed value. Not generic: compiled once.
#[inline(never)]
pub(crate) fn needs_value() -> Error {
    Error::custom(NEEDS_VALUE)
}

/// [`needs_value`]'s message, by which the runtime knows the answer.
pub(crate) const NEEDS_VALUE: &str = "only a struct is decoded from the fields' text";

/// The fields of `text`, one JSON object, in the order written: each name
/// (borrowed from the text unless it has escapes) and its value. One parse,
/// with no map built; an error when `text` is not one JSON object.
pub(crate) fn fields(text: &str) -> Result<Vec<Field<'_>>, Error> {
    struct Entries;

    impl<'de> Visitor<'de> for Entries {
        type Value = Vec<Field<'de>>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(8);
            while let Some(Name(name)) = map.next_key()? {
                out.push((name, map.next_value()?));
            }
            Ok(out)
        }
    }

    let mut de = serde_json::Deserializer::from_str(text);
    let fields = de.deserialize_map(Entries)?;
    de.end()?;
    Ok(fields)
}

/// A field's name, borrowed from the text unless it has escapes.
struct Name<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;

        impl<'de> Visitor<'de> for Visit {
            type Value = Name<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }

            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(s)))
            }

            fn visit_str<E>(self, s: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(s.to_owned())))
            }
        }

        d.deserialize_str(Visit)
    }
}

impl<'de> Deserializer<'de> for Params<'de> {
    type Error = Error;

    /// An object goes straight to the visitor's `visit_map`; anything else is
    /// the wrong type (serde_json would also accept an array, which no input
    /// schema of a struct lets through). Instantiated once per input type, so
    /// it is kept to one non-generic call and the visitor's: no `?`, no
    /// combinator, no value of the input type held across a call. (serde_json
    /// also errs when a visitor stops before the object's last field; derived
    /// visitors never do, and the input schema has checked the fields already.)
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        // No call before the visitor is handed over: this function is compiled
        // once per input type, and a call while the visitor is live would add
        // an unwinding path to it. A value that is not an object is refused at
        // the first key, which every derived visitor asks for.
        visitor.visit_map(Fields {
            source: Source::Unread(self),
            value: None,
        })
    }

    forward! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
        deserialize_ignored_any();
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

/// An object's fields, for a struct's `visit_map`.
struct Fields<'de> {
    source: Source<'de>,
    /// The value of the field whose name was handed out last.
    value: Option<&'de Value>,
}

/// Where the fields come from.
enum Source<'de> {
    /// The params, looked at when the first key is asked for.
    Unread(Params<'de>),
    Object(serde_json::map::Iter<'de>),
    Fields(std::slice::Iter<'de, Field<'de>>),
}

impl<'de> Fields<'de> {
    /// The next field's name, its value kept for `next_value_seed`.
    fn advance(&mut self) -> Result<Option<&'de str>, Error> {
        let (name, value) = match &mut self.source {
            Source::Object(iter) => match iter.next() {
                Some((name, value)) => (name.as_str(), value),
                None => return Ok(None),
            },
            Source::Fields(iter) => match iter.next() {
                Some((name, value)) => (name.as_ref(), value),
                None => return Ok(None),
            },
            // The first key: the entries are looked up once.
            Source::Unread(params) => {
                self.source = match *params {
                    Params::Value(Value::Object(map)) => Source::Object(map.iter()),
                    Params::Value(other) => {
                        return Err(Error::invalid_type(unexpected(other), &"a JSON object"));
                    }
                    Params::Fields(fields) => Source::Fields(fields.iter()),
                };
                return self.advance();
            }
        };
        self.value = Some(value);
        Ok(Some(name))
    }
}

impl<'de> MapAccess<'de> for Fields<'de> {
    type Error = Error;

    // Derived visitors ask for keys by type, not by seed: with no seed live
    // across the call for the key, this per-input-type function has no
    // unwinding path (`next_key_seed`'s default would).
    fn next_key<K: serde::Deserialize<'de>>(&mut self) -> Result<Option<K>, Error> {
        match self.advance() {
            Ok(Some(key)) => match K::deserialize(Key(key)) {
                Ok(key) => Ok(Some(key)),
                Err(e) => Err(e),
            },
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.advance() {
            Ok(Some(key)) => seed.deserialize(Key(key)).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(value),
            None => Err(Error::custom(
                "a field's value was asked for before its key",
            )),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        match &self.source {
            Source::Object(iter) => Some(iter.len()),
            Source::Fields(iter) => Some(iter.len()),
            Source::Unread(_) => None,
        }
    }
}

/// A field name: a struct's field identifier reads it as a borrowed string.
struct Key<'de>(&'de str);

impl<'de> Deserializer<'de> for Key<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    // What a derived field identifier asks for, once per input type: straight
    // to its `visit_str` (the default `visit_borrowed_str` would be one more
    // function per input type, and so would forwarding to `deserialize_any`).
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_str(self.0)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum ignored_any
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Query {
        text: String,
        #[serde(default)]
        limit: u32,
        tags: Vec<String>,
        nested: Option<Inner>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        on: bool,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Tagged {
        Add { n: i64 },
        Reset,
    }

    fn both<T: for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug>(
        v: &Value,
    ) -> Result<T, String> {
        let ours = T::deserialize(Params::Value(v)).map_err(|e| e.to_string());
        let serde_json = T::deserialize(v).map_err(|e| e.to_string());
        // From the text, a struct decodes as from the value; anything else
        // is left to the value.
        let text = v.to_string();
        if let Ok(fields) = fields(&text) {
            match (T::deserialize(Params::Fields(&fields)), &serde_json) {
                (Ok(a), Ok(b)) => assert_eq!(&a, b, "{text}"),
                (Err(_), _) => {}
                (Ok(a), Err(e)) => panic!("{text}: from text {a:?}, serde_json {e}"),
            }
        }
        match (&ours, &serde_json) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(_), Err(_)) => {}
            _ => panic!("{v}: ours {ours:?}, serde_json {serde_json:?}"),
        }
        ours
    }

    #[test]
    fn structs_decode_as_serde_json_decodes_them() {
        let q: Query =
            both(&json!({"text": "a", "tags": ["x"], "extra": 1, "nested": {"on": true}})).unwrap();
        assert_eq!(
            (q.text.as_str(), q.limit, q.nested),
            ("a", 0, Some(Inner { on: true }))
        );
        for bad in [
            json!({"tags": []}),
            json!({"text": 1, "tags": []}),
            json!({"text": "a", "tags": [], "nested": {"on": true, "off": false}}),
            json!("text"),
            json!(null),
        ] {
            both::<Query>(&bad).unwrap_err();
        }
    }

    #[test]
    fn structs_decode_from_their_fields() {
        let text = r#"{"te\u0078t": "a\"b", "tags": ["x", "y"], "extra": {"deep": [1]}, "nested": {"on": false}}"#;
        let split = fields(text).unwrap();
        assert!(matches!(&split[0].0, Cow::Owned(name) if name == "text"));
        assert!(matches!(split[1].0, Cow::Borrowed("tags")));
        assert_eq!(split[2].1, json!({"deep": [1]}));
        let q = Query::deserialize(Params::Fields(&split)).unwrap();
        assert_eq!(q, serde_json::from_str::<Query>(text).unwrap());
        // A field named twice is the derived visitor's error.
        let twice = fields(r#"{"text": "a", "text": "b", "tags": []}"#).unwrap();
        assert!(Query::deserialize(Params::Fields(&twice)).is_err());
        // Not one object of JSON.
        for bad in [
            "[1]",
            "3",
            r#"{"a": }"#,
            r#"{"a": 1} x"#,
            r#"{"a": 1x}"#,
            "{\"a\tb\": 1}",
            "",
        ] {
            assert!(fields(bad).is_err(), "{bad}");
        }
        // What is not a struct is left to the whole value.
        let m = fields(r#"{"7": true}"#).unwrap();
        let e = BTreeMap::<u32, bool>::deserialize(Params::Fields(&m)).unwrap_err();
        assert_eq!(e.to_string(), needs_value().to_string());
    }

    #[test]
    fn the_array_form_of_a_struct_is_refused() {
        // serde_json would accept it; an input schema of a struct never does.
        // (The message does not name the struct: that would compile a
        // formatting function per input type, for an error the input schema
        // answers before decoding starts.)
        let e = Inner::deserialize(Params::Value(&json!([true]))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid type: sequence, expected a JSON object"
        );
    }

    #[test]
    fn other_shapes_are_serde_jsons() {
        let t: Tagged = both(&json!({"kind": "add", "n": -3})).unwrap();
        assert_eq!(t, Tagged::Add { n: -3 });
        assert_eq!(
            both::<Tagged>(&json!({"kind": "reset"})).unwrap(),
            Tagged::Reset
        );
        let m: BTreeMap<u32, bool> = both(&json!({"7": true})).unwrap();
        assert!(m[&7]);
        assert_eq!(both::<Option<u8>>(&json!(null)).unwrap(), None);
    }
}
