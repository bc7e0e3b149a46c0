//! Capabilities at compile time: the traits that tie a capability type to the
//! skills that declare it, and the catalog of every capability linked in.
//!
//! A capability is a zero-sized type declared with `#[capability(...)]`. Skills name
//! capabilities by Rust path, so a typo is a compile error, and a skill's context
//! hands out a capability's resource only when the skill declares it (see
//! [`Declares`]).

use skill_core::capability::{Ambient, CapabilityInfo};
use skill_core::manifest::Manifest;

/// `#[skill]`'s check that an effectful capability it declares is listed as
/// a side effect: evaluated in a constant, so a panic is the compile error,
/// `message` its text. One shared function rather than a `panic!` written
/// into every skill: no formatting machinery is compiled per capability.
#[doc(hidden)]
#[track_caller]
pub const fn assert_effect_listed(info: &CapabilityInfo, message: &str) {
    if info.is_effectful() {
        panic!("{}", message);
    }
}

/// `#[skill]`'s check of a `calls(...)` entry beyond capabilities (which
/// `CallableBy` checks by type): calling `callee` cannot widen what `caller`
/// may do, so each ambient allowance of the callee must be one the caller
/// has too (the same allowance, or a capability covering it), and each side
/// effect of the callee one the caller lists. Evaluated in a constant: a
/// panic is the compile error, with the message for what widened.
#[doc(hidden)]
#[track_caller]
pub const fn assert_no_wider(
    callee: &Manifest,
    caller: &Manifest,
    ambient_message: &str,
    effects_message: &str,
) {
    let mut i = 0;
    while i < callee.ambient_allowances.len() {
        let kind = callee.ambient_allowances[i].kind;
        if !allows(caller, kind) {
            panic!("{}", ambient_message);
        }
        i += 1;
    }
    let mut i = 0;
    while i < callee.side_effects.len() {
        let id = callee.side_effects[i].capability.id;
        // A capability the caller does not declare is `CallableBy`'s error.
        if declares(caller, id) && !lists(caller, id) {
            panic!("{}", effects_message);
        }
        i += 1;
    }
}

/// Whether skill `m` may reach ambient authority `kind`: an agent's body may
/// reach what one of the skills it lists may (the agent macro's check).
#[doc(hidden)]
pub const fn ambient_allowed(m: &Manifest, kind: Ambient) -> bool {
    allows(m, kind.as_str())
}

/// Whether `m` may reach the ambient authority named `kind` (`file_write`):
/// an allowance of that kind, or a capability that covers it.
const fn allows(m: &Manifest, kind: &str) -> bool {
    let mut i = 0;
    while i < m.ambient_allowances.len() {
        if same(m.ambient_allowances[i].kind, kind) {
            return true;
        }
        i += 1;
    }
    let mut k = 0;
    while k < Ambient::ALL.len() {
        let a = Ambient::ALL[k];
        if same(a.as_str(), kind) {
            let mut c = 0;
            while c < m.capabilities.len() {
                if m.capabilities[c].covers(a) {
                    return true;
                }
                c += 1;
            }
        }
        k += 1;
    }
    false
}

/// Whether `m` declares capability `id`.
const fn declares(m: &Manifest, id: &str) -> bool {
    let mut i = 0;
    while i < m.capabilities.len() {
        if same(m.capabilities[i].id, id) {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether `m` lists capability `id` as a side effect.
const fn lists(m: &Manifest, id: &str) -> bool {
    let mut i = 0;
    while i < m.side_effects.len() {
        if same(m.side_effects[i].capability.id, id) {
            return true;
        }
        i += 1;
    }
    false
}

/// `a == b`, in a constant.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Implemented by `#[capability(...)]` on a unit struct.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a capability",
    label = "not a capability",
    note = "declare capabilities with `#[capability(id = \"domain.verb\", effect = \"...\", operation = \"...\")]` on a unit struct"
)]
pub trait Capability: Send + Sync + 'static {
    /// What a declaring skill can reach through [`Ctx::resource`](crate::contract::skill::Ctx::resource).
    type Resource: Send + Sync + 'static;
    /// A reference, not a value: a skill's manifest lists its capabilities by
    /// reference, and rustc checks a borrowed reference for interior
    /// mutability for free, where a borrowed struct costs a trait selection
    /// per skill.
    const INFO: &'static CapabilityInfo;
}

/// `S: Declares<C>` holds when skill `S` lists capability `C` in its
/// `#[skill(capabilities(...))]`. Name it as a bound (a helper generic over
/// the skills that declare `C`); never implement it.
///
/// # Safety
///
/// Only `#[skill]` implements it, from the capabilities its manifest lists: an
/// implementation written by hand would grant a capability no manifest
/// declares, unseen by the side-effect rules, the runtime's resource check and
/// the registry. The trait is `unsafe` so such an `impl` does not compile
/// without `unsafe`, and not at all in a crate under
/// `#![forbid(unsafe_code)]` (the macro's own implementations are exempt).
#[diagnostic::on_unimplemented(
    message = "skill `{Self}` uses capability `{C}` but does not declare it",
    label = "`{C}` is not among the capabilities of skill `{Self}`",
    note = "add `{C}` to `capabilities(...)` in the #[skill] attribute of `{Self}`"
)]
pub unsafe trait Declares<C: Capability> {}

/// `S: Calls<T>` holds when skill `S` lists skill `T` in `#[skill(calls(...))]`.
///
/// # Safety
///
/// Only `#[skill]` implements it, beside the check that `S` declares every
/// capability of `T`; an implementation written by hand would skip that check
/// (see [`Declares`]).
#[diagnostic::on_unimplemented(
    message = "skill `{Self}` calls skill `{T}` but does not declare the call",
    label = "`{T}` is not among the call targets of skill `{Self}`",
    note = "add `{T}` to `calls(...)` in the #[skill] attribute of `{Self}`"
)]
pub unsafe trait Calls<T> {}

/// `T: CallableBy<S>` holds when skill `S` declares every capability of skill `T`,
/// so calling `T` from `S` cannot widen what `S` may do. `#[skill]` implements it
/// with one `S: Declares<C>` bound per capability of `T`; a missing one is reported
/// as that capability being undeclared by the caller.
#[diagnostic::on_unimplemented(
    message = "skill `{S}` cannot call skill `{Self}`: `{Self}` has capabilities `{S}` does not declare",
    note = "a skill may only call skills whose capabilities are a subset of its own"
)]
/// # Safety
///
/// Only `#[skill]` implements it, with one `Declares` bound per capability of
/// the callee (see [`Declares`]).
pub unsafe trait CallableBy<S> {}

/// One capability as submitted to the registry by `#[capability]`.
#[doc(hidden)]
pub struct CapabilityEntry(pub &'static CapabilityInfo);

inventory::collect!(CapabilityEntry);

/// Every capability declared by a linked crate, sorted by id.
pub fn catalog() -> Vec<&'static CapabilityInfo> {
    let mut all: Vec<&'static CapabilityInfo> =
        inventory::iter::<CapabilityEntry>().map(|e| e.0).collect();
    all.sort_by(|a, b| a.id.cmp(b.id).then(a.rust_path.cmp(b.rust_path)));
    all
}
