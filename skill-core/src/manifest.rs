//! The static manifest every skill carries: identity, policy and contract metadata.
//!
//! Everything here is `const`-constructible so that `#[skill]` can emit one
//! `&'static Manifest` per skill and submit it to `inventory` without running code.
//! What the types already know (input/output schemas, failure modes, typed
//! conditions) lives on skill-runtime's `Skill` trait instead, so it cannot drift.

use crate::capability::CapabilityInfo;

/// The static part of a skill's contract.
#[derive(Debug)]
pub struct Manifest {
    /// snake_case, unique per version in a registry.
    pub name: &'static str,
    /// Human display name (the AI-COS model's `name`).
    pub title: Option<&'static str>,
    /// semver.
    pub version: &'static str,
    /// Short purpose statement, at most 200 characters.
    pub description: &'static str,
    pub domain: Option<&'static str>,
    pub owners: &'static [&'static str],
    pub status: Status,
    pub deprecation: Option<Deprecation>,
    pub kind: Kind,
    pub autonomy: Autonomy,
    pub policy_tags: &'static [&'static str],
    /// The job intents this skill serves (the seed's `JobIntent`, e.g.
    /// `seo_audit`): a job envelope that names an intent and no skill runs it.
    pub intents: &'static [&'static str],
    pub rate_limit: Option<RateLimit>,
    pub redaction: Redaction,
    pub execution: Execution,
    pub constraints: Constraints,
    pub mcp: Mcp,
    pub reusable_by: &'static [Reuse],
    pub capabilities: &'static [&'static CapabilityInfo],
    pub side_effects: &'static [SideEffect],
    pub call_targets: &'static [CallTarget],
    /// The steps of a pipeline skill ([`Kind::Pipeline`]); empty otherwise.
    pub steps: &'static [PipelineStep],
    /// `Some` for an op (`#[op]`): an entry of the op registry, not the skill
    /// registry, and how it runs.
    pub op: Option<OpRuntime>,
    /// Ambient uses allowed without a covering capability, each with its reason.
    pub ambient_allowances: &'static [AmbientAllowance],
    pub entrypoint: Entrypoint,
    /// Where the skill is defined, for build errors (never exported).
    pub location: Location,
}

words! {
    /// Lifecycle state (Brain OS registry v2).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Status {
        Enabled = "enabled",
        Disabled = "disabled",
        Deprecated = "deprecated",
    }
}

/// Required when [`Status::Deprecated`]; the seed asks for explicit migration notes.
#[derive(Clone, Copy, Debug)]
pub struct Deprecation {
    pub replaced_by: Option<&'static str>,
    pub removal_version: Option<&'static str>,
    pub notes: &'static str,
}

words! {
    /// A skill's own code, or ordered steps over other skills and ops.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Kind {
        Logic = "logic",
        Pipeline = "pipeline",
    }
}

words! {
    /// How much a skill may do without a human: L0 (suggest only) to L3 (fully autonomous).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub enum Autonomy {
        L0 = "L0",
        L1 = "L1",
        L2 = "L2",
        L3 = "L3",
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    pub max_per_minute: u32,
}

/// Input and output fields that never reach a record or a log line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Redaction {
    pub inputs: &'static [&'static str],
    pub outputs: &'static [&'static str],
}

/// Execution policy. Defaults follow the AI-COS skill model: 60 s, 3 retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Execution {
    pub timeout_ms: u64,
    pub retries: u32,
    pub backoff: Backoff,
    pub idempotent: bool,
}

impl Execution {
    pub const DEFAULT: Execution = Execution {
        timeout_ms: 60_000,
        retries: 3,
        backoff: Backoff::Exponential,
        idempotent: false,
    };
}

words! {
    /// How the wait before a retry grows.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Backoff {
        None = "none",
        Linear = "linear",
        Exponential = "exponential",
    }
}

/// The UnifiedSkillContract v1 constraints (ADR-0002).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constraints {
    pub is_destructive: bool,
    pub requires_hitl: bool,
    pub sandbox_type: Sandbox,
    pub source: Origin,
}

impl Constraints {
    pub const DEFAULT: Constraints = Constraints {
        is_destructive: false,
        requires_hitl: false,
        sandbox_type: Sandbox::Local,
        source: Origin::Local,
    };
}

words! {
    /// Where a skill runs (the ADR's `sandbox_type`, written in capitals as the
    /// ADR does; `#[skill(sandbox = "docker")]` takes the lowercase word).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Sandbox {
        Docker = "DOCKER",
        Wasm = "WASM",
        Local = "LOCAL",
    }
}

words! {
    /// Where a skill comes from (the ADR's `metadata.source`, in capitals;
    /// `#[skill(source = "global")]` takes the lowercase word).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Origin {
        Global = "GLOBAL",
        Local = "LOCAL",
    }
}

