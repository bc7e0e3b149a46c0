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

/// A skill's input or output type, as the macro checks it: its JSON must be
/// an object, and a `Result` under another name (`-> Res<Out>`) would be
/// taken as the output, its failure modes lost.
#[doc(hidden)]
pub struct TypeProbe<T>(PhantomData<fn() -> T>);

impl<T> TypeProbe<T> {
    #[doc(hidden)]
    pub const fn new() -> Self {
        TypeProbe(PhantomData)
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

impl<T, E> TypeProbe<Result<T, E>> {
    /// A `Result` alias: refused.
    #[doc(hidden)]
    pub fn __skill_output_check(self)
    where
        T: WrittenOutResult,
    {
    }
}

/// Never implemented: its message is the error for an input or output whose
/// JSON is not an object.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a JSON object, and a skill's input and output are objects",
    label = "not a JSON object",
    note = "MCP tool arguments and structured results are JSON objects: put the value in a struct field, like `pub struct MyOutput {{ pub items: Vec<Item> }}`"
)]
pub trait ObjectRoot {}

/// Types whose JSON is never an object (enums and other types of the user's
/// own are checked when the registry is built).
#[doc(hidden)]
pub trait NotAnObject {}

macro_rules! not_objects {
    ($($t:ty),* $(,)?) => { $(impl NotAnObject for $t {})* };
}
not_objects!(
    (),
    bool,
    char,
    String,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64
);
impl<T> NotAnObject for Vec<T> {}
impl<T> NotAnObject for std::collections::VecDeque<T> {}
impl<T, S> NotAnObject for std::collections::HashSet<T, S> {}
impl<T> NotAnObject for std::collections::BTreeSet<T> {}
impl<T> NotAnObject for Box<[T]> {}
impl<T, const N: usize> NotAnObject for [T; N] {}
impl<T> NotAnObject for Option<T> {}
impl<A, B> NotAnObject for (A, B) {}
impl<A, B, C> NotAnObject for (A, B, C) {}
impl<A, B, C, D> NotAnObject for (A, B, C, D) {}

impl<T: NotAnObject> TypeProbe<T> {
    /// A type whose JSON is not an object: refused.
    #[doc(hidden)]
    pub fn __skill_root_check(self)
    where
        T: ObjectRoot,
    {
    }
}

/// Any other type passes both checks (the registry checks the schema's root).
#[doc(hidden)]
pub trait AnyType {
    fn __skill_output_check(self);
    fn __skill_root_check(self);
}

impl<T> AnyType for TypeProbe<T> {
    fn __skill_output_check(self) {}
    fn __skill_root_check(self) {}
}
