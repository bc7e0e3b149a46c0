//! The caller's side of the Redis queue: enqueue, wait for an outcome, status.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::Value;

use crate::exec::policy::BoxFuture;
use crate::model::approval::Decision;
use crate::model::caller::Priority;
use crate::model::envelope::JobEnvelope;
use crate::model::id::Id;
use crate::model::time::from_millis;
use crate::queue::api::{
    Cancelled, Decided, Heartbeat, JobProgress, Outcome, Queue, QueueError, QueueStatus, check_job,
    delay_until,
};
use crate::queue::redis::backend::RedisBackend;
use crate::queue::redis::conn::{Blocking, GROUP};
use crate::queue::redis::keys::index;
use crate::queue::redis::reply::{int, items, text};
use crate::queue::redis::scripts;

impl RedisBackend {
    /// Enqueue `job` and wait up to `wait` for its outcome, in one round trip
    /// (the queueing and the wait are pipelined).
    pub async fn enqueue_and_wait(
        &self,
        job: JobEnvelope,
        wait: Duration,
    ) -> Result<(Id, Option<Outcome>), QueueError> {
        if !job.minted {
            // An id the caller brought may be another job's: its outcome is
            // waited on only once the queue has taken the job as its own.
            let id = self.enqueue(job).await?;
            let outcome = self.outcome(&id, wait).await?;
            return Ok((id, outcome));
        }
        let message = self.message(job)?;
        let key = self.inner.keys.part_of(&message.id).result(&message.id);
        let mut pipe = redis::pipe();
        pipe.add_command(self.enqueue_cmd(&message)).ignore();
        let waits = self.inner.wait_for_replicas(&mut pipe);
        pipe.cmd("BLMOVE")
            .arg(&key)
            .arg(&key)
            .arg("LEFT")
            .arg("RIGHT")
            .arg(seconds(wait));
        let moved = if waits {
            let (acked, moved): (i64, Value) =
                self.inner.blocking(Blocking::Pipe(&pipe), wait).await?;
            self.inner
                .replicated(acked)
                .map_err(|e| self.inner.error(e))?;
            moved
        } else {
            let (moved,): (Value,) = self.inner.blocking(Blocking::Pipe(&pipe), wait).await?;
            moved
        };
        let outcome = self.read_outcome(&moved)?;
        Ok((message.id, outcome))
    }

    /// Queue `message` on its priority's stream, once: the script (sent
    /// whole, so a pipeline never meets a server that lacks it) queues
    /// nothing when its id was taken within the outcome's lifetime.
    fn enqueue_cmd(&self, message: &Message) -> redis::Cmd {
        let part = self.inner.keys.part_of(&message.id);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(scripts::ENQUEUE)
            .arg(2)
            .arg(&message.stream)
            .arg(part.queued(&message.id))
            .arg(&message.raw)
            .arg(self.inner.config.result_ttl.as_millis() as u64)
            .arg(&message.digest)
            .arg(message.id.as_str())
            .arg(part.wake.as_deref().unwrap_or(""));
        cmd
    }

    /// The job as the queue holds it.
    fn message(&self, mut job: JobEnvelope) -> Result<Message, QueueError> {
        check_job(&job, self.inner.config.max_params_bytes)?;
        let digest = job.digest();
        let mut job = job.seal();
        let _publish = crate::exec::trace::publish("redis", &self.inner.config.queue, &mut job);
        let raw = serde_json::to_string(&job).map_err(|e| self.inner.corrupt("job", e))?;
        let stream = self
            .inner
            .keys
            .part_of(job.job_id.as_str())
            .stream(job.caller.priority)
            .to_owned();
        Ok(Message {
            id: job.job_id,
            raw,
            stream,
            digest,
        })
    }

    fn read_outcome(&self, v: &Value) -> Result<Option<Outcome>, QueueError> {
        match text(v) {
            None => Ok(None),
            Some(t) => serde_json::from_str(&t)
                .map(Some)
                .map_err(|e| self.inner.corrupt("outcome", e)),
        }
    }
}

/// The job's id, unless the enqueue script answered that another job holds
/// it (-1).
fn taken_or(reply: &Value, id: Id) -> Result<Id, QueueError> {
    if int(reply) == Some(-1) {
        return Err(QueueError::JobIdTaken {
            job_id: id.to_string(),
        });
    }
    Ok(id)
}

/// A job as queued: its id, its message, its priority's stream, and the
/// digest that tells it from another job brought with the same id.
struct Message {
    id: Id,
    raw: String,
    stream: String,
    digest: String,
}

/// Seconds, as blocking commands take them (at least a millisecond: 0 would
/// block forever).
fn seconds(d: Duration) -> f64 {
    d.as_secs_f64().max(0.001)
}

