//! The static manifest every skill carries: identity, policy and contract metadata.
//!
//! Everything here is `const`-constructible so that `#[skill]` can emit one
//! `&'static Manifest` per skill and submit it to `inventory` without running code.
//! What the types already know (input/output schemas, failure modes, typed
//! conditions) lives on skill-runtime's `Skill` trait instead, so it cannot drift.

pub use crate::access::{AgentRole, PermissionLevel, Reuse, granted, may_run};
pub use crate::capability::AmbientAllowance;
use crate::capability::CapabilityInfo;
pub use crate::steps::Guard;

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
    /// The business domain the skill belongs to.
    pub domain: Option<&'static str>,
    /// Who maintains the skill (teams or people).
    pub owners: &'static [&'static str],
    /// Lifecycle status: active, experimental, deprecated or disabled.
    pub status: Status,
    /// Set exactly when the status is deprecated.
    pub deprecation: Option<Deprecation>,
    /// Logic (a function body) or pipeline (steps).
    pub kind: Kind,
    /// How far the skill may act without a human (L0 to L3).
    pub autonomy: Autonomy,
    /// Free tags policies select skills by.
    pub policy_tags: &'static [&'static str],
    /// The job intents this skill serves (the seed's `JobIntent`, e.g.
    /// `seo_audit`): a job envelope that names an intent and no skill runs it.
    pub intents: &'static [&'static str],
    /// The most jobs a minute the runtime admits, if limited.
    pub rate_limit: Option<RateLimit>,
    /// Input and output fields kept out of records and errors.
    pub redaction: Redaction,
    /// Timeout, retries, backoff and idempotency.
    pub execution: Execution,
    /// How a job without a caller's idempotency key is keyed (the seed's
    /// `IdempotencyConfig.keyStrategy` and `keyFields`); `None`: the
    /// runtime's default (see [`IdempotencyKey`]).
    pub idempotency: Option<IdempotencyKey>,
    /// The ADR's constraints: destructive, HITL, sandbox, source.
    pub constraints: Constraints,
    /// Whether and how the skill is an MCP tool.
    pub mcp: Mcp,
    /// The agent roles that may call the skill, each at a permission level.
    pub reusable_by: &'static [Reuse],
    /// The capabilities the skill declares.
    pub capabilities: &'static [&'static CapabilityInfo],
    /// The effects it has, each under a declared capability.
    pub side_effects: &'static [SideEffect],
    /// The skills and ops its body calls (`calls(...)`).
    pub call_targets: &'static [CallTarget],
    /// The steps of a pipeline skill ([`Kind::Pipeline`]); empty otherwise.
    pub steps: &'static [PipelineStep],
    /// `Some` for an op (`#[op]`): an entry of the op registry, not the skill
    /// registry, and how it runs.
    pub op: Option<OpRuntime>,
    /// Ambient uses allowed without a covering capability, each with its reason.
    pub ambient_allowances: &'static [AmbientAllowance],
    /// Where the handler is: module path and function.
    pub entrypoint: Entrypoint,
    /// Where the skill is defined, for build errors (never exported).
    pub location: Location,
}

/// How a skill's jobs are keyed when the caller gives no idempotency key
/// (the seed's `keyStrategy` and `keyFields`). Without one, a job with an
/// intent is keyed by the seed's stable hash of intent, scope and payload,
/// and a job a queue delivered by its own id (so a second delivery does not
/// run an effectful skill again); other jobs are not deduplicated. A
/// caller's key always wins: a caller can always ask for a run of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdempotencyKey {
    /// `hash`: every job with the same intent, scope and payload is one;
    /// `composite`: every job with the same values at `fields` is one.
    pub strategy: KeyStrategy,
    /// For `composite`: dotted paths into the job envelope, rooted at
    /// `intent`, `scope` or `payload` (`scope.entityType`,
    /// `payload.namespace`).
    pub fields: &'static [&'static str],
}

