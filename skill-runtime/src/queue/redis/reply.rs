//! Reading Redis replies: strings, integers, arrays, and stream entries.

use std::time::SystemTime;

use redis::Value;

/// The text of a string reply (bulk, simple or verbatim).
pub(super) fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        Value::Okay => Some("OK".to_owned()),
        _ => None,
    }
}

/// An integer reply, or a string that holds one.
pub(super) fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        other => text(other)?.parse().ok(),
    }
}

/// The items of an array reply (nil reads as none).
pub(super) fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(items) | Value::Set(items) => items,
        _ => &[],
    }
}

/// The value of `field` in a stream entry's flat `field, value, ...` list.
pub(super) fn field(fields: &Value, name: &str) -> Option<String> {
    items(fields)
        .chunks(2)
        .find(|pair| pair.first().and_then(text).as_deref() == Some(name))
        .and_then(|pair| pair.get(1))
        .and_then(text)
}

/// The entries of an `XREADGROUP` reply: `(stream, id, fields)` each.
pub(super) fn stream_entries(v: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    // RESP2: [[stream, [[id, fields], ...]], ...]; RESP3: a map of the same.
    let streams: Vec<(&Value, &Value)> = match v {
        Value::Map(pairs) => pairs.iter().map(|(k, v)| (k, v)).collect(),
        other => items(other)
            .iter()
            .filter_map(|s| match items(s) {
                [k, v] => Some((k, v)),
                _ => None,
            })
            .collect(),
    };
    for (stream, entries) in streams {
        let Some(stream) = text(stream) else { continue };
        for e in items(entries) {
            if let [id, fields] = items(e)
                && let Some(id) = text(id)
            {
                out.push((stream.clone(), id, fields.clone()));
            }
        }
    }
    out
}

/// A sorted set's score read as a time in milliseconds since the epoch (a
/// double on RESP3, text on RESP2).
pub(super) fn score_time(v: &Value) -> Option<SystemTime> {
    let ms: f64 = match v {
        Value::Double(ms) => *ms,
        other => text(other)?.parse().ok()?,
    };
    Some(crate::model::time::from_millis(ms as i64))
}
