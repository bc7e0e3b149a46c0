//! The caller's side of the PostgreSQL queue: enqueue, wait for an outcome,
//! status, cancel, decide.

use std::time::{Duration, SystemTime};

use tokio_postgres::types::Type;

use crate::exec::policy::BoxFuture;
use crate::model::approval::Decision;
use crate::model::caller::Priority;
use crate::model::envelope::JobEnvelope;
use crate::model::id::Id;
use crate::model::time::from_millis;
use crate::queue::api::{
    AwaitingApproval, Cancelled, Decided, Heartbeat, JobProgress, Outcome, Queue, QueueError,
    QueueStatus, check_job, delay_until,
};
use crate::queue::postgres::backend::PostgresBackend;
use crate::queue::postgres::conn::Enqueued;
use crate::queue::postgres::events::{Channel, Waiter};

/// How often a waiter for an outcome looks again with no notification (one
/// may be missed while the listening connection reconnects).
const LOOK_AGAIN: Duration = Duration::from_secs(1);

/// A priority as the `jobs` table orders it: 0 the highest.
pub(super) fn rank(p: Priority) -> i16 {
    Priority::SERVED.iter().position(|&q| q == p).unwrap_or(2) as i16
}

/// The priority of rank `r`.
pub(super) fn priority(r: i16) -> Priority {
    Priority::SERVED
        .get(r.max(0) as usize)
        .copied()
        .unwrap_or(Priority::Normal)
}

impl PostgresBackend {
    /// Enqueue `job` and wait up to `wait` for its outcome: a job with an id
    /// of its own making is listened for before it is queued, and its
    /// outcome comes with the notification that announces it (no request
    /// for it, unless it is too large to travel that way).
    pub async fn enqueue_and_wait(
        &self,
        job: JobEnvelope,
        wait: Duration,
    ) -> Result<(Id, Option<Outcome>), QueueError> {
        if !job.minted || wait.is_zero() {
            // An id the caller brought may be another job's, or this job's,
            // done already: its outcome is looked at once queued.
            let id = self.enqueue(job).await?;
            let outcome = self.outcome(&id, wait).await?;
            return Ok((id, outcome));
        }
        self.inner.listen(Channel::Done);
        let waiter = self.inner.events.waiter(job.job_id.as_str());
        let deadline = tokio::time::Instant::now() + wait;
        let id = self.put(job, None).await?;
        let outcome = self.wait_for(&id, &waiter, deadline, false).await?;
        Ok((id, outcome))
    }

    /// The outcome of `id` once announced (to `waiter`), or found by a look
    /// (first, when `look_first`; then whenever no announcement came for a
    /// while), until `deadline`.
    async fn wait_for(
        &self,
        id: &str,
        waiter: &Waiter,
        deadline: tokio::time::Instant,
        mut look: bool,
    ) -> Result<Option<Outcome>, QueueError> {
        loop {
            // Armed before looking: an announcement between the look and
            // the wait is not missed.
            let notified = waiter.slot.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(text) = waiter.slot.outcome() {
                return serde_json::from_str(&text)
                    .map(Some)
                    .map_err(|e| self.inner.corrupt("outcome", e));
            }
            if look && let Some(o) = self.look(id).await? {
                return Ok(Some(o));
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                // A last look: the wait may have ended as it was announced.
                return self.look(id).await;
            }
            let nap = (deadline - now).min(LOOK_AGAIN);
            // Announced without the outcome (too large to travel), or not
            // heard at all for a while: look.
            look = true;
            let _ = tokio::time::timeout(nap, notified).await;
        }
    }

