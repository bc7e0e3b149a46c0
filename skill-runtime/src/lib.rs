//! Compile-time checked skills.
//!
//! `#[skill(...)]` turns an `async fn` into a skill: a handler with a manifest
//! (identity, JSON Schemas of its input and output, capabilities, side effects,
//! execution policy, MCP exposure, ...). The manifest is checked when the code
//! compiles, and once more when the [`Registry`] is built from every linked crate.
//!
//! A skill, registered by being linked, run through the runtime's whole
//! pipeline (schema checks, policies, record), then served as an MCP tool:
//!
//! ```
//! use std::sync::Arc;
//!
//! use serde_json::json;
//! use skill_runtime::prelude::*;
//! use skill_runtime::{Registry, Runtime};
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
//! #[skill(version = "1.0.0", autonomy = "L3", mcp)]
//! pub async fn greet(input: GreetInput) -> GreetOutput {
//!     GreetOutput { greeting: format!("Hello, {}!", input.name) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! // Register: every `#[skill]` of every linked crate, checked as a whole.
//! let registry = Arc::new(Registry::from_inventory()?);
//! let runtime = Runtime::builder(registry).build()?;
//!
//! // Invoke: by name with JSON (or typed, `Runtime::call::<S>`).
//! let result = runtime
//!     .invoke_json("greet", json!({"name": "Ada"}), Caller::default())
//!     .await?;
//! assert_eq!(result.data["greeting"], "Hello, Ada!");
//! // Bad input is a typed error, and the runtime keeps serving.
//! let refused = runtime.invoke_json("greet", json!({"name": 7}), Caller::default()).await;
//! assert_eq!(refused.unwrap_err().code(), "invalid_input");
//!
//! // Serve: the exposed skills as MCP tools (feature `mcp`).
//! # #[cfg(feature = "mcp")]
//! # {
//! use skill_runtime::mcp::{McpOptions, McpServer};
//! let server = McpServer::new(runtime, McpOptions::new().server_info("greeter", "1.0.0"))?;
//! let call = server.call("greet", json!({"name": "Grace"}).as_object().cloned()).await?;
//! assert_eq!(call.structured_content, Some(json!({"greeting": "Hello, Grace!"})));
//! if std::env::var_os("GREETER_STDIO").is_some() {
//!     server.serve_stdio().await?; // what an MCP client launches
//! }
//! # }
//! # Ok(())
//! # }
//! ```
//!
//! Features: `mcp` adds `mcp::McpServer`, which serves the exposed skills as
//! MCP tools over stdio on the official SDK (`rmcp`); `mcp-http` adds its
//! Streamable HTTP transport. The tool, OpenAI and UnifiedSkillContract views of
//! a registry ([`views`]) need no feature.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The layers, lowest first: sync < files < schema < model < contract < registry <
// exec < agent < queue < mcp < otel; each depends only on those below it
// (ARCHITECTURE.md, checked by tests/layers.rs). Five are public API, each a
// front door a user reaches for on purpose and documented as such:
// `queue` and `mcp` (serving), `otel` (export), `registry` (the registry's
// errors, contracts and entries) and `schema` (a type's schemas). The others
// are reached through the facade below.
mod agent;
#[cfg(all(feature = "console", any(feature = "redis", feature = "postgres")))]
#[cfg_attr(
    docsrs,
    doc(cfg(all(feature = "console", any(feature = "redis", feature = "postgres"))))
)]
pub mod console;
mod contract;
mod exec;
mod files;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
mod model;
mod moved;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;
pub mod queue;
pub mod registry;
pub mod schema;
mod spare;
mod sync;

// The facade: what users name, by topic. Paths inside the private layers
// are not public API.

/// Agents (the AI-COS agent model): contracts checked when the code
/// compiles, their registry, running them, their KPIs. See docs/agents.md.
pub mod agents {
    pub use crate::agent::artifacts::{ArtifactStore, DirArtifacts};
    pub use crate::agent::audit::audit_targets;
    pub use crate::agent::contract::{
        AgentContract, AgentSkill, AgentTool, ConditionText, Escalation, Kpi, KpiSource, Memory,
        PostCheck, PostCondition, PreCondition, Trigger,
    };
    pub use crate::agent::escalate::Enqueue;
    pub use crate::agent::export::{AGENT_REGISTRY_VERSION, check_agents};
    pub use crate::agent::handler::{Agent, AgentCtx, Uses};
    pub use crate::agent::kpi::{KpiRun, KpiValue, kpis};
    pub use crate::agent::outcome::{AgentError, AgentMetrics, AgentResult};
    pub use crate::agent::registry::{
        AgentEntry, AgentRegistry, AgentRegistryError, RegisteredAgent,
    };
    pub use crate::agent::run::{AgentFailure, EscalationDecision};
    pub use crate::agent::runner::AgentRunner;
    pub use skill_core::agent::{Direction, KpiStatus, Storage, ToolPermission, kpi_status};
    pub use skill_core::names::is_agent_id;
}

