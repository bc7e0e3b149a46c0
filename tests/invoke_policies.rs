//! Every policy of the invocation pipeline, one behaviour per test, on skills
//! defined here so each test controls exactly what the handler does.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use skill_runtime::manifest::{AgentRole, PermissionLevel, Severity};
use skill_runtime::prelude::*;
use skill_runtime::record::{AttemptOutcome, RunStatus, Stage, StageOutcome};
use skill_runtime::{
    InvokeError, SkillResult, envelope::JobConstraints, envelope::Scope, manifest::EntityType,
    policy::ApproveAll, policy::Limits, policy::RollbackError, policy::RollbackRequest,
    record::MemorySink, record::RunRecord,
};
use skill_runtime::{JobEnvelope, Registry, Resources, Runtime};

// ------------------------------------------------------------------ the skills

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Num {
    #[schemars(range(max = 1000))]
    pub n: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Doubled {
    pub doubled: u32,
}

/// Double a number.
#[skill(
    version = "1.0.0",
    reusable_by(executor = "execute", analyzer = "admin", validator = "read"),
    mcp(permissions("math:read")),
    precondition(code = "NOT_THIRTEEN", message = "13 is refused", check = |i: &Num| i.n != 13),
)]
pub async fn double(ctx: Ctx, input: Num) -> Doubled {
    ctx.report_items(1);
    Doubled {
        doubled: input.n * 2,
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TaggedNum {
    pub tag: String,
    #[serde(flatten)]
    pub num: Num,
}

/// Double a tagged number (its input flattens another struct: serde decodes
/// it as a map).
#[skill(version = "1.0.0")]
pub async fn double_tagged(input: TaggedNum) -> Doubled {
    Doubled {
        doubled: input.num.n * 2,
    }
}

/// Double a number, at most three times a minute.
#[skill(version = "1.0.0", rate_limit(max_per_minute = 3))]
pub async fn limited(input: Num) -> Doubled {
    Doubled {
        doubled: input.n * 2,
    }
}

/// Double a number; version 2 of `double` under another name, disabled.
#[skill(version = "1.0.0", status = "disabled")]
pub async fn retired(input: Num) -> Doubled {
    Doubled {
        doubled: input.n * 2,
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Flaky {
    /// Attempts are counted per id.
    pub id: String,
    /// Fail this many attempts before succeeding.
    pub failures: u32,
    pub retryable: bool,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum FlakyError {
    /// The backend blinked.
    #[error("transient failure {0}")]
    #[failure(retryable)]
    Transient(u32),
    /// The request can never work.
    #[error("permanent failure {0}")]
    Permanent(u32),
}

static ATTEMPTS: Mutex<Option<HashMap<String, u32>>> = Mutex::new(None);

fn count_attempt(id: &str) -> u32 {
    let mut map = ATTEMPTS.lock().unwrap();
    let n = map
        .get_or_insert_default()
        .entry(id.to_owned())
        .or_default();
    *n += 1;
    *n
}

fn attempts_of(id: &str) -> u32 {
    ATTEMPTS
        .lock()
        .unwrap()
        .as_ref()
        .and_then(|m| m.get(id).copied())
        .unwrap_or(0)
}

/// Fail a given number of times, then succeed.
#[skill(version = "1.0.0", retries = 3, backoff = "exponential")]
pub async fn flaky(ctx: Ctx, input: Flaky) -> Result<Doubled, FlakyError> {
    let n = count_attempt(&input.id);
    if n <= input.failures {
        return Err(if input.retryable {
            FlakyError::Transient(n)
        } else {
            FlakyError::Permanent(n)
        });
    }
    // The context counts the attempts of this job.
    Ok(Doubled {
        doubled: ctx.attempt(),
    })
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Sleep {
    pub id: String,
    pub ms: u64,
}

/// Sleep, then answer; times out after 50 ms and is retried once.
#[skill(
    version = "1.0.0",
    timeout_ms = 50,
    retries = 1,
    backoff = "none",
    idempotent
)]
pub async fn sleepy(input: Sleep) -> Doubled {
    let n = count_attempt(&input.id);
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    Doubled { doubled: n }
}

/// Sleep like `sleepy`, but not idempotent: a timeout is not retried.
#[skill(version = "1.0.0", timeout_ms = 50, retries = 3)]
pub async fn sleepy_once(input: Sleep) -> Doubled {
    count_attempt(&input.id);
    tokio::time::sleep(Duration::from_millis(input.ms)).await;
    Doubled { doubled: 0 }
}

/// Block its thread (no await): the runtime's timer cannot interrupt it.
#[skill(version = "1.0.0", timeout_ms = 50, retries = 0)]
pub async fn blocking(input: Sleep) -> Doubled {
    std::thread::sleep(Duration::from_millis(input.ms));
    Doubled { doubled: 0 }
}

/// Panic on 7.
#[skill(version = "1.0.0", retries = 2)]
pub async fn fragile(input: Num) -> Doubled {
    if input.n == 7 {
        panic!("seven is unlucky");
    }
    Doubled {
        doubled: input.n * 2,
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Small {
    #[schemars(range(max = 10))]
    pub value: u32,
}

/// Return its input, which the output schema caps at 10.
#[skill(version = "1.0.0")]
pub async fn overflowing(input: Num) -> Small {
    Small { value: input.n }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Shape {
    pub depth: u32,
    pub width: u32,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Shaped {
    pub tree: Value,
}

/// A string of `width` characters inside `depth` arrays.
#[skill(version = "1.0.0")]
pub async fn shaped(input: Shape) -> Shaped {
    let mut tree = Value::String("x".repeat(input.width as usize));
    for _ in 0..input.depth {
        tree = Value::Array(vec![tree]);
    }
    Shaped { tree }
}

/// The journal the `append` skill writes to.
#[derive(Debug, Default)]
pub struct Journal {
    pub lines: Mutex<Vec<String>>,
}

/// Append to the journal.
#[capability(id = "journal.write", effect = "database", operation = "write", resource = Journal)]
pub struct JournalWrite;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    pub line: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Appended {
    pub lines: u32,
}

/// Append a line to the journal; a line saying "break" breaks the postcondition.
#[skill(
    version = "1.0.0",
    capabilities(JournalWrite),
    side_effects(JournalWrite(target = "journal", reversible = true)),
    postcondition(check = |i: &Entry, _o: &Appended| i.line != "break", rollback = "drop_last_line"),
    validation_rule(id = "short", severity = "warning", message = "lines should be short",
                    check = |i: &Entry, _o: &Appended| i.line.len() <= 20),
    validation_rule(id = "not_forbidden", severity = "error", message = "forbidden line",
                    check = |i: &Entry, _o: &Appended| i.line != "forbidden"),
)]
pub async fn append(ctx: Ctx, input: Entry) -> Appended {
    // Let concurrent duplicates pile up while this one runs.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut lines = ctx.resource::<JournalWrite>().lines.lock().unwrap();
    lines.push(input.line);
    Appended {
        lines: lines.len() as u32,
    }
}

/// [`append`], keyed by intent, scope and payload.
#[skill(
    version = "1.0.0",
    capabilities(JournalWrite),
    side_effects(JournalWrite(target = "journal", reversible = true)),
    idempotency(key = "hash")
)]
pub async fn append_once(ctx: Ctx, input: Entry) -> Appended {
    let mut lines = ctx.resource::<JournalWrite>().lines.lock().unwrap();
    lines.push(input.line);
    Appended {
        lines: lines.len() as u32,
    }
}

/// [`append`], keyed by the scope's entity type and the line.
#[skill(
    version = "1.0.0",
    capabilities(JournalWrite),
    side_effects(JournalWrite(target = "journal", reversible = true)),
    idempotency(key = "composite", fields("scope.entityType", "payload.line"))
)]
pub async fn append_keyed(ctx: Ctx, input: Entry) -> Appended {
    let mut lines = ctx.resource::<JournalWrite>().lines.lock().unwrap();
    lines.push(input.line);
    Appended {
        lines: lines.len() as u32,
    }
}

fn drop_last_line(r: RollbackRequest<'_>) -> Result<(), RollbackError> {
    let journal = r.resources.get::<Journal>().ok_or("no journal")?;
    journal.lines.lock().unwrap().pop();
    Ok(())
}

/// Ask a human first.
#[skill(version = "1.0.0", requires_hitl)]
pub async fn guarded(input: Num) -> Doubled {
    Doubled {
        doubled: input.n * 2,
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Login {
    #[schemars(length(max = 40))]
    pub secret: String,
    pub user: String,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum LoginError {
    /// The credentials were refused.
    #[error("bad credentials for {user}: {secret}")]
    Refused { user: String, secret: String },
}

/// Check a login; its secret never reaches a record.
#[skill(version = "1.0.0", redaction(inputs("secret")), retries = 0)]
pub async fn login(input: Login) -> Result<Doubled, LoginError> {
    if input.secret == "open-sesame" {
        Ok(Doubled { doubled: 1 })
    } else {
        Err(LoginError::Refused {
            user: input.user,
            secret: input.secret,
        })
    }
}

/// A label whose length the type does not bound, and an optional note.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Labelled {
    #[schemars(length(min = 2, max = 5))]
    pub label: String,
    pub n: u32,
    pub note: Option<String>,
}

/// Echo a label, a count and a note, as decoded.
#[skill(version = "1.0.0", retries = 0)]
pub async fn labelled(input: Labelled) -> Labelled {
    input
}

/// Spend the tokens it is given.
#[skill(version = "1.0.0")]
pub async fn spender(ctx: Ctx, input: Num) -> Doubled {
    let _ = ctx.report_tokens(u64::from(input.n));
    ctx.add_artifact(Artifact {
        name: "receipt".into(),
        kind: "text/plain".into(),
        uri: None,
    });
    ctx.set_next_action(NextAction::Continue);
    Doubled {
        doubled: u32::from(ctx.dry_run()),
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Retrieved {
    pub index_version: Option<String>,
    pub documents: usize,
}

/// Say what retrieval found for the job.
#[skill(version = "1.0.0")]
pub async fn rag_aware(ctx: Ctx, _input: Num) -> Retrieved {
    Retrieved {
        index_version: ctx.rag_context().map(|r| r.index_version.clone()),
        documents: ctx.rag_context().map_or(0, |r| r.documents.len()),
    }
}

/// Declared to run isolated in a container.
#[skill(version = "1.0.0", sandbox = "docker")]
pub async fn contained(input: Num) -> Doubled {
    Doubled {
        doubled: input.n * 2,
    }
}

/// Stages of work the budgeted skills got through.
static STEPS: AtomicU32 = AtomicU32::new(0);

/// Spend 10 tokens, then 1 document, then a dollar per step, `n` steps,
/// yielding between steps; a report over budget is ignored on purpose.
#[skill(version = "1.0.0", retries = 2)]
pub async fn metered(ctx: Ctx, input: Num) -> Doubled {
    for _ in 0..input.n {
        STEPS.fetch_add(1, Ordering::SeqCst);
        let _ = ctx.report_tokens(10);
        let _ = ctx.report_docs(1);
        let _ = ctx.report_cost(1.0);
        ctx.report_items(1);
        tokio::task::yield_now().await;
    }
    Doubled { doubled: input.n }
}

/// One branch of the call reports the tokens while another waits (work in
/// a call runs within it: a context cannot go to a task of its own).
#[skill(version = "1.0.0")]
pub async fn metered_elsewhere(ctx: Ctx, input: Num) -> Doubled {
    let n = input.n;
    let report = async {
        tokio::task::yield_now().await;
        let _ = ctx.report_tokens(u64::from(n));
    };
    let wait = tokio::time::sleep(std::time::Duration::from_secs(30));
    tokio::join!(report, wait);
    Doubled { doubled: 0 }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Switch {
    pub on: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Panel {
    pub switch: Switch,
}

/// Read a panel's switch.
#[skill(version = "1.0.0")]
pub async fn read_switch(input: Panel) -> Switch {
    input.switch
}

// ------------------------------------------------------------------ helpers

fn runtime_with(
    f: impl FnOnce(skill_runtime::RuntimeBuilder) -> skill_runtime::RuntimeBuilder,
) -> Runtime {
    let registry = Arc::new(Registry::from_inventory().expect("the test skills are valid"));
    let builder = Runtime::builder(registry)
        .resources(Resources::new().with(Journal::default()))
        .rollback("drop_last_line", drop_last_line)
        .retry_base(Duration::from_millis(1));
    f(builder).build().expect("the runtime starts")
}

fn runtime() -> Runtime {
    runtime_with(|b| b)
}

fn last_record(rt: &Runtime) -> Arc<RunRecord> {
    rt.memory_records()
        .unwrap()
        .records()
        .pop()
        .expect("a record")
}

fn step(record: &RunRecord, step: Stage) -> StageOutcome {
    record
        .steps
        .iter()
        .find(|s| s.step == step)
        .unwrap_or_else(|| panic!("no step {step:?} in {:?}", record.steps))
        .outcome
}

async fn ok(rt: &Runtime, job: JobEnvelope) -> SkillResult {
    rt.invoke(job).await.expect("the job succeeds")
}

async fn err(rt: &Runtime, job: JobEnvelope) -> InvokeError {
    rt.invoke(job).await.expect_err("the job fails")
}

// ------------------------------------------------------------------ resolve

#[tokio::test]
async fn a_job_runs_and_its_record_lists_every_step_in_order() {
    let rt = runtime();
    let res = ok(&rt, JobEnvelope::new("double", json!({"n": 21}))).await;
    assert_eq!(*res.data, json!({"doubled": 42}));
    assert_eq!(&*res.skill, "double@1.0.0");
    assert_eq!(res.metrics.items_processed, 1);
    assert_eq!(res.metrics.attempts, 1);
    assert_eq!(res.next_action, NextAction::Complete);
    let rec = last_record(&rt);
    assert_eq!(rec.status, RunStatus::Succeeded);
    assert_eq!(rec.job_id, res.job_id);
    let steps: Vec<Stage> = rec.steps.iter().map(|s| s.step).collect();
    assert_eq!(
        steps,
        [
            Stage::Resolve,
            Stage::Authorize,
            Stage::RateLimit,
            Stage::ValidateInput,
            Stage::Preconditions,
            Stage::Idempotency,
            Stage::Approval,
            Stage::Execute,
            Stage::Budget,
            Stage::ValidateOutput,
            Stage::Postconditions,
            Stage::ValidationRules,
        ]
    );
    assert_eq!(rec.output.as_deref(), Some(&json!({"doubled": 42})));
    assert!(rec.completed_at >= rec.started_at);
}

#[tokio::test]
async fn unknown_skills_versions_and_disabled_skills_are_typed_errors() {
    let rt = runtime();
    let e = err(&rt, JobEnvelope::new("nope", json!({}))).await;
    assert_eq!(
        e,
        InvokeError::UnknownSkill {
            reference: "nope".into(),
            hint: String::new(),
        }
    );
    let e = err(
        &rt,
        JobEnvelope::for_reference("double@9.9.9", json!({"n": 1})),
    )
    .await;
    assert!(
        matches!(&e, InvokeError::UnknownVersion { known, .. } if known == &["1.0.0"]),
        "{e}"
    );
    let e = err(&rt, JobEnvelope::new("retired", json!({"n": 1}))).await;
    assert_eq!(e.code(), "disabled");
    assert_eq!(rt.unresolved(), 2);
    // Still serving.
    ok(
        &rt,
        JobEnvelope::for_reference("double@1.0.0", json!({"n": 1})),
    )
    .await;
    assert_eq!(rt.memory_records().unwrap().total(), 4);
}

// ------------------------------------------------------------------ authorize

#[tokio::test]
async fn reusable_by_admits_listed_roles_at_their_level() {
    // `double`: reusable_by(executor = "execute", analyzer = "admin",
    // validator = "read"). One rule: what the skill grants the role and what
    // the caller holds must both reach `execute`.
    let rt = runtime();
    let job = |role, level| {
        JobEnvelope::new("double", json!({"n": 2})).with_caller(Caller::agent(role, level))
    };
    ok(&rt, job(AgentRole::Executor, PermissionLevel::Execute)).await;
    ok(&rt, job(AgentRole::Executor, PermissionLevel::Admin)).await;
    ok(&rt, job(AgentRole::Analyzer, PermissionLevel::Execute)).await;
    let e = err(&rt, job(AgentRole::Executor, PermissionLevel::Read)).await;
    assert!(
        e.to_string().contains(
            "runs this skill at permission level `execute` or above; the caller holds `read`"
        ),
        "{e}"
    );
    // A role granted `read` sees the skill and does not run it, whatever the
    // caller holds (the seed's vlevel_calculator grants its analyzer `read`).
    for held in [
        PermissionLevel::Read,
        PermissionLevel::Execute,
        PermissionLevel::Admin,
    ] {
        let e = err(&rt, job(AgentRole::Validator, held)).await;
        assert_eq!(e.code(), "denied");
        assert!(
            e.to_string().contains("is granted `read` on this skill"),
            "{e}"
        );
    }
    let e = err(&rt, job(AgentRole::Architect, PermissionLevel::Admin)).await;
    assert_eq!(e.code(), "denied");
    assert!(
        e.to_string().contains(
            "`architect` is not in reusable_by (executor: execute, analyzer: admin, validator: read)"
        ),
        "{e}"
    );
    assert_eq!(
        step(&last_record(&rt), Stage::Authorize),
        StageOutcome::Failed
    );
}

#[tokio::test]
async fn a_caller_that_leaves_its_role_out_gets_no_more_than_the_least_role() {
    let rt = runtime();
    let job = |role, level, permissions: Option<&[&str]>| {
        let mut caller = Caller {
            agent_role: role,
            permission_level: level,
            ..Caller::default()
        };
        if let Some(p) = permissions {
            caller = caller.with_permissions(p.iter().copied());
        }
        JobEnvelope::new("double", json!({"n": 2})).with_caller(caller)
    };
    // `double` is reusable by executor, analyzer and validator only: a
    // caller with no role gets what the least-granted role gets, nothing,
    // whatever level or permissions it presents; an unlisted role is denied
    // the same way.
    for (level, permissions) in [
        (Some(PermissionLevel::Execute), None),
        (Some(PermissionLevel::Admin), None),
        (None, Some(&["math:read"][..])),
    ] {
        let e = err(&rt, job(None, level, permissions)).await;
        assert_eq!(e.code(), "denied", "{level:?} {permissions:?}");
        assert!(e.to_string().contains("presents no agent role"), "{e}");
    }
    let e = err(
        &rt,
        job(
            Some(AgentRole::Orchestrator),
            Some(PermissionLevel::Admin),
            None,
        ),
    )
    .await;
    assert!(e.to_string().contains("is not in reusable_by"), "{e}");
    ok(
        &rt,
        job(
            Some(AgentRole::Executor),
            Some(PermissionLevel::Execute),
            None,
        ),
    )
    .await;
    // The process's own operator presents nothing: reusable_by is not its.
    ok(&rt, JobEnvelope::new("double", json!({"n": 2}))).await;
}

#[tokio::test]
async fn granted_permissions_must_cover_the_mcp_permissions() {
    let rt = runtime();
    let executor = Caller::agent(AgentRole::Executor, PermissionLevel::Execute);
    let caller = executor.clone().with_permissions(["seo:read"]);
    let e = err(
        &rt,
        JobEnvelope::new("double", json!({"n": 2})).with_caller(caller),
    )
    .await;
    assert!(
        e.to_string().contains("missing permission `math:read`"),
        "{e}"
    );
    let caller = executor.with_permissions(["math:read", "seo:read"]);
    ok(
        &rt,
        JobEnvelope::new("double", json!({"n": 2})).with_caller(caller),
    )
    .await;
}

// ------------------------------------------------------------------ rate limit

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_admits_exactly_its_number_per_minute() {
    let rt = runtime();
    let results = run_all(
        &rt,
        (0..10).map(|n| JobEnvelope::new("limited", json!({"n": n}))),
    )
    .await;
    let admitted = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(admitted, 3);
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        assert!(
            matches!(r, InvokeError::RateLimited { max_per_minute: 3, retry_after_ms, .. } if *retry_after_ms > 59_000),
            "{r}"
        );
    }
}

// ------------------------------------------------------------------ input

/// The limits guard against payloads from outside; a typed input is built by
/// the calling code and is not measured.
#[tokio::test]
async fn input_limits_apply_to_json_params_not_to_typed_inputs() {
    let rt = runtime_with(|b| {
        b.limits(Limits {
            max_input_bytes: 1,
            max_depth: 0,
            ..Limits::default()
        })
    });
    let e = err(&rt, JobEnvelope::new("double", json!({"n": 2}))).await;
    assert!(matches!(e, InvokeError::TooDeep { limit: 0, .. }), "{e}");
    let out = rt.call::<double>(Num { n: 2 }).await.unwrap();
    assert_eq!(out.doubled, 4);
}

/// Records keep params and outputs up to a budget: past it, the record holds
/// the value's size and says it was cut; the job saw the whole value.
#[tokio::test]
async fn records_keep_large_values_as_their_size() {
    let rt = runtime_with(|b| {
        b.limits(Limits {
            max_record_value_bytes: 100,
            ..Limits::default()
        })
    });
    let long = "x".repeat(500);
    let result = ok(&rt, JobEnvelope::new("append", json!({"line": long}))).await;
    assert_eq!(result.data["lines"], 1, "the job ran on the whole value");
    let record = last_record(&rt);
    let bytes = record.params.to_value()["$truncated"]["bytes"]
        .as_u64()
        .unwrap();
    assert!(bytes > 500, "{}", record.params);
    assert_eq!(
        record.output.as_deref(),
        Some(&json!({"lines": 1})),
        "a small output is kept"
    );
    // Within the budget, both are kept as they are.
    ok(&rt, JobEnvelope::new("append", json!({"line": "short"}))).await;
    assert_eq!(last_record(&rt).params, json!({"line": "short"}));
}

/// An output is written once as text and kept as such: its record holds it
/// within the budget, its exact size past it, and a marker past the depth
/// limit; the caller gets the whole of it, as text and as a value, however
/// deep it nests (deeper than `serde_json` reads by default, too).
#[tokio::test]
async fn outputs_are_recorded_within_their_budget_and_answered_whole() {
    let rt = runtime_with(|b| {
        b.limits(Limits {
            max_record_value_bytes: 100,
            max_depth: 8,
            ..Limits::default()
        })
    });
    let shape = |depth: u32, width: u32| json!({"depth": depth, "width": width});
    // Small and shallow: kept as it is.
    let small = ok(&rt, JobEnvelope::new("shaped", shape(2, 3))).await;
    assert_eq!(small.data.text(), r#"{"tree":[["xxx"]]}"#);
    assert_eq!(
        last_record(&rt).output.clone().unwrap(),
        json!({"tree": [["xxx"]]})
    );
    // Large: the record holds the text's exact size.
    let large = ok(&rt, JobEnvelope::new("shaped", shape(1, 500))).await;
    let text = large.data.text().to_owned();
    assert_eq!(text.len(), r#"{"tree":[""]}"#.len() + 500);
    assert_eq!(large.data["tree"][0].as_str().map(str::len), Some(500));
    assert_eq!(
        last_record(&rt).output.clone().unwrap(),
        json!({"$truncated": {"bytes": text.len()}})
    );
    // Deep, and long enough to be scanned: the record says too deep.
    for depth in [7, 8, 60, 300] {
        let deep = ok(&rt, JobEnvelope::new("shaped", shape(depth, 200))).await;
        let mut v = &deep.data["tree"];
        for _ in 0..depth {
            v = &v[0];
        }
        assert_eq!(v.as_str().map(str::len), Some(200), "depth {depth}");
        assert_eq!(deep.data.to_value().to_string(), deep.data.text());
        let kept = last_record(&rt).output.clone().unwrap();
        // The tree plus the output object: `depth + 1` levels.
        let want = match depth + 1 > 8 {
            true => json!({"$truncated": {"too_deep": true}}),
            false => json!({"$truncated": {"bytes": deep.data.text().len()}}),
        };
        assert_eq!(kept, want, "depth {depth}");
    }
}

/// serde_json takes a nested struct from an array of its fields too; the
/// schema says object, and the call is refused.
#[tokio::test]
async fn a_nested_struct_sent_as_an_array_is_refused() {
    let rt = runtime();
    let e = err(
        &rt,
        JobEnvelope::new("read_switch", json!({"switch": [true]})),
    )
    .await;
    let InvokeError::InvalidInput { violations, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(violations[0].instance_path, "/switch");
    ok(
        &rt,
        JobEnvelope::new("read_switch", json!({"switch": {"on": true}})),
    )
    .await;
}

/// Run `skill` on params `text` on `text_rt`, and on the same params as a
/// value on `value_rt`: the same answer, the same params and status in both
/// records, and the text's record one line of JSON whatever its blanks. The
/// two records, for more.
async fn by_text_and_by_value(
    text_rt: &Runtime,
    value_rt: &Runtime,
    skill: &str,
    text: &str,
) -> (Arc<RunRecord>, Arc<RunRecord>) {
    let by_text = text_rt
        .invoke_text(JobEnvelope::new(skill.to_owned(), Value::Null), text)
        .await;
    let from_text = last_record(text_rt);
    let value: Value = serde_json::from_str(text).unwrap();
    let by_value = value_rt
        .invoke(JobEnvelope::new(skill.to_owned(), value))
        .await;
    let from_value = last_record(value_rt);
    match (&by_text, &by_value) {
        (Ok(a), Ok(b)) => assert_eq!(a.data, b.data, "{text}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
        _ => panic!("{text}: from text {by_text:?}, from a value {by_value:?}"),
    }
    assert_eq!(from_text.params, from_value.params, "{text}");
    assert_eq!(from_text.status, from_value.status, "{text}");
    let line = serde_json::to_string(&*from_text).unwrap();
    assert!(!line.contains('\n'), "{line}");
    (from_text, from_value)
}

/// Params given as text are decoded from the text itself (no value is built
/// when the fields of an object decode and hold), and get the answers,
/// stages and records the same params get as a value.
#[tokio::test]
async fn params_as_text_are_answered_as_params_as_a_value() {
    // Each case, and whether its record keeps the text as it came: the
    // params were decoded from it, and no stage needed them as a value.
    let cases = [
        ("double", r#"{"n": 21}"#, true),
        // What the type does not guarantee (`maximum`), a precondition, a type.
        ("double", r#"{"n": 5000}"#, false),
        ("double", r#"{"n": 13}"#, true),
        ("double", r#"{"n": "two"}"#, false),
        // An unknown field, nested; a name twice (the value keeps the last);
        // an escaped name; blanks and line breaks (kept as they came, and
        // written out on one line: see below).
        (
            "double",
            r#"{"n": 2, "extra": [1, {"x": null, "y": "]}"}]}"#,
            true,
        ),
        ("double", r#"{"n": 2, "n": 3}"#, false),
        ("double", r#"{"\u006e": 4}"#, true),
        ("double", " {\n  \"n\" : 7\r\n} \n", true),
        // Not an object, or missing the field.
        ("double", "[2]", false),
        ("double", "{}", false),
        // Checks that read the input after the handler, and a rollback.
        ("append", r#"{"line": "a line"}"#, false),
        ("append", r#"{"line": "break"}"#, false),
        ("append", r#"{"line": "forbidden"}"#, false),
        // Keys of the params (parsed for the key).
        ("append_once", r#"{"line": "once"}"#, false),
        ("append_keyed", r#"{"line": "keyed"}"#, false),
        // Redacted inputs.
        ("login", r#"{"secret": "s3cret", "user": "ann"}"#, false),
        (
            "login",
            r#"{"secret": "open-sesame", "user": "ann"}"#,
            false,
        ),
        // String fields, borrowed from the text unless they have escapes,
        // their length (in characters) checked on the text.
        ("labelled", r#"{"label": "abc", "n": 1}"#, true),
        (
            "labelled",
            r#"{"label": "a\"b", "n": 1, "note": "x\ny"}"#,
            true,
        ),
        (
            "labelled",
            r#"{"label": "é日本", "n": 1, "note": null}"#,
            true,
        ),
        ("labelled", r#"{"label": "日本語日本語", "n": 1}"#, false),
        ("labelled", r#"{"label": "abcdef", "n": 1}"#, false),
        ("labelled", r#"{"label": "\u0061", "n": 1}"#, false),
        ("labelled", r#"{"label": "a", "n": 1}"#, false),
        ("labelled", r#"{"label": 5, "n": 1}"#, false),
        ("labelled", r#"{"label": "ab", "n": "1"}"#, false),
        ("labelled", r#"{"label": "ab", "n": 1, "note": 2}"#, false),
        (
            "labelled",
            r#"{"label": "ab", "n": 1, "label": "cd"}"#,
            false,
        ),
        // A flattened struct, decoded as a map: from the whole value.
        ("double_tagged", r#"{"tag": "t", "n": 4}"#, false),
        ("double_tagged", r#"{"tag": "t", "n": 4000}"#, false),
        // A nested struct (decoded from the value: serde_json takes a nested
        // struct from an array too), and that array form.
        ("read_switch", r#"{"switch": {"on": true}}"#, false),
        ("read_switch", r#"{"switch": [true]}"#, false),
    ];
    for (skill, text, kept) in cases {
        // A runtime each: the journal counts its lines.
        let (from_text, from_value) =
            by_text_and_by_value(&runtime(), &runtime(), skill, text).await;
        assert_eq!(from_text.params.as_value().is_none(), kept, "{text}");
        if kept {
            assert_eq!(from_text.params.to_string(), text);
        }
        assert_eq!(
            from_text.idempotency_key, from_value.idempotency_key,
            "{text}"
        );
        let outcomes = |r: &RunRecord| {
            r.steps
                .iter()
                .map(|s| (s.step, s.outcome))
                .collect::<Vec<_>>()
        };
        assert_eq!(outcomes(&from_text), outcomes(&from_value), "{text}");
        let written: Value = serde_json::to_value(&*from_text).unwrap();
        assert_eq!(written["params"], *from_value.params.to_value(), "{text}");
    }
    // A skill whose input is not decoded from a field list is answered from
    // the whole value on every call (from the second on, without reading the
    // fields first).
    let rt = runtime();
    for n in [4, 5] {
        let text = format!(r#"{{"tag": "t", "n": {n}}}"#);
        let result = rt
            .invoke_text(JobEnvelope::new("double_tagged", Value::Null), &text)
            .await
            .unwrap();
        assert_eq!(result.data["doubled"], n * 2);
    }
    // Another attempt decodes the input again, from the params parsed then.
    let rt = runtime();
    let text = r#"{"id": "from-text", "failures": 1, "retryable": true}"#;
    let result = rt
        .invoke_text(JobEnvelope::new("flaky", Value::Null), text)
        .await
        .unwrap();
    assert_eq!(result.data["doubled"], 2, "the second attempt succeeded");
    assert_eq!(
        last_record(&rt).params,
        serde_json::from_str::<Value>(text).unwrap()
    );
    // Text that is not JSON, in a field's value or after it: refused as such.
    let rt = runtime();
    for text in [r#"{"n": 1x}"#, r#"{"n": 1, "m": tru}"#, r#"{"n": 1} x"#] {
        let e = rt
            .invoke_text(JobEnvelope::new("double", Value::Null), text)
            .await
            .unwrap_err();
        assert_eq!(e.code(), "malformed_json", "{text}: {e}");
        assert_eq!(last_record(&rt).params, Value::Null);
    }
}

#[tokio::test]
async fn bad_input_is_an_answer_with_a_record() {
    let rt = runtime_with(|b| {
        b.limits(Limits {
            max_input_bytes: 64,
            max_depth: 4,
            ..Limits::default()
        })
    });
    let job = || JobEnvelope::new("double", Value::Null);

    let e = rt.invoke_text(job(), "{\"n\": ").await.unwrap_err();
    assert_eq!(e.code(), "malformed_json");
    let record = last_record(&rt);
    assert_eq!(record.params, Value::Null);
    // Refused by the input stage, after the cheaper ones, like any bad input.
    assert_eq!(step(&record, Stage::Authorize), StageOutcome::Passed);
    assert_eq!(step(&record, Stage::ValidateInput), StageOutcome::Failed);

    let big = format!("{{\"n\": 1, \"pad\": \"{}\"}}", "x".repeat(100));
    let e = rt.invoke_text(job(), &big).await.unwrap_err();
    assert!(matches!(e, InvokeError::TooLarge { limit: 64, .. }), "{e}");

    let e = err(&rt, JobEnvelope::new("double", json!({"n": [[[[[1]]]]]}))).await;
    assert!(matches!(e, InvokeError::TooDeep { limit: 4, .. }), "{e}");
    // Text is held to the depth before it is parsed, with the same answer and
    // record; brackets inside strings do not count.
    let e = rt
        .invoke_text(job(), "{\"n\": [[[[1]]]]}")
        .await
        .unwrap_err();
    assert!(matches!(e, InvokeError::TooDeep { limit: 4, .. }), "{e}");
    let record = last_record(&rt);
    assert_eq!(step(&record, Stage::ValidateInput), StageOutcome::Failed);
    let e = rt
        .invoke_text(job(), "{\"n\": \"[[[[[\"}")
        .await
        .unwrap_err();
    assert!(matches!(e, InvokeError::InvalidInput { .. }), "{e}");

    let e = err(&rt, JobEnvelope::new("double", json!({"n": "two"}))).await;
    let InvokeError::InvalidInput { violations, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(violations[0].instance_path, "/n");

    let e = err(&rt, JobEnvelope::new("double", json!({"n": 5000}))).await;
    assert!(
        e.to_string()
            .contains("at /n: 5000 is greater than the maximum of 1000"),
        "{e}"
    );

    let e = err(&rt, JobEnvelope::new("double", json!({"n": 13}))).await;
    assert_eq!(
        e,
        InvokeError::Precondition {
            skill: "double".into(),
            error_code: "NOT_THIRTEEN".into(),
            message: "13 is refused".into()
        }
    );
    assert_eq!(
        step(&last_record(&rt), Stage::Preconditions),
        StageOutcome::Failed
    );

    assert_eq!(rt.memory_records().unwrap().total(), 8);
    let stats = rt.stats_of("double").unwrap();
    assert_eq!((stats.runs, stats.failures), (8, 8));
    ok(&rt, JobEnvelope::new("double", json!({"n": 1}))).await;
}

// ------------------------------------------------------------------ execute

#[tokio::test]
async fn retryable_failures_are_retried_with_backoff_and_others_are_not() {
    let rt = runtime();
    let res = ok(
        &rt,
        JobEnvelope::new(
            "flaky",
            json!({"id": "r2", "failures": 2, "retryable": true}),
        ),
    )
    .await;
    assert_eq!(*res.data, json!({"doubled": 3}));
    assert_eq!(res.metrics.attempts, 3);
    let rec = last_record(&rt);
    let outcomes: Vec<_> = rec.attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(
        outcomes,
        [
            AttemptOutcome::Failed,
            AttemptOutcome::Failed,
            AttemptOutcome::Succeeded
        ]
    );
    // Exponential from a 1 ms base (1, then 2 ms), with equal jitter: half to all.
    let waits: Vec<_> = rec.attempts.iter().map(|a| a.backoff_ms).collect();
    assert!(
        matches!(waits[..], [Some(0..=1), Some(1..=2), None]),
        "{waits:?}"
    );
    assert_eq!(
        rec.attempts[0].error.as_deref(),
        Some("transient: transient failure 1")
    );

    let e = err(
        &rt,
        JobEnvelope::new(
            "flaky",
            json!({"id": "p", "failures": 5, "retryable": false}),
        ),
    )
    .await;
    assert_eq!(attempts_of("p"), 1, "a permanent failure is not retried");
    assert!(
        matches!(&e, InvokeError::Failed { code, retryable: false, attempts: 1, .. } if code == "permanent"),
        "{e}"
    );
    assert_eq!(e.next_action(), NextAction::Escalate);

    let e = err(
        &rt,
        JobEnvelope::new(
            "flaky",
            json!({"id": "r9", "failures": 9, "retryable": true}),
        ),
    )
    .await;
    assert_eq!(attempts_of("r9"), 4, "1 attempt + 3 retries");
    assert!(
        matches!(
            &e,
            InvokeError::Failed {
                retryable: true,
                attempts: 4,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.next_action(), NextAction::Retry);
}

#[tokio::test]
async fn timeouts_stop_the_handler_and_are_retried_only_when_idempotent() {
    let rt = runtime();
    let e = err(
        &rt,
        JobEnvelope::new("sleepy", json!({"id": "t1", "ms": 10_000})),
    )
    .await;
    assert!(
        matches!(
            e,
            InvokeError::TimedOut {
                timeout_ms: 50,
                attempts: 2,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(attempts_of("t1"), 2);
    let e = err(
        &rt,
        JobEnvelope::new("sleepy_once", json!({"id": "t2", "ms": 10_000})),
    )
    .await;
    assert!(
        matches!(e, InvokeError::TimedOut { attempts: 1, .. }),
        "{e}"
    );
    assert_eq!(attempts_of("t2"), 1);
    // The job's own deadline bounds the attempts too.
    let job = JobEnvelope::new("sleepy", json!({"id": "t3", "ms": 10_000})).with_timeout_ms(20);
    let e = err(&rt, job).await;
    assert!(
        matches!(
            e,
            InvokeError::TimedOut {
                timeout_ms: ..=20,
                attempts: 1,
                ..
            }
        ),
        "{e}"
    );
    ok(
        &rt,
        JobEnvelope::new("sleepy", json!({"id": "t4", "ms": 1})),
    )
    .await;
}

#[tokio::test]
async fn a_panic_is_an_error_and_the_runtime_keeps_serving() {
    let rt = runtime();
    let e = err(&rt, JobEnvelope::new("fragile", json!({"n": 7}))).await;
    assert_eq!(
        e,
        InvokeError::Panicked {
            skill: "fragile".into(),
            message: "seven is unlucky".into()
        }
    );
    let rec = last_record(&rt);
    assert_eq!(rec.attempts.len(), 1, "a panic is not retried");
    assert_eq!(rec.attempts[0].outcome, AttemptOutcome::Panicked);
    ok(&rt, JobEnvelope::new("fragile", json!({"n": 8}))).await;
}

// ------------------------------------------------------------------ output

#[tokio::test]
async fn output_that_breaks_its_schema_fails_the_job() {
    let rt = runtime();
    ok(&rt, JobEnvelope::new("overflowing", json!({"n": 10}))).await;
    let e = err(&rt, JobEnvelope::new("overflowing", json!({"n": 11}))).await;
    assert!(
        e.to_string()
            .contains("at /value: 11 is greater than the maximum of 10"),
        "{e}"
    );
    assert_eq!(
        step(&last_record(&rt), Stage::ValidateOutput),
        StageOutcome::Failed
    );
}

/// The in-process idempotency store keeps at most its bound of results: the
/// oldest goes first, and a duplicate of it runs again; the newer replay.
#[tokio::test]
async fn stored_results_are_bounded_oldest_first() {
    let store =
        skill_runtime::policy::MemoryIdempotency::bounded(Duration::from_secs(3600), 2, 1 << 20);
    let rt = runtime_with(|b| b.idempotency_store(Arc::new(store)));
    let again = |line: &str| JobEnvelope::new("append_once", json!({"line": line}));
    for line in ["a", "b", "c"] {
        ok(&rt, again(line)).await;
    }
    assert!(ok(&rt, again("c")).await.replayed, "the newest is kept");
    assert!(
        !ok(&rt, again("a")).await.replayed,
        "the oldest was dropped: it runs again"
    );
    assert_eq!(rt_journal(&rt), ["a", "b", "c", "a"]);
    // A result past the byte bound is not kept at all.
    let store =
        skill_runtime::policy::MemoryIdempotency::bounded(Duration::from_secs(3600), 100, 4);
    let rt = runtime_with(|b| b.idempotency_store(Arc::new(store)));
    ok(&rt, again("big")).await;
    assert!(!ok(&rt, again("big")).await.replayed);
}

/// A handler that blocks past its timeout finishes (nothing can stop a
/// blocked thread), but its late answer is a timeout, never a success.
#[tokio::test]
async fn a_handler_that_blocks_past_its_timeout_is_timed_out() {
    let rt = runtime();
    let e = err(
        &rt,
        JobEnvelope::new("blocking", json!({"id": "block", "ms": 200})),
    )
    .await;
    assert_eq!(e.code(), "timed_out", "{e}");
    ok(
        &rt,
        JobEnvelope::new("blocking", json!({"id": "quick", "ms": 0})),
    )
    .await;
}

#[tokio::test]
async fn a_dry_run_of_a_skill_that_never_asks_is_noted() {
    let rt = runtime();
    let mut job = JobEnvelope::new("append", json!({"line": "dry"}));
    job.constraints.dry_run = true;
    // `append` writes its journal without asking ctx.dry_run(): the result
    // and the record say so.
    let result = ok(&rt, job).await;
    let note = result
        .notes
        .iter()
        .find(|n| n.rule_id == "dry_run_not_read")
        .expect("a note for the unread dry run");
    assert_eq!(note.severity, Severity::Warning);
    assert!(
        note.message
            .contains("skill `append` declares side effects"),
        "{}",
        note.message
    );
    assert!(
        last_record(&rt)
            .notes
            .iter()
            .any(|n| n.rule_id == "dry_run_not_read")
    );
    // Not a dry run, or a skill without side effects: no note.
    let result = ok(&rt, JobEnvelope::new("append", json!({"line": "wet"}))).await;
    assert!(result.notes.iter().all(|n| n.rule_id != "dry_run_not_read"));
    let mut job = JobEnvelope::new("double", json!({"n": 1}));
    job.constraints.dry_run = true;
    assert!(ok(&rt, job).await.notes.is_empty());
}

#[tokio::test]
async fn a_broken_postcondition_runs_its_rollback_action() {
    let rt = runtime();
    let journal = || rt_journal(&rt);
    ok(&rt, JobEnvelope::new("append", json!({"line": "one"}))).await;
    assert_eq!(journal(), ["one"]);
    let e = err(&rt, JobEnvelope::new("append", json!({"line": "break"}))).await;
    assert_eq!(
        e,
        InvokeError::Postcondition {
            skill: "append".into(),
            assertion: "|i: &Entry, _o: &Appended| i.line != \"break\"".into(),
            rollback_action: Some("drop_last_line"),
            rollback: Some(Ok(())),
            // What the run produced before the check rejected it.
            output: Some(Arc::new(json!({"lines": 2}))),
        }
    );
    assert_eq!(journal(), ["one"], "the rollback removed the line");
    assert_eq!(
        last_record(&rt).output.as_deref(),
        Some(&json!({"lines": 2})),
        "the record keeps the rejected output"
    );
}

fn rt_journal(rt: &Runtime) -> Vec<String> {
    let journal = rt.resources().get::<Journal>().unwrap();
    journal.lines.lock().unwrap().clone()
}

#[tokio::test]
async fn validation_rules_fail_on_error_and_record_warnings() {
    let rt = runtime();
    let res = ok(
        &rt,
        JobEnvelope::new(
            "append",
            json!({"line": "a line longer than twenty characters"}),
        ),
    )
    .await;
    assert_eq!(res.notes.len(), 1);
    assert_eq!(res.notes[0].rule_id, "short");
    assert_eq!(last_record(&rt).notes, res.notes);
    let before = rt_journal(&rt);
    let e = err(
        &rt,
        JobEnvelope::new("append", json!({"line": "forbidden"})),
    )
    .await;
    assert_eq!(e.code(), "validation_rule_failed");
    // A rejected output leaves no effect behind: the skill's rollback action
    // ran, as for a broken postcondition.
    assert_eq!(
        e,
        InvokeError::ValidationRule {
            skill: "append".into(),
            rule_id: "not_forbidden".into(),
            message: "forbidden line".into(),
            rollback_action: Some("drop_last_line"),
            rollback: Some(Ok(())),
            output: Some(Arc::new(json!({"lines": before.len() + 1}))),
        }
    );
    assert!(
        e.to_string()
            .contains("rollback action `drop_last_line` ran"),
        "{e}"
    );
    assert_eq!(rt_journal(&rt), before, "the rollback removed the line");
    let record = last_record(&rt);
    assert_eq!(step(&record, Stage::Postconditions), StageOutcome::Passed);
    assert_eq!(step(&record, Stage::ValidationRules), StageOutcome::Failed);
}

// ------------------------------------------------------------------ idempotency

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_key_fired_100_times_concurrently_executes_once() {
    let rt = runtime();
    let jobs = (0..100)
        .map(|_| JobEnvelope::new("append", json!({"line": "once"})).with_idempotency_key("k-100"));
    let results = run_all(&rt, jobs).await;
    // This runtime's own journal: other tests run `append` at the same time.
    assert_eq!(rt_journal(&rt), ["once"], "executed once");
    let results: Vec<SkillResult> = results.into_iter().map(Result::unwrap).collect();
    assert_eq!(results.iter().filter(|r| !r.replayed).count(), 1);
    let first = &results.iter().find(|r| !r.replayed).unwrap().data;
    assert!(results.iter().all(|r| &r.data == first));
    assert_eq!(
        rt.memory_records().unwrap().total(),
        100,
        "every job leaves a record"
    );
    // Later jobs with the key get the stored result too.
    let again = ok(
        &rt,
        JobEnvelope::new("append", json!({"line": "once"})).with_idempotency_key("k-100"),
    )
    .await;
    assert!(again.replayed);
    assert_eq!(rt_journal(&rt), ["once"]);
}

#[tokio::test]
async fn a_call_without_a_key_is_a_run_of_its_own_unless_the_skill_declares_a_key() {
    let rt = runtime();
    let scoped = |line: &str, entity: EntityType| {
        let mut job = JobEnvelope::new("append_keyed", json!({"line": line}));
        job.scope = Some(Box::new(Scope::new(entity)));
        job
    };
    // Two direct calls are two runs, even of an effectful skill: nothing
    // replays a result the caller did not ask for.
    let job = || JobEnvelope::new("append", json!({"line": "direct"}));
    let first = ok(&rt, job()).await;
    let second = ok(&rt, job()).await;
    assert!(!first.replayed && !second.replayed);
    assert_eq!(rt_journal(&rt).iter().filter(|l| *l == "direct").count(), 2);
    let record = last_record(&rt);
    assert_eq!(step(&record, Stage::Idempotency), StageOutcome::Skipped);
    assert_eq!(record.idempotency_key, None);

    // `idempotency(key = "hash")`: the same intent, scope and payload is one job.
    let once = || JobEnvelope::new("append_once", json!({"line": "hashed"}));
    let first = ok(&rt, once()).await;
    let second = ok(&rt, once()).await;
    assert!(!first.replayed && second.replayed);
    let key = last_record(&rt).idempotency_key.clone().unwrap();
    assert_eq!(
        key,
        skill_runtime::envelope::stable_hash(
            &json!({"intent": null, "scope": null, "payload": {"line": "hashed"}})
        )
    );
    // A caller's own key always wins: a run of its own when asked for.
    let mine = ok(&rt, once().with_idempotency_key("my-own-run")).await;
    assert!(!mine.replayed);
    assert_eq!(rt_journal(&rt).iter().filter(|l| *l == "hashed").count(), 2);
    // A dry run is another job.
    assert!(!ok(&rt, once().with_dry_run(true)).await.replayed);

    // `composite`: the listed fields only.
    let a = ok(&rt, scoped("c", EntityType::Page)).await;
    let b = ok(&rt, scoped("c", EntityType::Page)).await;
    let c = ok(&rt, scoped("c", EntityType::Gamme)).await;
    assert!(!a.replayed && b.replayed && !c.replayed);
    assert_eq!(
        last_record(&rt).idempotency_key.clone().unwrap(),
        skill_runtime::envelope::stable_hash(
            &json!({"scope.entityType": "gamme", "payload.line": "c"})
        )
    );
    // A read-only skill is never keyed by default.
    let a = ok(&rt, JobEnvelope::new("double", json!({"n": 4}))).await;
    let b = ok(&rt, JobEnvelope::new("double", json!({"n": 4}))).await;
    assert!(!a.replayed && !b.replayed);
}

#[tokio::test]
async fn failures_are_not_stored_so_a_key_can_be_retried() {
    let rt = runtime();
    let job = || {
        JobEnvelope::new(
            "flaky",
            json!({"id": "idem-f", "failures": 1, "retryable": false}),
        )
        .with_idempotency_key("f-1")
    };
    assert!(rt.invoke(job()).await.is_err());
    let res = ok(&rt, job()).await;
    assert!(!res.replayed);
}

/// An empty key would make every job that brings one the same job: it is
/// refused, as a reader of the envelope's JSON refuses it, and nothing runs.
#[tokio::test]
async fn an_empty_idempotency_key_is_refused_not_shared() {
    let rt = runtime();
    for n in [1, 2] {
        let job = JobEnvelope::new("double", json!({ "n": n })).with_idempotency_key("");
        let e = err(&rt, job).await;
        assert_eq!(e.code(), "invalid_envelope", "{e}");
        assert!(e.is_input_error());
        assert!(
            e.to_string().contains("an idempotency key is not empty"),
            "{e}"
        );
        let record = last_record(&rt);
        assert_eq!(step(&record, Stage::Idempotency), StageOutcome::Failed);
        assert!(record.steps.iter().all(|s| s.step != Stage::Execute));
    }
    let res = ok(
        &rt,
        JobEnvelope::new("double", json!({"n": 2})).with_idempotency_key("k"),
    )
    .await;
    assert_eq!(res.data["doubled"], 4);
}

// ------------------------------------------------------------------ approval

#[tokio::test]
async fn skills_requiring_a_human_are_refused_unless_approved() {
    let rt = runtime();
    let e = err(&rt, JobEnvelope::new("guarded", json!({"n": 1}))).await;
    assert!(
        matches!(&e, InvokeError::NotApproved { reason, .. } if reason == "requires_hitl"),
        "{e}"
    );
    assert!(e.to_string().contains("no approver is configured"), "{e}");
    let rt = runtime_with(|b| b.approver(ApproveAll { by: "test".into() }));
    ok(&rt, JobEnvelope::new("guarded", json!({"n": 1}))).await;
    assert_eq!(
        last_record(&rt)
            .steps
            .iter()
            .find(|s| s.step == Stage::Approval)
            .unwrap()
            .detail,
        Some("approved by test")
    );
}

// ------------------------------------------------------------------ budgets and reports

#[tokio::test]
async fn reports_reach_the_result_and_budgets_are_enforced() {
    let rt = runtime();
    let res = ok(
        &rt,
        JobEnvelope::new("spender", json!({"n": 50})).with_dry_run(true),
    )
    .await;
    assert_eq!(res.metrics.tokens_used, Some(50));
    assert_eq!(res.artifacts.len(), 1);
    assert_eq!(res.next_action, NextAction::Continue);
    assert_eq!(
        *res.data,
        json!({"doubled": 1}),
        "the handler saw the dry run"
    );
    let job = JobEnvelope::new("spender", json!({"n": 50})).with_constraints(JobConstraints {
        max_tokens: 40,
        ..JobConstraints::default()
    });
    let e = err(&rt, job).await;
    assert_eq!(
        e,
        InvokeError::BudgetExceeded {
            skill: "spender".into(),
            budget: "tokens",
            used: 50,
            limit: 40
        }
    );
    assert_eq!(e.code(), "budget_exceeded");
}

/// Every job is held to the seed's default budgets, and a handler is stopped
/// at the report that crosses one: the steps after it never run, and the job
/// is not retried.
#[tokio::test]
async fn a_budget_stops_the_handler_at_the_report_that_crosses_it() {
    let rt = runtime();
    let run = |constraints: JobConstraints| {
        STEPS.store(0, Ordering::SeqCst);
        JobEnvelope::new("metered", json!({"n": 100})).with_constraints(constraints)
    };
    // The defaults: 4,000 tokens, 10 documents; the 11th document crosses.
    let e = err(&rt, run(JobConstraints::default())).await;
    assert_eq!(e.code(), "budget_exceeded");
    assert!(
        e.to_string()
            .contains("used 11 documents, over the job's budget of 10"),
        "{e}"
    );
    assert_eq!(STEPS.load(Ordering::SeqCst), 11);
    let record = last_record(&rt);
    assert_eq!(record.attempts.len(), 1, "not retried");
    assert_eq!(record.attempts[0].outcome, AttemptOutcome::Stopped);
    assert_eq!(
        record.constraints,
        JobConstraints::default(),
        "shown in the record"
    );
    // Tokens: 10 a step, 30 allowed: the 4th step crosses.
    let e = err(
        &rt,
        run(JobConstraints {
            max_tokens: 30,
            ..JobConstraints::default()
        }),
    )
    .await;
    assert!(
        e.to_string()
            .contains("used 40 tokens, over the job's budget of 30"),
        "{e}"
    );
    assert_eq!(STEPS.load(Ordering::SeqCst), 4);
    // Cost, in whole cents: $2.50 lets two steps through.
    let e = err(
        &rt,
        run(JobConstraints {
            budget: Some(2.5),
            ..JobConstraints::default()
        }),
    )
    .await;
    assert!(
        e.to_string()
            .contains("used 300 cents, over the job's budget of 250"),
        "{e}"
    );
    assert_eq!(STEPS.load(Ordering::SeqCst), 3);
    // Zero of everything: the first report stops it.
    let e = err(
        &rt,
        run(JobConstraints {
            max_tokens: 0,
            max_docs: 0,
            budget: Some(0.0),
            ..JobConstraints::default()
        }),
    )
    .await;
    assert_eq!(e.code(), "budget_exceeded");
    assert_eq!(STEPS.load(Ordering::SeqCst), 1);
    // Within every budget: what was used is in the result.
    let res = ok(&rt, JobEnvelope::new("metered", json!({"n": 3}))).await;
    assert_eq!(res.metrics.tokens_used, Some(30));
    assert_eq!(res.metrics.docs_retrieved, Some(3));
    assert_eq!(res.metrics.items_processed, 3);
    assert_eq!(res.metrics.cost, Some(3.0));
}

/// A skill declared DOCKER (or WASM) is not run in this process: refused,
/// naming its sandbox, and the runtime keeps serving.
#[tokio::test]
async fn a_sandboxed_skill_is_refused_not_run_in_process() {
    let rt = runtime();
    let e = err(&rt, JobEnvelope::new("contained", json!({"n": 2}))).await;
    assert_eq!(e.code(), "sandbox_unavailable");
    assert!(e.to_string().contains("DOCKER sandbox"), "{e}");
    let record = last_record(&rt);
    assert_eq!(step(&record, Stage::Resolve), StageOutcome::Failed);
    assert!(record.attempts.is_empty(), "the handler never ran");
    ok(&rt, JobEnvelope::new("double", json!({"n": 2}))).await;
}

/// The seed's `ragContext` goes from the envelope to the skill's context.
#[tokio::test]
async fn a_jobs_rag_context_reaches_its_skill() {
    let rt = runtime();
    let job: JobEnvelope = serde_json::from_value(json!({
        "skill": "rag_aware",
        "payload": {"n": 1},
        "context": {"source": "event"},
        "ragContext": {
            "documents": [{"id": "faq-001"}, {"id": "faq-002"}],
            "citations": [],
            "truthLevel": "L2",
            "confidence": 0.8,
            "indexVersion": "2026.01.0"
        }
    }))
    .unwrap();
    let res = ok(&rt, job).await;
    assert_eq!(
        *res.data,
        json!({"index_version": "2026.01.0", "documents": 2})
    );
    let without = ok(&rt, JobEnvelope::new("rag_aware", json!({"n": 1}))).await;
    assert_eq!(
        *without.data,
        json!({"index_version": null, "documents": 0})
    );
    // Out of range: refused where it enters.
    let bad = serde_json::from_value::<JobEnvelope>(json!({
        "skill": "rag_aware", "payload": {"n": 1}, "context": {"source": "event"},
        "ragContext": {"documents": [], "citations": [], "truthLevel": "L2", "confidence": 1.5, "indexVersion": "x"}
    }));
    assert!(bad.unwrap_err().to_string().contains("outside 0 to 1"));
}

/// A report from another task of the handler's stops it too, at once, not
/// when its own wait ends.
#[tokio::test]
async fn a_budget_crossed_in_another_task_stops_the_handler_at_once() {
    let rt = runtime();
    let started = std::time::Instant::now();
    let e = err(
        &rt,
        JobEnvelope::new("metered_elsewhere", json!({"n": 50})).with_constraints(JobConstraints {
            max_tokens: 10,
            ..JobConstraints::default()
        }),
    )
    .await;
    assert_eq!(e.code(), "budget_exceeded");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

// ------------------------------------------------------------------ redaction

#[tokio::test]
async fn redacted_fields_never_reach_a_record_or_an_error() {
    let rt = runtime();
    let secret = "hunter2-very-secret";
    let e = err(
        &rt,
        JobEnvelope::new("login", json!({"secret": secret, "user": "ann"})),
    )
    .await;
    // The error goes to stderr, logs and MCP clients: redacted like a record.
    assert_eq!(
        e.to_string(),
        "skill `login` failed with `refused` after 1 attempt: bad credentials for ann: [REDACTED]"
    );
    let long = format!("{secret}-{}", "y".repeat(40));
    let e = err(
        &rt,
        JobEnvelope::new("login", json!({"secret": long, "user": "ann"})),
    )
    .await;
    assert!(
        !e.to_string().contains(secret) && e.to_string().contains("at /secret: [REDACTED]"),
        "{e}"
    );
    ok(
        &rt,
        JobEnvelope::new("login", json!({"secret": "open-sesame", "user": "ann"})),
    )
    .await;
    let records = rt.memory_records().unwrap().records();
    assert_eq!(records.len(), 3);
    for r in &records {
        let text = serde_json::to_string(&**r).unwrap();
        assert!(
            !text.contains(secret) && !text.contains("open-sesame"),
            "{text}"
        );
        assert_eq!(r.params.to_value()["secret"], "[REDACTED]");
        assert_eq!(r.params.to_value()["user"], "ann");
    }
    assert_eq!(
        records[0].error.as_ref().unwrap().message,
        "skill `login` failed with `refused` after 1 attempt: bad credentials for ann: [REDACTED]"
    );
    assert!(
        records[1]
            .error
            .as_ref()
            .unwrap()
            .message
            .contains("at /secret: [REDACTED]")
    );

    // A misspelt secret field, which the schema refuses: not a declared
    // field, and redacted all the same by a skill that redacts.
    let misspelt = "correct-horse-battery";
    let e = err(
        &rt,
        JobEnvelope::new(
            "login",
            json!({"secret": "x", "Secret": misspelt, "user": "ann"}),
        ),
    )
    .await;
    assert!(!e.to_string().contains(misspelt), "{e}");
    let records = rt.memory_records().unwrap().records();
    let last = records.last().unwrap();
    let text = serde_json::to_string(&**last).unwrap();
    assert!(!text.contains(misspelt), "{text}");
    assert_eq!(last.params.to_value()["Secret"], "[REDACTED]");
    assert_eq!(last.params.to_value()["user"], "ann");
}

// ------------------------------------------------------------------ typed calls

#[tokio::test]
async fn typed_calls_run_the_same_pipeline() {
    let rt = runtime();
    let out = rt.call::<double>(Num { n: 4 }).await.unwrap();
    assert_eq!(out.doubled, 8);
    // Schema constraints say more than the type: still checked.
    let e = rt.call::<double>(Num { n: 4000 }).await.unwrap_err();
    assert_eq!(e.code(), "invalid_input");
    let e = rt.call::<double>(Num { n: 13 }).await.unwrap_err();
    assert_eq!(
        e.code(),
        "NOT_THIRTEEN",
        "the seed's error_code is the error's code"
    );
    // Replayed results decode back to the output type.
    let a = rt
        .call::<append_once>(Entry {
            line: "typed".into(),
        })
        .await
        .unwrap();
    let b = rt
        .call::<append_once>(Entry {
            line: "typed".into(),
        })
        .await
        .unwrap();
    assert_eq!(a.lines, b.lines);
    assert_eq!(rt.memory_records().unwrap().total(), 5);
}

/// An input whose serialization fails: a typed call's input is serialized for
/// its record and its schema check.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Opaque {
    pub n: u32,
}

impl Serialize for Opaque {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("opaque on purpose"))
    }
}

/// Double an opaque number.
#[skill(version = "1.0.0", retries = 0)]
pub async fn opaque_double(input: Opaque) -> Doubled {
    Doubled {
        doubled: input.n * 2,
    }
}

#[tokio::test]
async fn a_typed_input_that_does_not_serialize_fails_its_validation_with_a_record() {
    let rt = runtime();
    let e = rt.call::<opaque_double>(Opaque { n: 1 }).await.unwrap_err();
    assert_eq!(e.code(), "malformed_input");
    assert!(e.to_string().contains("opaque on purpose"), "{e}");
    let record = last_record(&rt);
    assert_eq!(record.skill, "opaque_double");
    assert_eq!(step(&record, Stage::ValidateInput), StageOutcome::Failed);
}

/// Output constraints the type does not carry: checked on every call.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Short {
    #[schemars(length(max = 5))]
    pub text: String,
}

/// Echo a text, which its output schema says is short.
#[skill(version = "1.0.0", retries = 0)]
pub async fn short_echo(input: Entry) -> Short {
    Short { text: input.line }
}

#[tokio::test]
async fn outputs_are_checked_unless_their_type_guarantees_them() {
    let rt = runtime();
    let long = || Entry {
        line: "far too long".into(),
    };
    let e = rt.call::<short_echo>(long()).await.unwrap_err();
    assert_eq!(e.code(), "invalid_output");
    assert!(e.to_string().contains("/text"), "{e}");
    let e = err(
        &rt,
        JobEnvelope::new("short_echo", json!({"line": "far too long"})),
    )
    .await;
    assert_eq!(e.code(), "invalid_output");
    // `Doubled` says nothing its type does not: a typed call records the check
    // as passed without running the validator (a JSON call runs it).
    rt.call::<double>(Num { n: 2 }).await.unwrap();
    assert_eq!(
        step(&last_record(&rt), Stage::ValidateOutput),
        StageOutcome::Passed
    );
}

// ------------------------------------------------------------------ sinks

#[tokio::test]
async fn a_json_lines_sink_writes_one_parsable_record_per_job() {
    let path = std::env::temp_dir().join(format!("skill-records-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let sink = Arc::new(skill_runtime::record::JsonLinesSink::append(&path).unwrap());
    let rt = runtime_with(|b| b.sink(sink.clone()));
    ok(&rt, JobEnvelope::new("double", json!({"n": 1}))).await;
    err(&rt, JobEnvelope::new("double", json!({"n": 13}))).await;
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["status"], "succeeded");
    assert_eq!(lines[1]["status"], "failed");
    assert_eq!(lines[1]["error"]["code"], "NOT_THIRTEEN");
    assert_eq!(sink.errors(), 0);
    assert!(
        rt.memory_records().is_none(),
        "a configured sink replaces the default"
    );
    let _ = std::fs::remove_file(&path);
}

/// The default sink keeps the most recent `DEFAULT_CAPACITY` records, oldest
/// first; older ones are dropped and counted, and stats count every job.
#[tokio::test]
async fn the_default_memory_sink_keeps_the_most_recent_records_up_to_its_bound() {
    let rt = runtime();
    let jobs = MemorySink::DEFAULT_CAPACITY + 2;
    let mut ids = Vec::with_capacity(jobs);
    for _ in 0..jobs {
        ids.push(
            ok(&rt, JobEnvelope::new("double", json!({"n": 1})))
                .await
                .job_id,
        );
    }
    let sink = rt.memory_records().unwrap();
    let kept: Vec<_> = sink.records().iter().map(|r| r.job_id.clone()).collect();
    assert_eq!(kept, ids[2..], "the last jobs' records, oldest first");
    assert_eq!(sink.total(), jobs as u64);
    assert_eq!(sink.dropped(), 2);
    assert_eq!(rt.stats_of("double").unwrap().runs, jobs as u64);

    // A bound of zero keeps nothing and still counts.
    let sink = Arc::new(MemorySink::new(0));
    let rt = runtime_with(|b| b.sink(sink.clone()));
    ok(&rt, JobEnvelope::new("double", json!({"n": 1}))).await;
    assert!(sink.records().is_empty());
    assert_eq!((sink.total(), sink.dropped()), (1, 1));
}

/// Run every job on its own task, all at once.
async fn run_all(
    rt: &Runtime,
    jobs: impl IntoIterator<Item = JobEnvelope>,
) -> Vec<Result<SkillResult, InvokeError>> {
    let mut set = tokio::task::JoinSet::new();
    for job in jobs {
        let rt = rt.clone();
        set.spawn(async move { rt.invoke(job).await });
    }
    set.join_all().await
}

#[tokio::test]
async fn an_unknown_name_suggests_the_close_one_or_the_other_kind() {
    let rt = runtime();
    let e = err(&rt, JobEnvelope::new("doubel", json!({}))).await;
    assert_eq!(
        e.to_string(),
        "unknown skill `doubel`; did you mean `double`?"
    );
    let e = err(&rt, JobEnvelope::new("zzzzzz", json!({}))).await;
    assert_eq!(e.to_string(), "unknown skill `zzzzzz`");
}

// ------------------------------------------------------------------ long-running work

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Ticks {
    pub n: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Ticked {
    pub ticks: u32,
}

/// Starts of `tick_slowly` with `n` = 1000 (only the cancellation test
/// sends that).
static THOUSANDS_STARTED: AtomicU32 = AtomicU32::new(0);

/// Tick `n` times, 20 ms apart, reporting progress at each tick.
#[skill(version = "1.0.0", idempotent, retries = 2, timeout_ms = 60_000)]
pub async fn tick_slowly(ctx: Ctx, input: Ticks) -> Ticked {
    if input.n == 1000 {
        THOUSANDS_STARTED.fetch_add(1, Ordering::SeqCst);
    }
    for i in 1..=input.n {
        tokio::time::sleep(Duration::from_millis(20)).await;
        ctx.report_progress(u64::from(i), Some(u64::from(input.n)), Some("ticking"));
    }
    Ticked { ticks: input.n }
}

#[tokio::test]
async fn progress_reaches_the_watcher_and_the_record_keeps_the_last() {
    let rt = runtime();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let watch =
        skill_runtime::Watch::new().on_progress(move |p| sink.lock().unwrap().push(p.clone()));
    let job = JobEnvelope::for_reference("tick_slowly", json!({"n": 5}));
    let r = rt.invoke_watched(job, watch).await.expect("it ticks");
    assert_eq!(r.data["ticks"], 5);
    let seen = seen.lock().unwrap();
    // 20 ms apart, passed at most every 50 ms: the first, some between, and
    // the last (work done) always.
    assert!((2..=5).contains(&seen.len()), "coalesced: {seen:?}");
    assert_eq!(seen.first().map(|p| p.done), Some(1));
    assert_eq!(seen.last().map(|p| (p.done, p.total)), Some((5, Some(5))));
    assert!(seen.windows(2).all(|w| w[0].done < w[1].done));
    let rec = last_record(&rt);
    assert_eq!(rec.progress.as_ref().map(|p| p.done), Some(5));
    assert_eq!(
        rec.progress.as_ref().and_then(|p| p.message.as_deref()),
        Some("ticking")
    );
}

#[tokio::test]
async fn a_cancelled_job_stops_at_its_next_await_is_recorded_and_not_retried() {
    let rt = runtime();
    let cancel = skill_runtime::Cancel::new();
    let watch = skill_runtime::Watch::new().cancel_with(cancel.clone());
    let job = JobEnvelope::for_reference("tick_slowly", json!({"n": 1000}))
        .with_idempotency_key("cancel-me");
    let started = std::time::Instant::now();
    let (result, ()) = tokio::join!(rt.invoke_watched(job, watch), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let e = result.expect_err("cancelled");
    assert!(matches!(e, InvokeError::Cancelled { .. }), "{e:?}");
    assert_eq!(e.code(), "cancelled");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let rec = last_record(&rt);
    assert_eq!(rec.status, RunStatus::Cancelled);
    assert_eq!(rec.attempts.len(), 1, "not retried: {:?}", rec.attempts);
    assert_eq!(rec.attempts[0].outcome, AttemptOutcome::Stopped);
    assert!(rec.progress.as_ref().is_some_and(|p| p.done < 1000));
    // The key is given back: the same job again runs afresh (its handler
    // starts), not a replay of the cancelled one.
    let started_before = THOUSANDS_STARTED.load(Ordering::SeqCst);
    let cancel = skill_runtime::Cancel::new();
    let again = JobEnvelope::for_reference("tick_slowly", json!({"n": 1000}))
        .with_idempotency_key("cancel-me");
    let (result, ()) = tokio::join!(
        rt.invoke_watched(
            again,
            skill_runtime::Watch::new().cancel_with(cancel.clone())
        ),
        async {
            tokio::time::sleep(Duration::from_millis(60)).await;
            cancel.cancel();
        }
    );
    assert!(
        matches!(result, Err(InvokeError::Cancelled { .. })),
        "{result:?}"
    );
    assert!(!last_record(&rt).replayed, "not the earlier job's answer");
    assert_eq!(THOUSANDS_STARTED.load(Ordering::SeqCst), started_before + 1);
    // Cancelled before it starts: the handler never runs.
    let cancel = skill_runtime::Cancel::new();
    cancel.cancel();
    let job = JobEnvelope::for_reference("tick_slowly", json!({"n": 1000}));
    let e = rt
        .invoke_watched(job, skill_runtime::Watch::new().cancel_with(cancel))
        .await
        .expect_err("cancelled before it starts");
    assert!(matches!(e, InvokeError::Cancelled { .. }), "{e:?}");
    assert_eq!(last_record(&rt).status, RunStatus::Cancelled);
    assert_eq!(
        THOUSANDS_STARTED.load(Ordering::SeqCst),
        started_before + 1,
        "a job cancelled before it starts never runs its handler"
    );
}

// ------------------------------------------------------------------ text, generated

/// A JSON value of a few levels, with the numbers and strings that bend
/// parsers: big and negative integers, floats, escapes, non-ASCII.
fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (0u32..2000).prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "[a-z\"\\\\\u{e9}\u{1f600} ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,3}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    /// Generated params text, names repeated and escaped, blanks anywhere:
    /// the text path answers as the value path does, record included.
    #[test]
    fn generated_params_text_is_answered_as_its_value(
        skill in proptest::sample::select(vec!["double", "login"]),
        entries in proptest::collection::vec(
            (0usize..6, json_value(), 0usize..4, 0usize..4),
            0..5,
        ),
    ) {
        const NAMES: [&str; 6] = ["n", "secret", "user", "extra", "\\u006e", "s\\u0065cret"];
        const BLANKS: [&str; 4] = ["", " ", "\n", "\t "];
        let body: Vec<String> = entries
            .iter()
            .map(|(name, value, before, after)| {
                format!("{}\"{}\"{}:{}", BLANKS[*before], NAMES[*name], BLANKS[*after], value)
            })
            .collect();
        let text = format!("{{{}}}", body.join(","));
        let rt = runtime();
        let tokio = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        tokio.block_on(by_text_and_by_value(&rt, &rt, skill, &text));
    }
}

/// A full memory sink lets its oldest record go on every job, and the next
/// job on the thread writes into the blocks it held (the record's, its
/// output's, its params text's buffer, the job's state and future): each
/// record and result says what its own job sent and made, whatever the
/// lengths before it, and a result still held keeps its output.
#[tokio::test]
async fn blocks_let_go_by_one_job_hold_only_the_next_jobs_values() {
    let sink = Arc::new(MemorySink::new(1));
    let rt = runtime_with(|b| b.sink(sink.clone()));
    let long_note = "n".repeat(150);
    let cases = [
        json!({"label": "ab", "n": 1}),
        json!({"label": "abc", "n": 22, "note": "x"}),
        json!({"label": "abcd", "n": 333, "note": long_note}),
        json!({"label": "ab", "n": 4}),
        json!({"n": 5, "label": "abcde", "note": "the same length as one before"}),
        json!({"label": "ab", "n": 6}),
    ];
    let mut held = Vec::new();
    for (i, params) in cases.iter().enumerate() {
        let text = params.to_string();
        let result = rt
            .invoke_text(JobEnvelope::new("labelled", Value::Null), &text)
            .await
            .unwrap();
        let mut want = params.clone();
        want.as_object_mut()
            .unwrap()
            .entry("note")
            .or_insert(Value::Null);
        assert_eq!(*result.data.value(), want, "{text}");
        let records = sink.records();
        assert_eq!(records.len(), 1);
        let record = &records[0];
        assert_eq!(record.job_id, result.job_id);
        assert_eq!(*record.params.to_value(), *params, "{text}");
        assert_eq!(record.output.as_ref().unwrap().value(), &want, "{text}");
        // Every other result is held: its output is then not let go with
        // its record, nor written over by a later job's.
        if i % 2 == 1 {
            held.push((result, want));
        }
    }
    for (result, want) in &held {
        assert_eq!(result.data.value(), want, "a held result keeps its output");
    }
    assert_eq!(sink.dropped(), cases.len() as u64 - 1);
}
