//! Agents at run time, on agents declared here: the agent is the caller of its
//! skills; pre- and post-conditions fail with their `error_code` in the
//! result and the record, an output breaking its schema with `invalid_output`; each escalation trigger makes `next_action`
//! `escalate` with its reason; a skill outside the contract is refused; served
//! as MCP tools, the same codes and escalations reach the client.

use std::sync::Arc;

use serde_json::{Value, json};
use skill_runtime::agents::{AgentRegistry, AgentResult, AgentRunner};
use skill_runtime::policy::Limits;
use skill_runtime::prelude::*;
use skill_runtime::{InvokeError, record::RunRecord};
use skill_runtime::{Registry, Runtime};

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Num {
    pub n: i64,
}

/// Double a number.
#[skill(reusable_by(executor = "execute", architect = "execute"))]
pub async fn double(input: Num) -> Num {
    Num { n: input.n * 2 }
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum FlakyError {
    /// Asked to fail.
    #[error("asked to fail")]
    Asked,
}

/// Fail on negative numbers.
#[skill(reusable_by(executor = "execute"))]
pub async fn flaky(input: Num) -> Result<Num, FlakyError> {
    if input.n < 0 {
        Err(FlakyError::Asked)
    } else {
        Ok(input)
    }
}

/// Not listed by the worker agent.
#[skill]
pub async fn unlisted(input: Num) -> Num {
    input
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Task {
    /// The number to work on.
    #[schemars(range(min = -1000, max = 1000))]
    pub n: i64,
    /// The confidence to report.
    pub confidence: f64,
    /// Ask for a human.
    #[serde(default)]
    pub human: bool,
    /// Failing skill calls to make before working.
    #[serde(default)]
    pub failures: u32,
    /// Call a skill outside the contract.
    #[serde(default)]
    pub stray: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Done {
    pub n: i64,
    /// Between 0 and 1; the task may claim otherwise, and the output's schema
    /// catches it.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    pub human: bool,
    pub caller_role: String,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum WorkerError {
    /// A skill failed.
    #[error("skill failed: {0}")]
    Skill(String),
}

/// Double a number through its skills, reporting a confidence.
#[agent(
    id = "agent.test.worker",
    name = "Worker",
    role = "executor",
    domain = "core",
    version = "1.2.0",
    owner = "tests",
    skills(double, flaky),
    pre_condition(code = "ZERO_INPUT", check = |t: &Task| t.n != 0),
    post_condition(code = "TOO_BIG", check = |o: &Done| o.n.abs() < 1000),
    escalation(
        triggers(
            confidence_below(field = "/confidence", value = 0.5),
            error_count_above = 1,
            human_required(field = "/human"),
        ),
        target_agent = "agent.test.reviewer",
        human_required = true,
        timeout_hours = 4,
    ),
    kpi(metric_id = "task_success_rate", target = 0.95, warning = 0.85, critical = 0.70, unit = "percentage", direction = "higher"),
)]
pub async fn worker(ctx: AgentCtx, task: Task) -> Result<Done, WorkerError> {
    for _ in 0..task.failures {
        let _ = ctx.run::<flaky>(Num { n: -1 }).await;
    }
    if task.stray {
        let e = ctx.run_json("unlisted", json!({"n": 1})).await.unwrap_err();
        assert!(matches!(e, InvokeError::Denied { .. }), "{e}");
    }
    let out = ctx
        .run::<double>(Num { n: task.n })
        .await
        .map_err(|e| WorkerError::Skill(e.to_string()))?;
    Ok(Done {
        n: out.n,
        confidence: task.confidence,
        human: task.human,
        caller_role: ctx
            .caller()
            .agent_role
            .map(|r| r.as_str().to_owned())
            .unwrap_or_default(),
    })
}

/// Reviews what the worker escalates.
#[agent(
    id = "agent.test.reviewer",
    name = "Reviewer",
    role = "architect",
    domain = "core",
    version = "1.0.0",
    owner = "tests",
    skills(double)
)]
pub async fn reviewer(ctx: AgentCtx, input: Num) -> Result<Num, WorkerError> {
    ctx.run::<double>(input)
        .await
        .map_err(|e| WorkerError::Skill(e.to_string()))
}

fn runner() -> (AgentRunner, Runtime) {
    runner_with(Limits::default())
}

