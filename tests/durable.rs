//! Durable pipeline runs: the state a run keeps between its steps (the
//! seed's GraphState), a run resumed where it stopped after its worker was
//! killed (`kill -9`, real worker processes on a real Redis and a real
//! PostgreSQL), and a
//! completed step never run again.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skill_runtime::queue::api::Queue;
use skill_runtime::queue::fleet::{Fleet, FleetConfig};
use skill_runtime::record::GraphStatus;
use skill_runtime::record::RunStatus;
use skill_runtime::{JobEnvelope, Registry};
use skill_tests::fleet::{Kind, Store, WorkerProcess, app, data_copy};
use skill_tests::run_ok;

use seed_skills as _;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A runtime of the example skills over `data`, runs kept in memory.
fn local_runtime(data: &std::path::Path) -> skill_runtime::Runtime {
    local_runtime_with(data, |b| b)
}

/// [`local_runtime`], with `configure` applied to its builder.
fn local_runtime_with(
    data: &std::path::Path,
    configure: impl FnOnce(skill_runtime::RuntimeBuilder) -> skill_runtime::RuntimeBuilder,
) -> skill_runtime::Runtime {
    let registry = Arc::new(Registry::from_inventory().unwrap());
    configure(team_skills::runtime_builder(registry, data).unwrap())
        .build()
        .unwrap()
}

/// The marks the tally steps left in `channel`, in order.
fn marks(data: &std::path::Path, channel: &str) -> Vec<u64> {
    lines_with(data, channel, "mark")
        .iter()
        .map(|v| v["mark"].as_u64().unwrap())
        .collect()
}

fn tally(channel: &str, slow_ms: u32) -> JobEnvelope {
    JobEnvelope::new(
        "durable_tally",
        json!({"channel": channel, "first": 1, "slow_ms": slow_ms}),
    )
}

/// A fleet to kill workers in: a store (Redis or PostgreSQL), a copy of the
/// example data, a client, and the arguments its workers start with (short
/// visibility and lock timeouts, so a dead worker's job is taken over in
/// seconds).
struct Rig {
    _store: Store,
    data: std::path::PathBuf,
    url: String,
    rt: tokio::runtime::Runtime,
    b: Fleet,
    args: Vec<String>,
}

impl Rig {
    fn start(kind: Kind, name: &str) -> Rig {
        let store = kind.start(name);
        let data = data_copy(&kind.tag(name));
        let url = store.url();
        let rt = rt();
        let b = rt
            .block_on(Fleet::connect(FleetConfig::new(&url)))
            .expect("the store is up");
        let args = ["--visibility", "2s", "--lock-ttl", "2s", "--data"]
            .map(str::to_owned)
            .into_iter()
            .chain([data.display().to_string()])
            .collect();
        Rig {
            _store: store,
            data,
            url,
            rt,
            b,
            args,
        }
    }

    fn worker(&self) -> WorkerProcess {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        WorkerProcess::start(&self.url, &args)
    }

