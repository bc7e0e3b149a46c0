#!/usr/bin/env bash
# Server-side instructions per tools/call, counted by callgrind for our server and
# the plain rmcp baseline: repeatable where wall time on a shared machine is not.
# Each server runs under callgrind twice, for 0 and for N calls after the same
# handshake; (instructions(N) - instructions(0)) / N is the per-call cost,
# transport, JSON-RPC and rmcp included, start-up excluded (and the step clock's
# calibration, a busy loop bounded by time, whose length varies between runs).
# WARMUP calls run first in both counts (default 0). With WARMUP >= 10000 our
# server's in-memory record sink is full, as in a server that has been up for a
# while: each call then frees the oldest record instead of growing the heap.
#   bench/mcp-instructions.sh [N] [WARMUP]     (default 2000 0)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
warmup=${2:-0}
cargo build -q --release -p skill-examples -p plain-rmcp
cargo bench -q --bench mcp --no-run 2>/dev/null
wrap=$(mktemp -d)
trap 'rm -rf "$wrap"' EXIT
for bin in skill-examples plain-rmcp; do
  cat >"$wrap/$bin" <<SH
#!/bin/sh
exec valgrind --tool=callgrind --toggle-collect='*calibrate_step_clock*' --collect-atstart=yes --callgrind-out-file=/dev/null --log-file="$wrap/log.$bin.\$\$" "$PWD/target/release/$bin" "\$@"
SH
  chmod +x "$wrap/$bin"
done
count() { # label calls -> total instructions of that server's process
  rm -f "$wrap"/log.*
  MCP_BENCH_ONLY="$1" MCP_BENCH_ROUNDS=1 MCP_BENCH_CALLS="$2" MCP_BENCH_WARMUP="$warmup" \
    MCP_BENCH_TARGET="$wrap" cargo bench -q --bench mcp >/dev/null 2>&1
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$wrap"/log.*
}
declare -A per
for label in "skill-runtime" "plain rmcp"; do
  zero=$(count "$label" 1)
  full=$(count "$label" "$((n + 1))")
  per[$label]=$(( (full - zero) / n ))
  printf '%-14s %8d instructions per tools/call\n' "$label" "${per[$label]}"
done
awk -v a="${per[skill-runtime]}" -v b="${per[plain rmcp]}" 'BEGIN {
  printf "skill-runtime / plain rmcp = %.2fx instructions per call (goal for time: at most 1.2x)\n", a / b
}'
