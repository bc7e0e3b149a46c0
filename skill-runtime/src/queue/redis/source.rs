//! The worker's side of the Redis queue: take jobs (highest priority first),
//! sign for those in flight, take over a dead worker's, store outcomes.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use redis::Value;
use tokio::sync::watch;

use crate::exec::policy::BoxFuture;
use crate::model::caller::Priority;
use crate::model::record::Progress;
use crate::queue::api::{JobProgress, Outcome, QueueError};
use crate::queue::redis::backend::RedisBackend;
use crate::queue::redis::conn::{Blocking, GROUP, Lua, listen};
use crate::queue::redis::keys::index;
use crate::queue::redis::reply::{field, int, items, stream_entries, text};
use crate::queue::source::{Delivery, Parking, WorkSource};

impl RedisBackend {
    /// The worker side of the queue, for a worker named `worker` (unique in
    /// the fleet; [`worker_name`](crate::queue::fleet::worker_name) makes one).
    pub async fn work_source(&self, worker: String) -> Result<RedisSource, QueueError> {
        self.inner.ensure_groups().await?;
        let wake = match self.inner.keys.clustered_layout() {
            true => Some(listen(self.inner.clone(), self.inner.keys.wake_channels()).await),
            false => None,
        };
        Ok(RedisSource {
            backend: self.clone(),
            worker,
            said: Default::default(),
            next: AtomicUsize::new(0),
            wake,
            signed: Default::default(),
        })
    }
}

/// One worker's consumer of the queue's group.
pub struct RedisSource {
    backend: RedisBackend,
    worker: String,
    /// Stream keys found holding something else, and when that was said.
    said: std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>,
    /// The partition the next take starts with: each in turn.
    next: AtomicUsize,
    /// On a cluster, bumped whenever a job is announced.
    wake: Option<watch::Receiver<u64>>,
    /// On a cluster, when this worker last wrote its heartbeat where
    /// idempotency locks are checked (a take writes it on one server).
    signed: std::sync::Mutex<Option<std::time::Instant>>,
}

impl RedisSource {
    fn priority_of(&self, stream: &str) -> Priority {
        self.backend
            .inner
            .keys
            .parts
            .iter()
            .find_map(|part| part.streams.iter().position(|s| s == stream))
            .map_or(Priority::Normal, |i| Priority::SERVED[i])
    }

    /// Run `script` with `keys` and `args`, acknowledged once the replicas
    /// asked for hold its writes when `durable`; a missing group (a server
    /// that lost its data) is created and the script run once more.
    async fn run(
        &self,
        script: &Lua,
        keys: &[&str],
        args: &[&str],
        durable: bool,
    ) -> Result<Value, QueueError> {
        let conn = &self.backend.inner;
        match conn.eval(script, keys, args, durable).await {
            Ok(v) => Ok(v),
            Err(e) if e.to_string().contains("NOGROUP") => {
                conn.ensure_groups().await?;
                conn.eval(script, keys, args, durable)
                    .await
                    .map_err(|e| conn.error(e))
            }
            Err(e) => Err(conn.error(e)),
        }
    }

    /// On a cluster, this worker's heartbeat where idempotency locks are
    /// checked, in a slot of its own: written by each sign, and by a take
    /// when the last is a quarter of the visibility timeout old (on one
    /// server, every take writes it in the same step).
    async fn sign_alive(&self, always: bool) -> Result<(), QueueError> {
        let b = &self.backend.inner;
        if !b.keys.clustered_layout() {
            return Ok(());
        }
        let fresh = crate::sync::lock(&self.signed)
            .is_some_and(|at| at.elapsed() < b.config.visibility / 4);
        if fresh && !always {
            return Ok(());
        }
        let visibility = b.config.visibility.as_millis().to_string();
        let alive = [b.keys.alive.as_str(); 6];
        self.run(
            &b.scripts.sign,
            &alive,
            &[GROUP, &self.worker, &visibility],
            false,
        )
        .await?;
        *crate::sync::lock(&self.signed) = Some(std::time::Instant::now());
        Ok(())
    }