fn runner_with(limits: Limits) -> (AgentRunner, Runtime) {
    let registry = Arc::new(Registry::from_inventory().expect("skills"));
    let runtime = Runtime::builder(registry)
        .limits(limits)
        .build()
        .expect("runtime");
    let agents = Arc::new(AgentRegistry::from_inventory().expect("agents"));
    (AgentRunner::new(runtime.clone(), agents), runtime)
}

/// One run of the worker agent, to its end.
fn run_worker(runner: &AgentRunner, task: Value) -> AgentResult {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(runner.run("agent.test.worker", task, Caller::default(), false))
        .expect("the agent exists")
}

fn run(task: Value) -> (AgentResult, Vec<Arc<RunRecord>>) {
    let (runner, runtime) = runner();
    let result = run_worker(&runner, task);
    (result, runtime.memory_records().unwrap().records())
}

fn agent_record(records: &[Arc<RunRecord>]) -> &RunRecord {
    records
        .iter()
        .find(|r| r.skill == "agent.test.worker")
        .expect("the agent's run record")
}

#[test]
fn a_run_calls_its_skills_as_the_agent_and_completes() {
    let (result, records) = run(json!({"n": 21, "confidence": 0.9}));
    assert!(result.success, "{result:?}");
    assert_eq!(result.data["n"], 42);
    assert_eq!(result.data["caller_role"], "executor");
    assert_eq!(result.agent, "agent.test.worker@1.2.0");
    assert_eq!(result.next_action, NextAction::Complete);
    assert!(result.escalation.is_none());
    // The skill's own record carries the agent as caller and the run as parent.
    let step = records.iter().find(|r| r.skill == "double").unwrap();
    assert_eq!(step.caller.agent_role.map(|r| r.as_str()), Some("executor"));
    assert_eq!(
        step.parent_job_id.as_ref().map(|i| i.as_str()),
        Some(result.job_id.as_str())
    );
    let own = agent_record(&records);
    assert_eq!(own.output.as_deref(), Some(&result.data));
}

#[test]
fn each_trigger_escalates_to_the_target_with_its_reason() {
    let cases = [
        (
            json!({"n": 1, "confidence": 0.4}),
            "confidence 0.4 < 0.5 (at /confidence)",
        ),
        (
            json!({"n": 1, "confidence": 0.9, "failures": 2}),
            "error_count 2 > 1",
        ),
        (
            json!({"n": 1, "confidence": 0.9, "human": true}),
            "human_required == true (at /human)",
        ),
    ];
    for (task, reason) in cases {
        let (result, records) = run(task.clone());
        assert!(result.success, "{task}: {result:?}");
        assert_eq!(result.next_action, NextAction::Escalate, "{task}");
        let e = result.escalation.as_ref().expect("an escalation");
        assert_eq!(e.target_agent, "agent.test.reviewer");
        assert!(e.human_required);
        assert_eq!(e.timeout_hours, 4);
        assert_eq!(e.reasons, vec![reason.to_owned()], "{task}");
        let note = &agent_record(&records).notes[0];
        assert_eq!(note.rule_id, "escalation");
        assert!(note.message.contains(reason), "{}", note.message);
    }
    // No one approved the hand-over (the default approver denies): it waits
    // for a person, and says so.
    let (result, records) = run(json!({"n": 1, "confidence": 0.4}));
    assert!(result.escalated.is_none());
    let notes = &agent_record(&records).notes;
    assert!(
        notes
            .iter()
            .any(|n| n.message.starts_with("the hand-over waits for a person: ")),
        "{notes:?}"
    );
    // One failure is not more than one: no escalation.
    let (result, _) = run(json!({"n": 1, "confidence": 0.9, "failures": 1}));
    assert_eq!(result.metrics.errors, 1);
    assert_eq!(result.next_action, NextAction::Complete);
}

#[test]
fn conditions_fail_with_their_error_code_in_result_and_record() {
    for (task, code) in [
        (json!({"n": 0, "confidence": 0.9}), "ZERO_INPUT"),
        (json!({"n": 600, "confidence": 0.9}), "TOO_BIG"),
        (json!({"n": 5000, "confidence": 0.9}), "invalid_input"),
        (json!({"confidence": 0.9}), "invalid_input"),
        (json!({"n": 1, "confidence": 1.5}), "invalid_output"),
    ] {
        let (result, records) = run(task.clone());
        assert!(!result.success, "{task}");
        assert_eq!(result.error.as_ref().unwrap().code, code, "{task}");
        let record = agent_record(&records);
        assert_eq!(record.error.as_ref().unwrap().code, code);
        assert!(record.output.is_none());
    }
}

