//! Run records on Redis: one capped stream for the whole fleet, read by
//! `stats`. A worker's job writes its record in the same step as its outcome
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
use crate::queue::redis::reply::{field, items};

/// The records stream, as a sink's writer.
pub(super) struct Writer(pub(super) Arc<Conn>);

impl RecordWriter for Writer {
    fn write<'a>(&'a self, batch: &'a [String]) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let key = self.0.keys.records();
            let mut pipe = redis::pipe();
            for r in batch {
                pipe.cmd("XADD")
                    .arg(&key)
                    .arg("MAXLEN")
                    .arg("~")
                    .arg(self.0.config.records_max)
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
    let reply: Value = conn
        .query(
            redis::cmd("XREVRANGE")
                .arg(conn.keys.records())
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(limit),
        )
        .await?;
    let mut out: Vec<String> = items(&reply)
        .iter()
        .filter_map(|e| match items(e) {
            [_, fields] => field(fields, "record"),
            _ => None,
        })
        .collect();
    out.reverse();
    Ok(out)
}
