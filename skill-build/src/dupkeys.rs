//! Duplicate object keys in a JSON document: `serde_json` keeps the last
//! value of a repeated key without a word, so two readers of the same file
//! could see different documents. `skill-registry` refuses such a file.

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The JSON pointer of the first key that appears twice in one object of
/// `text`, if any (`Ok(None)` for a document without; `Err` when `text` is
/// not JSON).
pub fn first_duplicate_key(text: &str) -> Result<Option<String>, serde_json::Error> {
    let mut path = Vec::new();
    let mut found = None;
    let mut de = serde_json::Deserializer::from_str(text);
    Walk {
        path: &mut path,
        found: &mut found,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(found)
}

struct Walk<'a> {
    path: &'a mut Vec<String>,
    found: &'a mut Option<String>,
}

fn pointer(path: &[String]) -> String {
    path.iter()
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect()
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            self.path.push(i.to_string());
            let more = seq.next_element_seed(Walk {
                path: self.path,
                found: self.found,
            })?;
            self.path.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            self.path.push(key.clone());
            if !keys.insert(key) && self.found.is_none() {
                *self.found = Some(pointer(self.path));
            }
            map.next_value_seed(Walk {
                path: self.path,
                found: self.found,
            })?;
            self.path.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::first_duplicate_key;

    #[test]
    fn finds_the_first_repeated_key_by_its_pointer() {
        assert_eq!(
            first_duplicate_key(r#"{"a": 1, "b": [{"c": 1}]}"#).unwrap(),
            None
        );
        assert_eq!(
            first_duplicate_key(r#"{"a": 1, "b": [{"c": 1}, {"x/y": 2, "x/y": 3}]}"#).unwrap(),
            Some("/b/1/x~1y".to_owned())
        );
        assert_eq!(
            first_duplicate_key(r#"{"a": 1, "a": 2}"#).unwrap(),
            Some("/a".to_owned())
        );
        assert!(first_duplicate_key("{").is_err());
    }
}
