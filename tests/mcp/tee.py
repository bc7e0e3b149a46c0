"""Run a stdio MCP server and log every line that crosses its standard streams.

Usage: tee.py LOG -- COMMAND [ARGS...]

Each line of LOG is a JSON object {"from": "client" | "server", "message": ...}
(or "raw" when the line is not JSON), in the order the lines crossed. The test
validates the server's lines against the official schema afterwards.
"""

import json
import subprocess
import sys
import threading


def main() -> int:
    log_path = sys.argv[1]
    command = sys.argv[sys.argv.index("--") + 1 :]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    lock = threading.Lock()
    log = open(log_path, "w", encoding="utf-8")

    def record(side: str, line: bytes) -> None:
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return
        try:
            entry = {"from": side, "message": json.loads(text)}
        except ValueError:
            entry = {"from": side, "raw": text}
        with lock:
            log.write(json.dumps(entry) + "\n")
            log.flush()

    def pump_in() -> None:
        for line in iter(sys.stdin.buffer.readline, b""):
            record("client", line)
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    out = sys.stdout.buffer
    for line in iter(child.stdout.readline, b""):
        record("server", line)
        out.write(line)
        out.flush()
    code = child.wait()
    log.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
