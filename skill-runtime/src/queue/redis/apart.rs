//! Jobs set apart from the lines, on Redis: the dead letters (one stream per
//! partition, `{ns}:q:{queue}:dead`, written by `scripts::DEAD_LETTER` and
//! `scripts::RECLAIM`), listed newest first, an entry read or deleted by its
//! id; the delayed jobs (a sorted set per partition, `{ns}:q:{queue}:delayed`,
//! scored by when each is due), listed soonest first.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::Value;

use crate::queue::api::{DeadLetter, QueueError};
use crate::queue::redis::backend::RedisBackend;
use crate::queue::redis::keys::Part;
use crate::queue::redis::reply::{field, int, items, score_time, text};

impl RedisBackend {
    /// The newest `limit` dead letters, newest first.
    pub(crate) async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>, QueueError> {
        let keys = &self.inner.keys;
        let mut all = Vec::new();
        for (i, part) in keys.parts.iter().enumerate() {
            let reply: Value = self
                .inner
                .query(
                    redis::cmd("XREVRANGE")
                        .arg(&part.dead)
                        .arg("+")
                        .arg("-")
                        .arg("COUNT")
                        .arg(limit),
                )
                .await?;
            all.extend(
                items(&reply)
                    .iter()
                    .filter_map(|e| self.dead_letter_of(i, e)),
            );
        }
        all.sort_by_key(|d| std::cmp::Reverse(d.at));
        all.truncate(limit);
        Ok(all)
    }

    /// Dead letter `id`, when it is still kept.
    pub(crate) async fn dead_letter(&self, id: &str) -> Result<Option<DeadLetter>, QueueError> {
        let keys = &self.inner.keys;
        let (i, entry) = keys.entry(id);
        let reply: Value = self
            .inner
            .query(
                redis::cmd("XRANGE")
                    .arg(&keys.parts[i].dead)
                    .arg(entry)
                    .arg(entry),
            )
            .await?;
        Ok(items(&reply)
            .first()
            .and_then(|e| self.dead_letter_of(i, e)))
    }

    /// Delete dead letter `id`: whether it was there.
    pub(crate) async fn discard_dead(&self, id: &str) -> Result<bool, QueueError> {
        let keys = &self.inner.keys;
        let (i, entry) = keys.entry(id);
        let reply: Value = self
            .inner
            .query(redis::cmd("XDEL").arg(&keys.parts[i].dead).arg(entry))
            .await?;
        Ok(int(&reply) == Some(1))
    }

    /// The `limit` delayed jobs due soonest: when each is due, and its
    /// message.
    pub(crate) async fn delayed_jobs(
        &self,
        limit: usize,
    ) -> Result<Vec<(SystemTime, String)>, QueueError> {
        let soonest = self.soonest(|p| &p.delayed, limit).await?;
        // A member is the priority's index, a newline, the message.
        Ok(soonest
            .into_iter()
            .filter_map(|(due, m)| Some((due, m.split_once('\n')?.1.to_owned())))
            .collect())
    }

    /// The `limit` members of every partition's sorted set `set` (scored by
    /// a time) with the soonest times, soonest first, with their times.
    pub(super) async fn soonest(
        &self,
        set: impl Fn(&Part) -> &String,
        limit: usize,
    ) -> Result<Vec<(SystemTime, String)>, QueueError> {
        let mut all = Vec::new();
        for part in &self.inner.keys.parts {
            let reply: Value = self
                .inner
                .query(
                    redis::cmd("ZRANGE")
                        .arg(set(part))
                        .arg(0)
                        .arg(limit.saturating_sub(1))
                        .arg("WITHSCORES"),
                )
                .await?;
            all.extend(
                items(&reply)
                    .chunks(2)
                    .filter_map(|p| Some((score_time(p.get(1)?)?, text(p.first()?)?))),
            );
        }
        all.sort_by_key(|(at, _)| *at);
        all.truncate(limit);
        Ok(all)
    }

    /// The dead letter an entry of partition `part`'s stream holds.
    fn dead_letter_of(&self, part: usize, entry: &Value) -> Option<DeadLetter> {
        let [id, fields] = items(entry) else {
            return None;
        };
        let id = text(id)?;
        let ms: u64 = id.split('-').next()?.parse().ok()?;
        Some(DeadLetter {
            id: self.inner.keys.delivery_id(part, &id),
            message: field(fields, "job").unwrap_or_default(),
            reason: field(fields, "reason").unwrap_or_default(),
            deliveries: field(fields, "deliveries")
                .and_then(|d| d.parse().ok())
                .unwrap_or(0),
            worker: field(fields, "worker").filter(|w| !w.is_empty()),
            at: UNIX_EPOCH + Duration::from_millis(ms),
        })
    }
}
