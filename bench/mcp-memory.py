#!/usr/bin/env python3
"""Memory a client can make the MCP server hold: CALLS tools/call of `echo`
with a message of SIZE bytes over stdio, then the server's resident set.
Records keep params and outputs up to a budget and the memory sink keeps the
last 1,000 records, so the figure stays flat whatever the calls carry.

usage: python3 bench/mcp-memory.py [BINARY] [CALLS] [SIZE]
       (defaults: target/debug/skill-examples, 1000, 1000000; build it first)
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/debug/skill-examples")
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
size = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000

p = subprocess.Popen([binary, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, cwd=ROOT)


def send(message):
    p.stdin.write((json.dumps(message) + "\n").encode())
    p.stdin.flush()


def receive():
    return json.loads(p.stdout.readline())


def rss_mib():
    status = Path(f"/proc/{p.pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "mem", "version": "0"}}})
receive()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
print(f"after start: {rss_mib():.1f} MiB")
message = "x" * (size - 100)
for i in range(calls):
    send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
          "params": {"name": "echo", "arguments": {"message": message}}})
    reply = receive()
    assert "result" in reply, reply
print(f"after {calls} calls of {size} bytes: {rss_mib():.1f} MiB")
p.kill()
