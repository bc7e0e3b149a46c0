//! The type-erased form of a skill that `inventory` collects, one per skill.
//!
//! Everything generic over the skill is here, and kept as small as it can be: decode
//! the input, run the handler, encode the output, evaluate the typed conditions,
//! all in one function per skill ([`typed`]), plus the handler's future polled
//! through [`Handler`]. The invocation pipeline itself (policies, validation,
//! records) is written once, over that function pointer, so a crate of N skills
//! compiles a few small functions per skill instead of N copies of the pipeline.
//! In the compile-time benchmark (`bench/compile-time.py`) each function compiled
//! per skill costs rustc a few hundred thousand instructions whatever its size,
//! which is why there are so few of them.

use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use skill_core::failure::{FailureMode, FailureModes};
use skill_core::manifest::{Manifest, Severity};

use crate::contract::conditions::Conditions;
use crate::contract::de::Params;
use crate::contract::invocation::Invocation;
use crate::contract::skill::{Ctx, InputCheck, OutputCheck, Skill};
use crate::model::caller::Caller;
use crate::schema::generate::RootFns;

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
            mode: &INTERNAL,
            message: "the input is not of the skill's input type".to_owned(),
        }
    }
}

/// The failure mode of an invocation that broke inside the runtime itself.
static INTERNAL: FailureMode = FailureMode {
    code: "internal",
    description: "The runtime could not run the skill; this is a bug in skill-runtime.",
    retryable: false,
};

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

