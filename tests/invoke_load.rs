//! Under load nothing is lost: 10,000 concurrent jobs across several skills leave
//! exactly 10,000 records, and the per-skill stats count every one of them.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;
use skill_runtime::prelude::*;
use skill_runtime::record::RunStatus;
use skill_runtime::{InvokeError, record::MemorySink};
use skill_runtime::{JobEnvelope, Registry, Runtime};

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Job {
    pub n: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Answer {
    pub n: u64,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum LoadError {
    /// Multiples of seven are refused.
    #[error("{0} is a multiple of seven")]
    Seven(u64),
}

fn answer(n: u64) -> Result<Answer, LoadError> {
    if n.is_multiple_of(7) {
        Err(LoadError::Seven(n))
    } else {
        Ok(Answer { n })
    }
}

/// Load skill a.
#[skill(version = "1.0.0", retries = 0)]
pub async fn load_a(input: Job) -> Result<Answer, LoadError> {
    answer(input.n)
}

/// Load skill b, which yields once.
#[skill(version = "1.0.0", retries = 0)]
pub async fn load_b(input: Job) -> Result<Answer, LoadError> {
    tokio::task::yield_now().await;
    answer(input.n)
}

/// Load skill c, which sleeps a millisecond.
#[skill(version = "1.0.0", retries = 0)]
pub async fn load_c(input: Job) -> Result<Answer, LoadError> {
    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    answer(input.n)
}

/// Load skill d, with a precondition that refuses 3.
#[skill(version = "1.0.0", retries = 0,
        precondition(code = "THREE", message = "3 is refused", check = |i: &Job| i.n != 3))]
pub async fn load_d(input: Job) -> Result<Answer, LoadError> {
    answer(input.n)
}

/// Load skill e.
#[skill(version = "2.1.0", retries = 0)]
pub async fn load_e(input: Job) -> Result<Answer, LoadError> {
    answer(input.n)
}

const SKILLS: [&str; 5] = ["load_a", "load_b", "load_c", "load_d", "load_e"];
const JOBS: u64 = 10_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_thousand_concurrent_jobs_leave_ten_thousand_records_and_exact_stats() {
    let registry = Arc::new(Registry::from_inventory().unwrap());
    let sink = Arc::new(MemorySink::new(2 * JOBS as usize));
    let rt = Runtime::builder(registry)
        .sink(sink.clone())
        .build()
        .unwrap();

    let mut set = tokio::task::JoinSet::new();
    let mut expected: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for i in 0..JOBS {
        let skill = SKILLS[(i % 5) as usize];
        let n = i / 5;
        let fails = n.is_multiple_of(7) || (skill == "load_d" && n == 3);
        let e = expected.entry(skill).or_default();
        e.0 += 1;
        e.1 += u64::from(fails);
        // Every 100th job is bad input: it fails before the handler, and counts.
        let params = if i % 100 == 99 {
            json!({"n": "not a number"})
        } else {
            json!({ "n": n })
        };
        if i % 100 == 99 && !fails {
            e.1 += 1;
        }
        let rt = rt.clone();
        set.spawn(async move { (skill, rt.invoke(JobEnvelope::new(skill, params)).await) });
    }
    let results = set.join_all().await;
    assert_eq!(results.len() as u64, JOBS);

    let mut failures_seen: BTreeMap<&str, u64> = BTreeMap::new();
    for (skill, r) in &results {
        if let Err(e) = r {
            assert!(
                matches!(
                    e,
                    InvokeError::Failed { .. }
                        | InvokeError::InvalidInput { .. }
                        | InvokeError::Precondition { .. }
                ),
                "{e}"
            );
            *failures_seen.entry(skill).or_default() += 1;
        }
    }

    assert_eq!(sink.total(), JOBS, "one record per job");
    let records = sink.records();
    assert_eq!(records.len() as u64, JOBS);
    let mut ids: Vec<&str> = records.iter().map(|r| &*r.job_id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len() as u64, JOBS, "job ids are unique");

    let mut from_records: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for r in &records {
        let e = from_records.entry(&*r.skill).or_default();
        e.0 += 1;
        e.1 += u64::from(r.status == RunStatus::Failed);
    }
    assert_eq!(from_records, expected);

    let stats = rt.stats();
    assert_eq!(stats.len(), 5);
    for s in &stats {
        let name = s.skill.split('@').next().unwrap();
        assert_eq!((s.runs, s.failures), expected[name], "{}", s.skill);
        assert_eq!(failures_seen[name], s.failures);
        assert!(s.p50_us <= s.p90_us && s.p90_us <= s.p99_us && s.p99_us <= s.max_us);
    }
    assert_eq!(stats.iter().map(|s| s.runs).sum::<u64>(), JOBS);
    assert_eq!(stats[4].skill, "load_e@2.1.0");
}
