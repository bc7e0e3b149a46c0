//! The worker's side of the Redis queue: take jobs (highest priority first),
//! sign for those in flight, take over a dead worker's, store outcomes.

use std::collections::HashSet;
use std::time::Duration;

use redis::{ScriptInvocation, Value};

use crate::exec::policy::BoxFuture;
use crate::model::caller::Priority;
use crate::model::record::Progress;
use crate::queue::api::{JobProgress, Outcome, QueueError};
use crate::queue::redis::backend::RedisBackend;
use crate::queue::redis::conn::{Blocking, GROUP};
use crate::queue::redis::reply::{field, int, items, stream_entries, text};
use crate::queue::source::{Delivery, Parking, WorkSource};

impl RedisBackend {
    /// The worker side of the queue, for a worker named `worker` (unique in
    /// the fleet; [`worker_name`](crate::queue::fleet::worker_name) makes one).
    pub async fn work_source(&self, worker: String) -> Result<RedisSource, QueueError> {
        self.inner.ensure_groups().await?;
        Ok(RedisSource {
            backend: self.clone(),
            worker,
            said: Default::default(),
        })
    }
}

/// One worker's consumer of the queue's group.
pub struct RedisSource {
    backend: RedisBackend,
    worker: String,
    /// Stream keys found holding something else, and when that was said.
    said: std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>,
}

impl RedisSource {
    fn priority_of(&self, stream: &str) -> Priority {
        let keys = &self.backend.inner.keys;
        keys.streams
            .iter()
            .position(|s| s == stream)
            .map_or(Priority::Normal, |i| Priority::SERVED[i])
    }

    /// Run `script` with `keys` and `args`; a missing group (a server that
    /// lost its data) is created and the script run once more.
    async fn run(
        &self,
        script: &redis::Script,
        keys: &[&str],
        args: &[&str],
    ) -> Result<Value, QueueError> {
        let conn = &self.backend.inner;
        let mut invocation: ScriptInvocation<'_> = script.prepare_invoke();
        for k in keys {
            invocation.key(*k);
        }
        for a in args {
            invocation.arg(*a);
        }
        match conn.script::<Value>(&invocation).await {
            Ok(v) => Ok(v),
            Err(e) if e.to_string().contains("NOGROUP") => {
                conn.ensure_groups().await?;
                conn.script::<Value>(&invocation)
                    .await
                    .map_err(|e| conn.error(e))
            }
            Err(e) => Err(conn.error(e)),
        }
    }

    /// Say, loudly and at most once a minute per key, that these stream keys
    /// hold something else: their priority is not served until they are
    /// deleted or renamed (the others are).
    fn not_streams(&self, bad: &[String]) {
        let mut said = crate::sync::lock(&self.said);
        for key in bad {
            let recent = said
                .get(key)
                .is_some_and(|at| at.elapsed() < Duration::from_secs(60));
            if !recent {
                tracing::error!(
                    "Redis key `{key}` is not a stream: jobs of its priority cannot be taken until it is deleted or renamed (the other priorities are served)"
                );
                said.insert(key.clone(), std::time::Instant::now());
            }
        }
    }

    /// Wait up to `wait` for one new entry of any priority whose stream is
    /// one (`bad` are not).
    async fn block(&self, wait: Duration, bad: &[String]) -> Result<Vec<Delivery>, QueueError> {
        let keys = &self.backend.inner.keys;
        let streams: Vec<&String> = keys.streams.iter().filter(|s| !bad.contains(s)).collect();
        if streams.is_empty() {
            tokio::time::sleep(wait).await;
            return Ok(Vec::new());
        }
        let mut cmd = redis::cmd("XREADGROUP");
        cmd.arg("GROUP")
            .arg(GROUP)
            .arg(&self.worker)
            .arg("COUNT")
            .arg(1)
            .arg("BLOCK")
            .arg(wait.as_millis().max(1) as u64)
            .arg("STREAMS");
        for s in &streams {
            cmd.arg(*s);
        }
        for _ in &streams {
            cmd.arg(">");
        }
        let reply: Value = match self.backend.inner.blocking(Blocking::Cmd(&cmd), wait).await {
            Ok(v) => v,
            Err(e) => {
                if e.to_string().contains("NOGROUP") {
                    self.backend.inner.ensure_groups().await?;
                }
                return Err(e);
            }
        };
        let mut out: Vec<Delivery> = stream_entries(&reply)
            .into_iter()
            .map(|(stream, id, fields)| self.delivery(&stream, id, &fields, 1))
            .collect();
        out.sort_by_key(|d| std::cmp::Reverse(d.priority));
        // What a script's take answers with each entry, asked apart: no
        // script blocks.
        let ids: Vec<&str> = out.iter().map(|d| d.job_id().unwrap_or("")).collect();
        if !ids.is_empty() {
            let flags = self
                .run(
                    &self.backend.inner.scripts.cancelled_among,
                    &[&keys.cancelled],
                    &ids,
                )
                .await?;
            for (d, flag) in out.iter_mut().zip(items(&flags)) {
                d.cancelled = int(flag) == Some(1);
            }
        }
        Ok(out)
    }

