//! The fleet's shared policy state on Redis: idempotency (a lock per key while
//! its job runs, the result kept after) and rate limits (one sliding window
//! per skill, counted by the server).

use std::sync::Arc;
use std::time::Duration;

use redis::Value;
use skill_core::manifest::Backoff;

use crate::exec::policy::BoxFuture;
use crate::exec::policy::idempotency::{Claim, Claimed, IdempotencyStore, Shared};
use crate::exec::policy::rate::{RateLimitStore, Refusal};
use crate::model::error::InvokeError;
use crate::model::id::Id;
use crate::model::result::SkillResult;
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
/// the server.
///
/// A job takes its key's lock (`SET NX PX lock_ttl`) before its handler runs,
/// with a fencing token from the namespace's counter, and stores its result
/// (kept `result_ttl`) before the lock is released; a job that finds the key
/// locked polls for the result, with the configured backoff from 10 ms up to
/// 1 s, holding no worker slot meanwhile. A lock taken by a job a worker runs
/// names the worker: when that worker's heartbeat has run out (it died, or
/// stopped answering for longer than its visibility timeout), the next job with the key takes the lock
/// over at once instead of waiting out its lifetime. A holder that dies
/// outside a worker leaves a lock that expires: a waiter then takes it, up to
/// `lock_retry` times, and runs the job itself. A holder whose key was taken
/// over stores no result (see [`Fence`](crate::Fence)).
pub struct RedisIdempotency {
    backend: RedisBackend,
}

impl RedisIdempotency {
    fn keys(&self, skill: &str, key: &str) -> (String, String) {
        let lock = format!("{}:idem:{skill}:{key}", self.backend.inner.keys.ns);
        let result = format!("{lock}:result");
        (lock, result)
    }

    async fn claim_key(&self, skill: &str, key: &str) -> Claim {
        let config = self.backend.inner.config.idempotency;
        let (lock, result) = self.keys(skill, key);
        // The lock's value: a token of this hold, then the worker's name.
        let value = match crate::exec::lend::holder() {
            Some(worker) => format!("{} {worker}", Id::new_v4()),
            None => Id::new_v4().to_string(),
        };
        let ttl = config.lock_ttl.as_millis().to_string();
        let keys = &self.backend.inner.keys;
        let unavailable = |message: String| {
            Claim::Replay(Arc::new(Err(InvokeError::Unavailable {
                skill: skill.to_owned(),
                store: format!(
                    "the idempotency store (Redis at {})",
                    self.backend.inner.shown
                ),
                message,
            })))
        };
        let mut poll = Duration::from_millis(10);
        let mut errors = 0;
        let mut expired = 0;
        let mut last_pttl = i64::MAX;
        loop {
            let inner = &self.backend.inner;
            let reply = inner
                .script::<Value>(
                    inner
                        .scripts
                        .idem_claim
                        .key(&lock)
                        .key(&result)
                        .key(&keys.alive)
                        .key(&keys.fence)
                        .arg(&value)
                        .arg(&ttl),
                )
                .await;
            let reply = match reply {
                Ok(r) => r,
                Err(e) if errors < 5 => {
                    errors += 1;
                    tracing::warn!("idempotency store: {e}; trying again");
                    tokio::time::sleep(Duration::from_millis(200 << errors)).await;
                    continue;
                }
                Err(e) => return unavailable(e.to_string()),
            };
            match items(&reply) {
                [state, stored] if int(state) == Some(0) => {
                    let stored = text(stored).unwrap_or_default();
                    return Claim::Replay(Arc::new(
                        serde_json::from_str::<SkillResult>(&stored).map_err(|e| {
                            InvokeError::Internal {
                                skill: skill.to_owned(),
                                message: format!("the stored result does not read back: {e}"),
                            }
                        }),
                    ));
                }
                [state, fence, rest @ ..] if matches!(int(state), Some(1 | 3)) => {
                    if let [holder] = rest {
                        tracing::warn!(
                            "idempotency key {lock}: its holder {} stopped answering; taken over",
                            text(holder).unwrap_or_default()
                        );
                    }
                    return Claim::Run(Box::new(RedisClaim {
                        backend: self.backend.clone(),
                        lock,
                        result,
                        value,
                        fence: int(fence).unwrap_or(0).max(0) as u64,
                        done: false,
                    }));
                }
                [_, pttl] => {
                    // A lock whose time grew again was taken anew: its holder
                    // died, and a retry has begun.
                    let pttl = int(pttl).unwrap_or(0);
                    if pttl > last_pttl {
                        expired += 1;
                        if expired > config.lock_retry {
                            return Claim::Replay(Arc::new(Err(InvokeError::Abandoned {
                                skill: skill.to_owned(),
                            })));
                        }
                    }
                    last_pttl = pttl;
                    // Waiting holds no worker's slot.
                    crate::exec::lend::idle(tokio::time::sleep(poll)).await;
                    poll = match config.lock_backoff {
                        Backoff::None => poll,
                        Backoff::Linear => poll + Duration::from_millis(10),
                        Backoff::Exponential => poll * 2,
                    }
                    .min(Duration::from_secs(1));
                }
                _ => return unavailable(format!("unexpected reply {reply:?}")),
            }
        }
    }
}

