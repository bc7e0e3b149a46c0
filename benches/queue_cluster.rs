//! The queue on a local Redis Cluster (three primaries, one replica each)
//! beside one `redis-server`, same jobs and callers: jobs per second from
//! enqueue to result with two worker processes, p50 and p99 under that load,
//! and the cost of acknowledging every queueing and outcome only once a
//! replica holds it (`--replicas 1`, Redis `WAIT`).
//!
//! Ours only, three ways: one server; the cluster; the cluster with
//! `--replicas 1` (callers and workers alike). `QUEUE_BENCH_CLIENTS` tasks
//! each call `Fleet::enqueue_and_wait` in a loop; rounds alternate between
//! the three so the machine's noise falls on all; the medians are reported.
//!
//! Run it with `bench/queue-cluster.sh`, which builds the worker.

use skill_runtime::queue::fleet::{Fleet, FleetConfig};
use skill_tests::cluster::RedisCluster;
use skill_tests::fleet::{RedisServer, WorkerProcess};
use skill_tests::root;

#[path = "support/fleet.rs"]
mod support;
use support::{env, env_n, median, ours, percentile};

/// One way of running the queue.
struct Setup {
    name: &'static str,
    url: String,
    replicas: u32,
}

fn main() {
    let jobs = env_n("QUEUE_BENCH_JOBS", 10_000);
    let clients = env_n("QUEUE_BENCH_CLIENTS", 64);
    let rounds = env_n("QUEUE_BENCH_ROUNDS", 3);
    let concurrency = env("QUEUE_BENCH_CONCURRENCY", "64");
    let app = root()
        .join(env("QUEUE_BENCH_TARGET", "target/release"))
        .join("skill-examples");
    let server = RedisServer::start("cluster-bench-one");
    let cluster = RedisCluster::start("cluster-bench");
    let setups = [
        Setup {
            name: "one server",
            url: server.url(),
            replicas: 0,
        },
        Setup {
            name: "cluster",
            url: cluster.url(),
            replicas: 0,
        },
        Setup {
            name: "cluster, --replicas 1",
            url: cluster.url(),
            replicas: 1,
        },
    ];
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    // Per setup: jobs/s, p50 and p99 of each round.
    let mut results: Vec<[Vec<f64>; 3]> = setups.iter().map(|_| Default::default()).collect();
    for r in 0..rounds {
        for (setup, out) in setups.iter().zip(&mut results) {
            server.cli(&["flushall"]);
            cluster.flush();
            let replicas = setup.replicas.to_string();
            let args = [
                "--concurrency",
                concurrency.as_str(),
                "--replicas",
                replicas.as_str(),
            ];
            let mut fleet: Vec<WorkerProcess> = (0..2)
                .map(|_| WorkerProcess::start_binary(&app, &setup.url, &args))
                .collect();
            let backend = rt
                .block_on(Fleet::connect(FleetConfig {
                    replicas: setup.replicas,
                    ..FleetConfig::new(setup.url.as_str())
                }))
                .expect("the store is up");
            // Warm up: connections made, scripts loaded.
            rt.block_on(ours(&backend, 200, clients.min(200)));
            let (secs, ms) = rt.block_on(ours(&backend, jobs, clients));
            for w in &mut fleet {
                w.stop();
            }
            let rate = jobs as f64 / secs;
            out[0].push(rate);
            out[1].push(percentile(&ms, 50.0));
            out[2].push(percentile(&ms, 99.0));
            eprintln!("round {r}: {:<22} {rate:>8.0} jobs/s", setup.name);
        }
    }
    let medians: Vec<[f64; 3]> = results
        .iter_mut()
        .map(|[rate, p50, p99]| [median(rate), median(p50), median(p99)])
        .collect();
    println!(
        "queue on one local redis-server and on a local Redis Cluster (3 primaries, 1 replica each), \
         the `echo` job, 2 workers --concurrency {concurrency}, {clients} callers, {jobs} jobs per round, \
         median of {rounds} rounds:"
    );
    let one = medians[0][0];
    for (setup, [rate, p50, p99]) in setups.iter().zip(&medians) {
        println!(
            "  {:<22} {rate:>8.0} jobs/s ({:.2}x one server), p50 {p50:.2} ms, p99 {p99:.2} ms under load",
            setup.name,
            rate / one
        );
    }
    println!(
        "  the cost of WAIT (--replicas 1 against none, on the cluster): {:.2}x the jobs/s, p50 +{:.2} ms",
        medians[2][0] / medians[1][0],
        medians[2][1] - medians[1][1]
    );
}
