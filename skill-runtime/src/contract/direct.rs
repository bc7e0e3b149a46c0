//! A skill's function called directly, as a plain `async fn`: what tests do,
//! and what another skill may do only for a skill it lists in `calls(...)`.
//!
//! `#[skill]` makes a skill's function return a [`Direct`], which `.await`s
//! like the handler's own future. In a skill's body, the macro routes every
//! awaited call through [`Probe`]: for a `Direct` of skill `T` the inherent
//! `__skill_check` requires `S: Calls<T>`, so awaiting another skill without
//! declaring it fails with `Calls`' message, at the call; anything else takes
//! the trait method of the same name and passes through unchanged.

use std::future::IntoFuture;
use std::marker::PhantomData;

use crate::contract::capability::{CallableBy, Calls};
use crate::contract::skill::Skill;

/// The future of skill `T`'s function, called directly. The macro builds it
/// as a struct literal (one generic function fewer per skill to compile).
#[must_use = "a skill does nothing unless `.await`ed"]
pub struct Direct<T, F> {
    #[doc(hidden)]
    pub future: F,
    #[doc(hidden)]
    pub _skill: PhantomData<fn() -> T>,
}

impl<T, F: Future> IntoFuture for Direct<T, F> {
    type Output = F::Output;
    type IntoFuture = F;

    fn into_future(self) -> F {
        self.future
    }
}

/// An awaited value in a skill's body, as the macro wraps it.
#[doc(hidden)]
pub struct Probe<X>(pub X);

impl<T, F> Probe<Direct<T, F>> {
    /// Another skill awaited directly: allowed when the skill calling it
    /// lists it in `calls(...)`.
    #[doc(hidden)]
    pub fn __skill_check<S>(self) -> Direct<T, F>
    where
        S: Calls<T>,
    {
        self.0
    }
}

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

/// Anything else awaited in a skill's body, unchanged; and a `calls(...)`
/// entry that is not a skill, which the manifest's use of `Skill` reports on
/// its own (so that it gets one error, not a second about capabilities).
#[doc(hidden)]
pub trait NotASkill {
    type Value;
    fn __skill_check<S>(self) -> Self::Value;
    fn __skill_callable<S>(self)
    where
        Self: Sized,
    {
    }
}

impl<X> NotASkill for Probe<X> {
    type Value = X;

    fn __skill_check<S>(self) -> X {
        self.0
    }
}

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
