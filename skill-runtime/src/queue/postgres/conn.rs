//! The connection to the fleet's PostgreSQL: configuration, a few client
//! connections that reconnect themselves (requests sent together on one are
//! pipelined), the schema's migrations, and the notifications idle workers
//! and waiters listen for.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{AsyncMessage, Client, Row, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::exec::policy::idempotency::IdempotencyConfig;
use crate::queue::SecretUrl;
use crate::queue::api::{MAX_DELIVERIES, QueueError, check_store};
use crate::queue::postgres::batch::Batcher;
use crate::queue::postgres::events::{Channel, Events};
use crate::queue::postgres::schema;
use crate::sync::lock;

/// How to reach PostgreSQL and what to keep there.
#[derive(Clone, Debug)]
pub struct PostgresConfig {
    /// `postgres://user:password@host:port/db?sslmode=require` (or
    /// `postgresql://`); shown with its password masked wherever it is
    /// printed.
    pub url: SecretUrl,
    /// The schema the backend's tables live in (created and migrated on
    /// connect), so deployments can share a database.
    pub schema: String,
    /// The queue's name.
    pub queue: String,
    /// How long a job a worker holds may go unsigned before another takes it.
    pub visibility: Duration,
    /// Deliveries after which a job that no worker acknowledged goes to the
    /// dead letters.
    pub max_deliveries: u32,
    /// How long outcomes are kept for `result JOB_ID`.
    pub result_ttl: Duration,
    /// How many run records the records table keeps (the newest; older
    /// rows are deleted by the workers' sweep).
    pub records_max: usize,
    /// The most JSON a job's params may hold to be queued (see
    /// `RedisConfig::max_params_bytes`).
    pub max_params_bytes: usize,
    /// Locks and results of idempotency keys.
    pub idempotency: IdempotencyConfig,
    /// For TLS (`sslmode=require`): a PEM file of the certificate authority
    /// the server's certificate is checked against, instead of Mozilla's
    /// roots.
    pub tls_ca: Option<std::path::PathBuf>,
    /// Connections kept for requests (each pipelines what is sent on it at
    /// once), besides the one that listens for notifications.
    pub connections: usize,
}

impl PostgresConfig {
    /// The most deliveries a job may get before it goes to the dead letters.
    pub const MAX_DELIVERIES: u32 = MAX_DELIVERIES;

    /// The most connections a backend keeps.
    pub const MAX_CONNECTIONS: usize = 64;

    /// `url` with the defaults: schema `skill`, queue `default`, a 30 s
    /// visibility timeout, 5 deliveries, outcomes kept one hour, 100,000 run
    /// records, the seed's idempotency defaults, 4 connections.
    pub fn new(url: impl Into<SecretUrl>) -> PostgresConfig {
        PostgresConfig {
            url: url.into(),
            schema: "skill".to_owned(),
            queue: "default".to_owned(),
            visibility: Duration::from_secs(30),
            max_deliveries: 5,
            result_ttl: Duration::from_secs(3600),
            records_max: 100_000,
            max_params_bytes: crate::exec::policy::limits::Limits::default().max_input_bytes,
            idempotency: IdempotencyConfig::default(),
            tls_ca: None,
            connections: 4,
        }
    }

    /// This configuration, when each value is within its bound (as
    /// `RedisConfig::check`), the schema's name is one, and 1 to
    /// [`PostgresConfig::MAX_CONNECTIONS`] connections are asked for.
    pub fn check(&self) -> Result<&PostgresConfig, QueueError> {
        check_store(
            self.visibility,
            self.result_ttl,
            &self.idempotency,
            self.max_deliveries,
            self.records_max,
        )?;
        if !(1..=Self::MAX_CONNECTIONS).contains(&self.connections) {
            return Err(QueueError::Invalid(format!(
                "{} connections is outside 1 to {}",
                self.connections,
                Self::MAX_CONNECTIONS
            )));
        }
        schema::check_name(&self.schema).map_err(QueueError::Invalid)?;
        Ok(self)
    }
}

/// A connection for requests, and the statements prepared on it (a handful:
/// the backend's own, by their text).
struct Handle {
    client: Client,
    statements: Mutex<HashMap<String, Statement>>,
}