words! {
    /// The seed's `IdempotencyConfig.keyStrategy`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum KeyStrategy {
        Hash = "hash",
        Composite = "composite",
    }
}

/// Whether `path` names a part of a job envelope a composite key can read:
/// `intent`, or `scope` or `payload` followed by field names.
pub fn is_key_field(path: &str) -> bool {
    let mut parts = path.split('.');
    let root = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    match root {
        "intent" => rest.is_empty(),
        "scope" | "payload" => rest.iter().all(|p| !p.is_empty()),
        _ => false,
    }
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
    /// The skill that replaces this one, if any.
    pub replaced_by: Option<&'static str>,
    /// The version from which the skill is gone.
    pub removal_version: Option<&'static str>,
    /// What callers should do instead.
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

/// A limit on how often a skill runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Jobs admitted per minute.
    pub max_per_minute: u32,
}

/// Input and output fields that never reach a record or a log line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Redaction {
    /// Input fields redacted (JSON pointers or top-level names).
    pub inputs: &'static [&'static str],
    /// Output fields redacted.
    pub outputs: &'static [&'static str],
}

/// Execution policy. Defaults follow the AI-COS skill model: 60 s, 3 retries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Execution {
    /// Each attempt's time limit.
    pub timeout_ms: u64,
    /// How many times a retryable failure is tried again.
    pub retries: u32,
    /// The wait between attempts.
    pub backoff: Backoff,
    /// Whether running twice with the same input is safe (timeouts are retried only then).
    pub idempotent: bool,
}

impl Execution {
    /// 60 s, 3 retries, exponential backoff, not idempotent.
    pub const DEFAULT: Execution = Execution {
        timeout_ms: 60_000,
        retries: 3,
        backoff: Backoff::Exponential,
        idempotent: false,
    };

    /// The longest time limit an attempt, or a whole job, may have: 30 days.
    /// Every door that takes a timeout (the attribute, a registry file, an
    /// overlay, a job envelope, the command line) refuses a longer one, so
    /// no deadline computed from it can overflow a clock.
    pub const MAX_TIMEOUT_MS: u64 = 30 * 24 * 3_600_000;

    /// The most retries a skill may declare: past a few, retrying hides a
    /// failure instead of riding out a blip.
    pub const MAX_RETRIES: u32 = 10;

    /// What is wrong with these values, if anything: a timeout outside 1 ms
    /// to [`Execution::MAX_TIMEOUT_MS`], retries past
    /// [`Execution::MAX_RETRIES`].
    pub fn problems(timeout_ms: u64, retries: u64) -> Vec<String> {
        let mut out = Vec::new();
        if timeout_ms == 0 || timeout_ms > Self::MAX_TIMEOUT_MS {
            out.push(format!(
                "timeout_ms {timeout_ms} is outside 1 to {} (30 days)",
                Self::MAX_TIMEOUT_MS
            ));
        }
        if retries > u64::from(Self::MAX_RETRIES) {
            out.push(format!(
                "retries {retries} is over {}; a failure retried more often is a failure",
                Self::MAX_RETRIES
            ));
        }
        out
    }
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
    /// The skill destroys data: callers must acknowledge it.
    pub is_destructive: bool,
    /// A human confirms each run (the runtime's approver).
    pub requires_hitl: bool,
    /// The execution environment the skill requires.
    pub sandbox_type: Sandbox,
    /// Where the skill comes from: this crate (LOCAL) or a package (GLOBAL).
    pub source: Origin,
}

impl Constraints {
    /// Not destructive, no HITL, local sandbox, local source.
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
    /// Whether the skill is served as an MCP tool.
    pub exposed: bool,
    /// The tool's name, when it is not the skill's.
    pub tool_name: Option<&'static str>,
    /// Permissions a server must grant before listing or calling the tool.
    pub permissions: &'static [&'static str],
}

impl Mcp {
    /// Not an MCP tool.
    pub const HIDDEN: Mcp = Mcp {
        exposed: false,
        tool_name: None,
        permissions: &[],
    };
}