/// Capabilities: the data every capability carries, and the traits that tie
/// capabilities to skills at compile time.
pub mod capability {
    pub use crate::contract::capability::{CallableBy, Calls, CapabilityEntry, Declares, catalog};
    pub use skill_core::capability::{
        Ambient, CapabilityInfo, EffectType, Operation, RUNTIME_AMBIENT,
    };
    pub use skill_core::names::is_capability_id;
}

/// The static manifest every skill carries, the words of its fields, and
/// the typed checks (conditions, rules) it declares.
pub mod manifest {
    pub use crate::contract::conditions::{
        Conditions, PostconditionInfo, PreconditionInfo, ValidationRuleInfo,
    };
    pub use crate::contract::skill::{
        InputCheck, OutputCheck, Postcondition, Precondition, ValidationRule,
    };
    pub use skill_core::manifest::*;
    pub use skill_core::names::{is_semver, is_snake_case};
    pub use skill_core::words::Word;
}

/// What a caller sends and what it gets back, beyond the envelope and the
/// result themselves (at the crate root): priorities, scopes, limits,
/// retrieval context, metrics, and where an escalated job comes from.
pub mod envelope {
    pub use crate::model::caller::{Priority, Source};
    pub use crate::model::constraints::JobConstraints;
    pub use crate::model::envelope::{RagContext, Scope, SearchMethod, TruthLevel, new_id};
    pub use crate::model::handover::Handover;
    pub use crate::model::hash::stable_hash;
    pub use crate::model::id::NotAUuid;
    pub use crate::model::result::Metrics;
    pub use crate::model::time::parse_time;
}

/// Run records, the sinks they go to, and statistics.
pub mod record {
    pub use crate::exec::sink::{FanOut, JsonLinesSink, MemorySink, RecordSink};
    pub use crate::exec::stats::{SkillStats, stats_from_records};
    pub use crate::model::graph::{GraphBudget, GraphError, GraphState, GraphStatus, NodeRun};
    pub use crate::model::record::{
        AttemptOutcome, AttemptRecord, Attempts, ErrorRecord, Progress, RuleNote, RunRecord,
        RunStatus, Stage, StageOutcome, StageRecord, Stages, StepRun,
    };
    pub use crate::model::recorded::RecordedValue;
    pub use crate::model::time::format_time;
}

/// The registry's rules over exported JSON, shared by `Registry::build` and
/// `skill-registry validate`.
pub mod rules {
    pub use crate::files::first_duplicate_key;
    pub use crate::registry::rules::check_registry;
    pub use crate::registry::rules::finding::{At, Finding};
    pub use crate::registry::rules::pipeline::{Closure, check_pipelines};
    pub use crate::registry::rules::schema::{
        MAX_DEPTH, MAX_STEPS, accepts, property, property_at, property_names, resolve, types_of,
    };
    pub use skill_core::steps::Reference;
}

/// The JSON artifacts and their canonical bytes.
pub mod export {
    pub use crate::registry::export::{
        CAPABILITIES_FORMAT_VERSION, OP_REGISTRY_FORMAT_VERSION, REGISTRY_FORMAT_VERSION, canonical,
    };
}

/// Other tools' views of a registry: MCP tools, OpenAI function tools, the
/// ADR's UnifiedSkillContract v1.
pub mod views {
    pub use crate::registry::views::inline::{MAX_INLINED_NODES, self_contained};
    pub use crate::registry::views::{
        META_KEY, McpProtocol, ViewError, exposed_skills, mcp_tool, mcp_tools, mcp_tools_for,
        openai_tools, portable, tool_name, unified_contracts,
    };
}

/// The policies the runtime enforces that users plug into or configure.
pub mod policy {
    pub use crate::exec::policy::BoxFuture;
    pub use crate::exec::policy::approval::{
        Approval, ApprovalRequest, ApproveAll, Approver, DenyApprovals,
    };
    pub use crate::exec::policy::idempotency::{
        Claim, Claimed, IdempotencyConfig, IdempotencyStore, MemoryIdempotency, Shared,
    };
    pub use crate::exec::policy::limits::Limits;
    pub use crate::exec::policy::rate::{RateLimitStore, Refusal};
    pub use crate::exec::policy::rollback::{Rollback, RollbackRequest};
    pub use crate::exec::policy::runs::{MemoryRuns, RunStore};
    pub use crate::model::approval::Decision;
    pub use crate::model::error::RollbackError;
}

