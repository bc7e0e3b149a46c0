//! The type-erased form of a skill that `inventory` collects, one per skill.
//!
//! Everything generic over the skill is here, and kept as small as it can be: decode
//! the input, run the handler, encode the output, all in one function per skill
//! ([`typed`]), plus the handler's future polled through [`Handler`]. Inputs and
//! outputs cross the table in [`Boxed`] boxes; the conditions are data, read
//! through untyped views and evaluated by code compiled once
//! ([`Checks`]). The invocation pipeline itself
//! (policies, validation, records) is written once, over that function pointer,
//! so a crate of N skills compiles a few small functions per skill instead of N
//! copies of the pipeline. Each function compiled per skill has a fixed cost
//! to the compiler whatever its size, which is why there are so few of them
//! (docs/performance.md has the figures).

use std::any::TypeId;
use std::cell::UnsafeCell;
use std::future::Future;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::{Deserialize, Serialize};

use skill_core::failure::{FailureMode, FailureModes};
use skill_core::manifest::Manifest;

use crate::contract::boxed::{Boxed, allocate, fits};
use crate::contract::de::Params;
use crate::contract::evaluate::Checks;
use crate::contract::invocation::Invocation;
use crate::contract::skill::{Ctx, Skill};
use crate::model::data::{Data, Written};
use crate::schema::generate::RootFns;

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

/// What the invocation pipeline asks of a skill's typed code. One function per
/// skill answers every request ([`typed`]): each function compiled per skill
/// costs more to build than the lines in it, so the table has one entry where
/// it would otherwise have three. The conditions are not here: they are data
/// ([`Checks`]), evaluated by code compiled once.
pub(crate) enum Op<'a> {
    /// Decode the params into a box of the input type.
    Decode(Params<'a>),
    /// Take the input out of its box (the caller frees the box) and start the
    /// handler, in the room given if its future fits.
    Run(&'a Arc<Invocation>, &'a mut Boxed, &'a mut HandlerRoom),
    /// Write the output as JSON text into the buffer (the caller's, so that
    /// nothing here needs dropping).
    Encode(&'a Boxed, &'a mut Written),
}

/// The answer to an [`Op`], variant for variant.
pub(crate) enum Answer<'a> {
    Decoded(Result<Boxed, serde_json::Error>),
    Running(Running<'a>),
    Encoded(Option<Result<(), serde_json::Error>>),
}

/// The typed code of one skill, behind a pointer.
#[derive(Clone, Copy)]
pub(crate) struct Erased {
    /// The input and output types' schema functions: data, not code, so
    /// nothing schema-related is compiled per skill.
    pub(crate) input_root: &'static RootFns,
    pub(crate) output_root: &'static RootFns,
    typed: fn(Op<'_>) -> Answer<'_>,
    /// The conditions and rules, with their checks behind untyped pointers.
    pub(crate) checks: Checks,
}

// An answer of the wrong variant cannot happen (`typed` answers each request
// in kind); it is reported as the values being of the wrong type, not as a panic.
impl Erased {
    pub(crate) fn decode(&self, params: Params<'_>) -> Result<Boxed, serde_json::Error> {
        match (self.typed)(Op::Decode(params)) {
            Answer::Decoded(decoded) => decoded,
            _ => Err(serde::de::Error::custom(WRONG_ANSWER)),
        }
    }

    /// Start the handler on the input (which it takes out of its box), its
    /// future in `room` when it fits there: the room stays borrowed while the
    /// handler runs.
    #[inline]
    pub(crate) fn run<'r>(
        &self,
        inv: &'r Arc<Invocation>,
        input: &'r mut Boxed,
        room: &'r mut HandlerRoom,
    ) -> Running<'r> {
        match (self.typed)(Op::Run(inv, input, room)) {
            Answer::Running(running) => running,
            _ => Running::Mismatch,
        }
    }

    /// The output as JSON text, as `serde_json` writes it.
    #[inline]
    pub(crate) fn encode(&self, output: &Boxed) -> Option<Result<Data, serde_json::Error>> {
        let mut text = Written::new();
        // (Taken out of the answer first, which borrows `text`.)
        let encoded = match (self.typed)(Op::Encode(output, &mut text)) {
            Answer::Encoded(encoded) => encoded,
            _ => None,
        };
        match encoded {
            Some(Ok(())) => Some(Ok(Data::from_written(text))),
            Some(Err(e)) => Some(Err(e)),
            None => None,
        }
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
                checks: Checks::of::<S>(),
            },
        }
    }
}