impl IdempotencyStore for RedisIdempotency {
    fn claim<'a>(&'a self, skill: &'a str, key: &'a str) -> BoxFuture<'a, Claim> {
        Box::pin(self.claim_key(skill, key))
    }
}

/// A key locked by this process's job.
struct RedisClaim {
    backend: RedisBackend,
    lock: String,
    result: String,
    /// The lock's value: this hold's.
    value: String,
    fence: u64,
    done: bool,
}

impl RedisClaim {
    /// Store `stored` (when not empty) and release the lock, if still ours;
    /// tried again while Redis is away (at least as long as the lock lasts),
    /// so that an outage loses neither the result nor the key.
    async fn release(
        backend: RedisBackend,
        lock: String,
        result: String,
        token: String,
        stored: String,
    ) {
        let config = backend.inner.config.idempotency;
        let ttl = config.result_ttl.as_millis().to_string();
        let patience = config.lock_ttl.max(Duration::from_secs(30));
        let start = tokio::time::Instant::now();
        let mut wait = Duration::from_millis(50);
        loop {
            let inner = &backend.inner;
            let done = inner
                .script::<Value>(
                    inner
                        .scripts
                        .idem_finish
                        .key(&lock)
                        .key(&result)
                        .arg(&token)
                        .arg(&stored)
                        .arg(&ttl),
                )
                .await;
            match done {
                Ok(_) => return,
                Err(e) if start.elapsed() < patience => {
                    tracing::warn!("idempotency store: cannot finish key {lock} yet: {e}");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
                Err(e) => {
                    // The lock expires on its own; without the result, a later
                    // job with this key runs again.
                    tracing::error!("idempotency store: gave up finishing key {lock}: {e}");
                    return;
                }
            }
        }
    }
}

impl Claimed for RedisClaim {
    fn token(&self) -> u64 {
        self.fence
    }

    fn finish(mut self: Box<Self>, outcome: Shared) -> BoxFuture<'static, ()> {
        self.done = true;
        // Failures are not stored: a failed job may be tried again.
        let stored = match &*outcome {
            Ok(result) => serde_json::to_string(result).unwrap_or_default(),
            Err(_) => String::new(),
        };
        let (lock, result, token) = (
            std::mem::take(&mut self.lock),
            std::mem::take(&mut self.result),
            std::mem::take(&mut self.value),
        );
        Box::pin(RedisClaim::release(
            self.backend.clone(),
            lock,
            result,
            token,
            stored,
        ))
    }
}

impl Drop for RedisClaim {
    fn drop(&mut self) {
        // Cancelled before it finished: release the key for other jobs now,
        // not after its lock expires.
        if !self.done
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(RedisClaim::release(
                self.backend.clone(),
                std::mem::take(&mut self.lock),
                std::mem::take(&mut self.result),
                std::mem::take(&mut self.value),
                String::new(),
            ));
        }
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
            let reply = inner
                .script::<i64>(
                    inner
                        .scripts
                        .rate
                        .key(&key)
                        .arg(max_per_minute)
                        .arg(60_000)
                        .arg(&member),
                )
                .await;
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
