//! The in-process queue: outcomes, priorities, expiry, the seed's envelope,
//! malformed messages and shutdown, through the same worker loop the Redis
//! backend uses.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::json;
use skill_runtime::prelude::*;
use skill_runtime::queue::api::Queue;
use skill_runtime::queue::memory::InProcessQueue;
use skill_runtime::queue::worker::WorkerOptions;
use skill_runtime::record::RunStatus;
use skill_runtime::{JobEnvelope, Registry, Resources, Runtime};
use skill_runtime::{envelope::Priority, envelope::Scope};

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
    let queue = InProcessQueue::start(runtime(), options(1), Duration::from_secs(60))
        .expect("options within bounds");
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
        assert_eq!(o.status, RunStatus::Succeeded, "{o:?}");
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
    let queue = InProcessQueue::start(runtime(), options(2), Duration::from_secs(60))
        .expect("options within bounds");
    let before = RUNS.load(Ordering::SeqCst);
    let job = tagged("stale", Priority::Normal)
        .with_expires_at(SystemTime::now() - Duration::from_secs(1));
    let id = queue.enqueue(job).await.unwrap();
    let o = queue
        .outcome(&id, Duration::from_secs(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(o.status, RunStatus::Expired);
    let e = o.error.unwrap();
    assert_eq!(e.code, "expired");
    assert!(e.message.contains("expired at"), "{}", e.message);
    assert!(!ORDER.lock().unwrap().contains(&"stale".to_owned()));
    assert!(RUNS.load(Ordering::SeqCst) >= before);
    queue.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seed_shaped_envelope_runs_the_skill_of_its_intent_once() {
    let queue = InProcessQueue::start(runtime(), options(4), Duration::from_secs(60))
        .expect("options within bounds");
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
    let queue = InProcessQueue::start(runtime(), options(2), Duration::from_secs(60))
        .expect("options within bounds");
    let job = JobEnvelope::for_intent(
        "no_such_intent",
        Scope::new(skill_runtime::manifest::EntityType::All),
        json!({}),
    );
    let id = queue.enqueue(job).await.unwrap();
    let o = queue
        .outcome(&id, Duration::from_secs(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(o.status, RunStatus::Failed);
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
    let queue = InProcessQueue::start(runtime(), options(2), Duration::from_secs(60))
        .expect("options within bounds");
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
    assert_eq!(o.status, RunStatus::Succeeded);
    assert!(!ORDER.lock().unwrap().contains(&"other".to_owned()));
    queue.shutdown().await;
}

/// Opened by the slot test once the unrelated job is done.
static KEY_GATE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);
/// Says the first keyed job is running.
static KEY_HELD: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);

/// Hold the job's idempotency key until the test opens the gate.
#[skill(version = "1.0.0", retries = 0)]
pub async fn hold_key(input: Tag) -> Tag {
    KEY_HELD.add_permits(1);
    KEY_GATE.acquire().await.unwrap().forget();
    input
}

/// A job waiting on a key another job holds gives its slot back: with two
/// slots, one holder and one waiter, an unrelated job still runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_waiting_on_a_key_holds_no_slot() {
    let queue = InProcessQueue::start(runtime(), options(2), Duration::from_secs(60))
        .expect("options within bounds");
    let keyed = |tag: &str| {
        JobEnvelope::new("hold_key", json!({ "tag": tag })).with_idempotency_key("one-key")
    };
    let holder = queue.enqueue(keyed("holder")).await.unwrap();
    KEY_HELD.acquire().await.unwrap().forget();
    let waiter = queue.enqueue(keyed("waiter")).await.unwrap();
    let unrelated = queue
        .enqueue(tagged("unrelated", Priority::Normal))
        .await
        .unwrap();
    let o = queue
        .outcome(&unrelated, Duration::from_secs(10))
        .await
        .unwrap()
        .expect("the unrelated job runs while the key is held and waited on");
    assert_eq!(o.status, RunStatus::Succeeded);
    assert!(
        queue
            .outcome(&holder, Duration::ZERO)
            .await
            .unwrap()
            .is_none(),
        "the holder still holds the key"
    );
    KEY_GATE.add_permits(1);
    for id in [&holder, &waiter] {
        let o = queue
            .outcome(id, Duration::from_secs(10))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(o.status, RunStatus::Succeeded, "{o:?}");
    }
    let waited = queue
        .outcome(&waiter, Duration::ZERO)
        .await
        .unwrap()
        .unwrap();
    assert!(
        waited.result.unwrap().replayed,
        "the waiter got the holder's result"
    );
    queue.shutdown().await;
}

/// Panic in a precondition: code the runtime runs outside the handler.
#[skill(
    version = "1.0.0",
    retries = 0,
    precondition(code = "BOOM", message = "never false", check = |i: &Tag| {
        assert!(i.tag != "boom", "the precondition blew up");
        true
    })
)]
pub async fn fragile(input: Tag) -> Tag {
    input
}

