//! Run records of a fleet: the sink every part of a process shares, which
//! writes records to the shared store (Redis, PostgreSQL) in batches, and
//! keeps a worker's job's record apart, for the backend to store in the
//! same step as the job's outcome (so a record is never lost or doubled by
//! a crash).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::exec::policy::BoxFuture;
use crate::exec::sink::RecordSink;
use crate::model::record::RunRecord;
use crate::queue::api::QueueError;
use crate::sync::lock;

/// Which run records to read from a fleet's store
/// ([`Fleet::records_page`](crate::queue::fleet::Fleet::records_page)):
/// those that match every filter given, newest first, a page at a time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordQuery {
    /// Of this skill.
    pub skill: Option<String>,
    /// With this status (`succeeded`, `failed`, ...).
    pub status: Option<String>,
    /// Of this caller (its user id: a token's subject, a key's name).
    pub user: Option<String>,
    /// Of this job.
    pub job_id: Option<String>,
    /// Older than the record this cursor names (a page's
    /// [`RecordPage::next`]).
    pub before: Option<String>,
    /// The most records a page holds (at least 1).
    pub limit: usize,
}

/// What latency and failure statistics read of a run record
/// ([`Fleet::timings`](crate::queue::fleet::Fleet::timings)).
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
pub struct Timing {
    /// The skill.
    pub skill: String,
    /// `succeeded`, `failed`, ...
    pub status: String,
    /// How long it ran.
    #[serde(default)]
    pub duration_us: u64,
    /// When it ended, in milliseconds since the epoch (0 when unknown).
    #[serde(default, rename = "completed_at", deserialize_with = "millis_of_time")]
    pub completed_ms: u64,
    /// Its caller's user id.
    #[serde(default, rename = "caller", deserialize_with = "user_of_caller")]
    pub user: Option<String>,
}

fn millis_of_time<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let text: std::borrow::Cow<'de, str> = serde::Deserialize::deserialize(d)?;
    Ok(crate::model::time::parse_time(&text)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64))
}

fn user_of_caller<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(serde::Deserialize)]
    struct Of {
        #[serde(default)]
        user_id: Option<String>,
    }
    let of: Of = serde::Deserialize::deserialize(d)?;
    Ok(of.user_id)
}

/// The fields of a record a query filters on.
#[derive(serde::Deserialize)]
struct Filtered<'a> {
    #[serde(borrow, default)]
    skill: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    job_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    caller: FilteredCaller<'a>,
}

#[derive(serde::Deserialize, Default)]
struct FilteredCaller<'a> {
    #[serde(borrow, default)]
    user_id: Option<std::borrow::Cow<'a, str>>,
}

/// One page of records ([`RecordQuery`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordPage {
    /// The records, newest first, as JSON text.
    pub records: Vec<String>,
    /// Each record's cursor: what [`RecordQuery::before`] takes to read
    /// the records older than it.
    pub cursors: Vec<String>,
    /// The cursor of the next (older) page, when there are more.
    pub next: Option<String>,
    /// Whether the store stopped looking before it read every record
    /// (Redis keeps no index by skill, status or caller: a filtered page
    /// reads at most [`RecordQuery::SCANNED`] records).
    pub cut_short: bool,
}

impl RecordQuery {
    /// The most records a store without indexes reads for one page.
    pub const SCANNED: usize = 20_000;

    /// Whether the record written as `text` passes the filters (what a
    /// store without indexes checks itself): only the fields filtered on
    /// are decoded.
    pub fn matches(&self, text: &str) -> bool {
        // A value JSON writes as it is appears in the text of a record that
        // has it: most records are passed over without being decoded.
        let plain = |v: &str| !v.chars().any(|c| c == '"' || c == '\\' || c.is_control());
        let absent = [&self.skill, &self.status, &self.job_id, &self.user]
            .into_iter()
            .flatten()
            .any(|v| plain(v) && !text.contains(v.as_str()));
        if absent {
            return false;
        }
        let Ok(r) = serde_json::from_str::<Filtered<'_>>(text) else {
            return false;
        };
        let is = |have: &Option<std::borrow::Cow<'_, str>>, want: &Option<String>| {
            want.as_deref().is_none_or(|w| have.as_deref() == Some(w))
        };
        is(&r.skill, &self.skill)
            && is(&r.status, &self.status)
            && is(&r.job_id, &self.job_id)
            && is(&r.caller.user_id, &self.user)
    }

    /// Whether no filter is given.
    pub fn is_unfiltered(&self) -> bool {
        self.skill.is_none()
            && self.status.is_none()
            && self.user.is_none()
            && self.job_id.is_none()
    }
}

/// Records waiting for the writer, at most; beyond it, records are dropped
/// and counted (a store that is down for long must not grow the process).
const BACKLOG: usize = 10_000;

/// Records written per round trip, at most.
const BATCH: usize = 512;

/// The fleet's record sink: a writer task sends records to the shared
/// store in batches; a worker's job keeps its record apart, to store it in
/// the same step as its outcome ([`StoreSink::capture`]).
pub struct StoreSink {
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

impl StoreSink {
    /// A sink whose writer task sends batches to `writer`; start it inside
    /// a tokio runtime.
    pub(crate) fn start(writer: Arc<dyn RecordWriter>) -> Arc<StoreSink> {
        let (tx, rx) = mpsc::channel(BACKLOG);
        tokio::spawn(write(writer, rx));
        Arc::new(StoreSink {
            tx,
            captured: Mutex::new(HashMap::new()),
            dropped: AtomicU64::new(0),
        })
    }

    /// Keep the record of job `job_id` for [`StoreSink::captured`] instead of
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

    /// Records dropped because the store could not take them fast enough (or
    /// they did not serialize).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl RecordSink for StoreSink {
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
            tracing::warn!(job_id = %record.job_id, "run record dropped: the store is not keeping up");
        }
    }

    fn lost(&self) -> u64 {
        self.dropped()
    }
}

/// Where a [`StoreSink`]'s batches go: the shared store's records.
pub(crate) trait RecordWriter: Send + Sync + 'static {
    /// Write `batch` (records as JSON text), all or nothing.
    fn write<'a>(&'a self, batch: &'a [String]) -> BoxFuture<'a, Result<(), QueueError>>;
}

/// The writer task: batches of records in one round trip each; a batch that
/// fails is tried again until it is written.
async fn write(writer: Arc<dyn RecordWriter>, mut rx: mpsc::Receiver<Message>) {
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
            match writer.write(&batch).await {
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