    /// Take up to `n` new entries from the partitions, each in turn, the
    /// highest priority first within each; and the stream keys found not
    /// to be streams.
    async fn claim(&self, n: usize) -> Result<(Vec<Delivery>, Vec<String>), QueueError> {
        let keys = &self.backend.inner.keys;
        let count = keys.parts.len();
        let first = self.next.fetch_add(1, Ordering::Relaxed) % count;
        let visibility = self.backend.inner.config.visibility.as_millis().to_string();
        let heartbeat = if keys.clustered_layout() { "0" } else { "1" };
        let mut taken = Vec::new();
        let mut bad = Vec::new();
        for k in 0..count {
            if taken.len() >= n {
                break;
            }
            let i = (first + k) % count;
            let part = &keys.parts[i];
            let mut ks: Vec<&str> = part.streams.iter().map(String::as_str).collect();
            ks.push(&part.workers);
            ks.push(&part.alive);
            ks.push(&part.cancelled);
            let want = (n - taken.len()).to_string();
            let reply = self
                .run(
                    &self.backend.inner.scripts.claim,
                    &ks,
                    &[GROUP, &self.worker, &want, &visibility, heartbeat],
                    false,
                )
                .await?;
            let (entries, broken) = match items(&reply) {
                [entries, broken] => (items(entries), items(broken)),
                _ => (&[][..], &[][..]),
            };
            bad.extend(broken.iter().filter_map(text));
            for e in entries {
                if let [p, id, fields, cancelled] = items(e)
                    && let (Some(p), Some(id)) = (int(p), text(id))
                {
                    let stream = &part.streams[(p as usize).clamp(1, 4) - 1];
                    let mut d = self.delivery(stream, keys.delivery_id(i, &id), fields, 1);
                    d.cancelled = int(cancelled) == Some(1);
                    taken.push(d);
                }
            }
        }
        Ok((taken, bad))
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
        let keys = &self.backend.inner.keys.parts[0];
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
                    false,
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
            let mut wake = self.wake.clone();
            if let Some(w) = wake.as_mut() {
                w.borrow_and_update();
            }
            self.sign_alive(false).await?;
            let (mut taken, bad) = self.claim(n).await?;
            self.not_streams(&bad);
            if taken.is_empty() && !wait.is_zero() {
                taken = match wake.as_mut() {
                    // One server: a blocking read of every priority.
                    None => self.block(wait, &bad).await?,
                    // A cluster: no read spans partitions; the next
                    // announcement (or the wait's end) sends a take round.
                    Some(w) => {
                        let _ = tokio::time::timeout(wait, w.changed()).await;
                        self.claim(n).await?.0
                    }
                };
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
            for (i, part) in b.keys.parts.iter().enumerate() {
                for stream in &part.streams {
                    if taken.len() >= n {
                        return Ok(taken);
                    }
                    let count = (n - taken.len()).to_string();
                    let reply = match self
                        .run(
                            &b.scripts.reclaim,
                            &[stream, &part.dead, &part.cancelled],
                            &[GROUP, &self.worker, &idle, &count, &max],
                            false,
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
                            let mut d =
                                self.delivery(stream, b.keys.delivery_id(i, &id), fields, n);
                            d.cancelled = int(cancelled) == Some(1);
                            taken.push(d);
                        }
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
            let b = &self.backend.inner;
            let keys = &b.keys;
            let visibility = b.config.visibility.as_millis().to_string();
            // Each partition holding some of them signs for its own; the
            // first signs even for none, so the worker is seen alive.
            let mut by_part: Vec<Vec<String>> = vec![Vec::new(); keys.parts.len()];
            for (p, id) in in_flight {
                let (i, entry) = keys.entry(id);
                by_part[i].push(index(*p).to_string());
                by_part[i].push(entry.to_owned());
            }
            let mut lost = Vec::new();
            for (i, held) in by_part.iter().enumerate() {
                if i > 0 && held.is_empty() {
                    continue;
                }
                let part = &keys.parts[i];
                let mut ks: Vec<&str> = part.streams.iter().map(String::as_str).collect();
                ks.push(&part.workers);
                ks.push(&part.alive);
                let mut args: Vec<&str> = vec![GROUP, &self.worker, &visibility];
                args.extend(held.iter().map(String::as_str));
                let reply = self.run(&b.scripts.sign, &ks, &args, false).await?;
                lost.extend(
                    items(&reply)
                        .iter()
                        .filter_map(text)
                        .map(|entry| keys.delivery_id(i, &entry)),
                );
            }
            self.sign_alive(true).await?;
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
            let max = (b.config.records_max / b.keys.parts.len())
                .max(1)
                .to_string();
            let (i, entry) = b.keys.entry(&d.id);
            let part = &b.keys.parts[i];
            let result_key = part.result(&outcome.job_id);
            // Acknowledged once the replicas asked for hold the outcome: a
            // failover then cannot run the job again.
            let done = self
                .run(
                    &b.scripts.finish,
                    &[
                        part.stream(d.priority),
                        &result_key,
                        &part.records,
                        &part.decisions,
                    ],
                    &[
                        GROUP,
                        entry,
                        &text,
                        &ttl,
                        &record,
                        &max,
                        &self.worker,
                        &outcome.job_id,
                    ],
                    true,
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
            let (i, entry) = b.keys.entry(&d.id);
            self.run(
                &b.scripts.hand_back,
                &[b.keys.parts[i].stream(d.priority)],
                &[GROUP, entry, &d.message(), d.job_id().unwrap_or("")],
                true,
            )
            .await?;
            b.wake(&b.keys.parts[i]).await;
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
            let (i, entry) = b.keys.entry(&d.id);
            let part = &b.keys.parts[i];
            self.run(
                &b.scripts.dead_letter,
                &[part.stream(d.priority), &part.dead],
                &[GROUP, entry, &d.message(), reason, &n, &self.worker],
                true,
            )
            .await?;
            Ok(())
        })
    }

    fn stopping(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.backend.record_sink().flush().await;
            let keys = &self.backend.inner.keys;
            let hashes = keys.parts.iter().map(|p| &p.workers).chain([&keys.alive]);
            for hash in hashes {
                let cmd = redis::cmd("HDEL").arg(hash).arg(&self.worker).clone();
                let _: Result<Value, _> = self.backend.inner.query(&cmd).await;
            }
        })
    }

