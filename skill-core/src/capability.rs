//! Capabilities as data: what one touches ([`EffectType`]), what it does there
//! ([`Operation`]), and the description every capability type carries
//! ([`CapabilityInfo`]). The traits that tie capabilities to skills at compile
//! time are skill-runtime's.

use std::any::TypeId;
use std::fmt;

words! {
    /// What kind of thing a capability touches. The first five are the AI-COS skill
    /// model's side-effect types; `network` and `process` cover ambient authority the
    /// seeds do not name; `none` is a pure permission (for example `seo.audit`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum EffectType {
        Database = "database",
        File = "file",
        Api = "api",
        Event = "event",
        Cache = "cache",
        Network = "network",
        Process = "process",
        None = "none",
    }
}

words! {
    /// What a capability does to its target (the AI-COS model's operations plus
    /// `execute` for processes and remote calls).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Operation {
        Read = "read",
        Write = "write",
        Delete = "delete",
        Upsert = "upsert",
        Execute = "execute",
    }
}

words! {
    /// Ambient authority a skill body can reach without its context; see
    /// `docs/compile-time-checks.md`. The word is the key of `#[skill(ambient(...))]`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Ambient {
        FileRead = "file_read",
        FileWrite = "file_write",
        Network = "network",
        Process = "process",
        Env = "env",
        Database = "database",
        /// Code the compiler cannot hold to a manifest: `unsafe` or an
        /// `extern` block in a skill's body (a call into C reaches files,
        /// the network or processes unseen). Only an allowance covers it.
        UnsafeCode = "unsafe_code",
    }
}

/// An escape hatch from the ambient side-effect checks: `ambient(kind =
/// "reason")` on a skill (its body and what it calls may reach `kind`) or on
/// a capability (its resource's code may).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmbientAllowance {
    /// `file_read`, `file_write`, `network`, `process`, `env`, `database`
    /// or `unsafe_code`.
    pub kind: &'static str,
    /// Why it may, for people.
    pub reason: &'static str,
}

/// The static description of one capability, as exported in `capabilities.json`.
#[derive(Clone, Copy)]
pub struct CapabilityInfo {
    /// `domain.verb`, for example `database.write`.
    pub id: &'static str,
    /// What the capability allows, for people and registries.
    pub description: &'static str,
    /// What kind of system it touches.
    pub effect: EffectType,
    /// What it does there (read, write, delete, ...).
    pub operation: Operation,
    /// Rust path of the capability type, for error messages.
    pub rust_path: &'static str,
    /// Type of the resource this capability grants access to; `()` for none.
    pub resource: fn() -> TypeId,
    /// The resource type the runtime must hold to run a skill with it.
    pub resource_name: &'static str,
    /// The resource type's full path (`core::any::type_name`): the code the
    /// audit of the compiled code counts as the capability's own.
    pub resource_type: fn() -> &'static str,
    /// What the resource's code may reach beyond what the capability's
    /// effect covers, each with its reason (`ambient(...)` on
    /// `#[capability]`), checked by the audit of the compiled code.
    pub ambient_allowances: &'static [AmbientAllowance],
    /// The file that declared it.
    pub file: &'static str,
    /// The line that declared it.
    pub line: u32,
}

/// A capability changes the world when it writes, deletes or upserts, or when it
/// reaches the network or spawns processes. Such capabilities must be listed as
/// side effects of every skill that declares them.
pub const fn is_effectful(effect: EffectType, operation: Operation) -> bool {
    operation.changes() || matches!(effect, EffectType::Network | EffectType::Process)
}

impl Operation {
    /// Whether the operation changes its target: writes, deletes and upserts.
    pub const fn changes(self) -> bool {
        matches!(
            self,
            Operation::Write | Operation::Delete | Operation::Upsert
        )
    }
}

impl CapabilityInfo {
    /// Whether this capability changes the world ([`is_effectful`]).
    pub const fn is_effectful(&self) -> bool {
        is_effectful(self.effect, self.operation)
    }

