//! Redaction: the fields a manifest names never reach a record, a log line or
//! an approver, and their values are scrubbed from messages too.

use serde_json::Value;

use crate::model::error::InvokeError;

/// Replace the top-level `fields` of `value` by `"[REDACTED]"`, collecting the
/// replaced strings (every string inside them) so messages can be scrubbed too.
pub(crate) fn redact_in_place(value: &mut Value, fields: &[&str], secrets: &mut Vec<String>) {
    let Value::Object(map) = value else { return };
    for f in fields {
        if let Some(v) = map.get_mut(*f) {
            collect_strings(v, secrets);
            *v = Value::String(REDACTED.to_owned());
        }
    }
}

pub(crate) fn redacted(value: &Value, fields: &[&str]) -> Value {
    let mut v = value.clone();
    redact_in_place(&mut v, fields, &mut Vec::new());
    v
}

const REDACTED: &str = "[REDACTED]";

/// Strings shorter than this are not scrubbed from messages: replacing every
/// `a` or `42` would destroy the message and hide nothing.
const MIN_SECRET: usize = 3;

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.chars().count() >= MIN_SECRET => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_strings(i, out)),
        Value::Number(n) if n.to_string().len() >= MIN_SECRET => out.push(n.to_string()),
        _ => {}
    }
}

pub(crate) fn scrub(mut text: String, secrets: &[String]) -> String {
    for s in secrets {
        if text.contains(s.as_str()) {
            text = text.replace(s.as_str(), REDACTED);
        }
    }
    text
}

/// `e` as callers and records may see it: schema violations inside a
/// redacted input field keep their location but lose their text (it quotes
/// the value), and the values of redacted fields (`secrets`) are scrubbed
/// from every free-text message (a skill's own error may quote its input).
pub(crate) fn redact_error(e: &mut InvokeError, inputs: &[&str], secrets: &[String]) {
    match e {
        InvokeError::InvalidInput { violations, .. } => {
            for v in violations.iter_mut() {
                // The pointer's first token, unescaped (RFC 6901: `~1` is
                // `/`, `~0` is `~`), so a field named `a/b` is found.
                let token = v.instance_path.split('/').nth(1).unwrap_or("");
                let field = token.replace("~1", "/").replace("~0", "~");
                if inputs.contains(&field.as_str()) {
                    v.message = format!("{REDACTED} (fails `{}`)", v.schema_path);
                } else {
                    v.message = scrub(std::mem::take(&mut v.message), secrets);
                }
            }
        }
        InvokeError::MalformedInput { message, .. }
        | InvokeError::Failed { message, .. }
        | InvokeError::Panicked { message, .. }
        | InvokeError::Internal { message, .. } => {
            *message = scrub(std::mem::take(message), secrets);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A redacted field whose name a JSON pointer escapes still loses its text.
    #[test]
    fn violations_in_fields_named_with_slash_or_tilde_are_redacted() {
        use crate::schema::compiled::SchemaViolation;
        for (field, pointer) in [("a/b", "/a~1b"), ("x~y", "/x~0y"), ("plain", "/plain/0")] {
            let mut e = InvokeError::InvalidInput {
                skill: "s".into(),
                violations: vec![SchemaViolation {
                    instance_path: pointer.into(),
                    schema_path: "/properties/x/type".into(),
                    message: "\"hunter2\" is not of type \"integer\"".into(),
                }],
            };
            redact_error(&mut e, &[field], &[]);
            let InvokeError::InvalidInput { violations, .. } = e else {
                unreachable!()
            };
            assert!(
                !violations[0].message.contains("hunter2"),
                "{field}: {}",
                violations[0].message
            );
        }
    }

    #[test]
    fn redaction_replaces_fields_and_scrubs_their_text() {
        let mut v = serde_json::json!({"query": "hunter2-secret", "limit": 5});
        let mut secrets = Vec::new();
        redact_in_place(&mut v, &["query"], &mut secrets);
        assert_eq!(v, serde_json::json!({"query": REDACTED, "limit": 5}));
        assert_eq!(
            scrub("no match for hunter2-secret".into(), &secrets),
            "no match for [REDACTED]"
        );
    }
}
