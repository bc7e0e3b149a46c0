//! The type-erased form of a skill that `inventory` collects, one per skill.
//!
//! Everything generic over the skill is here, and kept as small as it can be: decode
//! the input, run the handler, encode the output, evaluate the typed conditions. The
//! invocation pipeline itself (policies, validation, records) is written once, over
//! these function pointers, so a crate of N skills compiles N small glue functions
//! instead of N copies of the pipeline.

use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ctx::{Ctx, Invocation};
use crate::envelope::Caller;
use crate::failure::{FailureMode, FailureModes};
use crate::manifest::Manifest;
use crate::schema::RootFns;
use crate::skill::{Severity, Skill};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A skill's input or output behind the erased table. An input is boxed as an
/// `Option` of the input type, so the handler can take it out through a
/// mutable reference (a `downcast` of the box itself is much more code per
/// skill than a `downcast_mut`).
pub(crate) type AnyBox = Box<dyn Any + Send>;

/// A borrowed input or output behind the erased table.
pub(crate) type AnyRef<'a> = &'a (dyn Any + Send);

/// A borrowed input that the handler takes out of its `Option`.
pub(crate) type AnyMut<'a> = &'a mut (dyn Any + Send);

/// A handler's own failure: its failure mode and its message.
#[derive(Debug)]
pub(crate) struct HandlerFailure {
    pub(crate) mode: &'static FailureMode,
    pub(crate) message: String,
}

impl HandlerFailure {
    fn mismatch() -> HandlerFailure {
        HandlerFailure {
            mode: &crate::failure::INTERNAL,
            message: "the input is not of the skill's input type".to_owned(),
        }
    }
}

/// Why a typed check did not pass.
#[derive(Debug)]
pub(crate) enum CheckFailed {
    /// Index into the skill's preconditions.
    Precondition(usize),
    /// Index into the skill's postconditions.
    Postcondition(usize),
    /// Index into the skill's validation rules (severity error).
    Rule(usize),
    /// A value behind the erased table is not of the skill's type: a runtime bug.
    Mismatch,
}

