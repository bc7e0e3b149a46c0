//! The seeds' own reproductions, each as the audit ran it: what the skill
//! model, the agent model, the Brain OS registry and the job envelope say,
//! observed through the same doors a user takes (the command line, MCP).

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::{Value, json};
use skill_runtime::Caller;
use skill_runtime::manifest::{AgentRole, PermissionLevel};
use skill_runtime::mcp::{McpOptions, McpServer};
use skill_runtime::{JobEnvelope, Registry, Runtime, envelope::JobConstraints, policy::ApproveAll};
use skill_tests::fleet::{app, data_copy};
use skill_tests::root;

fn runtime(data: &Path) -> Runtime {
    let registry = Arc::new(Registry::from_inventory().expect("valid registry"));
    seed_skills::runtime_builder(registry, data)
        .expect("example data")
        .approver(ApproveAll {
            by: "the test".into(),
        })
        .build()
        .expect("runtime starts")
}

fn run(args: &[&str]) -> Output {
    Command::new(app())
        .args(args)
        .output()
        .expect("the app runs")
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn structured(r: &rmcp::model::CallToolResult) -> Value {
    r.structured_content.clone().unwrap_or(Value::Null)
}

fn args(v: Value) -> Option<serde_json::Map<String, Value>> {
    v.as_object().cloned()
}

/// Seed 000: vlevel_calculator is reusable by an analyzer at `read`, which
/// lets it see the skill, not run it; `execute` runs it.
#[test]
fn a_role_granted_read_sees_a_skill_and_does_not_run_it() {
    let input = r#"{"page_data":{"url":"https://a.com/x","gamme":"g"}}"#;
    let out = run(&[
        "invoke",
        "vlevel_calculator",
        input,
        "--role",
        "analyzer",
        "--permission",
        "read",
    ]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("granted `read`"), "{said}");
    let out = run(&[
        "invoke",
        "vlevel_calculator",
        input,
        "--role",
        "executor",
        "--permission",
        "execute",
    ]);
    assert!(out.status.success());
}

/// Over MCP: a reindex an error rule rejects leaves no cache behind, and a
/// call without a key is never answered with an earlier call's result.
#[tokio::test]
async fn over_mcp_a_rejected_reindex_is_undone_and_no_call_replays_another() {
    let data = data_copy("fidelity-mcp");
    let server = McpServer::new(
        runtime(&data),
        McpOptions::new()
            .grants(["rag:ingest", "rag:admin", "database:read"])
            .caller(Caller::agent(
                AgentRole::Orchestrator,
                PermissionLevel::Admin,
            )),
    )
    .unwrap();
    let call = |tool: &'static str, v: Value| {
        let server = &server;
        async move { server.call(tool, args(v)).await.unwrap() }
    };
    let purge = || {
        call(
            "ai_cos_rag_cache_purge",
            json!({"namespace": "knowledge:faq"}),
        )
    };
    let reindex = |ids: Value| {
        call(
            "ai_cos_rag_reindex",
            json!({"namespace": "knowledge:faq", "document_ids": ids}),
        )
    };
    // Nothing cached yet.
    let first = purge().await;
    assert_eq!(structured(&first)["purged"], false);
    // 1 of 2 indexed: the min_documents rule fails, and its write is undone.
    let rejected = reindex(json!(["faq-001", "faq-001"])).await;
    assert_eq!(rejected.is_error, Some(true));
    let text = serde_json::to_string(&rejected.content).unwrap();
    assert!(
        text.contains("validation_rule_failed") || text.contains("min_documents"),
        "{text}"
    );
    assert!(text.contains("rollback_to_previous_version"), "{text}");
    let after = purge().await;
    assert_eq!(
        structured(&after)["purged"],
        false,
        "the rejected reindex left no cache behind"
    );
    // purge, reindex, purge: the second purge runs, and finds what the
    // reindex wrote; nothing is replayed.
    let ok = reindex(json!(["faq-001", "faq-002"])).await;
    assert_ne!(ok.is_error, Some(true), "{ok:?}");
    let again = purge().await;
    assert_eq!(structured(&again)["purged"], true);
    let meta = serde_json::to_value(&again.meta).unwrap();
    assert_ne!(
        meta[skill_runtime::views::META_KEY]["replayed"],
        true,
        "{meta}"
    );
}