    /// Queue `job` now (`due` none) or later; its id.
    async fn put(&self, mut job: JobEnvelope, due: Option<SystemTime>) -> Result<Id, QueueError> {
        let c = &self.inner;
        check_job(&job, c.config.max_params_bytes)?;
        let digest = job.digest();
        let mut job = job.seal();
        let _publish = crate::exec::trace::publish("postgresql", &c.config.queue, &mut job);
        let raw = serde_json::to_string(&job).map_err(|e| c.corrupt("job", e))?;
        // The id stays taken until the outcome's own lifetime runs out.
        let delay = match due {
            Some(due) => delay_until(due)?,
            None => Duration::ZERO,
        };
        let ttl = c.config.result_ttl.saturating_add(delay).as_millis() as i64;
        let due = due.filter(|_| !delay.is_zero());
        let answer = c
            .enqueue(Enqueued {
                job_id: job.job_id.to_string(),
                digest,
                rank: rank(job.caller.priority),
                message: raw,
                ttl_ms: ttl,
                due,
            })
            .await?;
        match answer {
            -1 => Err(QueueError::JobIdTaken {
                job_id: job.job_id.to_string(),
            }),
            _ => Ok(job.job_id),
        }
    }

    /// The outcome of `id`, when one is kept.
    async fn look(&self, id: &str) -> Result<Option<Outcome>, QueueError> {
        let c = &self.inner;
        let rows = c
            .call(
                &c.sql(
                    "SELECT outcome FROM @.outcomes WHERE queue = $1 AND job_id = $2 AND until >= clock_timestamp()",
                ),
                &[(&c.config.queue, Type::TEXT), (&id, Type::TEXT)],
            )
            .await?;
        match rows.first() {
            None => Ok(None),
            Some(row) => serde_json::from_str(row.get::<_, &str>(0))
                .map(Some)
                .map_err(|e| c.corrupt("outcome", e)),
        }
    }

    /// A small function's one integer answer.
    async fn code(&self, sql: &'static str, id: &str, arg: i64) -> Result<i32, QueueError> {
        let c = &self.inner;
        let rows = c
            .call(
                &c.sql(sql),
                &[
                    (&c.config.queue, Type::TEXT),
                    (&id, Type::TEXT),
                    (&arg, Type::INT8),
                ],
            )
            .await?;
        Ok(rows.first().map_or(0, |r| r.get::<_, i32>(0)))
    }
}

