#!/usr/bin/env bash
# The queue on Redis against Celery, on one local redis-server started for the
# run: jobs/s enqueue -> result with 1 and 2 workers, Redis round trips and
# commands per job, p50/p99 latency. Installs Celery into a venv; needs
# redis-server and redis-cli (Debian: apt-get install redis-server).
#   bench/queue.sh [JOBS] [ROUNDS]     (default 10000 3)
# More knobs (environment): QUEUE_BENCH_CLIENTS (64), QUEUE_BENCH_CONCURRENCY
# (64, ours), QUEUE_BENCH_CELERY_ARGS (none: Celery's defaults, a prefork pool of one process per core),
# QUEUE_BENCH_LATENCY (2000 jobs).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-venv-celery
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import celery, redis' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "celery[redis]>=5.7,<5.8"
fi
"$venv/bin/python" -c 'import celery; print("Celery", celery.__version__)'
redis-server --version
cargo build -q --release -p skill-examples
QUEUE_BENCH_JOBS="${1:-10000}" QUEUE_BENCH_ROUNDS="${2:-3}" QUEUE_BENCH_PYTHON="$venv/bin/python" \
  cargo bench -q --bench queue
