//! Run records on Redis: one capped stream for the whole fleet (one per
//! partition on a cluster, read together), read by `stats`. A worker's job writes its record in the same step as its outcome
//! (`scripts::FINISH`); every other record (a pipeline's steps, jobs run
//! directly with `invoke --redis`) goes through the fleet's
//! [`StoreSink`](crate::queue::records::StoreSink), which sends them here in
//! batches.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use redis::Value;

use crate::exec::policy::BoxFuture;
use crate::queue::api::QueueError;
use crate::queue::records::{RecordPage, RecordQuery, RecordWriter};
use crate::queue::redis::conn::Conn;
use crate::queue::redis::reply::{field, items, text};

/// The records stream, as a sink's writer.
pub(super) struct Writer {
    conn: Arc<Conn>,
    /// Batches written so far: the next goes to the partition after the
    /// last one's.
    batches: AtomicUsize,
}

impl Writer {
    pub(super) fn new(conn: Arc<Conn>) -> Writer {
        Writer {
            conn,
            batches: AtomicUsize::new(0),
        }
    }
}

impl RecordWriter for Writer {
    fn write<'a>(&'a self, batch: &'a [String]) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            // A batch goes to one partition's stream, the partitions in
            // turn: each stream holds its share of the records it is
            // capped to, so the fleet keeps `records_max` in all.
            let parts = &self.conn.keys.parts;
            let i = self.batches.fetch_add(1, Ordering::Relaxed) % parts.len();
            let key = &parts[i].records;
            let max = (self.conn.config.records_max / parts.len()).max(1);
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
            self.conn.pipe::<()>(&pipe).await
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

/// A record's place in the fleet's records: its entry's time and sequence,
/// then its partition (two partitions' streams may give the same id).
type Place = (u64, u64, usize);

/// One page of the records `q` asks for, newest first. The streams have no
/// index but time: each round reads the next entries of every partition's
/// stream from the cursor on, merged by place (down to the newest of the
/// partitions' oldest entries read, below which a partition may hold more),
/// and keeps those that match; it stops at a page, at the streams' end or
/// after [`RecordQuery::SCANNED`] records.
pub(super) async fn page(conn: &Conn, q: &RecordQuery) -> Result<RecordPage, QueueError> {
    let limit = q.limit.max(1);
    // The first round reads one page and one more (and the entry at the
    // cursor, read again); a filtered query reads four times more each
    // round, up to a thousand entries a partition.
    let mut batch = limit + 2;
    let mut cursor: Option<Place> = match &q.before {
        None => None,
        Some(c) => Some(
            place_of(c)
                .ok_or_else(|| QueueError::Invalid(format!("`{c}` is not a records cursor")))?,
        ),
    };
    let mut found: Vec<(Place, String)> = Vec::new();
    let mut scanned = 0;
    loop {
        // From the cursor's entry on (inclusive: another partition may
        // hold an entry of the same id), then below the cursor's place.
        let start = cursor.map_or("+".to_owned(), |(ms, seq, _)| format!("{ms}-{seq}"));
        let mut round: Vec<(Place, String)> = Vec::new();
        let mut horizon: Option<Place> = None;
        for (i, part) in conn.keys.parts.iter().enumerate() {
            let reply: Value = conn
                .query(
                    redis::cmd("XREVRANGE")
                        .arg(&part.records)
                        .arg(&start)
                        .arg("-")
                        .arg("COUNT")
                        .arg(batch),
                )
                .await?;
            let entries: Vec<(Place, String)> = items(&reply)
                .iter()
                .filter_map(|e| match items(e) {
                    [id, fields] => {
                        let (ms, seq) = entry_time(&text(id)?);
                        Some(((ms, seq, i), field(fields, "record")?))
                    }
                    _ => None,
                })
                .collect();
            if entries.len() >= batch
                && let Some((oldest, _)) = entries.last()
            {
                horizon = horizon.max(Some(*oldest));
            }
            round.extend(entries);
        }
        round.retain(|(at, _)| cursor.is_none_or(|c| *at < c));
        round.sort_by_key(|e| std::cmp::Reverse(e.0));
        if let Some(h) = horizon {
            round.retain(|(at, _)| *at >= h);
        }
        let Some((last, _)) = round.last() else {
            return Ok(page_of(found, limit, None));
        };
        cursor = Some(*last);
        for (at, record) in round {
            scanned += 1;
            let keep = q.is_unfiltered() || q.matches(&record);
            if keep {
                found.push((at, record));
                // A job has one record: once found, nothing older matches.
                if found.len() > limit || q.job_id.is_some() {
                    return Ok(page_of(found, limit, None));
                }
            }
        }
        if horizon.is_none() {
            return Ok(page_of(found, limit, None));
        }
        batch = (batch * 4).min(1000);
        if scanned >= RecordQuery::SCANNED {
            return Ok(page_of(found, limit, cursor.map(cursor_of)));
        }
    }
}

/// The cursor that names `place`.
fn cursor_of((ms, seq, part): Place) -> String {
    format!("{ms}-{seq}-{part}")
}

/// The place a cursor names.
fn place_of(cursor: &str) -> Option<Place> {
    let mut it = cursor.split('-').map(str::parse::<u64>);
    let (ms, seq, part) = (it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?);
    it.next().is_none().then_some((ms, seq, part as usize))
}

/// The page of `found` (newest first, at most one past `limit`); `cut`:
/// where the reading stopped short, if it did.
fn page_of(mut found: Vec<(Place, String)>, limit: usize, cut: Option<String>) -> RecordPage {
    let more = found.len() > limit;
    found.truncate(limit);
    let cursors: Vec<String> = found.iter().map(|(at, _)| cursor_of(*at)).collect();
    RecordPage {
        cut_short: cut.is_some() && !more,
        next: if more { cursors.last().cloned() } else { cut },
        records: found.into_iter().map(|(_, r)| r).collect(),
        cursors,
    }
}

/// A stream entry id's time and sequence.
fn entry_time(id: &str) -> (u64, u64) {
    let (ms, seq) = id.split_once('-').unwrap_or((id, "0"));
    (ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
}
