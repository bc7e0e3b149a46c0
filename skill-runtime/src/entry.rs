//! The type-erased form of a skill that `inventory` collects, one per skill.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::ctx::{Ctx, Invocation};
use crate::failure::{FailureMode, FailureModes};
use crate::invoke::{InvokeError, Outcome, RuleNote};
use crate::manifest::Manifest;
use crate::schema::{CompiledSchema, input_schema_for, output_schema_for};
use crate::skill::{Severity, Skill};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Run a skill from JSON whose schema was checked, with its compiled output schema.
pub(crate) type InvokeFn =
    fn(Arc<Invocation>, Value, Arc<CompiledSchema>) -> BoxFuture<Result<Outcome, InvokeError>>;

/// One skill as submitted to the registry: its manifest plus the functions that
/// produce its schemas and run it from JSON. Build it with [`SkillEntry::of`].
pub struct SkillEntry {
    pub manifest: &'static Manifest,
    pub failure_modes: &'static [FailureMode],
    pub(crate) input_schema: fn() -> Value,
    pub(crate) output_schema: fn() -> Value,
    pub(crate) conditions: fn() -> Conditions,
    pub(crate) invoke: InvokeFn,
}

inventory::collect!(SkillEntry);

impl SkillEntry {
    pub const fn of<S: Skill>() -> SkillEntry {
        SkillEntry {
            manifest: S::MANIFEST,
            failure_modes: <S::Error as FailureModes>::FAILURE_MODES,
            input_schema: input_schema_for::<S::Input>,
            output_schema: output_schema_for::<S::Output>,
            conditions: conditions_of::<S>,
            invoke: invoke_json::<S>,
        }
    }
}

/// The text of a skill's conditions and rules, as exported.
#[derive(Clone, Debug, Default)]
pub struct Conditions {
    pub preconditions: Vec<PreconditionInfo>,
    pub postconditions: Vec<PostconditionInfo>,
    pub validation_rules: Vec<ValidationRuleInfo>,
}

#[derive(Clone, Debug)]
pub struct PreconditionInfo {
    pub condition: &'static str,
    pub error_code: &'static str,
    pub message: &'static str,
}

#[derive(Clone, Debug)]
pub struct PostconditionInfo {
    pub assertion: &'static str,
    pub rollback_action: Option<&'static str>,
}

#[derive(Clone, Debug)]
pub struct ValidationRuleInfo {
    pub rule_id: &'static str,
    pub expression: &'static str,
    pub severity: Severity,
    pub message: &'static str,
}

fn conditions_of<S: Skill>() -> Conditions {
    Conditions {
        preconditions: S::PRECONDITIONS
            .iter()
            .map(|p| PreconditionInfo {
                condition: p.condition,
                error_code: p.error_code,
                message: p.message,
            })
            .collect(),
        postconditions: S::POSTCONDITIONS
            .iter()
            .map(|p| PostconditionInfo {
                assertion: p.assertion,
                rollback_action: p.rollback_action,
            })
            .collect(),
        validation_rules: S::VALIDATION_RULES
            .iter()
            .map(|r| ValidationRuleInfo {
                rule_id: r.rule_id,
                expression: r.expression,
                severity: r.severity,
                message: r.message,
            })
            .collect(),
    }
}

/// Run `S` from JSON whose schema the caller already checked: deserialize,
/// preconditions, handler, serialize, output schema, postconditions, rules.
fn invoke_json<S: Skill>(
    inv: Arc<Invocation>,
    input_json: Value,
    output_schema: Arc<CompiledSchema>,
) -> BoxFuture<Result<Outcome, InvokeError>> {
    Box::pin(async move {
        let skill = S::MANIFEST.name;
        let decode = |v: Value| {
            serde_json::from_value::<S::Input>(v).map_err(|e| InvokeError::MalformedInput {
                skill: skill.to_owned(),
                message: e.to_string(),
            })
        };
        // Postconditions and rules look at the input after the handler consumed it;
        // decode a second copy only when some need it.
        let needs_input_after = !S::POSTCONDITIONS.is_empty() || !S::VALIDATION_RULES.is_empty();
        let kept = if needs_input_after {
            Some(decode(input_json.clone())?)
        } else {
            None
        };
        let input = decode(input_json)?;
        for p in S::PRECONDITIONS {
            if !(p.check)(&input, &inv.caller) {
                return Err(InvokeError::Precondition {
                    skill: skill.to_owned(),
                    error_code: p.error_code.to_owned(),
                    message: p.message.to_owned(),
                });
            }
        }
        let output = S::run(Ctx::new(inv), input).await.map_err(|e| {
            let mode = e.failure_mode();
            InvokeError::Failed {
                skill: skill.to_owned(),
                code: mode.code.to_owned(),
                retryable: mode.retryable,
                message: e.to_string(),
            }
        })?;
        let value = serde_json::to_value(&output).map_err(|e| InvokeError::InvalidOutput {
            skill: skill.to_owned(),
            violations: vec![crate::schema::SchemaViolation {
                instance_path: String::new(),
                schema_path: String::new(),
                message: format!("output does not serialize to JSON: {e}"),
            }],
        })?;
        let violations = output_schema.violations(&value);
        if !violations.is_empty() {
            return Err(InvokeError::InvalidOutput {
                skill: skill.to_owned(),
                violations,
            });
        }
        let mut notes = Vec::new();
        if let Some(input) = kept {
            for p in S::POSTCONDITIONS {
                if !(p.check)(&input, &output) {
                    return Err(InvokeError::Postcondition {
                        skill: skill.to_owned(),
                        assertion: p.assertion.to_owned(),
                        rollback_action: p.rollback_action.map(str::to_owned),
                    });
                }
            }
            for r in S::VALIDATION_RULES {
                if (r.check)(&input, &output) {
                    continue;
                }
                if r.severity == Severity::Error {
                    return Err(InvokeError::ValidationRule {
                        skill: skill.to_owned(),
                        rule_id: r.rule_id.to_owned(),
                        message: r.message.to_owned(),
                    });
                }
                notes.push(RuleNote {
                    rule_id: r.rule_id,
                    severity: r.severity,
                    message: r.message,
                });
            }
        }
        Ok(Outcome {
            output: value,
            notes,
        })
    })
}

/// Register a hand-written [`Skill`] implementation with the registry.
#[macro_export]
macro_rules! register_skill {
    ($skill:ty) => {
        $crate::__private::inventory::submit! {
            $crate::__private::SkillEntry::of::<$skill>()
        }
    };
}
