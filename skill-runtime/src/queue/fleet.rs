//! The fleet's backend chosen by its URL: `redis://` (or `rediss://`,
//! `unix://`) for Redis, `postgres://` (or `postgresql://`) for
//! PostgreSQL. What a program that runs on either needs (a worker, an MCP
//! server, the CLI's fleet commands) is here, the same for both.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::agent::artifacts::ArtifactStore;
use crate::exec::policy::BoxFuture;
use crate::exec::policy::idempotency::IdempotencyConfig;
use crate::exec::policy::runs::RunStore;
use crate::exec::runtime::RuntimeBuilder;
use crate::model::approval::Decision;
use crate::model::envelope::JobEnvelope;
use crate::model::id::Id;
use crate::queue::SecretUrl;
use crate::queue::api::{
    Cancelled, DeadLetter, Decided, JobProgress, Outcome, Queue, QueueError, QueueStatus,
};
#[cfg(feature = "postgres")]
use crate::queue::postgres::{PostgresBackend, PostgresConfig};
use crate::queue::records::{RecordPage, RecordQuery, StoreSink, Timing};
#[cfg(feature = "redis")]
use crate::queue::redis::{RedisBackend, RedisConfig};
use crate::queue::schedule::{ScheduleState, Schedules};
use crate::queue::source::WorkSource;

/// How to reach the fleet's store and what to keep there, whichever it is.
#[derive(Clone, Debug)]
pub struct FleetConfig {
    /// The store's URL; its scheme chooses the backend. Shown with its
    /// password masked wherever it is printed.
    pub url: SecretUrl,
    /// The prefix of every Redis key, or the PostgreSQL schema, so
    /// deployments can share a server.
    pub namespace: String,
    /// The queue's name.
    pub queue: String,
    /// How long a job a worker holds may go unsigned before another takes it.
    pub visibility: Duration,
    /// Deliveries after which a job no worker acknowledged is dead-lettered.
    pub max_deliveries: u32,
    /// How long outcomes are kept.
    pub result_ttl: Duration,
    /// About how many run records are kept.
    pub records_max: usize,
    /// The most JSON a job's params may hold to be queued.
    pub max_params_bytes: usize,
    /// Locks and results of idempotency keys.
    pub idempotency: IdempotencyConfig,
    /// The certificate authority (PEM) a TLS server's certificate is
    /// checked against, instead of the system's or Mozilla's roots.
    pub tls_ca: Option<PathBuf>,
    /// Replicas that must hold a job's queueing and its outcome before
    /// either is acknowledged (Redis `WAIT`; 0: the primary's word). On
    /// PostgreSQL, synchronous replication is the server's own setting
    /// (`synchronous_standby_names`), and asking for replicas here is an
    /// error.
    pub replicas: u32,
}

impl FleetConfig {
    /// `url` with the backends' defaults (namespace `skill`, queue
    /// `default`, a 30 s visibility timeout, 5 deliveries, outcomes kept one
    /// hour, 100,000 run records, the seed's idempotency defaults).
    pub fn new(url: impl Into<SecretUrl>) -> FleetConfig {
        FleetConfig {
            url: url.into(),
            namespace: "skill".to_owned(),
            queue: "default".to_owned(),
            visibility: Duration::from_secs(30),
            max_deliveries: 5,
            result_ttl: Duration::from_secs(3600),
            records_max: 100_000,
            max_params_bytes: crate::exec::policy::limits::Limits::default().max_input_bytes,
            idempotency: IdempotencyConfig::default(),
            tls_ca: None,
            replicas: 0,
        }
    }

    /// Which backend the URL names.
    fn kind(&self) -> Result<Kind, QueueError> {
        let url = self.url.expose();
        let scheme = url.split_once("://").map_or("", |(s, _)| s);
        match scheme.to_ascii_lowercase().as_str() {
            "redis" | "rediss" | "unix" | "redis+unix" => Ok(Kind::Redis),
            "postgres" | "postgresql" => Ok(Kind::Postgres),
            _ => Err(QueueError::Invalid(format!(
                "`{}` names no store this program knows: give a redis://, rediss:// or postgres:// URL",
                self.url
            ))),
        }
    }
}

enum Kind {
    Redis,
    Postgres,
}

/// The fleet's backend: Redis or PostgreSQL. Cheap to clone.
#[derive(Clone)]
pub enum Fleet {
    /// A Redis server.
    #[cfg(feature = "redis")]
    Redis(RedisBackend),
    /// A PostgreSQL database.
    #[cfg(feature = "postgres")]
    Postgres(PostgresBackend),
}

/// `$body` with `$b` the backend, whichever it is.
macro_rules! each {
    ($fleet:expr, $b:ident => $body:expr) => {
        match $fleet {
            #[cfg(feature = "redis")]
            Fleet::Redis($b) => $body,
            #[cfg(feature = "postgres")]
            Fleet::Postgres($b) => $body,
        }
    };
}

