//! Running another skill's code directly, and who may.
//!
//! `#[skill]` gives each skill a function that takes the caller's context:
//! `purge(&ctx, input)`. Its one bound, `Authority<'call, purge>`, is the
//! whole rule, and the type checker asks it wherever the function is named: a
//! call, `join!`, `select!`, a closure, a function pointer, an array of them.
//! A skill's context `Ctx<S>` has that authority exactly when `S` lists the
//! skill in `calls(...)` ([`Calls`]); an [`AppCtx`], which only code that
//! owns a [`Runtime`] can get, has it for every skill. The skill's body itself
//! is reached only through `Skill::run`, which takes a `Ctx` of that skill,
//! and no one but the runtime and these bounds makes one.
//!
//! [`Runtime`]: crate::exec::runtime::Runtime

use std::marker::PhantomData;
use std::sync::Arc;

use std::future::Future;

use crate::contract::capability::{CallableBy, Calls};
use crate::contract::invocation::{Invocation, Resources};
use crate::contract::skill::{Ctx, Skill};
use skill_core::failure::Never;

/// The right to run skill `T`'s code directly, held by a context, for the
/// call `'call` the context belongs to.
///
/// A skill's context `Ctx<'call, S>` holds it for each skill `S` lists in
/// `calls(...)`; an [`AppCtx`] (from `Runtime::context`) for every skill,
/// outside handlers. Nothing else does: only `#[skill]` grants `Calls`, and
/// what the right yields ([`Entered`]) can be made by this crate alone, so
/// no other type can hold it either.
#[diagnostic::on_unimplemented(
    message = "`{Self}` may not run skill `{T}` directly",
    label = "no authority to run `{T}` here",
    note = "a skill runs another that it lists in `calls(...)`, as `{T}(&ctx, input)`; an agent runs the skills it lists with `ctx.run::<{T}>(input)`; code that owns a `Runtime` runs any skill as `{T}(&runtime.context(), input)`, or as a job"
)]
pub trait Authority<'call, T> {
    /// The call skill `T` runs in, from here: only [`run_called`] opens it.
    #[doc(hidden)]
    fn __enter(&self) -> Entered<'call>;
}

/// A call entered through an [`Authority`]: opaque, made by this crate only,
/// opened by [`run_called`] only.
#[doc(hidden)]
pub struct Entered<'call> {
    inv: Arc<Invocation>,
    _call: PhantomData<fn(&'call ()) -> &'call ()>,
}

impl<'call, S, T> Authority<'call, T> for Ctx<'call, S>
where
    S: Calls<T>,
{
    /// Within the caller's job: same ids, limits and reports.
    fn __enter(&self) -> Entered<'call> {
        Entered {
            inv: self.inv.clone(),
            _call: PhantomData,
        }
    }
}

/// Skill `T`'s handler, run on `input` in the call `ctx` holds the right to:
/// what the function `#[skill]` gives each skill (`purge(&ctx, input)`)
/// does. The future lives as long as that call, and no longer.
#[doc(hidden)]
pub fn run_called<'call, T: Skill>(
    ctx: &dyn Authority<'call, T>,
    input: T::Input,
) -> impl Future<Output = Result<T::Output, T::Error>> + Send + use<'call, T> {
    let entered = ctx.__enter();
    T::run(Ctx::<'call, T>::new(entered.inv), input)
}

