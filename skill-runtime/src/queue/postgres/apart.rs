//! Jobs set apart from the lines, on PostgreSQL: the dead letters (rows of
//! `dead`, written by the reclaim and dead-letter functions), listed newest
//! first, a row read or deleted by its id; the delayed jobs (rows of `jobs`
//! in state 2), listed soonest first on the `jobs_later` index.

use std::time::SystemTime;

use tokio_postgres::Row;
use tokio_postgres::types::Type;

use crate::model::time::from_millis;
use crate::queue::api::{DeadLetter, QueueError};
use crate::queue::postgres::backend::PostgresBackend;

/// The columns a dead letter is read from.
const COLUMNS: &str = "id, message, reason, deliveries, worker, @.epoch_ms(at)";

impl PostgresBackend {
    /// The newest `limit` dead letters of the queue, newest first.
    pub(crate) async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>, QueueError> {
        let c = &self.inner;
        let limit = limit.min(i64::MAX as usize) as i64;
        static SQL: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
        let sql = SQL.get_or_init(|| {
            Box::leak(
                format!("SELECT {COLUMNS} FROM @.dead WHERE queue = $1 ORDER BY id DESC LIMIT $2")
                    .into_boxed_str(),
            )
        });
        let rows = c
            .call(
                &c.sql(sql),
                &[(&c.config.queue, Type::TEXT), (&limit, Type::INT8)],
            )
            .await?;
        Ok(rows.iter().map(dead_letter_of).collect())
    }

    /// Dead letter `id`, when it is still kept.
    pub(crate) async fn dead_letter(&self, id: &str) -> Result<Option<DeadLetter>, QueueError> {
        let Ok(n) = id.parse::<i64>() else {
            return Ok(None);
        };
        let c = &self.inner;
        static SQL: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
        let sql = SQL.get_or_init(|| {
            Box::leak(
                format!("SELECT {COLUMNS} FROM @.dead WHERE queue = $1 AND id = $2")
                    .into_boxed_str(),
            )
        });
        let rows = c
            .call(
                &c.sql(sql),
                &[(&c.config.queue, Type::TEXT), (&n, Type::INT8)],
            )
            .await?;
        Ok(rows.first().map(dead_letter_of))
    }

    /// The `limit` delayed jobs due soonest: when each is due, and its
    /// message.
    pub(crate) async fn delayed_jobs(
        &self,
        limit: usize,
    ) -> Result<Vec<(SystemTime, String)>, QueueError> {
        let c = &self.inner;
        let limit = limit.min(i64::MAX as usize) as i64;
        let rows = c
            .call(
                &c.sql(
                    "SELECT message, @.epoch_ms(due_at) FROM @.jobs \
                     WHERE queue = $1 AND state = 2 ORDER BY due_at LIMIT $2",
                ),
                &[(&c.config.queue, Type::TEXT), (&limit, Type::INT8)],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| (from_millis(r.get(1)), r.get(0)))
            .collect())
    }

    /// Delete dead letter `id`: whether it was there.
    pub(crate) async fn discard_dead(&self, id: &str) -> Result<bool, QueueError> {
        let Ok(n) = id.parse::<i64>() else {
            return Ok(false);
        };
        let c = &self.inner;
        let rows = c
            .call(
                &c.sql("DELETE FROM @.dead WHERE queue = $1 AND id = $2 RETURNING id"),
                &[(&c.config.queue, Type::TEXT), (&n, Type::INT8)],
            )
            .await?;
        Ok(!rows.is_empty())
    }
}

fn dead_letter_of(r: &Row) -> DeadLetter {
    DeadLetter {
        id: r.get::<_, i64>(0).to_string(),
        message: r.get(1),
        reason: r.get(2),
        deliveries: r.get::<_, i32>(3).max(0) as u64,
        worker: r.get(4),
        at: from_millis(r.get(5)),
    }
}
