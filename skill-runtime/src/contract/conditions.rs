//! The text of a skill's conditions and rules, as the registry exports them
//! and errors quote them: read once per skill from its typed slices.

use skill_core::manifest::Severity;

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

// Building the infos is done by the non-generic helpers, compiled once; the
// walk over the typed slices is `typed::<S>`'s `Op::Text`.
impl Conditions {
    #[inline(never)]
    pub(crate) fn push_precondition(
        &mut self,
        condition: &'static str,
        error_code: &'static str,
        message: &'static str,
    ) {
        self.preconditions.push(PreconditionInfo {
            condition,
            error_code,
            message,
        });
    }

    #[inline(never)]
    pub(crate) fn push_postcondition(
        &mut self,
        assertion: &'static str,
        rollback_action: Option<&'static str>,
    ) {
        self.postconditions.push(PostconditionInfo {
            assertion,
            rollback_action,
        });
    }

    #[inline(never)]
    pub(crate) fn push_rule(
        &mut self,
        rule_id: &'static str,
        expression: &'static str,
        severity: Severity,
        message: &'static str,
    ) {
        self.validation_rules.push(ValidationRuleInfo {
            rule_id,
            expression,
            severity,
            message,
        });
    }
}
