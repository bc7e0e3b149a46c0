//! Run records on PostgreSQL: rows of `records` (the job, skill, version,
//! status, times, caller and trace id as columns, the record as `jsonb`),
//! read by `stats`. A worker's job's record is stored with its outcome
//! (`finish`); every other goes through the fleet's
//! [`StoreSink`](crate::queue::records::StoreSink), which sends them here in
//! batches, one statement each.

use std::sync::{Arc, OnceLock};

use tokio_postgres::types::Type;

use crate::exec::policy::BoxFuture;
use crate::queue::api::QueueError;
use crate::queue::postgres::conn::Conn;
use crate::queue::records::{RecordPage, RecordQuery, RecordWriter, Timing};

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

/// One page of the records `q` asks for, newest first: one statement per
/// combination of filters (each prepared once), each on an index that
/// holds its filters and the row's id (`(job_id, id)`, `(skill, id)`,
/// `(status, id)`, `(caller, id)`, of migration 2).
pub(super) async fn page(c: &Conn, q: &RecordQuery) -> Result<RecordPage, QueueError> {
    let limit = q.limit.clamp(1, 10_000);
    let before: i64 = match &q.before {
        None => i64::MAX,
        Some(cursor) => cursor
            .parse()
            .map_err(|_| QueueError::Invalid(format!("`{cursor}` is not a records cursor")))?,
    };
    let fetch = limit as i64 + 1;
    let filters = [
        ("skill", &q.skill),
        ("status", &q.status),
        ("caller", &q.user),
        ("job_id", &q.job_id),
    ];
    let mut params: Vec<(&(dyn tokio_postgres::types::ToSql + Sync), Type)> =
        vec![(&before, Type::INT8)];
    let mut mask = 0;
    for (i, (_, value)) in filters.iter().enumerate() {
        if let Some(v) = value {
            params.push((v, Type::TEXT));
            mask |= 1 << i;
        }
    }
    params.push((&fetch, Type::INT8));
    // The text of each combination, made once (the connection prepares
    // each text once too).
    static TEXTS: [OnceLock<&'static str>; 16] = [const { OnceLock::new() }; 16];
    let sql = *TEXTS[mask].get_or_init(|| {
        let mut sql = "SELECT id, record::text FROM @.records WHERE id < $1".to_owned();
        let mut n = 1;
        for (i, (column, _)) in filters.iter().enumerate() {
            if mask & (1 << i) != 0 {
                n += 1;
                sql.push_str(&format!(" AND {column} = ${n}"));
            }
        }
        sql.push_str(&format!(" ORDER BY id DESC LIMIT ${}", n + 1));
        Box::leak(sql.into_boxed_str())
    });
    let rows = c.call(&c.sql(sql), &params).await?;
    let more = rows.len() > limit;
    let rows = &rows[..rows.len().min(limit)];
    let cursors: Vec<String> = rows
        .iter()
        .map(|r| r.get::<_, i64>(0).to_string())
        .collect();
    Ok(RecordPage {
        next: if more { cursors.last().cloned() } else { None },
        records: rows.iter().map(|r| r.get::<_, String>(1)).collect(),
        cursors,
        cut_short: false,
    })
}

/// What statistics read of the most recent `limit` records, newest first.
pub(super) async fn timings(c: &Conn, limit: usize) -> Result<Vec<Timing>, QueueError> {
    let limit = limit.min(i64::MAX as usize) as i64;
    let rows = c
        .call(
            &c.sql(
                "SELECT skill, status, coalesce(duration_us, 0), \
                 coalesce(@.epoch_ms(completed_at), 0), caller \
                 FROM @.records ORDER BY id DESC LIMIT $1",
            ),
            &[(&limit, Type::INT8)],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Timing {
            skill: r.get(0),
            status: r.get(1),
            duration_us: r.get::<_, i64>(2).max(0) as u64,
            completed_ms: r.get::<_, i64>(3).max(0) as u64,
            user: r.get(4),
        })
        .collect())
}

/// The cursor just above the records that ended before `ms`: rows are
/// numbered as they are written, a little out of the order their jobs
/// ended in (several workers, batches), so the highest number among the
/// thousand that ended last before `ms` (on the `completed_at` index).
pub(super) async fn before(c: &Conn, ms: u64) -> Result<String, QueueError> {
    let ms = ms.min(i64::MAX as u64) as i64;
    let rows = c
        .call(
            &c.sql(
                "SELECT max(id) FROM (SELECT id FROM @.records \
                 WHERE completed_at < to_timestamp($1::float8 / 1000) \
                 ORDER BY completed_at DESC LIMIT 1000) last",
            ),
            &[(&ms, Type::INT8)],
        )
        .await?;
    Ok(rows
        .first()
        .and_then(|r| r.get::<_, Option<i64>>(0))
        .map_or(1, |id| id.saturating_add(1))
        .to_string())
}