/// A panic anywhere in a job is the job's failure, recorded as its outcome;
/// the worker keeps serving and nothing stays in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_outside_the_handler_is_the_jobs_failure() {
    let queue = InProcessQueue::start(runtime(), options(1), Duration::from_secs(60))
        .expect("options within bounds");
    let boom = queue
        .enqueue(JobEnvelope::new("fragile", json!({ "tag": "boom" })))
        .await
        .unwrap();
    let o = queue
        .outcome(&boom, Duration::from_secs(10))
        .await
        .unwrap()
        .expect("the job that panicked has an outcome");
    assert_eq!(o.status, RunStatus::Failed);
    let error = o.error.unwrap();
    assert!(
        error.message.contains("the precondition blew up"),
        "{error:?}"
    );
    let fine = queue
        .enqueue(JobEnvelope::new("fragile", json!({ "tag": "fine" })))
        .await
        .unwrap();
    let o = queue
        .outcome(&fine, Duration::from_secs(10))
        .await
        .unwrap()
        .expect("the worker keeps serving");
    assert_eq!(o.status, RunStatus::Succeeded);
    let status = queue.status().await.unwrap();
    assert_eq!(status.in_flight, 0, "{status}");
    queue.shutdown().await;
}

/// Durations and expiries out of their bounds are refused where they enter,
/// with the bound named; none reaches a clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_out_of_bounds_are_refused_where_they_enter() {
    let err = |o: WorkerOptions| {
        InProcessQueue::start(runtime(), o, Duration::from_secs(60))
            .err()
            .expect("refused")
            .to_string()
    };
    assert_eq!(
        err(WorkerOptions {
            visibility: Duration::ZERO,
            ..options(1)
        }),
        "`visibility` of 0ms is outside 1s to 1d"
    );
    assert!(
        err(WorkerOptions {
            visibility: Duration::MAX,
            ..options(1)
        })
        .ends_with("is outside 1s to 1d")
    );
    assert_eq!(
        err(WorkerOptions {
            concurrency: 0,
            ..options(1)
        }),
        "`concurrency` of 0 is outside 1 to 4096"
    );
    assert!(InProcessQueue::start(runtime(), options(1), Duration::MAX).is_err());
    let queue = InProcessQueue::start(runtime(), options(1), Duration::from_secs(60))
        .expect("options within bounds");
    let far = SystemTime::now() + Duration::from_secs(20_000 * 365 * 86_400);
    let e = queue
        .enqueue(tagged("far", Priority::Normal).with_expires_at(far))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("past 9999-12-31T23:59:59Z"), "{e}");
    // Jobs wait as envelopes, never written out: an envelope built in code
    // that a reader of its JSON would refuse is refused when it is queued,
    // for the same reason.
    let mut wide = Scope::new(skill_runtime::manifest::EntityType::All);
    wide.limit = Scope::MAX_LIMIT + 1;
    type Spoil = Box<dyn Fn(&mut JobEnvelope)>;
    let cases: Vec<(&str, Spoil)> = vec![
        ("not a UUID", Box::new(|j| j.job_id = "job-1".into())),
        (
            "an idempotency key is not empty",
            Box::new(|j| j.idempotency_key = Some(String::new())),
        ),
        (
            "outside 1 ms to",
            Box::new(|j| j.constraints.timeout_ms = 0),
        ),
        (
            "not a non-negative amount",
            Box::new(|j| j.constraints.budget = Some(-1.0)),
        ),
        (
            "over the maximum of 10000",
            Box::new(move |j| j.scope = Some(Box::new(wide.clone()))),
        ),
    ];
    for (says, spoil) in cases {
        let mut job = tagged("spoilt", Priority::Normal);
        spoil(&mut job);
        let e = queue.enqueue(job.clone()).await.unwrap_err();
        assert!(e.to_string().contains(says), "{says}: {e}");
        // What a worker reading the envelope's JSON says of it.
        let text = serde_json::to_string(&job).unwrap();
        let read = serde_json::from_str::<JobEnvelope>(&text)
            .map(drop)
            .unwrap_err();
        assert!(read.to_string().contains(says), "{says}: {read}");
    }
    // A wait longer than any clock is a wait without end, not a panic.
    let id = queue
        .enqueue(tagged("near", Priority::Normal))
        .await
        .unwrap();
    let o = queue.outcome(&id, Duration::MAX).await.unwrap().unwrap();
    assert_eq!(o.status, RunStatus::Succeeded);
    queue.shutdown().await;
}

