#!/usr/bin/env bash
# What OpenTelemetry costs a job, in instructions (callgrind, as
# bench/invoke-instructions.sh counts them): the JSON-text call, the path
# MCP and the queue take, built three ways and run side by side:
#   plain    without the `otel` feature;
#   feature  with it, export not started (nothing changes but the build);
#   absent   with it and export started to a collector that is not there
#            (its address refuses connections: no span is made);
#   present  with it and export started to a collector that takes every
#            batch (a loopback HTTP server answering 200): spans made,
#            batched, encoded and sent.
# (instructions of N calls - instructions of 0 calls) / N.
#
# usage: bench/otel-instructions.sh [N]     (default 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000}
bin_of() { # the benchmark's executable, built with ARGS
  cargo bench --bench invoke --no-run -q --message-format=json "$@" 2>/dev/null \
    | python3 -c 'import json, sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])'
}
plain=$(bin_of)
cp "$plain" target/release/invoke-plain
otel=$(bin_of --features otel)
cp "$otel" target/release/invoke-otel
count() { # count BINARY N [VAR=VALUE...]
  local bin=$1 calls=$2
  shift 2
  env "$@" INVOKE_COUNT="text-json:$calls" valgrind --tool=callgrind \
    --toggle-collect='*calibrate_step_clock*' --collect-atstart=yes \
    --callgrind-out-file=/dev/null "$bin" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
per() { # per BINARY [VAR=VALUE...]
  local bin=$1 zero full
  shift
  zero=$(count "$bin" 0 "$@")
  full=$(count "$bin" "$n" "$@")
  echo $(( (full - zero) / n ))
}
# A collector that takes everything: OTLP/HTTP answers 200 with an empty
# (valid) protobuf body.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 - "$port" <<'PY' &
import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink).serve_forever()
PY
sink=$!
trap 'kill $sink 2>/dev/null' EXIT
sleep 0.5
p=$(per target/release/invoke-plain)
f=$(per target/release/invoke-otel)
a=$(per target/release/invoke-otel INVOKE_OTEL=1)
e=$(per target/release/invoke-otel INVOKE_OTEL=1 INVOKE_OTEL_ENDPOINT="http://127.0.0.1:$port")
awk -v p="$p" -v f="$f" -v a="$a" -v e="$e" 'BEGIN {
  printf "plain    %8d instructions per JSON-text call\n", p
  printf "feature  %8d (%.2fx plain)\n", f, f / p
  printf "absent   %8d (%.2fx plain)\n", a, a / p
  printf "present  %8d (%.2fx plain)\n", e, e / p
}'
