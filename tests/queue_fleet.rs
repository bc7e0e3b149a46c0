//! The queue on a real Redis and a real PostgreSQL, served by real worker
//! processes of the example app (`skill-examples worker`): delivery,
//! takeover after a crash, shared idempotency and rate limits, expiry,
//! poisoned messages, a restart of the store, cancellation, delayed jobs,
//! schedules, approvals, MCP tasks, and the CLI commands as the README gives
//! them. Each test body runs on each store, a Redis Cluster among them
//! (`on_stores!`, at the end);
//! the few about Redis itself (its README block, a restart without
//! persistence, keys of the wrong type) run on Redis.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use skill_runtime::JobEnvelope;
use skill_runtime::queue::api::{Cancelled, Outcome, Queue};
use skill_runtime::queue::fleet::{Fleet, FleetConfig};
use skill_runtime::record::RunStatus;
use skill_tests::fleet::{
    Kind, RedisServer, WorkerProcess, app, data_copy, enqueue_cli, free_port,
};
use skill_tests::mcp_stdio::McpStdio;
use skill_tests::root;

/// Workers that give up on a silent peer quickly, and a short idempotency lock.
const FAST: &[&str] = &["--visibility", "2s", "--lock-ttl", "2s", "--grace", "5s"];

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn backend(url: &str) -> Fleet {
    Fleet::connect(FleetConfig::new(url))
        .await
        .expect("the store is up")
}

/// Every outcome, waiting up to `limit` for all of them.
async fn outcomes(b: &Fleet, ids: &[String], limit: Duration) -> Vec<Outcome> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut out = Vec::new();
    for id in ids {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let o = b
            .outcome(id, left.max(Duration::from_millis(1)))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("job {id} has no outcome after {limit:?}"));
        out.push(o);
    }
    out
}

fn data_args(data: &std::path::Path) -> Vec<String> {
    vec!["--data".into(), data.display().to_string()]
}

fn worker(url: &str, extra: &[&str], data: &std::path::Path) -> WorkerProcess {
    let mut args: Vec<String> = FAST.iter().map(|s| s.to_string()).collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(data_args(data));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    WorkerProcess::start(url, &args)
}

/// `n` workers of `concurrency` slots each on the store at `url`.
fn workers(n: usize, concurrency: &str, url: &str, data: &std::path::Path) -> Vec<WorkerProcess> {
    (0..n)
        .map(|_| worker(url, &["--concurrency", concurrency], data))
        .collect()
}

/// Queue every job, in order; their ids.
async fn enqueue_all(b: &Fleet, jobs: impl IntoIterator<Item = JobEnvelope>) -> Vec<String> {
    let mut ids = Vec::new();
    for job in jobs {
        ids.push(b.enqueue(job).await.unwrap().to_string());
    }
    ids
}

fn notify(key: Option<&str>, latency_ms: u32, to: &str) -> JobEnvelope {
    let mut job = JobEnvelope::new(
        "notify",
        json!({"channel": "fleet", "to": to, "message": "the build is green", "latency_ms": latency_ms}),
    );
    job.idempotency_key = key.map(str::to_owned);
    job
}

fn outbox(data: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(data.join("outbox/fleet.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn a_thousand_jobs_over_three_workers_each_run_once(kind: Kind) {
    let store = kind.start("thousand");
    let data = data_copy(&kind.tag("thousand"));
    let url = store.url();
    let mut workers = workers(3, "8", &url, &data);
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let jobs = (0..1000).map(|i| JobEnvelope::new("echo", json!({"message": format!("job {i}")})));
    let ids = rt.block_on(enqueue_all(&b, jobs));
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(120)));
    assert!(done.iter().all(|o| o.status == RunStatus::Succeeded));
    let by: BTreeSet<&str> = done.iter().map(|o| o.worker.as_str()).collect();
    assert_eq!(by.len(), 3, "every worker took jobs: {by:?}");
    for w in &mut workers {
        assert!(w.stop(), "a worker stops gracefully on SIGTERM");
    }
    // Each job's record is written with its outcome: one per job, no more.
    let records = rt.block_on(b.records(10_000)).unwrap();
    let jobs: Vec<String> = records
        .iter()
        .map(|r| serde_json::from_str::<Value>(r).unwrap())
        .filter(|r| r["skill"] == "echo" && r["status"] == "succeeded")
        .map(|r| r["job_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(jobs.len(), 1000, "exactly 1,000 success records");
    let unique: BTreeSet<&String> = jobs.iter().collect();
    assert_eq!(unique.len(), 1000, "each job ran once");
    let status = rt.block_on(b.status()).unwrap();
    assert_eq!((status.in_flight, status.dead_letters), (0, 0), "{status}");
}

fn a_job_whose_worker_is_killed_completes_on_another(kind: Kind) {
    let store = kind.start("killed");
    let data = data_copy(&kind.tag("killed"));
    let url = store.url();
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let mut first = worker(&url, &["--concurrency", "2"], &data);
    // A slow delivery, taken by the first worker.
    let id = rt
        .block_on(b.enqueue(notify(None, 4_000, "ops@example.com")))
        .unwrap()
        .to_string();
    rt.block_on(async {
        for _ in 0..200 {
            if b.status().await.unwrap().in_flight == 1 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the first worker never took the job");
    });
    let second = worker(&url, &["--concurrency", "2"], &data);
    first.kill_hard();
    let o = rt
        .block_on(b.outcome(&id, Duration::from_secs(60)))
        .unwrap()
        .expect("the job completes after its worker died");
    assert_eq!(o.status, RunStatus::Succeeded, "{o:?}");
    assert_eq!(o.worker, second.name, "the surviving worker ran it");
    assert_eq!(outbox(&data).len(), 1, "delivered once");
}

fn one_key_enqueued_a_hundred_times_runs_once_across_the_fleet(kind: Kind) {
    let store = kind.start("idempotent");
    let data = data_copy(&kind.tag("idempotent"));
    let url = store.url();
    let _workers = workers(3, "8", &url, &data);
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let jobs = (0..100).map(|_| notify(Some("release-42"), 200, "team@example.com"));
    let ids = rt.block_on(enqueue_all(&b, jobs));
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(60)));
    assert!(
        done.iter().all(|o| o.status == RunStatus::Succeeded),
        "{done:?}"
    );
    let replays = done
        .iter()
        .filter(|o| o.result.as_ref().is_some_and(|r| r.replayed))
        .count();
    assert_eq!(replays, 99, "one run, 99 replays");
    assert_eq!(outbox(&data).len(), 1, "the side effect happened once");
}

fn a_rate_limit_holds_across_the_fleet(kind: Kind) {
    let store = kind.start("rate");
    let data = data_copy(&kind.tag("rate"));
    let url = store.url();
    // search_notes is tagged `requires_review`: the workers' operator
    // approves.
    let _workers: Vec<_> = (0..3)
        .map(|_| worker(&url, &["--concurrency", "8", "--approve"], &data))
        .collect();
    let rt = rt();
    let b = rt.block_on(backend(&url));
    // search_notes: rate_limit(max_per_minute = 10).
    let jobs = (0..50)
        .map(|i| JobEnvelope::new("search_notes", json!({"query": format!("ownership {i}")})));
    let ids = rt.block_on(enqueue_all(&b, jobs));
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(60)));
    let ran = done
        .iter()
        .filter(|o| o.status == RunStatus::Succeeded)
        .count();
    let limited = done
        .iter()
        .filter(|o| o.error.as_ref().is_some_and(|e| e.code == "rate_limited"))
        .count();
    assert_eq!((ran, limited), (10, 40), "exactly 10 run inside the minute");
}

