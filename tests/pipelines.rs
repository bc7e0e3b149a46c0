//! Pipelines and ops: execution through the runtime (a record per step, the first
//! failure stopping the run), ops of every executable runtime (native, script,
//! an MCP tool on the project's own server as a child process), and the
//! registry's pipeline rules, each failing and passing.

use std::path::Path;
use std::sync::Arc;

use seed_skills as _;
use serde_json::{Value, json};
use skill_runtime::manifest::{AgentRole, PermissionLevel, TargetKind};
use skill_runtime::op::{McpClient, McpTools};
use skill_runtime::record::RunStatus;
use skill_runtime::rules::{check_pipelines, check_registry};
use skill_runtime::{Caller, InvokeError, JobEnvelope, Registry, Runtime, RuntimeBuilder};
use skill_tests::{cargo, root, run_ok, skill_examples};

fn builder() -> RuntimeBuilder {
    let registry = Arc::new(Registry::from_inventory().expect("valid registry"));
    // The team's skills are linked (their pipelines are in the rules'
    // cases), so their outbox is given; no test here writes to it.
    team_skills::runtime_builder(registry, Path::new(seed_skills::DATA_DIR)).expect("example data")
}

fn runtime() -> Runtime {
    builder().build().expect("runtime starts")
}

#[tokio::test]
async fn a_pipeline_runs_its_steps_as_child_jobs_and_returns_their_records() {
    let rt = runtime();
    let job = JobEnvelope::new("summarize_note", json!({"path": "rust-ownership.md"}));
    let (job_id, trace_id) = (job.job_id.clone(), job.trace_id.clone());
    let result = rt.invoke(job).await.expect("pipeline succeeds");
    assert!(
        result.data["summary"]
            .as_str()
            .unwrap()
            .contains("single owner")
    );

    let steps = &result.pipeline_steps;
    assert_eq!(
        steps.iter().map(|s| &*s.id).collect::<Vec<_>>(),
        ["read", "summarize"]
    );
    assert_eq!(&*steps[0].skill_name, "read_note@1.0.0");
    assert!(steps.iter().all(|s| s.status == RunStatus::Succeeded));
    assert_eq!(
        steps[1].output.as_deref(),
        Some(&*result.data),
        "the last step's output is the pipeline's"
    );
    assert!(steps[0].output.as_ref().unwrap()["content"].is_string());

    // Each step is a job of its own, child of the pipeline, in the same trace.
    let records = rt.memory_records().unwrap().records();
    assert_eq!(records.len(), 3);
    let pipeline = records.iter().find(|r| r.job_id == job_id).unwrap();
    assert_eq!(pipeline.pipeline_steps.len(), 2);
    assert!(
        pipeline.pipeline_steps.iter().all(|s| s.output.is_none()),
        "step outputs live in the steps' own records, where their redaction applies"
    );
    for step in steps {
        let child = records.iter().find(|r| r.job_id == step.job_id).unwrap();
        assert_eq!(child.parent_job_id.as_deref(), Some(&*job_id));
        assert_eq!(child.trace_id, trace_id);
        assert_eq!(child.status, RunStatus::Succeeded);
    }
}