/// A skill's typed code: every [`Op`], in one function.
///
/// Nothing with drop glue is held across a call where it can be helped: each
/// such value would add an unwinding path to this function, compiled once per
/// skill.
#[expect(
    clippy::manual_map,
    reason = "`Option::map` with a closure is two more functions compiled per skill"
)]
#[expect(
    clippy::transmute_ptr_to_ref,
    reason = "`&*` on a raw pointer compiles debug checks of its alignment into every skill"
)]
fn typed<S: Skill>(op: Op<'_>) -> Answer<'_> {
    match op {
        Op::Decode(params) => Answer::Decoded(match S::Input::deserialize(params) {
            Ok(input) => Ok(Boxed::new(input)),
            Err(e) => Err(e),
        }),
        Op::Run(inv, input, room) => {
            Answer::Running(match input.take(const { TypeId::of::<S::Input>() }) {
                Some(input) => {
                    // Bound to this call: the future lives in `room`, which
                    // the caller holds for `'a`.
                    let ctx = Ctx::<'_, S>::new(Arc::clone(inv));
                    // SAFETY: the box held a live input of this type (same
                    // `TypeId`), now marked taken: this is its one owner.
                    let input = unsafe { std::ptr::read(input as *const S::Input) };
                    start(S::run(ctx, input), room)
                }
                None => Running::Mismatch,
            })
        }
        Op::Encode(output, text) => {
            Answer::Encoded(match output.get(const { TypeId::of::<S::Output>() }) {
                // SAFETY: a live output of this type (same `TypeId`), borrowed
                // with the box, at an address the box aligned for it. (A
                // `transmute`, not `&*`: a dereference of a raw pointer compiles
                // debug checks of its alignment into every skill.)
                Some(output) => Some(
                    unsafe { std::mem::transmute::<*mut u8, &S::Output>(output) }
                        .serialize(&mut serde_json::Serializer::new(text)),
                ),
                None => None,
            })
        }
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
    ) -> Poll<Result<Boxed, HandlerFailure>>;
}

impl<F, O, E> Handler for F
where
    F: Future<Output = Result<O, E>> + Send,
    O: Send + 'static,
    E: FailureModes + std::fmt::Display,
{
    fn poll_erased(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Boxed, HandlerFailure>> {
        match self.poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(output)) => Poll::Ready(Ok(Boxed::new(output))),
            Poll::Ready(Err(e)) => Poll::Ready(Err(HandlerFailure {
                mode: e.failure_mode(),
                message: display(&e),
            })),
        }
    }
}

/// The bytes a job keeps for its handler's future (in the job's state, a
/// heap block already made): a future that fits is written there, not into a
/// heap block of its own; a larger one goes into a block of its own, as every
/// handler's future did before. (The benchmark's skill, which adds two
/// numbers, fits; so does any handler that holds its input and context and a
/// few hundred bytes more across its awaits.)
pub(crate) const HANDLER_ROOM: usize = 320;

/// Room for a handler's future ([`HANDLER_ROOM`] bytes, aligned to 16).
pub(crate) struct HandlerRoom(UnsafeCell<MaybeUninit<[u128; HANDLER_ROOM / 16]>>);

impl HandlerRoom {
    pub(crate) const fn new() -> HandlerRoom {
        HandlerRoom(UnsafeCell::new(MaybeUninit::uninit()))
    }
}

