// The BullMQ side of bench/queue.sh: an `echo` job equivalent to the example
// `echo` skill (the message back, as JSON), on the same Redis, and a driver
// that measures it the way benches/queue.rs measures ours (and
// bench/celery_echo.py measures Celery).
//
//   node bullmq_echo.mjs worker CONCURRENCY     a worker (BULLMQ_REDIS=redis://...)
//   node bullmq_echo.mjs throughput N           N jobs at once, then every result
//   node bullmq_echo.mjs latency N              N jobs one after the other
//
// The driver prints one JSON object: jobs, seconds, and the latencies in ms.
// Jobs are added with `Queue.add` and awaited with `Job.waitUntilFinished`
// (BullMQ's own request-and-wait); completed jobs are kept an hour, so that a
// result is still there when its waiter asks. The waiters hear of each
// completion through the queue's event stream, which BullMQ trims to 10,000
// events by default: thousands of jobs in flight write more than that (each
// job several events) before the listener has read them, and a waiter whose
// `completed` event was trimmed away waits until its timeout. The stream is
// therefore kept long enough for the whole run (`streams.events.maxLen`,
// BullMQ's setting for it).
import { Queue, QueueEvents, Worker } from "bullmq";
import IORedis from "ioredis";

const url = process.env.BULLMQ_REDIS ?? "redis://127.0.0.1:6379/0";
// BullMQ wants blocking connections that never give up on a request.
const connect = () => new IORedis(url, { maxRetriesPerRequest: null });
const NAME = "echo";
const KEEP = { removeOnComplete: { age: 3600 }, removeOnFail: { age: 3600 } };

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round((p / 100) * sorted.length) - 1));
  return sorted[i];
}

async function worker(concurrency) {
  const w = new Worker(NAME, async (job) => ({ message: job.data.message }), {
    connection: connect(),
    concurrency,
  });
  await w.waitUntilReady();
  const stop = async () => {
    await w.close();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

async function drive(mode, n) {
  const maxLen = Math.max(10_000, 20 * n);
  const queue = new Queue(NAME, { connection: connect(), streams: { events: { maxLen } } });
  const events = new QueueEvents(NAME, { connection: connect() });
  await events.waitUntilReady();
  // Each waiter listens on both for a while: thousands at once is the point.
  queue.setMaxListeners(0);
  events.setMaxListeners(0);
  const run = async (message, timeout) => {
    const job = await queue.add(NAME, { message }, KEEP);
    return job.waitUntilFinished(events, timeout);
  };
  // The worker is up when a job comes back.
  await run("warm-up", 120_000);
  let out;
  if (mode === "throughput") {
    const start = performance.now();
    const pending = [];
    for (let i = 0; i < n; i++) pending.push(run(`message ${i}`, 600_000));
    await Promise.all(pending);
    out = { jobs: n, seconds: (performance.now() - start) / 1000 };
  } else if (mode === "latency") {
    const ms = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await run(`message ${i}`, 60_000);
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    out = { jobs: n, p50_ms: percentile(ms, 50), p99_ms: percentile(ms, 99) };
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  console.log(JSON.stringify(out));
  await events.close();
  await queue.close();
  process.exit(0);
}

const [mode, n] = process.argv.slice(2);
if (mode === "worker") {
  await worker(Number(n ?? 64));
} else {
  await drive(mode, Number(n));
}
