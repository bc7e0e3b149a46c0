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

use serde::Deserializer;
use serde::de::{DeserializeSeed, Error as _, MapAccess, Unexpected, Visitor};
use serde_json::{Error, Value};

/// A skill's params, as a deserializer of its input.
pub(crate) struct Params<'de>(pub(crate) &'de Value);

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Error> {
            self.0.$method($($arg,)* visitor)
        }
    )*};
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
            params: self.0,
            iter: None,
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
    params: &'de Value,
    /// The object's entries, from the first key on.
    iter: Option<serde_json::map::Iter<'de>>,
    value: Option<&'de Value>,
}

impl<'de> Fields<'de> {
    /// The next field's name, its value kept for `next_value_seed`; the
    /// entries are looked up at the first call.
    fn advance(&mut self) -> Result<Option<&'de str>, Error> {
        let iter = match &mut self.iter {
            Some(iter) => iter,
            None => match self.params {
                Value::Object(map) => self.iter.insert(map.iter()),
                other => return Err(Error::invalid_type(unexpected(other), &"a JSON object")),
            },
        };
        Ok(iter.next().map(|(key, value)| {
            self.value = Some(value);
            key.as_str()
        }))
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
        self.iter.as_ref().map(ExactSizeIterator::len)
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
        let ours = T::deserialize(Params(v)).map_err(|e| e.to_string());
        let serde_json = T::deserialize(v).map_err(|e| e.to_string());
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
    fn the_array_form_of_a_struct_is_refused() {
        // serde_json would accept it; an input schema of a struct never does.
        // (The message does not name the struct: that would compile a
        // formatting function per input type, for an error the input schema
        // answers before decoding starts.)
        let e = Inner::deserialize(Params(&json!([true]))).unwrap_err();
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
