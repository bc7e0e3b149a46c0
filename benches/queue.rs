//! The queue on Redis against Celery, side by side on one local `redis-server`:
//! jobs per second from enqueue to result with 1 and 2 worker processes, Redis
//! round trips and commands per job, and enqueue-to-result latency.
//!
//! Ours: `skill-examples worker` processes (release build) running the example
//! `echo` skill, and this process as the caller: `QUEUE_BENCH_CLIENTS` tasks,
//! each calling `RedisBackend::enqueue_and_wait` in a loop. Celery: `celery
//! worker` processes running an equivalent task (`bench/celery_echo.py`), and
//! its natural caller: every `delay()` first, then every `get()`. Each side
//! runs its trivial job `QUEUE_BENCH_JOBS` times per round; rounds alternate
//! between the two so the machine's noise falls on both; the medians are
//! reported. Latency: one caller, one job at a time, `QUEUE_BENCH_LATENCY`
//! jobs, one worker.
//!
//! Round trips: ours counts every request it sends (`RedisBackend::round_trips`
//! in the caller, and each worker says its count when it stops). Commands:
//! `INFO commandstats` before and after, for both; a Lua script's own
//! commands count there too, so this is the server's work, not the network's.
//!
//! Run it with `bench/queue.sh`, which builds the worker and installs Celery.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skill_runtime::JobEnvelope;
use skill_runtime::queue::redis::{RedisBackend, RedisConfig};
use skill_runtime::record::RunStatus;
use skill_tests::fleet::{RedisServer, WorkerProcess};
use skill_tests::root;

fn env(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_owned())
}

fn env_n(key: &str, default: usize) -> usize {
    env(key, &default.to_string())
        .parse()
        .unwrap_or_else(|_| panic!("{key} is a number"))
}

/// Calls of every command so far, but INFO and FLUSHALL (the benchmark's own).
fn commands(redis: &RedisServer) -> u64 {
    redis
        .cli(&["info", "commandstats"])
        .lines()
        .filter(|l| !l.starts_with("cmdstat_info:") && !l.starts_with("cmdstat_flushall:"))
        .filter_map(|l| {
            l.split("calls=")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

fn echo_job(i: usize) -> JobEnvelope {
    JobEnvelope::new("echo", json!({"message": format!("message {i}")}))
}

/// `jobs` jobs through `clients` callers, each waiting for its job's outcome
/// before it sends the next: seconds taken and the caller's round trips.
async fn ours_throughput(backend: &RedisBackend, jobs: usize, clients: usize) -> (f64, u64) {
    let before = backend.round_trips();
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (b, next) = (backend.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs {
                    break;
                }
                let (_, outcome) = b
                    .enqueue_and_wait(echo_job(i), Duration::from_secs(60))
                    .await
                    .expect("enqueue");
                let outcome = outcome.expect("an outcome within 60 s");
                assert_eq!(outcome.status, RunStatus::Succeeded, "{outcome:?}");
            }
        }));
    }
    for t in tasks {
        t.await.expect("caller task");
    }
    (
        start.elapsed().as_secs_f64(),
        backend.round_trips() - before,
    )
}

