//! The fields of params text, and the deserializer that hands a field's
//! value to the input type's decoder.
//!
//! Params text that is one object is read as its list of fields
//! ([`fields`]): each name (borrowed unless it has escapes) and its value.
//! A string without escapes is kept as the text between its quotes, not
//! copied into a `Value` of its own: the decoder copies it once, into the
//! input, as it does for the text floor. Any other value is parsed into a
//! [`Value`], as serde_json parses it.
//!
//! One deserializer, [`Found`], serves both sources (a field of a parsed
//! object, a field of text), so each field type's decoder is compiled once
//! for the two. Each of its methods does what serde_json's `&Value` does
//! with the same value, by calling it; a borrowed string that a method
//! cannot take as a string is made a `Value` first.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;

use serde::Deserializer;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, MapAccess, SeqAccess, Visitor};
use serde_json::{Error, Value};
use smallvec::SmallVec;

/// One field of an object read from text: its name and its value.
pub(crate) struct Field<'de> {
    pub(crate) name: Cow<'de, str>,
    pub(crate) value: FieldValue<'de>,
}

/// A field's value: a string without escapes as the text between its
/// quotes; anything else parsed.
pub(crate) enum FieldValue<'de> {
    /// The string, and the same as a `Value` once a method needs one.
    Str(&'de str, OnceCell<Value>),
    Value(Value),
}

impl<'de> Field<'de> {
    /// The field's value as a deserializer.
    pub(crate) fn found(&self) -> Found<'_> {
        match &self.value {
            FieldValue::Str(s, cell) => Found::Str(s, cell),
            FieldValue::Value(v) => Found::Value(v),
        }
    }

    /// The string, when the value is a string without escapes.
    pub(crate) fn plain_str(&self) -> Option<&'de str> {
        match self.value {
            FieldValue::Str(s, _) => Some(s),
            FieldValue::Value(_) => None,
        }
    }

    /// The value as parsed.
    pub(crate) fn value(&self) -> &Value {
        self.found().value()
    }
}

/// The fields of an object read from text: up to eight held in place.
pub(crate) type Fields<'de> = SmallVec<[Field<'de>; 8]>;

/// The fields of `text`, one JSON object, in the order written, pushed onto
/// `out`, which the caller passes empty (and drops, whatever it holds, when
/// this fails). One parse, with no map built; an error when `text` is not
/// one JSON object. Written into the caller's list, not returned: the list
/// holds its fields in itself, and would be copied on its way out.
pub(crate) fn fields<'de>(text: &'de str, out: &mut Fields<'de>) -> Result<(), Error> {
    struct Entries<'a, 'de>(&'a mut Fields<'de>);

    impl<'de> Visitor<'de> for Entries<'_, 'de> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }

        // Inlined into its one caller, serde_json's `deserialize_map`,
        // whatever the partition of the crate into codegen units: out of
        // line, the map access it is handed would go through a call and its
        // state through memory, on every text job.
        #[inline]
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(Name(name)) = map.next_key()? {
                self.0.push(Field {
                    name,
                    value: map.next_value()?,
                });
            }
            Ok(())
        }
    }

    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(Entries(out))?;
    de.end()
}

/// A field's name, borrowed from the text unless it has escapes.
struct Name<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
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

/// A field's value read as serde_json reads a `Value`, but a string without
/// escapes borrowed from the text.
impl<'de> Deserialize<'de> for FieldValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;

        impl<'de> Visitor<'de> for Visit {
            type Value = FieldValue<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }

            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<FieldValue<'de>, E> {
                Ok(FieldValue::Str(s, OnceCell::new()))
            }

            fn visit_str<E>(self, s: &str) -> Result<FieldValue<'de>, E> {
                Ok(FieldValue::Value(Value::String(s.to_owned())))
            }

            fn visit_string<E>(self, s: String) -> Result<FieldValue<'de>, E> {
                Ok(FieldValue::Value(Value::String(s)))
            }

            // Scalars become what serde_json's own conversions make of them
            // (a float that is not finite, `null`), as its `Value` parse does.
            fn visit_bool<E>(self, b: bool) -> Result<FieldValue<'de>, E> {
                Ok(FieldValue::Value(b.into()))
            }

            fn visit_u64<E>(self, n: u64) -> Result<FieldValue<'de>, E> {
                Ok(FieldValue::Value(n.into()))
            }

            fn visit_i64<E>(self, n: i64) -> Result<FieldValue<'de>, E> {
                Ok(FieldValue::Value(n.into()))
            }

            fn visit_f64<E>(self, n: f64) -> Result<FieldValue<'de>, E> {
                Ok(FieldValue::Value(n.into()))
            }

            fn visit_unit<E>(self) -> Result<FieldValue<'de>, E> {
                Ok(FieldValue::Value(Value::Null))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<FieldValue<'de>, A::Error> {
                Value::deserialize(SeqAccessDeserializer::new(seq)).map(FieldValue::Value)
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<FieldValue<'de>, A::Error> {
                Value::deserialize(MapAccessDeserializer::new(map)).map(FieldValue::Value)
            }
        }

        d.deserialize_any(Visit)
    }
}

/// A field's value, found in a parsed object or in text, as a deserializer.
#[derive(Clone, Copy)]
pub(crate) enum Found<'de> {
    Value(&'de Value),
    /// A string without escapes, from text, and where it is kept as a
    /// `Value` once a method needs one.
    Str(&'de str, &'de OnceCell<Value>),
}

impl<'de> Found<'de> {
    /// The value, a borrowed string made a `Value` the first time.
    fn value(self) -> &'de Value {
        match self {
            Found::Value(v) => v,
            Found::Str(s, cell) => cell.get_or_init(|| Value::String(s.to_owned())),
        }
    }
}

/// What serde_json's `&Value` does with the value.
macro_rules! by_value {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Error> {
            self.value().$method($($arg,)* visitor)
        }
    )*};
}

/// What `&Value` does with a string, for a borrowed one: the visitor gets it
/// borrowed.
macro_rules! as_str {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self {
                Found::Str(s, _) => visitor.visit_borrowed_str(s),
                Found::Value(v) => v.$method(visitor),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for Found<'de> {
    type Error = Error;

    as_str! { deserialize_any deserialize_str deserialize_string }

    /// As `&Value`'s, but what is there is handed on as itself, so that the
    /// inner type's decoder is this one's, whatever the source.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Found::Value(Value::Null) => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    by_value! {
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
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
    }
}