/// The context of code that owns a runtime (an application, a test): it
/// runs any skill directly, with the runtime's resources, outside any job
/// (no policy, no record; [`Runtime::invoke`] runs a job). It borrows the
/// runtime it came from, and refuses to run anything while a handler runs
/// (a runtime kept where a handler reaches it would run any skill with no
/// `calls(...)` checked): the skill's call panics, naming the rule, and the
/// job it was in fails `panicked`.
///
/// ```
/// use std::sync::Arc;
/// use skill_runtime::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// pub struct In { pub n: u32 }
/// #[derive(Serialize, JsonSchema)]
/// pub struct Out { pub doubled: u32 }
///
/// /// Double a number, from the application.
/// #[skill(version = "1.0.0")]
/// pub async fn twice(input: In) -> Out {
///     Out { doubled: input.n * 2 }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let registry = Arc::new(skill_runtime::Registry::from_inventory().unwrap());
/// let runtime = skill_runtime::Runtime::builder(registry).build().unwrap();
/// let out = twice(&runtime.context(), In { n: 21 }).await;
/// assert_eq!(out.doubled, 42);
/// # }
/// ```
///
/// [`Runtime::invoke`]: crate::exec::runtime::Runtime::invoke
#[derive(Clone, Debug)]
pub struct AppCtx<'rt> {
    pub(crate) resources: Arc<Resources>,
    pub(crate) _runtime: PhantomData<&'rt ()>,
}

impl<'rt, T: Skill> Authority<'rt, T> for AppCtx<'rt> {
    /// A fresh invocation: new ids, the operator as caller, default limits.
    fn __enter(&self) -> Entered<'rt> {
        refuse_inside_handler("a runtime's context (`Runtime::context`)");
        Entered {
            inv: Arc::new(Invocation::fresh(self.resources.clone())),
            _call: PhantomData,
        }
    }
}

/// Panic, naming the rule, when a handler is running on this thread: what
/// `what` would do there (run any skill, hand out any resource) is exactly
/// what a handler's declarations hold it from. The runtime catches a
/// handler's panic, and the job fails `panicked` with this message.
pub(crate) fn refuse_inside_handler(what: &str) {
    if crate::contract::invocation::in_handler() {
        panic!(
            "{what} used while a skill's handler runs: a handler runs other skills through its own context (`other(&ctx, input)`, for the skills it lists in `calls(...)`) and reaches resources through it (`ctx.resource::<Capability>()`), never through a runtime, which would run any skill and hand out any resource with nothing checked"
        );
    }
}

/// The declared output of a skill that cannot fail, from its handler's
/// `Result<_, Never>`: what its function gives a caller.
#[doc(hidden)]
pub async fn infallible<O>(run: impl Future<Output = Result<O, Never>> + Send) -> O {
    match run.await {
        Ok(o) => o,
        Err(never) => match never {},
    }
}

/// A skill named in `calls(...)`, as the macro checks it.
#[doc(hidden)]
pub struct Probe<X>(pub X);

impl<T: Skill> Probe<PhantomData<T>> {
    /// Skill `T` listed in `S`'s `calls(...)`: allowed when `S` declares all
    /// of `T`'s capabilities.
    #[doc(hidden)]
    pub fn __skill_callable<S>(self)
    where
        T: CallableBy<S>,
    {
    }
}

/// A `calls(...)` entry that is not a skill, which the manifest's use of
/// `Skill` reports on its own (so that it gets one error, not a second about
/// capabilities).
#[doc(hidden)]
pub trait NotASkill {
    fn __skill_callable<S>(self)
    where
        Self: Sized,
    {
    }
}

impl<X> NotASkill for Probe<X> {}

/// A skill's output type, as the macro checks it in a constant when the
/// signature does not write `Result<..>` out: a `Result` under another name
/// (`-> Res<Out>`) would be taken as the output, its failure modes lost. The
/// answer is an inherent constant for `Result`s and [`AnyType`]'s otherwise
/// (an inherent item whose impl does not apply is passed over).
#[doc(hidden)]
pub struct TypeProbe<T>(PhantomData<fn() -> T>);

impl<T, E> TypeProbe<Result<T, E>> {
    #[doc(hidden)]
    pub const IS_RESULT: bool = true;
}

impl<T: Clone> TypeProbe<T> {
    /// A capability's resource that is `Clone`, as `#[capability]` checks
    /// it: a clone would carry what the capability grants out of the call.
    #[doc(hidden)]
    pub const IS_CLONE: bool = true;
}

/// The answer for every other type.
#[doc(hidden)]
pub trait AnyType {
    const IS_RESULT: bool = false;
    const IS_CLONE: bool = false;
}

impl<T> AnyType for TypeProbe<T> {}
