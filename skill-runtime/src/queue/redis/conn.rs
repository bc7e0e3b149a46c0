//! The connection to the fleet's Redis: configuration, key names, scripts,
//! and every request, counted (each request is one round trip).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::{
    AsyncConnectionConfig, Client, Cmd, FromRedisValue, Pipeline, Script, ScriptInvocation,
};

use crate::exec::policy::idempotency::IdempotencyConfig;
use crate::model::caller::Priority;
use crate::queue::SecretUrl;
use crate::queue::api::{MAX_DELIVERIES, QueueError, check_store};
use crate::queue::redis::scripts;
use crate::sync::lock;

/// The consumer group every worker of a queue belongs to.
pub(super) const GROUP: &str = "workers";

/// Idle connections kept for blocking requests, at most.
const IDLE_WAITERS: usize = 256;

/// How to reach Redis and what to keep there.
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// `redis://host:port/db` (or `rediss://`, `unix://`); shown with its
    /// password masked wherever it is printed.
    pub url: SecretUrl,
    /// The prefix of every key, so deployments can share a server.
    pub namespace: String,
    /// The queue's name: one set of priority streams and one consumer group.
    pub queue: String,
    /// How long a job a worker holds may go unsigned before another takes it.
    pub visibility: Duration,
    /// Deliveries after which a job that no worker acknowledged goes to the
    /// dead letters.
    pub max_deliveries: u32,
    /// How long outcomes are kept for `result JOB_ID`.
    pub result_ttl: Duration,
    /// About how many run records the records stream keeps.
    pub records_max: usize,
    /// The most JSON a job's params may hold to be queued: what the
    /// workers' runtime takes (`Limits::max_input_bytes`, 1 MiB by default).
    /// Raise both together.
    pub max_params_bytes: usize,
    /// Locks and results of idempotency keys.
    pub idempotency: IdempotencyConfig,
    /// For a `rediss://` URL: a PEM file of the certificate authority the
    /// server's certificate is checked against, instead of the system's and
    /// Mozilla's roots (a server with a certificate of its own CA).
    pub tls_ca: Option<std::path::PathBuf>,
}

impl RedisConfig {
    /// The most deliveries a job may get before it goes to the dead letters.
    pub const MAX_DELIVERIES: u32 = MAX_DELIVERIES;

    /// This configuration, when each value is within its bound:
    /// the shared backends' bounds (visibility, outcomes and idempotent
    /// results, locks), 1 to [`RedisConfig::MAX_DELIVERIES`]
    /// deliveries, at least one run record.
    pub fn check(&self) -> Result<&RedisConfig, QueueError> {
        check_store(
            self.visibility,
            self.result_ttl,
            &self.idempotency,
            self.max_deliveries,
            self.records_max,
        )?;
        Ok(self)
    }

    /// `url` with the defaults: namespace `skill`, queue `default`, a 30 s
    /// visibility timeout, 5 deliveries, outcomes kept one hour, 100,000 run
    /// records, the seed's idempotency defaults.
    pub fn new(url: impl Into<SecretUrl>) -> RedisConfig {
        RedisConfig {
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
        }
    }
}

/// One Redis server, as the backend's parts use it.
pub(super) struct Conn {
    pub(super) config: RedisConfig,
    /// The URL without its password, for messages.
    pub(super) shown: String,
    pub(super) keys: Keys,
    pub(super) scripts: Scripts,
    client: Client,
    /// Reconnects on its own; every request that does not block goes through it.
    manager: ConnectionManager,
    /// Connections for requests that block (each holds its connection while it
    /// waits), kept for the next such request.
    waiters: Mutex<Vec<MultiplexedConnection>>,
    round_trips: AtomicU64,
}

/// The keys of one namespace and queue.
pub(super) struct Keys {
    /// One stream per priority, highest first.
    pub(super) streams: [String; 4],
    pub(super) dead: String,
    /// Jobs set to run later, scored by when they are due.
    pub(super) delayed: String,
    /// The schedules workers registered, and each one's last tick.
    pub(super) schedules: String,
    /// Jobs cancelled, scored by when their marks lapse.
    pub(super) cancelled: String,
    /// Running jobs' last progress reports, by job id.
    pub(super) progress: String,
    /// Jobs parked for a person's approval, scored by their deadlines.
    pub(super) awaiting: String,
    /// Each parked job's message, by job id.
    pub(super) parked: String,
    /// People's decisions on jobs that need approval, by job id, until the
    /// job ends.
    pub(super) decisions: String,
    pub(super) workers: String,
    /// Every worker's last heartbeat, across the namespace's queues: what an
    /// idempotency lock's holder is checked against.
    pub(super) alive: String,
    /// The namespace's fencing-token counter.
    pub(super) fence: String,
    pub(super) ns: String,
}

