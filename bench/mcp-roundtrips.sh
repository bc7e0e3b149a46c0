#!/usr/bin/env bash
# tools/call round trips per second over stdio: our server vs a plain rmcp server
# vs FastMCP, one client, interleaved rounds; prints the medians and the ratios.
#   bench/mcp-roundtrips.sh [ROUNDS] [CALLS]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import fastmcp' 2>/dev/null; then
  python3 -m venv "$venv"
  # fastmcp 4.1 needs a newer certifi than the registry has; 4.0 installs.
  "$venv/bin/pip" install -q "fastmcp<4.1"
fi
cargo build -q --release -p skill-examples -p plain-rmcp
MCP_BENCH_ROUNDS="${1:-5}" MCP_BENCH_CALLS="${2:-2000}" MCP_BENCH_PYTHON="$venv/bin/python" \
  cargo bench -q --bench mcp
