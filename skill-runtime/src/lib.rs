//! Compile-time checked skills.
//!
//! `#[skill(...)]` turns an `async fn` into a skill: a handler with a manifest
//! (identity, JSON Schemas of its input and output, capabilities, side effects,
//! execution policy, MCP exposure, ...). The manifest is checked when the code
//! compiles, and once more when the [`Registry`] is built from every linked crate.
//!
//! ```
//! use skill_runtime::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! pub struct GreetInput {
//!     /// Who to greet.
//!     pub name: String,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! pub struct GreetOutput {
//!     pub greeting: String,
//! }
//!
//! /// Greet someone by name.
//! #[skill(version = "1.0.0", autonomy = "L3")]
//! pub async fn greet(input: GreetInput) -> GreetOutput {
//!     GreetOutput { greeting: format!("Hello, {}!", input.name) }
//! }
//!
//! let registry = Registry::from_inventory().unwrap();
//! assert_eq!(registry.get("greet").unwrap().name(), "greet");
//! ```
//!
//! Features: `mcp` adds `mcp::McpServer`, which serves the exposed skills as
//! MCP tools over stdio on the official SDK (`rmcp`); `mcp-http` adds its
//! Streamable HTTP transport. The tool, OpenAI and UnifiedSkillContract views of
//! a registry ([`views`]) need no feature.

pub mod capability;
mod ctx;
mod de;
mod entry;
pub mod envelope;
pub mod error;
pub mod export;
pub mod failure;
mod id;
mod invoke;
pub mod manifest;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod op;
pub mod pipeline;
pub mod policy;
pub mod record;
pub mod registry;
pub mod rules;
pub mod schema;
mod skill;
pub mod views;

pub use capability::{
    Ambient, CallableBy, Calls, Capability, CapabilityInfo, Declares, EffectType, Operation,
};
pub use ctx::{Ctx, Resources};
pub use entry::{Conditions, PostconditionInfo, PreconditionInfo, SkillEntry, ValidationRuleInfo};
pub use envelope::{
    Artifact, Caller, Id, JobConstraints, JobEnvelope, Metrics, NextAction, Priority, RuleNote,
    SkillResult, Source,
};
pub use error::{InvokeError, StartError};
pub use failure::{FailureMode, FailureModes, Never};
pub use invoke::{Limits, Runtime, RuntimeBuilder};
pub use manifest::Manifest;
pub use policy::{
    Approval, ApprovalRequest, ApproveAll, Approver, DenyApprovals, Rollback, RollbackRequest,
};
pub use record::{JsonLinesSink, MemorySink, RecordSink, RunRecord, SkillStats, StepRun};
pub use registry::{Problem, RegisteredSkill, Registry, RegistryError};
pub use skill::{
    InputCheck, OutputCheck, Postcondition, Precondition, Severity, Skill, ValidationRule,
};

/// `#[skill(...)]`: see the crate documentation and `docs/attributes.md`.
pub use skill_macros::skill;

/// `#[pipeline(...)]` on a bodiless `async fn name(input: In) -> Out;` declares
/// a pipeline skill: ordered `step(id = "...", skill = "name@version",
/// inputs(field = "$inputs.x"), outputs(field = "$outputs.y"))`; see
/// `docs/pipelines.md`.
pub use skill_macros::pipeline;

/// `#[op(...)]`: an entry of the op registry (`op-registry.json`). On an
/// `async fn` with a body, a native op (checked like a skill); on a bodiless
/// one, `runtime = "mcp"` with `tool`, `"script"` with `command`, or `"http"`
/// with `url`. Pipeline steps and `calls` reach ops by name.
pub use skill_macros::op;

/// `#[capability(id = "domain.verb", effect = "...", operation = "...")]` on a unit
/// struct declares a capability; its doc comment is the description.
pub use skill_macros::capability;

/// `#[derive(FailureModes)]` on a skill's error enum.
pub use skill_macros::FailureModes;

/// What skill authors import.
pub mod prelude {
    pub use crate::{
        Artifact, Caller, Ctx, FailureModes, JobEnvelope, Never, NextAction, Registry, Resources,
        Runtime, Skill, capability, op, pipeline, skill,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// Paths the generated code uses. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::capability::{CapabilityEntry, assert_effect_listed, is_capability_id};
    pub use crate::entry::SkillEntry;
    pub use crate::manifest::*;
    pub use crate::op::{OpFailed, run as run_external_op};
    pub use crate::pipeline::{PipelineFailed, run as run_pipeline};
    pub use crate::{
        Ambient, CallableBy, Caller, Calls, Capability, CapabilityInfo, Ctx, Declares, EffectType,
        FailureMode, FailureModes, InputCheck, Never, Operation, OutputCheck, Postcondition,
        Precondition, Severity, Skill, ValidationRule,
    };
    pub use core;
    pub use inventory;
}