/// One PostgreSQL database, as the backend's parts use it.
pub(super) struct Conn {
    pub(super) config: PostgresConfig,
    /// The URL without its password, for messages.
    pub(super) shown: String,
    pg: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    clients: Vec<tokio::sync::Mutex<Option<Arc<Handle>>>>,
    next: AtomicUsize,
    round_trips: AtomicU64,
    pub(super) events: Arc<Events>,
    /// The listening connections started, per channel.
    listening: [OnceLock<()>; 2],
    /// The backend's statements with the schema in place, by their text.
    sqls: Mutex<HashMap<&'static str, Arc<str>>>,
    /// Concurrent enqueues and finishes, sent together.
    enqueues: OnceLock<Batcher<Enqueued, i32>>,
    finishes: OnceLock<Batcher<Finished, i32>>,
}

/// A job to queue, as `enqueue_many` takes it.
pub(super) struct Enqueued {
    pub(super) job_id: String,
    pub(super) digest: String,
    pub(super) rank: i16,
    pub(super) message: String,
    pub(super) ttl_ms: i64,
    pub(super) due: Option<std::time::SystemTime>,
}

/// A job's end, as `finish_many` takes it.
pub(super) struct Finished {
    pub(super) seq: i64,
    pub(super) worker: String,
    pub(super) job_id: String,
    pub(super) outcome: String,
    pub(super) record: String,
}

impl Conn {
    /// Connect to `config.url` and bring the schema to this build's version.
    /// An unreachable server is an error that names the URL.
    pub(super) async fn open(config: PostgresConfig) -> Result<Conn, QueueError> {
        config.check()?;
        let shown = config.url.shown();
        let fail = |message: String| QueueError::Store {
            store: format!("PostgreSQL at {shown}"),
            message,
        };
        let mut pg: tokio_postgres::Config = config
            .url
            .expose()
            .parse()
            .map_err(|e| fail(format!("not a PostgreSQL URL: {e}")))?;
        if pg.get_connect_timeout().is_none() {
            pg.connect_timeout(Duration::from_secs(5));
        }
        if pg.get_application_name().is_none() {
            pg.application_name("skill-runtime");
        }
        let tls = tls(&config).map_err(fail)?;
        let conn = Conn {
            clients: (0..config.connections)
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
            next: AtomicUsize::new(0),
            round_trips: AtomicU64::new(0),
            events: Arc::default(),
            listening: [OnceLock::new(), OnceLock::new()],
            sqls: Mutex::default(),
            enqueues: OnceLock::new(),
            finishes: OnceLock::new(),
            shown,
            pg,
            tls,
            config,
        };
        conn.migrate().await?;
        Ok(conn)
    }

