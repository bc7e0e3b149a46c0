//! Running another skill's code directly, and who may.
//!
//! `#[skill]` gives each skill a function that takes the caller's context:
//! `purge(&ctx, input)`. Its one bound, `Authority<purge>`, is the whole
//! rule, and the type checker asks it wherever the function is named: a
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

use crate::contract::capability::{CallableBy, Calls};
use crate::contract::invocation::{Invocation, Resources};
use crate::contract::skill::{Ctx, Skill};
use skill_core::failure::Never;

/// The right to run skill `T`'s code directly, held by a context.
///
/// A skill's context `Ctx<S>` holds it for each skill `S` lists in
/// `calls(...)`; an [`AppCtx`] (from `Runtime::context`) for every skill.
/// Nothing else does, and only `#[skill]` grants `Calls`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` may not run skill `{T}` directly",
    label = "no authority to run `{T}` here",
    note = "a skill runs another that it lists in `calls(...)`, as `{T}(&ctx, input)`; an agent runs the skills it lists with `ctx.run::<{T}>(input)`; code that owns a `Runtime` runs any skill as `{T}(&runtime.context(), input)`, or as a job"
)]
pub trait Authority<T> {
    /// The context skill `T` runs in, called from here.
    #[doc(hidden)]
    fn __enter(&self) -> Ctx<T>;
}

impl<S, T> Authority<T> for Ctx<S>
where
    S: Calls<T>,
{
    /// Within the caller's job: same ids, limits and reports.
    fn __enter(&self) -> Ctx<T> {
        Ctx::new(self.inv.clone())
    }
}

/// The context of code that owns a runtime (an application, a test): it
/// runs any skill directly, with the runtime's resources, outside any job
/// (no policy, no record; [`Runtime::invoke`] runs a job).
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
pub struct AppCtx {
    pub(crate) resources: Arc<Resources>,
}

impl<T: Skill> Authority<T> for AppCtx {
    /// A fresh invocation: new ids, the operator as caller, default limits.
    fn __enter(&self) -> Ctx<T> {
        Ctx::new(Arc::new(Invocation::fresh(self.resources.clone())))
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

/// The answer for every other type.
#[doc(hidden)]
pub trait AnyType {
    const IS_RESULT: bool = false;
}

impl<T> AnyType for TypeProbe<T> {}
