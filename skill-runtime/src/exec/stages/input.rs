//! Input: the params within the size and depth limits, valid against the
//! input schema, decoded into the input type; then the preconditions.

use std::sync::atomic::Ordering;

use serde_json::Value;

use crate::contract::boxed::Boxed;
use crate::contract::de::{Input, NEEDS_VALUE};
use crate::contract::field::{FieldValue, Fields, fields as fields_of};
use crate::exec::policy::limits::{Limits, measure};
use crate::exec::stages::errors::check_error;
use crate::exec::state::{Refused, State};
use crate::model::error::InvokeError;
use crate::model::record::Stage;
use crate::registry::skill::RegisteredSkill;

/// The job's input, validated and decoded (unless the caller brought a typed
/// input): size, depth, schema, then decoding.
pub(crate) fn validate(
    limits: Limits,
    skill: &RegisteredSkill,
    st: &mut State,
) -> Result<Boxed, InvokeError> {
    let input = decode(limits, skill, st);
    st.settle(Stage::ValidateInput, input)
}

/// The skill's preconditions, over the decoded input and the caller.
#[inline]
pub(crate) fn preconditions(
    skill: &RegisteredSkill,
    input: &Boxed,
    st: &mut State,
) -> Result<(), InvokeError> {
    if !skill.entry.erased.checks.any_before() {
        st.skip(Stage::Preconditions);
        return Ok(());
    }
    let held = (skill.entry.erased.checks)
        .before(input, &st.inv.caller)
        .map_err(|f| check_error(skill, f, None));
    st.settle(Stage::Preconditions, held)
}

pub(crate) fn decode(
    limits: Limits,
    skill: &RegisteredSkill,
    st: &mut State,
) -> Result<Boxed, InvokeError> {
    let name = skill.name();
    if let Some(refused) = st.refused.take() {
        return Err(match refused {
            Refused::Unserializable(message) => InvokeError::MalformedInput {
                skill: name.to_owned(),
                message,
            },
            Refused::TooLarge => InvokeError::TooLarge {
                skill: name.to_owned(),
                size: st.text_len.unwrap_or_default(),
                limit: limits.max_input_bytes,
            },
        });
    }
    if let Some(input) = from_text(limits, skill, st)? {
        return Ok(input);
    }
    // The value, parsed now if the params came as text.
    if let Err(e) = st.parse_params() {
        return Err(InvokeError::MalformedJson {
            skill: name.to_owned(),
            message: e.to_string(),
        });
    }
    let params = &st.target.params;
    // The limits guard against hostile payloads: a typed input was built by
    // the calling code itself (and serializing it has walked it already).
    if st.typed_input.is_none() {
        let Some(estimate) = measure(params, limits.max_depth) else {
            return Err(too_deep(name, limits));
        };
        // Text was held to the limit before it was read.
        if st.text_len.is_none() {
            // Known from here on: the record keeps params up to a budget.
            st.text_len = Some(estimate);
            if estimate > limits.max_input_bytes {
                return Err(InvokeError::TooLarge {
                    skill: name.to_owned(),
                    size: estimate,
                    limit: limits.max_input_bytes,
                });
            }
        }
    }
    let schema = &skill.input_validator;
    let invalid = || InvokeError::InvalidInput {
        skill: name.to_owned(),
        violations: schema.violations(params),
    };
    // Decoded first: a value of the input type needs only the checks its
    // type does not make (`CompiledSchema::is_valid_for_type`, or, for
    // decoded params, `is_valid_decoded`). Params that do not decode get
    // the whole schema, for every violation with its path; the decoder's
    // message is the answer only when the schema has nothing to say.
    let mut rewritten = None;
    let (input, valid) = match st.typed_input.take() {
        Some(typed) => (typed, schema.is_valid_for_type(params)),
        None => match skill.decode(Input::Value(params)) {
            Ok(input) => (input, schema.is_valid_decoded(params)),
            Err(_) if !schema.is_valid(params) => return Err(invalid()),
            // Valid, yet not decoded: JSON Schema's integers include `2.0`
            // and `2e3`, which serde reads only as floats. The params go on
            // with such numbers written as integers, if that decodes: the
            // published schema is the whole contract (a consumer checking
            // against it, in any language, accepts what the runtime does).
            Err(e) => match whole_numbers(params)
                .and_then(|whole| Some((skill.decode(Input::Value(&whole)).ok()?, whole)))
            {
                Some((input, whole)) => {
                    rewritten = Some(whole);
                    (input, true)
                }
                None => {
                    return Err(InvokeError::MalformedInput {
                        skill: name.to_owned(),
                        message: e.to_string(),
                    });
                }
            },
        },
    };
    if !valid {
        return Err(invalid());
    }
    if let Some(whole) = rewritten {
        st.target.params = whole;
    }
    Ok(input)
}