#[test]
fn a_skill_outside_the_contract_is_refused_and_counted() {
    let (result, _) = run(json!({"n": 2, "confidence": 0.9, "stray": true}));
    assert!(result.success, "{result:?}");
    assert_eq!(result.metrics.errors, 1);
    assert_eq!(result.metrics.skill_calls, 2);
}

#[test]
fn an_unknown_agent_is_an_error_naming_the_known_ones() {
    let (runner, _) = runner();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let e = rt
        .block_on(runner.run("agent.test.nobody", json!({}), Caller::default(), false))
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("agent.test.nobody") && text.contains("agent.test.worker"),
        "{text}"
    );
}

/// `stats` on a synthetic record set: each KPI's exact value and status.
#[test]
fn stats_computes_each_kpi_from_the_agents_records() {
    let dir = skill_tests::temp_dir("agent-kpis");
    let file = dir.join("records.jsonl");
    // Four runs of agent.seo.vlevel, three succeeded: 1, 3, 5 and 7 ms, with
    // confidences 0.9, 0.6 and 0.75; and one skill record, not the agent's.
    let line = |status: &str, us: u64, confidence: Option<f64>| {
        let mut r = json!({"skill": "agent.seo.vlevel", "version": "1.0.0", "duration_us": us, "status": status});
        if let Some(c) = confidence {
            r["output"] = json!({"confidence": c});
        }
        r.to_string()
    };
    let lines = [
        line("succeeded", 1_000, Some(0.9)),
        line("succeeded", 3_000, Some(0.6)),
        line("failed", 5_000, None),
        line("succeeded", 7_000, Some(0.75)),
        json!({"skill": "echo", "version": "1.0.0", "duration_us": 10, "status": "succeeded"})
            .to_string(),
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = skill_tests::run_ok(&mut skill_tests::skill_examples(&[
        "stats",
        file.to_str().unwrap(),
        "--json",
    ]));
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    let agent = stats["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == "agent.seo.vlevel")
        .expect("the agent's KPIs");
    let kpi = |id: &str| {
        agent["kpis"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["metric_id"] == id)
            .cloned()
            .unwrap()
    };
    // 3 of 4 succeeded: 0.75, at or below the 0.85 warning, above the 0.70 critical.
    assert_eq!(kpi("task_success_rate")["value"], 0.75);
    assert_eq!(kpi("task_success_rate")["status"], "warning");
    assert_eq!(kpi("task_success_rate")["samples"], 4);
    // (1 + 3 + 5 + 7) / 4 = 4 ms, under the 10,000 ms warning.
    assert_eq!(kpi("avg_processing_time")["value"], 4.0);
    assert_eq!(kpi("avg_processing_time")["status"], "ok");
    // (0.9 + 0.6 + 0.75) / 3 = 0.75, above the 0.7 warning.
    assert_eq!(kpi("avg_confidence")["value"], 0.75);
    assert_eq!(kpi("avg_confidence")["status"], "ok");
    assert_eq!(kpi("avg_confidence")["samples"], 3);
    // The architect has no runs: no value, no status.
    let architect = stats["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == "agent.seo.architect")
        .unwrap();
    assert_eq!(architect["kpis"][0]["value"], Value::Null);
    assert_eq!(architect["kpis"][0]["status"], Value::Null);

    // The table says the same.
    let out = skill_tests::run_ok(&mut skill_tests::skill_examples(&[
        "stats",
        file.to_str().unwrap(),
    ]));
    let table = String::from_utf8_lossy(&out.stdout);
    let row = table
        .lines()
        .find(|l| l.starts_with("agent.seo.vlevel") && l.contains("task_success_rate"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("0.750") && row.contains("warning"), "{row}");

    // A line cut short and a line that is not UTF-8 are skipped and counted:
    // the rest of the file still counts.
    let mut bytes = lines.join("\n").into_bytes();
    bytes.extend_from_slice(b"\n{\"skill\": \"agent.seo.vl\n\xff\xfe not text\n");
    std::fs::write(&file, bytes).unwrap();
    let out = skill_tests::run_ok(&mut skill_tests::skill_examples(&[
        "stats",
        file.to_str().unwrap(),
        "--json",
    ]));
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(again, stats, "the same figures");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("2 line(s) are not run records"), "{said}");
}

/// Agents served as MCP tools: a failed run is a tool error with the
/// contract's `error_code`; an escalation is in the result's `_meta`.
#[tokio::test]
async fn agents_as_mcp_tools_carry_error_codes_and_escalations() {
    use skill_runtime::mcp::{McpOptions, McpServer};
    let (runner, runtime) = runner();
    let server = McpServer::new(runtime, McpOptions::default())
        .unwrap()
        .with_agents(runner)
        .unwrap();
    let tool = server
        .tools()
        .into_iter()
        .find(|t| t.name == "agent.test.worker")
        .expect("the agent is a tool");
    assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
    let meta = |r: &rmcp::model::CallToolResult| {
        let m = serde_json::to_value(&r.meta).unwrap();
        m[skill_runtime::views::META_KEY].clone()
    };
    let args = |v: Value| v.as_object().cloned();
    let refused = server
        .call(
            "agent.test.worker",
            args(json!({"n": 0, "confidence": 0.9})),
        )
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(meta(&refused)["code"], "ZERO_INPUT");
    let escalated = server
        .call(
            "agent.test.worker",
            args(json!({"n": 2, "confidence": 0.4})),
        )
        .await
        .unwrap();
    assert_eq!(escalated.is_error, Some(false));
    assert_eq!(escalated.structured_content.as_ref().unwrap()["n"], 4);
    assert_eq!(meta(&escalated)["next_action"], "escalate");
    assert_eq!(
        meta(&escalated)["escalation"]["target_agent"],
        "agent.test.reviewer"
    );
}

/// Needs an MCP permission.
#[skill(reusable_by(executor = "execute"), mcp(permissions("secret:read")))]
pub async fn guarded(input: Num) -> Num {
    input
}

/// Lists a skill that needs an MCP permission.
#[agent(
    id = "agent.test.guarded",
    name = "Guarded",
    role = "executor",
    domain = "core",
    version = "1.0.0",
    owner = "tests",
    skills(guarded)
)]
pub async fn guarded_agent(ctx: AgentCtx, input: Num) -> Result<Num, WorkerError> {
    ctx.run::<guarded>(input)
        .await
        .map_err(|e| WorkerError::Skill(e.to_string()))
}

/// An MCP client reaches an agent only with every permission its skills need.
#[tokio::test]
async fn an_agent_over_mcp_needs_its_skills_permissions() {
    use skill_runtime::mcp::{McpOptions, McpServer};
    let serve = |grants: &[&str]| {
        let (runner, runtime) = runner();
        let options = McpOptions::new().grants(grants.iter().copied());
        McpServer::new(runtime, options)
            .unwrap()
            .with_agents(runner)
            .unwrap()
    };
    let args = json!({"n": 1}).as_object().cloned();
    let closed = serve(&[]);
    assert!(
        !closed
            .tools()
            .iter()
            .any(|t| t.name == "agent.test.guarded")
    );
    let e = closed
        .call("agent.test.guarded", args.clone())
        .await
        .unwrap_err();
    assert!(e.message.contains("secret:read"), "{}", e.message);
    let open = serve(&["secret:read"]);
    let r = open.call("agent.test.guarded", args).await.unwrap();
    assert_eq!(r.is_error, Some(false), "{r:?}");
}

/// The runner's KPIs over the runtime's own records.
#[test]
fn the_runner_reports_kpis_from_its_runtimes_records() {
    let (runner, _) = runner();
    for n in [1, 2, 0, 3] {
        run_worker(&runner, json!({"n": n, "confidence": 0.9}));
    }
    let kpis = runner.kpis();
    let (_, worker) = kpis
        .iter()
        .find(|(id, _)| *id == "agent.test.worker")
        .unwrap();
    // 3 of 4 succeeded (n = 0 breaks the pre-condition).
    assert_eq!(worker[0].metric_id, "task_success_rate");
    assert_eq!(worker[0].value, Some(0.75));
    assert_eq!(worker[0].samples, 4);
    assert_eq!(worker[0].status.map(|s| s.as_str()), Some("warning"));
}

/// An agent's params are held to the runtime's limits, and its record keeps
/// params and output within the record budget, like a skill's.
#[test]
fn agent_params_and_records_are_bounded_like_a_skills() {
    let (runner, runtime) = runner_with(Limits {
        max_input_bytes: 10_000,
        max_record_value_bytes: 200,
        ..Limits::default()
    });
    let run = |task: Value| run_worker(&runner, task);
    // Over the record budget, under the input limit: runs, recorded as its size.
    let r = run(json!({"n": 1, "confidence": 0.9, "note": "x".repeat(1_000)}));
    assert!(r.success, "{r:?}");
    let records = runtime.memory_records().unwrap().records();
    let own = agent_record(&records);
    assert!(
        own.params.to_value().get("$truncated").is_some(),
        "{}",
        own.params
    );
    // Over the input limit: refused before its schema is walked.
    let r = run(json!({"n": 1, "confidence": 0.9, "note": "x".repeat(20_000)}));
    assert_eq!(r.error.unwrap().code, "invalid_input");
}

#[test]
fn a_hand_over_a_person_approves_runs_its_target() {
    let registry = Arc::new(Registry::from_inventory().expect("skills"));
    let runtime = Runtime::builder(registry)
        .approver(skill_runtime::policy::ApproveAll {
            by: "the on-call reviewer".to_owned(),
        })
        .build()
        .expect("runtime");
    let agents = Arc::new(AgentRegistry::from_inventory().expect("agents"));
    let runner = AgentRunner::new(runtime.clone(), agents);
    let result = run_worker(&runner, json!({"n": 3, "confidence": 0.4}));
    let target = result.escalated.as_ref().expect("the reviewer ran");
    assert_eq!(target.agent, "agent.test.reviewer@1.0.0");
    assert!(target.success, "{target:?}");
    assert_eq!(target.data["n"], 6, "the reviewer got the worker's input");
    let records = runtime.memory_records().unwrap().records();
    let worker = agent_record(&records);
    assert!(
        worker
            .notes
            .iter()
            .any(|n| n.message == "the hand-over was approved by the on-call reviewer"),
        "{:?}",
        worker.notes
    );
    let reviewer = records
        .iter()
        .find(|r| r.skill == "agent.test.reviewer")
        .expect("the reviewer's record");
    assert_eq!(reviewer.parent_job_id.as_ref(), Some(&result.job_id));
}

/// An approver that never answers: the person who should decide is away.
struct Away;

impl skill_runtime::policy::Approver for Away {
    fn approve<'a>(
        &'a self,
        _: &'a skill_runtime::policy::ApprovalRequest,
    ) -> skill_runtime::policy::BoxFuture<'a, skill_runtime::policy::Approval> {
        Box::pin(std::future::pending())
    }
}

