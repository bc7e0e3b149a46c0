//! What a caller sends: the job envelope (the AI-COS agent model's
//! `JobEnvelope`), the caller's context, and the limits it puts on the job.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use skill_core::manifest::{AgentRole, PermissionLevel, TargetKind};

use crate::model::id::Id;

/// One request to run a skill.
///
/// `started_at` is not here on purpose: the runtime stamps it when the invocation
/// starts, and the handler reads it from its context (the seed's rule that a
/// handler never computes its own start time).
///
/// ```
/// use skill_runtime::{Caller, JobEnvelope};
/// use serde_json::json;
///
/// let job = JobEnvelope::new("vlevel_calculator", json!({"page_data": {"url": "https://a.example/", "gamme": "x"}}))
///     .with_caller(Caller::agent(skill_runtime::manifest::AgentRole::Executor,
///                                skill_runtime::manifest::PermissionLevel::Execute))
///     .with_timeout_ms(2_000);
/// assert_eq!(job.skill, "vlevel_calculator");
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobEnvelope {
    /// Unique per job; a UUID v4 unless the caller brings its own.
    #[serde(default = "new_id")]
    pub job_id: Id,
    /// Shared by every job of one trace; a UUID v4 unless given.
    #[serde(default = "new_id")]
    pub trace_id: Id,
    /// The job that started this one, for nested and pipeline calls.
    #[serde(default)]
    pub parent_job_id: Option<Id>,
    /// Skill name (op name when `kind` is `op`). Borrowed when it is a
    /// `&'static str` (a manifest's name), so typed calls copy nothing.
    pub skill: Cow<'static, str>,
    /// What `skill` names: a skill (the default) or an op of the op registry.
    #[serde(default, skip_serializing_if = "TargetKind::is_skill")]
    pub kind: TargetKind,
    /// Exact version to run; the highest registered version when absent.
    #[serde(default)]
    pub version: Option<Cow<'static, str>>,
    /// The skill's input; must match its input schema.
    #[serde(default = "empty_object")]
    pub params: Value,
    #[serde(default)]
    pub constraints: JobConstraints,
    #[serde(default)]
    pub caller: Caller,
    /// Jobs with the same key run once; the others get the stored result. When
    /// absent, the runtime derives a stable key from the skill name, the params
    /// and the dry-run flag (never from the time).
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

/// A fresh UUID v4 id (the serde default of the envelope's ids).
pub fn new_id() -> Id {
    Id::new_v4()
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl JobEnvelope {
    /// A job for `skill` with fresh job and trace ids and an operator caller.
    pub fn new(skill: impl Into<Cow<'static, str>>, params: Value) -> JobEnvelope {
        JobEnvelope {
            job_id: new_id(),
            trace_id: new_id(),
            parent_job_id: None,
            skill: skill.into(),
            kind: TargetKind::Skill,
            version: None,
            params,
            constraints: JobConstraints::default(),
            caller: Caller::default(),
            idempotency_key: None,
        }
    }

    /// `name` or `name@version`.
    pub fn for_reference(reference: &str, params: Value) -> JobEnvelope {
        let (name, version) = split_reference(reference);
        let mut job = JobEnvelope::new(name.to_owned(), params);
        job.version = version.map(|v| Cow::Owned(v.to_owned()));
        job
    }

    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    pub fn with_version(mut self, version: impl Into<Cow<'static, str>>) -> Self {
        self.version = Some(version.into());
        self
    }

    pub fn with_timeout_ms(mut self, timeout_ms: u64) -> Self {
        self.constraints.timeout_ms = Some(timeout_ms);
        self
    }

    pub fn with_dry_run(mut self, dry_run: bool) -> Self {
        self.constraints.dry_run = dry_run;
        self
    }

    pub fn with_idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    pub fn with_trace_id(mut self, trace_id: impl AsRef<str>) -> Self {
        self.trace_id = Id::from(trace_id.as_ref());
        self
    }

    pub fn with_parent(mut self, parent_job_id: impl AsRef<str>) -> Self {
        self.parent_job_id = Some(Id::from(parent_job_id.as_ref()));
        self
    }

    pub fn with_constraints(mut self, constraints: JobConstraints) -> Self {
        self.constraints = constraints;
        self
    }

    /// `name` or `name@version`, as written in errors and records.
    pub fn reference(&self) -> String {
        reference(&self.skill, self.version.as_deref())
    }
}

/// `name` or `name@version`.
pub(crate) fn reference(skill: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("{skill}@{v}"),
        None => skill.to_owned(),
    }
}

/// `name@version` into its parts; `name` alone has no version.
pub fn split_reference(reference: &str) -> (&str, Option<&str>) {
    match reference.split_once('@') {
        Some((n, v)) => (n, Some(v)),
        None => (reference, None),
    }
}

/// Limits the caller puts on one job (the seed's `JobConstraints`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobConstraints {
    /// Deadline for the whole job, retries included. Each attempt is also bounded
    /// by the skill's own `timeout_ms`.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Ask the skill not to change anything; it reads this from its context.
    #[serde(default)]
    pub dry_run: bool,
    /// Token budget: a job whose handler reports more tokens fails.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// Item budget (the seed's `maxDocs`): a job whose handler reports more
    /// processed items fails.
    #[serde(default)]
    pub max_items: Option<u64>,
}

/// Who is calling, and with what authority.
///
/// A caller that presents an agent role is held to the skill's `reusable_by`; a
/// caller with a set of granted permissions is held to the skill's MCP
/// permissions. [`Caller::default`] is a local operator: no role, permissions not
/// restricted (the CLI without flags, tests, in-process code).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Caller {
    #[serde(default)]
    pub agent_role: Option<AgentRole>,
    #[serde(default)]
    pub permission_level: Option<PermissionLevel>,
    /// Granted permissions such as `seo:read`; `None` means not restricted.
    /// Shared: a server clones its caller into every job.
    #[serde(default)]
    pub permissions: Option<Arc<BTreeSet<String>>>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub source: Source,
    #[serde(default)]
    pub priority: Priority,
}

impl Caller {
    /// An agent with `role` holding permission `level`.
    pub fn agent(role: AgentRole, level: PermissionLevel) -> Caller {
        Caller {
            agent_role: Some(role),
            permission_level: Some(level),
            ..Caller::default()
        }
    }

    /// The same caller, restricted to exactly `permissions`.
    pub fn with_permissions<I, P>(mut self, permissions: I) -> Caller
    where
        I: IntoIterator<Item = P>,
        P: Into<String>,
    {
        self.permissions = Some(Arc::new(permissions.into_iter().map(Into::into).collect()));
        self
    }
}

/// What triggered the job (the seed's `JobContext.source`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Cron,
    Webhook,
    #[default]
    Manual,
    Event,
    /// A tool call from an MCP client.
    Mcp,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Low,
    #[default]
    Normal,
    High,
    Critical,
}
