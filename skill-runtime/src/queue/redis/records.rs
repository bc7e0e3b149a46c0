//! Run records on Redis: one capped stream for the whole fleet (one per
//! partition on a cluster, read together), read by `stats`. A worker's job writes its record in the same step as its outcome
//! (`scripts::FINISH`); every other record (a pipeline's steps, jobs run
//! directly with `invoke --redis`) goes through the fleet's
//! [`StoreSink`](crate::queue::records::StoreSink), which sends them here in
//! batches.

use std::sync::Arc;

use redis::Value;

use crate::exec::policy::BoxFuture;
use crate::queue::api::QueueError;
use crate::queue::records::RecordWriter;
use crate::queue::redis::conn::Conn;
use crate::queue::redis::reply::{field, items, text};

/// The records stream, as a sink's writer.
pub(super) struct Writer(pub(super) Arc<Conn>);

impl RecordWriter for Writer {
    fn write<'a>(&'a self, batch: &'a [String]) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            // A batch goes to one partition's stream: batches spread over them.
            let parts = &self.0.keys.parts;
            let i = batch.first().map_or(0, |r| r.len()) % parts.len();
            let key = &parts[i].records;
            let max = (self.0.config.records_max / parts.len()).max(1);
            let mut pipe = redis::pipe();
            for r in batch {
                pipe.cmd("XADD")
                    .arg(key)
                    .arg("MAXLEN")
                    .arg("~")
                    .arg(max)
                    .arg("*")
                    .arg("record")
                    .arg(r)
                    .ignore();
            }
            self.0.pipe::<()>(&pipe).await
        })
    }
}

/// The most recent `limit` records of the fleet, oldest first, as JSON text.
pub(super) async fn read(conn: &Conn, limit: usize) -> Result<Vec<String>, QueueError> {
    // The newest `limit` of each stream, merged by their entries' ids
    // (the time each was written, then a sequence).
    let mut all: Vec<((u64, u64), String)> = Vec::new();
    for part in &conn.keys.parts {
        let reply: Value = conn
            .query(
                redis::cmd("XREVRANGE")
                    .arg(&part.records)
                    .arg("+")
                    .arg("-")
                    .arg("COUNT")
                    .arg(limit),
            )
            .await?;
        all.extend(items(&reply).iter().filter_map(|e| match items(e) {
            [id, fields] => Some((entry_time(&text(id)?), field(fields, "record")?)),
            _ => None,
        }));
    }
    all.sort_by_key(|(at, _)| *at);
    let skip = all.len().saturating_sub(limit);
    Ok(all.into_iter().skip(skip).map(|(_, r)| r).collect())
}

/// A stream entry id's time and sequence.
fn entry_time(id: &str) -> (u64, u64) {
    let (ms, seq) = id.split_once('-').unwrap_or((id, "0"));
    (ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
}
