//! Decoding a skill's input from its JSON params, with as little generic code per
//! skill as serde allows.
//!
//! `S::Input::deserialize(&Value)` would instantiate, for every skill, serde_json's
//! whole struct path for the input's visitor: the object form and the array form
//! (`visit_seq`, which the input schema rules out before decoding starts), and
//! serde_json's general map-key deserializer. [`Params`] takes structs the short
//! way: objects only, their fields handed to the visitor in declaration order
//! ([`Ordered`]). Everything else is forwarded to serde_json unchanged. In the
//! compile-time benchmark (`bench/compile-time.py`), decoding was the largest
//! piece of a skill's glue.
//!
//! Params that came as JSON text are read, when they are an object, as its
//! list of fields ([`fields`](crate::contract::field::fields),
//! [`Input::Fields`]): no map is built (no node, no key copied unless it has
//! escapes, a string value without escapes borrowed from the text), and the
//! record keeps the text rather than a tree. Each field's value goes to the
//! decoder through the same deserializer as a parsed object's field
//! ([`Found`](crate::contract::field::Found)), so no deserializer of the
//! input's types is compiled for text: the same visitor, and the same
//! functions per field type, serve both sources. An input that is not a
//! struct is refused by the field list ([`needs_value`]), and the runtime
//! decodes it from the whole value.

use serde::Deserializer;
use serde::de::{Error as _, Visitor};
use serde_json::Error;

