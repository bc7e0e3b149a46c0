//! The fleet's shared policy state on Redis: idempotency (a lock per key while
//! its job runs, the result kept after) and rate limits (one sliding window
//! per skill, counted by the server).

use std::sync::Arc;
use std::time::Duration;

use crate::exec::policy::BoxFuture;
use crate::exec::policy::idempotency::{Claim, IdempotencyConfig, IdempotencyStore};
use crate::exec::policy::rate::{RateLimitStore, Refusal};
use crate::model::id::Id;
use crate::queue::api::QueueError;
use crate::queue::locks::{self, KeyStore, Step};
use crate::queue::redis::backend::RedisBackend;
use crate::queue::redis::reply::{int, items, text};

impl RedisBackend {
    /// Idempotency keys and results shared by every process on this Redis.
    pub fn idempotency_store(&self) -> Arc<RedisIdempotency> {
        Arc::new(RedisIdempotency {
            backend: self.clone(),
        })
    }

    /// Rate limits counted across every process on this Redis.
    pub fn rate_limits(&self) -> Arc<RedisRateLimits> {
        Arc::new(RedisRateLimits {
            backend: self.clone(),
        })
    }
}

/// Idempotency on Redis: one key runs once across every process that shares
/// the server (how jobs wait, retry and release: `queue::locks`). A key's
/// lock is `{ns}:idem:{skill}:{key}` (`SET NX PX lock_ttl`), its result
/// `{lock}:result`, the fencing tokens the namespace's counter; on a
/// cluster `{ns}:idem:{{skill}:{key}}`, so that the lock, the result and
/// the key's own fencing counter share a slot.
pub struct RedisIdempotency {
    backend: RedisBackend,
}

impl KeyStore for RedisBackend {
    fn config(&self) -> IdempotencyConfig {
        self.inner.config.idempotency
    }

    fn shown(&self) -> String {
        format!("Redis at {}", self.inner.shown)
    }

    fn try_claim<'a>(
        &'a self,
        skill: &'a str,
        key: &'a str,
        value: &'a str,
    ) -> BoxFuture<'a, Result<Step, QueueError>> {
        Box::pin(async move {
            let inner = &self.inner;
            let (lock, result, fence) = inner.keys.idempotency(skill, key);
            let ttl = inner.config.idempotency.lock_ttl.as_millis().to_string();
            let cluster = inner.keys.clustered_layout();
            // On a cluster the heartbeats are elsewhere: the claim says who
            // holds the lock, and takes it over, in a second step, only if
            // that holder still holds it once found dead.
            let heartbeats = if cluster { &lock } else { &inner.keys.alive };
            let mut probe = if cluster {
                "?".to_owned()
            } else {
                String::new()
            };
            loop {
                let reply = inner
                    .eval(
                        &inner.scripts.idem_claim,
                        &[&lock, &result, heartbeats, &fence],
                        &[value, &ttl, &probe],
                        false,
                    )
                    .await
                    .map_err(|e| inner.error(e))?;
                return Ok(match items(&reply) {
                    [state, stored] if int(state) == Some(0) => {
                        Step::Stored(text(stored).unwrap_or_default())
                    }
                    [state, fence, rest @ ..] if matches!(int(state), Some(1 | 3)) => Step::Run {
                        fence: int(fence).unwrap_or(0).max(0) as u64,
                        took_over: rest.first().and_then(text),
                    },
                    [_, pttl, held] => {
                        let held = text(held).unwrap_or_default();
                        if probe == "?" && self.holder_dead(&held).await? {
                            probe = held;
                            continue;
                        }
                        Step::Held(int(pttl).unwrap_or(0))
                    }
                    _ => return Err(inner.corrupt("idempotency claim", format!("{reply:?}"))),
                });
            }
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
            let inner = &self.inner;
            let (lock, result, _) = inner.keys.idempotency(skill, key);
            let ttl = inner.config.idempotency.result_ttl.as_millis().to_string();
            // The result is acknowledged once the replicas asked for hold
            // it: a failover then cannot run the key's job again.
            inner
                .eval(
                    &inner.scripts.idem_finish,
                    &[&lock, &result],
                    &[value, stored, &ttl],
                    true,
                )
                .await
                .map(drop)
                .map_err(|e| inner.error(e))
        })
    }
}

impl RedisBackend {
    /// Whether the worker named in lock value `held` (`token worker`) has
    /// stopped signing: its heartbeat is missing or past, by the server's
    /// clock.
    async fn holder_dead(&self, held: &str) -> Result<bool, QueueError> {
        let Some((_, holder)) = held.split_once(' ') else {
            return Ok(false);
        };
        let mut pipe = redis::pipe();
        pipe.cmd("HGET")
            .arg(&self.inner.keys.alive)
            .arg(holder)
            .cmd("TIME");
        let (alive, (secs, micros)): (Option<i64>, (i64, i64)) = self.inner.pipe(&pipe).await?;
        let now = secs * 1000 + micros / 1000;
        Ok(alive.is_none_or(|until| until < now))
    }
}

impl IdempotencyStore for RedisIdempotency {
    fn claim<'a>(&'a self, skill: &'a str, key: &'a str) -> BoxFuture<'a, Claim> {
        Box::pin(locks::claim(&self.backend, skill, key))
    }
}

/// Rate limits on Redis: exact across the fleet. Each skill's admissions of
/// the last 60 seconds are a sorted set scored by the server's clock; a job is
/// admitted while it holds fewer than the limit (one round trip, atomic).
pub struct RedisRateLimits {
    backend: RedisBackend,
}

impl RateLimitStore for RedisRateLimits {
    fn admit<'a>(
        &'a self,
        skill: &'a str,
        max_per_minute: u32,
    ) -> BoxFuture<'a, Result<(), Refusal>> {
        Box::pin(async move {
            let key = format!("{}:rate:{skill}", self.backend.inner.keys.ns);
            let inner = &self.backend.inner;
            let member = Id::new_v4().to_string();
            let max = max_per_minute.to_string();
            let reply = inner
                .eval(
                    &inner.scripts.rate,
                    &[&key],
                    &[&max, "60000", &member],
                    false,
                )
                .await
                .map(|v| int(&v).unwrap_or(0));
            match reply {
                Ok(0) => Ok(()),
                Ok(ms) => Err(Refusal::Limited(Duration::from_millis(ms.max(1) as u64))),
                Err(e) => Err(Refusal::Unavailable {
                    store: format!(
                        "the rate limit store (Redis at {})",
                        self.backend.inner.shown
                    ),
                    message: e.to_string(),
                }),
            }
        })
    }
}