/// Ops that run outside this process: a tool on an MCP client, or a script.
pub mod op {
    #[cfg(feature = "mcp-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mcp-client")))]
    pub use crate::exec::op::McpClient;
    pub use crate::exec::op::{McpTools, OpFailed, ScriptRoot, ToolClient};
}

/// Asking the job's caller while the handler runs ([`Ctx::elicit`],
/// [`Ctx::sample`]).
pub mod ask {
    pub use crate::contract::ask::{AskError, Elicited};
}

/// An output made of MCP content blocks (images, audio, embedded
/// resources) instead of structured data.
pub mod content {
    pub use crate::model::content::{Block, Body, CONTENT_MARKER, Content, Embedded};
}

/// Pipeline skills: ordered steps, each a job of its own.
pub mod pipeline {
    pub use crate::exec::pipeline::PipelineFailed;
}

// The crate root: what writing, testing and exporting skills needs. The
// rest is under the module named for its front door (`policy`, `record`,
// `envelope`, `queue`, `mcp`, ...), and each item has one public path (the
// prelude aside).
pub use contract::capability::Capability;
pub use contract::direct::{AppCtx, Authority};
pub use contract::invocation::{Fence, Resources};
pub use contract::skill::{Ctx, Skill};
pub use contract::watch::{Cancel, LogLevel, LogLine, PROGRESS_EVERY, Watch};
pub use exec::ground::Grounded;
pub use exec::runtime::{Runtime, RuntimeBuilder};
pub use model::caller::Caller;
pub use model::data::Data;
pub use model::envelope::JobEnvelope;
pub use model::error::{InvokeError, OverBudget, StartError};
pub use model::id::Id;
pub use model::result::{Artifact, NextAction, SkillResult};
pub use registry::index::Registry;
pub use skill_core::failure::{FailureMode, FailureModes, Never};

// Names the root held before, each a deprecated alias of its new path.
#[doc(hidden)]
#[allow(deprecated)]
pub use moved::{Ambient, Calls, CapabilityInfo, Declares, EffectType, Operation};

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

/// `#[agent(id = "agent.domain.name", role = "...", skills(...), ...)]` on an
/// `async fn` declares an agent (seed 002's contract); see docs/agents.md.
pub use skill_macros::agent;

/// `#[capability(id = "domain.verb", effect = "...", operation = "...")]` on a unit
/// struct declares a capability; its doc comment is the description.
pub use skill_macros::capability;

/// `#[derive(FailureModes)]` on a skill's error enum.
pub use skill_macros::FailureModes;

/// What skill authors import.
pub mod prelude {
    pub use crate::agents::{Agent, AgentCtx};
    pub use crate::content::Content;
    pub use crate::{
        Artifact, Caller, Ctx, FailureModes, LogLevel, Never, NextAction, OverBudget, Skill, agent,
        capability, op, pipeline, skill,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// Paths the generated code uses. Not public API. Its name carries the
/// generation of the contract between this crate and `skill-macros`: a
/// macro crate of another generation names a module that is not here, and
/// the skill fails to compile ("could not find `__private_v2` in
/// `skill_runtime`") instead of misbehaving. Use the same version of both
/// (the facade re-exports the macros, so depending on `skill-runtime` alone
/// does).
#[doc(hidden)]
pub mod __private_v2 {
    pub use crate::agent::audit::audit_targets;
    pub use crate::agent::contract::{
        AgentContract, AgentSkill, AgentTool, ConditionText, Escalation, Kpi, KpiSource, Memory,
        PostCheck, PostCondition, PreCondition, Trigger, assert_reusable,
    };
    pub use crate::agent::handler::{Agent, AgentCtx, Uses};
    pub use crate::agent::registry::AgentEntry;
    pub use crate::capability::{
        Ambient, CallableBy, Calls, CapabilityInfo, Declares, EffectType, Operation,
    };
    pub use crate::contract::capability::{
        CapabilityEntry, ambient_allowed, assert_effect_listed, assert_no_wider,
    };
    pub use crate::contract::conditions::{One, PostconditionFn, PreconditionFn, RuleFn, Two};
    pub use crate::contract::direct::{
        AnyType, Authority, NotASkill, Probe, TypeProbe, infallible, run_called,
    };
    pub use crate::contract::entry::SkillEntry;
    pub use crate::exec::op::{OpFailed, run as run_external_op};
    pub use crate::exec::pipeline::{PipelineFailed, run as run_pipeline};
    pub use crate::manifest::{
        InputCheck, OutputCheck, Postcondition, Precondition, ValidationRule,
    };
    pub use crate::{Caller, Capability, Ctx, FailureMode, FailureModes, Never, Skill};
    pub use core;
    pub use inventory;
    pub use skill_core::agent::{Direction, Storage, ToolPermission};
    pub use skill_core::manifest::*;
}
