//! The worker's side of the PostgreSQL queue: take jobs (highest priority
//! first, `FOR UPDATE SKIP LOCKED`), wait for `NOTIFY` when there are none,
//! sign for those in flight, take over a dead worker's, store outcomes.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio_postgres::Row;
use tokio_postgres::types::Type;

use crate::exec::policy::BoxFuture;
use crate::model::approval::Decision;
use crate::model::caller::Priority;
use crate::model::record::Progress;
use crate::queue::api::{JobProgress, Outcome, QueueError};
use crate::queue::postgres::backend::PostgresBackend;
use crate::queue::postgres::conn::Finished;
use crate::queue::postgres::events::Channel;
use crate::queue::postgres::queue::priority;
use crate::queue::source::{Delivery, Parking, WorkSource};

/// How many `promote_due` calls (one every half second per worker) between
/// two sweeps of what has lapsed: about a minute.
const SWEEP_EVERY: u32 = 120;

impl PostgresBackend {
    /// The worker side of the queue, for a worker named `worker` (unique in
    /// the fleet; [`worker_name`](crate::queue::fleet::worker_name) makes
    /// one).
    pub async fn work_source(&self, worker: String) -> Result<PostgresSource, QueueError> {
        self.inner.listen(Channel::Jobs);
        Ok(PostgresSource {
            backend: self.clone(),
            worker,
            promoted: AtomicU32::new(0),
        })
    }
}

/// One worker's side of the queue.
pub struct PostgresSource {
    backend: PostgresBackend,
    worker: String,
    promoted: AtomicU32,
}

impl PostgresSource {
    fn visibility_ms(&self) -> i64 {
        self.backend.inner.config.visibility.as_millis() as i64
    }

    /// The deliveries of rows `(seq, priority, deliveries, message,
    /// cancelled)`, highest priority first.
    fn deliveries(rows: &[Row]) -> Vec<Delivery> {
        let mut out: Vec<(i16, i64, Delivery)> = rows
            .iter()
            .map(|r| {
                let seq: i64 = r.get(0);
                let rank: i16 = r.get(1);
                let n: i32 = r.get(2);
                let mut d = Delivery::read(
                    seq.to_string(),
                    priority(rank),
                    n.max(1) as u64,
                    r.get::<_, String>(3),
                );
                d.cancelled = r.get(4);
                (rank, seq, d)
            })
            .collect();
        out.sort_by_key(|(rank, seq, _)| (*rank, *seq));
        out.into_iter().map(|(_, _, d)| d).collect()
    }

    /// Take up to `n` waiting jobs now.
    async fn take_now(&self, n: usize) -> Result<Vec<Delivery>, QueueError> {
        let c = &self.backend.inner;
        let n = n.min(i32::MAX as usize) as i32;
        let rows = c
            .call(
                &c.sql("SELECT * FROM @.take($1, $2, $3, $4)"),
                &[
                    (&c.config.queue, Type::TEXT),
                    (&self.worker, Type::TEXT),
                    (&n, Type::INT4),
                    (&self.visibility_ms(), Type::INT8),
                ],
            )
            .await?;
        Ok(Self::deliveries(&rows))
    }

    /// The row of delivery `d`.
    fn seq(d: &Delivery) -> i64 {
        d.id.parse().unwrap_or(-1)
    }
}

impl WorkSource for PostgresSource {
    fn worker(&self) -> &str {
        &self.worker
    }

    fn queue(&self) -> (&'static str, &str) {
        ("postgresql", &self.backend.inner.config.queue)
    }

