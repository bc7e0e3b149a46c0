//! The Redis backend: a queue on Redis Streams with a consumer group per
//! queue, and the fleet's shared policy state (idempotency, rate limits, run
//! records), through the `redis` crate.
//!
//! Per queue, one stream per priority; workers read them highest first
//! (`scripts::CLAIM`), so `critical` jobs overtake the others. Delivery is at
//! least once: an entry stays pending until its worker acknowledges it with
//! the outcome (`scripts::FINISH`, one atomic step), a worker signs for what
//! it holds, and what a dead worker held is taken over after the visibility
//! timeout (`scripts::RECLAIM`); an entry delivered too often goes to the
//! dead-letter stream with the reason. Keys, under a namespace (`skill` by
//! default): `{ns}:q:{queue}:{priority}`, `{ns}:q:{queue}:dead`,
//! `{ns}:q:{queue}:workers`, `{ns}:result:{job}`, `{ns}:records`,
//! `{ns}:idem:{skill}:{key}`, `{ns}:rate:{skill}`; jobs waiting for a
//! person's approval are parked apart (`approvals`).
//!
//! On a Redis Cluster (several nodes' URLs, comma-separated) the queue is
//! split into partitions whose keys share a hash tag (`keys`), so that every
//! script stays one atomic step on one primary.
//!
//! Inside, lowest first: `reply`, `scripts` and `keys` (no imports of their
//! own), `link` (one server or a cluster), `conn` (the store, its keys and
//! every request), `records`, `backend`,
//! then the parts built on it: `approvals` (parked jobs and decisions),
//! `apart` (jobs set apart from the lines: dead letters, listed, read,
//! deleted; delayed jobs, listed),
//! `queue` (callers), `source` (workers),
//! `policy` (idempotency and rate limits), `schedule` (cron schedules).

mod apart;
mod approvals;
mod artifacts;
mod backend;
mod conn;
mod keys;
mod link;
mod policy;
mod queue;
mod records;
mod reply;
mod runs;
mod schedule;
mod scripts;
mod source;

pub use self::artifacts::RedisArtifacts;
pub use self::backend::RedisBackend;
pub use self::conn::RedisConfig;
pub use self::policy::{RedisIdempotency, RedisRateLimits};
pub use self::runs::RedisRuns;
pub use self::source::RedisSource;
