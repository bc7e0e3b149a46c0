//! The text of a skill's conditions and rules, as the registry exports them
//! and errors quote them: read once per skill (`contract::evaluate`).

use skill_core::manifest::Severity;

use crate::model::caller::Caller;

/// The text of a skill's conditions and rules, as exported.
#[derive(Clone, Debug, Default)]
pub struct Conditions {
    /// The preconditions, in declaration order.
    pub preconditions: Vec<PreconditionInfo>,
    /// The postconditions.
    pub postconditions: Vec<PostconditionInfo>,
    /// The validation rules.
    pub validation_rules: Vec<ValidationRuleInfo>,
}

/// A precondition as registries write it.
#[derive(Clone, Debug)]
pub struct PreconditionInfo {
    /// Its Rust source.
    pub condition: &'static str,
    /// The code a refused input reports.
    pub error_code: &'static str,
    /// The message a refused input reports.
    pub message: &'static str,
}

/// A postcondition as registries write it.
#[derive(Clone, Debug)]
pub struct PostconditionInfo {
    /// Its Rust source.
    pub assertion: &'static str,
    /// What undoes the run's effects when it fails.
    pub rollback_action: Option<&'static str>,
}

/// A validation rule as registries write it.
#[derive(Clone, Debug)]
pub struct ValidationRuleInfo {
    /// Its id.
    pub rule_id: &'static str,
    /// Its Rust source.
    pub expression: &'static str,
    /// `error` rejects the output; `warning` notes it.
    pub severity: Severity,
    /// What a failed rule reports.
    pub message: &'static str,
}

/// A precondition's check written as a function, or as a closure whose
/// parameter types the macro cannot match to the skill's: the generated code
/// calls it through this trait, so a wrong signature gets this message, on the
/// check, naming the expected form.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this precondition check does not take the input `{I}`",
    label = "expected `fn(&{I}) -> bool` or `fn(&{I}, &Caller) -> bool`",
    note = "a precondition reads the input, and the caller if it takes a second parameter: write `|input: &{I}| ...`, `|input: &{I}, caller: &Caller| ...`, or a `fn` of that signature"
)]
pub trait PreconditionFn<I, M> {
    fn holds(&self, input: &I, caller: &Caller) -> bool;
}

/// A postcondition's check, as [`PreconditionFn`] is a precondition's.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this postcondition check does not take the output `{O}`",
    label = "expected `fn(&{O}) -> bool` or `fn(&{I}, &{O}) -> bool`",
    note = "a postcondition reads the output, or the input then the output: write `|output: &{O}| ...`, `|input: &{I}, output: &{O}| ...`, or a `fn` of that signature"
)]
pub trait PostconditionFn<I, O, M> {
    fn holds(&self, input: &I, output: &O) -> bool;
}

/// A validation rule's check, as [`PreconditionFn`] is a precondition's.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this validation rule does not take the input `{I}` and output `{O}`",
    label = "expected `fn(&{I}, &{O}) -> bool` (input first) or `fn(&{O}) -> bool`",
    note = "a validation rule reads the input then the output, or the output alone: write `|input: &{I}, output: &{O}| ...`, `|output: &{O}| ...`, or a `fn` of that signature"
)]
pub trait RuleFn<I, O, M> {
    fn holds(&self, input: &I, output: &O) -> bool;
}

/// Which parameters a condition function takes: the first value alone.
#[doc(hidden)]
pub enum One {}

/// Which parameters a condition function takes: both values.
#[doc(hidden)]
pub enum Two {}

impl<I, F: Fn(&I) -> bool> PreconditionFn<I, One> for F {
    fn holds(&self, input: &I, _: &Caller) -> bool {
        self(input)
    }
}

impl<I, F: Fn(&I, &Caller) -> bool> PreconditionFn<I, Two> for F {
    fn holds(&self, input: &I, caller: &Caller) -> bool {
        self(input, caller)
    }
}

impl<I, O, F: Fn(&O) -> bool> PostconditionFn<I, O, One> for F {
    fn holds(&self, _: &I, output: &O) -> bool {
        self(output)
    }
}

impl<I, O, F: Fn(&I, &O) -> bool> PostconditionFn<I, O, Two> for F {
    fn holds(&self, input: &I, output: &O) -> bool {
        self(input, output)
    }
}

impl<I, O, F: Fn(&O) -> bool> RuleFn<I, O, One> for F {
    fn holds(&self, _: &I, output: &O) -> bool {
        self(output)
    }
}

impl<I, O, F: Fn(&I, &O) -> bool> RuleFn<I, O, Two> for F {
    fn holds(&self, input: &I, output: &O) -> bool {
        self(input, output)
    }
}
