//! The connection to the fleet's Redis (one server or a cluster):
//! configuration, key names, scripts, and every request, counted (each
//! request is one round trip).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::{Cmd, FromRedisValue, Pipeline, Script, Value};
use tokio::sync::watch;

use crate::exec::policy::idempotency::IdempotencyConfig;
use crate::queue::SecretUrl;
use crate::queue::api::{MAX_DELIVERIES, QueueError, check_store};
use crate::queue::redis::keys::{Keys, Part};
use crate::queue::redis::link::{Client, Link};
use crate::queue::redis::scripts;
use crate::sync::lock;

/// The consumer group every worker of a queue belongs to.
pub(super) const GROUP: &str = "workers";

/// Idle connections kept for blocking requests, at most.
const IDLE_WAITERS: usize = 256;

/// How to reach Redis and what to keep there.
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// `redis://host:port/db` (or `rediss://`, `unix://`); a cluster's
    /// nodes comma-separated (`redis://h1:7000,redis://h2:7001`). Shown with
    /// its password masked wherever it is printed.
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
    /// Replicas that must hold a job's queueing and its outcome before
    /// either is acknowledged (`WAIT`): 0 acknowledges what the primary
    /// holds. A write the replicas do not confirm within `replica_wait` is
    /// an error (queueing is safe to send again).
    pub replicas: u32,
    /// How long a write waits for `replicas`.
    pub replica_wait: Duration,
    /// On a cluster, how many partitions a new queue is split into (the
    /// first process to use the queue fixes it; the others read it).
    pub partitions: u32,
}

impl RedisConfig {
    /// The most deliveries a job may get before it goes to the dead letters.
    pub const MAX_DELIVERIES: u32 = MAX_DELIVERIES;

    /// This configuration, when each value is within its bound:
    /// the shared backends' bounds (visibility, outcomes and idempotent
    /// results, locks), 1 to [`RedisConfig::MAX_DELIVERIES`]
    /// deliveries, at least one run record.
    pub fn check(&self) -> Result<&RedisConfig, QueueError> {
        if !(1..=1024).contains(&self.partitions) {
            return Err(QueueError::Invalid(format!(
                "partitions must be 1 to 1024, not {}",
                self.partitions
            )));
        }
        if self.replicas > 0 && self.replica_wait.is_zero() {
            return Err(QueueError::Invalid(
                "replica_wait must be more than 0 when replicas are asked for (0 waits forever)"
                    .to_owned(),
            ));
        }
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
            replicas: 0,
            replica_wait: Duration::from_secs(1),
            partitions: 8,
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
    pub(super) client: Client,
    /// Reconnects on its own; every request that does not block goes through it.
    manager: Link,
    /// Connections for requests that block (each holds its connection while it
    /// waits), kept for the next such request.
    waiters: Mutex<Vec<Link>>,
    round_trips: AtomicU64,
}

/// A script, by its digest and its text.
pub(super) struct Lua {
    script: Script,
    text: &'static str,
}

impl Lua {
    fn new(text: &'static str) -> Lua {
        Lua {
            script: Script::new(text),
            text,
        }
    }
}

pub(super) struct Scripts {
    pub(super) claim: Lua,
    pub(super) sign: Lua,
    pub(super) finish: Lua,
    pub(super) park: Lua,
    pub(super) decide: Lua,
    pub(super) expire_approvals: Lua,
    pub(super) hand_back: Lua,
    pub(super) dead_letter: Lua,
    pub(super) reclaim: Lua,
    pub(super) idem_claim: Lua,
    pub(super) idem_finish: Lua,
    pub(super) rate: Lua,
    pub(super) status: Lua,
    pub(super) cancelled_among: Lua,
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
        let ca = match &config.tls_ca {
            None => None,
            Some(ca) => Some(std::fs::read(ca).map_err(|e| {
                fail(format!(
                    "the TLS certificate authority {}: {e}",
                    ca.display()
                ))
            })?),
        };
        let client = Client::open(config.url.expose(), ca)
            .map_err(|e| fail(format!("not a Redis URL: {e}")))?;
        let manager = client
            .link()
            .await
            .map_err(|e| fail(format!("cannot connect: {e}")))?;
        let keys = if client.is_cluster() {
            let n = partitions(&manager, &config)
                .await
                .map_err(|e| fail(format!("cannot connect: {e}")))?;
            Keys::clustered(&config.namespace, &config.queue, n)
        } else {
            Keys::single(&config.namespace, &config.queue)
        };
        let conn = Conn {
            keys,
            shown: shown.clone(),
            client,
            manager,
            config,
            scripts: Scripts {
                claim: Lua::new(scripts::CLAIM),
                sign: Lua::new(scripts::SIGN),
                finish: Lua::new(scripts::FINISH),
                park: Lua::new(scripts::PARK),
                decide: Lua::new(scripts::DECIDE),
                expire_approvals: Lua::new(scripts::EXPIRE_APPROVALS),
                hand_back: Lua::new(scripts::HAND_BACK),
                dead_letter: Lua::new(scripts::DEAD_LETTER),
                reclaim: Lua::new(scripts::RECLAIM),
                idem_claim: Lua::new(scripts::IDEM_CLAIM),
                idem_finish: Lua::new(scripts::IDEM_FINISH),
                rate: Lua::new(scripts::RATE),
                status: Lua::new(scripts::STATUS),
                cancelled_among: Lua::new(scripts::CANCELLED_AMONG),
            },
            waiters: Mutex::new(Vec::new()),
            round_trips: AtomicU64::new(0),
        };
        let _: Value = conn
            .query(&redis::cmd("PING"))
            .await
            .map_err(|e| fail(format!("cannot connect: {}", message(&e))))?;
        if let Some(channel) = &conn.keys.parts[0].wake {
            // Shard channels came with Redis 7.0: an older cluster is
            // refused here, with the reason, not at each queueing. (A
            // listening worker takes the message for one more look.)
            let _: Value = conn
                .query(redis::cmd("SPUBLISH").arg(channel).arg("0"))
                .await
                .map_err(|e| {
                    fail(format!(
                        "a Redis Cluster needs Redis 7.0 or later (idle workers listen on shard channels): {}",
                        message(&e)
                    ))
                })?;
        }
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

