//! The queue on Redis against Celery and BullMQ, side by side on one local
//! `redis-server`:
//! jobs per second from enqueue to result with 1 and 2 worker processes, Redis
//! round trips and commands per job, and enqueue-to-result latency.
//!
//! Ours: `skill-examples worker` processes (release build) running the example
//! `echo` skill, and this process as the caller: `QUEUE_BENCH_CLIENTS` tasks,
//! each calling `RedisBackend::enqueue_and_wait` in a loop. Celery: `celery
//! worker` processes running an equivalent task (`bench/celery_echo.py`), and
//! its natural caller: every `delay()` first, then every `get()`. BullMQ:
//! Node worker processes (`bench/bullmq_echo.mjs`), and every `Queue.add` at
//! once, the results heard by one `QueueEvents` listener, as BullMQ advises
//! for many jobs. Each side
//! runs its trivial job `QUEUE_BENCH_JOBS` times per round; rounds alternate
//! between the three so the machine's noise falls on both; the medians are
//! reported. Latency: one caller, one job at a time, `QUEUE_BENCH_LATENCY`
//! jobs, one worker.
//!
//! Round trips: ours counts every request it sends (`RedisBackend::round_trips`
//! in the caller, and each worker says its count when it stops). Commands:
//! `INFO commandstats` before and after, for both; a Lua script's own
//! commands count there too, so this is the server's work, not the network's.
//!
//! Run it with `bench/queue.sh`, which builds the worker and installs Celery
//! and BullMQ.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use skill_runtime::queue::redis::{RedisBackend, RedisConfig};
use skill_runtime::record::RunStatus;
use skill_tests::fleet::{RedisServer, WorkerProcess};
use skill_tests::root;

#[path = "support/fleet.rs"]
mod support;
use support::{echo_job, env, env_n, median, percentile};

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

/// A peer queue measured the same way: worker processes, and a driver that
/// enqueues and awaits the jobs and prints JSON (`bench/celery_echo.py`,
/// `bench/bullmq_echo.mjs`).
struct Peer {
    name: &'static str,
    /// The interpreter (`python`, `node`).
    program: String,
    /// The worker's arguments, and the driver's before its mode and count.
    worker: Vec<String>,
    driver: Vec<String>,
    /// Where the scripts run (and where their modules are found).
    dir: std::path::PathBuf,
    /// The variable that gives the scripts Redis's URL.
    url_var: &'static str,
    url: String,
    /// How the workers were configured, for the report.
    config: String,
}

impl Peer {
    fn worker(&self) -> Child {
        Command::new(&self.program)
            .args(&self.worker)
            .current_dir(&self.dir)
            .env(self.url_var, &self.url)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start a {} worker: {e}", self.name))
    }

