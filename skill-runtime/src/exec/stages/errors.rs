//! The errors a failed check becomes, shared by the stages that run checks.

use crate::contract::evaluate::CheckFailed;
use crate::exec::redact::redacted;
use crate::model::error::{InvokeError, OverBudget, RollbackError};
use crate::model::record::StageOutcome;
use crate::registry::skill::RegisteredSkill;

/// `passed` for a step that had checks to run, `skipped` for one that had none.
pub(crate) fn passed_unless_empty<T>(checks: &[T]) -> StageOutcome {
    if checks.is_empty() {
        StageOutcome::Skipped
    } else {
        StageOutcome::Passed
    }
}

/// A value behind the erased table was not of the skill's type: a runtime bug,
/// reported as one.
pub(crate) fn mismatch(skill: &str) -> InvokeError {
    InvokeError::Internal {
        skill: skill.to_owned(),
        message: "a value did not have the skill's type".to_owned(),
    }
}

/// The job's error for a budget it crossed.
pub(crate) fn over_budget(skill: &RegisteredSkill, over: OverBudget) -> InvokeError {
    InvokeError::BudgetExceeded {
        skill: skill.name().to_owned(),
        budget: over.budget,
        used: over.used,
        limit: over.limit,
    }
}

/// The action that undoes a skill's work when its output is rejected: the
/// rollback action its postconditions declare (the first, when several do).
pub(crate) fn rollback_action(skill: &RegisteredSkill) -> Option<&'static str> {
    skill
        .conditions
        .postconditions
        .iter()
        .find_map(|p| p.rollback_action)
}

/// The error of a failed condition, with the rollback's outcome for a
/// postcondition that has a rollback action.
pub(crate) fn check_error(
    skill: &RegisteredSkill,
    failed: CheckFailed,
    rollback: Option<Result<(), RollbackError>>,
) -> InvokeError {
    check_error_with(skill, failed, rollback, None)
}

/// [`check_error`], with the output the check rejected (JSON), redacted as
/// the manifest says before it goes into the error.
pub(crate) fn check_error_with(
    skill: &RegisteredSkill,
    failed: CheckFailed,
    rollback: Option<Result<(), RollbackError>>,
    output: Option<&serde_json::Value>,
) -> InvokeError {
    let output =
        output.map(|o| std::sync::Arc::new(redacted(o, skill.entry.manifest.redaction.outputs)));
    let name = skill.name().to_owned();
    let c = &skill.conditions;
    match failed {
        CheckFailed::Precondition(i) => InvokeError::Precondition {
            skill: name,
            error_code: c.preconditions[i].error_code.to_owned(),
            message: c.preconditions[i].message.to_owned(),
        },
        CheckFailed::Postcondition(i) => InvokeError::Postcondition {
            skill: name,
            assertion: c.postconditions[i].assertion.to_owned(),
            rollback_action: c.postconditions[i].rollback_action,
            rollback,
            output,
        },
        CheckFailed::Rule(i) => InvokeError::ValidationRule {
            skill: name,
            rule_id: c.validation_rules[i].rule_id.to_owned(),
            message: c.validation_rules[i].message.to_owned(),
            rollback_action: rollback_action(skill),
            rollback,
            output,
        },
        CheckFailed::Mismatch => mismatch(&name),
    }
}