/// The handler's future, started: written into `room` when it fits, else
/// into a heap block of its own. In place of `Box::new`, so that a skill
/// compiles no more functions than it did with a box (the test is a constant
/// block: one branch is compiled per skill, even unoptimized).
#[inline]
fn start<F: Handler + 'static>(future: F, room: &mut HandlerRoom) -> Running<'_> {
    let (at, heap) = if const { fits::<F>(HANDLER_ROOM, align_of::<HandlerRoom>()) } {
        (room.0.get_mut().as_mut_ptr() as *mut F, false)
    } else {
        // SAFETY: a type's layout.
        let at = unsafe { allocate(size_of::<F>(), align_of::<F>()) };
        (at as *mut F, true)
    };
    // SAFETY: room for an `F`, aligned: the room, borrowed mutably for as
    // long as the `Running` lives, or a fresh allocation of `F`'s layout. The
    // future is written once and then only polled through a pin (it never
    // moves) and dropped in place by `Running`'s `drop`.
    unsafe { at.write(future) };
    Running::Handler {
        at: at as *mut dyn Handler,
        heap,
        room: PhantomData,
    }
}

/// A running handler, as the invocation pipeline polls it (not generic).
pub(crate) enum Running<'r> {
    /// A future this value owns ([`start`]): in the room `'r` borrows, or
    /// on the heap.
    Handler {
        at: *mut dyn Handler,
        heap: bool,
        room: PhantomData<&'r mut HandlerRoom>,
    },
    /// The input was not of the skill's input type: a runtime bug.
    Mismatch,
}

// SAFETY: a handler's future is `Send` (`Handler: Send`), and
// `Running::Handler` owns the one it points to.
unsafe impl Send for Running<'_> {}