#[tokio::test]
async fn the_first_failing_step_stops_the_pipeline_and_is_named() {
    let rt = runtime();
    let e = rt
        .invoke(JobEnvelope::new(
            "handle_normalization",
            json!({"handle": "@@@"}),
        ))
        .await
        .unwrap_err();
    let InvokeError::Failed { code, message, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(code, "pipeline_failed");
    assert!(
        message.contains("step `normalize`") && message.contains("invalid_handle"),
        "{message}"
    );
    let records = rt.memory_records().unwrap().records();
    let pipeline = records
        .iter()
        .find(|r| r.skill == "handle_normalization")
        .unwrap();
    let statuses: Vec<_> = pipeline
        .pipeline_steps
        .iter()
        .map(|s| (&*s.id, s.status))
        .collect();
    assert_eq!(
        statuses,
        [
            ("checkpoint", RunStatus::Succeeded),
            ("normalize", RunStatus::Failed)
        ]
    );
    // Each step names what ran as name@version, failed or not.
    let names: Vec<&str> = pipeline
        .pipeline_steps
        .iter()
        .map(|s| &*s.skill_name)
        .collect();
    assert!(
        names.iter().all(|n| n.contains('@')),
        "step names: {names:?}"
    );
    assert!(names[1].starts_with("normalize_handle@"), "{names:?}");
    assert_eq!(records.len(), 3, "pipeline + two steps, failures included");
}

#[tokio::test]
async fn policies_apply_to_each_step() {
    // The pipeline admits any role; its `read` step (read_note) admits
    // executors and analyzers only.
    let rt = runtime();
    let caller = Caller::agent(AgentRole::Validator, PermissionLevel::Execute);
    let e = rt
        .invoke(
            JobEnvelope::new("summarize_note", json!({"path": "rust-ownership.md"}))
                .with_caller(caller),
        )
        .await
        .unwrap_err();
    let message = e.to_string();
    assert!(
        message.contains("step `read`") && message.contains("denied"),
        "{message}"
    );
}

#[tokio::test]
async fn a_script_op_runs_the_program_with_json_over_stdio() {
    let rt = runtime();
    let mut job = JobEnvelope::new("word_count", json!({"text": "one two three\nfour"}));
    job.kind = TargetKind::Op;
    let result = rt.invoke(job).await.expect("script op succeeds");
    assert_eq!(*result.data, json!({"words": 4, "lines": 2}));

    // An op is not a skill: the same name as a skill job does not resolve.
    let e = rt
        .invoke(JobEnvelope::new("word_count", json!({"text": "x"})))
        .await
        .unwrap_err();
    assert!(matches!(e, InvokeError::UnknownSkill { .. }), "{e:?}");
}

#[test]
fn a_script_op_runs_under_its_root_never_the_current_directory() {
    // A directory holding a script of the same name, which must not run.
    let dir = skill_tests::temp_dir("script-root");
    let decoy = dir.join("examples/seed-skills/ops");
    std::fs::create_dir_all(&decoy).unwrap();
    for name in ["word_count.py", "../ops/word_count.py"] {
        std::fs::write(
            decoy.join(name),
            "print('{\"words\": 666, \"lines\": 666}')\n",
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("word_count.py"),
        "print('{\"words\": 666, \"lines\": 666}')\n",
    )
    .unwrap();
    let out = run_ok(
        skill_examples(&[
            "invoke",
            "--op",
            "word_count",
            r#"{"text": "one two"}"#,
            "--data",
        ])
        .arg(root().join(seed_skills::DATA_DIR))
        .current_dir(&dir),
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["data"], json!({"words": 2, "lines": 1}));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_script_op_without_a_root_refuses_to_run() {
    use seed_skills::stores::*;
    let data = root().join(seed_skills::DATA_DIR);
    // The example's resources, all but the script root.
    let resources = skill_runtime::Resources::new()
        .with(SeoDb::load(&data.join("seo")).unwrap())
        .with(Vault::new(data.join("vault")))
        .with(RoutesDir::new(data.join("remix/app/routes")))
        .with(RagCorpus::new(data.join("rag")))
        .with(VectorStore::default())
        .with(VersionCache::default())
        .with(team_skills::Outbox::new(data.join("outbox")));
    let registry = Arc::new(Registry::from_inventory().expect("valid registry"));
    let rt = Runtime::builder(registry)
        .resources(resources)
        .rollback(
            "rollback_to_previous_version",
            |_: skill_runtime::policy::RollbackRequest<'_>| Ok(()),
        )
        .rollback(
            "revert_route_changes",
            |_: skill_runtime::policy::RollbackRequest<'_>| Ok(()),
        )
        .rollback(
            "remove_audit_entry",
            |_: skill_runtime::policy::RollbackRequest<'_>| Ok(()),
        )
        .build()
        .expect("runtime starts");
    let mut job = JobEnvelope::new("word_count", json!({"text": "one"}));
    job.kind = TargetKind::Op;
    let e = rt.invoke(job).await.unwrap_err();
    assert!(
        e.to_string().contains("no script root is configured"),
        "{e}"
    );
}

#[tokio::test]
async fn a_native_op_is_called_by_a_skill() {
    // search_notes is tagged `requires_review`: the operator approves.
    let rt = builder()
        .approver(skill_runtime::policy::ApproveAll {
            by: "the test's operator".into(),
        })
        .build()
        .unwrap();
    let result = rt
        .invoke(JobEnvelope::new(
            "search_notes",
            json!({"query": "ownership"}),
        ))
        .await
        .unwrap();
    assert_eq!(result.data["results"][0], "rust-ownership.md");
    let registry = rt.registry().to_json();
    let search = registry["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "search_notes")
        .unwrap();
    assert_eq!(
        search["call_targets"],
        json!([{"kind": "op", "name": "obsidian_search", "version": "1.0.0"}])
    );
}

#[tokio::test]
async fn an_mcp_op_needs_a_configured_client_and_calls_the_real_server() {
    let input = json!({"text": "Rust has owners. Owners drop values. Borrowing lends them."});
    let e = runtime()
        .invoke(JobEnvelope::new("mcp_tool_workflow", input.clone()))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no MCP client is configured"), "{e}");

    // The project's own MCP server, as a child process, is the client's server.
    run_ok(cargo().args(["build", "-q", "-p", "skill-examples"]));
    let mut server = tokio::process::Command::new(root().join("target/debug/skill-examples"));
    server
        .args(["mcp", "--role", "executor"])
        .current_dir(root());
    let client = McpClient::spawn(server).await.expect("MCP handshake");
    let rt = builder().resource(McpTools::new(client)).build().unwrap();
    let remote = rt
        .invoke(JobEnvelope::new("mcp_tool_workflow", input.clone()))
        .await
        .expect("the MCP tool answers");
    let local = rt
        .invoke(JobEnvelope::new("summarize_text", input))
        .await
        .unwrap();
    assert_eq!(remote.data["summary"], local.data["summary"]);
    assert_eq!(&*remote.pipeline_steps[0].skill_name, "mcp_summarize@1.0.0");
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CountInput {
    pub text: String,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Count {
    pub words: u64,
    pub lines: u64,
}

/// Call the word counting service (an HTTP op's request is its authority).
#[skill_runtime::capability(id = "words.count", effect = "api", operation = "execute")]
pub struct WordCountApi;

/// Count words over HTTP (the endpoint is tests/support/word_count_server.py).
#[skill_runtime::op(
    version = "1.0.0",
    runtime = "http",
    url = "http://127.0.0.1:47613/word_count",
    capabilities(WordCountApi),
    retries = 0
)]
pub async fn http_word_count(input: CountInput) -> Count;

/// The same server, at a path it does not serve.
#[skill_runtime::op(
    version = "1.0.0",
    runtime = "http",
    url = "http://127.0.0.1:47613/missing",
    capabilities(WordCountApi),
    retries = 0
)]
pub async fn http_missing(input: CountInput) -> Count;

#[tokio::test]
async fn an_http_op_posts_json_and_reads_the_answer() {
    use std::io::{BufRead, BufReader};
    let mut server = std::process::Command::new("python3")
        .arg(root().join("tests/support/word_count_server.py"))
        .arg("47613")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs the test endpoint");
    // Stopped however the test ends: a server left behind holds the test
    // run's output open.
    struct Stop(std::process::Child);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut ready = String::new();
    let out = server.stdout.take().unwrap();
    let server = Stop(server);
    BufReader::new(out).read_line(&mut ready).unwrap();
    assert_eq!(ready.trim(), "ready");

    let rt = runtime();
    let op = |name: &str| {
        let mut job = JobEnvelope::new(name.to_owned(), json!({"text": "one two\nthree"}));
        job.kind = TargetKind::Op;
        job
    };
    let counted = rt.invoke(op("http_word_count")).await;
    let missing = rt.invoke(op("http_missing")).await;
    drop(server);
    assert_eq!(
        *counted.expect("the endpoint answers").data,
        json!({"words": 3, "lines": 2})
    );
    let e = missing.unwrap_err().to_string();
    assert!(
        e.contains("answered 404 Not Found: no such endpoint"),
        "{e}"
    );
}

/// The exported registry and op registry, as a tool that never compiled Rust
/// would read them.
fn documents() -> (Value, Value) {
    let r = Registry::from_inventory().unwrap();
    (r.to_json(), r.ops_json())
}

fn skills_mut(doc: &mut Value) -> &mut Vec<Value> {
    doc["skills"].as_array_mut().unwrap()
}

fn pipeline_mut<'a>(doc: &'a mut Value, name: &str) -> &'a mut Value {
    skills_mut(doc)
        .iter_mut()
        .find(|s| s["name"] == name)
        .unwrap()
}

