//! Jobs that wait for a person: parked apart from the streams (a hash of
//! their messages, a sorted set of their deadlines), released by a decision
//! (`scripts::DECIDE`), a cancellation (`scripts::CANCEL`) or their deadline
//! (`scripts::EXPIRE_APPROVALS`, run by every worker with the due jobs).
//! Keys: `{ns}:q:{queue}:awaiting`, `{ns}:q:{queue}:parked`,
//! `{ns}:q:{queue}:decisions`.

use std::time::{Duration, UNIX_EPOCH};

use redis::Value;

use crate::model::approval::Decision;
use crate::queue::api::{AwaitingApproval, Decided, QueueError, QueueStatus};
use crate::queue::redis::backend::RedisBackend;
use crate::queue::redis::reply::{int, items, text};
use crate::queue::source::{Delivery, Parking};

impl RedisBackend {
    /// Park delivery `d` of job `job_id` (held by `worker`) for up to `wait`,
    /// unless a decision is recorded already.
    pub(super) async fn park(
        &self,
        d: &Delivery,
        job_id: &str,
        wait: Duration,
        worker: &str,
    ) -> Result<Parking, QueueError> {
        let keys = &self.inner.keys;
        let slot = 1 + crate::model::caller::Priority::SERVED
            .iter()
            .position(|&p| p == d.priority)
            .unwrap_or(2);
        let member = format!("{slot}\n{}", d.message());
        let wait_ms = wait.as_millis().to_string();
        let mut invocation = self.inner.scripts.park.prepare_invoke();
        invocation
            .key(keys.stream(d.priority))
            .key(&keys.awaiting)
            .key(&keys.parked)
            .key(&keys.decisions)
            .arg(crate::queue::redis::conn::GROUP)
            .arg(&d.id)
            .arg(job_id)
            .arg(member)
            .arg(worker)
            .arg(wait_ms);
        let reply: Value = self
            .inner
            .script(&invocation)
            .await
            .map_err(|e| self.inner.error(e))?;
        match items(&reply) {
            [code, decision] if int(code) == Some(1) => Ok(Parking::Decided(
                self.decision(&text(decision).unwrap_or_default())?,
            )),
            [code] if int(code) == Some(2) => Ok(Parking::Lost),
            _ => Ok(Parking::Parked),
        }
    }

    /// Record `decision` on job `id`.
    pub(super) async fn decide_job(
        &self,
        id: &str,
        decision: &Decision,
    ) -> Result<Decided, QueueError> {
        let keys = &self.inner.keys;
        let json =
            serde_json::to_string(decision).map_err(|e| self.inner.corrupt("decision", e))?;
        let mut invocation = self.inner.scripts.decide.prepare_invoke();
        invocation
            .key(&keys.decisions)
            .key(&keys.awaiting)
            .key(&keys.parked);
        for s in &keys.streams {
            invocation.key(s);
        }
        invocation
            .key(keys.result(id))
            .key(keys.queued(id))
            .arg(id)
            .arg(json);
        let reply: Value = self
            .inner
            .script(&invocation)
            .await
            .map_err(|e| self.inner.error(e))?;
        Ok(match int(&reply) {
            Some(1) => Decided::Released,
            Some(2) => Decided::AlreadyDone,
            Some(3) => Decided::AlreadyDecided,
            Some(4) => Decided::Recorded,
            _ => Decided::Unknown,
        })
    }

    /// Put the parked jobs whose deadline passed back in line, decided
    /// expired; how many moved.
    pub(super) async fn expire_approvals(&self) -> Result<u64, QueueError> {
        let keys = &self.inner.keys;
        let mut invocation = self.inner.scripts.expire_approvals.prepare_invoke();
        invocation
            .key(&keys.awaiting)
            .key(&keys.parked)
            .key(&keys.decisions);
        for s in &keys.streams {
            invocation.key(s);
        }
        invocation.arg(100);
        let reply: Value = self
            .inner
            .script(&invocation)
            .await
            .map_err(|e| self.inner.error(e))?;
        Ok(int(&reply).unwrap_or(0).max(0) as u64)
    }

    /// The jobs parked for approval, soonest deadline first.
    pub(super) async fn awaiting(&self) -> Result<Vec<AwaitingApproval>, QueueError> {
        let reply: Value = self
            .inner
            .query(
                redis::cmd("ZRANGE")
                    .arg(&self.inner.keys.awaiting)
                    .arg(0)
                    .arg(QueueStatus::LISTED - 1)
                    .arg("WITHSCORES"),
            )
            .await?;
        Ok(items(&reply)
            .chunks(2)
            .filter_map(|p| {
                let id = p.first().and_then(text)?;
                let ms = match p.get(1)? {
                    Value::Double(ms) => *ms,
                    other => text(other)?.parse().ok()?,
                };
                Some(AwaitingApproval {
                    job_id: id,
                    deadline: UNIX_EPOCH + Duration::from_millis(ms.max(0.0) as u64),
                })
            })
            .collect())
    }

    /// A decision as stored.
    fn decision(&self, stored: &str) -> Result<Decision, QueueError> {
        Decision::read_stored(stored).map_err(|e| self.inner.corrupt("decision", e))
    }
}
