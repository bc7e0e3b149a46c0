// The PostgreSQL peers of bench/queue-postgres.sh: graphile-worker and
// pg-boss, each running an `echo` job equivalent to the example `echo` skill
// (the message back) on the same PostgreSQL, and a driver that measures them
// the way benches/queue_postgres.rs measures ours.
//
//   node pg_queues.mjs PEER worker CONCURRENCY    a worker (PG_URL=postgres://...)
//   node pg_queues.mjs PEER throughput N CLIENTS  N jobs through CLIENTS callers
//   node pg_queues.mjs PEER latency N             N jobs one after the other
//
// PEER is `graphile` or `pgboss`. The driver prints one JSON object: jobs,
// seconds, and the latencies in ms (p50, p99).
//
// Neither peer keeps a job's result for its caller, so a job's handler says
// it is done with one `pg_notify('bench_done', id)` and the driver listens on
// that channel: enqueue to result is enqueue to that notification (ours
// announces its outcome the same way, inside the step that stores it).
// Callers work as ours do: each sends a job and waits for it before the next.
import pg from "pg";
import { run, makeWorkerUtils } from "graphile-worker";
import { PgBoss } from "pg-boss";

const url = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const NAME = "echo";

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round((p / 100) * sorted.length) - 1));
  return sorted[i];
}

async function worker(peer, concurrency) {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const done = (id) => pool.query("SELECT pg_notify('bench_done', $1)", [id]);
  let stop;
  if (peer === "graphile") {
    const runner = await run({
      connectionString: url,
      concurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      taskList: {
        [NAME]: async (payload) => {
          const out = { message: payload.message };
          await done(payload.id);
          return out;
        },
      },
    });
    stop = () => runner.stop();
  } else {
    const boss = new PgBoss({ connectionString: url, max: Math.max(4, Math.ceil(concurrency / 8)) });
    boss.on("error", (e) => console.error(e));
    await boss.start();
    await boss.createQueue(NAME).catch(() => {});
    await boss.work(
      NAME,
      { batchSize: concurrency, pollingIntervalSeconds: 0.5 },
      async (jobs) => {
        await Promise.all(
          jobs.map(async (job) => {
            await done(job.data.id);
            return { message: job.data.message };
          }),
        );
      },
    );
    stop = () => boss.stop({ graceful: false, wait: true });
  }
  const quit = async () => {
    await stop();
    await pool.end();
    process.exit(0);
  };
  process.on("SIGTERM", quit);
  process.on("SIGINT", quit);
  console.log("ready");
}

async function drive(peer, mode, n, clients) {
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  const pending = new Map();
  listener.on("notification", (msg) => {
    const resolve = pending.get(msg.payload);
    if (resolve) {
      pending.delete(msg.payload);
      resolve();
    }
  });
  await listener.query("LISTEN bench_done");
  let add;
  let close;
  if (peer === "graphile") {
    const utils = await makeWorkerUtils({ connectionString: url });
    await utils.migrate();
    add = (payload) => utils.addJob(NAME, payload);
    close = () => utils.release();
  } else {
    const boss = new PgBoss({ connectionString: url, max: 4, supervise: false, schedule: false });
    boss.on("error", (e) => console.error(e));
    await boss.start();
    await boss.createQueue(NAME).catch(() => {});
    add = (payload) => boss.send(NAME, payload);
    close = () => boss.stop({ graceful: false, wait: true });
  }
  let seq = 0;
  const one = async () => {
    const id = `${process.pid}-${seq++}`;
    const finished = new Promise((resolve) => pending.set(id, resolve));
    const start = performance.now();
    await add({ id, message: `message ${id}` });
    await finished;
    return performance.now() - start;
  };
  const ms = [];
  const start = performance.now();
  if (mode === "throughput") {
    let next = 0;
    const caller = async () => {
      while (next < n) {
        next++;
        ms.push(await one());
      }
    };
    await Promise.all(Array.from({ length: clients }, caller));
  } else {
    for (let i = 0; i < n; i++) ms.push(await one());
  }
  const seconds = (performance.now() - start) / 1000;
  ms.sort((a, b) => a - b);
  console.log(
    JSON.stringify({ jobs: n, seconds, p50_ms: percentile(ms, 50), p99_ms: percentile(ms, 99) }),
  );
  await close();
  await listener.end();
}

const [peer, mode, a, b] = process.argv.slice(2);
if (mode === "worker") {
  await worker(peer, Number(a ?? 64));
} else {
  await drive(peer, mode, Number(a ?? 1000), Number(b ?? 64));
  process.exit(0);
}