type PreconditionsFn = fn(AnyRef<'_>, &Caller) -> Result<(), CheckFailed>;
type RunFn = fn(&Arc<Invocation>, AnyMut<'_>) -> BoxFuture<Result<AnyBox, HandlerFailure>>;
type PostconditionsFn = fn(AnyRef<'_>, AnyRef<'_>) -> Result<(), CheckFailed>;
type RulesFn = fn(AnyRef<'_>, AnyRef<'_>, &mut Vec<usize>) -> Result<(), CheckFailed>;

/// The typed functions of one skill, behind pointers.
pub(crate) struct Erased {
    /// The input and output types' schema functions: data, not code, so
    /// nothing schema-related is compiled per skill.
    pub(crate) input_root: &'static RootFns,
    pub(crate) output_root: &'static RootFns,
    pub(crate) conditions: ConditionsOf,
    pub(crate) decode: fn(&Value) -> Result<AnyBox, serde_json::Error>,
    /// `None` when the skill has no preconditions (nothing is compiled for it).
    pub(crate) preconditions: Option<PreconditionsFn>,
    /// Takes the input out of its box (the caller frees the box).
    pub(crate) run: RunFn,
    pub(crate) encode: fn(AnyRef<'_>) -> Option<Result<Value, serde_json::Error>>,
    /// `None` when the skill has no postconditions.
    pub(crate) postconditions: Option<PostconditionsFn>,
    /// Failed rules of lower severity than error are pushed to the vector by
    /// index. `None` when the skill has no validation rules.
    pub(crate) rules: Option<RulesFn>,
}

impl Erased {
    /// Whether anything is checked after the handler (so the input is decoded
    /// again for it).
    pub(crate) fn checks_after(&self) -> bool {
        self.postconditions.is_some() || self.rules.is_some()
    }

    /// Postconditions, then validation rules.
    pub(crate) fn after(
        &self,
        input: AnyRef<'_>,
        output: AnyRef<'_>,
        notes: &mut Vec<usize>,
    ) -> Result<(), CheckFailed> {
        if let Some(postconditions) = self.postconditions {
            postconditions(input, output)?;
        }
        match self.rules {
            Some(rules) => rules(input, output, notes),
            None => Ok(()),
        }
    }
}

/// One skill as submitted to the registry: its manifest plus the functions that
/// produce its schemas and run it. Build it with [`SkillEntry::of`].
pub struct SkillEntry {
    pub manifest: &'static Manifest,
    pub failure_modes: &'static [FailureMode],
    pub(crate) erased: Erased,
}

inventory::collect!(SkillEntry);

impl SkillEntry {
    pub const fn of<S: Skill>() -> SkillEntry {
        SkillEntry {
            manifest: S::MANIFEST,
            failure_modes: <S::Error as FailureModes>::FAILURE_MODES,
            erased: Erased {
                input_root: RootFns::of::<S::Input>(),
                output_root: RootFns::of::<S::Output>(),
                conditions: ConditionsOf::of::<S>(),
                decode: decode::<S>,
                // Chosen while the registry entry is evaluated at compile time,
                // so a skill without checks instantiates no checking code.
                preconditions: if S::PRECONDITIONS.is_empty() {
                    None
                } else {
                    Some(preconditions::<S>)
                },
                run: run::<S>,
                encode: encode::<S>,
                postconditions: if S::POSTCONDITIONS.is_empty() {
                    None
                } else {
                    Some(postconditions::<S>)
                },
                rules: if S::VALIDATION_RULES.is_empty() {
                    None
                } else {
                    Some(rules::<S>)
                },
            },
        }
    }
}

/// Where a skill's condition text comes from: the table `#[skill]` writes
/// ([`Skill::CONDITION_TEXT`]), or, for a hand-written skill without one, a walk
/// of its condition slices (generic, so compiled only for such skills).
pub(crate) enum ConditionsOf {
    Text(&'static ConditionText),
    Walk(fn() -> Conditions),
}

impl ConditionsOf {
    const fn of<S: Skill>() -> ConditionsOf {
        let t = S::CONDITION_TEXT;
        if t.preconditions.len() == S::PRECONDITIONS.len()
            && t.postconditions.len() == S::POSTCONDITIONS.len()
            && t.validation_rules.len() == S::VALIDATION_RULES.len()
        {
            ConditionsOf::Text(t)
        } else {
            ConditionsOf::Walk(conditions_of::<S>)
        }
    }

    pub(crate) fn get(&self) -> Conditions {
        match self {
            ConditionsOf::Text(t) => Conditions {
                preconditions: t.preconditions.to_vec(),
                postconditions: t.postconditions.to_vec(),
                validation_rules: t.validation_rules.to_vec(),
            },
            ConditionsOf::Walk(f) => f(),
        }
    }
}

/// The text of a skill's conditions and rules, in the order of its condition
/// slices, as a constant (see [`Skill::CONDITION_TEXT`]).
#[derive(Debug)]
pub struct ConditionText {
    pub preconditions: &'static [PreconditionInfo],
    pub postconditions: &'static [PostconditionInfo],
    pub validation_rules: &'static [ValidationRuleInfo],
}

impl ConditionText {
    pub const NONE: ConditionText = ConditionText {
        preconditions: &[],
        postconditions: &[],
        validation_rules: &[],
    };
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

// The generic part only walks the skill's const slices; building the infos is
// done by the non-generic helpers, which are compiled once.
fn conditions_of<S: Skill>() -> Conditions {
    let mut c = Conditions::default();
    let mut i = 0;
    while i < S::PRECONDITIONS.len() {
        let p = &S::PRECONDITIONS[i];
        c.push_precondition(p.condition, p.error_code, p.message);
        i += 1;
    }
    let mut i = 0;
    while i < S::POSTCONDITIONS.len() {
        let p = &S::POSTCONDITIONS[i];
        c.push_postcondition(p.assertion, p.rollback_action);
        i += 1;
    }
    let mut i = 0;
    while i < S::VALIDATION_RULES.len() {
        let r = &S::VALIDATION_RULES[i];
        c.push_rule(r.rule_id, r.expression, r.severity, r.message);
        i += 1;
    }
    c
}

impl Conditions {
    #[inline(never)]
    fn push_precondition(
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
    fn push_postcondition(
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
    fn push_rule(
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

fn decode<S: Skill>(value: &Value) -> Result<AnyBox, serde_json::Error> {
    match S::Input::deserialize(crate::de::Params(value)) {
        Ok(input) => Ok(Box::new(Some(input))),
        Err(e) => Err(e),
    }
}

fn preconditions<S: Skill>(input: &(dyn Any + Send), caller: &Caller) -> Result<(), CheckFailed> {
    let Some(Some(input)) = input.downcast_ref::<Option<S::Input>>() else {
        return Err(CheckFailed::Mismatch);
    };
    let mut i = 0;
    while i < S::PRECONDITIONS.len() {
        if !S::PRECONDITIONS[i].check.holds(input, caller) {
            return Err(CheckFailed::Precondition(i));
        }
        i += 1;
    }
    Ok(())
}

fn run<S: Skill>(
    inv: &Arc<Invocation>,
    input: AnyMut<'_>,
) -> BoxFuture<Result<AnyBox, HandlerFailure>> {
    // Nothing with drop glue is held across a call until the handler is
    // called (the invocation is borrowed): this function is compiled once per
    // skill, and each such value adds unwinding paths to it.
    let input = match input.downcast_mut::<Option<S::Input>>() {
        Some(slot) => slot.take(),
        None => None,
    };
    match input {
        Some(input) => Box::pin(Erase::<S, _> {
            future: S::run(
                Ctx {
                    inv: Arc::clone(inv),
                    _skill: PhantomData,
                },
                input,
            ),
            _skill: PhantomData,
        }),
        None => mismatched_run(),
    }
}

/// Not generic: the answer to an input of the wrong type.
fn mismatched_run() -> BoxFuture<Result<AnyBox, HandlerFailure>> {
    Box::pin(std::future::ready(Err(HandlerFailure::mismatch())))
}

pin_project_lite::pin_project! {
    /// The handler's future with its output boxed and its error turned into a
    /// failure mode: a plain `poll` is much less code per skill than an `async`
    /// block doing the same.
    struct Erase<S, F> {
        #[pin]
        future: F,
        _skill: PhantomData<fn() -> S>,
    }
}

impl<S: Skill, F> Future for Erase<S, F>
where
    F: Future<Output = Result<S::Output, S::Error>>,
{
    type Output = Result<AnyBox, HandlerFailure>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().future.poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(output)) => Poll::Ready(Ok(Box::new(output))),
            Poll::Ready(Err(e)) => Poll::Ready(Err(HandlerFailure {
                mode: e.failure_mode(),
                message: display(&e),
            })),
        }
    }
}

#[expect(
    clippy::manual_map,
    reason = "`Option::map` with a closure is two more functions compiled per skill"
)]
fn encode<S: Skill>(output: &(dyn Any + Send)) -> Option<Result<Value, serde_json::Error>> {
    match output.downcast_ref::<S::Output>() {
        Some(output) => Some(output.serialize(serde_json::value::Serializer)),
        None => None,
    }
}

/// Not generic: `to_string` would be instantiated for every skill's error type.
fn display(e: &dyn std::fmt::Display) -> String {
    e.to_string()
}

fn postconditions<S: Skill>(input: AnyRef<'_>, output: AnyRef<'_>) -> Result<(), CheckFailed> {
    let (Some(Some(input)), Some(output)) = (
        input.downcast_ref::<Option<S::Input>>(),
        output.downcast_ref::<S::Output>(),
    ) else {
        return Err(CheckFailed::Mismatch);
    };
    let mut i = 0;
    while i < S::POSTCONDITIONS.len() {
        if !S::POSTCONDITIONS[i].check.holds(input, output) {
            return Err(CheckFailed::Postcondition(i));
        }
        i += 1;
    }
    Ok(())
}

fn rules<S: Skill>(
    input: AnyRef<'_>,
    output: AnyRef<'_>,
    notes: &mut Vec<usize>,
) -> Result<(), CheckFailed> {
    let (Some(Some(input)), Some(output)) = (
        input.downcast_ref::<Option<S::Input>>(),
        output.downcast_ref::<S::Output>(),
    ) else {
        return Err(CheckFailed::Mismatch);
    };
    let mut i = 0;
    while i < S::VALIDATION_RULES.len() {
        let r = &S::VALIDATION_RULES[i];
        if !r.check.holds(input, output) {
            if r.severity == Severity::Error {
                return Err(CheckFailed::Rule(i));
            }
            notes.push(i);
        }
        i += 1;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::failure::Never;
    use crate::skill::{InputCheck, OutputCheck, Postcondition, Precondition};

    #[derive(Deserialize, schemars::JsonSchema)]
    struct In {
        n: u32,
    }

    #[derive(Serialize, schemars::JsonSchema)]
    struct Out {
        n: u32,
    }

    /// A hand-written skill with one precondition and one postcondition, and
    /// whatever else is given (a text table).
    macro_rules! with_conditions {
        ($name:ident $($extra:item)*) => {
            struct $name;

            impl Skill for $name {
                type Input = In;
                type Output = Out;
                type Error = Never;
                const MANIFEST: &'static Manifest = &Manifest::DEFAULT;
                const PRECONDITIONS: &'static [Precondition<Self>] = &[Precondition {
                    error_code: "ZERO",
                    message: "n must not be zero",
                    condition: "n != 0",
                    check: InputCheck::Input(|i: &In| i.n != 0),
                }];
                const POSTCONDITIONS: &'static [Postcondition<Self>] = &[Postcondition {
                    assertion: "same n",
                    rollback_action: None,
                    check: OutputCheck::InputOutput(|i: &In, o: &Out| i.n == o.n),
                }];
                $($extra)*
                async fn run(_ctx: Ctx<Self>, input: In) -> Result<Out, Never> {
                    Ok(Out { n: input.n })
                }
            }
        };
    }

    // No text table: the slices are walked.
    with_conditions!(Walked);

    // The same, with the table `#[skill]` writes.
    with_conditions!(
        Tabled
        const CONDITION_TEXT: &'static ConditionText = &ConditionText {
            preconditions: &[PreconditionInfo {
                condition: "n != 0",
                error_code: "ZERO",
                message: "n must not be zero",
            }],
            postconditions: &[PostconditionInfo {
                assertion: "same n",
                rollback_action: None,
            }],
            validation_rules: &[],
        };
    );

    struct Bare;

    impl Skill for Bare {
        type Input = In;
        type Output = Out;
        type Error = Never;
        const MANIFEST: &'static Manifest = &Manifest::DEFAULT;
        async fn run(_ctx: Ctx<Self>, input: In) -> Result<Out, Never> {
            Ok(Out { n: input.n })
        }
    }

    fn texts(c: &Conditions) -> (Vec<&str>, Vec<&str>, usize) {
        (
            c.preconditions
                .iter()
                .flat_map(|p| [p.condition, p.error_code, p.message])
                .collect(),
            c.postconditions.iter().map(|p| p.assertion).collect(),
            c.validation_rules.len(),
        )
    }

    #[test]
    fn conditions_text_comes_from_the_table_or_from_the_slices() {
        let walked = ConditionsOf::of::<Walked>();
        let tabled = ConditionsOf::of::<Tabled>();
        assert!(matches!(walked, ConditionsOf::Walk(_)));
        assert!(matches!(tabled, ConditionsOf::Text(_)));
        let want = (
            vec!["n != 0", "ZERO", "n must not be zero"],
            vec!["same n"],
            0,
        );
        assert_eq!(texts(&walked.get()), want);
        assert_eq!(texts(&tabled.get()), want);
        // No conditions at all: the empty default table, nothing to walk.
        assert!(matches!(ConditionsOf::of::<Bare>(), ConditionsOf::Text(_)));
    }
}
