#!/usr/bin/env bash
# Streamable HTTP `tools/call` of `echo` on kept-alive connections, two
# ways: stateless 2026-07-28 requests (`wrk`), and 2025-11-25 sessions, one
# per connection, `initialize` first, as the Python and TypeScript SDKs and
# the MCP Inspector call (`mcp-session-load`, bench/plain-rmcp). Each against
# this server without authentication, with JWT authentication, and a plain
# rmcp server with the same tool on the same hyper, twice: with rmcp's
# defaults (`plain`, answers as event streams) and with `json_response` set
# as ours sets it (`plain-json`, answers as JSON bodies); at 1 and 16
# connections, ROUNDS interleaved rounds of SECONDS each. Prints per round
# and the medians of calls/s and p50/p99 latency, and the ratios to each
# plain server.
#   bench/mcp-http.sh [ROUNDS] [SECONDS]        (default 3 10)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"; seconds="${2:-10}"
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }
cargo build -q --release -p skill-examples -p plain-rmcp
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
token=$(target/release/mint-token "$work/jwks.json")

# Start server NAME (a child of this shell, stopped on exit) on a free
# port; its address in the variable NAME.
start() {
  local name=$1 log="$work/$1.log"; shift
  "$@" >/dev/null 2>"$log" &
  for _ in $(seq 100); do
    local addr
    addr=$(grep -o 'http://[0-9.:]*' "$log" | head -1 | sed 's|http://||' || true)
    if [ -n "$addr" ]; then printf -v "$name" '%s' "$addr"; return; fi
    sleep 0.1
  done
  echo "server $name did not start: $(cat "$log")" >&2; exit 1
}
start plain target/release/plain-rmcp --http 127.0.0.1:0
start plainjson target/release/plain-rmcp --http 127.0.0.1:0 --json
start ours target/release/skill-examples mcp --http 127.0.0.1:0
start jwt target/release/skill-examples mcp --http 127.0.0.1:0 --auth jwt \
  --jwks "$work/jwks.json" --issuer https://issuer.bench --audience http://mcp.bench/mcp

# One run of CASE (`stateless`: wrk; `session`: mcp-session-load):
# "calls/s p50_ms p99_ms".
run() {
  local case=$1 addr=$2 conns=$3 tok=$4 threads=$(( $3 < 2 ? 1 : 2 ))
  if [ "$case" = session ]; then
    target/release/mcp-session-load "$addr" "$conns" "$seconds" "$tok"
    return
  fi
  MCP_TOKEN="$tok" wrk -t"$threads" -c"$conns" -d"${seconds}s" --latency -s bench/mcp-http.lua "http://$addr/mcp" > "$work/out"
  grep -q '^non-successes: 0$' "$work/out" || { echo "failed calls:" >&2; cat "$work/out" >&2; exit 1; }
  local rps p50 p99
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$work/out")
  p50=$(awk '$1 == "50%" {print $2}' "$work/out")
  p99=$(awk '$1 == "99%" {print $2}' "$work/out")
  echo "$rps $(ms "$p50") $(ms "$p99")"
}
# wrk's "123.45us", "1.23ms", "1.00s" in milliseconds.
ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

for case in stateless session; do
  for conns in 1 16; do
    for who in plain plainjson ours jwt; do : > "$work/$case.$who.$conns"; done
    for r in $(seq "$rounds"); do
      for who in plain plainjson ours jwt; do
        case $who in plain) a=$plain; t="";; plainjson) a=$plainjson; t="";; ours) a=$ours; t="";; jwt) a=$jwt; t=$token;; esac
        line=$(run "$case" "$a" "$conns" "$t")
        echo "$line" >> "$work/$case.$who.$conns"
        echo "$case connections $conns round $r $who: $line (calls/s p50 ms p99 ms)"
      done
    done
  done
done

for case in stateless session; do
  echo
  echo "$case:"
  printf '%-12s %-6s %12s %10s %10s %10s %12s\n' server conns "calls/s" "p50 ms" "p99 ms" "vs plain" "vs plain-json"
  for conns in 1 16; do
    base=$(cut -d' ' -f1 "$work/$case.plain.$conns" | median)
    json=$(cut -d' ' -f1 "$work/$case.plainjson.$conns" | median)
    for who in plain plainjson ours jwt; do
      rps=$(cut -d' ' -f1 "$work/$case.$who.$conns" | median)
      p50=$(cut -d' ' -f2 "$work/$case.$who.$conns" | median)
      p99=$(cut -d' ' -f3 "$work/$case.$who.$conns" | median)
      name=$who; [ "$who" = plainjson ] && name=plain-json
      printf '%-12s %-6s %12s %10s %10s %9.2fx %11.2fx\n' "$name" "$conns" "$rps" "$p50" "$p99" \
        "$(awk -v a="$rps" -v b="$base" 'BEGIN { print a / b }')" "$(awk -v a="$rps" -v b="$json" 'BEGIN { print a / b }')"
    done
  done
done