/// Seed 002's agent: a refused input says what to do (not `complete`) and
/// exits as `invoke` does for bad input.
#[test]
fn a_failed_agent_run_never_says_complete() {
    let out = run(&["agent", "agent.seo.vlevel", r#"{"urls":[]}"#]);
    assert_eq!(out.status.code(), Some(2));
    let result = json_of(&out);
    assert_eq!(result["success"], false);
    assert_eq!(result["error"]["code"], "INVALID_URL_COUNT");
    assert_ne!(result["next_action"], "complete");
}

/// The seed's budgets hold: a reindex over its documents or tokens fails
/// `budget_exceeded` and publishes nothing.
#[tokio::test]
async fn a_reindex_over_its_budget_fails_and_publishes_nothing() {
    let data = data_copy("fidelity-budget");
    let rt = runtime(&data);
    for constraints in [
        JobConstraints {
            max_docs: 0,
            ..JobConstraints::default()
        },
        JobConstraints {
            max_tokens: 0,
            ..JobConstraints::default()
        },
    ] {
        let job = JobEnvelope::new("rag_reindex", json!({"namespace": "knowledge:faq"}))
            .with_constraints(constraints);
        let e = rt.invoke(job).await.unwrap_err();
        assert_eq!(e.code(), "budget_exceeded", "{e}");
    }
    let purge = rt
        .invoke(JobEnvelope::new(
            "rag_cache_purge",
            json!({"namespace": "knowledge:faq"}),
        ))
        .await
        .unwrap();
    assert_eq!(purge.data["purged"], false, "nothing was published");
    // Within budget: documents, tokens and items reported, the version an artifact.
    let ok = rt
        .invoke(JobEnvelope::new(
            "rag_reindex",
            json!({"namespace": "knowledge:faq"}),
        ))
        .await
        .unwrap();
    assert_eq!(ok.metrics.items_processed, 2);
    assert_eq!(ok.metrics.docs_retrieved, Some(2));
    assert!(ok.metrics.tokens_used.unwrap() > 0);
    assert!(
        ok.artifacts
            .iter()
            .any(|a| a.uri.as_deref() == Some("weaviate://knowledge:faq@1")),
        "{:?}",
        ok.artifacts
    );
}

/// The seed-audit envelope audits 3 URLs: 3 items, and the audit log entry
/// it wrote as an artifact.
#[tokio::test]
async fn the_seed_audit_envelope_reports_its_items_and_its_log_entry() {
    let data = data_copy("fidelity-audit");
    let rt = runtime(&data);
    let text = std::fs::read_to_string(root().join("examples/jobs/seo-audit.json")).unwrap();
    let job: JobEnvelope = serde_json::from_str(&text).unwrap();
    let result = rt.invoke(job).await.unwrap();
    assert_eq!(result.metrics.items_processed, 3);
    assert_eq!(result.artifacts.len(), 1, "{:?}", result.artifacts);
    assert!(
        result.artifacts[0]
            .uri
            .as_deref()
            .is_some_and(|u| u.starts_with("db://__seo_audit_log/")),
        "{:?}",
        result.artifacts
    );
}

/// An envelope the seed's schema refuses is refused where it enters.
#[test]
fn enqueue_refuses_an_envelope_the_seeds_schema_refuses() {
    let dir = skill_tests::temp_dir("fidelity-envelope");
    for (why, doc) in [
        (
            "not a UUID",
            json!({"jobId": "job-1", "skill": "echo", "payload": {"message": "x"}, "context": {"source": "manual"}}),
        ),
        (
            "spaceship",
            json!({"skill": "echo", "payload": {"message": "x"}, "scope": {"entityType": "spaceship"}, "context": {"source": "manual"}}),
        ),
        (
            "no context",
            json!({"skill": "echo", "payload": {"message": "x"}}),
        ),
    ] {
        let file = dir.join("job.json");
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = Command::new(app())
            .args(["enqueue", "--redis", "redis://127.0.0.1:1/0", "--envelope"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{why}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("is not a job envelope"), "{why}: {said}");
    }
}

/// The README's test command needs redis-server: a newcomer is told before
/// the command.
#[test]
fn the_readme_names_what_its_test_command_needs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let before = &readme[..readme.find("cargo test --workspace").unwrap()];
    for tool in ["redis-server", "Python 3", "Node.js", "Chromium"] {
        assert!(before.contains(tool), "{tool}");
    }
}

/// Seed 001: `policy_tags: ["requires_review"]` (search_notes) is evaluated:
/// the run waits for a person like `requires_hitl`, refused without one,
/// run once the operator approves; the record names who did.
#[test]
fn a_skill_tagged_requires_review_waits_for_a_person() {
    let query = r#"{"query": "ownership"}"#;
    let out = run(&["invoke", "search_notes", query]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("needs human approval (requires_review)"),
        "{said}"
    );
    let out = run(&["invoke", "search_notes", query, "--approve"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = json_of(&out);
    assert_eq!(result["data"]["results"][0], "rust-ownership.md");
    // The result says who approved, as the record does.
    assert_eq!(result["approval"]["decision"], "approved", "{result}");
    assert!(result["approval"]["by"].is_string(), "{result}");
}

/// A validation rule of severity error rejects seo_role_audit's output (a
/// router page with expert content): the audit log entry the job wrote is
/// taken back out by its rollback action, so the rejected output leaves no
/// write behind; a passing audit keeps its entry.
#[tokio::test]
async fn an_error_rule_that_rejects_an_output_leaves_no_write_behind() {
    let data = data_copy("fidelity-audit-rollback");
    let rt = runtime(&data);
    let log = || {
        rt.resources()
            .get::<seed_skills::stores::SeoDb>()
            .map(|db| db.audit_log.lock().unwrap().len())
            .unwrap()
    };
    let rejected = rt
        .invoke_json(
            "seo_role_audit",
            json!({"urls": ["https://shop.example.com/freinage/plaquettes"]}),
            Caller::default(),
        )
        .await
        .unwrap_err();
    assert!(
        rejected.to_string().contains("no_r1_expert_content"),
        "{rejected}"
    );
    assert_eq!(log(), 0, "the rejected audit's entry stays in the log");
    rt.invoke_json(
        "seo_role_audit",
        json!({"urls": ["https://shop.example.com/freinage"]}),
        Caller::default(),
    )
    .await
    .unwrap();
    assert_eq!(log(), 1);
}

/// Seed 002's `defaultIdempotency.keyFields` (`intent`, `scope.entityType`,
/// `idempotencyKey`): two envelopes with the same key, one for pages and one
/// for articles, are two jobs; the same key for pages again is the first.
#[tokio::test]
async fn a_callers_key_names_one_job_per_intent_and_entity_type() {
    use skill_runtime::envelope::Scope;
    use skill_runtime::manifest::EntityType;
    let data = data_copy("fidelity-composite-key");
    let rt = runtime(&data);
    let job = |entity| {
        JobEnvelope::for_intent(
            "seo_audit",
            Scope::new(entity),
            json!({"urls": ["https://shop.example.com/freinage"]}),
        )
        .with_idempotency_key("nightly-2026-12-06")
    };
    let pages = rt.invoke(job(EntityType::Page)).await.unwrap();
    let articles = rt.invoke(job(EntityType::Article)).await.unwrap();
    let again = rt.invoke(job(EntityType::Page)).await.unwrap();
    assert!(
        !pages.replayed && !articles.replayed,
        "two entity types, two jobs"
    );
    assert!(
        again.replayed,
        "the same key, intent and entity type: the first job"
    );
    assert_eq!(again.job_id, pages.job_id);
}

/// Seed 002's JobEnvelope requires a scope: an envelope for an intent that
/// says nothing of what to process is refused, by the runtime and by a
/// queue, saying so.
#[tokio::test]
async fn an_envelope_for_an_intent_needs_its_scope() {
    let data = data_copy("fidelity-scope");
    let rt = runtime(&data);
    let job: JobEnvelope = serde_json::from_str(
        r#"{"intent": "seo_audit", "payload": {"urls": ["https://shop.example.com/freinage"]},
            "context": {"source": "cron"}}"#,
    )
    .unwrap();
    assert!(job.readable().unwrap_err().contains("needs its `scope`"));
    let e = rt.invoke(job).await.unwrap_err();
    assert_eq!(e.code(), "invalid_envelope", "{e}");
    assert!(e.to_string().contains("needs its `scope`"), "{e}");
}

/// Seed 002's `human_required == true` trigger: when an agent's own output
/// asks for a person, the hand-over waits for one, even for an escalation
/// whose `human_required` flag is false (agent.seo.vlevel's).
#[test]
fn a_human_required_trigger_asks_a_person() {
    let out = run(&[
        "agent",
        "agent.seo.vlevel",
        r#"{"urls": ["https://shop.example.com/freinage/plaquettes"], "options": {"check_content": true}}"#,
    ]);
    let first: Value = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter()
        .next()
        .expect("a result")
        .expect("JSON");
    assert_eq!(first["data"]["human_required"], true, "{first}");
    assert_eq!(first["escalation"]["human_required"], true, "{first}");
    assert!(
        first.get("escalated").is_none(),
        "ran without a person: {first}"
    );
    assert!(
        first["notes"].to_string().contains("waits for a person"),
        "{first}"
    );
}
