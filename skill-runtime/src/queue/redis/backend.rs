//! The backend as users hold it: one connection to the fleet's Redis, and the
//! run-record sink every part of a process shares.

use std::sync::{Arc, OnceLock};

use crate::exec::runtime::RuntimeBuilder;
use crate::queue::api::QueueError;
use crate::queue::records::{RecordPage, RecordQuery, StoreSink, Timing};
use crate::queue::redis::conn::{Conn, RedisConfig};
use crate::queue::redis::records;

/// A connection to the fleet's Redis. Cheap to clone.
#[derive(Clone)]
pub struct RedisBackend {
    pub(super) inner: Arc<Conn>,
    sink: Arc<OnceLock<Arc<StoreSink>>>,
}

impl RedisBackend {
    /// Connect to `config.url` and make sure the queue's streams and group
    /// exist. An unreachable server is an error that names the URL.
    pub async fn connect(config: RedisConfig) -> Result<RedisBackend, QueueError> {
        Ok(RedisBackend {
            inner: Arc::new(Conn::open(config).await?),
            sink: Arc::default(),
        })
    }

    /// The connection and key settings.
    pub fn config(&self) -> &RedisConfig {
        &self.inner.config
    }

    /// Where the runtime's run records go: the records stream, read by
    /// `stats` over the fleet. One per backend; it starts a writer task, so
    /// call it inside a tokio runtime.
    pub fn record_sink(&self) -> Arc<StoreSink> {
        self.sink
            .get_or_init(|| StoreSink::start(Arc::new(records::Writer::new(self.inner.clone()))))
            .clone()
    }

    /// `builder` sharing this fleet's stores: idempotency keys and results,
    /// rate limits and pipeline runs' state live in Redis, and run records
    /// go to the fleet's stream (in place of a sink given before; to keep
    /// that one too, give the builder a sink that writes to both after this).
    /// What any process serving the fleet's skills needs (a worker, an MCP
    /// server, an app the endpoint is mounted in), in one call; call it
    /// inside a tokio runtime ([`RedisBackend::record_sink`]).
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
    /// first.
    pub async fn timings(&self, limit: usize) -> Result<Vec<Timing>, QueueError> {
        let texts = records::read(&self.inner, limit).await?;
        Ok(texts
            .iter()
            .rev()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect())
    }

    /// The cursor of the records written before `ms` (Unix milliseconds):
    /// the streams' entries are named by the time they were written.
    pub async fn records_before(&self, ms: u64) -> Result<String, QueueError> {
        Ok(format!("{ms}-0-0"))
    }

    /// One page of the run records `query` asks for, newest first.
    pub async fn records_page(&self, query: &RecordQuery) -> Result<RecordPage, QueueError> {
        records::page(&self.inner, query).await
    }

    /// Requests this process has sent to Redis so far, through this backend
    /// and its clones. Each is one round trip (a pipeline of several commands
    /// is one); scripts run several commands on the server in one.
    pub fn round_trips(&self) -> u64 {
        self.inner.round_trips()
    }
}