fn findings(doc: &Value, ops: &Value) -> Vec<String> {
    check_pipelines(
        doc["skills"].as_array().unwrap(),
        ops["ops"].as_array().unwrap(),
    )
    .0
    .iter()
    .map(ToString::to_string)
    .collect()
}

#[test]
fn the_exported_registry_passes_every_rule_and_closures_are_computed() {
    let (doc, ops) = documents();
    assert_eq!(findings(&doc, &ops), Vec::<String>::new());
    let r = Registry::from_inventory().unwrap();
    let caps = r.capabilities_json();
    assert_eq!(
        check_registry(&doc, Some(&ops), Some(&caps)),
        Vec::new(),
        "cross rules"
    );
    let summarize = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "summarize_note")
        .unwrap();
    assert_eq!(summarize["kind"], "pipeline");
    assert_eq!(summarize["capabilities"], json!(["obsidian.read"]));
    assert!(summarize.get("entrypoint").is_none());
}

#[test]
fn each_pipeline_rule_fails_on_its_own_mistake() {
    type Mutate = fn(&mut Value);
    let cases: &[(&str, Mutate, &str)] = &[
        (
            "unknown target",
            |d| {
                pipeline_mut(d, "summarize_note")["steps"][0]["target"]["name"] =
                    json!("read_nothing")
            },
            "step `read`: skill `read_nothing@1.0.0` is not in the registry",
        ),
        (
            "unknown version",
            |d| pipeline_mut(d, "summarize_note")["steps"][0]["target"]["version"] = json!("9.0.0"),
            "(versions: 1.0.0)",
        ),
        (
            "reference to a later step",
            |d| {
                pipeline_mut(d, "summarize_note")["steps"][0]["inputs"]["path"] =
                    json!("$step.summarize.summary")
            },
            "refers to step `summarize`, which runs later",
        ),
        (
            "a step waiting for a step written after it",
            |d| pipeline_mut(d, "summarize_note")["steps"][0]["after"] = json!(["summarize"]),
            "step `read` waits for step `summarize`, which is written after it",
        ),
        (
            "a wait on no step",
            |d| pipeline_mut(d, "summarize_note")["steps"][1]["after"] = json!(["fetch"]),
            "step `summarize`: `after` names no step `fetch`",
        ),
        (
            "a read of a step not waited for",
            |d| pipeline_mut(d, "summarize_note")["steps"][1]["after"] = json!([]),
            "step `summarize`: `$step.read.content` refers to step `read`, which `summarize` does not wait for",
        ),
        (
            "a guard on a field that is not a boolean",
            |d| pipeline_mut(d, "tally_route")["steps"][2]["when"] = json!("$step.start.next"),
            "step `high`: its guard `$step.start.next` is integer but a guard reads a boolean",
        ),
        (
            "both guards on one step",
            |d| pipeline_mut(d, "tally_route")["steps"][2]["unless"] = json!("$step.check.reached"),
            "step `high` has both `when` and `unless`",
        ),
        (
            "two writers of one output that are not the two sides of a guard",
            |d| {
                pipeline_mut(d, "tally_route")["steps"][3]
                    .as_object_mut()
                    .unwrap()
                    .remove("unless");
            },
            "pipeline output `branch_mark` is written by step `high` and by step `low`",
        ),
        (
            "a required output written only when a guard holds",
            |d| {
                let steps = pipeline_mut(d, "tally_route")["steps"]
                    .as_array_mut()
                    .unwrap();
                steps[3]["outputs"] = json!({});
            },
            "required output `branch_mark` may be left unwritten: step `high` runs only when its guard holds",
        ),
        (
            "a guarded step's output read for a required input",
            |d| {
                pipeline_mut(d, "tally_route")["steps"][4]["inputs"]["mark"] =
                    json!("$step.high.next")
            },
            "step `last`: `$step.high.next` may be absent but input `mark` of `wobbly_tally@1.0.0` is required",
        ),
        (
            "an error handler above the flow",
            |d| {
                let steps = pipeline_mut(d, "tally_route")["steps"]
                    .as_array_mut()
                    .unwrap();
                let note = steps.remove(5);
                steps.insert(1, note);
            },
            "step `check` is written below error handler `note`",
        ),
        (
            "an error handler with outputs, and a step reading `$error`",
            |d| {
                let steps = pipeline_mut(d, "tally_route")["steps"]
                    .as_array_mut()
                    .unwrap();
                steps[5]["outputs"] = json!({"noted": "$outputs.tries"});
                steps[1]["inputs"]["value"] = json!("$error.code");
            },
            "error handler `note` runs when the run fails, which has no output",
        ),
        (
            "a step reading `$error`",
            |d| {
                pipeline_mut(d, "tally_route")["steps"][1]["inputs"]["value"] = json!("$error.code")
            },
            "step `check`: `$error.code` is read by error handlers only",
        ),
        (
            "a step waiting for an error handler",
            |d| pipeline_mut(d, "tally_route")["steps"][4]["after"] = json!(["note"]),
            "step `last` waits for step `note`, which is written after it",
        ),
        (
            "retries past the bound",
            |d| pipeline_mut(d, "tally_route")["steps"][4]["retries"] = json!(11),
            "step `last`: `retries` is a whole number, at most 10",
        ),
        (
            "unknown input field of the pipeline",
            |d| {
                pipeline_mut(d, "summarize_note")["steps"][0]["inputs"]["path"] =
                    json!("$inputs.nope")
            },
            "`$inputs.nope` is not a field of the pipeline's input",
        ),
        (
            "field the target does not take",
            |d| {
                pipeline_mut(d, "summarize_note")["steps"][1]["inputs"]["txt"] =
                    json!("$step.read.content")
            },
            "`txt` is not an input field of `summarize_text@1.0.0`",
        ),
        (
            "required input not mapped",
            |d| {
                pipeline_mut(d, "summarize_note")["steps"][1]["inputs"] = json!({});
            },
            "does not map required input `text` of `summarize_text@1.0.0`",
        ),
        (
            "types disagree",
            |d| {
                pipeline_mut(d, "summarize_note")["inputs_schema"]["properties"]["path"] =
                    json!({"type": "integer"})
            },
            "`$inputs.path` is integer but input `path` of `read_note@1.0.0` takes string",
        ),
        (
            "optional source for a required input",
            |d| {
                pipeline_mut(d, "summarize_note")["inputs_schema"]["required"] = json!([]);
            },
            "`$inputs.path` may be absent but input `path` of `read_note@1.0.0` is required",
        ),
        (
            "unknown output field of a step",
            |d| {
                pipeline_mut(d, "summarize_note")["steps"][1]["inputs"]["text"] =
                    json!("$step.read.body")
            },
            "`body` is not an output field of step `read`",
        ),
        (
            "required pipeline output never written",
            |d| pipeline_mut(d, "summarize_note")["steps"][1]["outputs"] = json!({}),
            "required output `summary` is written by no step",
        ),
        (
            "output to a field the pipeline does not have",
            |d| {
                pipeline_mut(d, "summarize_note")["steps"][1]["outputs"]["summary"] =
                    json!("$outputs.abstract")
            },
            "`$outputs.abstract` is not a field of the pipeline's output",
        ),
        (
            "duplicate step id",
            |d| pipeline_mut(d, "summarize_note")["steps"][1]["id"] = json!("read"),
            "step id `read` is used twice",
        ),
        (
            "unknown op",
            |d| pipeline_mut(d, "mcp_tool_workflow")["steps"][0]["target"]["name"] = json!("nope"),
            "op `nope` is not in the registry",
        ),
        (
            "cycle through nested pipelines",
            |d| {
                let p = pipeline_mut(d, "handle_normalization");
                p["steps"][0]["target"] = json!({"kind": "skill", "name": "handle_normalization"});
            },
            "steps form a cycle: handle_normalization@1.0.0 -> handle_normalization@1.0.0",
        ),
    ];
    for (what, mutate, expected) in cases {
        let (mut doc, ops) = documents();
        mutate(&mut doc);
        let found = findings(&doc, &ops);
        assert!(
            found.iter().any(|f| f.contains(expected)),
            "{what}: expected a finding containing {expected:?}, got {found:#?}"
        );
    }
}