    fn drive(&self, mode: &str, jobs: usize) -> Value {
        let out = Command::new(&self.program)
            .args(&self.driver)
            .args([mode, &jobs.to_string()])
            .current_dir(&self.dir)
            .env(self.url_var, &self.url)
            .output()
            .unwrap_or_else(|e| panic!("run the {} driver: {e}", self.name));
        assert!(
            out.status.success(),
            "{} driver failed: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("the driver prints JSON")
    }
}

/// The peers whose interpreters `bench/queue.sh` installed: Celery with
/// `QUEUE_BENCH_PYTHON`, BullMQ with `QUEUE_BENCH_NODE_DIR` (its modules and
/// script there).
fn peers(url: &str, concurrency: &str) -> Vec<Peer> {
    let mut peers = Vec::new();
    if let Ok(python) = std::env::var("QUEUE_BENCH_PYTHON") {
        let args = env("QUEUE_BENCH_CELERY_ARGS", "");
        let mut worker: Vec<String> = ["-m", "celery", "-A", "celery_echo", "worker"]
            .map(String::from)
            .into();
        worker.extend(args.split_whitespace().map(String::from));
        worker.extend(
            [
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel=warning",
            ]
            .map(String::from),
        );
        peers.push(Peer {
            name: "Celery",
            // Run from bench/: a relative path is the workspace's.
            program: root().join(python).display().to_string(),
            worker,
            driver: vec!["celery_echo.py".to_owned()],
            dir: root().join("bench"),
            url_var: "CELERY_BROKER",
            url: url.to_owned(),
            config: match args.as_str() {
                "" => "its defaults, a prefork pool of one process per core".to_owned(),
                a => a.to_owned(),
            },
        });
    }
    if let Ok(dir) = std::env::var("QUEUE_BENCH_NODE_DIR") {
        let concurrency = env("QUEUE_BENCH_BULLMQ_CONCURRENCY", concurrency);
        peers.push(Peer {
            name: "BullMQ",
            program: "node".to_owned(),
            worker: vec![
                "bullmq_echo.mjs".to_owned(),
                "worker".to_owned(),
                concurrency.clone(),
            ],
            driver: vec!["bullmq_echo.mjs".to_owned()],
            dir: root().join(dir),
            url_var: "BULLMQ_REDIS",
            url: url.to_owned(),
            config: format!("one Node process per worker, concurrency {concurrency}"),
        });
    }
    peers
}

/// A peer's workers, stopped when dropped: a driver that fails (the bench
/// panics) leaves none running, and a worker that does not stop within ten
/// seconds of SIGTERM is killed rather than waited on for good.
struct Fleet(Vec<Child>);

impl Drop for Fleet {
    fn drop(&mut self) {
        for c in &self.0 {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(c.id().to_string())
                .status();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        for c in &mut self.0 {
            while matches!(c.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
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
    let peers = peers(&url, &concurrency);

    let worker_args = ["--concurrency", concurrency.as_str()];
    let mut table = Vec::new();
    for workers in [1usize, 2] {
        let mut ours = Vec::new();
        let (mut trips, mut ours_cmds) = (Vec::new(), Vec::new());
        // Per peer: jobs/s and commands/job of each round.
        let mut theirs: Vec<(Vec<f64>, Vec<f64>)> =
            peers.iter().map(|_| Default::default()).collect();
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

            for (peer, (rates, cmds)) in peers.iter().zip(&mut theirs) {
                redis.cli(&["flushall"]);
                let fleet = Fleet((0..workers).map(|_| peer.worker()).collect());
                // The driver's own warm-up waits for the workers.
                peer.drive("throughput", 200);
                let c0 = commands(&redis);
                let v = peer.drive("throughput", jobs);
                let c1 = commands(&redis);
                drop(fleet);
                let rate = jobs as f64 / v["seconds"].as_f64().expect("seconds");
                rates.push(rate);
                cmds.push((c1 - c0) as f64 / jobs as f64);
                eprintln!(
                    "round {r}, {workers} worker(s): {:<13} {rate:>8.0} jobs/s",
                    peer.name
                );
            }
        }
        let theirs: Vec<(f64, f64)> = theirs
            .iter_mut()
            .map(|(rates, cmds)| (median(rates), median(cmds)))
            .collect();
        table.push((
            workers,
            median(&mut ours),
            median(&mut trips),
            median(&mut ours_cmds),
            theirs,
        ));
    }

    // Latency: one worker, one job at a time.
    redis.cli(&["flushall"]);
    let mut one = WorkerProcess::start_binary(&app, &url, &worker_args);
    rt.block_on(ours_latency(&backend, 200));
    let ms = rt.block_on(ours_latency(&backend, latency_jobs));
    one.stop();
    let latencies: Vec<Value> = peers
        .iter()
        .map(|peer| {
            redis.cli(&["flushall"]);
            let fleet = Fleet(vec![peer.worker()]);
            peer.drive("latency", 100);
            let v = peer.drive("latency", latency_jobs);
            drop(fleet);
            v
        })
        .collect();

    let configs: Vec<String> = peers
        .iter()
        .map(|p| format!("; {}: {}", p.name, p.config))
        .collect();
    println!(
        "queue on one local redis-server, the `echo` job, {jobs} jobs per round, median of {rounds} rounds \
         (skill-runtime: {clients} callers, workers --concurrency {concurrency}{}):",
        configs.concat()
    );
    for (workers, ours, trips, cmds, theirs) in &table {
        println!(
            "  {workers} worker(s): skill-runtime {ours:>8.0} jobs/s, {trips:.2} round trips/job, {cmds:.1} commands/job"
        );
        for (peer, (t, tc)) in peers.iter().zip(theirs) {
            println!(
                "               {:<13} {t:>8.0} jobs/s, {tc:.1} commands/job; ours / theirs {:.1}x",
                peer.name,
                ours / t
            );
        }
    }
    println!(
        "  latency, 1 worker, one job at a time ({latency_jobs} jobs): skill-runtime p50 {:.3} ms, p99 {:.3} ms (goal: p50 at most 1 ms)",
        percentile(&ms, 50.0),
        percentile(&ms, 99.0)
    );
    for (peer, v) in peers.iter().zip(&latencies) {
        println!(
            "                                                      {:<13} p50 {:.3} ms, p99 {:.3} ms",
            peer.name,
            v["p50_ms"].as_f64().unwrap_or(f64::NAN),
            v["p99_ms"].as_f64().unwrap_or(f64::NAN)
        );
    }
}