impl Fleet {
    /// Connect to the store `config.url` names. An unreachable server is an
    /// error that names the URL (without its password); a scheme this build
    /// has no backend for is an error that says which feature adds it.
    pub async fn connect(config: FleetConfig) -> Result<Fleet, QueueError> {
        match config.kind()? {
            #[cfg(feature = "redis")]
            Kind::Redis => RedisBackend::connect(RedisConfig {
                url: config.url,
                namespace: config.namespace,
                queue: config.queue,
                visibility: config.visibility,
                max_deliveries: config.max_deliveries,
                result_ttl: config.result_ttl,
                records_max: config.records_max,
                max_params_bytes: config.max_params_bytes,
                idempotency: config.idempotency,
                tls_ca: config.tls_ca,
                replicas: config.replicas,
                ..RedisConfig::new(SecretUrl::default())
            })
            .await
            .map(Fleet::Redis),
            #[cfg(feature = "postgres")]
            Kind::Postgres if config.replicas > 0 => Err(QueueError::Invalid(format!(
                "{} is PostgreSQL: its replicas are the server's own setting (synchronous_standby_names with synchronous_commit), not --replicas",
                config.url
            ))),
            #[cfg(feature = "postgres")]
            Kind::Postgres => PostgresBackend::connect(PostgresConfig {
                url: config.url,
                schema: config.namespace,
                queue: config.queue,
                visibility: config.visibility,
                max_deliveries: config.max_deliveries,
                result_ttl: config.result_ttl,
                records_max: config.records_max,
                max_params_bytes: config.max_params_bytes,
                idempotency: config.idempotency,
                tls_ca: config.tls_ca,
                ..PostgresConfig::new(SecretUrl::default())
            })
            .await
            .map(Fleet::Postgres),
            #[allow(unreachable_patterns, reason = "one backend may be left out")]
            _ => Err(QueueError::Invalid(format!(
                "{} needs a backend this build leaves out (features `redis`, `postgres`)",
                config.url
            ))),
        }
    }