    /// Enqueue `job`, wait until `channel` holds `n` marks, then start a
    /// second worker and kill `first` (`kill -9`) while it works on the next
    /// node; the second worker and the job's id.
    fn kill_after(
        &self,
        mut first: WorkerProcess,
        job: JobEnvelope,
        channel: &str,
        n: usize,
    ) -> (WorkerProcess, String) {
        let id = self.rt.block_on(self.b.enqueue(job)).unwrap().to_string();
        let started = std::time::Instant::now();
        while marks(&self.data, channel).len() < n {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the first {n} nodes never ran"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let second = self.worker();
        first.kill_hard();
        (second, id)
    }
}

#[test]
fn a_run_keeps_its_state_and_a_completed_step_never_runs_again() {
    let data = data_copy("durable-local");
    let rt = rt();
    let runtime = local_runtime(&data);
    let job = tally("local", 0);
    let run = job.job_id.to_string();
    let result = rt.block_on(runtime.invoke(job.clone())).unwrap();
    assert_eq!(result.data["last"], 5);
    let state = rt
        .block_on(runtime.run_state(&run))
        .unwrap()
        .expect("a state");
    assert_eq!(state.status, GraphStatus::Succeeded);
    assert_eq!(state.visited_nodes, ["n1", "n2", "n3", "n4", "n5"]);
    assert_eq!(state.current_node, None);
    assert_eq!(state.retry_count, 0);
    assert_eq!(state.budget.api_calls, 5);
    assert_eq!(state.budget.tokens_remaining, job.constraints.max_tokens);
    assert_eq!(state.intermediate["n3"]["next"], 4);
    assert_eq!(state.output, Some(json!({"last": 5})));
    assert_eq!(state.nodes.len(), 5);
    assert!(state.errors.is_empty());
    // The seed's field names.
    let text = serde_json::to_value(&state).unwrap();
    for field in [
        "currentNode",
        "visitedNodes",
        "retryCount",
        "ragContext",
        "intermediate",
    ] {
        assert!(text.get(field).is_some(), "{field} in {text}");
    }
    assert!(text["budget"].get("tokensRemaining").is_some());
    assert_eq!(marks(&data, "local"), [1, 2, 3, 4, 5]);

    // The same job again (a redelivery of a run that had finished): no step
    // runs again, and the run answers with the same output.
    let again = rt.block_on(runtime.invoke(job)).unwrap();
    assert_eq!(again.data["last"], 5);
    assert_eq!(marks(&data, "local"), [1, 2, 3, 4, 5], "no step ran twice");
    let state = rt.block_on(runtime.run_state(&run)).unwrap().unwrap();
    assert_eq!(state.retry_count, 1);
}

fn a_run_whose_worker_is_killed_resumes_at_the_step_it_was_running(kind: Kind) {
    let fleet = Rig::start(kind, "durable");
    let (data, url) = (fleet.data.clone(), fleet.url.clone());
    let (rt, b) = (&fleet.rt, &fleet.b);
    // Steps 1 to 3 done, step 4 working (5 s): kill its worker.
    let (second, id) = fleet.kill_after(fleet.worker(), tally("fleet", 5_000), "fleet", 3);
    assert_eq!(marks(&data, "fleet"), [1, 2, 3], "killed during step 4");
    let o = rt
        .block_on(b.outcome(&id, Duration::from_secs(120)))
        .unwrap()
        .expect("the run completes after its worker died");
    assert_eq!(o.status, RunStatus::Succeeded, "{o:?}");
    assert_eq!(o.worker, second.name, "the surviving worker finished it");
    assert_eq!(
        marks(&data, "fleet"),
        [1, 2, 3, 4, 5],
        "steps 1-3 ran once each; step 4 ran again from its start"
    );

    // `run show` prints the state; `runs` lists the run.
    let out = run_ok(std::process::Command::new(app()).args(["run", "show", &id, "--redis", &url]));
    let state: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(state["visitedNodes"], json!(["n1", "n2", "n3", "n4", "n5"]));
    assert_eq!(state["status"], "succeeded");
    assert_eq!(
        state["retryCount"], 1,
        "taken up once, by the second worker"
    );
    assert_eq!(state["job"]["jobId"], id);
    let nodes: Vec<&str> = state["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    assert_eq!(
        nodes,
        ["n1", "n2", "n3", "n4", "n5"],
        "each step completed once"
    );
    let out = run_ok(std::process::Command::new(app()).args(["runs", "--redis", &url]));
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(
        listed.contains(&format!(
            "{id} durable_tally@1.0.0 succeeded visited [n1, n2, n3, n4, n5] (taken up again once)"
        )),
        "{listed}"
    );
    let unknown = std::process::Command::new(app())
        .args([
            "run",
            "show",
            "00000000-0000-4000-8000-000000000000",
            "--redis",
            &url,
        ])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));

    // On the fleet, an escalation is a job of the queue: `agent` enqueues
    // the target, which the surviving worker (serving agents) runs.
    let out = run_ok(std::process::Command::new(app()).args([
        "agent",
        "agent.seo.vlevel",
        r#"{"urls": ["https://shop.example.com/nothing/here/at/all/1"]}"#,
        "--redis",
        &url,
        "--data",
        &data.display().to_string(),
    ]));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["escalation"]["target_agent"], "agent.seo.architect");
    assert!(result.get("escalated").is_none(), "not run in process");
    let job = result["escalation_job"]
        .as_str()
        .expect("enqueued")
        .to_owned();
    let o = rt
        .block_on(b.outcome(&job, Duration::from_secs(60)))
        .unwrap()
        .expect("a worker ran the hand-over");
    assert_eq!(o.status, RunStatus::Succeeded, "{o:?}");
    assert_eq!(o.worker, second.name);
    let r = o.result.expect("a result");
    assert_eq!(&*r.skill, "agent.seo.architect@1.0.0");
    assert!(
        r.notes.iter().any(|n| n.message.starts_with(&format!(
            "escalated from `agent.seo.vlevel` (job {})",
            result["job_id"].as_str().unwrap()
        ))),
        "{:?}",
        r.notes
    );
    // The worker kept the target's R3 files on Redis: the result names
    // their keys, and `run artifact KEY` prints each.
    assert_eq!(r.artifacts.len(), 3, "{:?}", r.artifacts);
    let graph = r
        .artifacts
        .iter()
        .find(|a| a.name.ends_with(".graph.json"))
        .expect("graph.json");
    let key = graph.uri.as_deref().unwrap();
    assert!(key.contains(":artifact:agent.seo.architect."), "{key}");
    let out =
        run_ok(std::process::Command::new(app()).args(["run", "artifact", key, "--redis", &url]));
    let graph: Value = serde_json::from_slice(&out.stdout).expect("graph.json is JSON");
    assert!(graph.is_object(), "{graph}");
    // The run that escalated kept its own, on Redis too (no --artifacts):
    // artifacts as the worker's result has them, the same shape.
    let own = result["artifacts"].as_array().unwrap();
    assert_eq!(own.len(), 3, "{own:?}");
    assert!(
        own.iter().all(|a| a["uri"]
            .as_str()
            .unwrap()
            .contains(":artifact:agent.seo.vlevel.")
            && a["name"].as_str().unwrap().starts_with("agent.seo.vlevel.")
            && a["kind"].is_string()),
        "{own:?}"
    );
}

