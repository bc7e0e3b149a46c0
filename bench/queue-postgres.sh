#!/usr/bin/env bash
# The queue on PostgreSQL against graphile-worker and pg-boss, on one local
# PostgreSQL started for the run (a throwaway cluster; as the `postgres`
# user when run as root): jobs/s enqueue -> result with 1 and 2 workers,
# p50 under load, and p50/p99 latency one job at a time. Installs the peers
# (npm, with the Node 22 they need, from npm's `node@22`) into
# target/bench-node-pg; needs PostgreSQL (Debian: apt-get install postgresql)
# and npm.
#   bench/queue-postgres.sh [JOBS] [ROUNDS]     (default 10000 3)
# More knobs (environment): QUEUE_BENCH_CLIENTS (64), QUEUE_BENCH_CONCURRENCY
# (64, every side's workers), QUEUE_BENCH_LATENCY (2000 jobs).
set -euo pipefail
cd "$(dirname "$0")/.."
node_dir=target/bench-node-pg
node="$node_dir/node_modules/.bin/node"
if [ ! -f "$node_dir/node_modules/pg-boss/package.json" ] || [ ! -f "$node_dir/node_modules/graphile-worker/package.json" ] || [ ! -x "$node" ]; then
  mkdir -p "$node_dir"
  npm install -q --no-audit --no-fund --prefix "$node_dir" "graphile-worker@~0.18.0" "pg-boss@~12.38.0" "pg@^8" "node@22" >/dev/null
fi
# The script runs beside its modules (ES modules resolve from the file's place).
cp bench/pg_queues.mjs "$node_dir/"
"$node" -e 'const d = process.argv[1] + "/node_modules/"; console.log("graphile-worker", require(d + "graphile-worker/package.json").version, "pg-boss", require(d + "pg-boss/package.json").version, "on Node", process.version)' "$PWD/$node_dir"
cargo build -q --release -p skill-examples
QUEUE_BENCH_JOBS="${1:-10000}" QUEUE_BENCH_ROUNDS="${2:-3}" QUEUE_BENCH_NODE_DIR="$node_dir" QUEUE_BENCH_NODE="$PWD/$node" \
  cargo bench -q --bench queue_postgres