/// What the invocation pipeline asks of a skill's typed code. One function per
/// skill answers every request ([`typed`]): each function compiled per skill
/// costs more to build than the lines in it, so the table has one entry where
/// it would otherwise have five.
pub(crate) enum Op<'a> {
    /// Decode the params into a boxed `Option` of the input type.
    Decode(&'a Value),
    /// The preconditions, over the input and the caller.
    Before(AnyRef<'a>, &'a Caller),
    /// Take the input out of its box (the caller frees the box) and start the
    /// handler.
    Run(&'a Arc<Invocation>, AnyMut<'a>),
    /// Serialize the output.
    Encode(AnyRef<'a>),
    /// The postconditions, then the validation rules, over the input and the
    /// output. Failed rules of lower severity than error are pushed to the
    /// vector by index.
    After(AnyRef<'a>, AnyRef<'a>, &'a mut Vec<usize>),
    /// The text of the conditions and rules, as exported.
    Text(&'a mut Conditions),
}

/// The answer to an [`Op`], variant for variant.
pub(crate) enum Done {
    Decoded(Result<AnyBox, serde_json::Error>),
    Checked(Result<(), CheckFailed>),
    Running(Running),
    Encoded(Option<Result<Value, serde_json::Error>>),
    Listed,
}

/// The typed code of one skill, behind a pointer.
pub(crate) struct Erased {
    /// The input and output types' schema functions: data, not code, so
    /// nothing schema-related is compiled per skill.
    pub(crate) input_root: &'static RootFns,
    pub(crate) output_root: &'static RootFns,
    typed: fn(Op<'_>) -> Done,
    /// Whether the skill has preconditions.
    pub(crate) checks_before: bool,
    /// Whether it has postconditions or validation rules (the input is then
    /// decoded again after the handler, which consumed it).
    pub(crate) checks_after: bool,
}

// An answer of the wrong variant cannot happen (`typed` answers each request
// in kind); it is reported as the values being of the wrong type, not as a panic.
impl Erased {
    pub(crate) fn decode(&self, params: &Value) -> Result<AnyBox, serde_json::Error> {
        match (self.typed)(Op::Decode(params)) {
            Done::Decoded(decoded) => decoded,
            _ => Err(serde::de::Error::custom(WRONG_ANSWER)),
        }
    }

    pub(crate) fn before(&self, input: AnyRef<'_>, caller: &Caller) -> Result<(), CheckFailed> {
        match (self.typed)(Op::Before(input, caller)) {
            Done::Checked(checked) => checked,
            _ => Err(CheckFailed::Mismatch),
        }
    }

    pub(crate) fn run(&self, inv: &Arc<Invocation>, input: AnyMut<'_>) -> Running {
        match (self.typed)(Op::Run(inv, input)) {
            Done::Running(running) => running,
            _ => Running::Mismatch,
        }
    }

    pub(crate) fn encode(&self, output: AnyRef<'_>) -> Option<Result<Value, serde_json::Error>> {
        match (self.typed)(Op::Encode(output)) {
            Done::Encoded(encoded) => encoded,
            _ => None,
        }
    }

    pub(crate) fn after(
        &self,
        input: AnyRef<'_>,
        output: AnyRef<'_>,
        notes: &mut Vec<usize>,
    ) -> Result<(), CheckFailed> {
        match (self.typed)(Op::After(input, output, notes)) {
            Done::Checked(checked) => checked,
            _ => Err(CheckFailed::Mismatch),
        }
    }

    /// The text of the skill's conditions and rules, read from its typed
    /// slices (at registry build, once per skill).
    pub(crate) fn conditions(&self) -> Conditions {
        let mut conditions = Conditions::default();
        (self.typed)(Op::Text(&mut conditions));
        conditions
    }
}

const WRONG_ANSWER: &str = "a skill's typed code answered another request than the one asked";

/// One skill as submitted to the registry: its manifest plus the functions that
/// produce its schemas and run it. Build it with [`SkillEntry::of`].
pub struct SkillEntry {
    /// The skill's manifest.
    pub manifest: &'static Manifest,
    /// Its failure modes, from its error type.
    pub failure_modes: &'static [FailureMode],
    pub(crate) erased: Erased,
}

inventory::collect!(SkillEntry);

impl SkillEntry {
    /// The registration of skill `S` (what `#[skill]` submits).
    pub const fn of<S: Skill>() -> SkillEntry {
        SkillEntry {
            manifest: S::MANIFEST,
            failure_modes: <S::Error as FailureModes>::FAILURE_MODES,
            erased: Erased {
                input_root: RootFns::of::<S::Input>(),
                output_root: RootFns::of::<S::Output>(),
                typed: typed::<S>,
                checks_before: has_preconditions::<S>(),
                checks_after: has_checks_after::<S>(),
            },
        }
    }
}

const fn has_preconditions<S: Skill>() -> bool {
    !S::PRECONDITIONS.is_empty()
}

const fn has_checks_after<S: Skill>() -> bool {
    !S::POSTCONDITIONS.is_empty() || !S::VALIDATION_RULES.is_empty()
}

/// A skill's typed code: every [`Op`], in one function. The checks of a skill
/// without any are cut at monomorphization (the `const` guards), so they
/// compile to nothing.
///
/// The condition loops look alike but each walks a differently typed slice,
/// and each check is matched in place rather than through `InputCheck::holds`
/// or `OutputCheck::holds`: a shared helper, even `#[inline(always)]`, is one
/// more function compiled per skill (measured: +15 M instructions for the
/// 50-skill benchmark crate with the `holds` calls).
#[expect(
    clippy::manual_map,
    reason = "`Option::map` with a closure is two more functions compiled per skill"
)]
fn typed<S: Skill>(op: Op<'_>) -> Done {
    match op {
        Op::Decode(value) => Done::Decoded(match S::Input::deserialize(Params(value)) {
            Ok(input) => Ok(Box::new(Some(input))),
            Err(e) => Err(e),
        }),
        Op::Run(inv, input) => {
            // Nothing with drop glue is held across a call until the handler
            // is called (the invocation is borrowed): each such value would add
            // unwinding paths to this function.
            let input = match <dyn Any>::downcast_mut::<Option<S::Input>>(input) {
                Some(slot) => slot.take(),
                None => None,
            };
            Done::Running(match input {
                Some(input) => {
                    let handler: Box<dyn Handler> = Box::new(S::run(
                        Ctx {
                            inv: Arc::clone(inv),
                            _skill: PhantomData,
                        },
                        input,
                    ));
                    // Pinned once erased: `Box::pin` would be one more function
                    // per skill.
                    Running::Handler(Box::into_pin(handler))
                }
                None => Running::Mismatch,
            })
        }
        Op::Encode(output) => Done::Encoded(match <dyn Any>::downcast_ref::<S::Output>(output) {
            Some(output) => Some(output.serialize(serde_json::value::Serializer)),
            None => None,
        }),
        Op::Before(input, caller) if const { has_preconditions::<S>() } => {
            let Some(Some(input)) = <dyn Any>::downcast_ref::<Option<S::Input>>(input) else {
                return Done::Checked(Err(CheckFailed::Mismatch));
            };
            let mut i = 0;
            while i < S::PRECONDITIONS.len() {
                let holds = match S::PRECONDITIONS[i].check {
                    InputCheck::Input(f) => f(input),
                    InputCheck::InputCaller(f) => f(input, caller),
                };
                if !holds {
                    return Done::Checked(Err(CheckFailed::Precondition(i)));
                }
                i += 1;
            }
            Done::Checked(Ok(()))
        }
        Op::After(input, output, notes) if const { has_checks_after::<S>() } => {
            let (Some(Some(input)), Some(output)) = (
                <dyn Any>::downcast_ref::<Option<S::Input>>(input),
                <dyn Any>::downcast_ref::<S::Output>(output),
            ) else {
                return Done::Checked(Err(CheckFailed::Mismatch));
            };
            let mut i = 0;
            while const { !S::POSTCONDITIONS.is_empty() } && i < S::POSTCONDITIONS.len() {
                let holds = match S::POSTCONDITIONS[i].check {
                    OutputCheck::Output(f) => f(output),
                    OutputCheck::InputOutput(f) => f(input, output),
                };
                if !holds {
                    return Done::Checked(Err(CheckFailed::Postcondition(i)));
                }
                i += 1;
            }
            let mut i = 0;
            while const { !S::VALIDATION_RULES.is_empty() } && i < S::VALIDATION_RULES.len() {
                let r = &S::VALIDATION_RULES[i];
                let holds = match r.check {
                    OutputCheck::Output(f) => f(output),
                    OutputCheck::InputOutput(f) => f(input, output),
                };
                if !holds {
                    if r.severity == Severity::Error {
                        return Done::Checked(Err(CheckFailed::Rule(i)));
                    }
                    notes.push(i);
                }
                i += 1;
            }
            Done::Checked(Ok(()))
        }
        Op::Text(c) => {
            let mut i = 0;
            while const { has_preconditions::<S>() } && i < S::PRECONDITIONS.len() {
                let p = &S::PRECONDITIONS[i];
                c.push_precondition(p.condition, p.error_code, p.message);
                i += 1;
            }
            let mut i = 0;
            while const { !S::POSTCONDITIONS.is_empty() } && i < S::POSTCONDITIONS.len() {
                let p = &S::POSTCONDITIONS[i];
                c.push_postcondition(p.assertion, p.rollback_action);
                i += 1;
            }
            let mut i = 0;
            while const { !S::VALIDATION_RULES.is_empty() } && i < S::VALIDATION_RULES.len() {
                let r = &S::VALIDATION_RULES[i];
                c.push_rule(r.rule_id, r.expression, r.severity, r.message);
                i += 1;
            }
            Done::Listed
        }
        // Asked only when `checks_before` or `checks_after` says so.
        Op::Before(..) | Op::After(..) => Done::Checked(Ok(())),
    }
}

/// A handler's future behind a table, polled for its output boxed and its
/// error turned into a failure mode. Implemented for the handler's future
/// itself, not for a wrapper around it: a wrapper would compile its pin
/// projection and its drop glue once per skill.
pub(crate) trait Handler: Send {
    fn poll_erased(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<AnyBox, HandlerFailure>>;
}

impl<F, O, E> Handler for F
where
    F: Future<Output = Result<O, E>> + Send,
    O: Any + Send,
    E: FailureModes + std::fmt::Display,
{
    fn poll_erased(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<AnyBox, HandlerFailure>> {
        match self.poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(output)) => Poll::Ready(Ok(Box::new(output))),
            Poll::Ready(Err(e)) => Poll::Ready(Err(HandlerFailure {
                mode: e.failure_mode(),
                message: display(&e),
            })),
        }
    }
}

/// A running handler, as the invocation pipeline polls it (not generic).
pub(crate) enum Running {
    Handler(Pin<Box<dyn Handler>>),
    /// The input was not of the skill's input type: a runtime bug.
    Mismatch,
}

impl Future for Running {
    type Output = Result<AnyBox, HandlerFailure>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Running::Handler(handler) => handler.as_mut().poll_erased(cx),
            Running::Mismatch => Poll::Ready(Err(HandlerFailure::mismatch())),
        }
    }
}