#[test]
fn an_agent_run_leaves_its_r3_files_and_runs_its_escalation() {
    use skill_runtime::Caller;
    use skill_runtime::agents::{AgentRegistry, AgentRunner};

    let data = data_copy("agent-r3");
    let dir = skill_tests::temp_dir("agent-r3-artifacts");
    let rt = rt();
    let runtime = local_runtime(&data);
    let agents = Arc::new(AgentRegistry::from_inventory().unwrap());
    let runner = AgentRunner::new(runtime.clone(), agents).with_artifacts(&dir);
    // A page the page table does not know: confidence 0, below 0.7.
    let input = json!({"urls": ["https://shop.example.com/nothing/here/at/all/1"]});
    let result = rt
        .block_on(runner.run("agent.seo.vlevel", input, Caller::default(), false))
        .unwrap();
    assert!(result.success, "{result:?}");
    let e = result.escalation.as_ref().expect("an escalation");
    assert_eq!(e.target_agent, "agent.seo.architect");
    let target = result.escalated.as_ref().expect("the target ran");
    assert_eq!(target.agent, "agent.seo.architect@1.0.0");
    assert!(target.success, "{target:?}");

    // The chain is in both records.
    let records = runtime.memory_records().unwrap().records();
    let architect = records
        .iter()
        .find(|r| r.skill == "agent.seo.architect")
        .expect("the target's record");
    assert_eq!(architect.parent_job_id.as_ref(), Some(&result.job_id));
    assert!(
        architect
            .notes
            .iter()
            .any(|n| n.message.contains("escalated from `agent.seo.vlevel`")),
        "{:?}",
        architect.notes
    );
    let vlevel = records
        .iter()
        .find(|r| r.skill == "agent.seo.vlevel")
        .unwrap();
    assert!(
        vlevel
            .notes
            .iter()
            .any(|n| n.message.contains(&target.job_id.to_string())),
        "{:?}",
        vlevel.notes
    );

    // R3: three files, named after the agent, each readable.
    assert_eq!(result.artifacts.len(), 3, "{:?}", result.artifacts);
    let file = |suffix: &str| {
        let a = result
            .artifacts
            .iter()
            .find(|a| a.name.ends_with(suffix))
            .unwrap_or_else(|| panic!("no {suffix} in {:?}", result.artifacts));
        assert!(a.name.starts_with("agent.seo.vlevel."), "{a:?}");
        let kind = if suffix.ends_with(".md") {
            "text/markdown"
        } else {
            "application/json"
        };
        assert_eq!(a.kind, kind, "{a:?}");
        let path = a.uri.as_deref().unwrap();
        assert!(path.ends_with(&a.name), "{a:?}");
        std::fs::read_to_string(path).unwrap()
    };
    let audit = file(".audit.md");
    for section in [
        "# Audit: agent.seo.vlevel 1.0.0",
        "## What ran",
        "## Decisions",
        "## Budget",
    ] {
        assert!(audit.contains(section), "{section} in\n{audit}");
    }
    assert!(
        audit.contains("escalate to `agent.seo.architect`"),
        "{audit}"
    );
    let backlog: Value = serde_json::from_str(&file(".backlog.json")).unwrap();
    assert_eq!(
        backlog["escalations_pending"],
        json!([]),
        "the escalation ran"
    );
    let graph: Value = serde_json::from_str(&file(".graph.json")).unwrap();
    let nodes: Vec<&str> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    assert_eq!(
        nodes,
        [
            "seo_role_audit#1",
            "canonical_check#2",
            "vlevel_calculator#3"
        ]
    );
    assert!(
        graph["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["to"] == "agent.seo.architect" && e["kind"] == "escalation"),
        "{graph}"
    );
    // The target left its own files too.
    assert_eq!(target.artifacts.len(), 3);

    // The run's state, as for a pipeline.
    let state = rt
        .block_on(runtime.run_state(result.job_id.as_str()))
        .unwrap()
        .expect("the agent run's state");
    assert_eq!(state.visited_nodes, nodes);
    assert_eq!(state.budget.api_calls, 3);
    assert!(
        state
            .artifacts
            .iter()
            .any(|a| a.name.ends_with(".graph.json"))
    );
}

#[test]
fn a_run_that_crosses_its_budget_fails_at_the_step_that_crossed_it() {
    let data = data_copy("durable-budget");
    let rt = rt();
    let runtime = local_runtime(&data);
    // 1,500 tokens a step against the job's 4,000: the third step crosses.
    let job = JobEnvelope::new(
        "durable_tally",
        json!({"channel": "budget", "first": 1, "tokens": 1500}),
    );
    assert_eq!(job.constraints.max_tokens, 4000);
    let run = job.job_id.to_string();
    let e = rt.block_on(runtime.invoke(job)).unwrap_err();
    assert!(e.to_string().contains("step `n3`"), "{e}");
    assert!(e.to_string().contains("budget_exceeded"), "{e}");
    let state = rt.block_on(runtime.run_state(&run)).unwrap().unwrap();
    assert_eq!(state.status, GraphStatus::Failed);
    assert_eq!(state.visited_nodes, ["n1", "n2"]);
    assert_eq!(state.current_node.as_deref(), Some("n3"));
    assert_eq!(state.budget.tokens_used, 3000);
    assert_eq!(state.budget.tokens_remaining, 1000);
    assert_eq!(state.errors.len(), 1);
    assert_eq!(state.errors[0].node, "n3");
    assert!(!state.errors[0].recoverable);
    assert_eq!(
        marks(&data, "budget"),
        [1, 2],
        "the crossing step left nothing"
    );
}

#[test]
fn a_state_saved_by_another_version_of_the_pipeline_is_not_resumed() {
    use skill_runtime::policy::{MemoryRuns, RunStore};

    let data = data_copy("durable-version");
    let rt = rt();
    let runs = Arc::new(MemoryRuns::default());
    let runtime = local_runtime_with(&data, |b| b.run_store(runs.clone()));
    let job = tally("version", 0);
    let run = job.job_id.to_string();
    // A first run, then its state as an older version would have left it
    // (steps 1-3 done).
    rt.block_on(runtime.invoke(job.clone())).unwrap();
    let mut old = rt.block_on(runs.load(&run)).unwrap().unwrap();
    old.job.version = Some("0.9.0".into());
    old.visited_nodes.truncate(3);
    old.status = GraphStatus::Running;
    rt.block_on(runs.save(&old)).unwrap();
    rt.block_on(runtime.invoke(job)).unwrap();
    let state = rt.block_on(runs.load(&run)).unwrap().unwrap();
    assert_eq!(state.job.reference(), "durable_tally@1.0.0");
    // The run's job is its whole envelope, as seed 002's GraphState keeps
    // it: its payload, constraints and caller with it.
    let whole = serde_json::to_value(&state.job).unwrap();
    for field in ["jobId", "traceId", "payload", "constraints", "context"] {
        assert!(whole.get(field).is_some(), "{field}: {whole}");
    }
    assert_eq!(state.retry_count, 0, "a new run, not a resumed one");
    assert_eq!(state.visited_nodes, ["n1", "n2", "n3", "n4", "n5"]);
}

#[test]
fn steps_that_wait_for_the_same_step_run_at_the_same_time() {
    let data = data_copy("durable-fanout");
    let rt = rt();
    let runtime = local_runtime(&data);
    let job = JobEnvelope::new(
        "tally_fanout",
        json!({"channel": "fanout", "first": 1, "work_ms": 300}),
    );
    let run = job.job_id.to_string();
    let result = rt.block_on(runtime.invoke(job)).unwrap();
    assert_eq!(result.data["last"], 3, "join read right's next");
    let mut marks = marks(&data, "fanout");
    marks.sort();
    assert_eq!(marks, [1, 2, 2, 3]);
    let state = rt.block_on(runtime.run_state(&run)).unwrap().unwrap();
    let node = |id: &str| state.nodes.iter().find(|n| n.node == id).unwrap();
    let (left, right) = (node("left"), node("right"));
    // RFC 3339 text of one format compares as time.
    assert!(
        left.started_at < right.completed_at && right.started_at < left.completed_at,
        "left {left:?} and right {right:?} overlap"
    );
    assert!(
        node("join").started_at >= left.completed_at
            && node("join").started_at >= right.completed_at
    );
    assert_eq!(
        state.visited_nodes.first().map(String::as_str),
        Some("start")
    );
    assert_eq!(state.visited_nodes.last().map(String::as_str), Some("join"));

    // The graph is in the export, as an addition to the straight line.
    let registry = runtime.registry().to_json();
    let fanout = registry["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "tally_fanout")
        .unwrap();
    let after: Vec<Value> = fanout["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.get("after").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(
        after,
        [
            Value::Null,
            json!(["start"]),
            json!(["start"]),
            json!(["left", "right"])
        ]
    );
}

/// The lines of `channel` that have `key`.
fn lines_with(data: &std::path::Path, channel: &str, key: &str) -> Vec<Value> {
    std::fs::read_to_string(data.join(format!("outbox/{channel}.jsonl")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get(key).is_some())
        .collect()
}

fn route(channel: &str, at_least: u32, fail_first: u32) -> JobEnvelope {
    JobEnvelope::new(
        "tally_route",
        json!({"channel": channel, "first": 1, "at_least": at_least, "fail_first": fail_first}),
    )
}

#[test]
fn a_flow_branches_on_a_boolean_and_a_step_retries_on_its_own_terms() {
    use skill_runtime::record::RunStatus;
    let data = data_copy("durable-route");
    let rt = rt();
    let runtime = local_runtime(&data);

    // start leaves 1, its next (2) reaches 2: `high` runs, `low` is skipped;
    // `last` fails twice and succeeds on its third try.
    let job = route("high", 2, 2);
    let run = job.job_id.to_string();
    let result = rt.block_on(runtime.invoke(job)).unwrap();
    assert_eq!(result.data["branch_mark"], 2);
    assert_eq!(result.data["tries"], 3);
    let steps: Vec<(&str, RunStatus)> = result
        .pipeline_steps
        .iter()
        .map(|s| (&*s.id, s.status))
        .collect();
    assert!(steps.contains(&("low", RunStatus::Skipped)), "{steps:?}");
    assert!(
        !steps.iter().any(|s| s.0 == "note"),
        "no failure, no handler"
    );
    let last: Vec<RunStatus> = steps
        .iter()
        .filter(|s| s.0 == "last")
        .map(|s| s.1)
        .collect();
    assert_eq!(
        last,
        [RunStatus::Failed, RunStatus::Failed, RunStatus::Succeeded]
    );
    assert_eq!(
        marks(&data, "high"),
        [1, 2],
        "start and high, low never ran"
    );
    assert_eq!(lines_with(&data, "high", "try").len(), 3);
    let state = rt.block_on(runtime.run_state(&run)).unwrap().unwrap();
    assert_eq!(state.visited_nodes, ["start", "check", "high", "last"]);
    assert_eq!(state.retry_count, 2);
    assert_eq!(state.errors.len(), 2);
    assert!(
        state
            .errors
            .iter()
            .all(|e| e.node == "last" && e.recoverable)
    );
    let low = state.nodes.iter().find(|n| n.node == "low").unwrap();
    assert_eq!(low.status, GraphStatus::Skipped);

    // The next mark (2) does not reach 5: `low` runs, with the first mark.
    let result = rt.block_on(runtime.invoke(route("low", 5, 0))).unwrap();
    assert_eq!(result.data["branch_mark"], 1);
    assert_eq!(marks(&data, "low"), [1, 1]);
}

#[test]
fn a_step_that_fails_for_good_runs_its_error_handler_then_the_run_fails() {
    use skill_runtime::record::RunStatus;
    let data = data_copy("durable-handler");
    let rt = rt();
    let runtime = local_runtime(&data);
    let job = route("broken", 2, 9);
    let run = job.job_id.to_string();
    let e = rt.block_on(runtime.invoke(job)).unwrap_err();
    let message = e.to_string();
    assert_eq!(e.code(), "pipeline_failed");
    assert!(
        message.contains("step `last`") && message.contains("error handler `note` ran"),
        "{message}"
    );
    // Three tries (the step's own and its two retries), then the handler,
    // which read the failure as `$error`.
    assert_eq!(lines_with(&data, "broken", "try").len(), 3);
    let notes = lines_with(&data, "broken", "failed");
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["failed"], "last");
    assert_eq!(notes[0]["code"], "outbox_unavailable");
    assert!(notes[0]["message"].as_str().unwrap().contains("try 3"));
    let state = rt.block_on(runtime.run_state(&run)).unwrap().unwrap();
    assert_eq!(state.status, GraphStatus::Failed);
    assert_eq!(state.current_node.as_deref(), Some("last"));
    assert_eq!(state.visited_nodes.last().map(String::as_str), Some("note"));
    let records = runtime.memory_records().unwrap().records();
    let pipeline = records
        .iter()
        .find(|r| r.job_id.to_string() == run)
        .unwrap();
    let note = pipeline
        .pipeline_steps
        .iter()
        .find(|s| s.id == "note")
        .unwrap();
    assert_eq!(note.status, RunStatus::Succeeded);
}

fn an_agent_run_whose_worker_is_killed_resumes_after_the_calls_it_completed(kind: Kind) {
    let fleet = Rig::start(kind, "durable-agent");
    let (data, url) = (fleet.data.clone(), fleet.url.clone());
    let (rt, b) = (&fleet.rt, &fleet.b);
    let job = JobEnvelope::new(
        "agent.team.tally",
        json!({"channel": "agentrun", "count": 4, "slow": 3, "slow_ms": 5000}),
    );
    // Calls 1 and 2 done, call 3 working (5 s): kill its worker.
    let (second, id) = fleet.kill_after(fleet.worker(), job, "agentrun", 2);
    assert_eq!(marks(&data, "agentrun"), [1, 2], "killed during call 3");
    let o = rt
        .block_on(b.outcome(&id, Duration::from_secs(120)))
        .unwrap()
        .expect("the run completes after its worker died");
    assert_eq!(o.status, RunStatus::Succeeded, "{o:?}");
    assert_eq!(o.worker, second.name);
    assert_eq!(o.result.unwrap().data["last"], 4);
    assert_eq!(
        marks(&data, "agentrun"),
        [1, 2, 3, 4],
        "calls 1-2 ran once each; call 3 ran again from its start"
    );
    let out = run_ok(std::process::Command::new(app()).args(["run", "show", &id, "--redis", &url]));
    let state: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        state["visitedNodes"],
        json!(["tally#1", "tally#2", "tally#3", "tally#4"])
    );
    assert_eq!(
        state["retryCount"], 1,
        "taken up once, by the second worker"
    );
    assert_eq!(state["status"], "succeeded");
}

// The bodies above that take a `Kind`, on each store.
skill_tests::on_stores!(
    everywhere:
    a_run_whose_worker_is_killed_resumes_at_the_step_it_was_running,
    an_agent_run_whose_worker_is_killed_resumes_after_the_calls_it_completed;
    one_server:
);