/// MCP exposure. `tool_name: None` means the skill name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mcp {
    pub exposed: bool,
    pub tool_name: Option<&'static str>,
    pub permissions: &'static [&'static str],
}

impl Mcp {
    pub const HIDDEN: Mcp = Mcp {
        exposed: false,
        tool_name: None,
        permissions: &[],
    };
}

/// Who may reuse a skill (AI-COS `reusable_by`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reuse {
    pub agent_role: AgentRole,
    pub permission_level: PermissionLevel,
}

words! {
    /// An agent's role (the AI-COS agent model).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum AgentRole {
        Architect = "architect",
        Analyzer = "analyzer",
        Executor = "executor",
        Validator = "validator",
        Orchestrator = "orchestrator",
    }
}

words! {
    /// What a role may do with a skill, in increasing order: read < execute < admin.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum PermissionLevel {
        Read = "read",
        Execute = "execute",
        Admin = "admin",
    }
}

/// One declared side effect. Its type and operation come from the capability.
#[derive(Clone, Copy, Debug)]
pub struct SideEffect {
    pub capability: &'static CapabilityInfo,
    pub target: &'static str,
    pub reversible: bool,
    pub description: Option<&'static str>,
}

/// An escape hatch from the ambient side-effect scan: `ambient(kind = "reason")`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmbientAllowance {
    /// `file_read`, `file_write`, `network`, `process`, `env` or `database`.
    pub kind: &'static str,
    pub reason: &'static str,
}

/// A skill or op this skill may call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallTarget {
    pub kind: TargetKind,
    pub name: &'static str,
    pub version: Option<&'static str>,
}

words! {
    /// What a reference names: a skill of the skill registry or an op of the op
    /// registry (two namespaces).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub enum TargetKind {
        #[default]
        Skill = "skill",
        Op = "op",
    }
}

impl TargetKind {
    /// For `skip_serializing_if`: a skill is the default target.
    pub fn is_skill(&self) -> bool {
        *self == TargetKind::Skill
    }
}

/// How an op runs (the Brain OS op registry's `runtime` and its field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpRuntime {
    /// Rust code in this process (`module` + `handler`).
    Native,
    /// A tool on the runtime's MCP client (skill-runtime's `op::McpTools`).
    Mcp { tool: &'static str },
    /// An HTTP endpoint that takes the input as a JSON POST body.
    Http { url: &'static str },
    /// A program and its arguments, separated by spaces (no shell): the input
    /// as JSON on stdin, the output as JSON on stdout.
    Script { command: &'static str },
}

impl OpRuntime {
    pub const fn as_str(self) -> &'static str {
        match self {
            OpRuntime::Native => "native",
            OpRuntime::Mcp { .. } => "mcp",
            OpRuntime::Http { .. } => "http",
            OpRuntime::Script { .. } => "script",
        }
    }
}

/// One step of a pipeline skill (Brain OS registry v2): a target and how its
/// input is built and where its output goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipelineStep {
    /// Unique within the pipeline; later steps read this step's output as
    /// `$step.<id>.<field>`.
    pub id: &'static str,
    pub target: CallTarget,
    /// Target input field, read from `$inputs.<field>` or `$step.<id>.<field>`.
    pub inputs: &'static [(&'static str, &'static str)],
    /// Target output field, written to `$outputs.<name>` (or named
    /// `$step.<id>.<field>`, which every step output already is).
    pub outputs: &'static [(&'static str, &'static str)],
}

/// In-process Rust code: `module` is the Rust module path, `handler` the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entrypoint {
    pub module: &'static str,
    pub handler: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: &'static str,
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

words! {
    /// How serious a validation rule is: `error` fails the job, the others are
    /// noted in its result and record.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub enum Severity {
        Error = "error",
        Warning = "warning",
        Info = "info",
    }
}

impl Manifest {
    /// A starting point for hand-written manifests: fill in `name`, `version`,
    /// `description`, `entrypoint` and `location` with struct update syntax.
    pub const DEFAULT: Manifest = Manifest {
        name: "",
        title: None,
        version: "",
        description: "",
        domain: None,
        owners: &[],
        status: Status::Enabled,
        deprecation: None,
        kind: Kind::Logic,
        autonomy: Autonomy::L0,
        policy_tags: &[],
        intents: &[],
        rate_limit: None,
        redaction: Redaction {
            inputs: &[],
            outputs: &[],
        },
        execution: Execution::DEFAULT,
        constraints: Constraints::DEFAULT,
        mcp: Mcp::HIDDEN,
        reusable_by: &[],
        capabilities: &[],
        side_effects: &[],
        call_targets: &[],
        steps: &[],
        op: None,
        ambient_allowances: &[],
        entrypoint: Entrypoint {
            module: "",
            handler: "",
        },
        location: Location {
            file: "",
            line: 0,
            column: 0,
        },
    };
}