#[test]
fn a_pipeline_capability_list_must_equal_its_closure() {
    let (mut doc, ops) = documents();
    pipeline_mut(&mut doc, "summarize_note")["capabilities"] = json!([]);
    let found: Vec<String> = check_registry(&doc, Some(&ops), None)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        found
            .iter()
            .any(|f| f.contains("capabilities are [] but its steps need [obsidian.read]")),
        "{found:#?}"
    );
}

#[tokio::test]
async fn a_pipeline_is_an_mcp_tool_like_any_skill() {
    use skill_runtime::mcp::{McpOptions, McpServer};
    let rt = runtime();
    let server = McpServer::new(
        rt.clone(),
        McpOptions::new().server_info("test", "0").result_ids(true),
    )
    .unwrap();
    let args = json!({"handle": "  @Octo_Cat "});
    let result = server
        .call("handle_normalization", args.as_object().cloned())
        .await
        .expect("the pipeline is served");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        result.structured_content,
        Some(json!({"checkpoint": "  @Octo_Cat ", "handle": "@octo_cat", "platform": null}))
    );
    // Asked for: the result leads to the pipeline's run record.
    let meta = serde_json::to_value(result.meta.expect("ids asked for")).unwrap();
    let job_id = meta[skill_runtime::views::META_KEY]["job_id"]
        .as_str()
        .expect("a job id")
        .to_owned();
    let records = rt.memory_records().unwrap().records();
    assert!(records.iter().any(|r| r.job_id == job_id.as_str()));
}
