//! What a caller sends: the job envelope (the AI-COS agent model's
//! `JobEnvelope`), what it asks to process, and the limits it puts on the job.
//!
//! Envelopes are written the seed's way, in camelCase (`jobId`, `payload`,
//! `context`, `idempotencyKey`, ...), so a seed-shaped JSON envelope is read as
//! it is; the snake_case spellings of earlier versions (`job_id`, `params`,
//! `caller`, ...) are read too. The format is published as
//! `job-envelope.schema.json`.

use std::borrow::Cow;
use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use skill_core::manifest::{EntityType, TargetKind};

use crate::model::caller::{Caller, serialize_context};
pub use crate::model::constraints::JobConstraints;
use crate::model::handover::Handover;
use crate::model::hash::Hasher;
use crate::model::id::Id;
use crate::model::time;
use crate::model::trace::TraceParent;

/// One request to run a skill.
///
/// `started_at` is not here on purpose: the runtime stamps it when the invocation
/// starts, and the handler reads it from its context (the seed's rule that a
/// handler never computes its own start time). `created_at` is when the caller
/// made the envelope, `expires_at` when it stops being worth running.
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
///
/// // The seed's own JSON, as its `createJobEnvelope` writes it.
/// let seed: JobEnvelope = serde_json::from_value(json!({
///     "jobId": "6c2f1a0e-7b3d-4c55-9a57-3f0d2a1b9e10",
///     "traceId": "0f9e8d7c-6b5a-4f3e-8d2c-1b0a9f8e7d6c",
///     "intent": "rag_reindex",
///     "scope": {"entityType": "all", "limit": 100},
///     "payload": {"namespace": "knowledge:faq", "dryRun": true},
///     "constraints": {"maxTokens": 4000, "maxDocs": 10, "timeout": 300000, "dryRun": true},
///     "context": {"source": "cron", "priority": "high"},
///     "idempotencyKey": "idem_reindex_faq",
///     "createdAt": "2026-11-23T08:00:00.000Z"
/// })).unwrap();
/// assert_eq!(seed.intent.as_deref(), Some("rag_reindex"));
/// assert!(seed.constraints.dry_run);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobEnvelope {
    /// Unique per job: a UUID, a fresh v4 unless the caller brings its own.
    /// A queue refuses a second, different job with an id it already holds.
    #[serde(
        default = "new_id",
        alias = "job_id",
        deserialize_with = "crate::model::id::deserialize_uuid"
    )]
    pub job_id: Id,
    /// Shared by every job of one trace: a UUID, a fresh v4 unless given.
    #[serde(
        default = "new_id",
        alias = "trace_id",
        deserialize_with = "crate::model::id::deserialize_uuid"
    )]
    pub trace_id: Id,
    /// The job that started this one (a UUID), for nested and pipeline calls.
    #[serde(
        default,
        alias = "parent_job_id",
        deserialize_with = "crate::model::id::deserialize_optional_uuid",
        skip_serializing_if = "Option::is_none"
    )]
    pub parent_job_id: Option<Id>,
    /// What the job is for (the seed's `JobIntent`, e.g. `seo_audit`). When
    /// `skill` is empty, the skill that serves this intent runs: the one whose
    /// manifest lists it in `intents(...)`, else the skill of that name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// What to process (the seed's `JobScope`); the payload says how. Boxed:
    /// most jobs have none, and every move of a job copies the envelope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Box<Scope>>,
    /// Skill name (op name when `kind` is `op`); empty to run the skill of the
    /// intent. Borrowed when it is a `&'static str` (a manifest's name), so
    /// typed calls copy nothing.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub skill: Cow<'static, str>,
    /// What `skill` names: a skill (the default) or an op of the op registry.
    #[serde(default, skip_serializing_if = "TargetKind::is_skill")]
    pub kind: TargetKind,
    /// Exact version to run; the highest registered version when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<Cow<'static, str>>,
    /// The skill's input; must match its input schema. JSON `payload`, the
    /// envelope format's word; `params` in Rust, as in the run record it goes to.
    #[serde(rename = "payload", alias = "params", default = "empty_object")]
    pub params: Value,
    /// Deadline, dry run, budgets; the seed's defaults for what is left out.
    #[serde(default)]
    pub constraints: JobConstraints,
    /// Who asks (required in JSON: at least its `source`, what triggered the
    /// job). JSON `context`, the envelope format's word; `caller` in Rust,
    /// where a context is the handler's [`Ctx`](crate::contract::skill::Ctx).
    #[serde(
        rename = "context",
        alias = "caller",
        serialize_with = "serialize_context"
    )]
    pub caller: Caller,
    /// Jobs with the same key run once; the others get the stored result. When
    /// absent, [`JobEnvelope::seal`] derives the seed's stable key for an
    /// envelope with an intent, and the runtime derives one for skills with
    /// side effects; never from the time.
    #[serde(
        default,
        alias = "idempotency_key",
        deserialize_with = "non_empty",
        skip_serializing_if = "Option::is_none"
    )]
    pub idempotency_key: Option<String>,
    /// When the caller made the envelope (RFC 3339).
    #[serde(
        default,
        alias = "created_at",
        with = "time::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<SystemTime>,
    /// After this instant the job is not run; its record says `expired`.
    #[serde(
        default,
        alias = "expires_at",
        with = "time::optional",
        skip_serializing_if = "Option::is_none"
    )]
    pub expires_at: Option<SystemTime>,
    /// What a retrieval step found for the job (the seed's `ragContext`):
    /// documents, citations, their truth level and confidence; handed to the
    /// skill as [`Ctx::rag_context`].
    ///
    /// [`Ctx::rag_context`]: crate::contract::skill::Ctx::rag_context
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rag_context: Option<Box<RagContext>>,
    /// The W3C trace context of what sent the job (an MCP request, an
    /// enqueue): its span is the parent of the job's. When it is given, its
    /// trace id is the job's `traceId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<TraceParent>,
    /// For an agent's job another agent escalated to: that run, its
    /// reasons, and whether a person decides first. Boxed: most jobs have
    /// none.
    #[serde(
        default,
        alias = "escalated_from",
        skip_serializing_if = "Option::is_none"
    )]
    pub escalated_from: Option<Box<Handover>>,
    /// Whether this process made `job_id` (no other job can hold it), rather
    /// than the caller bringing it: a queue checks a brought id against the
    /// ids it holds before it waits on that id's outcome.
    #[serde(skip)]
    pub(crate) minted: bool,
    /// Whether a queue delivered this job, which may deliver it again (a
    /// worker that stopped answering): the job is then keyed by its id, so
    /// that a second delivery replays the first's outcome instead of running
    /// an effectful skill twice.
    #[serde(skip)]
    pub(crate) delivered: bool,
}

