//! Run records on PostgreSQL: rows of `records` (the job, skill, version,
//! status, times, caller and trace id as columns, the record as `jsonb`),
//! read by `stats`. A worker's job's record is stored with its outcome
//! (`finish`); every other goes through the fleet's
//! [`StoreSink`](crate::queue::records::StoreSink), which sends them here in
//! batches, one statement each.

use std::sync::Arc;

use tokio_postgres::types::Type;

use crate::exec::policy::BoxFuture;
use crate::queue::api::QueueError;
use crate::queue::postgres::conn::Conn;
use crate::queue::records::RecordWriter;

/// The records table, as a sink's writer: a batch is one statement.
pub(super) struct Writer(pub(super) Arc<Conn>);

impl RecordWriter for Writer {
    fn write<'a>(&'a self, batch: &'a [String]) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let c = &self.0;
            let array = format!("[{}]", batch.join(","));
            c.call(
                &c.sql("SELECT @.record($1::jsonb)"),
                &[(&array, Type::TEXT)],
            )
            .await
            .map(drop)
        })
    }
}

/// The most recent `limit` records, oldest first, as JSON text.
pub(super) async fn read(c: &Conn, limit: usize) -> Result<Vec<String>, QueueError> {
    let limit = limit.min(i64::MAX as usize) as i64;
    let rows = c
        .call(
            &c.sql("SELECT record::text FROM @.records ORDER BY id DESC LIMIT $1"),
            &[(&limit, Type::INT8)],
        )
        .await?;
    Ok(rows.iter().rev().map(|r| r.get::<_, String>(0)).collect())
}
