//! A skill's conditions and rules as data: its typed slices seen through
//! untyped views, evaluated by code compiled once for every skill.
//!
//! A check is a `fn(&Input) -> bool` (or over the caller, or the output); the
//! values it reads sit in [`Boxed`] boxes whose type is known by its `TypeId`.
//! Once the box's type is checked against the skill's, the check can be called
//! with the box's untyped pointer: a reference and a raw pointer to a sized
//! type are ABI-compatible, so the function pointer may be called through a
//! type that takes `*const u8`. The views are `#[repr(C)]` mirrors of the
//! public `#[repr(C)]` types `Precondition`, `Postcondition`,
//! `ValidationRule`, `InputCheck` and `OutputCheck`, which differ from them
//! only in the function pointers' parameter types (all function pointers have
//! one size and alignment). Walking the conditions in generic code instead
//! compiled the loops once per skill: the largest piece of each skill's glue.

use std::any::TypeId;

use skill_core::manifest::Severity;

use crate::contract::boxed::Boxed;
use crate::contract::conditions::{
    Conditions, PostconditionInfo, PreconditionInfo, ValidationRuleInfo,
};
use crate::contract::skill::{Postcondition, Precondition, Skill, ValidationRule};
use crate::model::caller::Caller;

/// Why a check did not pass.
#[derive(Debug)]
pub(crate) enum CheckFailed {
    /// Index into the skill's preconditions.
    Precondition(usize),
    /// Index into the skill's postconditions.
    Postcondition(usize),
    /// Index into the skill's validation rules (severity error).
    Rule(usize),
    /// A value is not of the skill's type: a runtime bug.
    Mismatch,
}

/// [`Precondition`], its check untyped.
#[repr(C)]
struct RawPrecondition {
    error_code: &'static str,
    message: &'static str,
    condition: &'static str,
    check: RawInputCheck,
}

/// [`InputCheck`](crate::contract::skill::InputCheck), untyped.
#[repr(C)]
#[expect(
    dead_code,
    reason = "never built: the typed checks are read through it"
)]
enum RawInputCheck {
    Input(unsafe fn(*const u8) -> bool),
    InputCaller(unsafe fn(*const u8, &Caller) -> bool),
}

/// [`Postcondition`], its check untyped.
#[repr(C)]
struct RawPostcondition {
    assertion: &'static str,
    rollback_action: Option<&'static str>,
    check: RawOutputCheck,
}

/// [`ValidationRule`], its check untyped.
#[repr(C)]
struct RawRule {
    rule_id: &'static str,
    expression: &'static str,
    severity: Severity,
    message: &'static str,
    check: RawOutputCheck,
}

/// [`OutputCheck`](crate::contract::skill::OutputCheck), untyped: the input
/// comes first, as there.
#[repr(C)]
#[expect(
    dead_code,
    reason = "never built: the typed checks are read through it"
)]
enum RawOutputCheck {
    Output(unsafe fn(*const u8) -> bool),
    InputOutput(unsafe fn(*const u8, *const u8) -> bool),
}

impl RawOutputCheck {
    /// # Safety
    /// `input` and `output` point to live values of the types the check was
    /// written for.
    /// `None` when the check reads the input and there is none.
    unsafe fn holds(&self, input: Option<*const u8>, output: *const u8) -> Option<bool> {
        // SAFETY: as the caller promised.
        unsafe {
            match (self, input) {
                (&RawOutputCheck::Output(f), _) => Some(f(output)),
                (&RawOutputCheck::InputOutput(f), Some(input)) => Some(f(input, output)),
                (RawOutputCheck::InputOutput(_), None) => None,
            }
        }
    }

    fn reads_input(&self) -> bool {
        matches!(self, RawOutputCheck::InputOutput(_))
    }
}

/// A skill's conditions and rules, and the types their checks read.
#[derive(Clone, Copy)]
pub(crate) struct Checks {
    input: TypeId,
    output: TypeId,
    pre: &'static [RawPrecondition],
    post: &'static [RawPostcondition],
    rules: &'static [RawRule],
}

impl Checks {
    /// The checks of skill `S`, a constant.
    pub(crate) const fn of<S: Skill>() -> Checks {
        let (pre, post, rules) = (S::PRECONDITIONS, S::POSTCONDITIONS, S::VALIDATION_RULES);
        // SAFETY: each raw type is the `#[repr(C)]` mirror of its typed,
        // `#[repr(C)]` counterpart (same fields in the same order, the enums'
        // variants in the same order), so a slice of one is a slice of the
        // other (the layouts are asserted equal below). The untyped function
        // pointers are only called with pointers to values of `S::Input` and
        // `S::Output`, after the boxes' types are checked against `input` and
        // `output`.
        unsafe {
            Checks {
                input: TypeId::of::<S::Input>(),
                output: TypeId::of::<S::Output>(),
                pre: &*(pre as *const [Precondition<S>] as *const [RawPrecondition]),
                post: &*(post as *const [Postcondition<S>] as *const [RawPostcondition]),
                rules: &*(rules as *const [ValidationRule<S>] as *const [RawRule]),
            }
        }
    }

