#!/usr/bin/env bash
# Instructions per operation of the invocation benchmark, counted by callgrind:
# repeatable on a shared machine, where wall time is not. For each operation,
# (instructions of N calls - instructions of 0 calls) / N, so set-up is excluded.
# Both runs first fill the in-memory record sink (steady state: every measured
# call also drops the oldest record). The step clock's calibration, a busy loop
# bounded by time whose length varies between runs, is not counted.
#
# usage: bench/invoke-instructions.sh [N]     (default 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
cargo bench --bench invoke --no-run -q 2>/dev/null
bin=$(ls -t target/release/deps/invoke-* | grep -v '\.d$' | head -1)
count() {
  INVOKE_COUNT="$1:$2" valgrind --tool=callgrind --toggle-collect='*calibrate_step_clock*' --collect-atstart=yes --callgrind-out-file=/dev/null "$bin" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
declare -A per
for op in floor direct typed json text-floor text-json mcp queue; do
  zero=$(count "$op" 0)
  full=$(count "$op" "$n")
  per[$op]=$(( (full - zero) / n ))
  printf '%-7s %8d instructions per call\n' "$op" "${per[$op]}"
done
awk -v f="${per[floor]}" -v d="${per[direct]}" -v t="${per[typed]}" -v j="${per[json]}" \
    -v tf="${per[text-floor]}" -v tj="${per[text-json]}" 'BEGIN {
  printf "json call / floor = %.2fx   typed call - direct call = %d instructions (%.2fx direct)\n", j / f, t - d, t / d
  printf "from text: json call / floor = %.2fx\n", tj / tf
}'