    fn take(&self, n: usize, wait: Duration) -> BoxFuture<'_, Result<Vec<Delivery>, QueueError>> {
        Box::pin(async move {
            // Subscribed before looking: a job queued between the look and
            // the wait wakes it.
            let mut queued = self.backend.inner.events.jobs_changed();
            queued.borrow_and_update();
            let taken = self.take_now(n).await?;
            if !taken.is_empty() || wait.is_zero() {
                return Ok(taken);
            }
            if tokio::time::timeout(wait, queued.changed()).await.is_err() {
                return Ok(Vec::new());
            }
            self.take_now(n).await
        })
    }

    fn reclaim(&self, n: usize) -> BoxFuture<'_, Result<Vec<Delivery>, QueueError>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let n = n.min(i32::MAX as usize) as i32;
            let max = c.config.max_deliveries as i32;
            let rows = c
                .call(
                    &c.sql("SELECT * FROM @.reclaim($1, $2, $3, $4, $5)"),
                    &[
                        (&c.config.queue, Type::TEXT),
                        (&self.worker, Type::TEXT),
                        (&n, Type::INT4),
                        (&self.visibility_ms(), Type::INT8),
                        (&max, Type::INT4),
                    ],
                )
                .await?;
            Ok(Self::deliveries(&rows))
        })
    }

    fn keep_alive<'a>(
        &'a self,
        in_flight: &'a [(Priority, String)],
    ) -> BoxFuture<'a, Result<Vec<(Priority, String)>, QueueError>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let held: Vec<i64> = in_flight
                .iter()
                .filter_map(|(_, id)| id.parse().ok())
                .collect();
            let rows = c
                .call(
                    &c.sql("SELECT * FROM @.sign($1, $2, $3, $4)"),
                    &[
                        (&c.config.queue, Type::TEXT),
                        (&self.worker, Type::TEXT),
                        (&self.visibility_ms(), Type::INT8),
                        (&held, Type::INT8_ARRAY),
                    ],
                )
                .await?;
            let lost: Vec<String> = rows
                .iter()
                .map(|r| r.get::<_, i64>(0).to_string())
                .collect();
            Ok(in_flight
                .iter()
                .filter(|(_, id)| lost.contains(id))
                .cloned()
                .collect())
        })
    }

    fn starting(&self, job_id: &str) {
        self.backend.record_sink().capture(job_id);
    }

    fn complete<'a>(
        &'a self,
        d: &'a Delivery,
        outcome: &'a Outcome,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let text = serde_json::to_string(outcome).map_err(|e| c.corrupt("outcome", e))?;
            // The job's own run record, stored in the same step as its outcome.
            let sink = self.backend.record_sink();
            let record = sink.captured(&outcome.job_id).unwrap_or_default();
            let answer = c
                .finish(Finished {
                    seq: Self::seq(d),
                    worker: self.worker.clone(),
                    job_id: outcome.job_id.clone(),
                    outcome: text,
                    record,
                })
                .await?;
            sink.release(&outcome.job_id);
            match answer {
                0 => tracing::warn!(
                    job_id = %outcome.job_id,
                    "job {} was taken over by another worker while this one held it; its outcome is the other worker's",
                    outcome.job_id
                ),
                2 => tracing::warn!(
                    job_id = %outcome.job_id,
                    "job {} was no longer queued (dead-lettered after its worker stopped answering); its outcome and record are stored",
                    outcome.job_id
                ),
                _ => {}
            }
            Ok(())
        })
    }

    fn hand_back<'a>(&'a self, d: &'a Delivery) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let message = d.message();
            c.call(
                &c.sql("SELECT @.hand_back($1, $2, $3, $4)"),
                &[
                    (&c.config.queue, Type::TEXT),
                    (&Self::seq(d), Type::INT8),
                    (&self.worker, Type::TEXT),
                    (&message.as_ref(), Type::TEXT),
                ],
            )
            .await
            .map(drop)
        })
    }

    fn dead_letter<'a>(
        &'a self,
        d: &'a Delivery,
        reason: &'a str,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let message = d.message();
            let n = d.deliveries.min(i32::MAX as u64) as i32;
            c.call(
                &c.sql("SELECT @.dead_letter($1, $2, $3, $4, $5, $6, $7)"),
                &[
                    (&c.config.queue, Type::TEXT),
                    (&Self::seq(d), Type::INT8),
                    (&d.job_id().unwrap_or(""), Type::TEXT),
                    (&message.as_ref(), Type::TEXT),
                    (&reason, Type::TEXT),
                    (&n, Type::INT4),
                    (&self.worker, Type::TEXT),
                ],
            )
            .await
            .map(drop)
        })
    }

    fn stopping(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.backend.record_sink().flush().await;
            let c = &self.backend.inner;
            let _ = c
                .call(
                    &c.sql("DELETE FROM @.workers WHERE worker = $1"),
                    &[(&self.worker, Type::TEXT)],
                )
                .await;
        })
    }

    fn park<'a>(
        &'a self,
        d: &'a Delivery,
        job_id: &'a str,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Parking, QueueError>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let wait_ms = wait.as_millis().min(i64::MAX as u128) as i64;
            let rows = c
                .call(
                    &c.sql("SELECT @.park($1, $2, $3, $4, $5)"),
                    &[
                        (&c.config.queue, Type::TEXT),
                        (&Self::seq(d), Type::INT8),
                        (&job_id, Type::TEXT),
                        (&self.worker, Type::TEXT),
                        (&wait_ms, Type::INT8),
                    ],
                )
                .await?;
            let answer: &str = rows.first().map_or("0", |r| r.get(0));
            Ok(match answer.split_at(1) {
                ("1", decision) => Parking::Decided(
                    Decision::read_stored(decision).map_err(|e| c.corrupt("decision", e))?,
                ),
                ("2", _) => Parking::Lost,
                _ => Parking::Parked,
            })
        })
    }

    fn promote_due(&self) -> BoxFuture<'_, Result<u64, QueueError>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            if self
                .promoted
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(SWEEP_EVERY)
            {
                let max = c.config.records_max.min(i64::MAX as usize) as i64;
                let runs =
                    crate::queue::postgres::stores::PostgresRuns::KEPT_FOR.as_millis() as i64;
                if let Err(e) = c
                    .call(
                        &c.sql("SELECT @.sweep($1, $2)"),
                        &[(&max, Type::INT8), (&runs, Type::INT8)],
                    )
                    .await
                {
                    tracing::warn!("cannot sweep what has lapsed: {e}");
                }
            }
            let rows = c
                .call(
                    &c.sql("SELECT @.promote($1, 100)"),
                    &[(&c.config.queue, Type::TEXT)],
                )
                .await?;
            Ok(rows.first().map_or(0, |r| r.get::<_, i64>(0)).max(0) as u64)
        })
    }

    fn report_progress<'a>(
        &'a self,
        reports: &'a [(String, Progress)],
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let mut ids = Vec::with_capacity(reports.len());
            let mut texts = Vec::with_capacity(reports.len());
            for (id, p) in reports {
                let report = JobProgress {
                    job_id: id.clone(),
                    worker: self.worker.clone(),
                    progress: p.clone(),
                };
                texts.push(serde_json::to_string(&report).map_err(|e| c.corrupt("progress", e))?);
                ids.push(id.as_str());
            }
            c.call(
                &c.sql(
                    "INSERT INTO @.progress SELECT $1, i, r FROM unnest($2::text[], $3::text[]) AS u(i, r)
                     ON CONFLICT (queue, job_id) DO UPDATE SET report = excluded.report",
                ),
                &[
                    (&c.config.queue, Type::TEXT),
                    (&ids, Type::TEXT_ARRAY),
                    (&texts, Type::TEXT_ARRAY),
                ],
            )
            .await
            .map(drop)
        })
    }

    fn progress_done<'a>(&'a self, job_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let c = &self.backend.inner;
            if let Err(e) = c
                .call(
                    &c.sql("DELETE FROM @.progress WHERE queue = $1 AND job_id = $2"),
                    &[(&c.config.queue, Type::TEXT), (&job_id, Type::TEXT)],
                )
                .await
            {
                tracing::warn!("cannot forget job {job_id}'s progress: {e}");
            }
        })
    }

    fn cancellations(&self) -> BoxFuture<'_, Result<HashSet<String>, QueueError>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let rows = c
                .call(
                    &c.sql(
                        "SELECT job_id FROM @.cancels WHERE queue = $1 AND until >= clock_timestamp() LIMIT 100000",
                    ),
                    &[(&c.config.queue, Type::TEXT)],
                )
                .await?;
            Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
        })
    }
}