/// What retrieval found for a job (the seed's `ragContext`, its schemas
/// from the RAG system: documents and citations are kept as they come).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RagContext {
    /// The documents retrieved, each an object.
    pub documents: Vec<Map<String, Value>>,
    /// Where each claim comes from, each an object.
    pub citations: Vec<Map<String, Value>>,
    /// How far the documents can be trusted, `L1` (most) to `L4`.
    pub truth_level: TruthLevel,
    /// 0 to 1.
    #[serde(deserialize_with = "unit_interval")]
    pub confidence: f64,
    /// How the documents were found.
    #[serde(default)]
    pub search_method: SearchMethod,
    /// The index they came from, like `2026.01.0`.
    pub index_version: String,
}

/// The seed's `TruthLevel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TruthLevel {
    /// The most trusted.
    L1,
    /// Trusted.
    L2,
    /// Plausible.
    L3,
    /// The least trusted.
    L4,
}

/// How retrieval searched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMethod {
    /// By embedding.
    Vector,
    /// By terms.
    Bm25,
    /// Both (the seed's default).
    #[default]
    Hybrid,
}

fn unit_interval<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    confidence_rule(f64::deserialize(d)?).map_err(serde::de::Error::custom)
}

fn confidence_rule(x: f64) -> Result<f64, String> {
    match (0.0..=1.0).contains(&x) {
        true => Ok(x),
        false => Err(format!("confidence {x} is outside 0 to 1")),
    }
}

/// What a job processes (the seed's `JobScope`): the kind of entity, which ones,
/// how to filter them, and how many at most.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scope {
    /// The kind of entity the job covers.
    #[serde(alias = "entity_type")]
    pub entity_type: EntityType,
    /// The entities the job covers.
    #[serde(default, alias = "entity_ids", skip_serializing_if = "Option::is_none")]
    pub entity_ids: Option<Vec<String>>,
    /// Filters on those entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Map<String, Value>>,
    /// At most [`Scope::MAX_LIMIT`]; [`Scope::DEFAULT_LIMIT`] when absent.
    #[serde(default = "default_limit", deserialize_with = "limit")]
    pub limit: u32,
}

impl Scope {
    /// The seed's bound on `limit`.
    pub const MAX_LIMIT: u32 = 10_000;
    /// The seed's default `limit`.
    pub const DEFAULT_LIMIT: u32 = 1_000;

    /// A scope over entities of `entity_type`, with the default limit.
    pub fn new(entity_type: EntityType) -> Scope {
        Scope {
            entity_type,
            entity_ids: None,
            filters: None,
            limit: Scope::DEFAULT_LIMIT,
        }
    }
}