    fn promote_due(&self) -> BoxFuture<'_, Result<u64, QueueError>> {
        Box::pin(async move {
            let b = &self.backend.inner;
            let mut moved = 0;
            for part in &b.keys.parts {
                let mut cmd = redis::cmd("EVAL");
                cmd.arg(crate::queue::redis::scripts::PROMOTE)
                    .arg(5)
                    .arg(&part.delayed)
                    .arg(&part.streams[0])
                    .arg(&part.streams[1])
                    .arg(&part.streams[2])
                    .arg(&part.streams[3])
                    .arg(100);
                let reply: Value = b.query(&cmd).await?;
                let here = int(&reply).unwrap_or(0).max(0) as u64;
                if here > 0 {
                    b.wake(part).await;
                }
                moved += here;
            }
            let expired = self.backend.expire_approvals().await?;
            Ok(moved + expired)
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
            let keys = &self.backend.inner.keys;
            let mut cmds: Vec<Option<redis::Cmd>> = vec![None; keys.parts.len()];
            for (id, p) in reports {
                let report = JobProgress {
                    job_id: id.clone(),
                    worker: self.worker.clone(),
                    progress: p.clone(),
                };
                let json = serde_json::to_string(&report)
                    .map_err(|e| self.backend.inner.corrupt("progress", e))?;
                let i = keys.part_index(id);
                cmds[i]
                    .get_or_insert_with(|| {
                        let mut cmd = redis::cmd("HSET");
                        cmd.arg(&keys.parts[i].progress);
                        cmd
                    })
                    .arg(id)
                    .arg(json);
            }
            for cmd in cmds.iter().flatten() {
                self.backend.inner.query::<Value>(cmd).await?;
            }
            Ok(())
        })
    }

    fn progress_done<'a>(&'a self, job_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let cmd = redis::cmd("HDEL")
                .arg(&self.backend.inner.keys.part_of(job_id).progress)
                .arg(job_id)
                .clone();
            if let Err(e) = self.backend.inner.query::<Value>(&cmd).await {
                tracing::warn!("cannot forget job {job_id}'s progress: {e}");
            }
        })
    }

    fn cancellations(&self) -> BoxFuture<'_, Result<HashSet<String>, QueueError>> {
        Box::pin(async move {
            let mut all = HashSet::new();
            for part in &self.backend.inner.keys.parts {
                let mut cmd = redis::cmd("EVAL");
                cmd.arg(crate::queue::redis::scripts::CANCELLATIONS)
                    .arg(1)
                    .arg(&part.cancelled);
                let reply: Value = self.backend.inner.query(&cmd).await?;
                all.extend(items(&reply).iter().filter_map(text));
            }
            Ok(all)
        })
    }
}
