//! Capabilities: the named permissions a skill declares, and the catalog they form.
//!
//! A capability is a zero-sized type declared with `#[capability(...)]`. Skills name
//! capabilities by Rust path, so a typo is a compile error, and a skill's context
//! hands out a capability's resource only when the skill declares it (see
//! [`Declares`]).

use std::any::TypeId;
use std::fmt;

/// What kind of thing a capability touches. The first five are the AI-COS skill
/// model's side-effect types; `network` and `process` cover ambient authority the
/// seeds do not name; `none` is a pure permission (for example `seo.audit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EffectType {
    Database,
    File,
    Api,
    Event,
    Cache,
    Network,
    Process,
    None,
}

impl EffectType {
    /// The lowercase word used in manifests and exported JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            EffectType::Database => "database",
            EffectType::File => "file",
            EffectType::Api => "api",
            EffectType::Event => "event",
            EffectType::Cache => "cache",
            EffectType::Network => "network",
            EffectType::Process => "process",
            EffectType::None => "none",
        }
    }
}

/// What a capability does to its target (the AI-COS model's operations plus
/// `execute` for processes and remote calls).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operation {
    Read,
    Write,
    Delete,
    Upsert,
    Execute,
}

impl Operation {
    /// The lowercase word used in manifests and exported JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Operation::Read => "read",
            Operation::Write => "write",
            Operation::Delete => "delete",
            Operation::Upsert => "upsert",
            Operation::Execute => "execute",
        }
    }
}

/// Ambient authority a skill body can reach without its context; see
/// `docs/compile-time-checks.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ambient {
    FileRead,
    FileWrite,
    Network,
    Process,
    Env,
    Database,
}

/// The static description of one capability, as exported in `capabilities.json`.
#[derive(Clone, Copy)]
pub struct CapabilityInfo {
    /// `domain.verb`, for example `database.write`.
    pub id: &'static str,
    pub description: &'static str,
    pub effect: EffectType,
    pub operation: Operation,
    /// Rust path of the capability type, for error messages.
    pub rust_path: &'static str,
    /// Type of the resource this capability grants access to; `()` for none.
    pub resource: fn() -> TypeId,
    pub resource_name: &'static str,
    pub file: &'static str,
    pub line: u32,
}

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

impl CapabilityInfo {
    /// A capability changes the world when it writes, deletes or upserts, or when it
    /// reaches the network or spawns processes. Such capabilities must be listed as
    /// side effects of every skill that declares them.
    pub const fn is_effectful(&self) -> bool {
        matches!(
            self.operation,
            Operation::Write | Operation::Delete | Operation::Upsert
        ) || matches!(self.effect, EffectType::Network | EffectType::Process)
    }

    /// Whether declaring this capability covers an ambient use of `kind` found in
    /// a skill's body by `#[skill]`'s scan.
    pub const fn covers(&self, kind: Ambient) -> bool {
        let writes = matches!(
            self.operation,
            Operation::Write | Operation::Delete | Operation::Upsert
        );
        match kind {
            Ambient::FileRead => matches!(self.effect, EffectType::File),
            Ambient::FileWrite => matches!(self.effect, EffectType::File) && writes,
            Ambient::Network => matches!(self.effect, EffectType::Network | EffectType::Api),
            Ambient::Process | Ambient::Env => matches!(self.effect, EffectType::Process),
            Ambient::Database => matches!(self.effect, EffectType::Database),
        }
    }

    /// Whether the capability grants a resource that must be registered at run time.
    pub fn needs_resource(&self) -> bool {
        (self.resource)() != TypeId::of::<()>()
    }
}

impl fmt::Debug for CapabilityInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CapabilityInfo")
            .field("id", &self.id)
            .field("effect", &self.effect)
            .field("operation", &self.operation)
            .field("rust_path", &self.rust_path)
            .finish_non_exhaustive()
    }
}

/// Implemented by `#[capability(...)]` on a unit struct.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a capability",
    label = "not a capability",
    note = "declare capabilities with `#[capability(id = \"domain.verb\", effect = \"...\", operation = \"...\")]` on a unit struct"
)]
pub trait Capability: Send + Sync + 'static {
    /// What a declaring skill can reach through [`crate::Ctx::resource`].
    type Resource: Send + Sync + 'static;
    /// A reference, not a value: a skill's manifest lists its capabilities by
    /// reference, and rustc checks a borrowed reference for interior
    /// mutability for free, where a borrowed struct costs a trait selection
    /// per skill.
    const INFO: &'static CapabilityInfo;
}

/// `S: Declares<C>` holds when skill `S` lists capability `C` in its
/// `#[skill(capabilities(...))]`. Only the `#[skill]` macro implements it, so code
/// without the macro gets no capabilities at all.
#[diagnostic::on_unimplemented(
    message = "skill `{Self}` uses capability `{C}` but does not declare it",
    label = "`{C}` is not among the capabilities of skill `{Self}`",
    note = "add `{C}` to `capabilities(...)` in the #[skill] attribute of `{Self}`"
)]
pub trait Declares<C: Capability> {}

/// `S: Calls<T>` holds when skill `S` lists skill `T` in `#[skill(calls(...))]`.
#[diagnostic::on_unimplemented(
    message = "skill `{Self}` calls skill `{T}` but does not declare the call",
    label = "`{T}` is not among the call targets of skill `{Self}`",
    note = "add `{T}` to `calls(...)` in the #[skill] attribute of `{Self}`"
)]
pub trait Calls<T> {}

/// `T: CallableBy<S>` holds when skill `S` declares every capability of skill `T`,
/// so calling `T` from `S` cannot widen what `S` may do. `#[skill]` implements it
/// with one `S: Declares<C>` bound per capability of `T`; a missing one is reported
/// as that capability being undeclared by the caller.
#[diagnostic::on_unimplemented(
    message = "skill `{S}` cannot call skill `{Self}`: `{Self}` has capabilities `{S}` does not declare",
    note = "a skill may only call skills whose capabilities are a subset of its own"
)]
pub trait CallableBy<S> {}

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

/// `domain.verb`: two lowercase snake_case words joined by one dot.
pub const fn is_capability_id(id: &str) -> bool {
    let b = id.as_bytes();
    let mut i = 0;
    let mut dots = 0;
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'.' {
            if word_start {
                return false;
            }
            dots += 1;
            word_start = true;
        } else if c.is_ascii_lowercase() || (!word_start && (c.is_ascii_digit() || c == b'_')) {
            word_start = false;
        } else {
            return false;
        }
        i += 1;
    }
    dots == 1 && !word_start
}

#[cfg(test)]
mod tests {
    use super::is_capability_id;

    #[test]
    fn capability_ids_are_domain_dot_verb() {
        for ok in [
            "database.write",
            "obsidian.read",
            "rag.ingest",
            "a.b",
            "seo_x.read_2",
        ] {
            assert!(is_capability_id(ok), "{ok}");
        }
        for bad in [
            "database",
            "database.",
            ".write",
            "a.b.c",
            "Database.write",
            "a.2b",
            "a-b.c",
            "",
        ] {
            assert!(!is_capability_id(bad), "{bad}");
        }
    }
}
