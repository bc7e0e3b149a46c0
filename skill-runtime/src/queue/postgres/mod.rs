//! The PostgreSQL backend: the queue and the fleet's shared state
//! (idempotency, rate limits, run records, run states, artifacts, parked
//! approvals, schedules) in one schema of one database, through
//! tokio-postgres.
//!
//! A job is a row of `jobs` (its envelope stored whole, as text): waiting,
//! running (held by a worker until a deadline its heartbeat moves on),
//! delayed, or parked for a person's approval. Workers take the waiting
//! rows highest priority first with `FOR UPDATE SKIP LOCKED`, so no row goes
//! to two workers, and an idle worker is woken by `LISTEN/NOTIFY` the moment
//! a job is queued. Each step of the protocol that touches several rows is
//! one SQL function (`schema`), atomic and one round trip, with the server's
//! clock. Run records are rows a team can query (`records`: skill, status,
//! times, caller, trace id, and the record as `jsonb`).
//!
//! Inside, lowest first: `schema` (the versioned migrations), `batch`
//! (concurrent requests sent as one statement), `events` (what the
//! listening connections hear, handed to those waiting), `conn` (the
//! database, its connections and notifications), `records` (the records
//! table, the sink's writer), `backend`, then `apart` (jobs set apart
//! from the lines: dead letters, listed, read, deleted; delayed jobs,
//! listed), `queue`
//! (callers), `source` (workers), `policy` (idempotency and rate limits)
//! and `stores` (run states, artifacts, schedules).

mod apart;
mod backend;
mod batch;
mod conn;
mod events;
mod policy;
mod queue;
mod records;
mod schema;
mod source;
mod stores;

pub use self::backend::PostgresBackend;
pub use self::conn::PostgresConfig;
pub use self::policy::{PostgresIdempotency, PostgresRateLimits};
pub use self::source::PostgresSource;
pub use self::stores::{PostgresArtifacts, PostgresRuns};
