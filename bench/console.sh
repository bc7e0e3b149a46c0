#!/usr/bin/env bash
# The console on real volumes: each page's render time with 100,000 run
# records in the store, on a Redis and on a PostgreSQL started for the run
# (benches/console.rs says how the records are made and how pages are
# asked for). Needs redis-server and PostgreSQL (Debian: apt-get install
# redis-server postgresql).
#   bench/console.sh [RECORDS] [ROUNDS]     (default 100000 30)
set -euo pipefail
cd "$(dirname "$0")/.."
CONSOLE_BENCH_RECORDS="${1:-100000}" CONSOLE_BENCH_ROUNDS="${2:-30}" cargo bench -q --bench console
