//! The queue on PostgreSQL against graphile-worker and pg-boss, side by side
//! on one local PostgreSQL started for the run: jobs per second from enqueue
//! to result with 1 and 2 worker processes, and enqueue-to-result latency
//! (p50, p99).
//!
//! Ours: `skill-examples worker --redis postgres://...` processes (release
//! build) running the example `echo` skill, and this process as the caller:
//! `QUEUE_BENCH_CLIENTS` tasks, each calling `Fleet::enqueue_and_wait` in a
//! loop. The peers: Node worker processes (`bench/pg_queues.mjs`) running an
//! equivalent job, and a driver with as many callers, each adding a job and
//! waiting for it before the next. Rounds alternate between the three so the
//! machine's noise falls on all; the medians are reported. Each side gets a
//! database of its own on the same server. Latency: one caller, one job at
//! a time, `QUEUE_BENCH_LATENCY` jobs, one worker.
//!
//! Run it with `bench/queue-postgres.sh`, which builds the worker and
//! installs the peers.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use skill_runtime::queue::fleet::{Fleet, FleetConfig};
use skill_tests::fleet::WorkerProcess;
use skill_tests::postgres::PostgresServer;
use skill_tests::root;

#[path = "support/fleet.rs"]
mod support;
use support::{env, env_n, median, ours, percentile};

/// A peer's workers, stopped when dropped.
struct Workers(Vec<Child>);

impl Drop for Workers {
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

/// A peer (`graphile`, `pgboss`), run from `QUEUE_BENCH_NODE_DIR` with the
/// Node of `QUEUE_BENCH_NODE`, on the database at `url`.
struct Peer {
    node: String,
    name: &'static str,
    id: &'static str,
    dir: std::path::PathBuf,
    url: String,
}

impl Peer {
    fn worker(&self, concurrency: &str) -> Child {
        let mut child = Command::new(&self.node)
            .args(["pg_queues.mjs", self.id, "worker", concurrency])
            .current_dir(&self.dir)
            .env("PG_URL", &self.url)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start a {} worker: {e}", self.name));
        // It says `ready` once it serves (after its own log lines).
        let mut out = std::io::BufReader::new(child.stdout.take().expect("piped"));
        loop {
            let mut line = String::new();
            let n = std::io::BufRead::read_line(&mut out, &mut line).expect("the worker starts");
            assert!(n > 0, "the {} worker exited before it served", self.name);
            if line.trim() == "ready" {
                break;
            }
        }
        // The rest of its output is not read: it must not block on it.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        child
    }