words! {
    /// The business domains of skills and agents (the AI-COS `Domain`): the
    /// one list the macros, the registry rules and the published formats use.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Domain {
        /// Foundations of the monorepo.
        Core = "core",
        /// Docker, CI/CD, performance.
        Infra = "infra",
        /// Postgres, Redis, Supabase.
        Data = "data",
        /// SEO.
        Seo = "seo",
        /// Knowledge and RAG.
        Rag = "rag",
        /// Commerce and checkout.
        Cart = "cart",
        /// AI-COS governance.
        Aicos = "aicos",
    }
}

words! {
    /// The kinds of entity a job processes (the seed's `JobScope.entityType`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum EntityType {
        /// A product range.
        Gamme = "gamme",
        /// A vehicle.
        Vehicle = "vehicle",
        /// An article.
        Article = "article",
        /// A page of the site.
        Page = "page",
        /// Everything.
        All = "all",
    }
}

/// One declared side effect. Its type and operation come from the capability.
#[derive(Clone, Copy, Debug)]
pub struct SideEffect {
    /// The declared capability the effect falls under.
    pub capability: &'static CapabilityInfo,
    /// What it touches (a table, a path, a service).
    pub target: &'static str,
    /// Whether the effect can be undone.
    pub reversible: bool,
    /// The effect, for people.
    pub description: Option<&'static str>,
}

/// A skill or op this skill may call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallTarget {
    /// A skill or an op.
    pub kind: TargetKind,
    /// Its name.
    pub name: &'static str,
    /// The version required, if pinned.
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
    Mcp {
        /// The tool's name on that server.
        tool: &'static str,
    },
    /// An HTTP endpoint that takes the input as a JSON POST body.
    Http {
        /// The endpoint (`http://` only).
        url: &'static str,
    },
    /// A program and its arguments, separated by spaces (no shell): the input
    /// as JSON on stdin, the output as JSON on stdout.
    /// A program and its arguments, separated by spaces (no shell): the input as JSON on stdin, the output as JSON on stdout.
    Script {
        /// The program and its arguments.
        command: &'static str,
    },
}

impl OpRuntime {
    /// The runtime's name: `native`, `mcp`, `http` or `script`.
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
    /// The skill or op the step runs.
    pub target: CallTarget,
    /// Target input field, read from `$inputs.<field>` or `$step.<id>.<field>`.
    pub inputs: &'static [(&'static str, &'static str)],
    /// Target output field, written to `$outputs.<name>` (or named
    /// `$step.<id>.<field>`, which every step output already is).
    pub outputs: &'static [(&'static str, &'static str)],
    /// The steps this one waits for (`after(...)`); `None`: the step written
    /// before it. Steps whose waits are over run at the same time.
    pub after: Option<&'static [&'static str]>,
    /// `when = "..."` / `unless = "..."`: the step runs only if a boolean
    /// (the pipeline's input's or a step's output's) is true, or false;
    /// otherwise it is skipped. `None`: it always runs.
    pub guard: Option<Guard>,
    /// `on_error("a", ...)`: this step is an error handler. It runs only
    /// when one of the steps it names fails, and the run fails after it.
    /// Empty: a step of the flow.
    pub on_error: &'static [&'static str],
    /// `retries = N`: how many more times the step's job runs when it fails
    /// with an error worth retrying, after its skill's own retries.
    pub retries: u32,
}

impl PipelineStep {
    /// The most node retries a step may ask for.
    pub const MAX_RETRIES: u32 = 10;

    /// Whether the step is an error handler (`on_error(...)`).
    pub const fn is_handler(&self) -> bool {
        !self.on_error.is_empty()
    }
}

/// In-process Rust code: `module` is the Rust module path, `handler` the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entrypoint {
    /// The Rust module path of the handler.
    pub module: &'static str,
    /// The handler function's name.
    pub handler: &'static str,
}

/// Where in the source something was declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file, as `file!()` writes it.
    pub file: &'static str,
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1.
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
        idempotency: None,
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
