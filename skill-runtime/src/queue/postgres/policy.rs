//! The fleet's shared policy state on PostgreSQL: idempotency (a row per key:
//! its lock while its job runs, the result kept after) and rate limits (each
//! skill's admissions of the last minute, counted under an advisory lock).

use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::types::Type;

use crate::exec::policy::BoxFuture;
use crate::exec::policy::idempotency::{Claim, IdempotencyConfig, IdempotencyStore};
use crate::exec::policy::rate::{RateLimitStore, Refusal};
use crate::queue::api::QueueError;
use crate::queue::locks::{self, KeyStore, Step};
use crate::queue::postgres::backend::PostgresBackend;

impl PostgresBackend {
    /// Idempotency keys and results shared by every process on this database.
    pub fn idempotency_store(&self) -> Arc<PostgresIdempotency> {
        Arc::new(PostgresIdempotency {
            backend: self.clone(),
        })
    }

    /// Rate limits counted across every process on this database.
    pub fn rate_limits(&self) -> Arc<PostgresRateLimits> {
        Arc::new(PostgresRateLimits {
            backend: self.clone(),
        })
    }
}

/// Idempotency on PostgreSQL: one key runs once across every process that
/// shares the database (how jobs wait, retry and release: as on Redis). A
/// key is a row of `idem` (its holder and lock deadline, its result and how
/// long it is kept), locked for each step; fencing tokens come from the
/// `fences` sequence.
pub struct PostgresIdempotency {
    backend: PostgresBackend,
}

impl KeyStore for PostgresBackend {
    fn config(&self) -> IdempotencyConfig {
        self.inner.config.idempotency
    }

    fn shown(&self) -> String {
        format!("PostgreSQL at {}", self.inner.shown)
    }

    fn try_claim<'a>(
        &'a self,
        skill: &'a str,
        key: &'a str,
        value: &'a str,
    ) -> BoxFuture<'a, Result<Step, QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            let ttl = c.config.idempotency.lock_ttl.as_millis() as i64;
            let rows = c
                .call(
                    &c.sql("SELECT * FROM @.idem_claim($1, $2, $3, $4)"),
                    &[
                        (&skill, Type::TEXT),
                        (&key, Type::TEXT),
                        (&value, Type::TEXT),
                        (&ttl, Type::INT8),
                    ],
                )
                .await?;
            let Some(row) = rows.first() else {
                return Err(c.corrupt("idempotency claim", "no answer"));
            };
            let state: i32 = row.get(0);
            let text: Option<String> = row.get(1);
            let n: i64 = row.get(2);
            Ok(match state {
                0 => Step::Stored(text.unwrap_or_default()),
                1 | 3 => Step::Run {
                    fence: n.max(0) as u64,
                    took_over: text,
                },
                _ => Step::Held(n),
            })
        })
    }

    fn finish<'a>(
        &'a self,
        skill: &'a str,
        key: &'a str,
        value: &'a str,
        stored: &'a str,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            let ttl = c.config.idempotency.result_ttl.as_millis() as i64;
            c.call(
                &c.sql("SELECT @.idem_finish($1, $2, $3, $4, $5)"),
                &[
                    (&skill, Type::TEXT),
                    (&key, Type::TEXT),
                    (&value, Type::TEXT),
                    (&stored, Type::TEXT),
                    (&ttl, Type::INT8),
                ],
            )
            .await
            .map(drop)
        })
    }
}

impl IdempotencyStore for PostgresIdempotency {
    fn claim<'a>(&'a self, skill: &'a str, key: &'a str) -> BoxFuture<'a, Claim> {
        Box::pin(locks::claim(&self.backend, skill, key))
    }
}

/// Rate limits on PostgreSQL: exact across the fleet. Each skill's
/// admissions of the last 60 seconds are rows stamped by the server's clock;
/// a job is admitted while there are fewer than the limit (one round trip,
/// serialized per skill by an advisory lock).
pub struct PostgresRateLimits {
    backend: PostgresBackend,
}

impl RateLimitStore for PostgresRateLimits {
    fn admit<'a>(
        &'a self,
        skill: &'a str,
        max_per_minute: u32,
    ) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let max = max_per_minute.min(i32::MAX as u32) as i32;
            let reply = c
                .call(
                    &c.sql("SELECT @.admit($1, $2, 60000)"),
                    &[(&skill, Type::TEXT), (&max, Type::INT4)],
                )
                .await;
            match reply.map(|rows| rows.first().map_or(0, |r| r.get::<_, i64>(0))) {
                Ok(0) => Ok(()),
                Ok(ms) => Err(Refusal::Limited(Duration::from_millis(ms.max(1) as u64))),
                Err(e) => Err(Refusal::Unavailable {
                    store: format!("the rate limit store (PostgreSQL at {})", c.shown),
                    message: e.to_string(),
                }),
            }
        })
    }
}