#[test]
fn a_hand_over_nobody_decides_on_goes_on_by_itself_after_timeout_hours() {
    let registry = Arc::new(Registry::from_inventory().expect("skills"));
    let runtime = Runtime::builder(registry)
        .approver(Away)
        .build()
        .expect("runtime");
    let agents = Arc::new(AgentRegistry::from_inventory().expect("agents"));
    // An hour of 10 ms: the worker's `timeout_hours = 4` pass in 40 ms.
    let runner = AgentRunner::new(runtime.clone(), agents)
        .with_hour_length(std::time::Duration::from_millis(10));
    let result = run_worker(&runner, json!({"n": 3, "confidence": 0.4}));
    let target = result.escalated.as_ref().expect("the reviewer ran");
    assert_eq!(target.agent, "agent.test.reviewer@1.0.0");
    let records = runtime.memory_records().unwrap().records();
    let worker = agent_record(&records);
    assert!(
        worker.notes.iter().any(|n| n.message
            == "nobody decided on the hand-over within 4 h (timeout_hours): it went on by itself"),
        "{:?}",
        worker.notes
    );
}

/// A hand-over through a queue: the run enqueues its target (the job
/// carries where it comes from), and the queue's worker, serving agents,
/// parks it for the person `human_required` asks for. Approved, it runs;
/// with nobody deciding within `timeout_hours`, it runs anyway and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_over_through_a_queue_waits_parked_for_a_person() {
    use skill_runtime::policy::Decision;
    use skill_runtime::queue::api::Queue;
    use skill_runtime::queue::memory::InProcessQueue;
    use skill_runtime::queue::worker::WorkerOptions;
    use skill_runtime::record::RunStatus;

    let registry = Arc::new(Registry::from_inventory().expect("skills"));
    let runtime = Runtime::builder(registry).build().expect("runtime");
    let agents = Arc::new(AgentRegistry::from_inventory().expect("agents"));
    // An hour of 250 ms on the worker: the worker's `timeout_hours = 4` is
    // a second of waiting for a person.
    let serving = AgentRunner::new(runtime.clone(), agents.clone())
        .with_hour_length(std::time::Duration::from_millis(250));
    let queue = Arc::new(
        InProcessQueue::start_with_agents(
            runtime.clone(),
            WorkerOptions {
                approvals: Some(std::time::Duration::from_secs(60)),
                ..WorkerOptions::default()
            },
            std::time::Duration::from_secs(60),
            serving,
        )
        .unwrap(),
    );
    let origin = AgentRunner::new(runtime.clone(), agents).with_queue(queue.clone());
    let hand_over = || async {
        let r = origin
            .run(
                "agent.test.worker",
                json!({"n": 3, "confidence": 0.4}),
                Caller::default(),
                false,
            )
            .await
            .unwrap();
        assert!(r.escalated.is_none(), "not run in process");
        (
            r.job_id.clone(),
            r.escalation_job.clone().expect("enqueued"),
        )
    };

    // A person approves: the reviewer runs, its record pointing back.
    let (from, job) = hand_over().await;
    let mut parked = false;
    for _ in 0..100 {
        let status = queue.status().await.unwrap();
        if status
            .awaiting_approval
            .iter()
            .any(|a| a.job_id == job.as_str())
        {
            parked = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(parked, "the hand-over waits parked");
    queue
        .decide(job.as_str(), Decision::approved("the on-call reviewer"))
        .await
        .unwrap();
    let out = queue
        .outcome(job.as_str(), std::time::Duration::from_secs(10))
        .await
        .unwrap()
        .expect("an outcome");
    assert_eq!(out.status, RunStatus::Succeeded, "{out:?}");
    let records = runtime.memory_records().unwrap().records();
    let reviewer = records.iter().find(|r| r.job_id == job).unwrap();
    assert_eq!(reviewer.skill, "agent.test.reviewer");
    assert_eq!(reviewer.parent_job_id.as_ref(), Some(&from));
    let says = |text: &str| reviewer.notes.iter().any(|n| n.message.contains(text));
    assert!(
        says("the hand-over was approved by the on-call reviewer"),
        "{:?}",
        reviewer.notes
    );
    assert!(
        says("escalated from `agent.test.worker`"),
        "{:?}",
        reviewer.notes
    );

    // Nobody decides: after 4 (short) hours it runs anyway.
    let (_, job) = hand_over().await;
    let out = queue
        .outcome(job.as_str(), std::time::Duration::from_secs(10))
        .await
        .unwrap()
        .expect("an outcome");
    assert_eq!(out.status, RunStatus::Succeeded, "{out:?}");
    let records = runtime.memory_records().unwrap().records();
    let reviewer = records.iter().find(|r| r.job_id == job).unwrap();
    assert!(
        reviewer.notes.iter().any(|n| n.message
            == "nobody decided on the hand-over within 4 h (timeout_hours): it went on by itself"),
        "{:?}",
        reviewer.notes
    );
}

/// Wait a moment, then answer.
#[skill(reusable_by(executor = "execute"))]
pub async fn slow_step(input: Num) -> Num {
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    input
}

/// `n` slow calls, one after the other, whatever each answers.
#[agent(
    id = "agent.test.slow",
    name = "Slow",
    role = "executor",
    domain = "core",
    version = "1.0.0",
    owner = "tests",
    skills(slow_step)
)]
pub async fn slow_agent(ctx: AgentCtx, input: Num) -> Result<Num, WorkerError> {
    for _ in 0..input.n {
        let _ = ctx.run::<slow_step>(Num { n: 1 }).await;
    }
    Ok(input)
}

