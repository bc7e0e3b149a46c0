//! The in-process queue: outcomes, priorities, expiry, the seed's envelope,
//! malformed messages and shutdown, through the same worker loop the Redis
//! backend uses.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::json;
use skill_runtime::prelude::*;
use skill_runtime::queue::api::{OutcomeStatus, Queue};
use skill_runtime::queue::memory::InProcessQueue;
use skill_runtime::queue::worker::WorkerOptions;
use skill_runtime::{JobEnvelope, Registry, Resources, Runtime};
use skill_runtime::{Priority, Scope};

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Tag {
    pub tag: String,
}

/// Tags in the order workers ran them.
static ORDER: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
static RUNS: AtomicU32 = AtomicU32::new(0);

/// Note the tag it was given, in the order jobs run.
#[skill(version = "1.0.0", retries = 0, intents("tag_things"))]
pub async fn note_tag(input: Tag) -> Tag {
    ORDER.lock().unwrap().push(input.tag.clone());
    RUNS.fetch_add(1, Ordering::SeqCst);
    input
}

/// Opened by the priority test once every job is queued.
static GATE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);
/// Says the gate job holds the worker's only slot.
static HELD: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);

/// Hold the worker's slot until the test opens the gate.
#[skill(version = "1.0.0", retries = 0)]
pub async fn hold_slot(input: Tag) -> Tag {
    HELD.add_permits(1);
    GATE.acquire().await.unwrap().forget();
    input
}

fn runtime() -> Runtime {
    Runtime::new(
        Arc::new(Registry::from_inventory().unwrap()),
        Resources::new(),
    )
    .unwrap()
}

fn options(concurrency: usize) -> WorkerOptions {
    WorkerOptions {
        concurrency,
        poll: Duration::from_millis(50),
        grace: Duration::from_secs(5),
        ..WorkerOptions::default()
    }
}

