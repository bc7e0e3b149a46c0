//! The typed arguments of one `#[skill]` (or `#[pipeline]`, `#[op]`), each
//! value with its span.

use proc_macro2::Span;
use syn::{Expr, LitInt, LitStr, Path};

use skill_core::capability::Ambient;

/// Which attribute is being read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Skill,
    Pipeline,
    Op,
}

/// `runtime = "..."` of an op and its field (`tool`, `url` or `command`).
pub struct OpArgs {
    /// `Native`, `Mcp`, `Http` or `Script`.
    pub runtime: Option<Choice>,
    pub tool: Option<LitStr>,
    pub url: Option<LitStr>,
    pub command: Option<LitStr>,
}

/// `step(id = "...", skill = "name@version", inputs(field = "$inputs.x"), outputs(field = "$outputs.y"))`.
pub struct StepArgs {
    pub id: Option<LitStr>,
    /// `skill` or `op`, and the reference.
    pub target: Option<(&'static str, LitStr)>,
    pub inputs: Vec<(syn::Ident, LitStr)>,
    pub outputs: Vec<(syn::Ident, LitStr)>,
    /// `after("a", "b")`: the steps this one waits for (default: the step
    /// written before it).
    pub after: Option<Vec<LitStr>>,
    /// `when = "$..."` (runs if true) or `unless = "$..."` (runs if false).
    pub guard: Option<(bool, LitStr)>,
    /// `on_error("a", ...)`: the steps this error handler handles.
    pub on_error: Option<Vec<LitStr>>,
    /// `retries = N`: node retries.
    pub retries: Option<LitInt>,
}

/// A choice among fixed words, kept as the runtime enum variant to emit.
#[derive(Clone, Copy)]
pub struct Choice {
    pub variant: &'static str,
    pub span: Span,
}

#[derive(Default)]
pub struct SkillArgs {
    pub krate: Option<Path>,
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub version: Option<LitStr>,
    pub description: Option<LitStr>,
    pub domain: Option<LitStr>,
    pub owners: Vec<LitStr>,
    pub status: Option<Choice>,
    pub deprecation: Option<DeprecationArgs>,
    pub kind: Option<Choice>,
    pub autonomy: Option<Choice>,
    pub policy_tags: Vec<LitStr>,
    /// `intents("seo_audit", ...)`: the job intents the skill serves.
    pub intents: Vec<LitStr>,
    pub rate_limit: Option<LitInt>,
    pub redact_inputs: Vec<LitStr>,
    pub redact_outputs: Vec<LitStr>,
    pub timeout_ms: Option<LitInt>,
    pub retries: Option<LitInt>,
    pub backoff: Option<Choice>,
    pub idempotent: bool,
    /// `idempotency(key = "...", fields(...))`: how jobs without a caller's
    /// key are keyed.
    pub idempotency: Option<IdempotencyArgs>,
    pub destructive: bool,
    pub requires_hitl: bool,
    pub sandbox: Option<Choice>,
    pub source: Option<Choice>,
    pub mcp: Option<McpArgs>,
    pub reusable_by: Vec<(Choice, Choice)>,
    pub capabilities: Vec<Path>,
    pub side_effects: Vec<SideEffectArgs>,
    pub calls: Vec<Path>,
    /// `ambient(kind = "reason")`: ambient uses allowed without a capability.
    pub ambient: Vec<(Ambient, LitStr)>,
    pub preconditions: Vec<PreconditionArgs>,
    pub postconditions: Vec<PostconditionArgs>,
    pub validation_rules: Vec<RuleArgs>,
    pub steps: Vec<StepArgs>,
    /// `Some` for `#[op]`.
    pub op: Option<OpArgs>,
}

pub struct IdempotencyArgs {
    pub span: Span,
    pub strategy: Option<Choice>,
    pub fields: Vec<LitStr>,
}

pub struct DeprecationArgs {
    pub span: Span,
    pub replaced_by: Option<LitStr>,
    pub removal_version: Option<LitStr>,
    pub notes: Option<LitStr>,
}

pub struct McpArgs {
    pub exposed: bool,
    pub tool_name: Option<LitStr>,
    pub permissions: Vec<LitStr>,
}

pub struct SideEffectArgs {
    pub capability: Path,
    pub target: Option<LitStr>,
    pub reversible: Option<bool>,
    pub description: Option<LitStr>,
}

pub struct PreconditionArgs {
    pub span: Span,
    pub code: Option<LitStr>,
    pub message: Option<LitStr>,
    pub check: Option<Expr>,
}

pub struct PostconditionArgs {
    pub span: Span,
    pub check: Option<Expr>,
    pub rollback: Option<LitStr>,
}

pub struct RuleArgs {
    pub span: Span,
    pub id: Option<LitStr>,
    pub severity: Option<Choice>,
    pub message: Option<LitStr>,
    pub check: Option<Expr>,
}