fn expired_and_poisoned_jobs_do_not_run_and_the_workers_keep_serving(kind: Kind) {
    let store = kind.start("expired");
    let data = data_copy(&kind.tag("expired"));
    let url = store.url();
    let rt = rt();
    let b = rt.block_on(backend(&url));
    // Queued before any worker: it expires while it waits.
    let stale = JobEnvelope::new("echo", json!({"message": "too late"}))
        .with_expires_at(SystemTime::now() + Duration::from_millis(200));
    let stale = rt.block_on(b.enqueue(stale)).unwrap().to_string();
    std::thread::sleep(Duration::from_millis(400));
    // Two messages that are not job envelopes.
    for raw in [
        "{\"jobId\": broken",
        "{\"skill\": \"echo\", \"payload\": {}, \"surprise\": 1}",
    ] {
        store.put_raw(raw);
    }
    let _worker = worker(&url, &[], &data);
    let o = rt
        .block_on(b.outcome(&stale, Duration::from_secs(30)))
        .unwrap()
        .unwrap();
    assert_eq!(o.status, RunStatus::Expired, "{o:?}");
    assert_eq!(o.error.unwrap().code, "expired");
    // The worker is still there for the next job.
    let id = rt
        .block_on(b.enqueue(JobEnvelope::new("echo", json!({"message": "still here"}))))
        .unwrap()
        .to_string();
    let o = rt
        .block_on(b.outcome(&id, Duration::from_secs(30)))
        .unwrap()
        .unwrap();
    assert_eq!(o.status, RunStatus::Succeeded);
    let status = rt.block_on(b.status()).unwrap();
    assert_eq!(status.dead_letters, 2, "{status}");
    let dead = store.dead_letters();
    assert!(dead.contains("not a job envelope"), "{dead}");
    assert!(dead.contains("unknown field `surprise`"), "{dead}");
}

/// A request sent again (after a lost connection, or by a caller that is not
/// sure) does not queue its job twice.
fn queueing_the_same_job_twice_queues_it_once(kind: Kind) {
    let store = kind.start("twice");
    let rt = rt();
    let b = rt.block_on(backend(&store.url()));
    let job = notify(None, 0, "twice@example.com");
    let (a, c) = rt.block_on(async {
        (
            b.enqueue(job.clone()).await.unwrap(),
            b.enqueue(job).await.unwrap(),
        )
    });
    assert_eq!(a, c);
    let status = rt.block_on(b.status()).unwrap();
    assert_eq!(
        status.waiting.iter().map(|(_, n)| n).sum::<u64>(),
        1,
        "{status}"
    );
    // An envelope that leaves its stamps (traceId, createdAt) to the queue,
    // read anew each time it is sent: the same job too.
    let text = r#"{"jobId": "3f1e2d4c-5b6a-4789-8abc-def012345678", "intent": "seo_audit",
        "scope": {"entityType": "page", "limit": 10},
        "payload": {"urls": ["https://shop.example.com/freinage"]},
        "context": {"source": "cron"}}"#;
    let read = || serde_json::from_str::<JobEnvelope>(text).unwrap();
    let (first, second) = (read(), read());
    assert_ne!(
        first.trace_id, second.trace_id,
        "each read makes its own trace id"
    );
    let (a, c) = rt.block_on(async {
        (
            b.enqueue(first).await.unwrap(),
            b.enqueue(second).await.unwrap(),
        )
    });
    assert_eq!(
        (a.as_str(), c.as_str()),
        (
            "3f1e2d4c-5b6a-4789-8abc-def012345678",
            "3f1e2d4c-5b6a-4789-8abc-def012345678"
        )
    );
}