/// An agent's job on a worker is cancelled like a skill's: the run stops at
/// its next await, no skill call starts after it (even for a body that goes
/// on past a refused call), it hands nothing over, and both the outcome and
/// the agent's record say `cancelled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_agent_job_stops_on_a_worker() {
    use skill_runtime::JobEnvelope;
    use skill_runtime::queue::api::Queue;
    use skill_runtime::queue::memory::InProcessQueue;
    use skill_runtime::queue::worker::WorkerOptions;
    use skill_runtime::record::RunStatus;
    use std::time::Duration;

    let registry = Arc::new(Registry::from_inventory().expect("skills"));
    let runtime = Runtime::builder(registry).build().expect("runtime");
    let agents = Arc::new(AgentRegistry::from_inventory().expect("agents"));
    let serving = AgentRunner::new(runtime.clone(), agents);
    let queue = InProcessQueue::start_with_agents(
        runtime.clone(),
        WorkerOptions::default(),
        Duration::from_secs(60),
        serving,
    )
    .unwrap();
    // 100 calls of 100 ms: ten seconds, unless cancelled.
    let id = queue
        .enqueue(JobEnvelope::new("agent.test.slow", json!({"n": 100})))
        .await
        .unwrap();
    let calls = || {
        runtime
            .memory_records()
            .unwrap()
            .records()
            .iter()
            .filter(|r| r.skill == "slow_step" && r.parent_job_id.as_ref() == Some(&id))
            .count()
    };
    for _ in 0..200 {
        if calls() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(calls() > 0, "the run is under way");
    queue.cancel(id.as_str()).await.unwrap();
    let out = queue
        .outcome(id.as_str(), Duration::from_secs(10))
        .await
        .unwrap()
        .expect("an outcome");
    assert_eq!(out.status, RunStatus::Cancelled, "{out:?}");
    assert_eq!(out.error.as_ref().unwrap().code, "cancelled");
    let made = calls();
    assert!(made < 20, "the run stopped: {made} calls of 100");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(calls(), made, "no call starts after the cancellation");
    let records = runtime.memory_records().unwrap().records();
    let run = records
        .iter()
        .find(|r| r.job_id == id && r.skill == "agent.test.slow")
        .expect("the agent's record");
    assert_eq!(run.status, RunStatus::Cancelled);
    assert!(
        !run.notes.iter().any(|n| n.message.contains("escalat")),
        "a cancelled run hands nothing over: {:?}",
        run.notes
    );
}