use crate::contract::ordered::Ordered;
pub(crate) use crate::contract::ordered::{Input, Params};

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, Error> {
            match self.input {
                Input::Value(value) => value.$method($($arg,)* visitor),
                Input::Fields(_) | Input::Probe => Err(needs_value()),
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

impl<'de> Deserializer<'de> for Params<'de> {
    type Error = Error;

    /// A struct's fields go to the visitor in order, as its sequence form
    /// ([`Ordered`]); anything else is the wrong type (serde_json would also
    /// accept an array, which no input schema of a struct lets through).
    /// Instantiated once per input type, so it is kept to one non-generic call
    /// and the visitor's: no `?`, no combinator, no value of the input type
    /// held across a call.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_seq(Ordered::new(self, fields))
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

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::BTreeMap;

    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::*;
    use crate::contract::field::{self, Fields};
    use crate::contract::ordered::{self, Shape};

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Query {
        text: String,
        #[serde(default)]
        limit: u32,
        tags: Vec<String>,
        nested: Option<Inner>,
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        on: bool,
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Defaults {
        #[serde(default = "five")]
        a: u32,
        #[serde(default = "some_seven")]
        b: Option<u32>,
        c: Option<u32>,
        d: u32,
    }

    fn five() -> u32 {
        5
    }

    fn some_seven() -> Option<u32> {
        Some(7)
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(default)]
    struct Whole {
        x: Option<u32>,
        y: u32,
    }

    impl Default for Whole {
        fn default() -> Whole {
            Whole { x: Some(1), y: 2 }
        }
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct Camel {
        first_name: String,
        #[serde(skip_deserializing)]
        skipped: u32,
        last_name: Option<String>,
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Aliased {
        #[serde(alias = "nm")]
        name: String,
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Tagged {
        Add { n: i64 },
        Reset,
    }

    /// The fields of `text`, or the reason it is not one object.
    fn fields(text: &str) -> Result<Fields<'_>, Error> {
        let mut out = Fields::new();
        field::fields(text, &mut out)?;
        Ok(out)
    }

    /// `T` decoded the runtime's way, from `input`, its shape learnt from
    /// its schema (and kept: what a skill learns, it keeps).
    fn ours<T: DeserializeOwned + JsonSchema>(
        shape: &Shape,
        input: Input<'_>,
    ) -> Result<T, String> {
        ordered::decode(shape, input, |p| T::deserialize(p)).map_err(|e| e.to_string())
    }

    fn shape_of<T: DeserializeOwned + JsonSchema>() -> Result<Shape, String> {
        let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
        Shape::learn(&schema, |p| T::deserialize(p))
    }

    /// Decoded from the value and from its text's fields, twice each (the
    /// second time with what the first learnt), as serde_json decodes it:
    /// both succeed with the same value, or both fail.
    fn both<T>(v: &Value) -> Result<T, String>
    where
        T: DeserializeOwned + JsonSchema + PartialEq + std::fmt::Debug,
    {
        let serde_json = T::deserialize(v).map_err(|e| e.to_string());
        let shape = shape_of::<T>().unwrap();
        let text = v.to_string();
        for _ in 0..2 {
            if let Ok(fields) = fields(&text) {
                match (ours::<T>(&shape, Input::Fields(&fields)), &serde_json) {
                    (Ok(a), Ok(b)) => assert_eq!(&a, b, "{text}"),
                    (Err(e), _) if e == NEEDS_VALUE => {}
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!("{text}: from text {a:?}, serde_json {b:?}"),
                }
            }
        }
        let first = ours::<T>(&shape, Input::Value(v));
        let again = ours::<T>(&shape, Input::Value(v));
        assert_eq!(first, again, "{v}");
        match (&first, &serde_json) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(_), Err(_)) => {}
            _ => panic!("{v}: ours {first:?}, serde_json {serde_json:?}"),
        }
        first
    }

    #[test]
    fn structs_decode_as_serde_json_decodes_them() {
        let q: Query =
            both(&json!({"text": "a", "tags": ["x"], "extra": 1, "nested": {"on": true}})).unwrap();
        assert_eq!(
            (q.text.as_str(), q.limit, q.nested),
            ("a", 0, Some(Inner { on: true }))
        );
        let q: Query = both(&json!({"nested": null, "tags": [], "limit": 3, "text": "b"})).unwrap();
        assert_eq!((q.limit, q.nested), (3, None));
        for bad in [
            json!({"tags": []}),
            json!({"text": 1, "tags": []}),
            json!({"text": "a", "tags": [], "nested": {"on": true, "off": false}}),
            json!("text"),
            json!(null),
            json!([]),
        ] {
            both::<Query>(&bad).unwrap_err();
        }
    }

    #[test]
    fn missing_fields_take_their_defaults_or_fail_as_serde_does() {
        // Every combination of the four fields present or absent: each
        // default as serde's map form gives it (a field's own, an `Option`'s
        // `None`, a required field's error), whatever was learnt before.
        let shape = shape_of::<Defaults>().unwrap();
        for mask in 0..16u32 {
            let mut v = serde_json::Map::new();
            for (i, k) in ["a", "b", "c", "d"].iter().enumerate() {
                if mask & (1 << i) != 0 {
                    v.insert((*k).to_owned(), json!(i + 10));
                }
            }
            let v = Value::Object(v);
            let expected = Defaults::deserialize(&v).map_err(|e| e.to_string());
            for _ in 0..2 {
                assert_eq!(ours::<Defaults>(&shape, Input::Value(&v)), expected, "{v}");
            }
            both::<Defaults>(&v).ok();
        }
        assert_eq!(
            both::<Defaults>(&json!({})).unwrap_err(),
            "missing field `d`"
        );
        assert_eq!(
            both::<Defaults>(&json!({"d": 1})).unwrap(),
            Defaults {
                a: 5,
                b: Some(7),
                c: None,
                d: 1
            }
        );
        // The struct's own default fills what is absent.
        assert_eq!(
            both::<Whole>(&json!({})).unwrap(),
            Whole { x: Some(1), y: 2 }
        );
        assert_eq!(
            both::<Whole>(&json!({"y": 4})).unwrap(),
            Whole { x: Some(1), y: 4 }
        );
    }

    #[test]
    fn names_renamed_skipped_unknown_and_twice_are_serdes() {
        let c: Camel = both(&json!({"firstName": "Ada", "last_name": "x", "skipped": 9})).unwrap();
        assert_eq!(
            c,
            Camel {
                first_name: "Ada".into(),
                skipped: 0,
                last_name: None
            }
        );
        // An unknown field is refused where the type denies them.
        let shape = shape_of::<Inner>().unwrap();
        assert_eq!(
            ours::<Inner>(&shape, Input::Value(&json!({"on": true, "off": 1}))).unwrap_err(),
            "unknown field `off`, expected `on`"
        );
        // A field named twice, in text.
        let shape = shape_of::<Query>().unwrap();
        let twice = fields(r#"{"text": "a", "tags": [], "text": "b"}"#).unwrap();
        assert_eq!(
            ours::<Query>(&shape, Input::Fields(&twice)).unwrap_err(),
            "duplicate field `text`"
        );
        // An unknown field named twice is ignored, as serde ignores it.
        let extra = fields(r#"{"text": "a", "x": 1, "tags": [], "x": 2}"#).unwrap();
        assert!(ours::<Query>(&shape, Input::Fields(&extra)).is_ok());
    }

    #[test]
    fn types_that_cannot_be_decoded_in_order_are_refused_with_the_reason() {
        let e = shape_of::<Aliased>().unwrap_err();
        assert!(e.contains("`nm`") && e.contains("#[serde(alias)]"), "{e}");
        // Not a struct: nothing to learn, decoded from the whole value.
        assert!(shape_of::<Tagged>().is_ok());
        assert!(shape_of::<BTreeMap<u32, bool>>().is_ok());
    }

    #[test]
    fn structs_decode_from_their_fields() {
        let text = r#"{"te\u0078t": "a\"b", "tags": ["x", "y"], "extra": {"deep": [1]}, "nested": {"on": false}}"#;
        let split = fields(text).unwrap();
        assert!(matches!(&split[0].name, Cow::Owned(name) if name == "text"));
        assert!(matches!(split[1].name, Cow::Borrowed("tags")));
        assert_eq!(split[2].value(), &json!({"deep": [1]}));
        assert_eq!(split[1].value(), &json!(["x", "y"]));
        let shape = shape_of::<Query>().unwrap();
        let q = ours::<Query>(&shape, Input::Fields(&split)).unwrap();
        assert_eq!(q, serde_json::from_str::<Query>(text).unwrap());
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
        let shape = shape_of::<BTreeMap<u32, bool>>().unwrap();
        let e = ours::<BTreeMap<u32, bool>>(&shape, Input::Fields(&m)).unwrap_err();
        assert_eq!(e, needs_value().to_string());
    }

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Scalars {
        u: u32,
        i: i8,
        f: f64,
        s: String,
        c: char,
        o: Option<i64>,
        b: bool,
        n: Option<Box<Scalars>>,
    }

    #[test]
    fn scalars_from_text_decode_as_serde_json_decodes_them() {
        // Each from text as serde_json reads the text: numbers at and past
        // each type's bounds, floats, exponents, escapes, nulls, wrong
        // types, a field named twice.
        let shape = shape_of::<Scalars>().unwrap();
        let base = r#""u": 7, "i": -3, "f": 1.5, "s": "x", "c": "y", "o": null, "b": true"#;
        let cases = [
            r#""u": 4294967295"#,
            r#""u": 4294967296"#,
            r#""u": 18446744073709551615"#,
            r#""u": 18446744073709551616"#,
            r#""u": 0"#,
            r#""u": -0"#,
            r#""u": 1.0"#,
            r#""u": 1e2"#,
            r#""u": "7""#,
            r#""i": -128"#,
            r#""i": -129"#,
            r#""i": 127"#,
            r#""f": 7"#,
            r#""f": -7"#,
            r#""f": 1e400"#,
            r#""f": 2.5e-3"#,
            r#""f": 0.1000000000000000055511151231257827"#,
            r#""f": "1.5""#,
            r#""s": "a\"b\u00e9\n""#,
            r#""s": "\ud83d\ude00""#,
            r#""s": "é, 日本""#,
            r#""s": 5"#,
            r#""s": null"#,
            r#""c": "\u0041""#,
            r#""c": "ab""#,
            r#""o": 5"#,
            r#""o": -5"#,
            r#""o": "5""#,
            r#""b": false"#,
            r#""b": 1"#,
            r#""n": null"#,
            r#""n": {"u": 1, "i": 1, "f": 1, "s": "", "c": "c", "o": null, "b": false, "n": null}"#,
            r#""n": {"u": -1}"#,
        ];
        for case in cases {
            let key = &case[..case.find(':').unwrap()];
            // The case's field instead of the base's, then after it (named
            // twice).
            let rest: Vec<&str> = base.split(", ").filter(|kv| !kv.starts_with(key)).collect();
            for text in [
                format!("{{{}, {case}}}", rest.join(", ")),
                format!("{{{base}, {case}}}"),
            ] {
                let expected = serde_json::from_str::<Scalars>(&text).map_err(|e| e.to_string());
                // Text that does not read as fields is left to the whole
                // value (`1e400`: out of range).
                let Ok(split) = fields(&text) else {
                    assert!(expected.is_err(), "{text}");
                    continue;
                };
                for _ in 0..2 {
                    match (ours::<Scalars>(&shape, Input::Fields(&split)), &expected) {
                        (Ok(a), Ok(b)) => assert_eq!(&a, b, "{text}"),
                        // The same words (the runtime words an error from
                        // the whole value anyway; serde_json adds where).
                        (Err(a), Err(b)) => {
                            let words = |e: &str| e.split(" at line ").next().unwrap().to_owned();
                            assert_eq!(words(&a), words(b), "{text}");
                        }
                        (a, b) => panic!("{text}: from text {a:?}, serde_json {b:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn the_array_form_of_a_struct_is_refused() {
        // serde_json would accept it; an input schema of a struct never does.
        // (The message does not name the struct: that would compile a
        // formatting function per input type, for an error the input schema
        // answers before decoding starts.)
        let shape = shape_of::<Inner>().unwrap();
        let e = ours::<Inner>(&shape, Input::Value(&json!([true]))).unwrap_err();
        assert_eq!(e, "invalid type: sequence, expected a JSON object");
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
