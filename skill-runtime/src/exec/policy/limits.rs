//! Limits on JSON params, which come from outside the process: size and depth.

use serde_json::Value;

use crate::model::data::Data;

/// Limits on JSON params, which come from outside the process: params beyond
/// them are refused before they are parsed further. A typed call's input is
/// not measured; the calling code built it.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Size of the JSON text of the params.
    pub max_input_bytes: usize,
    /// Nesting depth of the params (a flat object is 1).
    pub max_depth: usize,
    /// The most of a job's params, and of its output, that its run record
    /// keeps (JSON text): a larger value is replaced in the record by
    /// `{"$truncated": {"bytes": N}}`, so records held in memory stay small
    /// whatever clients send. The job itself sees the whole value.
    pub max_record_value_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: 1 << 20,
            max_depth: 64,
            max_record_value_bytes: 64 << 10,
        }
    }
}

/// What a run record keeps of `v`, a value of about `bytes` bytes of JSON
/// text (`None`: nested past the depth limit): `v` itself within `budget`,
/// else a marker saying how large it was.
pub(crate) fn kept_in_record<T: From<Value>>(v: T, bytes: Option<usize>, budget: usize) -> T {
    match bytes {
        Some(n) if n <= budget => v,
        _ => T::from(truncated(bytes)),
    }
}

/// The size of an output in a run record (see [`measure`]): exact when it is
/// held as text, `None` when it nests deeper than `max_depth`.
pub(crate) fn recorded_size(data: &Data, max_depth: usize) -> Option<usize> {
    match data.held_text() {
        Some(text) => text_size(text, max_depth),
        // The walk stops at the depth limit.
        None => measure(data, max_depth),
    }
}

/// The length of `text`, one JSON value as `serde_json` writes it, or `None`
/// when it nests deeper than `max_depth`. Each level takes two bytes, so a
/// short text is not scanned.
fn text_size(text: &str, max_depth: usize) -> Option<usize> {
    if text.len() / 2 <= max_depth {
        return Some(text.len());
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text.as_bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return None;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Some(text.len())
}

/// The marker a record keeps in place of a value over its budget: its size,
/// or that it nests past the depth limit (`None`).
pub(crate) fn truncated(bytes: Option<usize>) -> Value {
    match bytes {
        Some(n) => serde_json::json!({"$truncated": {"bytes": n}}),
        None => serde_json::json!({"$truncated": {"too_deep": true}}),
    }
}

/// The nesting depth and size of `v` in one walk: `None` when it nests deeper
/// than `max_depth` (a flat object or array is 1), else an estimate of the length
/// of its JSON text (exact but for string escapes and number digits, which are
/// counted as written by the shortest form). The walk stops descending at the
/// limit, so a hostile value cannot exhaust the stack here.
pub(crate) fn measure(v: &Value, max_depth: usize) -> Option<usize> {
    fn walk(v: &Value, depth: usize, max: usize) -> Option<usize> {
        Some(match v {
            Value::Null => 4,
            Value::Bool(b) => 4 + usize::from(!*b),
            Value::Number(n) => number_len(n),
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                if depth == max {
                    return None;
                }
                let mut n = 1 + items.len().max(1);
                for i in items {
                    n += walk(i, depth + 1, max)?;
                }
                n
            }
            Value::Object(map) => {
                if depth == max {
                    return None;
                }
                let mut n = 1 + map.len().max(1);
                for (k, v) in map {
                    n += k.len() + 3 + walk(v, depth + 1, max)?;
                }
                n
            }
        })
    }
    walk(v, 0, max_depth)
}

fn number_len(n: &serde_json::Number) -> usize {
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u.checked_ilog10().unwrap_or(0) as usize + 1,
        (None, Some(i)) => i.unsigned_abs().checked_ilog10().unwrap_or(0) as usize + 2,
        // Floats: serde_json writes at most 24 characters.
        _ => 24,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn measure_estimates_the_text_and_bounds_the_depth() {
        for v in [
            json!({"a": 1, "bb": [true, false, null], "c": {"d": "text", "e": -42}}),
            json!([]),
            json!({}),
            json!("x"),
            json!(12345),
        ] {
            let text = serde_json::to_string(&v).unwrap();
            assert_eq!(measure(&v, 10), Some(text.len()), "{text}");
        }
        let deep = json!({"a": [[{"b": 1}]]});
        assert!(measure(&deep, 4).is_some());
        // The same of a value held as text, exactly.
        for v in [
            json!({"a": "]]]]\\\"[[[[[[[[[[[[", "b": [[{"c": "x"}]], "d": 1}),
            json!([[[[[[[[[[1]]]]]]]]]]),
        ] {
            let text = v.to_string();
            let data = Data::written(text.clone());
            for max in [1, 2, 3, 4, 9, 10, 11, 40] {
                let want = measure(&v, max).map(|_| text.len());
                assert_eq!(recorded_size(&data, max), want, "{text} within {max}");
                assert_eq!(
                    recorded_size(&Data::from(v.clone()), max).is_some(),
                    want.is_some()
                );
            }
        }
        assert_eq!(measure(&deep, 3), None);
    }
}
