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
// Jobs are added with `Queue.add` one by one (as each caller of ours
// enqueues its own), and their results come back as BullMQ's documentation
// advises for many jobs at once: one `QueueEvents` listener for the whole
// queue's `completed` events, each resolving the job it names, rather than
// a `Job.waitUntilFinished` (and its two listeners) per job. Two things
// make that listener miss nothing: the events stream is kept long enough for
// the whole run (`streams.events.maxLen`; BullMQ trims it to 10,000 events
// by default, fewer than thousands of jobs in flight write before it is
// read), and a job whose event came before the listener's first read (the
// stream is read from when the listener starts) is found finished by a
// look at its state, once a second, past 5 s of waiting. Completed jobs are kept an hour, so that
// such a look finds them.
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
  // Jobs added and not yet finished: id -> [resolve, reject, when added].
  const pending = new Map();
  const settle = (id, outcome, value) => {
    const waiter = pending.get(id);
    if (!waiter) return;
    pending.delete(id);
    waiter[outcome === "completed" ? 0 : 1](value);
  };
  events.on("completed", ({ jobId, returnvalue }) => settle(jobId, "completed", returnvalue));
  events.on("failed", ({ jobId, failedReason }) => settle(jobId, "failed", new Error(failedReason)));
  // Only a job waiting for more than 5 s is looked at: the look must not
  // add load to a run where events arrive.
  const look = setInterval(async () => {
    const now = performance.now();
    const late = [...pending].filter(([, w]) => now - w[2] > 5000).map(([id]) => id);
    for (const id of late) {
      const state = await queue.getJobState(id);
      if (state === "completed" || state === "failed") {
        const job = await queue.getJob(id);
        settle(id, state, state === "completed" ? job?.returnvalue : new Error(job?.failedReason));
      }
    }
  }, 1000);
  const run = async (message) => {
    const job = await queue.add(NAME, { message }, KEEP);
    return new Promise((resolve, reject) => pending.set(job.id, [resolve, reject, performance.now()]));
  };
  // The worker is up when a job comes back.
  await run("warm-up");
  let out;
  if (mode === "throughput") {
    const start = performance.now();
    const all = [];
    for (let i = 0; i < n; i++) all.push(run(`message ${i}`));
    await Promise.all(all);
    out = { jobs: n, seconds: (performance.now() - start) / 1000 };
  } else if (mode === "latency") {
    const ms = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await run(`message ${i}`);
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    out = { jobs: n, p50_ms: percentile(ms, 50), p99_ms: percentile(ms, 99) };
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  clearInterval(look);
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
