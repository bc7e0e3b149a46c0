//! Run records on Redis: one capped stream for the whole fleet, read by
//! `stats`. A worker's job writes its record in the same step as its outcome
//! (so a record is never lost or doubled by a crash); every other record (a
//! pipeline's steps, jobs run directly with `invoke --redis`) goes through a
//! writer task that sends them in batches.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::Value;
use tokio::sync::{mpsc, oneshot};

use crate::exec::sink::RecordSink;
use crate::model::record::RunRecord;
use crate::queue::api::QueueError;
use crate::queue::redis::conn::Conn;
use crate::queue::redis::reply::{field, items};
use crate::sync::lock;

/// Records waiting for the writer, at most; beyond it, records are dropped
/// and counted (a Redis that is down for long must not grow the process).
const BACKLOG: usize = 10_000;

/// Records written per round trip, at most.
const BATCH: usize = 512;

/// The fleet's record sink.
pub struct RedisSink {
    tx: mpsc::Sender<Message>,
    /// Records of jobs a worker runs, by job id, kept until it stores them
    /// with the job's outcome (`None` until the record comes).
    captured: Mutex<HashMap<String, Option<String>>>,
    dropped: AtomicU64,
}

enum Message {
    Record(String),
    Flush(oneshot::Sender<()>),
}

impl RedisSink {
    pub(super) fn start(conn: Arc<Conn>) -> Arc<RedisSink> {
        let (tx, rx) = mpsc::channel(BACKLOG);
        tokio::spawn(write(conn, rx));
        Arc::new(RedisSink {
            tx,
            captured: Mutex::new(HashMap::new()),
            dropped: AtomicU64::new(0),
        })
    }

    /// Keep the record of job `job_id` for [`RedisSink::captured`] instead of
    /// writing it.
    pub fn capture(&self, job_id: &str) {
        lock(&self.captured).insert(job_id.to_owned(), None);
    }

    /// The record of a captured job, as JSON, once it came.
    pub fn captured(&self, job_id: &str) -> Option<String> {
        lock(&self.captured).get(job_id).cloned().flatten()
    }

    /// Forget a captured job: its record was stored.
    pub fn release(&self, job_id: &str) {
        lock(&self.captured).remove(job_id);
    }

    /// Wait until every record handed to the sink so far is written.
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Message::Flush(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// Records dropped because Redis could not take them fast enough (or
    /// they did not serialize).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl RecordSink for RedisSink {
    fn record(&self, record: Arc<RunRecord>) {
        let text = match serde_json::to_string(&*record) {
            Ok(t) => t,
            Err(e) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(job_id = %record.job_id, error = %e, "run record does not serialize");
                return;
            }
        };
        {
            let mut captured = lock(&self.captured);
            if let Some(slot) = captured.get_mut(record.job_id.as_str()) {
                *slot = Some(text);
                return;
            }
        }
        if self.tx.try_send(Message::Record(text)).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(job_id = %record.job_id, "run record dropped: Redis is not keeping up");
        }
    }

    fn lost(&self) -> u64 {
        self.dropped()
    }
}

/// The writer task: batches of records in one round trip each; a batch that
/// fails is tried again until it is written.
async fn write(conn: Arc<Conn>, mut rx: mpsc::Receiver<Message>) {
    let key = conn.keys.records();
    let max = conn.config.records_max;
    while let Some(first) = rx.recv().await {
        let mut batch = Vec::new();
        let mut flushes = Vec::new();
        let mut next = Some(first);
        while let Some(m) = next.take() {
            match m {
                Message::Record(r) => batch.push(r),
                Message::Flush(tx) => flushes.push(tx),
            }
            if batch.len() < BATCH {
                next = rx.try_recv().ok();
            }
        }
        let mut wait = Duration::from_millis(50);
        while !batch.is_empty() {
            let mut pipe = redis::pipe();
            for r in &batch {
                pipe.cmd("XADD")
                    .arg(&key)
                    .arg("MAXLEN")
                    .arg("~")
                    .arg(max)
                    .arg("*")
                    .arg("record")
                    .arg(r)
                    .ignore();
            }
            match conn.pipe::<()>(&pipe).await {
                Ok(()) => batch.clear(),
                Err(e) => {
                    tracing::warn!("cannot write run records, will try again: {e}");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(5));
                }
            }
        }
        for tx in flushes {
            let _ = tx.send(());
        }
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