fn tagged(tag: &str, priority: Priority) -> JobEnvelope {
    let mut job = JobEnvelope::new("note_tag", json!({ "tag": tag }));
    job.caller.priority = priority;
    job
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_run_by_priority_and_their_outcomes_are_kept() {
    let queue = InProcessQueue::start(runtime(), options(1), Duration::from_secs(60));
    // One slot, held until every job is queued: the order is priority order
    // however slow the machine.
    let gate = queue
        .enqueue(JobEnvelope::new("hold_slot", json!({ "tag": "gate" })))
        .await
        .unwrap();
    HELD.acquire().await.unwrap().forget();
    let mut ids = Vec::new();
    for (tag, p) in [
        ("low", Priority::Low),
        ("normal", Priority::Normal),
        ("critical", Priority::Critical),
        ("high", Priority::High),
    ] {
        ids.push(queue.enqueue(tagged(tag, p)).await.unwrap());
    }
    GATE.add_permits(1);
    ids.insert(0, gate);
    for id in &ids {
        let o = queue
            .outcome(id, Duration::from_secs(10))
            .await
            .unwrap()
            .expect("every job completes");
        assert_eq!(o.status, OutcomeStatus::Succeeded, "{o:?}");
        assert_eq!(o.result.unwrap().job_id, *id);
    }
    let mine = ["low", "normal", "critical", "high"];
    let order: Vec<String> = ORDER
        .lock()
        .unwrap()
        .iter()
        .filter(|t| mine.contains(&t.as_str()))
        .cloned()
        .collect();
    assert_eq!(order, ["critical", "high", "normal", "low"]);
    let status = queue.status().await.unwrap();
    assert_eq!((status.in_flight, status.dead_letters), (0, 0));
    queue.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_jobs_are_not_run_and_say_so() {
    let queue = InProcessQueue::start(runtime(), options(2), Duration::from_secs(60));
    let before = RUNS.load(Ordering::SeqCst);
    let job = tagged("stale", Priority::Normal)
        .with_expires_at(SystemTime::now() - Duration::from_secs(1));
    let id = queue.enqueue(job).await.unwrap();
    let o = queue
        .outcome(&id, Duration::from_secs(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(o.status, OutcomeStatus::Expired);
    let e = o.error.unwrap();
    assert_eq!(e.code, "expired");
    assert!(e.message.contains("expired at"), "{}", e.message);
    assert!(!ORDER.lock().unwrap().contains(&"stale".to_owned()));
    assert!(RUNS.load(Ordering::SeqCst) >= before);
    queue.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_shaped_envelope_runs_the_skill_of_its_intent_once() {
    let queue = InProcessQueue::start(runtime(), options(4), Duration::from_secs(60));
    let envelope = |job_id: &str| -> JobEnvelope {
        serde_json::from_value(json!({
            "jobId": job_id,
            "traceId": "0f9e8d7c-6b5a-4f3e-8d2c-1b0a9f8e7d6c",
            "intent": "tag_things",
            "scope": {"entityType": "page", "entityIds": ["p1"], "limit": 10},
            "payload": {"tag": "seeded"},
            "constraints": {"maxTokens": 4000, "maxDocs": 10, "timeout": 300000, "dryRun": false},
            "context": {"source": "cron", "priority": "high", "userId": "u1"},
            "createdAt": "2026-11-23T08:00:00.000Z"
        }))
        .unwrap()
    };
    let first = queue
        .enqueue(envelope("6c2f1a0e-7b3d-4c55-9a57-3f0d2a1b9e10"))
        .await
        .unwrap();
    let o = queue
        .outcome(&first, Duration::from_secs(10))
        .await
        .unwrap()
        .unwrap();
    let result = o.result.expect("the intent's skill ran");
    assert_eq!(&*result.skill, "note_tag@1.0.0");
    assert!(!result.replayed);
    // The same intent, scope and payload: the seed's stable key replays it.
    let second = queue
        .enqueue(envelope("7d3f2b1f-8c4e-4d66-8b68-4f1e3b2c0f21"))
        .await
        .unwrap();
    let o = queue
        .outcome(&second, Duration::from_secs(10))
        .await
        .unwrap()
        .unwrap();
    assert!(
        o.result.unwrap().replayed,
        "same intent, scope and payload: one run"
    );
    let seeded = ORDER
        .lock()
        .unwrap()
        .iter()
        .filter(|t| *t == "seeded")
        .count();
    assert_eq!(seeded, 1);
    queue.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_intents_fail_with_an_outcome_and_shutdown_reports() {
    let queue = InProcessQueue::start(runtime(), options(2), Duration::from_secs(60));
    let job = JobEnvelope::for_intent(
        "no_such_intent",
        Scope::new(skill_runtime::EntityType::All),
        json!({}),
    );
    let id = queue.enqueue(job).await.unwrap();
    let o = queue
        .outcome(&id, Duration::from_secs(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(o.status, OutcomeStatus::Failed);
    assert_eq!(o.error.as_ref().unwrap().code, "unknown_intent");
    let report = queue.shutdown().await;
    assert_eq!(report.completed, 1);
    assert!(
        queue
            .enqueue(tagged("late", Priority::Normal))
            .await
            .is_err()
    );
}

/// A job id names one job, here as on Redis: another job with a held id is
/// refused; the same job sent again is taken as itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_id_names_one_job_in_process_too() {
    let queue = InProcessQueue::start(runtime(), options(2), Duration::from_secs(60));
    let id = skill_runtime::Id::uuid("6c2f1a0e-7b3d-4c55-9a57-3f0d2a1b9e10").unwrap();
    let first = tagged("first", Priority::Normal).with_job_id(id.clone());
    let other = tagged("other", Priority::Normal).with_job_id(id.clone());
    assert_eq!(queue.enqueue(first.clone()).await.unwrap(), id);
    let e = queue.enqueue(other).await.unwrap_err();
    assert!(e.to_string().contains("already names another job"), "{e}");
    assert_eq!(queue.enqueue(first).await.unwrap(), id);
    let o = queue
        .outcome(&id, Duration::from_secs(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(o.status, OutcomeStatus::Succeeded);
    assert!(!ORDER.lock().unwrap().contains(&"other".to_owned()));
    queue.shutdown().await;
}