/// `jobs` jobs one after the other: the latencies in ms, sorted.
async fn ours_latency(backend: &RedisBackend, jobs: usize) -> Vec<f64> {
    let mut ms = Vec::with_capacity(jobs);
    for i in 0..jobs {
        let start = Instant::now();
        let (_, outcome) = backend
            .enqueue_and_wait(echo_job(i), Duration::from_secs(60))
            .await
            .expect("enqueue");
        assert!(outcome.is_some(), "an outcome within 60 s");
        ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    ms
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((p / 100.0 * sorted.len() as f64).round() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The requests a worker said it sent, from its last line.
fn worker_requests(w: &WorkerProcess) -> u64 {
    w.said()
        .iter()
        .rev()
        .find_map(|l| {
            let (_, tail) = l.split_once("; ")?;
            tail.strip_suffix(" requests to Redis")?.parse().ok()
        })
        .unwrap_or_else(|| panic!("worker {} did not say its requests: {:?}", w.name, w.said()))
}

struct Celery {
    python: String,
    url: String,
}

impl Celery {
    fn worker(&self) -> Child {
        Command::new(&self.python)
            .args(["-m", "celery", "-A", "celery_echo", "worker"])
            .args(env("QUEUE_BENCH_CELERY_ARGS", "").split_whitespace())
            .args([
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel=warning",
            ])
            .current_dir(root().join("bench"))
            .env("CELERY_BROKER", &self.url)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a Celery worker")
    }

    fn drive(&self, mode: &str, jobs: usize) -> Value {
        let out = Command::new(&self.python)
            .args(["celery_echo.py", mode, &jobs.to_string()])
            .current_dir(root().join("bench"))
            .env("CELERY_BROKER", &self.url)
            .output()
            .expect("run the Celery driver");
        assert!(
            out.status.success(),
            "Celery driver failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("the driver prints JSON")
    }
}

fn stop(children: Vec<Child>) {
    for mut c in children {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(c.id().to_string())
            .status();
        let _ = c.wait();
    }
}

fn main() {
    let jobs = env_n("QUEUE_BENCH_JOBS", 10_000);
    let clients = env_n("QUEUE_BENCH_CLIENTS", 64);
    let latency_jobs = env_n("QUEUE_BENCH_LATENCY", 2_000);
    let rounds = env_n("QUEUE_BENCH_ROUNDS", 3);
    let concurrency = env("QUEUE_BENCH_CONCURRENCY", "64");
    let app = root()
        .join(env("QUEUE_BENCH_TARGET", "target/release"))
        .join("skill-examples");
    let celery = std::env::var("QUEUE_BENCH_PYTHON").ok();
    let redis = RedisServer::start("queue-bench");
    let url = redis.url();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let backend = rt
        .block_on(RedisBackend::connect(RedisConfig::new(url.clone())))
        .expect("redis is up");
    let celery = celery.map(|python| Celery {
        // Run from bench/: a relative path is the workspace's.
        python: root().join(python).display().to_string(),
        url: url.clone(),
    });

    let worker_args = ["--concurrency", concurrency.as_str()];
    let mut table = Vec::new();
    for workers in [1usize, 2] {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let (mut trips, mut ours_cmds, mut theirs_cmds) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..rounds {
            redis.cli(&["flushall"]);
            let mut fleet: Vec<WorkerProcess> = (0..workers)
                .map(|_| WorkerProcess::start_binary(&app, &url, &worker_args))
                .collect();
            // Warm up: connections made, scripts loaded.
            rt.block_on(ours_throughput(&backend, 200, clients.min(200)));
            let c0 = commands(&redis);
            let (secs, caller_trips) = rt.block_on(ours_throughput(&backend, jobs, clients));
            let c1 = commands(&redis);
            let mut worker_trips = 0;
            for w in &mut fleet {
                w.stop();
                worker_trips += worker_requests(w);
            }
            // The workers' count covers the warm-up jobs too.
            trips.push(
                (caller_trips as f64 + worker_trips as f64 * jobs as f64 / (jobs + 200) as f64)
                    / jobs as f64,
            );
            ours_cmds.push((c1 - c0) as f64 / jobs as f64);
            ours.push(jobs as f64 / secs);
            eprintln!(
                "round {r}, {workers} worker(s): skill-runtime {:>8.0} jobs/s",
                jobs as f64 / secs
            );

            if let Some(celery) = &celery {
                redis.cli(&["flushall"]);
                let fleet: Vec<Child> = (0..workers).map(|_| celery.worker()).collect();
                // The driver's own warm-up waits for the workers.
                celery.drive("throughput", 200);
                let c0 = commands(&redis);
                let v = celery.drive("throughput", jobs);
                let c1 = commands(&redis);
                stop(fleet);
                let rate = jobs as f64 / v["seconds"].as_f64().expect("seconds");
                theirs.push(rate);
                theirs_cmds.push((c1 - c0) as f64 / jobs as f64);
                eprintln!("round {r}, {workers} worker(s): Celery        {rate:>8.0} jobs/s");
            }
        }
        table.push((
            workers,
            median(&mut ours),
            median(&mut trips),
            median(&mut ours_cmds),
            (!theirs.is_empty()).then(|| (median(&mut theirs), median(&mut theirs_cmds))),
        ));
    }

    // Latency: one worker, one job at a time.
    redis.cli(&["flushall"]);
    let mut one = WorkerProcess::start_binary(&app, &url, &worker_args);
    rt.block_on(ours_latency(&backend, 200));
    let ms = rt.block_on(ours_latency(&backend, latency_jobs));
    one.stop();
    let celery_latency = celery.as_ref().map(|celery| {
        redis.cli(&["flushall"]);
        let fleet = vec![celery.worker()];
        celery.drive("latency", 100);
        let v = celery.drive("latency", latency_jobs);
        stop(fleet);
        v
    });

    let celery_args = match env("QUEUE_BENCH_CELERY_ARGS", "") {
        a if a.is_empty() => "its defaults, a prefork pool of one process per core".to_owned(),
        a => a,
    };
    println!(
        "queue on one local redis-server, the `echo` job, {jobs} jobs per round, median of {rounds} rounds \
         (skill-runtime: {clients} callers, workers --concurrency {concurrency}; Celery: {celery_args}):"
    );
    for (workers, ours, trips, cmds, theirs) in &table {
        print!(
            "  {workers} worker(s): skill-runtime {ours:>8.0} jobs/s, {trips:.2} round trips/job, {cmds:.1} commands/job"
        );
        match theirs {
            Some((t, tc)) => println!(
                " | Celery {t:>6.0} jobs/s, {tc:.1} commands/job | ratio {:.1}x (goal: at least 10x)",
                ours / t
            ),
            None => println!(),
        }
    }
    println!(
        "  latency, 1 worker, one job at a time ({latency_jobs} jobs): skill-runtime p50 {:.3} ms, p99 {:.3} ms (goal: p50 at most 1 ms)",
        percentile(&ms, 50.0),
        percentile(&ms, 99.0)
    );
    if let Some(v) = celery_latency {
        println!(
            "                                                      Celery        p50 {:.3} ms, p99 {:.3} ms",
            v["p50_ms"].as_f64().unwrap_or(f64::NAN),
            v["p99_ms"].as_f64().unwrap_or(f64::NAN)
        );
    }
}