/// An envelope's hand-over waits at most 30 days: a longer `timeoutHours` is
/// refused with the envelope, saying the bound, rather than holding a job
/// for years.
#[test]
fn a_hand_over_waits_at_most_thirty_days() {
    use skill_runtime::JobEnvelope;
    let envelope = |hours: u64| {
        json!({
            "jobId": "6f1c1a9e-3d4b-4c1e-9a57-2f0e8b7d6c5a",
            "skill": "agent.test.reviewer",
            "payload": {"n": 1},
            "context": {"source": "event"},
            "escalatedFrom": {
                "agent": "agent.test.worker",
                "jobId": "0f9e8d7c-6b5a-4f3e-8d2c-1b0a9f8e7d6c",
                "humanRequired": true,
                "timeoutHours": hours
            }
        })
    };
    if let Err(e) = serde_json::from_value::<JobEnvelope>(envelope(720)) {
        panic!("720 hours is accepted: {e}");
    }
    let e = serde_json::from_value::<JobEnvelope>(envelope(4_000_000_000)).unwrap_err();
    assert!(e.to_string().contains("at most 720 hours"), "{e}");
}

/// While an agent's job runs on a worker, its state says where it is: the
/// skill call running now is its `currentNode` (what `run show` prints).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_agent_jobs_state_names_its_current_node() {
    use skill_runtime::JobEnvelope;
    use skill_runtime::queue::api::Queue;
    use skill_runtime::queue::memory::InProcessQueue;
    use skill_runtime::queue::worker::WorkerOptions;
    use std::time::Duration;

    let registry = Arc::new(Registry::from_inventory().expect("skills"));
    let runtime = Runtime::builder(registry).build().expect("runtime");
    let agents = Arc::new(AgentRegistry::from_inventory().expect("agents"));
    let serving = AgentRunner::new(runtime.clone(), agents);
    let queue = InProcessQueue::start_with_agents(
        runtime.clone(),
        WorkerOptions::default(),
        Duration::from_secs(60),
        serving,
    )
    .unwrap();
    let id = queue
        .enqueue(JobEnvelope::new("agent.test.slow", json!({"n": 5})))
        .await
        .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..300 {
        if let Ok(Some(state)) = runtime.run_state(id.as_str()).await
            && let Some(node) = state.current_node
        {
            seen.insert(node);
        }
        if seen.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        seen.contains("slow_step#1") && seen.contains("slow_step#2"),
        "{seen:?}"
    );
    queue.cancel(id.as_str()).await.unwrap();
}