    fn drive(&self, mode: &str, jobs: usize, clients: usize) -> Value {
        let out = Command::new(&self.node)
            .args(["pg_queues.mjs", self.id, mode])
            .args([jobs.to_string(), clients.to_string()])
            .current_dir(&self.dir)
            .env("PG_URL", &self.url)
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

fn main() {
    let jobs = env_n("QUEUE_BENCH_JOBS", 10_000);
    let clients = env_n("QUEUE_BENCH_CLIENTS", 64);
    let latency_jobs = env_n("QUEUE_BENCH_LATENCY", 2_000);
    let rounds = env_n("QUEUE_BENCH_ROUNDS", 3);
    let concurrency = env("QUEUE_BENCH_CONCURRENCY", "64");
    let app = root()
        .join(env("QUEUE_BENCH_TARGET", "target/release"))
        .join("skill-examples");
    let pg = PostgresServer::start("queue-bench");
    // A database per side, on the one server.
    for db in ["ours", "graphile", "pgboss"] {
        pg.psql(&format!("CREATE DATABASE {db}"));
    }
    let base = pg.url();
    let db_url = |db: &str| base.replace("/postgres", &format!("/{db}"));
    let url = db_url("ours");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let backend = rt
        .block_on(Fleet::connect(FleetConfig::new(url.clone())))
        .expect("PostgreSQL is up");
    let peers: Vec<Peer> = match std::env::var("QUEUE_BENCH_NODE_DIR") {
        Ok(dir) => vec![
            Peer {
                node: env("QUEUE_BENCH_NODE", "node"),
                name: "graphile-worker",
                id: "graphile",
                dir: root().join(&dir),
                url: db_url("graphile"),
            },
            Peer {
                node: env("QUEUE_BENCH_NODE", "node"),
                name: "pg-boss",
                id: "pgboss",
                dir: root().join(&dir),
                url: db_url("pgboss"),
            },
        ],
        Err(_) => Vec::new(),
    };

    let worker_args = ["--concurrency", concurrency.as_str()];
    let mut table = Vec::new();
    for workers in [1usize, 2] {
        let mut ours_rates = Vec::new();
        let mut ours_ms = Vec::new();
        let mut theirs: Vec<(Vec<f64>, Vec<f64>)> =
            peers.iter().map(|_| Default::default()).collect();
        for r in 0..rounds {
            let mut fleet: Vec<WorkerProcess> = (0..workers)
                .map(|_| WorkerProcess::start_binary(&app, &url, &worker_args))
                .collect();
            // Warm up: connections made, plans cached.
            rt.block_on(ours(&backend, 200, clients.min(200)));
            let (secs, ms) = rt.block_on(ours(&backend, jobs, clients));
            for w in &mut fleet {
                w.stop();
            }
            ours_rates.push(jobs as f64 / secs);
            ours_ms.push(percentile(&ms, 50.0));
            eprintln!(
                "round {r}, {workers} worker(s): skill-runtime   {:>8.0} jobs/s",
                jobs as f64 / secs
            );
            for (peer, (rates, p50s)) in peers.iter().zip(&mut theirs) {
                let fleet = Workers((0..workers).map(|_| peer.worker(&concurrency)).collect());
                peer.drive("throughput", 200, clients.min(200));
                let v = peer.drive("throughput", jobs, clients);
                drop(fleet);
                let rate = jobs as f64 / v["seconds"].as_f64().expect("seconds");
                rates.push(rate);
                p50s.push(v["p50_ms"].as_f64().unwrap_or(f64::NAN));
                eprintln!(
                    "round {r}, {workers} worker(s): {:<15} {rate:>8.0} jobs/s",
                    peer.name
                );
            }
        }
        let theirs: Vec<(f64, f64)> = theirs
            .iter_mut()
            .map(|(rates, p50s)| (median(rates), median(p50s)))
            .collect();
        table.push((
            workers,
            median(&mut ours_rates),
            median(&mut ours_ms),
            theirs,
        ));
    }

    // Latency: one worker, one job at a time.
    let mut one = WorkerProcess::start_binary(&app, &url, &worker_args);
    rt.block_on(ours(&backend, 100, 1));
    let (_, ms) = rt.block_on(ours(&backend, latency_jobs, 1));
    one.stop();
    let latencies: Vec<Value> = peers
        .iter()
        .map(|peer| {
            let fleet = Workers(vec![peer.worker(&concurrency)]);
            peer.drive("latency", 100, 1);
            let v = peer.drive("latency", latency_jobs, 1);
            drop(fleet);
            v
        })
        .collect();

    println!(
        "queue on one local PostgreSQL, the `echo` job, {jobs} jobs per round, median of {rounds} rounds \
         ({clients} callers each waiting for its job, workers of concurrency {concurrency}):"
    );
    for (workers, ours, p50, theirs) in &table {
        println!(
            "  {workers} worker(s): skill-runtime   {ours:>8.0} jobs/s (p50 under load {p50:.1} ms)"
        );
        for (peer, (t, tp)) in peers.iter().zip(theirs) {
            println!(
                "               {:<15} {t:>8.0} jobs/s (p50 under load {tp:.1} ms); ours / theirs {:.2}x",
                peer.name,
                ours / t
            );
        }
    }
    println!(
        "  latency, 1 worker, one job at a time ({latency_jobs} jobs): skill-runtime p50 {:.3} ms, p99 {:.3} ms",
        percentile(&ms, 50.0),
        percentile(&ms, 99.0)
    );
    for (peer, v) in peers.iter().zip(&latencies) {
        println!(
            "                                                       {:<15} p50 {:.3} ms, p99 {:.3} ms",
            peer.name,
            v["p50_ms"].as_f64().unwrap_or(f64::NAN),
            v["p99_ms"].as_f64().unwrap_or(f64::NAN)
        );
    }
}