/// Not generic: `to_string` would be instantiated for every skill's error type.
fn display(e: &dyn std::fmt::Display) -> String {
    e.to_string()
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
    use crate::contract::skill::{Postcondition, Precondition, ValidationRule};
    use skill_core::failure::Never;

    #[derive(Deserialize, schemars::JsonSchema)]
    struct In {
        n: u32,
    }

    #[derive(Serialize, schemars::JsonSchema)]
    struct Out {
        n: u32,
    }

    /// A hand-written skill with a precondition, a postcondition and a rule.
    struct Checked;

    impl Skill for Checked {
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
            rollback_action: Some("undo"),
            check: OutputCheck::InputOutput(|i: &In, o: &Out| i.n == o.n),
        }];
        const VALIDATION_RULES: &'static [ValidationRule<Self>] = &[ValidationRule {
            rule_id: "small",
            expression: "o.n < 10",
            severity: Severity::Warning,
            message: "n is large",
            check: OutputCheck::Output(|o: &Out| o.n < 10),
        }];
        async fn run(_ctx: Ctx<Self>, input: In) -> Result<Out, Never> {
            Ok(Out { n: input.n })
        }
    }

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

    #[test]
    fn conditions_text_is_read_from_the_typed_slices() {
        let checked = SkillEntry::of::<Checked>().erased;
        assert!(checked.checks_before && checked.checks_after);
        let c = checked.conditions();
        let pre: Vec<_> = c
            .preconditions
            .iter()
            .flat_map(|p| [p.condition, p.error_code, p.message])
            .collect();
        assert_eq!(pre, ["n != 0", "ZERO", "n must not be zero"]);
        let post: Vec<_> = c
            .postconditions
            .iter()
            .map(|p| (p.assertion, p.rollback_action))
            .collect();
        assert_eq!(post, [("same n", Some("undo"))]);
        let rules: Vec<_> = c
            .validation_rules
            .iter()
            .map(|r| (r.rule_id, r.expression, r.severity, r.message))
            .collect();
        assert_eq!(
            rules,
            [("small", "o.n < 10", Severity::Warning, "n is large")]
        );

        // No conditions at all: nothing to check, nothing to list.
        let bare = SkillEntry::of::<Bare>().erased;
        assert!(!bare.checks_before && !bare.checks_after);
        let c = bare.conditions();
        assert!(
            c.preconditions.is_empty()
                && c.postconditions.is_empty()
                && c.validation_rules.is_empty()
        );
    }

    #[test]
    fn checks_run_on_the_typed_values() {
        let e = SkillEntry::of::<Checked>().erased;
        let caller = Caller::default();
        let zero: AnyBox = Box::new(Some(In { n: 0 }));
        let one: AnyBox = Box::new(Some(In { n: 1 }));
        assert!(matches!(
            e.before(&*zero, &caller),
            Err(CheckFailed::Precondition(0))
        ));
        assert!(e.before(&*one, &caller).is_ok());
        let mut notes = Vec::new();
        let big: AnyBox = Box::new(Out { n: 1 });
        assert!(e.after(&*one, &*big, &mut notes).is_ok() && notes.is_empty());
        let other: AnyBox = Box::new(Out { n: 2 });
        assert!(matches!(
            e.after(&*one, &*other, &mut notes),
            Err(CheckFailed::Postcondition(0))
        ));
        // A failed rule below error severity is noted, not fatal.
        let twenty: AnyBox = Box::new(Some(In { n: 20 }));
        let large: AnyBox = Box::new(Out { n: 20 });
        assert!(e.after(&*twenty, &*large, &mut notes).is_ok());
        assert_eq!(notes, [0]);
        // Values of the wrong type are refused, not misread.
        assert!(matches!(
            e.before(&*big, &caller),
            Err(CheckFailed::Mismatch)
        ));
        assert!(e.encode(&*one).is_none());
    }
}