impl Queue for PostgresBackend {
    fn enqueue(&self, job: JobEnvelope) -> BoxFuture<'_, Result<Id, QueueError>> {
        Box::pin(self.put(job, None))
    }

    fn enqueue_at(
        &self,
        job: JobEnvelope,
        due: SystemTime,
    ) -> BoxFuture<'_, Result<Id, QueueError>> {
        Box::pin(self.put(job, Some(due)))
    }

    fn outcome<'a>(
        &'a self,
        id: &'a str,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Option<Outcome>, QueueError>> {
        Box::pin(async move {
            if wait.is_zero() {
                return self.look(id).await;
            }
            self.inner.listen(Channel::Done);
            let waiter = self.inner.events.waiter(id);
            let deadline = tokio::time::Instant::now() + wait;
            self.wait_for(id, &waiter, deadline, true).await
        })
    }

    fn status(&self) -> BoxFuture<'_, Result<QueueStatus, QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            let listed = QueueStatus::LISTED as i32;
            let rows = c
                .call(
                    &c.sql("SELECT @.status($1, $2)"),
                    &[(&c.config.queue, Type::TEXT), (&listed, Type::INT4)],
                )
                .await?;
            let text: &str = rows.first().map_or("{}", |r| r.get(0));
            let raw: Raw = serde_json::from_str(text).map_err(|e| c.corrupt("queue status", e))?;
            let mut status = QueueStatus {
                queue: c.config.queue.clone(),
                delayed: raw.delayed,
                in_flight: raw.in_flight,
                dead_letters: raw.dead,
                ..QueueStatus::default()
            };
            for (i, p) in Priority::SERVED.iter().enumerate() {
                let n = raw
                    .waiting
                    .iter()
                    .find(|(r, _)| *r == i as i16)
                    .map_or(0, |(_, n)| *n);
                status.waiting.push((*p, n));
            }
            // Reports of workers still alive (a dead worker's job goes to
            // another, which reports afresh).
            status.running = raw
                .running
                .iter()
                .filter_map(|t| serde_json::from_str::<JobProgress>(t).ok())
                .filter(|r| raw.workers.contains(&r.worker))
                .collect();
            status.workers = raw.workers;
            status.heartbeats = raw
                .heartbeats
                .into_iter()
                .map(|(worker, ms)| Heartbeat {
                    worker,
                    alive_until: from_millis(ms),
                })
                .collect();
            status.awaiting_approval = raw
                .awaiting
                .into_iter()
                .map(|(job_id, ms)| AwaitingApproval {
                    job_id,
                    deadline: from_millis(ms),
                })
                .collect();
            Ok(status)
        })
    }

    fn progress<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<JobProgress>, QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            let rows = c
                .call(
                    &c.sql("SELECT report FROM @.progress WHERE queue = $1 AND job_id = $2"),
                    &[(&c.config.queue, Type::TEXT), (&id, Type::TEXT)],
                )
                .await?;
            match rows.first() {
                None => Ok(None),
                Some(row) => serde_json::from_str(row.get::<_, &str>(0))
                    .map(Some)
                    .map_err(|e| c.corrupt("progress", e)),
            }
        })
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Cancelled, QueueError>> {
        Box::pin(async move {
            let ttl = self.inner.config.result_ttl.as_millis() as i64;
            Ok(
                match self.code("SELECT @.cancel($1, $2, $3)", id, ttl).await? {
                    1 => Cancelled::Requested,
                    2 => Cancelled::AlreadyDone,
                    _ => Cancelled::Unknown,
                },
            )
        })
    }

    fn outcomes_kept(&self) -> Duration {
        self.inner.config.result_ttl
    }

    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
    ) -> BoxFuture<'a, Result<Decided, QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            let json = serde_json::to_string(&decision).map_err(|e| c.corrupt("decision", e))?;
            let rows = c
                .call(
                    &c.sql("SELECT @.decide($1, $2, $3)"),
                    &[
                        (&c.config.queue, Type::TEXT),
                        (&id, Type::TEXT),
                        (&json, Type::TEXT),
                    ],
                )
                .await?;
            Ok(match rows.first().map_or(0, |r| r.get::<_, i32>(0)) {
                1 => Decided::Released,
                2 => Decided::AlreadyDone,
                3 => Decided::AlreadyDecided,
                4 => Decided::Recorded,
                _ => Decided::Unknown,
            })
        })
    }

    fn secret(&self) -> BoxFuture<'_, Result<[u8; 32], QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            let made: [u8; 32] = rand::random();
            let hex: String = made.iter().map(|b| format!("{b:02x}")).collect();
            // The first to ask makes it; everyone reads the same one.
            let rows = c
                .call(
                    &c.sql(
                        "WITH made AS (INSERT INTO @.secret (secret) VALUES ($1) ON CONFLICT DO NOTHING RETURNING secret)
                         SELECT secret FROM made UNION ALL SELECT secret FROM @.secret LIMIT 1",
                    ),
                    &[(&hex, Type::TEXT)],
                )
                .await?;
            let held: &str = rows.first().map_or("", |r| r.get(0));
            if held.len() != 64 || !held.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(c.corrupt("the fleet's secret", format!("{} bytes", held.len())));
            }
            let mut out = [0u8; 32];
            for (i, b) in out.iter_mut().enumerate() {
                *b = u8::from_str_radix(&held[2 * i..2 * i + 2], 16).unwrap_or(0);
            }
            Ok(out)
        })
    }

    fn use_once<'a>(
        &'a self,
        mark: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            let ms = ttl.as_millis().clamp(1, i64::MAX as u128) as i64;
            let rows = c
                .call(
                    &c.sql(
                        "INSERT INTO @.once AS o VALUES ($1, clock_timestamp() + @.ms($2))
                         ON CONFLICT (mark) DO UPDATE SET until = excluded.until
                         WHERE o.until < clock_timestamp() RETURNING 1",
                    ),
                    &[(&mark, Type::TEXT), (&ms, Type::INT8)],
                )
                .await?;
            Ok(!rows.is_empty())
        })
    }
}

/// The queue's state as `status` answers it.
#[derive(serde::Deserialize)]
struct Raw {
    waiting: Vec<(i16, u64)>,
    in_flight: u64,
    delayed: u64,
    dead: u64,
    workers: Vec<String>,
    #[serde(default)]
    heartbeats: Vec<(String, i64)>,
    running: Vec<String>,
    awaiting: Vec<(String, i64)>,
}