impl Keys {
    fn new(ns: &str, queue: &str) -> Keys {
        Keys {
            streams: Priority::SERVED.map(|p| format!("{ns}:q:{queue}:{}", p.as_str())),
            dead: format!("{ns}:q:{queue}:dead"),
            delayed: format!("{ns}:q:{queue}:delayed"),
            schedules: format!("{ns}:q:{queue}:schedules"),
            cancelled: format!("{ns}:q:{queue}:cancelled"),
            progress: format!("{ns}:q:{queue}:progress"),
            awaiting: format!("{ns}:q:{queue}:awaiting"),
            parked: format!("{ns}:q:{queue}:parked"),
            decisions: format!("{ns}:q:{queue}:decisions"),
            workers: format!("{ns}:q:{queue}:workers"),
            alive: format!("{ns}:alive"),
            fence: format!("{ns}:fence"),
            ns: ns.to_owned(),
        }
    }

    pub(super) fn stream(&self, p: Priority) -> &str {
        let i = Priority::SERVED.iter().position(|&q| q == p).unwrap_or(2);
        &self.streams[i]
    }

    pub(super) fn result(&self, job_id: &str) -> String {
        format!("{}:result:{job_id}", self.ns)
    }

    pub(super) fn records(&self) -> String {
        format!("{}:records", self.ns)
    }

    /// The mark that job `job_id` was queued (so that queueing it again does
    /// nothing).
    pub(super) fn queued(&self, job_id: &str) -> String {
        format!("{}:queued:{job_id}", self.ns)
    }
}

pub(super) struct Scripts {
    pub(super) claim: Script,
    pub(super) sign: Script,
    pub(super) finish: Script,
    pub(super) park: Script,
    pub(super) decide: Script,
    pub(super) expire_approvals: Script,
    pub(super) hand_back: Script,
    pub(super) dead_letter: Script,
    pub(super) reclaim: Script,
    pub(super) idem_claim: Script,
    pub(super) idem_finish: Script,
    pub(super) rate: Script,
    pub(super) status: Script,
    pub(super) cancelled_among: Script,
}