/// A job id names one job: another job brought with an id the queue holds
/// is refused, never answered with the first job's outcome; the same job
/// sent again is the job it already is.
fn a_job_id_names_one_job(kind: Kind) {
    let store = kind.start("job-id");
    let data = data_copy(&kind.tag("job-id"));
    let url = store.url();
    let _worker = worker(&url, &[], &data);
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let id = skill_runtime::Id::uuid("6c2f1a0e-7b3d-4c55-9a57-3f0d2a1b9e10").unwrap();
    let first = JobEnvelope::new("echo", json!({"message": "first"})).with_job_id(id.clone());
    let other = JobEnvelope::new(
        "vlevel_calculator",
        json!({"page_data": {"url": "https://a.example/x", "gamme": "g"}}),
    )
    .with_job_id(id.clone());
    rt.block_on(async {
        let (got, outcome) = b
            .enqueue_and_wait(first.clone(), Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(got, id);
        let outcome = outcome.expect("the first job ran");
        assert_eq!(*outcome.result.unwrap().data, json!({"message": "first"}));
        // Another job with the first one's id: refused, at once.
        let started = std::time::Instant::now();
        for refused in [
            b.enqueue(other.clone()).await.map(|_| ()),
            b.enqueue_and_wait(other.clone(), Duration::from_secs(30))
                .await
                .map(|_| ()),
        ] {
            let e = refused.unwrap_err();
            assert!(e.to_string().contains("already names another job"), "{e}");
        }
        assert!(started.elapsed() < Duration::from_secs(10));
        // The first one sent again: the job it is, with its own outcome.
        let (again, outcome) = b
            .enqueue_and_wait(first, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(again, id);
        assert_eq!(
            *outcome.unwrap().result.unwrap().data,
            json!({"message": "first"})
        );
    });
    // The CLI says so, with an envelope file that reuses the id.
    let dir = skill_tests::temp_dir(&kind.tag("job-id-cli"));
    let file = dir.join("reused.json");
    let mut envelope = serde_json::to_value(&other).unwrap();
    envelope["createdAt"] = json!("2026-11-23T08:00:00Z");
    std::fs::write(&file, envelope.to_string()).unwrap();
    let out = Command::new(app())
        .args(["enqueue", "--redis", &url, "--envelope"])
        .arg(&file)
        .args(["--wait", "--wait-limit", "10s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a caller's mistake: {err}");
    assert!(err.contains("already names another job"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("first"));
}

fn jobs_survive_a_restart_of_the_store_mid_run(kind: Kind) {
    let mut store = kind.start_durable("restart");
    let data = data_copy(&kind.tag("restart"));
    let url = store.url();
    let _workers = workers(2, "4", &url, &data);
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let jobs = (0..200).map(|i| notify(None, 100, &format!("user{i}@example.com")));
    let ids = rt.block_on(enqueue_all(&b, jobs));
    // Mid-run: some jobs done, most not.
    rt.block_on(async {
        let first = b.outcome(&ids[0], Duration::from_secs(30)).await.unwrap();
        assert!(first.is_some(), "the workers started");
    });
    let status = rt.block_on(b.status()).unwrap();
    let left: u64 = status.waiting.iter().map(|(_, n)| n).sum::<u64>() + status.in_flight;
    assert!(left > 50, "the restart comes mid-run: {status}");
    store.restart();
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(120)));
    assert!(
        done.iter().all(|o| o.status == RunStatus::Succeeded),
        "every job completes"
    );
    let delivered = outbox(&data);
    let to: BTreeSet<&str> = delivered
        .iter()
        .map(|m| m["to"].as_str().unwrap())
        .collect();
    assert_eq!(to.len(), 200, "every message delivered");
    assert_eq!(delivered.len(), 200, "none delivered twice");
}

/// The commands as the README gives them, against a worker.
fn the_cli_enqueues_waits_and_reports(kind: Kind) {
    let store = kind.start("cli");
    let data = data_copy(&kind.tag("cli"));
    let url = store.url();
    let cli = |args: &[&str]| {
        Command::new(app())
            .args(args)
            .env("SKILL_REDIS_URL", &url)
            .output()
            .expect("skill-examples runs")
    };
    // Without a store to talk to, queue commands say so.
    let out = Command::new(app())
        .args(["queue", "status"])
        .env_remove("SKILL_REDIS_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--redis URL"));
    let unreachable = match kind {
        Kind::Redis | Kind::Cluster => "redis://127.0.0.1:1/0",
        Kind::Postgres => "postgres://skill:pw@127.0.0.1:1/postgres",
    };
    let out = cli(&["queue", "status", "--redis", unreachable]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    let named = unreachable.replace(":pw@", ":***@");
    assert!(
        said.contains(&format!("{} at {named}", kind.shown())) && !said.contains(":pw@"),
        "an unreachable store is named, its password masked: {said}"
    );

    let _worker = worker(&url, &[], &data);
    let out = cli(&[
        "enqueue",
        "echo",
        r#"{"message": "hello fleet"}"#,
        "--priority",
        "high",
        "--wait",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["data"]["message"], "hello fleet");

    // Bad input exits 2, as `invoke` does.
    let out = cli(&["enqueue", "echo", r#"{"message": 42}"#, "--wait"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A seed-shaped envelope: the skill comes from its intent.
    let envelope = data.join("seed-envelope.json");
    std::fs::write(
        &envelope,
        serde_json::to_string_pretty(&json!({
            "jobId": "3b241101-e2bb-4255-8caf-4136c566a962",
            "traceId": "8f14e45f-ceea-467e-9575-4aa6b1f4bc6d",
            "intent": "notify",
            "scope": {"entityType": "all", "limit": 1000},
            "payload": {"channel": "fleet", "to": "seed@example.com", "message": "from the seed"},
            "constraints": {"maxTokens": 4000, "maxDocs": 10, "timeout": 300000, "dryRun": false},
            "context": {"source": "event", "priority": "normal"},
            "createdAt": "2026-11-23T08:00:00.000Z",
            "expiresAt": "2999-01-01T00:00:00Z"
        }))
        .unwrap(),
    )
    .unwrap();
    let out = cli(&["enqueue", "--envelope", envelope.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert_eq!(id, "3b241101-e2bb-4255-8caf-4136c566a962");
    let out = cli(&["result", &id, "--wait", "--wait-limit", "30s"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["skill"], "notify@1.0.0");
    assert_eq!(outbox(&data).len(), 1);

    let out = cli(&["result", "00000000-0000-4000-8000-000000000000"]);
    assert_eq!(out.status.code(), Some(3), "no outcome yet");

    let out = cli(&["queue", "status", "--json"]);
    assert!(out.status.success());
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["workers"].as_array().unwrap().len(), 1, "{status}");
    assert_eq!(status["dead_letters"], 0);

    let out = cli(&["stats", "--json"]);
    assert!(out.status.success());
    let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skills: BTreeSet<&str> = stats["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["skill"].as_str().unwrap())
        .collect();
    assert!(
        skills.contains("echo@1.0.0") && skills.contains("notify@1.0.0"),
        "{stats}"
    );

    // The direct path shares the fleet's idempotency: same key, one delivery.
    let direct = |key: &str| {
        let mut cmd = Command::new(app());
        cmd.args([
            "invoke",
            "notify",
            r#"{"channel": "fleet", "to": "direct@example.com", "message": "once"}"#,
            "--idempotency-key",
            key,
            "--data",
            data.to_str().unwrap(),
        ])
        .env("SKILL_REDIS_URL", &url);
        cmd.output().unwrap()
    };
    let out = cli(&[
        "enqueue",
        "notify",
        r#"{"channel": "fleet", "to": "direct@example.com", "message": "once"}"#,
        "--idempotency-key",
        "shared-key",
        "--wait",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = direct("shared-key");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        result["replayed"], true,
        "invoke --redis replays the fleet's run"
    );
    assert_eq!(outbox(&data).len(), 2);
}

/// The "Run a fleet" commands of README.md, run as written (on a free port
/// instead of 6390, so that tests do not meet).
#[test]
fn the_readmes_fleet_commands_work_as_written() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme
        .split("## Run a fleet")
        .nth(1)
        .expect("README.md has a \"Run a fleet\" section");
    let script = section
        .split("```sh\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("the section has a sh block");
    let port = free_port().to_string();
    assert!(script.contains("6390"), "the block uses port 6390");
    let script = script.replace("6390", &port);
    // Whatever happens, nothing is left running.
    let cleanup = format!(
        "trap 'set +e; kill $(jobs -p) 2>/dev/null; redis-cli -p {port} shutdown nosave >/dev/null 2>&1; true' EXIT\n"
    );
    let out = Command::new("bash")
        .arg("-ec")
        .arg(cleanup + &script)
        .current_dir(root())
        .env_remove("SKILL_REDIS_URL")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for expected in [
        "\"message\": \"hello fleet\"",
        "\"skill\": \"seo_role_audit@1.0.0\"",
        "\"skill\": \"vlevel_calculator@1.0.0\"",
        "dead letters       0",
        "echo@1.0.0",
    ] {
        assert!(
            stdout.contains(expected),
            "{expected} is missing from:\n{stdout}\n{stderr}"
        );
    }
    // `queue status` is a snapshot: the second worker may still be starting
    // (building its registry) when it is taken on a loaded machine; that
    // both ran is what their graceful stops below say.
    assert!(
        stdout.contains("workers            2") || stdout.contains("workers            1"),
        "{stdout}"
    );
    assert_eq!(
        stderr.matches("stopped: ").count(),
        2,
        "both workers stop gracefully: {stderr}"
    );
}

/// The run records of job `id` in the fleet's records stream.
fn records_of(rt: &tokio::runtime::Runtime, b: &Fleet, id: &str) -> Vec<Value> {
    rt.block_on(b.records(100_000))
        .unwrap()
        .iter()
        .map(|r| serde_json::from_str::<Value>(r).unwrap())
        .filter(|r| r["job_id"] == id)
        .collect()
}

/// Wait until `n` jobs are in flight.
fn until_in_flight(rt: &tokio::runtime::Runtime, b: &Fleet, n: u64) {
    rt.block_on(async {
        for _ in 0..400 {
            if b.status().await.unwrap().in_flight == n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the workers never held {n} jobs");
    });
}

/// A worker killed while its jobs hold idempotency locks that would outlive
/// the test: the survivor takes the jobs over after the visibility timeout
/// and their locks at once (their holder's heartbeat is gone), instead of
/// waiting out the locks' lifetime with its slots held; it shows in `queue
/// status` while it works; each message is delivered once.
fn a_dead_workers_locks_are_taken_over_at_once(kind: Kind) {
    let store = kind.start("dead-locks");
    let data = data_copy(&kind.tag("dead-locks"));
    let url = store.url();
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let long = |concurrency: &'static str| {
        let mut args = vec![
            "--visibility",
            "2s",
            "--lock-ttl",
            "10m",
            "--grace",
            "5s",
            "--concurrency",
            concurrency,
        ];
        let d = data.display().to_string();
        args.push("--data");
        WorkerProcess::start(&url, &[args.as_slice(), &[d.as_str()]].concat())
    };
    let mut first = long("4");
    let jobs = (0..4).map(|i| notify(None, 3_000, &format!("held{i}@example.com")));
    let ids = rt.block_on(enqueue_all(&b, jobs));
    until_in_flight(&rt, &b, 4);
    let second = long("2");
    first.kill_hard();
    let first_done = rt
        .block_on(b.outcome(&ids[0], Duration::from_secs(60)))
        .unwrap()
        .expect("the survivor runs the dead worker's jobs, well before their locks expire");
    assert_eq!(first_done.worker, second.name);
    let status = rt.block_on(b.status()).unwrap();
    assert_eq!(
        status.workers,
        vec![second.name.clone()],
        "the survivor is seen while it works: {status}"
    );
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(60)));
    assert!(
        done.iter()
            .all(|o| o.status == RunStatus::Succeeded && o.worker == second.name),
        "{done:?}"
    );
    let to: BTreeSet<String> = outbox(&data)
        .iter()
        .map(|m| m["to"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(outbox(&data).len(), 4, "each delivered once");
    assert_eq!(to.len(), 4);
    assert!(
        second.said().iter().any(|l| l.contains("taken over")),
        "the survivor says it took the locks over: {:?}",
        second.said()
    );
}

/// A worker paused past the visibility timeout and its lock's lifetime,
/// then resumed: another worker ran the job meanwhile; the resumed one
/// learns its job was taken over and produces no second effect (the outbox
/// checks the key's fence), no second outcome and no second record.
fn a_paused_worker_resumed_makes_no_second_effect_or_record(kind: Kind) {
    let store = kind.start("paused");
    let data = data_copy(&kind.tag("paused"));
    let url = store.url();
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let first = worker(&url, &["--concurrency", "2"], &data);
    let id = rt
        .block_on(b.enqueue(notify(None, 3_000, "paused@example.com")))
        .unwrap()
        .to_string();
    until_in_flight(&rt, &b, 1);
    first.pause();
    let second = worker(&url, &["--concurrency", "2"], &data);
    let o = rt
        .block_on(b.outcome(&id, Duration::from_secs(60)))
        .unwrap()
        .expect("another worker runs the paused worker's job");
    assert_eq!(o.worker, second.name);
    first.resume();
    assert!(
        first.wait_to_say("taken over", Duration::from_secs(20)),
        "the resumed worker learns its job was taken over: {:?}",
        first.said()
    );
    assert_eq!(
        outbox(&data).len(),
        1,
        "delivered once: {:?}",
        outbox(&data)
    );
    let again = rt
        .block_on(b.outcome(&id, Duration::ZERO))
        .unwrap()
        .unwrap();
    assert_eq!(
        again.worker, second.name,
        "the outcome is still the runner's"
    );
    let records = records_of(&rt, &b, &id);
    assert_eq!(records.len(), 1, "one record: {records:?}");
}

/// Redis restarted without persistence while ten jobs are in flight: the
/// server lost their deliveries, and each worker still stores the outcome
/// and the run record of what it ran, together, so the two agree.
#[test]
fn a_restart_without_persistence_keeps_outcomes_and_records_together() {
    let mut redis = RedisServer::start("volatile");
    let data = data_copy("volatile");
    let url = redis.url();
    let _workers = workers(2, "8", &url, &data);
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let jobs = (0..10).map(|i| notify(None, 2_000, &format!("volatile{i}@example.com")));
    let ids = rt.block_on(enqueue_all(&b, jobs));
    until_in_flight(&rt, &b, 10);
    redis.restart();
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(60)));
    assert!(done.iter().all(|o| o.status == RunStatus::Succeeded));
    for id in &ids {
        assert_eq!(records_of(&rt, &b, id).len(), 1, "job {id}: one record");
    }
    assert_eq!(outbox(&data).len(), 10);
}

/// Trouble made by hand on the server, contained and named: a stream key
/// of the wrong type stops only its own priority (the worker and `queue
/// status` name it); a message that is not UTF-8 goes to the dead letters
/// byte for byte; a job whose params no worker would take is refused at
/// the door, before it is queued.
#[test]
fn hand_made_trouble_is_contained_and_named() {
    let redis = RedisServer::start("trouble");
    let data = data_copy("trouble");
    let url = redis.url();
    let rt = rt();
    let b = rt.block_on(backend(&url));
    assert_eq!(
        redis.cli(&["SET", "skill:q:default:low", "oops"]).trim(),
        "OK"
    );
    let mut cli = Command::new("redis-cli")
        .args([
            "-u",
            &url,
            "-x",
            "XADD",
            "skill:q:default:normal",
            "*",
            "job",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        cli.stdin.as_mut().unwrap(),
        b"\xff\xfe{\"skill\": \"echo\"}",
    )
    .unwrap();
    drop(cli.stdin.take());
    assert!(cli.wait().unwrap().success());
    let w = worker(&url, &[], &data);
    let id = rt
        .block_on(b.enqueue(JobEnvelope::new("echo", json!({"message": "served"}))))
        .unwrap()
        .to_string();
    let o = rt
        .block_on(b.outcome(&id, Duration::from_secs(30)))
        .unwrap()
        .expect("the other priorities are served");
    assert_eq!(o.status, RunStatus::Succeeded);
    assert!(
        w.wait_to_say(
            "`skill:q:default:low` is not a stream",
            Duration::from_secs(10)
        ),
        "{:?}",
        w.said()
    );
    let status = rt.block_on(b.status()).unwrap();
    assert_eq!(status.not_streams, vec!["skill:q:default:low".to_owned()]);
    assert_eq!(status.dead_letters, 1, "{status}");
    let dead = redis.cli(&["--no-raw", "XRANGE", "skill:q:default:dead", "-", "+"]);
    assert!(dead.contains(r#"\xff\xfe{\"skill\": \"echo\"}"#), "{dead}");
    let big = "x".repeat(2 << 20);
    let e = rt
        .block_on(b.enqueue(JobEnvelope::new("echo", json!({ "message": big }))))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("over the 1048576 bytes workers take"),
        "{e}"
    );
    let low =
        JobEnvelope::new("echo", json!({"message": "low"})).with_caller(skill_runtime::Caller {
            priority: skill_runtime::envelope::Priority::Low,
            ..skill_runtime::Caller::default()
        });
    let e = rt.block_on(b.enqueue(low)).unwrap_err();
    assert!(
        e.to_string()
            .contains("`skill:q:default:low` is not a stream"),
        "{e}"
    );
}

/// `cancel JOB_ID` from another process: a job still waiting never runs, a
/// running one stops within a second (its worker polls the marks), each
/// ends `cancelled` with a record that says so; a job with an outcome
/// already, or an id nobody queued, is answered as such.
fn cancel_stops_a_running_job_and_a_waiting_one_never_runs(kind: Kind) {
    let store = kind.start("cancel");
    let url = store.url();
    let data = data_copy(&kind.tag("cancel"));
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let _w = worker(&url, &["--concurrency", "1"], &data);
    let long = |to: u32| JobEnvelope::new("count_slowly", json!({"to": to, "step_ms": 100}));
    // The second is queued once the first runs: it waits behind it (one
    // slot), whichever partition of a cluster each is on.
    let mut ids = rt.block_on(enqueue_all(&b, [long(100)]));
    until_in_flight(&rt, &b, 1);
    ids.extend(rt.block_on(enqueue_all(&b, [long(3)])));
    let (running, waiting) = (&ids[0], &ids[1]);
    std::thread::sleep(Duration::from_millis(300));
    let cancel = |id: &str| {
        Command::new(app())
            .args(["cancel", id, "--redis", &url])
            .output()
            .unwrap()
    };
    // The one behind it first (one slot: it waits), then the running one.
    assert!(cancel(waiting).status.success());
    let asked = std::time::Instant::now();
    assert!(cancel(running).status.success());
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(20)));
    let heard = asked.elapsed();
    assert!(
        done.iter().all(|o| o.status == RunStatus::Cancelled),
        "{done:?}"
    );
    assert!(heard < Duration::from_secs(3), "stopped after {heard:?}");
    let running_record = records_of(&rt, &b, running);
    assert_eq!(
        running_record[0]["status"], "cancelled",
        "{running_record:?}"
    );
    assert!(running_record[0]["progress"]["done"].as_u64().unwrap() < 100);
    let waiting_record = records_of(&rt, &b, waiting);
    assert_eq!(waiting_record[0]["status"], "cancelled");
    assert_eq!(
        waiting_record[0]["attempts"],
        json!([]),
        "a job cancelled while it waited never ran its handler"
    );
    // Too late, and nobody's.
    assert_eq!(cancel(running).status.code(), Some(3));
    let unknown = cancel("00000000-0000-4000-8000-000000000000");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no job"));
}

/// Jobs cancelled while they waited, before any worker started: a worker
/// that starts after the cancellations runs none of them, whatever it does
/// first; each ends `cancelled` and its effect never happens.
fn jobs_cancelled_before_a_worker_starts_never_run(kind: Kind) {
    let store = kind.start("cancel-early");
    let url = store.url();
    let data = data_copy(&kind.tag("cancel-early"));
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let jobs = (0..6).map(|i| notify(None, 0, &format!("early-{i}@example.com")));
    let ids = rt.block_on(enqueue_all(&b, jobs));
    for id in &ids {
        assert_eq!(rt.block_on(b.cancel(id)).unwrap(), Cancelled::Requested);
    }
    let _w = worker(&url, &["--concurrency", "4"], &data);
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(20)));
    assert!(
        done.iter().all(|o| o.status == RunStatus::Cancelled),
        "{done:?}"
    );
    assert_eq!(
        outbox(&data),
        Vec::<Value>::new(),
        "a cancelled job ran its effect"
    );
}

/// `enqueue --delay`: not run early, run within a second of its time, once
/// across three workers that all move due jobs; `queue status` counts the
/// jobs not due yet; `--at` takes a time.
fn delayed_jobs_run_on_time_and_once_across_the_fleet(kind: Kind) {
    let store = kind.start("delayed");
    let url = store.url();
    let data = data_copy(&kind.tag("delayed"));
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let _w = workers(3, "4", &url, &data);
    let enqueue = |args: &[&str]| enqueue_cli(&url, args);
    let queued_at = SystemTime::now();
    let id = enqueue(&["echo", r#"{"message": "later"}"#, "--delay", "2s"]);
    assert!(rt.block_on(b.status()).unwrap().delayed >= 1);
    let one_second = queued_at + Duration::from_secs(1);
    std::thread::sleep(
        one_second
            .duration_since(SystemTime::now())
            .unwrap_or_default(),
    );
    assert!(
        rt.block_on(b.outcome(&id, Duration::ZERO))
            .unwrap()
            .is_none(),
        "not done after 1 s"
    );
    // Twenty more, due together: each runs once whoever moves it.
    let many: Vec<String> = (0..20)
        .map(|i| {
            enqueue(&[
                "echo",
                &format!(r#"{{"message": "m{i}"}}"#),
                "--delay",
                "2s",
            ])
        })
        .collect();
    let done = rt.block_on(outcomes(
        &b,
        std::slice::from_ref(&id),
        Duration::from_secs(10),
    ));
    assert_eq!(done[0].status, RunStatus::Succeeded);
    let ran_after = done[0]
        .completed_at
        .duration_since(queued_at)
        .unwrap_or_default();
    // Due 2 s after the command started: run within a second of that
    // (the command's own start counts in too).
    assert!(
        ran_after >= Duration::from_secs(2) && ran_after < Duration::from_millis(3_500),
        "ran {ran_after:?} after it was queued for 2 s"
    );
    let all = rt.block_on(outcomes(&b, &many, Duration::from_secs(10)));
    assert!(all.iter().all(|o| o.status == RunStatus::Succeeded));
    for id in &many {
        assert_eq!(records_of(&rt, &b, id).len(), 1, "job {id} ran once");
    }
    assert_eq!(rt.block_on(b.status()).unwrap().delayed, 0);
    // --at: a time; one in the past runs now; one past 30 days is refused.
    let soon = skill_runtime::record::format_time(SystemTime::now() + Duration::from_secs(1));
    let at = enqueue(&["echo", r#"{"message": "at"}"#, "--at", &soon]);
    let o = rt.block_on(outcomes(&b, &[at], Duration::from_secs(10)));
    assert_eq!(o[0].status, RunStatus::Succeeded);
    let far = Command::new(app())
        .args([
            "enqueue",
            "echo",
            r#"{"message": "x"}"#,
            "--delay",
            "31d",
            "--redis",
            &url,
        ])
        .output()
        .unwrap();
    assert_eq!(
        far.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&far.stderr)
    );
}

/// A cron schedule given to three workers queues each tick once: five ticks
/// of `*/2 * * * * *`, five jobs, one record each, two seconds apart; a
/// worker restarted mid-way queues no tick twice; `queue schedules` shows
/// the next run and the last tick's job; a bad file is refused.
fn a_cron_schedule_fires_once_per_tick_across_the_fleet(kind: Kind) {
    let store = kind.start("schedules");
    let url = store.url();
    let data = data_copy(&kind.tag("schedules"));
    let dir = skill_tests::temp_dir(&kind.tag("schedules"));
    let file = dir.join("schedules.json");
    std::fs::write(
        &file,
        r#"{"schedules": [{"id": "every-2s", "cron": "*/2 * * * * *", "skill": "echo", "input": {"message": "tick"}}]}"#,
    )
    .unwrap();
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let with = ["--schedules", file.to_str().unwrap()];
    let mut fleet = vec![
        worker(&url, &with, &data),
        worker(&url, &with, &data),
        worker(&url, &with, &data),
    ];
    std::thread::sleep(Duration::from_secs(5));
    // One worker restarts: it must not queue again what the fleet queued.
    fleet[0].stop();
    fleet[0] = worker(&url, &with, &data);
    std::thread::sleep(Duration::from_secs(6));
    drop(fleet);
    let records: Vec<Value> = rt
        .block_on(b.records(100_000))
        .unwrap()
        .iter()
        .map(|r| serde_json::from_str::<Value>(r).unwrap())
        .filter(|r| r["skill"] == "echo")
        .collect();
    let mut ticks: Vec<String> = records
        .iter()
        .map(|r| r["idempotency_key"].as_str().unwrap().to_owned())
        .collect();
    ticks.sort();
    let distinct: BTreeSet<&String> = ticks.iter().collect();
    assert_eq!(distinct.len(), ticks.len(), "a tick ran twice: {ticks:?}");
    assert!(ticks.len() >= 5, "five ticks in 11 s: {ticks:?}");
    let times: Vec<SystemTime> = ticks
        .iter()
        .map(|t| skill_runtime::envelope::parse_time(t.rsplit('@').next().unwrap()).unwrap())
        .collect();
    for w in times.windows(2) {
        assert_eq!(
            w[1].duration_since(w[0]).unwrap(),
            Duration::from_secs(2),
            "consecutive ticks: {ticks:?}"
        );
    }
    assert!(records.iter().all(|r| r["caller"]["source"] == "cron"));
    let listed = Command::new(app())
        .args(["queue", "schedules", "--json", "--redis", &url])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["schedule"]["id"], "every-2s", "{listed}");
    assert!(listed[0]["next_run"].is_string() && listed[0]["last_job_id"].is_string());
    std::fs::write(
        &file,
        r#"{"schedules": [{"id": "x", "cron": "61 * * * *", "skill": "echo"}]}"#,
    )
    .unwrap();
    let bad = Command::new(app())
        .args([
            "worker",
            "--redis",
            &url,
            "--schedules",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("schedule `x`"));
}

/// A running job's progress is stored with it: `Queue::progress` and `queue
/// status --json` show the last report (twice a second at most), and it is
/// gone once the job ends (its last report is in its record). The job runs
/// six seconds, so that a loaded machine still starts the CLI while it runs.
fn a_running_jobs_progress_is_stored_and_listed(kind: Kind) {
    let store = kind.start("progress");
    let url = store.url();
    let data = data_copy(&kind.tag("progress"));
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let _w = worker(&url, &[], &data);
    let ids = rt.block_on(enqueue_all(
        &b,
        [JobEnvelope::new(
            "count_slowly",
            json!({"to": 40, "step_ms": 150}),
        )],
    ));
    let id = &ids[0];
    let seen = rt.block_on(async {
        for _ in 0..600 {
            if let Some(p) = b.progress(id).await.unwrap()
                && p.progress.done >= 5
            {
                return p;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no progress of job {id}");
    });
    assert_eq!(seen.progress.total, Some(40));
    assert!(
        seen.progress
            .message
            .as_deref()
            .unwrap()
            .starts_with("counted ")
    );
    let status = Command::new(app())
        .args(["queue", "status", "--json", "--redis", &url])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["running"][0]["job_id"], id.as_str(), "{status}");
    assert!(status["running"][0]["progress"]["done"].as_u64().unwrap() >= 5);
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(20)));
    assert_eq!(done[0].status, RunStatus::Succeeded);
    assert_eq!(
        rt.block_on(b.progress(id)).unwrap(),
        None,
        "forgotten once it ended"
    );
    assert_eq!(records_of(&rt, &b, id)[0]["progress"]["done"], 40);
}

/// Run records read a page at a time, newest first, by skill, status,
/// caller or job (`Fleet::records_page`, what the console's runs pages
/// read): every page's cursor leads to the next, no record is listed twice
/// or left out, and each filter keeps exactly its records.
fn records_are_paged_by_skill_status_caller_and_job(kind: Kind) {
    use skill_runtime::queue::records::RecordQuery;

    let store = kind.start("records-page");
    let url = store.url();
    let data = data_copy(&kind.tag("records-page"));
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let _w = worker(&url, &["--concurrency", "8"], &data);
    let ann = skill_runtime::Caller {
        user_id: Some("ann".to_owned()),
        ..skill_runtime::Caller::default()
    };
    let jobs = (0..40).map(|i| match i % 8 {
        // Refused by echo's input schema: failed.
        0 => JobEnvelope::new("echo", json!({"nothing": i})),
        1 | 2 => JobEnvelope::new("echo", json!({"message": format!("ann {i}")}))
            .with_caller(ann.clone()),
        3 => JobEnvelope::new("normalize_handle", json!({"handle": format!("@Ann{i}")})),
        _ => JobEnvelope::new("echo", json!({"message": format!("job {i}")})),
    });
    let ids = rt.block_on(enqueue_all(&b, jobs));
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(60)));
    assert_eq!(done.len(), 40);
    let all_of = |query: RecordQuery| -> Vec<Value> {
        let mut seen = Vec::new();
        let mut query = RecordQuery { limit: 7, ..query };
        loop {
            let page = rt.block_on(b.records_page(&query)).unwrap();
            assert!(page.records.len() <= 7);
            seen.extend(
                page.records
                    .iter()
                    .map(|r| serde_json::from_str::<Value>(r).unwrap()),
            );
            match page.next {
                Some(next) => query.before = Some(next),
                None => return seen,
            }
        }
    };
    let every = all_of(RecordQuery::default());
    let listed: BTreeSet<&str> = every
        .iter()
        .map(|r| r["job_id"].as_str().unwrap())
        .collect();
    assert_eq!(every.len(), 40, "each record once");
    assert_eq!(listed, ids.iter().map(String::as_str).collect());
    // Newest first: the order the store keeps them in, as `records` reads
    // it (oldest first).
    let stored: Vec<String> = rt
        .block_on(b.records(1000))
        .unwrap()
        .iter()
        .rev()
        .map(|r| {
            serde_json::from_str::<Value>(r).unwrap()["job_id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let paged: Vec<&str> = every
        .iter()
        .map(|r| r["job_id"].as_str().unwrap())
        .collect();
    assert_eq!(paged, stored, "newest first");
    let echo = |status: Option<&str>| RecordQuery {
        skill: Some("echo".to_owned()),
        status: status.map(str::to_owned),
        ..RecordQuery::default()
    };
    assert_eq!(all_of(echo(None)).len(), 35);
    let failed = all_of(echo(Some("failed")));
    assert_eq!(failed.len(), 5);
    assert!(failed.iter().all(|r| r["error"]["code"] == "invalid_input"));
    let anns = all_of(RecordQuery {
        user: Some("ann".to_owned()),
        ..RecordQuery::default()
    });
    assert_eq!(anns.len(), 10);
    // "Ended before" a time: from an hour ahead, every record; from the
    // epoch's first second, none.
    let later = SystemTime::now() + Duration::from_secs(3600);
    let from = rt.block_on(b.records_before(later)).unwrap();
    assert_eq!(
        all_of(RecordQuery {
            before: Some(from),
            ..RecordQuery::default()
        })
        .len(),
        40
    );
    let first = std::time::UNIX_EPOCH + Duration::from_secs(1);
    let from = rt.block_on(b.records_before(first)).unwrap();
    assert!(
        all_of(RecordQuery {
            before: Some(from),
            ..RecordQuery::default()
        })
        .is_empty()
    );
    let one = all_of(RecordQuery {
        job_id: Some(ids[3].clone()),
        ..RecordQuery::default()
    });
    assert_eq!(one.len(), 1);
    assert_eq!(one[0]["skill"], "normalize_handle");
}

/// What the console lists besides the lines: dead letters newest first
/// with their reasons (one whose message is a job is sent again as a new
/// job, once however many ask, and leaves the dead letters; a poisoned one
/// can only be discarded), delayed jobs with when each is due, and each
/// live worker with its heartbeat.
fn jobs_set_apart_are_listed_and_dead_letters_retried_or_discarded(kind: Kind) {
    let store = kind.start("dead");
    let url = store.url();
    let data = data_copy(&kind.tag("dead"));
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let _w = worker(&url, &[], &data);
    let job = JobEnvelope::new("echo", json!({"message": "again"})).seal();
    store.put_dead(
        &serde_json::to_string(&job).unwrap(),
        "its workers kept dying",
    );
    std::thread::sleep(Duration::from_millis(5));
    store.put_dead("{not a job", "not JSON");
    let dead = rt.block_on(b.dead_letters(10)).unwrap();
    assert_eq!(dead.len(), 2, "{dead:?}");
    assert_eq!(dead[0].reason, "not JSON", "newest first");
    assert_eq!(dead[1].reason, "its workers kept dying");
    assert_eq!(dead[1].deliveries, 3);
    assert_eq!(dead[1].worker.as_deref(), Some("w-1"));
    let e = rt.block_on(b.retry_dead(&dead[0].id)).unwrap_err();
    assert!(e.to_string().contains("can only be discarded"), "{e}");
    // Two people retrying at once queue one job.
    let (one, two) =
        rt.block_on(async { tokio::join!(b.retry_dead(&dead[1].id), b.retry_dead(&dead[1].id)) });
    let (one, two) = (one.unwrap(), two.unwrap());
    let again = one.clone().or(two.clone()).expect("sent again");
    for id in [one, two].into_iter().flatten() {
        assert_eq!(id, again, "one job");
    }
    assert_ne!(again, job.job_id, "a new job");
    assert_eq!(
        rt.block_on(b.retry_dead(&dead[1].id)).unwrap(),
        None,
        "once"
    );
    let done = rt.block_on(outcomes(&b, &[again.to_string()], Duration::from_secs(20)));
    assert_eq!(done[0].status, RunStatus::Succeeded);
    let left = rt.block_on(b.dead_letters(10)).unwrap();
    assert_eq!(left.len(), 1);
    assert!(rt.block_on(b.discard_dead(&left[0].id)).unwrap());
    assert!(!rt.block_on(b.discard_dead(&left[0].id)).unwrap());
    assert!(rt.block_on(b.dead_letters(10)).unwrap().is_empty());

    let due = SystemTime::now() + Duration::from_secs(3600);
    let later = JobEnvelope::new("echo", json!({"message": "in an hour"}));
    let later = rt.block_on(b.enqueue_at(later, due)).unwrap();
    let listed = rt.block_on(b.delayed_jobs(10)).unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let (when, job) = &listed[0];
    assert_eq!(job.as_ref().unwrap().job_id, later);
    let off = when.duration_since(due).unwrap_or_else(|e| e.duration());
    assert!(off < Duration::from_secs(1), "due {off:?} off");

    // A worker signs in with its first take (or its first heartbeat, on a
    // cluster).
    let status = rt.block_on(async {
        for _ in 0..300 {
            let status = b.status().await.unwrap();
            if !status.heartbeats.is_empty() {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no worker's heartbeat");
    });
    let named: Vec<&str> = status
        .heartbeats
        .iter()
        .map(|h| h.worker.as_str())
        .collect();
    assert_eq!(named, status.workers, "{status:?}");
    assert!(
        status
            .heartbeats
            .iter()
            .all(|h| h.alive_until + Duration::from_secs(1) > SystemTime::now()),
        "{status:?}"
    );
}

/// A destructive job on the fleet waits `awaiting_approval`, holding no slot
/// (a job behind it runs meanwhile on the one slot); parked jobs survive
/// their worker being killed; `approve` from another process releases one
/// and its record names the approver and the time; `deny` ends one
/// `not_approved`; one nobody decides fails `approval_expired` at its
/// deadline.
fn a_job_that_needs_a_person_waits_for_one(kind: Kind) {
    use skill_runtime::Caller;
    use skill_runtime::manifest::{AgentRole, PermissionLevel};

    let store = kind.start("approvals");
    let url = store.url();
    let data = data_copy(&kind.tag("approvals"));
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let admin = Caller::agent(AgentRole::Orchestrator, PermissionLevel::Admin);
    let purge = |ns: &str| {
        JobEnvelope::new("rag_cache_purge", json!({ "namespace": ns })).with_caller(admin.clone())
    };
    let mut first = worker(
        &url,
        &["--concurrency", "1", "--approval-timeout", "1h"],
        &data,
    );
    let ids = rt.block_on(enqueue_all(
        &b,
        [
            purge("knowledge:faq"),
            purge("knowledge:diagnostic"),
            JobEnvelope::new("echo", json!({"message": "behind"})),
        ],
    ));
    let echo = rt.block_on(outcomes(&b, &ids[2..], Duration::from_secs(20)));
    assert_eq!(echo[0].status, RunStatus::Succeeded, "{echo:?}");
    let awaiting = |n: usize| {
        rt.block_on(async {
            for _ in 0..400 {
                let s = b.status().await.unwrap();
                if s.awaiting_approval.len() == n {
                    return s;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            panic!("never {n} jobs awaiting approval");
        })
    };
    let status = awaiting(2);
    assert_eq!(
        status.in_flight, 0,
        "a parked job holds no slot: {status:?}"
    );
    let listed: BTreeSet<&str> = status
        .awaiting_approval
        .iter()
        .map(|a| a.job_id.as_str())
        .collect();
    assert_eq!(listed, BTreeSet::from([ids[0].as_str(), ids[1].as_str()]));
    let text = Command::new(app())
        .args(["queue", "status", "--redis", &url])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("awaiting approval"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );

    // The worker dies; the parked jobs wait on for the next one.
    first.kill_hard();
    let _second = worker(
        &url,
        &["--concurrency", "1", "--approval-timeout", "1s"],
        &data,
    );
    let decide = |args: &[&str]| {
        Command::new(app())
            .args(args)
            .args(["--redis", &url])
            .output()
            .unwrap()
    };
    let approved = decide(&["approve", &ids[0], "--by", "alice"]);
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let denied = decide(&["deny", &ids[1], "--by", "bob", "--reason", "not today"]);
    assert!(denied.status.success());
    let done = rt.block_on(outcomes(&b, &ids[..2], Duration::from_secs(20)));
    assert_eq!(done[0].status, RunStatus::Succeeded, "{done:?}");
    assert_eq!(done[1].status, RunStatus::Failed);
    let error = done[1].error.as_ref().unwrap();
    assert_eq!(error.code, "not_approved");
    assert!(error.message.contains("denied by bob"), "{}", error.message);
    let step = |id: &str| {
        let record = records_of(&rt, &b, id);
        record[0]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["step"] == "approval")
            .cloned()
            .unwrap()
    };
    let approval = step(&ids[0]);
    assert_eq!(approval["outcome"], "passed");
    let detail = approval["detail"].as_str().unwrap();
    assert!(detail.starts_with("approved by alice at 20"), "{detail}");
    // `result` shows who approved, as the record does.
    let shown = Command::new(app())
        .args(["result", &ids[0], "--redis", &url])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("\"decision\": \"approved\"") && shown.contains("\"by\": \"alice\""),
        "{shown}"
    );
    // Decided once: a second answer is refused.
    assert_eq!(
        decide(&["deny", &ids[0], "--reason", "late"]).status.code(),
        Some(3)
    );

    // Nobody answers this one within its second.
    let late = rt.block_on(enqueue_all(&b, [purge("knowledge:reference")]));
    let expired = rt.block_on(outcomes(&b, &late, Duration::from_secs(20)));
    assert_eq!(expired[0].status, RunStatus::Failed);
    assert_eq!(expired[0].error.as_ref().unwrap().code, "approval_expired");
    assert_eq!(step(&late[0])["outcome"], "failed");
}

/// MCP tasks on the fleet: a long call from a client that declared the
/// extension is a task, run by the fleet's worker; polled, it shows
/// progress, and its result survives the server that created it (another
/// server answers for it); cancelled, it ends `cancelled`; a short tool
/// answers inline; without Redis the server's own queue runs tasks.
fn mcp_tasks_run_on_the_fleet_and_outlive_their_server(kind: Kind) {
    let store = kind.start("tasks");
    let url = store.url();
    let data = data_copy(&kind.tag("tasks"));
    let _w = worker(&url, &["--concurrency", "2"], &data);
    let data_arg = data.display().to_string();
    let server_args = ["--redis", &url, "--data", &data_arg];
    let mut first = McpStdio::start(&server_args);
    let created = first.request(
        "tools/call",
        json!({"name": "count_slowly", "arguments": {"to": 20, "step_ms": 100}}),
    );
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert_eq!(result["status"], "working");
    let id = result["taskId"].as_str().unwrap().to_owned();
    // Its worker stores progress every half second.
    let mut working = Value::Null;
    for _ in 0..30 {
        working = first.request("tasks/get", json!({ "taskId": id }));
        if working["result"]["statusMessage"].is_string() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert!(
        working["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("of 20")),
        "progress in the status: {working}"
    );
    // The server that created it goes; another reads it to its end.
    drop(first);
    let mut second = McpStdio::start(&server_args);
    let done = second.until_done(&id);
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["result"]["structuredContent"],
        json!({"counted": 20})
    );
    // A task id not of this caller's making is unknown.
    let forged = second.request("tasks/get", json!({ "taskId": format!("{id}0") }));
    assert!(
        forged["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no task"),
        "{forged}"
    );

    let long = second.request(
        "tools/call",
        json!({"name": "count_slowly", "arguments": {"to": 100, "step_ms": 100}}),
    );
    let long_id = long["result"]["taskId"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(300));
    let cancelled = second.request("tasks/cancel", json!({ "taskId": long_id }));
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    let ended = second.until_done(&long_id);
    assert_eq!(ended["result"]["status"], "cancelled", "{ended}");

    let inline = second.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "now"}}),
    );
    assert!(inline["result"]["taskId"].is_null(), "{inline}");
    assert_eq!(inline["result"]["structuredContent"]["message"], "now");

    // No Redis: the server's own queue.
    let mut alone = McpStdio::start(&["--data", &data_arg]);
    let created = alone.request(
        "tools/call",
        json!({"name": "count_slowly", "arguments": {"to": 3, "step_ms": 10}}),
    );
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = alone.until_done(&id);
    assert_eq!(
        done["result"]["result"]["structuredContent"],
        json!({"counted": 3})
    );
}

/// Each body above that takes a [`Kind`], as a test on Redis (`redis::NAME`)
/// and on PostgreSQL (`postgres::NAME`): one body, both stores.
/// A Redis Cluster's primary killed (`kill -9`) while jobs are queued and
/// run, its replica promoted: with `--replicas 1` (every queueing and
/// outcome acknowledged once a replica holds it) every job the caller was
/// told was queued ends, successfully, and each one's effect happened once.
#[test]
fn a_primary_killed_under_load_loses_no_acknowledged_job() {
    let mut cluster = skill_tests::cluster::RedisCluster::start("failover");
    let data = data_copy("cluster-failover");
    let url = cluster.url();
    let _workers: Vec<WorkerProcess> = (0..2)
        .map(|_| worker(&url, &["--concurrency", "8", "--replicas", "1"], &data))
        .collect();
    let rt = rt();
    let b = rt.block_on(async {
        Fleet::connect(FleetConfig {
            replicas: 1,
            ..FleetConfig::new(url.as_str())
        })
        .await
        .expect("the cluster is up")
    });
    let total = 300;
    let mut acked = Vec::new();
    let mut refused = 0;
    // The killed primary's port, until it is started again.
    let mut down = None;
    for i in 0..total {
        if i == total / 3 {
            down = Some(cluster.kill_primary_of("skill:{default.0}:normal"));
        }
        let job = notify(
            Some(&format!("effect-{i}")),
            20,
            &format!("{i}@example.com"),
        );
        // A refused queueing (the primary gone, or not yet replicated) is
        // sent again, as a caller would: the same job, so once at most.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            match rt.block_on(b.enqueue(job.clone())) {
                Ok(id) => {
                    acked.push((i, id.to_string()));
                    break;
                }
                Err(e) => {
                    refused += 1;
                    // The promoted replica has no replica of its own until
                    // the dead node comes back (as operators bring it, or a
                    // spare): queueing waits for it, refused meanwhile.
                    if let Some(port) = down.take_if(|_| cluster.serving()) {
                        cluster.restart_node(port);
                    }
                    assert!(
                        std::time::Instant::now() < deadline,
                        "job {i} could not be queued for 30 s: {e}"
                    );
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }
    if let Some(port) = down {
        cluster.wait_for_failover(Duration::from_secs(30));
        cluster.restart_node(port);
    }
    assert!(
        refused > 0,
        "the failover refused no queueing: was the primary killed?"
    );
    cluster.wait_until_whole(Duration::from_secs(30));
    // Queueing and waiting in one round trip waits for the replica too.
    let (_, waited) = rt
        .block_on(b.enqueue_and_wait(
            JobEnvelope::new("echo", json!({"message": "after"})),
            Duration::from_secs(20),
        ))
        .expect("queued once a replica holds it");
    assert_eq!(
        waited.map(|o| o.status),
        Some(RunStatus::Succeeded),
        "waited for its outcome"
    );
    let ids: Vec<String> = acked.iter().map(|(_, id)| id.clone()).collect();
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(120)));
    assert!(
        done.iter().all(|o| o.status == RunStatus::Succeeded),
        "{:?}",
        done.iter()
            .filter(|o| o.status != RunStatus::Succeeded)
            .collect::<Vec<_>>()
    );
    let mut effects = std::collections::BTreeMap::<String, usize>::new();
    for e in outbox(&data) {
        *effects
            .entry(e["to"].as_str().unwrap_or("").to_owned())
            .or_default() += 1;
    }
    for (i, _) in &acked {
        let n = effects
            .get(&format!("{i}@example.com"))
            .copied()
            .unwrap_or(0);
        assert_eq!(
            n, 1,
            "job {i}'s effect happened {n} times ({refused} queueings refused during the failover)"
        );
    }
}

/// A cluster whose nodes need a password: the URL's credentials reach every
/// node (those the client finds on its own too, and those idle workers
/// listen on), jobs run, and the password is never shown.
#[test]
fn a_cluster_behind_a_password_serves_and_never_shows_it() {
    let cluster = skill_tests::cluster::RedisCluster::start_with("password", Some("s3cret-pw"));
    let data = data_copy("cluster-password");
    let url = cluster.url();
    let w = worker(&url, &["--concurrency", "4"], &data);
    assert!(!w.first.contains("s3cret-pw"), "{}", w.first);
    let rt = rt();
    let b = rt.block_on(backend(&url));
    let jobs = (0..20).map(|i| notify(None, 0, &format!("pw-{i}@example.com")));
    let ids = rt.block_on(enqueue_all(&b, jobs));
    let done = rt.block_on(outcomes(&b, &ids, Duration::from_secs(30)));
    assert!(
        done.iter().all(|o| o.status == RunStatus::Succeeded),
        "{done:?}"
    );
    assert_eq!(outbox(&data).len(), 20);
    let status = rt.block_on(b.status()).unwrap();
    assert_eq!(status.workers, vec![w.name.clone()], "{status:?}");
    // The idle worker listens to each partition's shard channel, on a node
    // that serves the channel's slot (a shard channel's subscribers are
    // counted by that node alone).
    for i in 0..8 {
        let channel = format!("skill:{{default.{i}}}:wake");
        let heard: u64 = cluster
            .on_every_node(&["PUBSUB", "SHARDNUMSUB", &channel])
            .iter()
            .filter_map(|said| said.lines().nth(1)?.trim().parse::<u64>().ok())
            .sum();
        assert_eq!(heard, 1, "{channel}");
    }
    // A wrong password is refused, and not shown either.
    let wrong = url.replace("s3cret-pw", "wrong-pw");
    let said = Command::new(app())
        .args(["queue", "status", "--redis", &wrong])
        .output()
        .unwrap();
    assert!(!said.status.success());
    let said = String::from_utf8_lossy(&said.stderr);
    assert!(
        !said.contains("wrong-pw") && !said.contains("s3cret-pw"),
        "{said}"
    );
}

skill_tests::on_stores!(
    everywhere:
    a_thousand_jobs_over_three_workers_each_run_once,
    a_job_whose_worker_is_killed_completes_on_another,
    one_key_enqueued_a_hundred_times_runs_once_across_the_fleet,
    a_rate_limit_holds_across_the_fleet,
    expired_and_poisoned_jobs_do_not_run_and_the_workers_keep_serving,
    queueing_the_same_job_twice_queues_it_once,
    a_job_id_names_one_job,
    the_cli_enqueues_waits_and_reports,
    a_dead_workers_locks_are_taken_over_at_once,
    a_paused_worker_resumed_makes_no_second_effect_or_record,
    cancel_stops_a_running_job_and_a_waiting_one_never_runs,
    jobs_cancelled_before_a_worker_starts_never_run,
    delayed_jobs_run_on_time_and_once_across_the_fleet,
    a_cron_schedule_fires_once_per_tick_across_the_fleet,
    a_running_jobs_progress_is_stored_and_listed,
    a_job_that_needs_a_person_waits_for_one,
    mcp_tasks_run_on_the_fleet_and_outlive_their_server,
    records_are_paged_by_skill_status_caller_and_job,
    jobs_set_apart_are_listed_and_dead_letters_retried_or_discarded;
    one_server:
    jobs_survive_a_restart_of_the_store_mid_run,
);
