//! The Redis flags every command shares (`--redis URL` or `SKILL_REDIS_URL`,
//! `--namespace`, `--queue`), and the connection they describe.

use std::process::ExitCode;

use skill_runtime::queue::SecretUrl;
use skill_runtime::queue::redis::{RedisBackend, RedisConfig};

/// Where the fleet's Redis is.
#[derive(clap::Args)]
pub struct RedisArgs {
    /// The fleet's Redis (redis://HOST:PORT/DB): the queue commands use its
    /// queue; every command shares idempotency, rate limits and run records
    /// with the fleet there. Its password is never printed.
    #[arg(
        long = "redis",
        env = "SKILL_REDIS_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    redis: Option<SecretUrl>,
    /// The prefix of the fleet's keys on that Redis.
    #[arg(long, default_value = "skill", value_name = "NS")]
    namespace: String,
    /// The queue.
    #[arg(long, default_value = "default", value_name = "NAME")]
    queue: String,
    /// For a rediss:// URL: the certificate authority (PEM) the server's
    /// certificate is checked against, instead of the system's roots.
    #[arg(long = "redis-ca", env = "SKILL_REDIS_CA", value_name = "FILE")]
    redis_ca: Option<std::path::PathBuf>,
}

impl RedisArgs {
    /// The URL given, which prints with its password masked.
    pub fn url(&self) -> Option<&SecretUrl> {
        self.redis.as_ref()
    }

    pub fn config(&self, url: &SecretUrl) -> RedisConfig {
        RedisConfig {
            namespace: self.namespace.clone(),
            queue: self.queue.clone(),
            tls_ca: self.redis_ca.clone(),
            ..RedisConfig::new(url.clone())
        }
    }

    /// The backend, when a URL was given; an unreachable server is an error
    /// that names it.
    pub async fn connect(&self) -> Result<Option<RedisBackend>, ExitCode> {
        let Some(url) = &self.redis else {
            return Ok(None);
        };
        self.connect_with(self.config(url)).await.map(Some)
    }

    pub async fn connect_with(&self, config: RedisConfig) -> Result<RedisBackend, ExitCode> {
        RedisBackend::connect(config).await.map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        })
    }

    /// The backend; a command that needs one says so when there is none.
    pub async fn require(&self, command: &str) -> Result<RedisBackend, ExitCode> {
        match self.connect().await? {
            Some(b) => Ok(b),
            None => {
                eprintln!(
                    "error: `{command}` works on a queue on Redis: give --redis URL, or set SKILL_REDIS_URL"
                );
                Err(ExitCode::from(2))
            }
        }
    }
}
