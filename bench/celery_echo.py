"""The Celery side of bench/queue.sh: an `echo` task equivalent to the example
`echo` skill (the message back, as JSON), on the same Redis as broker and
result backend, and a driver that measures it the way benches/queue.rs
measures ours.

    celery -A celery_echo worker ...          a worker (CELERY_BROKER=redis://...)
    python celery_echo.py throughput N        N jobs at once, then every result
    python celery_echo.py latency N           N jobs one after the other

The driver prints one JSON object: jobs, seconds, and the latencies in ms.
"""

import json
import os
import sys
import time

from celery import Celery

broker = os.environ.get("CELERY_BROKER", "redis://127.0.0.1:6379/0")
app = Celery("celery_echo", broker=broker, backend=broker)
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
)


@app.task(name="echo")
def echo(message):
    return {"message": message}


def percentile(sorted_ms, p):
    if not sorted_ms:
        return 0.0
    i = min(len(sorted_ms) - 1, max(0, round(p / 100 * len(sorted_ms)) - 1))
    return sorted_ms[i]


def main():
    mode, n = sys.argv[1], int(sys.argv[2])
    # The worker is up when a job comes back.
    echo.delay("warm-up").get(timeout=120)
    if mode == "throughput":
        start = time.perf_counter()
        pending = [echo.delay(f"message {i}") for i in range(n)]
        for r in pending:
            r.get(timeout=600)
        seconds = time.perf_counter() - start
        print(json.dumps({"jobs": n, "seconds": seconds}))
    elif mode == "latency":
        ms = []
        for i in range(n):
            t = time.perf_counter()
            echo.delay(f"message {i}").get(timeout=60)
            ms.append((time.perf_counter() - t) * 1000)
        ms.sort()
        print(json.dumps({"jobs": n, "p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99)}))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