    /// Run `script` on `keys` and `args` (by its digest; its body is sent
    /// only when the server does not have it), acknowledged once the
    /// configured replicas hold its writes when `durable`.
    pub(super) async fn eval(
        &self,
        lua: &Lua,
        keys: &[&str],
        args: &[&str],
        durable: bool,
    ) -> redis::RedisResult<Value> {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(lua.script.get_hash())
            .arg(keys.len())
            .arg(keys)
            .arg(args);
        match self.acked(&cmd, durable).await {
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                self.sent();
                // Loaded where the keys live: the script is sent by its keys.
                let mut eval = redis::cmd("EVAL");
                eval.arg(lua.text).arg(keys.len()).arg(keys).arg(args);
                self.acked(&eval, durable).await
            }
            other => other,
        }
    }

    /// Send `cmd`, followed (in the same round trip) by `WAIT` for the
    /// configured replicas when `durable`: an error when fewer confirm its
    /// writes in time.
    async fn acked(&self, cmd: &Cmd, durable: bool) -> redis::RedisResult<Value> {
        self.sent();
        let replicas = self.config.replicas;
        if !durable || replicas == 0 {
            return cmd.query_async(&mut self.manager.clone()).await;
        }
        let mut pipe = redis::pipe();
        pipe.add_command(cmd.clone());
        self.wait_for_replicas(&mut pipe);
        let (reply, acked): (Value, i64) = pipe.query_async(&mut self.manager.clone()).await?;
        self.replicated(acked)?;
        Ok(reply)
    }

