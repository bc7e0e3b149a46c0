//! What the queue benchmarks share: their knobs, the job, the callers, and
//! the statistics.

#![allow(dead_code, reason = "each benchmark uses its part")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use skill_runtime::JobEnvelope;
use skill_runtime::queue::fleet::Fleet;
use skill_runtime::record::RunStatus;

pub fn env(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_owned())
}

pub fn env_n(key: &str, default: usize) -> usize {
    env(key, &default.to_string())
        .parse()
        .unwrap_or_else(|_| panic!("{key} is a number"))
}

pub fn echo_job(i: usize) -> JobEnvelope {
    JobEnvelope::new("echo", json!({"message": format!("message {i}")}))
}

/// `jobs` jobs through `clients` callers, each waiting for its job's outcome
/// before it sends the next: seconds taken, and the latencies in ms, sorted.
pub async fn ours(backend: &Fleet, jobs: usize, clients: usize) -> (f64, Vec<f64>) {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (b, next) = (backend.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut ms = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs {
                    return ms;
                }
                let t = Instant::now();
                let (_, outcome) = b
                    .enqueue_and_wait(echo_job(i), Duration::from_secs(60))
                    .await
                    .expect("enqueue");
                let outcome = outcome.expect("an outcome within 60 s");
                assert_eq!(outcome.status, RunStatus::Succeeded, "{outcome:?}");
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }));
    }
    let mut ms = Vec::new();
    for t in tasks {
        ms.extend(t.await.expect("caller task"));
    }
    ms.sort_by(f64::total_cmp);
    (start.elapsed().as_secs_f64(), ms)
}

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((p / 100.0 * sorted.len() as f64).round() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