impl Future for Running<'_> {
    type Output = Result<Boxed, HandlerFailure>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            // SAFETY: a live future, which does not move (see `start`).
            Running::Handler { at, .. } => unsafe { Pin::new_unchecked(&mut **at) }.poll_erased(cx),
            Running::Mismatch => Poll::Ready(Err(HandlerFailure::mismatch())),
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Running::Handler { at, heap, .. } = *self {
            // SAFETY: the future this value owns, dropped once, where it was
            // pinned; a heap block was allocated with its layout (`start`).
            unsafe {
                let layout = std::alloc::Layout::for_value(&*at);
                std::ptr::drop_in_place(at);
                if heap && layout.size() != 0 {
                    std::alloc::dealloc(at as *mut u8, layout);
                }
            }
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
        $crate::__private_v2::inventory::submit! {
            $crate::__private_v2::SkillEntry::of::<$skill>()
        }
    };
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::contract::evaluate::CheckFailed;
    use crate::contract::skill::{
        InputCheck, OutputCheck, Postcondition, Precondition, ValidationRule,
    };
    use crate::model::caller::Caller;
    use skill_core::failure::Never;
    use skill_core::manifest::Severity;

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

    unsafe impl Skill for Checked {
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
        async fn run(_ctx: Ctx<'_, Self>, input: In) -> Result<Out, Never> {
            Ok(Out { n: input.n })
        }
    }

    struct Bare;

    unsafe impl Skill for Bare {
        type Input = In;
        type Output = Out;
        type Error = Never;
        const MANIFEST: &'static Manifest = &Manifest::DEFAULT;
        async fn run(_ctx: Ctx<'_, Self>, input: In) -> Result<Out, Never> {
            Ok(Out { n: input.n })
        }
    }

    static DROPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// Counts its drops (in `DROPS`); held across an await that never ends.
    struct Held;

    impl Drop for Held {
        fn drop(&mut self) {
            DROPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// A handler that waits forever, holding a value; `BIG` bytes of it
    /// across the await decide where its future goes.
    struct Waits<const BIG: usize>;

    unsafe impl<const BIG: usize> Skill for Waits<BIG> {
        type Input = In;
        type Output = Out;
        type Error = Never;
        const MANIFEST: &'static Manifest = &Manifest::DEFAULT;
        async fn run(_ctx: Ctx<'_, Self>, input: In) -> Result<Out, Never> {
            let held = (Held, [input.n; BIG]);
            std::future::pending::<()>().await;
            drop(held);
            Ok(Out { n: input.n })
        }
    }

    /// A small handler's future runs in the room, a large one in a box; either
    /// is dropped once, where it ran, when the job lets it go mid-run.
    #[test]
    fn a_handler_runs_in_the_room_when_it_fits_and_is_dropped_there() {
        fn run_then_drop<S: Skill<Input = In>>(in_room: bool) {
            let e = SkillEntry::of::<S>().erased;
            let inv = Arc::new(invocation());
            let mut room = HandlerRoom::new();
            let mut input = Boxed::new(In { n: 1 });
            let mut running = std::pin::pin!(e.run(&inv, &mut input, &mut room));
            assert_eq!(
                matches!(*running, Running::Handler { heap: false, .. }),
                in_room
            );
            let mut cx = Context::from_waker(std::task::Waker::noop());
            assert!(running.as_mut().poll(&mut cx).is_pending());
        }
        let counted = |f: fn()| {
            let before = DROPS.load(std::sync::atomic::Ordering::SeqCst);
            f();
            DROPS.load(std::sync::atomic::Ordering::SeqCst) - before
        };
        assert_eq!(counted(|| run_then_drop::<Waits<1>>(true)), 1);
        assert_eq!(counted(|| run_then_drop::<Waits<100>>(false)), 1);
    }

    #[test]
    fn conditions_text_is_read_from_the_typed_slices() {
        let checked = SkillEntry::of::<Checked>().erased;
        assert!(checked.checks.any_before() && checked.checks.any_after());
        let c = checked.checks.text();
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
        assert!(!bare.checks.any_before() && !bare.checks.any_after());
        assert!(!bare.checks.after_reads_input());
        let c = bare.checks.text();
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
        let zero = Boxed::new(In { n: 0 });
        let one = Boxed::new(In { n: 1 });
        assert!(matches!(
            e.checks.before(&zero, &caller),
            Err(CheckFailed::Precondition(0))
        ));
        assert!(e.checks.before(&one, &caller).is_ok());
        let mut notes = Vec::new();
        let big = Boxed::new(Out { n: 1 });
        assert!(e.checks.after(Some(&one), &big, &mut notes).is_ok() && notes.is_empty());
        let other = Boxed::new(Out { n: 2 });
        assert!(matches!(
            e.checks.after(Some(&one), &other, &mut notes),
            Err(CheckFailed::Postcondition(0))
        ));
        // A failed rule below error severity is noted, not fatal.
        let twenty = Boxed::new(In { n: 20 });
        let large = Boxed::new(Out { n: 20 });
        assert!(e.checks.after(Some(&twenty), &large, &mut notes).is_ok());
        assert_eq!(notes, [0]);
        // The postcondition reads the input: without one, it is not run on
        // anything else.
        assert!(e.checks.after_reads_input());
        assert!(matches!(
            e.checks.after(None, &big, &mut notes),
            Err(CheckFailed::Mismatch)
        ));
        // Values of the wrong type are refused, not misread.
        assert!(matches!(
            e.checks.before(&big, &caller),
            Err(CheckFailed::Mismatch)
        ));
        assert!(e.encode(&one).is_none());
    }

    fn invocation() -> Invocation {
        Invocation::fresh(Default::default())
    }

    #[test]
    fn typed_code_decodes_runs_and_encodes() {
        let e = SkillEntry::of::<Bare>().erased;
        let decode = |v: serde_json::Value| {
            crate::contract::ordered::decode(
                &Default::default(),
                crate::contract::de::Input::Value(&v),
                |p| e.decode(p),
            )
        };
        let mut input = decode(serde_json::json!({"n": 3})).expect("decodes");
        assert!(decode(serde_json::json!({"n": "three"})).is_err());
        let inv = Arc::new(invocation());
        let mut room = HandlerRoom::new();
        let output = {
            let mut running = std::pin::pin!(e.run(&inv, &mut input, &mut room));
            assert!(
                matches!(*running, Running::Handler { heap: false, .. }),
                "a small future"
            );
            let mut cx = Context::from_waker(std::task::Waker::noop());
            let Poll::Ready(Ok(output)) = running.as_mut().poll(&mut cx) else {
                panic!("the handler is ready at once and succeeds");
            };
            output
        };
        assert_eq!(
            e.encode(&output)
                .expect("an output")
                .expect("serializes")
                .text(),
            r#"{"n":3}"#
        );
        // The handler took the input: a second run finds nothing to take.
        let again = e.run(&inv, &mut input, &mut room);
        assert!(matches!(again, Running::Mismatch));
        // An input where an output is expected is refused.
        let other = decode(serde_json::json!({"n": 1})).expect("decodes");
        assert!(e.encode(&other).is_none());
    }
}
