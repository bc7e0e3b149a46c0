#!/usr/bin/env bash
# tools/call round trips per second over stdio: our server vs a plain rmcp server
# vs FastMCP, one client, interleaved rounds; prints the medians and the ratios.
# WARMUP calls precede each measured round of the Rust servers; the default fills
# our server's in-memory record sink (10,000 records), the state of a server that
# has been up a while. WARMUP=0 measures a fresh server.
#   bench/mcp-roundtrips.sh [ROUNDS] [CALLS] [WARMUP]     (default 5 2000 10500)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import fastmcp' 2>/dev/null; then
  python3 -m venv "$venv"
  # fastmcp 4.1 needs a newer certifi than the registry has; 4.0 installs.
  "$venv/bin/pip" install -q "fastmcp<4.1"
fi
cargo build -q --release -p skill-examples -p plain-rmcp
MCP_BENCH_ROUNDS="${1:-5}" MCP_BENCH_CALLS="${2:-2000}" MCP_BENCH_WARMUP="${3:-10500}" \
  MCP_BENCH_PYTHON="$venv/bin/python" \
  cargo bench -q --bench mcp