/// A request that blocks on the server.
pub(super) enum Blocking<'a> {
    Cmd(&'a Cmd),
    Pipe(&'a Pipeline),
}

impl Conn {
    /// Connect to `config.url` and make sure the queue's streams and group
    /// exist. An unreachable server is an error that names the URL.
    pub(super) async fn open(config: RedisConfig) -> Result<Conn, QueueError> {
        config.check()?;
        let shown = config.url.shown();
        let fail = |message: String| QueueError::Store {
            store: format!("Redis at {shown}"),
            message,
        };
        // rustls needs a process-wide provider: ring, unless the application
        // chose one already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = match &config.tls_ca {
            None => Client::open(config.url.expose()),
            Some(ca) => {
                let pem = std::fs::read(ca).map_err(|e| {
                    fail(format!(
                        "the TLS certificate authority {}: {e}",
                        ca.display()
                    ))
                })?;
                Client::build_with_tls(
                    config.url.expose(),
                    redis::TlsCertificates {
                        client_tls: None,
                        root_cert: Some(pem),
                    },
                )
            }
        }
        .map_err(|e| fail(format!("not a Redis URL: {e}")))?;
        // Requests fail rather than wait for a server that is down; the
        // manager reconnects with backoff on the next request.
        let manager = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(10)))
            .set_number_of_retries(3)
            .set_max_delay(Duration::from_secs(2));
        let manager = client
            .get_connection_manager_with_config(manager)
            .await
            .map_err(|e| fail(format!("cannot connect: {e}")))?;
        let conn = Conn {
            keys: Keys::new(&config.namespace, &config.queue),
            shown: shown.clone(),
            client,
            manager,
            config,
            scripts: Scripts {
                claim: Script::new(scripts::CLAIM),
                sign: Script::new(scripts::SIGN),
                finish: Script::new(scripts::FINISH),
                park: Script::new(scripts::PARK),
                decide: Script::new(scripts::DECIDE),
                expire_approvals: Script::new(scripts::EXPIRE_APPROVALS),
                hand_back: Script::new(scripts::HAND_BACK),
                dead_letter: Script::new(scripts::DEAD_LETTER),
                reclaim: Script::new(scripts::RECLAIM),
                idem_claim: Script::new(scripts::IDEM_CLAIM),
                idem_finish: Script::new(scripts::IDEM_FINISH),
                rate: Script::new(scripts::RATE),
                status: Script::new(scripts::STATUS),
                cancelled_among: Script::new(scripts::CANCELLED_AMONG),
            },
            waiters: Mutex::new(Vec::new()),
            round_trips: AtomicU64::new(0),
        };
        let _: String = conn
            .query(&redis::cmd("PING"))
            .await
            .map_err(|e| fail(format!("cannot connect: {}", message(&e))))?;
        conn.ensure_groups().await?;
        Ok(conn)
    }

    /// Requests sent so far (each is one round trip; a pipeline is one).
    pub(super) fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    fn sent(&self) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
    }

    /// Send `cmd`.
    pub(super) async fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T, QueueError> {
        self.sent();
        match cmd.query_async(&mut self.manager.clone()).await {
            // The connection broke (the server restarted): the manager
            // reconnects, and the request goes once more. Every request sent
            // through here is safe to repeat (reads, or writes keyed so that
            // a repeat does nothing new).
            Err(e) if e.is_io_error() || e.is_connection_dropped() => {
                self.sent();
                cmd.query_async(&mut self.manager.clone())
                    .await
                    .map_err(|e| self.error(e))
            }
            other => other.map_err(|e| self.error(e)),
        }
    }

    /// Send `pipe`, in one round trip.
    pub(super) async fn pipe<T: FromRedisValue>(&self, pipe: &Pipeline) -> Result<T, QueueError> {
        self.sent();
        match pipe.query_async(&mut self.manager.clone()).await {
            // As for `query`: once more on a new connection.
            Err(e) if e.is_io_error() || e.is_connection_dropped() => {
                self.sent();
                pipe.query_async(&mut self.manager.clone())
                    .await
                    .map_err(|e| self.error(e))
            }
            other => other.map_err(|e| self.error(e)),
        }
    }

    /// Run a script (its body is sent only when the server does not have it).
    pub(super) async fn script<T: FromRedisValue>(
        &self,
        invocation: &ScriptInvocation<'_>,
    ) -> redis::RedisResult<T> {
        self.sent();
        invocation.invoke_async(&mut self.manager.clone()).await
    }

    /// Send a request that blocks on the server for up to `block`, on a
    /// connection of its own. A kept connection that fails (the server
    /// restarted since) is dropped and the request sent once more on a new
    /// one, so blocking requests must be safe to repeat.
    pub(super) async fn blocking<T: FromRedisValue>(
        &self,
        request: Blocking<'_>,
        block: Duration,
    ) -> Result<T, QueueError> {
        let limit = block.saturating_add(Duration::from_secs(10));
        let mut kept = lock(&self.waiters).pop();
        loop {
            let fresh = kept.is_none();
            let mut conn = match kept.take() {
                Some(c) => c,
                None => {
                    // No response timeout of the client's own: the wait bounds it.
                    let config = AsyncConnectionConfig::new()
                        .set_connection_timeout(Some(Duration::from_secs(2)))
                        .set_response_timeout(None);
                    self.client
                        .get_multiplexed_async_connection_with_config(&config)
                        .await
                        .map_err(|e| self.error(e))?
                }
            };
            self.sent();
            let query = async {
                match request {
                    Blocking::Cmd(cmd) => cmd.query_async(&mut conn).await,
                    Blocking::Pipe(pipe) => pipe.query_async(&mut conn).await,
                }
            };
            // A server that stops answering loses the connection, not the caller.
            let reply = match tokio::time::timeout(limit, query).await {
                Ok(Ok(reply)) => reply,
                Ok(Err(e)) if !fresh && (e.is_io_error() || e.is_connection_dropped()) => continue,
                Ok(Err(e)) => return Err(self.error(e)),
                Err(_) => {
                    return Err(QueueError::Store {
                        store: format!("Redis at {}", self.shown),
                        message: format!("no answer within {} s", limit.as_secs()),
                    });
                }
            };
            let mut waiters = lock(&self.waiters);
            if waiters.len() < IDLE_WAITERS {
                waiters.push(conn);
            }
            return Ok(reply);
        }
    }

    /// The streams and their consumer group, created when missing (a fresh
    /// server, or one restarted without its data).
    pub(super) async fn ensure_groups(&self) -> Result<(), QueueError> {
        for stream in &self.keys.streams {
            self.sent();
            let created: redis::RedisResult<()> = redis::cmd("XGROUP")
                .arg("CREATE")
                .arg(stream)
                .arg(GROUP)
                .arg("0")
                .arg("MKSTREAM")
                .query_async(&mut self.manager.clone())
                .await;
            match created {
                Ok(()) => {}
                Err(e) if e.code() == Some("BUSYGROUP") => {}
                // A key of the wrong type, written by hand: said by the
                // worker that cannot take from it; the others are served.
                Err(e) if e.code() == Some("WRONGTYPE") => {
                    tracing::error!(
                        "Redis key `{stream}` is not a stream: jobs of its priority cannot be queued or taken until it is deleted or renamed"
                    );
                }
                Err(e) => return Err(self.error(e)),
            }
        }
        Ok(())
    }

    /// A Redis error, naming the server.
    pub(super) fn error(&self, e: redis::RedisError) -> QueueError {
        QueueError::Store {
            store: format!("Redis at {}", self.shown),
            message: e.to_string(),
        }
    }

    pub(super) fn corrupt(&self, what: &'static str, message: impl ToString) -> QueueError {
        QueueError::Corrupt {
            store: format!("Redis at {}", self.shown),
            what,
            message: message.to_string(),
        }
    }
}

/// The message of a store error, without the store's name.
fn message(e: &QueueError) -> String {
    match e {
        QueueError::Store { message, .. } => message.clone(),
        other => other.to_string(),
    }
}
