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

use crate::contract::capability::Calls;

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

/// Anything else awaited in a skill's body, unchanged.
#[doc(hidden)]
pub trait NotASkill {
    type Value;
    fn __skill_check<S>(self) -> Self::Value;
}

impl<X> NotASkill for Probe<X> {
    type Value = X;

    fn __skill_check<S>(self) -> X {
        self.0
    }
}

/// The output type of a skill whose signature does not write `Result<..>`
/// out, as the macro checks it: a `Result` under another name (`-> Res<Out>`)
/// would be taken as the output, and its failure modes lost.
#[doc(hidden)]
pub struct OutputProbe<T>(PhantomData<fn() -> T>);

impl<T> OutputProbe<T> {
    #[doc(hidden)]
    pub const fn new() -> Self {
        OutputProbe(PhantomData)
    }
}

/// Never implemented: its message is the error for a `Result` alias.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this skill returns a `Result` under another name, which would be taken as its output: its failure modes would be lost",
    label = "a `Result` alias",
    note = "write the `Result` out in the signature, `-> Result<Output, Error>` (the alias's own types), so the error type's failure modes are exported"
)]
pub trait WrittenOutResult {}

impl<T, E> OutputProbe<Result<T, E>> {
    /// A `Result` alias: refused.
    #[doc(hidden)]
    pub fn __skill_output_check(self)
    where
        T: WrittenOutResult,
    {
    }
}

/// Any other output passes.
#[doc(hidden)]
pub trait NotAResult {
    fn __skill_output_check(self);
}

impl<T> NotAResult for OutputProbe<T> {
    fn __skill_output_check(self) {}
}