    /// Whether declaring this capability covers an ambient use of `kind` found in
    /// a skill's body by `#[skill]`'s scan.
    pub const fn covers(&self, kind: Ambient) -> bool {
        let writes = self.operation.changes();
        match kind {
            Ambient::FileRead => matches!(self.effect, EffectType::File),
            Ambient::FileWrite => matches!(self.effect, EffectType::File) && writes,
            Ambient::Network => matches!(self.effect, EffectType::Network | EffectType::Api),
            Ambient::Process | Ambient::Env => matches!(self.effect, EffectType::Process),
            Ambient::Database => matches!(self.effect, EffectType::Database),
            Ambient::UnsafeCode => false,
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

/// The runtime's own public functions that reach the outside world, each
/// with the path a user writes, the path it is defined at (what the
/// compiled code names it), and the ambient authority it reaches. A skill
/// reaching one needs what `std::fs` would need: `#[skill]`'s scan, the
/// `clippy.toml` backstop and the audit of the compiled code all read this
/// list; nothing is trusted for being the runtime's.
pub const RUNTIME_AMBIENT: &[(&str, &str, Ambient)] = &[
    (
        "skill_runtime::record::JsonLinesSink::append",
        "skill_runtime::exec::sink::JsonLinesSink::append",
        Ambient::FileWrite,
    ),
    (
        "skill_runtime::agents::DirArtifacts::new",
        "skill_runtime::agent::artifacts::DirArtifacts::new",
        Ambient::FileWrite,
    ),
    (
        "skill_runtime::agents::ArtifactStore::put",
        "skill_runtime::agent::artifacts::DirArtifacts::put",
        Ambient::FileWrite,
    ),
    (
        "skill_runtime::registry::read_json_file",
        "skill_runtime::files::read_json",
        Ambient::FileRead,
    ),
    (
        "skill_runtime::registry::Contract::from_file",
        "skill_runtime::registry::contract::Contract::from_file",
        Ambient::FileRead,
    ),
    (
        "skill_runtime::registry::Contract::overlay_file",
        "skill_runtime::registry::contract::Contract::overlay_file",
        Ambient::FileRead,
    ),
    (
        "skill_runtime::mcp::auth::ApiKeys::open",
        "skill_runtime::mcp::auth::keys::ApiKeys::open",
        Ambient::FileRead,
    ),
    (
        "skill_runtime::mcp::auth::ApiKeys::add",
        "skill_runtime::mcp::auth::keys::ApiKeys::add",
        Ambient::FileWrite,
    ),
    (
        "skill_runtime::mcp::auth::JwtAuth::connect",
        "skill_runtime::mcp::auth::jwt::JwtAuth::connect",
        Ambient::Network,
    ),
    (
        "skill_runtime::queue::schedule::Schedules::load",
        "skill_runtime::queue::schedule::Schedules::load",
        Ambient::FileRead,
    ),
    (
        "skill_runtime::queue::redis::RedisBackend::connect",
        "skill_runtime::queue::redis::backend::RedisBackend::connect",
        Ambient::Database,
    ),
    (
        "skill_runtime::queue::postgres::PostgresBackend::connect",
        "skill_runtime::queue::postgres::backend::PostgresBackend::connect",
        Ambient::Database,
    ),
    (
        "skill_runtime::queue::fleet::Fleet::connect",
        "skill_runtime::queue::fleet::Fleet::connect",
        Ambient::Database,
    ),
    (
        "skill_runtime::mcp::serve_app",
        "skill_runtime::mcp::http::serve_app",
        Ambient::Network,
    ),
    (
        "skill_runtime::mcp::McpServer::serve_http",
        "skill_runtime::mcp::http::McpServer::serve_http",
        Ambient::Network,
    ),
    (
        "skill_runtime::op::McpClient::spawn",
        "skill_runtime::exec::op::McpClient::spawn",
        Ambient::Process,
    ),
    (
        "skill_runtime::op::ScriptRoot::new",
        "skill_runtime::exec::op::ScriptRoot::new",
        Ambient::FileRead,
    ),
    (
        "skill_runtime::otel::Otel::start",
        "skill_runtime::otel::Otel::start",
        Ambient::Network,
    ),
];
