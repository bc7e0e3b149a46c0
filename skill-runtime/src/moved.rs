//! Names that left the crate root when the facade was trimmed, kept at their
//! old path as deprecated aliases: code written for the old path compiles,
//! with a warning that names the new one (a bare "no `Declares` in the root"
//! says nothing of where it went). Hidden from the docs; the traits here are
//! bounds only (each is implemented for whatever has the trait it stands
//! for), so nothing can be granted through them.

#![allow(deprecated)]

use crate::contract::capability as moved;
use crate::contract::capability::Capability;

/// Moved to [`crate::capability::Declares`].
#[deprecated(note = "moved: write `skill_runtime::capability::Declares`")]
pub trait Declares<C: Capability>: moved::Declares<C> {}

impl<S: moved::Declares<C>, C: Capability> Declares<C> for S {}

/// Moved to [`crate::capability::Calls`].
#[deprecated(note = "moved: write `skill_runtime::capability::Calls`")]
pub trait Calls<T>: moved::Calls<T> {}

impl<S: moved::Calls<T>, T> Calls<T> for S {}

/// Moved to [`crate::capability::EffectType`].
#[deprecated(note = "moved: write `skill_runtime::capability::EffectType`")]
pub type EffectType = skill_core::capability::EffectType;

/// Moved to [`crate::capability::Operation`].
#[deprecated(note = "moved: write `skill_runtime::capability::Operation`")]
pub type Operation = skill_core::capability::Operation;

/// Moved to [`crate::capability::Ambient`].
#[deprecated(note = "moved: write `skill_runtime::capability::Ambient`")]
pub type Ambient = skill_core::capability::Ambient;

/// Moved to [`crate::capability::CapabilityInfo`].
#[deprecated(note = "moved: write `skill_runtime::capability::CapabilityInfo`")]
pub type CapabilityInfo = skill_core::capability::CapabilityInfo;