    fn delivery(&self, stream: &str, id: String, fields: &Value, deliveries: u64) -> Delivery {
        let raw = field(fields, "job").unwrap_or_default();
        Delivery::read(id, self.priority_of(stream), deliveries, raw)
    }
}

impl WorkSource for RedisSource {
    fn worker(&self) -> &str {
        &self.worker
    }

    fn queue(&self) -> (&'static str, &str) {
        ("redis", &self.backend.inner.config.queue)
    }

    fn take(&self, n: usize, wait: Duration) -> BoxFuture<'_, Result<Vec<Delivery>, QueueError>> {
        Box::pin(async move {
            let keys = &self.backend.inner.keys;
            let mut ks: Vec<&str> = keys.streams.iter().map(String::as_str).collect();
            ks.push(&keys.workers);
            ks.push(&keys.alive);
            ks.push(&keys.cancelled);
            let n = n.to_string();
            let visibility = self.backend.inner.config.visibility.as_millis().to_string();
            let reply = self
                .run(
                    &self.backend.inner.scripts.claim,
                    &ks,
                    &[GROUP, &self.worker, &n, &visibility],
                )
                .await?;
            let (entries, bad) = match items(&reply) {
                [entries, bad] => (items(entries), items(bad)),
                _ => (&[][..], &[][..]),
            };
            let bad: Vec<String> = bad.iter().filter_map(text).collect();
            self.not_streams(&bad);
            let mut taken = Vec::new();
            for e in entries {
                if let [p, id, fields, cancelled] = items(e)
                    && let (Some(p), Some(id)) = (int(p), text(id))
                {
                    let stream = &keys.streams[(p as usize).clamp(1, 4) - 1];
                    let mut d = self.delivery(stream, id, fields, 1);
                    d.cancelled = int(cancelled) == Some(1);
                    taken.push(d);
                }
            }
            if taken.is_empty() && !wait.is_zero() {
                taken = self.block(wait, &bad).await?;
            }
            Ok(taken)
        })
    }

    fn reclaim(&self, n: usize) -> BoxFuture<'_, Result<Vec<Delivery>, QueueError>> {
        Box::pin(async move {
            let b = &self.backend.inner;
            let idle = b.config.visibility.as_millis().to_string();
            let max = b.config.max_deliveries.to_string();
            let mut taken = Vec::new();
            for stream in &b.keys.streams {
                if taken.len() >= n {
                    break;
                }
                let count = (n - taken.len()).to_string();
                let reply = match self
                    .run(
                        &b.scripts.reclaim,
                        &[stream, &b.keys.dead, &b.keys.cancelled],
                        &[GROUP, &self.worker, &idle, &count, &max],
                    )
                    .await
                {
                    Ok(reply) => reply,
                    // Said by `take`; the other priorities are still reclaimed.
                    Err(e) if e.to_string().contains("WRONGTYPE") => continue,
                    Err(e) => return Err(e),
                };
                for e in items(&reply) {
                    if let [id, fields, deliveries, cancelled] = items(e)
                        && let Some(id) = text(id)
                    {
                        let n = int(deliveries).unwrap_or(2).max(1) as u64;
                        let mut d = self.delivery(stream, id, fields, n);
                        d.cancelled = int(cancelled) == Some(1);
                        taken.push(d);
                    }
                }
            }
            Ok(taken)
        })
    }

    fn keep_alive<'a>(
        &'a self,
        in_flight: &'a [(Priority, String)],
    ) -> BoxFuture<'a, Result<Vec<(Priority, String)>, QueueError>> {
        Box::pin(async move {
            let keys = &self.backend.inner.keys;
            let mut ks: Vec<&str> = keys.streams.iter().map(String::as_str).collect();
            ks.push(&keys.workers);
            ks.push(&keys.alive);
            let visibility = self.backend.inner.config.visibility.as_millis().to_string();
            let mut args: Vec<String> = vec![GROUP.to_owned(), self.worker.clone(), visibility];
            for (p, id) in in_flight {
                let i = Priority::SERVED.iter().position(|q| q == p).unwrap_or(2) + 1;
                args.push(i.to_string());
                args.push(id.clone());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let reply = self
                .run(&self.backend.inner.scripts.sign, &ks, &args)
                .await?;
            let lost: Vec<String> = items(&reply).iter().filter_map(text).collect();
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
            let b = &self.backend.inner;
            let text = serde_json::to_string(outcome)
                .map_err(|e| self.backend.inner.corrupt("outcome", e))?;
            // The job's own run record, stored in the same step as its outcome.
            let sink = self.backend.record_sink();
            let record = sink.captured(&outcome.job_id).unwrap_or_default();
            let ttl = b.config.result_ttl.as_millis().to_string();
            let max = b.config.records_max.to_string();
            let result_key = b.keys.result(&outcome.job_id);
            let records = b.keys.records();
            let done = self
                .run(
                    &b.scripts.finish,
                    &[
                        b.keys.stream(d.priority),
                        &result_key,
                        &records,
                        &b.keys.decisions,
                    ],
                    &[
                        GROUP,
                        &d.id,
                        &text,
                        &ttl,
                        &record,
                        &max,
                        &self.worker,
                        &outcome.job_id,
                    ],
                )
                .await?;
            sink.release(&outcome.job_id);
            match int(&done) {
                Some(0) => tracing::warn!(
                    job_id = %outcome.job_id,
                    "job {} was taken over by another worker while this one held it; its outcome is the other worker's",
                    outcome.job_id
                ),
                Some(2) => tracing::warn!(
                    job_id = %outcome.job_id,
                    "Redis no longer held job {}'s delivery (restarted without persistence?); its outcome and record are stored",
                    outcome.job_id
                ),
                _ => {}
            }
            Ok(())
        })
    }

    fn hand_back<'a>(&'a self, d: &'a Delivery) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let b = &self.backend.inner;
            self.run(
                &b.scripts.hand_back,
                &[b.keys.stream(d.priority)],
                &[GROUP, &d.id, &d.message(), d.job_id().unwrap_or("")],
            )
            .await?;
            Ok(())
        })
    }

    fn dead_letter<'a>(
        &'a self,
        d: &'a Delivery,
        reason: &'a str,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let b = &self.backend.inner;
            let n = d.deliveries.to_string();
            self.run(
                &b.scripts.dead_letter,
                &[b.keys.stream(d.priority), &b.keys.dead],
                &[GROUP, &d.id, &d.message(), reason, &n, &self.worker],
            )
            .await?;
            Ok(())
        })
    }

    fn stopping(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.backend.record_sink().flush().await;
            let keys = &self.backend.inner.keys;
            let mut pipe = redis::pipe();
            pipe.cmd("HDEL")
                .arg(&keys.workers)
                .arg(&self.worker)
                .ignore()
                .cmd("HDEL")
                .arg(&keys.alive)
                .arg(&self.worker)
                .ignore();
            let _: Result<(), _> = self.backend.inner.pipe(&pipe).await;
        })
    }

    fn promote_due(&self) -> BoxFuture<'_, Result<u64, QueueError>> {
        Box::pin(async move {
            let keys = &self.backend.inner.keys;
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(crate::queue::redis::scripts::PROMOTE)
                .arg(5)
                .arg(&keys.delayed)
                .arg(&keys.streams[0])
                .arg(&keys.streams[1])
                .arg(&keys.streams[2])
                .arg(&keys.streams[3])
                .arg(100);
            let reply: Value = self.backend.inner.query(&cmd).await?;
            let expired = self.backend.expire_approvals().await?;
            Ok(int(&reply).unwrap_or(0).max(0) as u64 + expired)
        })
    }

    fn park<'a>(
        &'a self,
        d: &'a Delivery,
        job_id: &'a str,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Parking, QueueError>> {
        Box::pin(self.backend.park(d, job_id, wait, &self.worker))
    }

    fn report_progress<'a>(
        &'a self,
        reports: &'a [(String, Progress)],
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("HSET");
            cmd.arg(&self.backend.inner.keys.progress);
            for (id, p) in reports {
                let report = JobProgress {
                    job_id: id.clone(),
                    worker: self.worker.clone(),
                    progress: p.clone(),
                };
                let json = serde_json::to_string(&report)
                    .map_err(|e| self.backend.inner.corrupt("progress", e))?;
                cmd.arg(id).arg(json);
            }
            self.backend.inner.query::<Value>(&cmd).await?;
            Ok(())
        })
    }

    fn progress_done<'a>(&'a self, job_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let cmd = redis::cmd("HDEL")
                .arg(&self.backend.inner.keys.progress)
                .arg(job_id)
                .clone();
            if let Err(e) = self.backend.inner.query::<Value>(&cmd).await {
                tracing::warn!("cannot forget job {job_id}'s progress: {e}");
            }
        })
    }

    fn cancellations(&self) -> BoxFuture<'_, Result<HashSet<String>, QueueError>> {
        Box::pin(async move {
            let keys = &self.backend.inner.keys;
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(crate::queue::redis::scripts::CANCELLATIONS)
                .arg(1)
                .arg(&keys.cancelled);
            let reply: Value = self.backend.inner.query(&cmd).await?;
            Ok(items(&reply).iter().filter_map(text).collect())
        })
    }
}
