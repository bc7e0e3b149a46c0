//! The fleet's flags every command shares (`--redis URL` or `SKILL_REDIS_URL`,
//! a Redis or a PostgreSQL URL; `--namespace`, `--queue`), and the
//! connection they describe.

use std::process::ExitCode;

use skill_runtime::queue::SecretUrl;
use skill_runtime::queue::fleet::{Fleet, FleetConfig};

/// Where the fleet's store is.
#[derive(clap::Args)]
pub struct RedisArgs {
    /// The fleet's store: a Redis (redis://HOST:PORT/DB), a Redis Cluster
    /// (its nodes comma-separated: redis://H1:P1,redis://H2:P2) or a
    /// PostgreSQL database (postgres://USER:PASSWORD@HOST/DB). The queue commands use
    /// its queue; every command shares idempotency, rate limits and run
    /// records with the fleet there. Its password is never printed.
    #[arg(
        long = "redis",
        visible_alias = "store",
        env = "SKILL_REDIS_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    redis: Option<SecretUrl>,
    /// The prefix of the fleet's keys on that Redis, or the schema of its
    /// tables on that PostgreSQL.
    #[arg(long, default_value = "skill", value_name = "NS")]
    namespace: String,
    /// The queue.
    #[arg(long, default_value = "default", value_name = "NAME")]
    queue: String,
    /// How many run records the fleet keeps, the newest (Redis trims its
    /// records stream near it; on PostgreSQL, workers delete older rows).
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    records_max: usize,
    /// For a rediss:// URL, or a postgres:// URL with TLS: the certificate
    /// authority (PEM) the server's certificate is checked against, instead
    /// of the system's roots.
    #[arg(long = "redis-ca", env = "SKILL_REDIS_CA", value_name = "FILE")]
    redis_ca: Option<std::path::PathBuf>,
    /// Redis replicas that must hold a job's queueing and its outcome before
    /// either is acknowledged (WAIT): with 1, a failover of the primary
    /// loses no job the caller was told was queued. 0 takes the primary's
    /// word.
    #[arg(
        long,
        env = "SKILL_REDIS_REPLICAS",
        default_value_t = 0,
        value_name = "N"
    )]
    replicas: u32,
}

impl RedisArgs {
    /// The URL given, which prints with its password masked.
    pub fn url(&self) -> Option<&SecretUrl> {
        self.redis.as_ref()
    }

    pub fn config(&self, url: &SecretUrl) -> FleetConfig {
        FleetConfig {
            namespace: self.namespace.clone(),
            queue: self.queue.clone(),
            records_max: self.records_max,
            tls_ca: self.redis_ca.clone(),
            replicas: self.replicas,
            ..FleetConfig::new(url.clone())
        }
    }

    /// The backend, when a URL was given; an unreachable server is an error
    /// that names it.
    pub async fn connect(&self) -> Result<Option<Fleet>, ExitCode> {
        let Some(url) = &self.redis else {
            return Ok(None);
        };
        self.connect_with(self.config(url)).await.map(Some)
    }

    pub async fn connect_with(&self, config: FleetConfig) -> Result<Fleet, ExitCode> {
        Fleet::connect(config).await.map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        })
    }

    /// The backend; a command that needs one says so when there is none.
    pub async fn require(&self, command: &str) -> Result<Fleet, ExitCode> {
        match self.connect().await? {
            Some(b) => Ok(b),
            None => {
                eprintln!(
                    "error: `{command}` works on a queue on Redis or PostgreSQL: give --redis URL, or set SKILL_REDIS_URL"
                );
                Err(ExitCode::from(2))
            }
        }
    }
}
