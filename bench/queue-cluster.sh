#!/usr/bin/env bash
# The queue on a local Redis Cluster (three primaries, one replica each,
# started for the run) beside one local redis-server, same jobs and callers:
# jobs/s enqueue -> result with 2 workers, p50/p99 under load, and the cost
# of --replicas 1 (WAIT). Needs redis-server and redis-cli (Debian:
# apt-get install redis-server).
#   bench/queue-cluster.sh [JOBS] [ROUNDS]     (default 10000 3)
# More knobs (environment): QUEUE_BENCH_CLIENTS (64), QUEUE_BENCH_CONCURRENCY
# (64 per worker).
set -euo pipefail
cd "$(dirname "$0")/.."
redis-server --version
cargo build -q --release -p skill-examples
QUEUE_BENCH_JOBS="${1:-10000}" QUEUE_BENCH_ROUNDS="${2:-3}" \
  cargo bench -q --bench queue_cluster