impl Queue for RedisBackend {
    fn enqueue(&self, job: JobEnvelope) -> BoxFuture<'_, Result<Id, QueueError>> {
        Box::pin(async move {
            let message = self.message(job)?;
            let cmd = self.enqueue_cmd(&message);
            let stream = message.stream.clone();
            // Once more after a failure (the connection reconnects on its
            // own): queueing is safe to repeat.
            let reply = match self.inner.durable(&cmd).await {
                Ok(reply) => reply,
                Err(_) => self.inner.durable(&cmd).await.map_err(|e| match e {
                    QueueError::Store { store, message } if message.contains("WRONGTYPE") => {
                        QueueError::Store {
                            store,
                            message: format!(
                                "key `{}` is not a stream: delete or rename it to queue jobs of this priority",
                                stream
                            ),
                        }
                    }
                    e => e,
                })?,
            };
            taken_or(&reply, message.id)
        })
    }

    fn outcome<'a>(
        &'a self,
        id: &'a str,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Option<Outcome>, QueueError>> {
        Box::pin(async move {
            let key = self.inner.keys.part_of(id).result(id);
            let reply: Value = if wait.is_zero() {
                self.inner
                    .query(redis::cmd("LINDEX").arg(&key).arg(0))
                    .await?
            } else {
                // Rotating the one-element list onto itself returns it and
                // keeps it (and its expiry) for other readers.
                let mut cmd = redis::cmd("BLMOVE");
                cmd.arg(&key)
                    .arg(&key)
                    .arg("LEFT")
                    .arg("RIGHT")
                    .arg(seconds(wait));
                self.inner.blocking(Blocking::Cmd(&cmd), wait).await?
            };
            self.read_outcome(&reply)
        })
    }

    fn enqueue_at(
        &self,
        job: JobEnvelope,
        due: SystemTime,
    ) -> BoxFuture<'_, Result<Id, QueueError>> {
        Box::pin(async move {
            let delay = delay_until(due)?;
            if delay.is_zero() {
                return self.enqueue(job).await;
            }
            let index = index(job.caller.priority);
            let message = self.message(job)?;
            let part = self.inner.keys.part_of(&message.id);
            let due_ms = due
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            // The id stays taken until the outcome's own lifetime runs out.
            let ttl = self.inner.config.result_ttl.saturating_add(delay);
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(scripts::ENQUEUE_AT)
                .arg(2)
                .arg(&part.delayed)
                .arg(part.queued(&message.id))
                .arg(format!("{index}\n{}", message.raw))
                .arg(ttl.as_millis() as u64)
                .arg(&message.digest)
                .arg(due_ms);
            let reply = self.inner.durable(&cmd).await?;
            taken_or(&reply, message.id)
        })
    }

    fn progress<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<JobProgress>, QueueError>> {
        Box::pin(async move {
            let cmd = redis::cmd("HGET")
                .arg(&self.inner.keys.part_of(id).progress)
                .arg(id)
                .clone();
            let reply: Value = self.inner.query(&cmd).await?;
            match text(&reply) {
                None => Ok(None),
                Some(t) => serde_json::from_str(&t)
                    .map(Some)
                    .map_err(|e| self.inner.corrupt("progress", e)),
            }
        })
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Cancelled, QueueError>> {
        Box::pin(async move {
            let keys = self.inner.keys.part_of(id);
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(scripts::CANCEL)
                .arg(9)
                .arg(keys.result(id))
                .arg(keys.queued(id))
                .arg(&keys.cancelled)
                .arg(&keys.parked)
                .arg(&keys.awaiting)
                .arg(&keys.streams[0])
                .arg(&keys.streams[1])
                .arg(&keys.streams[2])
                .arg(&keys.streams[3])
                .arg(id)
                .arg(self.inner.config.result_ttl.as_millis() as u64);
            let reply: Value = self.inner.query(&cmd).await?;
            if int(&reply) == Some(1) {
                self.inner.wake(keys).await;
            }
            Ok(match int(&reply) {
                Some(1) => Cancelled::Requested,
                Some(2) => Cancelled::AlreadyDone,
                _ => Cancelled::Unknown,
            })
        })
    }

    fn outcomes_kept(&self) -> Duration {
        self.inner.config.result_ttl
    }

    fn secret(&self) -> BoxFuture<'_, Result<[u8; 32], QueueError>> {
        Box::pin(async move {
            let key = format!("{}:secret", self.inner.keys.ns);
            let made: [u8; 32] = rand::random();
            let hex: String = made.iter().map(|b| format!("{b:02x}")).collect();
            // The first to ask makes it; everyone reads the same one.
            let mut pipe = redis::pipe();
            pipe.cmd("SET").arg(&key).arg(&hex).arg("NX").ignore();
            pipe.cmd("GET").arg(&key);
            let (held,): (Option<String>,) = self.inner.pipe(&pipe).await?;
            let held = held.unwrap_or_default();
            let mut out = [0u8; 32];
            if held.len() != 64 || !held.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(self
                    .inner
                    .corrupt("the fleet's secret", format!("{} bytes", held.len())));
            }
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
            let key = format!("{}:once:{mark}", self.inner.keys.ns);
            let ms = ttl.as_millis().clamp(1, u128::from(u64::MAX)) as u64;
            let set: Value = self
                .inner
                .query(
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(1)
                        .arg("NX")
                        .arg("PX")
                        .arg(ms),
                )
                .await?;
            Ok(matches!(set, Value::Okay))
        })
    }

    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: Decision,
    ) -> BoxFuture<'a, Result<Decided, QueueError>> {
        Box::pin(async move { self.decide_job(id, &decision).await })
    }

    fn status(&self) -> BoxFuture<'_, Result<QueueStatus, QueueError>> {
        Box::pin(async move {
            let mut status = QueueStatus {
                queue: self.inner.config.queue.clone(),
                waiting: Priority::SERVED.iter().map(|&p| (p, 0)).collect(),
                ..QueueStatus::default()
            };
            let mut alive: Vec<(String, i64)> = Vec::new();
            let mut reports = Vec::new();
            let mut now_ms = 0;
            for part in &self.inner.keys.parts {
                let mut ks: Vec<&str> = part.streams.iter().map(String::as_str).collect();
                ks.push(&part.dead);
                ks.push(&part.workers);
                let reply = self
                    .inner
                    .eval(&self.inner.scripts.status, &ks, &[GROUP], false)
                    .await
                    .map_err(|e| self.inner.error(e))?;
                let [counts, seen, now, broken] = items(&reply) else {
                    return Err(self.inner.corrupt("queue status", format!("{reply:?}")));
                };
                let counts: Vec<u64> = items(counts)
                    .iter()
                    .map(|v| int(v).unwrap_or(0).max(0) as u64)
                    .collect();
                let delayed: Value = self
                    .inner
                    .query(redis::cmd("ZCARD").arg(&part.delayed))
                    .await?;
                status.delayed += int(&delayed).unwrap_or(0).max(0) as u64;
                // Acknowledged entries are deleted, so a stream holds what
                // waits and what is in flight (pending).
                for (i, waiting) in status.waiting.iter_mut().enumerate() {
                    let len = counts.get(2 * i).copied().unwrap_or(0);
                    let pending = counts.get(2 * i + 1).copied().unwrap_or(0);
                    waiting.1 += len.saturating_sub(pending);
                    status.in_flight += pending;
                }
                status.dead_letters += counts.get(8).copied().unwrap_or(0);
                now_ms = now_ms.max(int(now).unwrap_or(0));
                alive.extend(
                    items(seen)
                        .chunks(2)
                        .filter_map(|p| Some((p.first().and_then(text)?, p.get(1).and_then(int)?))),
                );
                status
                    .not_streams
                    .extend(items(broken).iter().filter_map(text));
                let hvals: Value = self
                    .inner
                    .query(redis::cmd("HVALS").arg(&part.progress))
                    .await?;
                reports.extend(items(&hvals).iter().filter_map(text));
            }
            // A heartbeat says how long its worker is alive: until its
            // visibility timeout runs out, unless it signs again.
            let mut beats: Vec<(String, i64)> = alive
                .into_iter()
                .filter(|(_, until)| *until >= now_ms)
                .collect();
            // The latest heartbeat of each (a cluster's partitions each keep
            // theirs).
            beats.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            beats.dedup_by(|a, b| a.0 == b.0);
            let workers: Vec<String> = beats.iter().map(|(w, _)| w.clone()).collect();
            status.heartbeats = beats
                .into_iter()
                .map(|(worker, until)| Heartbeat {
                    worker,
                    alive_until: from_millis(until),
                })
                .collect();
            // Reports of workers still alive (a dead worker's job goes to
            // another, which reports afresh).
            let mut running: Vec<JobProgress> = reports
                .iter()
                .filter_map(|t| serde_json::from_str::<JobProgress>(t).ok())
                .filter(|r| workers.contains(&r.worker))
                .collect();
            running.sort_by(|a, b| a.job_id.cmp(&b.job_id));
            status.running = running;
            status.workers = workers;
            status.awaiting_approval = self.awaiting().await?;
            Ok(status)
        })
    }
}