    /// A new connection, driven by a task of its own; its notifications go
    /// to `events` when given.
    async fn connect(&self, events: Option<Arc<Events>>) -> Result<Client, QueueError> {
        let (client, mut connection) = self
            .pg
            .connect(self.tls.clone())
            .await
            .map_err(|e| self.error(&e))?;
        let schema = self.config.schema.clone();
        tokio::spawn(async move {
            let jobs = format!("{schema}.jobs");
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(AsyncMessage::Notification(n))) => {
                        if let Some(events) = &events {
                            if n.channel() == jobs {
                                events.job_queued();
                            } else {
                                events.done(n.payload());
                            }
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        tracing::debug!("PostgreSQL connection ended: {e}");
                        return;
                    }
                    None => return,
                }
            }
        });
        Ok(client)
    }

    /// Create the schema and apply the migrations this build has and the
    /// database lacks, in one transaction under an advisory lock: workers
    /// that start together migrate once.
    async fn migrate(&self) -> Result<(), QueueError> {
        let s = &self.config.schema;
        let mut client = self.connect(None).await?;
        let tx = client.transaction().await.map_err(|e| self.error(&e))?;
        let setup = format!(
            "SELECT pg_advisory_xact_lock(hashtext('skill-runtime migrations'), hashtext('{s}'));
             CREATE SCHEMA IF NOT EXISTS \"{s}\";
             CREATE TABLE IF NOT EXISTS \"{s}\".migrations (
               version integer PRIMARY KEY,
               applied_at timestamptz NOT NULL DEFAULT now());"
        );
        tx.batch_execute(&setup).await.map_err(|e| self.error(&e))?;
        let row = tx
            .query_one(
                &format!("SELECT coalesce(max(version), 0) FROM \"{s}\".migrations"),
                &[],
            )
            .await
            .map_err(|e| self.error(&e))?;
        let at: i32 = row.get(0);
        if at > schema::latest() {
            return Err(QueueError::Invalid(format!(
                "schema `{s}` of PostgreSQL at {} is at version {at}, newer than this build's {}: upgrade this program, or give it a schema of its own",
                self.shown,
                schema::latest()
            )));
        }
        for (version, sql) in schema::pending(s, at) {
            tx.batch_execute(&sql)
                .await
                .map_err(|e| QueueError::Store {
                    store: format!("PostgreSQL at {}", self.shown),
                    message: format!("migration {version} of schema `{s}`: {}", detail(&e)),
                })?;
            tx.execute(
                &format!("INSERT INTO \"{s}\".migrations (version) VALUES ($1)"),
                &[&version],
            )
            .await
            .map_err(|e| self.error(&e))?;
        }
        tx.commit().await.map_err(|e| self.error(&e))
    }

    /// A client, connected (again) if it had to be.
    async fn client(&self) -> Result<Arc<Handle>, QueueError> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.clients.len();
        let mut slot = self.clients[i].lock().await;
        if let Some(c) = slot.as_ref()
            && !c.client.is_closed()
        {
            return Ok(c.clone());
        }
        let c = Arc::new(Handle {
            client: self.connect(None).await?,
            statements: Mutex::default(),
        });
        *slot = Some(c.clone());
        Ok(c)
    }

    /// Start the connection that listens on `channel`, once: it reconnects
    /// when it drops, and wakes every waiter then (what was announced
    /// meanwhile is not heard). Workers listen for jobs, callers for
    /// outcomes: neither hears the other's traffic.
    pub(super) fn listen(self: &Arc<Conn>, channel: Channel) {
        if self.listening[channel as usize].set(()).is_err() {
            return;
        }
        let conn = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut wait = Duration::from_millis(100);
            loop {
                let Some(c) = conn.upgrade() else { return };
                let name = channel.name(&c.config.schema);
                let listening = match c.connect(Some(c.events.clone())).await {
                    Ok(client) => client
                        .batch_execute(&format!("LISTEN \"{name}\""))
                        .await
                        .map(|()| client)
                        .map_err(|e| c.error(&e)),
                    Err(e) => Err(e),
                };
                match listening {
                    Ok(client) => {
                        wait = Duration::from_millis(100);
                        c.events.all();
                        drop(c);
                        // Held until the connection drops.
                        while !client.is_closed() {
                            tokio::time::sleep(Duration::from_millis(250)).await;
                            if conn.strong_count() == 0 {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        tracing::warn!("cannot listen for the queue's notifications: {e}");
                        drop(c);
                        tokio::time::sleep(wait).await;
                        wait = (wait * 2).min(Duration::from_secs(5));
                    }
                }
            }
        });
    }

    /// Run `sql` with `params`, each with its type: prepared once per
    /// connection (the server parses and plans it once), then one round
    /// trip per call.
    pub(super) async fn call(
        &self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<Row>, QueueError> {
        let handle = self.client().await?;
        let known = lock(&handle.statements).get(sql).cloned();
        let statement = match known {
            Some(s) => s,
            None => {
                let types: Vec<Type> = params.iter().map(|(_, t)| t.clone()).collect();
                self.round_trips.fetch_add(1, Ordering::Relaxed);
                let s = handle
                    .client
                    .prepare_typed(sql, &types)
                    .await
                    .map_err(|e| self.error(&e))?;
                lock(&handle.statements).insert(sql.to_owned(), s.clone());
                s
            }
        };
        let values: Vec<&(dyn ToSql + Sync)> = params.iter().map(|(v, _)| *v).collect();
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        handle
            .client
            .query(&statement, &values)
            .await
            .map_err(|e| self.error(&e))
    }

    /// Queue `job` (`enqueue`'s answer), with whatever other jobs are
    /// queued at the same time: one statement, one commit.
    pub(super) async fn enqueue(self: &Arc<Conn>, job: Enqueued) -> Result<i32, QueueError> {
        let batcher = self.enqueues.get_or_init(|| {
            let conn = Arc::downgrade(self);
            Batcher::start(self.config.connections, move |jobs: Vec<Enqueued>| {
                let conn = conn.clone();
                Box::pin(async move {
                    let Some(c) = conn.upgrade() else {
                        return Err(QueueError::Invalid("the backend is gone".to_owned()));
                    };
                    let mut cols = (
                        Vec::new(),
                        Vec::new(),
                        Vec::new(),
                        Vec::new(),
                        Vec::new(),
                        Vec::new(),
                    );
                    for j in jobs {
                        cols.0.push(j.job_id);
                        cols.1.push(j.digest);
                        cols.2.push(j.rank);
                        cols.3.push(j.message);
                        cols.4.push(j.ttl_ms);
                        cols.5.push(j.due);
                    }
                    let rows = c
                        .call(
                            &c.sql("SELECT @.enqueue_many($1, $2, $3, $4, $5, $6, $7)"),
                            &[
                                (&c.config.queue, Type::TEXT),
                                (&cols.0, Type::TEXT_ARRAY),
                                (&cols.1, Type::TEXT_ARRAY),
                                (&cols.2, Type::INT2_ARRAY),
                                (&cols.3, Type::TEXT_ARRAY),
                                (&cols.4, Type::INT8_ARRAY),
                                (&cols.5, Type::TIMESTAMPTZ_ARRAY),
                            ],
                        )
                        .await?;
                    Ok(rows
                        .first()
                        .map_or_else(Vec::new, |r| r.get::<_, Vec<i32>>(0)))
                })
            })
        });
        batcher.call(job).await
    }

    /// Finish a job (`finish`'s answer), with whatever other jobs finish at
    /// the same time: one statement, one commit.
    pub(super) async fn finish(self: &Arc<Conn>, job: Finished) -> Result<i32, QueueError> {
        let batcher = self.finishes.get_or_init(|| {
            let conn = Arc::downgrade(self);
            Batcher::start(self.config.connections, move |jobs: Vec<Finished>| {
                let conn = conn.clone();
                Box::pin(async move {
                    let Some(c) = conn.upgrade() else {
                        return Err(QueueError::Invalid("the backend is gone".to_owned()));
                    };
                    let mut cols = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
                    for j in jobs {
                        cols.0.push(j.seq);
                        cols.1.push(j.worker);
                        cols.2.push(j.job_id);
                        cols.3.push(j.outcome);
                        cols.4.push(j.record);
                    }
                    let ttl = c.config.result_ttl.as_millis() as i64;
                    let rows = c
                        .call(
                            &c.sql("SELECT @.finish_many($1, $2, $3, $4, $5, $6, $7)"),
                            &[
                                (&c.config.queue, Type::TEXT),
                                (&cols.0, Type::INT8_ARRAY),
                                (&cols.1, Type::TEXT_ARRAY),
                                (&cols.2, Type::TEXT_ARRAY),
                                (&cols.3, Type::TEXT_ARRAY),
                                (&ttl, Type::INT8),
                                (&cols.4, Type::TEXT_ARRAY),
                            ],
                        )
                        .await?;
                    Ok(rows
                        .first()
                        .map_or_else(Vec::new, |r| r.get::<_, Vec<i32>>(0)))
                })
            })
        });
        batcher.call(job).await
    }

    /// `sql` with this schema's name in place of `@.` and `@@`.
    /// Made once per statement and kept: every request names its
    /// statement by this text.
    pub(super) fn sql(&self, sql: &'static str) -> Arc<str> {
        lock(&self.sqls)
            .entry(sql)
            .or_insert_with(|| schema::in_schema(sql, &self.config.schema).into())
            .clone()
    }

    /// Requests sent so far.
    pub(super) fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    pub(super) fn error(&self, e: &tokio_postgres::Error) -> QueueError {
        QueueError::Store {
            store: format!("PostgreSQL at {}", self.shown),
            message: detail(e),
        }
    }

    /// What the store holds is not what this version writes.
    pub(super) fn corrupt(&self, what: &'static str, e: impl std::fmt::Display) -> QueueError {
        QueueError::Corrupt {
            store: format!("PostgreSQL at {}", self.shown),
            what,
            message: e.to_string(),
        }
    }
}

/// An error with the server's own message, when it sent one.
fn detail(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

/// The TLS connector: Mozilla's roots, or the CA file given. Whether TLS is
/// used is the URL's `sslmode` (`prefer` by default: TLS when the server
/// offers it).
fn tls(config: &PostgresConfig) -> Result<MakeRustlsConnect, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    // rustls needs a process-wide provider: ring, unless the application
    // chose one already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    match &config.tls_ca {
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Some(ca) => {
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(ca)
                .and_then(|certs| certs.collect())
                .map_err(|e| format!("the TLS certificate authority {}: {e}", ca.display()))?;
            for cert in certs {
                roots
                    .add(cert)
                    .map_err(|e| format!("the TLS certificate authority {}: {e}", ca.display()))?;
            }
        }
    }
    let tls = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(tls))
}