fn default_limit() -> u32 {
    Scope::DEFAULT_LIMIT
}

fn limit<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    limit_rule(u64::deserialize(d)?).map_err(serde::de::Error::custom)
}

fn limit_rule(n: u64) -> Result<u32, String> {
    match u32::try_from(n) {
        Ok(n) if n <= Scope::MAX_LIMIT => Ok(n),
        _ => Err(format!(
            "scope limit {n} is over the maximum of {}",
            Scope::MAX_LIMIT
        )),
    }
}

/// An optional string that is not empty when present: an empty idempotency
/// key would make unrelated jobs one.
fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = Option::<String>::deserialize(d)?;
    key_rule(s.as_deref()).map_err(serde::de::Error::custom)?;
    Ok(s)
}

fn key_rule(key: Option<&str>) -> Result<(), String> {
    match key {
        Some("") => Err("an idempotency key is not empty".to_owned()),
        _ => Ok(()),
    }
}

/// A fresh UUID v4 id (the serde default of the envelope's ids).
pub fn new_id() -> Id {
    Id::new_v4()
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

impl JobEnvelope {
    /// A job for `skill` with fresh job and trace ids and an operator caller.
    pub fn new(skill: impl Into<Cow<'static, str>>, params: Value) -> JobEnvelope {
        JobEnvelope::of(skill.into(), None, params, Caller::default())
    }

    /// A job for `skill` at `version` on behalf of `caller`, built in one
    /// piece (each builder call moves the whole envelope).
    pub(crate) fn of(
        skill: Cow<'static, str>,
        version: Option<Cow<'static, str>>,
        params: Value,
        caller: Caller,
    ) -> JobEnvelope {
        let (job_id, trace_id) = Id::new_v4_pair();
        JobEnvelope {
            job_id,
            trace_id,
            parent_job_id: None,
            intent: None,
            scope: None,
            skill,
            kind: TargetKind::Skill,
            version,
            params,
            constraints: JobConstraints::default(),
            caller,
            idempotency_key: None,
            created_at: None,
            expires_at: None,
            rag_context: None,
            traceparent: None,
            escalated_from: None,
            minted: true,
            delivered: false,
        }
    }

    /// A job for the skill that serves `intent` (the seed's
    /// `createJobEnvelope({intent, scope, payload})`).
    pub fn for_intent(intent: impl Into<String>, scope: Scope, payload: Value) -> JobEnvelope {
        let mut job = JobEnvelope::new("", payload);
        job.intent = Some(intent.into());
        job.scope = Some(Box::new(scope));
        job
    }

    /// `name` or `name@version`.
    pub fn for_reference(reference: &str, params: Value) -> JobEnvelope {
        let (name, version) = split_reference(reference);
        let mut job = JobEnvelope::new(name.to_owned(), params);
        job.version = version.map(|v| Cow::Owned(v.to_owned()));
        job
    }

    /// Run as `caller`.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    /// Run this version of the skill.
    pub fn with_version(mut self, version: impl Into<Cow<'static, str>>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// End the job after `timeout_ms` milliseconds.
    pub fn with_timeout_ms(mut self, timeout_ms: u64) -> Self {
        self.constraints.timeout_ms = timeout_ms;
        self
    }

    /// Run without side effects (the handler reads `ctx.dry_run()`).
    pub fn with_dry_run(mut self, dry_run: bool) -> Self {
        self.constraints.dry_run = dry_run;
        self
    }

    /// Use this idempotency key instead of the default.
    pub fn with_idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// The job continues the trace of `parent` (W3C trace context): its
    /// `traceId` becomes the trace's.
    pub fn with_traceparent(mut self, parent: TraceParent) -> Self {
        self.trace_id = parent.trace_id();
        self.traceparent = Some(parent);
        self
    }

    /// Join this trace (a UUID: [`Id::uuid`] reads one from text).
    pub fn with_trace_id(mut self, trace_id: Id) -> Self {
        self.trace_id = trace_id;
        self
    }

    /// Make the job a child of job `parent_job_id`.
    pub fn with_parent(mut self, parent_job_id: Id) -> Self {
        self.parent_job_id = Some(parent_job_id);
        self
    }

    /// Give the job this id (a UUID), instead of a fresh one.
    pub fn with_job_id(mut self, job_id: Id) -> Self {
        self.job_id = job_id;
        self.minted = false;
        self
    }

    /// Replace the job's constraints.
    pub fn with_constraints(mut self, constraints: JobConstraints) -> Self {
        self.constraints = constraints;
        self
    }

    /// Not run after `at`.
    pub fn with_expires_at(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// The envelope as a queue hands it to a worker: delivered (it may be
    /// delivered again), its id no longer this process's own (what crossed a
    /// queue is what any caller could have sent).
    pub(crate) fn delivered(mut self) -> Self {
        self.minted = false;
        self.delivered = true;
        self
    }

    /// What the caller leaves unset and the seed's `createJobEnvelope` fills
    /// in: `createdAt` (now), and, for an envelope with an intent, the stable
    /// idempotency key of its intent, scope and payload. A caller's key wins.
    pub fn seal(mut self) -> Self {
        if self.created_at.is_none() {
            self.created_at = Some(SystemTime::now());
        }
        if self.idempotency_key.is_none() {
            self.idempotency_key = self.intent_key();
        }
        self
    }

    /// The seed's stable key (`stableHash({intent, scope, payload})`) of an
    /// envelope with an intent: SHA-256 of their canonical JSON.
    pub fn intent_key(&self) -> Option<String> {
        Some(intent_key(
            self.intent.as_ref()?,
            self.scope.as_deref(),
            &self.params,
        ))
    }

    /// What makes this job the job it is, whenever it was sealed and
    /// wherever it was sent from: SHA-256 of the envelope as queued, without
    /// `createdAt`, `traceId` and `traceparent`. A queue that holds job
    /// `job_id` takes the same envelope sent again (a lost reply, a retried
    /// request, an envelope that leaves its stamps to the queue, which makes
    /// them anew each time) as the same job, and refuses another with that
    /// id.
    ///
    /// The stamps are taken out while the rest is written, and put back:
    /// the envelope is not copied.
    pub(crate) fn digest(&mut self) -> String {
        let mut h = Hasher::new();
        let created_at = self.created_at.take();
        // Where it was sent from is not what the job is: a retry from
        // another span, or in another trace, is the same job.
        let traceparent = self.traceparent.take();
        let trace_id = std::mem::take(&mut self.trace_id);
        let _ = serde_json::to_writer(&mut h, &*self);
        self.created_at = created_at;
        self.traceparent = traceparent;
        self.trace_id = trace_id;
        h.key()
    }

    /// Whether a reader of this envelope's JSON takes it, for an envelope
    /// built in code: the rules its fields are held to when read (ids that
    /// are UUIDs, a non-empty idempotency key, a deadline of 1 ms to 30
    /// days, a budget of dollars, a scope limit within the seed's, a
    /// confidence from 0 to 1), each the same function the reader calls.
    /// Every queue asks it before it queues
    /// ([`check_job`](crate::queue::api::check_job)): a job no worker could
    /// read is refused to its caller, not dead-lettered after.
    pub fn readable(&self) -> Result<(), String> {
        let ids = [
            Some(&self.job_id),
            Some(&self.trace_id),
            self.parent_job_id.as_ref(),
        ];
        for id in ids.into_iter().flatten() {
            Id::uuid(id).map_err(|e| e.to_string())?;
        }
        key_rule(self.idempotency_key.as_deref())?;
        scope_rule(self.intent.as_deref(), self.scope.as_deref())?;
        self.constraints.readable()?;
        if let Some(scope) = &self.scope {
            limit_rule(u64::from(scope.limit))?;
        }
        if let Some(rag) = &self.rag_context {
            confidence_rule(rag.confidence)?;
        }
        Ok(())
    }

    /// Whether the job should no longer run at `now`.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }

    /// `name` or `name@version` (or `intent ...` for a job named by its
    /// intent), as written in errors and records.
    pub fn reference(&self) -> String {
        match (&self.intent, self.skill.is_empty()) {
            (Some(intent), true) => format!("intent `{intent}`"),
            _ => reference(&self.skill, self.version.as_deref()),
        }
    }
}

/// An envelope that says what it is for (an intent) says what to process
/// (a scope): seed 002's JobEnvelope requires both, and a job for an intent
/// over nothing in particular is not one its consumers can run.
pub(crate) fn scope_rule(intent: Option<&str>, scope: Option<&Scope>) -> Result<(), String> {
    match (intent, scope) {
        (Some(intent), None) => Err(format!(
            "an envelope for intent `{intent}` needs its `scope` (what to process: `{{\"entityType\": \"page\", ...}}`), as seed 002's JobEnvelope requires"
        )),
        _ => Ok(()),
    }
}

/// The seed's stable key of a job for `intent` over `scope` with `payload`:
/// SHA-256 of the canonical JSON of `{intent, scope, payload}`.
pub(crate) fn intent_key(intent: &str, scope: Option<&Scope>, payload: &Value) -> String {
    let mut h = Hasher::new();
    h.raw(b"{\"intent\":");
    h.string(intent);
    h.raw(b",\"payload\":");
    h.value(payload);
    h.raw(b",\"scope\":");
    h.value(&serde_json::to_value(scope).unwrap_or(Value::Null));
    h.raw(b"}");
    h.key()
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