/// Sleep a minute: a job that runs until it is cancelled.
#[skill(version = "1.0.0", retries = 0, timeout_ms = 120_000)]
pub async fn sleep_long(input: Tag) -> Tag {
    tokio::time::sleep(Duration::from_secs(60)).await;
    input
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_job_stops_or_never_runs() {
    let queue = InProcessQueue::start(runtime(), options(1), Duration::from_secs(60))
        .expect("options within bounds");
    let running = queue
        .enqueue(JobEnvelope::new("sleep_long", json!({"tag": "long"})))
        .await
        .unwrap();
    let waiting = queue
        .enqueue(tagged("cancelled-before-it-ran", Priority::Normal))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    use skill_runtime::queue::api::Cancelled;
    assert_eq!(queue.cancel(&waiting).await.unwrap(), Cancelled::Requested);
    assert_eq!(queue.cancel(&running).await.unwrap(), Cancelled::Requested);
    for id in [&running, &waiting] {
        let o = queue
            .outcome(id, Duration::from_secs(5))
            .await
            .unwrap()
            .expect("cancelled within the wait");
        assert_eq!(o.status, RunStatus::Cancelled, "{o:?}");
        assert_eq!(o.error.unwrap().code, "cancelled");
    }
    assert!(
        !ORDER
            .lock()
            .unwrap()
            .iter()
            .any(|t| t == "cancelled-before-it-ran")
    );
    assert_eq!(
        queue.cancel(&running).await.unwrap(),
        Cancelled::AlreadyDone
    );
    assert_eq!(
        queue
            .cancel("00000000-0000-4000-8000-000000000000")
            .await
            .unwrap(),
        Cancelled::Unknown
    );
    queue.shutdown().await;
}

static ASKED_RUNS: AtomicU32 = AtomicU32::new(0);

/// Needs a person: the in-process queue parks it like the fleet does.
#[skill(version = "1.0.0", retries = 0, requires_hitl)]
pub async fn ask_first(input: Tag) -> Tag {
    ASKED_RUNS.fetch_add(1, Ordering::SeqCst);
    input
}

/// The in-process queue parks a job that needs approval (listed in its
/// status, holding no slot: a job behind it runs on the one slot), runs it
/// once approved, ends one denied `not_approved` and one nobody decides
/// `approval_expired`; a decision given before the job is parked waits for
/// it, and the first decision stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_needs_a_person_waits_parked_for_one() {
    use skill_runtime::policy::Decision;
    use skill_runtime::queue::api::Decided;

    let q = InProcessQueue::start(
        runtime(),
        WorkerOptions {
            approvals: Some(Duration::from_secs(1)),
            ..options(1)
        },
        Duration::from_secs(60),
    )
    .unwrap();
    let ask = |tag: &str| JobEnvelope::new("ask_first", json!({ "tag": tag }));
    let yes = q.enqueue(ask("yes")).await.unwrap();
    let no = q.enqueue(ask("no")).await.unwrap();
    let late = q.enqueue(ask("late")).await.unwrap();
    let behind = q.enqueue(tagged("behind", Priority::Normal)).await.unwrap();
    let ran = q
        .outcome(behind.as_str(), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(ran.unwrap().status, RunStatus::Succeeded);
    let status = q.status().await.unwrap();
    assert_eq!(status.awaiting_approval.len(), 3, "{status:?}");
    assert_eq!(ASKED_RUNS.load(Ordering::SeqCst), 0);

    let decided = q
        .decide(yes.as_str(), Decision::approved("alice"))
        .await
        .unwrap();
    assert_eq!(decided, Decided::Released);
    let again = q
        .decide(yes.as_str(), Decision::denied("bob", "no"))
        .await
        .unwrap();
    // The first decision stands: the second finds it, or (the approved
    // job having run already) the job's outcome.
    assert!(
        matches!(again, Decided::AlreadyDecided | Decided::AlreadyDone),
        "{again:?}"
    );
    q.decide(no.as_str(), Decision::denied("bob", "not today"))
        .await
        .unwrap();
    let wait = Duration::from_secs(5);
    let yes = q.outcome(yes.as_str(), wait).await.unwrap().unwrap();
    assert_eq!(yes.status, RunStatus::Succeeded, "{yes:?}");
    let no = q.outcome(no.as_str(), wait).await.unwrap().unwrap();
    assert_eq!(no.error.unwrap().code, "not_approved");
    let late = q.outcome(late.as_str(), wait).await.unwrap().unwrap();
    assert_eq!(late.error.unwrap().code, "approval_expired");
    assert_eq!(
        ASKED_RUNS.load(Ordering::SeqCst),
        1,
        "only the approved one ran"
    );

    // Approved before any worker took it: it runs without waiting.
    let early = ask("early");
    let id = early.job_id.to_string();
    let accepted = q.decide(&id, Decision::approved("carol")).await.unwrap();
    assert_eq!(accepted, Decided::Unknown, "not queued yet: unknown");
    let id = q.enqueue(early).await.unwrap();
    let _ = q
        .decide(id.as_str(), Decision::approved("carol"))
        .await
        .unwrap();
    let early = q.outcome(id.as_str(), wait).await.unwrap().unwrap();
    assert_eq!(early.status, RunStatus::Succeeded);
    q.shutdown().await;
}
