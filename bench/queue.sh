#!/usr/bin/env bash
# The queue on Redis against Celery and BullMQ, on one local redis-server
# started for the run: jobs/s enqueue -> result with 1 and 2 workers, Redis
# round trips and commands per job, p50/p99 latency. Installs Celery into a
# venv and BullMQ (with ioredis) into target/bench-node-bullmq; needs
# redis-server and redis-cli (Debian: apt-get install redis-server), python3
# with venv, and Node.js 18 or later with npm.
#   bench/queue.sh [JOBS] [ROUNDS]     (default 10000 3)
# More knobs (environment): QUEUE_BENCH_CLIENTS (64), QUEUE_BENCH_CONCURRENCY
# (64, ours; BullMQ's per worker too, unless QUEUE_BENCH_BULLMQ_CONCURRENCY),
# QUEUE_BENCH_CELERY_ARGS (none: Celery's defaults, a prefork pool of one process per core),
# QUEUE_BENCH_LATENCY (2000 jobs).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-venv-celery
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import celery, redis' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "celery[redis]>=5.7,<5.8"
fi
"$venv/bin/python" -c 'import celery; print("Celery", celery.__version__)'
node_dir=target/bench-node-bullmq
if [ ! -f "$node_dir/node_modules/bullmq/package.json" ]; then
  mkdir -p "$node_dir"
  npm install -q --no-audit --no-fund --prefix "$node_dir" "bullmq@~6.7.0" "ioredis@^6" >/dev/null
fi
# The script runs beside its modules (ES modules resolve from the file's place).
cp bench/bullmq_echo.mjs "$node_dir/"
node -e 'console.log("BullMQ", require(process.argv[1] + "/node_modules/bullmq/package.json").version, "on Node", process.version)' "$PWD/$node_dir"
redis-server --version
cargo build -q --release -p skill-examples
QUEUE_BENCH_JOBS="${1:-10000}" QUEUE_BENCH_ROUNDS="${2:-3}" QUEUE_BENCH_PYTHON="$venv/bin/python" QUEUE_BENCH_NODE_DIR="$node_dir" \
  cargo bench -q --bench queue
