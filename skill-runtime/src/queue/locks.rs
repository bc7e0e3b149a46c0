//! Idempotency on a shared store (Redis, PostgreSQL): one key runs once
//! across every process that shares the store. The store answers two atomic
//! steps ([`KeyStore`]); how a job waits, retries and releases is here, the
//! same on every store.
//!
//! A job takes its key's lock before its handler runs, with a fencing token
//! from the store's counter, and stores its result (kept `result_ttl`) before
//! the lock is released; a job that finds the key locked polls for the
//! result, with the configured backoff from 10 ms up to 1 s, holding no
//! worker slot meanwhile. A lock taken by a job a worker runs names the
//! worker: when that worker's heartbeat has run out (it died, or stopped
//! answering for longer than its visibility timeout), the next job with the
//! key takes the lock over at once instead of waiting out its lifetime. A
//! holder that dies outside a worker leaves a lock that expires: a waiter
//! then takes it, up to `lock_retry` times, and runs the job itself. A holder
//! whose key was taken over stores no result (see [`Fence`](crate::Fence)).

use std::sync::Arc;
use std::time::Duration;

use skill_core::manifest::Backoff;

use crate::exec::policy::BoxFuture;
use crate::exec::policy::idempotency::{Claim, Claimed, IdempotencyConfig, Shared};
use crate::model::error::InvokeError;
use crate::model::id::Id;
use crate::model::result::SkillResult;
use crate::queue::api::QueueError;

/// What a store answers a claim of a key.
pub(crate) enum Step {
    /// A result is stored: the job replays it.
    Stored(String),
    /// The lock is this claim's, with its fencing token; `took_over` names
    /// the holder whose heartbeat had run out.
    Run {
        fence: u64,
        took_over: Option<String>,
    },
    /// A live holder has the lock for this many more milliseconds.
    Held(i64),
}

/// A shared store of idempotency keys: the two atomic steps.
pub(crate) trait KeyStore: Clone + Send + Sync + 'static {
    /// How locks and results are kept.
    fn config(&self) -> IdempotencyConfig;

    /// The store, as messages name it (`Redis at ...`).
    fn shown(&self) -> String;

    /// The stored result of (`skill`, `key`), or its lock taken with value
    /// `value` for `lock_ttl` (taken over from a holder worker whose
    /// heartbeat ran out), or how long a live holder keeps it.
    fn try_claim<'a>(
        &'a self,
        skill: &'a str,
        key: &'a str,
        value: &'a str,
    ) -> BoxFuture<'a, Result<Step, QueueError>>;

    /// Store `stored` (when not empty) for `result_ttl` when the lock still
    /// holds `value`, or no one holds it and no result is stored; release the
    /// lock if it is `value`'s.
    fn finish<'a>(
        &'a self,
        skill: &'a str,
        key: &'a str,
        value: &'a str,
        stored: &'a str,
    ) -> BoxFuture<'a, Result<(), QueueError>>;
}

/// The right to run (`skill`, `key`), or the outcome of the job that holds
/// or held it.
pub(crate) async fn claim<S: KeyStore>(store: &S, skill: &str, key: &str) -> Claim {
    let config = store.config();
    // The lock's value: a token of this hold, then the worker's name.
    let value = match crate::exec::lend::holder() {
        Some(worker) => format!("{} {worker}", Id::new_v4()),
        None => Id::new_v4().to_string(),
    };
    let unavailable = |message: String| {
        Claim::Replay(Arc::new(Err(InvokeError::Unavailable {
            skill: skill.to_owned(),
            store: format!("the idempotency store ({})", store.shown()),
            message,
        })))
    };
    let mut poll = Duration::from_millis(10);
    let mut errors = 0;
    let mut expired = 0;
    let mut last_ms = i64::MAX;
    loop {
        match store.try_claim(skill, key, &value).await {
            Err(e) if errors < 5 => {
                errors += 1;
                tracing::warn!("idempotency store: {e}; trying again");
                tokio::time::sleep(Duration::from_millis(200 << errors)).await;
            }
            Err(e) => return unavailable(e.to_string()),
            Ok(Step::Stored(stored)) => {
                return Claim::Replay(Arc::new(
                    serde_json::from_str::<SkillResult>(&stored).map_err(|e| {
                        InvokeError::Internal {
                            skill: skill.to_owned(),
                            message: format!("the stored result does not read back: {e}"),
                        }
                    }),
                ));
            }
            Ok(Step::Run { fence, took_over }) => {
                if let Some(holder) = took_over {
                    tracing::warn!(
                        "idempotency key {skill}/{key}: its holder {holder} stopped answering; taken over"
                    );
                }
                return Claim::Run(Box::new(SharedClaim {
                    store: store.clone(),
                    skill: skill.to_owned(),
                    key: key.to_owned(),
                    value,
                    fence,
                    done: false,
                }));
            }
            Ok(Step::Held(ms)) => {
                // A lock whose time grew again was taken anew: its holder
                // died, and a retry has begun.
                if ms > last_ms {
                    expired += 1;
                    if expired > config.lock_retry {
                        return Claim::Replay(Arc::new(Err(InvokeError::Abandoned {
                            skill: skill.to_owned(),
                        })));
                    }
                }
                last_ms = ms;
                // Waiting holds no worker's slot.
                crate::exec::lend::idle(tokio::time::sleep(poll)).await;
                poll = match config.lock_backoff {
                    Backoff::None => poll,
                    Backoff::Linear => poll + Duration::from_millis(10),
                    Backoff::Exponential => poll * 2,
                }
                .min(Duration::from_secs(1));
            }
        }
    }
}

/// A key locked by this process's job.
struct SharedClaim<S: KeyStore> {
    store: S,
    skill: String,
    key: String,
    /// The lock's value: this hold's.
    value: String,
    fence: u64,
    done: bool,
}

/// Store `stored` (when not empty) and release the lock, if still
/// `value`'s; tried again while the store is away (at least as long as the
/// lock lasts), so that an outage loses neither the result nor the key.
async fn release<S: KeyStore>(store: S, skill: String, key: String, value: String, stored: String) {
    let patience = store.config().lock_ttl.max(Duration::from_secs(30));
    let start = tokio::time::Instant::now();
    let mut wait = Duration::from_millis(50);
    loop {
        match store.finish(&skill, &key, &value, &stored).await {
            Ok(()) => return,
            Err(e) if start.elapsed() < patience => {
                tracing::warn!("idempotency store: cannot finish key {skill}/{key} yet: {e}");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            Err(e) => {
                // The lock expires on its own; without the result, a later
                // job with this key runs again.
                tracing::error!("idempotency store: gave up finishing key {skill}/{key}: {e}");
                return;
            }
        }
    }
}

impl<S: KeyStore> SharedClaim<S> {
    /// What [`release`] needs, taken out of the claim.
    fn parts(&mut self) -> (S, String, String, String) {
        (
            self.store.clone(),
            std::mem::take(&mut self.skill),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.value),
        )
    }
}

impl<S: KeyStore> Claimed for SharedClaim<S> {
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
        let (store, skill, key, value) = self.parts();
        Box::pin(release(store, skill, key, value, stored))
    }
}

impl<S: KeyStore> Drop for SharedClaim<S> {
    fn drop(&mut self) {
        // Cancelled before it finished: release the key for other jobs now,
        // not after its lock expires.
        if !self.done
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            let (store, skill, key, value) = self.parts();
            rt.spawn(release(store, skill, key, value, String::new()));
        }
    }
}