    /// The store, as messages name it: `Redis` or `PostgreSQL`.
    pub fn kind(&self) -> &'static str {
        match self {
            #[cfg(feature = "redis")]
            Fleet::Redis(_) => "Redis",
            #[cfg(feature = "postgres")]
            Fleet::Postgres(_) => "PostgreSQL",
        }
    }

    /// The queue's name.
    pub fn queue_name(&self) -> &str {
        each!(self, b => &b.config().queue)
    }

    /// `builder` sharing this fleet's stores (idempotency, rate limits,
    /// run states, run records).
    pub fn share(&self, builder: RuntimeBuilder) -> RuntimeBuilder {
        each!(self, b => b.share(builder))
    }

    /// The fleet's run-record sink (start it inside a tokio runtime).
    pub fn record_sink(&self) -> Arc<StoreSink> {
        each!(self, b => b.record_sink())
    }

    /// The most recent run records of the fleet, oldest first, at most `limit`.
    pub async fn records(&self, limit: usize) -> Result<Vec<String>, QueueError> {
        each!(self, b => b.records(limit).await)
    }

    /// The cursor ([`RecordQuery::before`]) of the records that ended
    /// before `time`: where a page of runs "before 08:00" starts.
    pub async fn records_before(&self, time: SystemTime) -> Result<String, QueueError> {
        let ms = time
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        each!(self, b => b.records_before(ms).await)
    }

    /// What latency and failure statistics read of the most recent `limit`
    /// run records, newest first.
    pub async fn timings(&self, limit: usize) -> Result<Vec<Timing>, QueueError> {
        each!(self, b => b.timings(limit).await)
    }

    /// One page of the run records `query` asks for, newest first: on
    /// PostgreSQL through the records table's indexes; on Redis by reading
    /// the streams newest first (by time, their one index), at most
    /// [`RecordQuery::SCANNED`] records for a filtered page.
    pub async fn records_page(&self, query: &RecordQuery) -> Result<RecordPage, QueueError> {
        each!(self, b => b.records_page(query).await)
    }

    /// The newest `limit` dead letters, newest first.
    pub async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>, QueueError> {
        each!(self, b => b.dead_letters(limit).await)
    }

    /// The `limit` delayed jobs due soonest: when each is due, and the job
    /// (`None` for a message that is not one).
    pub async fn delayed_jobs(
        &self,
        limit: usize,
    ) -> Result<Vec<(SystemTime, Option<JobEnvelope>)>, QueueError> {
        let delayed = each!(self, b => b.delayed_jobs(limit).await)?;
        Ok(delayed
            .into_iter()
            .map(|(due, m)| (due, serde_json::from_str(&m).ok()))
            .collect())
    }

    /// Delete dead letter `id`: whether it was there.
    pub async fn discard_dead(&self, id: &str) -> Result<bool, QueueError> {
        each!(self, b => b.discard_dead(id).await)
    }

    /// Send dead letter `id`'s job again, as a new job, and delete the dead
    /// letter; the new job's id. The new id is derived from the dead letter
    /// (the old one stays taken by the job given up on), so two people
    /// retrying it at once queue one job, and a retry whose queueing failed
    /// leaves the dead letter as it was, to be retried again. `None` when no
    /// such dead letter is kept (discarded, or sent again already). A
    /// message that is not a job (a poisoned one) can only be discarded.
    pub async fn retry_dead(&self, id: &str) -> Result<Option<Id>, QueueError> {
        let Some(dead) = each!(self, b => b.dead_letter(id).await)? else {
            return Ok(None);
        };
        let job: JobEnvelope = serde_json::from_str(&dead.message).map_err(|e| {
            QueueError::Invalid(format!(
                "dead letter {id} is not a job ({e}): it can only be discarded"
            ))
        })?;
        let again = Id::derived(&format!("retry\u{0}{id}\u{0}{}", job.job_id));
        match self.enqueue(job.with_job_id(again.clone())).await {
            // Taken: by this same retry, made a moment ago by someone else.
            Ok(_) | Err(QueueError::JobIdTaken { .. }) => {}
            Err(e) => return Err(e),
        }
        self.discard_dead(id).await?;
        Ok(Some(again))
    }

    /// What parked jobs `ids` are (in order; `None` for one no longer
    /// parked, or whose message does not read as a job): what a person
    /// asked to approve one is shown.
    pub async fn parked_jobs(&self, ids: &[&str]) -> Result<Vec<Option<JobEnvelope>>, QueueError> {
        let messages = each!(self, b => b.parked_messages(ids).await)?;
        Ok(messages
            .into_iter()
            .map(|m| m.and_then(|m| serde_json::from_str(&m).ok()))
            .collect())
    }

    /// Requests sent to the store so far.
    pub fn round_trips(&self) -> u64 {
        each!(self, b => b.round_trips())
    }

    /// The worker side of the queue, for a worker named `worker`.
    pub async fn work_source(&self, worker: String) -> Result<Arc<dyn WorkSource>, QueueError> {
        Ok(each!(self, b => Arc::new(b.work_source(worker).await?)))
    }

    /// Agents' R3 files, shared by the fleet.
    pub fn artifact_store(&self) -> Arc<dyn ArtifactStore> {
        each!(self, b => b.artifact_store())
    }

    /// The R3 file kept as `key`, when it is still kept.
    pub async fn artifact(&self, key: &str) -> Result<Option<String>, QueueError> {
        each!(self, b => b.artifact(key).await)
    }

    /// Pipeline runs' states, shared by the fleet.
    pub fn run_store(&self) -> Arc<dyn RunStore> {
        each!(self, b => b.run_store())
    }

    /// The schedules workers registered on this queue.
    pub async fn schedules(&self) -> Result<Vec<ScheduleState>, QueueError> {
        each!(self, b => b.schedules().await)
    }

    /// Queue the ticks of `schedules` until `stop` completes.
    pub async fn run_schedules(&self, schedules: &Schedules, stop: impl Future<Output = ()>) {
        each!(self, b => b.run_schedules(schedules, stop).await)
    }

    /// Enqueue `job` and wait up to `wait` for its outcome.
    pub async fn enqueue_and_wait(
        &self,
        job: JobEnvelope,
        wait: Duration,
    ) -> Result<(Id, Option<Outcome>), QueueError> {
        each!(self, b => b.enqueue_and_wait(job, wait).await)
    }
}

impl Queue for Fleet {
    fn enqueue(&self, job: JobEnvelope) -> BoxFuture<'_, Result<Id, QueueError>> {
        each!(self, b => b.enqueue(job))
    }

    fn outcome<'a>(
        &'a self,
        id: &'a str,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Option<Outcome>, QueueError>> {
        each!(self, b => b.outcome(id, wait))
    }

    fn status(&self) -> BoxFuture<'_, Result<QueueStatus, QueueError>> {
        each!(self, b => b.status())
    }

    fn enqueue_at(
        &self,
        job: JobEnvelope,
        due: SystemTime,
    ) -> BoxFuture<'_, Result<Id, QueueError>> {
        each!(self, b => b.enqueue_at(job, due))
    }

    fn progress<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<JobProgress>, QueueError>> {
        each!(self, b => b.progress(id))
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Cancelled, QueueError>> {
        each!(self, b => b.cancel(id))
    }

    fn outcomes_kept(&self) -> Duration {
        each!(self, b => b.outcomes_kept())
    }

    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
    ) -> BoxFuture<'a, Result<Decided, QueueError>> {
        each!(self, b => b.decide(id, decision))
    }

    fn secret(&self) -> BoxFuture<'_, Result<[u8; 32], QueueError>> {
        each!(self, b => b.secret())
    }

    fn use_once<'a>(
        &'a self,
        mark: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, QueueError>> {
        each!(self, b => b.use_once(mark, ttl))
    }
}

/// A worker name unique in a fleet: host, process and a random suffix.
pub fn worker_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".to_owned());
    let id = crate::model::id::Id::new_v4();
    format!("{host}-{}-{}", std::process::id(), &id[..8])
}
