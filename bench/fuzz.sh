#!/usr/bin/env bash
# Long property-test passes over what the outside world sends: mutated
# registry files through skill-registry validate, diff and convert
# (tests/fuzz_registry.rs), and arbitrary or edited MCP stdio frames through
# the frame decoder (skill-runtime/src/mcp/stdio.rs). The test suite runs a
# short pass of each; this runs CASES cases per property (default 5000), each
# pass bounded by SECONDS (default 600). A failure prints the minimal case.
#   bench/fuzz.sh [SECONDS] [CASES]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
cases=${2:-5000}
export PROPTEST_CASES=$cases
echo "== MCP frames ($cases cases per property, at most ${seconds}s)"
timeout "$seconds" cargo test -q -p skill-runtime --features mcp --lib mcp::stdio
echo "== registry files ($cases cases, at most ${seconds}s)"
timeout "$seconds" cargo test -q --test fuzz_registry
