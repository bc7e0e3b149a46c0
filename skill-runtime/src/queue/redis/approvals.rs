//! Jobs that wait for a person: parked apart from the streams (a hash of
//! their messages, a sorted set of their deadlines), released by a decision
//! (`scripts::DECIDE`), a cancellation (`scripts::CANCEL`) or their deadline
//! (`scripts::EXPIRE_APPROVALS`, run by every worker with the due jobs).
//! Keys: `{ns}:q:{queue}:awaiting`, `{ns}:q:{queue}:parked`,
//! `{ns}:q:{queue}:decisions`.

use std::time::Duration;

use redis::Value;

use crate::model::approval::Decision;
use crate::queue::api::{AwaitingApproval, Decided, QueueError, QueueStatus};
use crate::queue::redis::backend::RedisBackend;
use crate::queue::redis::conn::GROUP;
use crate::queue::redis::keys::index;
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
        let (part, entry) = keys.entry(&d.id);
        let part = &keys.parts[part];
        let member = format!("{}\n{}", index(d.priority), d.message());
        let wait_ms = wait.as_millis().to_string();
        let reply = self
            .inner
            .eval(
                &self.inner.scripts.park,
                &[
                    part.stream(d.priority),
                    &part.awaiting,
                    &part.parked,
                    &part.decisions,
                ],
                &[GROUP, entry, job_id, &member, worker, &wait_ms],
                true,
            )
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
        let part = self.inner.keys.part_of(id);
        let json =
            serde_json::to_string(decision).map_err(|e| self.inner.corrupt("decision", e))?;
        let (result, queued) = (part.result(id), part.queued(id));
        let mut keys: Vec<&str> = vec![&part.decisions, &part.awaiting, &part.parked];
        keys.extend(part.streams.iter().map(String::as_str));
        keys.push(&result);
        keys.push(&queued);
        let reply = self
            .inner
            .eval(&self.inner.scripts.decide, &keys, &[id, &json], true)
            .await
            .map_err(|e| self.inner.error(e))?;
        let decided = match int(&reply) {
            Some(1) => Decided::Released,
            Some(2) => Decided::AlreadyDone,
            Some(3) => Decided::AlreadyDecided,
            Some(4) => Decided::Recorded,
            _ => Decided::Unknown,
        };
        if matches!(decided, Decided::Released) {
            self.inner.wake(part).await;
        }
        Ok(decided)
    }

    /// Put the parked jobs whose deadline passed back in line, decided
    /// expired; how many moved.
    pub(super) async fn expire_approvals(&self) -> Result<u64, QueueError> {
        let mut moved = 0;
        for part in &self.inner.keys.parts {
            let mut keys: Vec<&str> = vec![&part.awaiting, &part.parked, &part.decisions];
            keys.extend(part.streams.iter().map(String::as_str));
            let reply = self
                .inner
                .eval(&self.inner.scripts.expire_approvals, &keys, &["100"], false)
                .await
                .map_err(|e| self.inner.error(e))?;
            let here = int(&reply).unwrap_or(0).max(0) as u64;
            if here > 0 {
                self.inner.wake(part).await;
            }
            moved += here;
        }
        Ok(moved)
    }

    /// The jobs parked for approval, soonest deadline first.
    pub(super) async fn awaiting(&self) -> Result<Vec<AwaitingApproval>, QueueError> {
        let soonest = self.soonest(|p| &p.awaiting, QueueStatus::LISTED).await?;
        Ok(soonest
            .into_iter()
            .map(|(deadline, job_id)| AwaitingApproval { job_id, deadline })
            .collect())
    }

    /// The messages of parked jobs `ids`, in order (`None` for one not
    /// parked): one `HMGET` per partition that holds some.
    pub(crate) async fn parked_messages(
        &self,
        ids: &[&str],
    ) -> Result<Vec<Option<String>>, QueueError> {
        let keys = &self.inner.keys;
        let mut found = vec![None; ids.len()];
        for part in &keys.parts {
            let here: Vec<usize> = (0..ids.len())
                .filter(|i| keys.part_of(ids[*i]).parked == part.parked)
                .collect();
            if here.is_empty() {
                continue;
            }
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(&part.parked);
            for i in &here {
                cmd.arg(ids[*i]);
            }
            let reply: Value = self.inner.query(&cmd).await?;
            for (i, member) in here.iter().zip(items(&reply)) {
                // A member is the priority's index, a newline, the message.
                found[*i] = text(member)
                    .and_then(|m| m.split_once('\n').map(|(_, message)| message.to_owned()));
            }
        }
        Ok(found)
    }

    /// A decision as stored.
    fn decision(&self, stored: &str) -> Result<Decision, QueueError> {
        Decision::read_stored(stored).map_err(|e| self.inner.corrupt("decision", e))
    }
}