    /// Add to `pipe` the `WAIT` for the configured replicas, when there are
    /// any: whether it did (its reply, the replicas that confirmed, then
    /// comes next, for [`Conn::replicated`]).
    pub(super) fn wait_for_replicas(&self, pipe: &mut redis::Pipeline) -> bool {
        let replicas = self.config.replicas;
        if replicas > 0 {
            pipe.cmd("WAIT")
                .arg(replicas)
                .arg(self.config.replica_wait.as_millis().max(1) as u64);
        }
        replicas > 0
    }

    /// Send `cmd`, a write acknowledged once the configured replicas hold it.
    pub(super) async fn durable(&self, cmd: &Cmd) -> Result<Value, QueueError> {
        self.acked(cmd, true).await.map_err(|e| self.error(e))
    }

    /// On a cluster, tell idle workers that a job is in line in partition
    /// `part` (they cannot block on every partition at once); nothing on
    /// one server, whose workers block on the streams themselves.
    pub(super) async fn wake(&self, part: &Part) {
        if let Some(channel) = &part.wake
            && let Err(e) = self
                .query::<Value>(redis::cmd("SPUBLISH").arg(channel).arg("1"))
                .await
        {
            tracing::debug!("cannot wake idle workers: {e}");
        }
    }

    /// An error unless `acked` replicas are enough.
    pub(super) fn replicated(&self, acked: i64) -> redis::RedisResult<()> {
        let asked = self.config.replicas;
        if acked < i64::from(asked) {
            return Err(redis::RedisError::from((
                redis::ErrorKind::Io,
                "not replicated",
                format!(
                    "written on the primary, but {acked} of the {asked} replicas asked for confirmed it within {} ms; sending it again is safe",
                    self.config.replica_wait.as_millis()
                ),
            )));
        }
        Ok(())
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
                // No response timeout of the client's own: the wait bounds it.
                None => self.client.waiter().await.map_err(|e| self.error(e))?,
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
        for stream in self.keys.parts.iter().flat_map(|p| &p.streams) {
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

/// Listen to `channels`, the shard channels where jobs put in line on a
/// cluster are announced: the receiver changes on each announcement (and
/// on each subscription made again after a failover, when something may
/// have been missed). The client keeps the subscriptions on the nodes that
/// serve the channels' slots; were its connection lost, it is made again,
/// until the receiver is dropped.
pub(super) async fn listen(conn: Arc<Conn>, channels: Vec<String>) -> watch::Receiver<u64> {
    let (tx, rx) = watch::channel(0u64);
    // The first subscription before the source is handed out: a job queued
    // right after is heard.
    let first = conn.client.subscribe_shards(&channels).await;
    tokio::spawn(async move {
        let mut subscribed = first.ok();
        loop {
            // The connection stays in `subscribed`: dropping it ends the
            // subscriptions.
            let Some((_, pushes)) = subscribed.as_mut() else {
                tokio::select! {
                    () = tx.closed() => return,
                    () = tokio::time::sleep(Duration::from_millis(200)) => {}
                }
                subscribed = conn.client.subscribe_shards(&channels).await.ok();
                // Whatever was announced meanwhile is looked for.
                tx.send_modify(|n| *n += 1);
                continue;
            };
            loop {
                tokio::select! {
                    () = tx.closed() => return,
                    push = pushes.recv() => match push {
                        Some(_) => tx.send_modify(|n| *n += 1),
                        None => break,
                    },
                }
            }
            subscribed = None;
        }
    });
    rx
}

/// The partitions of the queue on a cluster: what the first process to use
/// it chose, so that every process agrees.
async fn partitions(link: &Link, config: &RedisConfig) -> redis::RedisResult<u32> {
    let key = format!("{}:q:{}:partitions", config.namespace, config.queue);
    let mut link = link.clone();
    let _: Value = redis::cmd("SET")
        .arg(&key)
        .arg(config.partitions)
        .arg("NX")
        .query_async(&mut link)
        .await?;
    let n: u32 = redis::cmd("GET").arg(&key).query_async(&mut link).await?;
    Ok(n.max(1))
}

/// The message of a store error, without the store's name.
fn message(e: &QueueError) -> String {
    match e {
        QueueError::Store { message, .. } => message.clone(),
        other => other.to_string(),
    }
}
