//! Where run records go: kept in memory up to a bound, appended to a JSON-lines
//! file, or both.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, LineWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::exec::spare;
use crate::model::record::RunRecord;
use crate::sync::lock;

/// Where run records go. Called once per invocation, after it completed; keep it
/// quick (buffer, do not block on the network).
pub trait RecordSink: Send + Sync + 'static {
    /// Keep `record`; never blocks the job.
    fn record(&self, record: Arc<RunRecord>);

    /// Records this sink was given and could not keep (a write that failed, a
    /// backlog that overflowed), counted since it was made. A bounded sink
    /// that lets its oldest records go by design does not count them.
    fn lost(&self) -> u64 {
        0
    }
}

/// Keeps the most recent records in memory, up to a bound; older ones are dropped
/// and counted.
#[derive(Debug)]
pub struct MemorySink {
    capacity: usize,
    kept: Mutex<Kept>,
}

#[derive(Debug)]
struct Kept {
    records: VecDeque<Arc<RunRecord>>,
    /// Every record received, counted under the lock the record is kept under
    /// (no atomic addition of its own per call).
    total: u64,
}

impl MemorySink {
    /// The runtime's default bound: the last thousand jobs, for inspection and
    /// tests; stats count every job whatever the bound, and a [`JsonLinesSink`]
    /// keeps them all.
    ///
    /// A record holds its params and output as JSON (text, or trees when a
    /// stage parsed them), which add up even for a small skill. Many thousands of them outgrow the processor's
    /// cache, and a full sink lets its oldest record go on every call, so each
    /// call would pay for cache misses; a thousand stay in cache
    /// (docs/performance.md, `cargo bench --bench invoke`).
    pub const DEFAULT_CAPACITY: usize = 1_000;

    /// A sink keeping the last `capacity` records.
    pub fn new(capacity: usize) -> MemorySink {
        MemorySink {
            capacity,
            kept: Mutex::new(Kept {
                records: VecDeque::with_capacity(capacity.min(1024)),
                total: 0,
            }),
        }
    }

    /// The kept records, oldest first.
    pub fn records(&self) -> Vec<Arc<RunRecord>> {
        lock(&self.kept).records.iter().cloned().collect()
    }

    /// Every record ever received, kept or not.
    pub fn total(&self) -> u64 {
        lock(&self.kept).total
    }

    /// Records dropped to stay within the bound.
    pub fn dropped(&self) -> u64 {
        let kept = lock(&self.kept);
        kept.total - kept.records.len() as u64
    }
}

impl Default for MemorySink {
    fn default() -> Self {
        MemorySink::new(MemorySink::DEFAULT_CAPACITY)
    }
}

impl RecordSink for MemorySink {
    fn record(&self, record: Arc<RunRecord>) {
        let mut kept = lock(&self.kept);
        kept.total += 1;
        if self.capacity == 0 {
            return;
        }
        let oldest = if kept.records.len() == self.capacity {
            kept.records.pop_front()
        } else {
            None
        };
        kept.records.push_back(record);
        drop(kept);
        // The oldest record is let go outside the lock; its block becomes
        // this thread's spare for the next record (`exec/spare.rs`).
        if let Some(oldest) = oldest {
            spare::let_go_record(oldest);
        }
    }
}

/// Appends one JSON line per record to a file. A write error is counted and
/// logged, never raised: recording must not break serving.
#[derive(Debug)]
pub struct JsonLinesSink {
    file: Mutex<LineWriter<File>>,
    errors: AtomicU64,
}

impl JsonLinesSink {
    /// Open `path` for appending, creating it when needed.
    pub fn append(path: &Path) -> io::Result<JsonLinesSink> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(JsonLinesSink {
            file: Mutex::new(LineWriter::new(file)),
            errors: AtomicU64::new(0),
        })
    }

    /// Records that could not be written.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}

impl RecordSink for JsonLinesSink {
    fn record(&self, record: Arc<RunRecord>) {
        let mut line = match serde_json::to_vec(&*record) {
            Ok(line) => line,
            Err(e) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(job_id = %record.job_id, error = %e, "run record does not serialize");
                return;
            }
        };
        line.push(b'\n');
        if let Err(e) = lock(&self.file).write_all(&line) {
            self.errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(job_id = %record.job_id, error = %e, "cannot write run record");
        }
    }

    fn lost(&self) -> u64 {
        self.errors()
    }
}

/// Sends every record to each of several sinks.
pub struct FanOut(pub Vec<Arc<dyn RecordSink>>);

impl RecordSink for FanOut {
    fn record(&self, record: Arc<RunRecord>) {
        for sink in &self.0 {
            sink.record(record.clone());
        }
    }

    fn lost(&self) -> u64 {
        self.0.iter().map(|s| s.lost()).sum()
    }
}