    /// Whether there are preconditions.
    pub(crate) fn any_before(&self) -> bool {
        !self.pre.is_empty()
    }

    /// Whether there are postconditions or validation rules.
    pub(crate) fn any_after(&self) -> bool {
        !self.post.is_empty() || !self.rules.is_empty()
    }

    /// Whether a postcondition or rule reads the input, which the handler
    /// consumed: only then is it decoded again for them.
    pub(crate) fn after_reads_input(&self) -> bool {
        self.post.iter().any(|p| p.check.reads_input())
            || self.rules.iter().any(|r| r.check.reads_input())
    }

    /// The preconditions, over the input and the caller.
    pub(crate) fn before(&self, input: &Boxed, caller: &Caller) -> Result<(), CheckFailed> {
        let Some(input) = input.get(self.input) else {
            return Err(CheckFailed::Mismatch);
        };
        for (i, p) in self.pre.iter().enumerate() {
            // SAFETY: `input` points to a live `S::Input` (type checked).
            let holds = unsafe {
                match p.check {
                    RawInputCheck::Input(f) => f(input),
                    RawInputCheck::InputCaller(f) => f(input, caller),
                }
            };
            if !holds {
                return Err(CheckFailed::Precondition(i));
            }
        }
        Ok(())
    }

    /// The postconditions, then the validation rules, over the input (absent
    /// when none of them reads it: [`Checks::after_reads_input`]) and the
    /// output. Failed rules of lower severity than error are pushed to
    /// `notes` by index.
    pub(crate) fn after(
        &self,
        input: Option<&Boxed>,
        output: &Boxed,
        notes: &mut Vec<usize>,
    ) -> Result<(), CheckFailed> {
        let input = match input {
            Some(input) => match input.get(self.input) {
                Some(input) => Some(input as *const u8),
                None => return Err(CheckFailed::Mismatch),
            },
            None => None,
        };
        let Some(output) = output.get(self.output) else {
            return Err(CheckFailed::Mismatch);
        };
        for (i, p) in self.post.iter().enumerate() {
            // SAFETY: live `S::Input` and `S::Output` (types checked).
            match unsafe { p.check.holds(input, output) } {
                Some(true) => {}
                Some(false) => return Err(CheckFailed::Postcondition(i)),
                None => return Err(CheckFailed::Mismatch),
            }
        }
        for (i, r) in self.rules.iter().enumerate() {
            // SAFETY: as above.
            match unsafe { r.check.holds(input, output) } {
                Some(true) => {}
                Some(false) if r.severity == Severity::Error => return Err(CheckFailed::Rule(i)),
                Some(false) => notes.push(i),
                None => return Err(CheckFailed::Mismatch),
            }
        }
        Ok(())
    }

    /// The text of the conditions and rules, as exported.
    pub(crate) fn text(&self) -> Conditions {
        Conditions {
            preconditions: self
                .pre
                .iter()
                .map(|p| PreconditionInfo {
                    condition: p.condition,
                    error_code: p.error_code,
                    message: p.message,
                })
                .collect(),
            postconditions: self
                .post
                .iter()
                .map(|p| PostconditionInfo {
                    assertion: p.assertion,
                    rollback_action: p.rollback_action,
                })
                .collect(),
            validation_rules: self
                .rules
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
}

/// The layouts the views rely on, checked with one skill: the typed structs'
/// layouts depend on the skill only through function pointers, which all have
/// one size and alignment.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};

    use skill_core::failure::Never;
    use skill_core::manifest::Manifest;

    use crate::contract::skill::{Ctx, InputCheck, OutputCheck};

    struct Probe;
    unsafe impl Skill for Probe {
        type Input = ();
        type Output = ();
        type Error = Never;
        const MANIFEST: &'static Manifest = &Manifest::DEFAULT;
        async fn run(_: Ctx<'_, Self>, (): ()) -> Result<(), Never> {
            Ok(())
        }
    }

    macro_rules! same_layout {
        ($typed:ty, $raw:ty) => {
            assert!(size_of::<$typed>() == size_of::<$raw>());
            assert!(align_of::<$typed>() == align_of::<$raw>());
        };
    }
    same_layout!(InputCheck<()>, RawInputCheck);
    same_layout!(OutputCheck<(), ()>, RawOutputCheck);
    same_layout!(Precondition<Probe>, RawPrecondition);
    same_layout!(Postcondition<Probe>, RawPostcondition);
    same_layout!(ValidationRule<Probe>, RawRule);
    assert!(offset_of!(Precondition<Probe>, check) == offset_of!(RawPrecondition, check));
    assert!(offset_of!(Precondition<Probe>, condition) == offset_of!(RawPrecondition, condition));
    assert!(offset_of!(Postcondition<Probe>, check) == offset_of!(RawPostcondition, check));
    assert!(
        offset_of!(Postcondition<Probe>, rollback_action)
            == offset_of!(RawPostcondition, rollback_action)
    );
    assert!(offset_of!(ValidationRule<Probe>, check) == offset_of!(RawRule, check));
    assert!(offset_of!(ValidationRule<Probe>, severity) == offset_of!(RawRule, severity));
    assert!(offset_of!(ValidationRule<Probe>, message) == offset_of!(RawRule, message));
};
