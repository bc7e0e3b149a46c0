//! The backend as users hold it: the fleet's database, and the run-record
//! sink every part of a process shares.

use std::sync::{Arc, OnceLock};

use crate::exec::runtime::RuntimeBuilder;
use crate::queue::api::QueueError;
use crate::queue::postgres::conn::{Conn, PostgresConfig};
use crate::queue::postgres::records;
use crate::queue::records::{RecordPage, RecordQuery, StoreSink, Timing};

/// A connection to the fleet's PostgreSQL. Cheap to clone.
#[derive(Clone)]
pub struct PostgresBackend {
    pub(super) inner: Arc<Conn>,
    sink: Arc<OnceLock<Arc<StoreSink>>>,
}

impl PostgresBackend {
    /// Connect to `config.url`, and create or migrate the backend's schema
    /// (safe from several processes at once). An unreachable server is an
    /// error that names the URL, without its password.
    pub async fn connect(config: PostgresConfig) -> Result<PostgresBackend, QueueError> {
        Ok(PostgresBackend {
            inner: Arc::new(Conn::open(config).await?),
            sink: Arc::default(),
        })
    }

    /// The connection and queue settings.
    pub fn config(&self) -> &PostgresConfig {
        &self.inner.config
    }

    /// Where the runtime's run records go: the records table, read by
    /// `stats` over the fleet. One per backend; it starts a writer task, so
    /// call it inside a tokio runtime.
    pub fn record_sink(&self) -> Arc<StoreSink> {
        self.sink
            .get_or_init(|| StoreSink::start(Arc::new(records::Writer(self.inner.clone()))))
            .clone()
    }

    /// `builder` sharing this fleet's stores: idempotency keys and results,
    /// rate limits and pipeline runs' state live in the database, and run
    /// records go to its records table (see `RedisBackend::share`).
    pub fn share(&self, builder: RuntimeBuilder) -> RuntimeBuilder {
        builder
            .idempotency_store(self.idempotency_store())
            .shared_rate_limits(self.rate_limits())
            .run_store(self.run_store())
            .sink(self.record_sink())
    }

    /// The most recent run records of the fleet, oldest first, at most `limit`.
    pub async fn records(&self, limit: usize) -> Result<Vec<String>, QueueError> {
        records::read(&self.inner, limit).await
    }

    /// What statistics read of the most recent `limit` records, newest
    /// first (from the table's columns: the records are not decoded).
    pub async fn timings(&self, limit: usize) -> Result<Vec<Timing>, QueueError> {
        records::timings(&self.inner, limit).await
    }

    /// The cursor of the records that ended before `ms` (Unix
    /// milliseconds), found on the `completed_at` index.
    pub async fn records_before(&self, ms: u64) -> Result<String, QueueError> {
        records::before(&self.inner, ms).await
    }

    /// One page of the run records `query` asks for, newest first.
    pub async fn records_page(&self, query: &RecordQuery) -> Result<RecordPage, QueueError> {
        records::page(&self.inner, query).await
    }

    /// Requests this process has sent to PostgreSQL so far, through this
    /// backend and its clones: each is one round trip (a function runs
    /// several statements on the server in one).
    pub fn round_trips(&self) -> u64 {
        self.inner.round_trips()
    }
}