/// `v` with each number written with a fraction or an exponent that is a
/// whole number within `i64` or `u64` (`2.0`, `2e3`, `-0.0`) written as an
/// integer; `None` when it has none. Walks a copy: reached only by params
/// that did not decode.
#[cold]
fn whole_numbers(v: &Value) -> Option<Value> {
    fn whole(n: &serde_json::Number) -> Option<serde_json::Number> {
        let f = n.as_f64().filter(|f| n.is_f64() && f.fract() == 0.0)?;
        // 2^64 and -2^63, exactly, as doubles.
        const BEYOND_U64: f64 = 18_446_744_073_709_551_616.0;
        const I64_MIN: f64 = -9_223_372_036_854_775_808.0;
        match f {
            // `as` is exact here: the double is a whole number in range.
            f if (0.0..BEYOND_U64).contains(&f) => Some((f as u64).into()),
            f if (I64_MIN..0.0).contains(&f) => Some((f as i64).into()),
            _ => None,
        }
    }
    fn walk(v: &mut Value) -> bool {
        match v {
            Value::Number(n) => whole(n).map(|w| *n = w).is_some(),
            Value::Array(items) => items.iter_mut().fold(false, |any, x| walk(x) | any),
            Value::Object(fields) => fields.values_mut().fold(false, |any, x| walk(x) | any),
            _ => false,
        }
    }
    let mut copy = v.clone();
    walk(&mut copy).then_some(copy)
}

/// Whether a later stage of this job will need the params as a value
/// anyway: the record redacts inputs; a postcondition or rule reads the
/// input; the idempotency key is of the params. Reading the fields first would then parse the text twice.
fn needs_value(skill: &RegisteredSkill, st: &State) -> bool {
    let m = skill.entry.manifest;
    !m.redaction.inputs.is_empty()
        || skill.entry.erased.checks.after_reads_input()
        || (st.target.idempotency_key.is_none()
            && (m.idempotency.is_some() || st.inv.intent.is_some()))
}

fn too_deep(name: &str, limits: Limits) -> InvokeError {
    InvokeError::TooDeep {
        skill: name.to_owned(),
        limit: limits.max_depth,
    }
}

/// The input decoded from params text that no stage has parsed, when its
/// fields are enough: the text is one object (read as its list of fields,
/// each nested within the depth limit), its fields decode into the input
/// type, and what the type does not guarantee holds of the fields the
/// schema's residual names ([`CompiledSchema::residual_fields`]). `None`
/// otherwise: the params are then parsed whole and go the way of every
/// value, which also words any error.
///
/// [`CompiledSchema::residual_fields`]: crate::schema::compiled::CompiledSchema::residual_fields
fn from_text(
    limits: Limits,
    skill: &RegisteredSkill,
    st: &State,
) -> Result<Option<Boxed>, InvokeError> {
    let (Some(text), Some(named), true) = (
        st.text.as_deref(),
        skill.input_validator.residual_fields(),
        skill.takes_fields.load(Ordering::Relaxed),
    ) else {
        return Ok(None);
    };
    if needs_value(skill, st) {
        return Ok(None);
    }
    let mut fields = Fields::new();
    if fields_of(text, &mut fields).is_err() {
        return Ok(None);
    }
    // The object is 1 deep; its fields' values one more.
    let Some(within) = limits.max_depth.checked_sub(1) else {
        return Err(too_deep(skill.name(), limits));
    };
    // (A number, string, boolean or null adds no depth.)
    let nests = |v: &Value| matches!(v, Value::Array(_) | Value::Object(_));
    if fields.iter().any(|f| match &f.value {
        FieldValue::Value(v) => nests(v) && measure(v, within).is_none(),
        FieldValue::Str(..) => false,
    }) {
        return Err(too_deep(skill.name(), limits));
    }
    let input = match skill.decode(Input::Fields(&fields)) {
        Ok(input) => input,
        Err(e) => {
            if e.to_string() == NEEDS_VALUE {
                skill.takes_fields.store(false, Ordering::Relaxed);
            }
            return Ok(None);
        }
    };
    for field in &fields {
        let Some((_, check)) = named.iter().find(|(n, _)| *n == field.name) else {
            continue;
        };
        // A string without escapes is measured on the text; anything else
        // is checked as a value.
        let holds = match field.plain_str().and_then(|s| check.holds_for_str(s)) {
            Some(holds) => holds,
            None => check.is_valid(field.value()),
        };
        if !holds {
            return Ok(None);
        }
    }
    Ok(Some(input))
}
