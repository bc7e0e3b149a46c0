//! Run records (one per invocation, every pipeline step in it), the sinks they go
//! to, and per-skill statistics.
//!
//! Records never hold a redacted field: the runtime redacts params, output and
//! messages before a record is built.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, LineWriter, Write};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::envelope::{Caller, Id, RuleNote};

/// One invocation, from resolution to the last check.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    pub job_id: Id,
    pub trace_id: Id,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_job_id: Option<Id>,
    /// The skill's name (as asked for, when it did not resolve).
    pub skill: Cow<'static, str>,
    /// The version that was resolved, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<&'static str>,
    pub caller: Caller,
    /// The input, with redacted fields replaced; `null` when it did not parse.
    pub params: Value,
    pub dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The result came from an earlier job with the same key.
    pub replayed: bool,
    #[serde(serialize_with = "serialize_time")]
    pub started_at: SystemTime,
    #[serde(serialize_with = "serialize_time")]
    pub completed_at: SystemTime,
    pub duration_us: u64,
    pub status: RunStatus,
    pub steps: Steps,
    pub attempts: Attempts,
    /// The output, with redacted fields replaced; only on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Arc<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    pub notes: Vec<RuleNote>,
    /// A pipeline's steps, in the order they ran (each step's output is in the
    /// step's own record, under its job id).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pipeline_steps: Vec<StepRun>,
}

/// One step of a pipeline as it ran (the Chimera seed's workflow run record).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepRun {
    /// The step's id in the pipeline.
    pub id: &'static str,
    /// `name@version` of the skill or op that ran (as referenced, when it did
    /// not resolve).
    pub skill_name: Arc<str>,
    /// The step's own job, child of the pipeline's.
    pub job_id: Id,
    pub status: RunStatus,
    /// The step's output; in results only, never in records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Arc<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(serialize_with = "serialize_time")]
    pub completed_at: SystemTime,
}

/// The seed's run record status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Succeeded,
    Failed,
}

/// The steps of DESIGN §7, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Resolve,
    Authorize,
    RateLimit,
    ValidateInput,
    Preconditions,
    Idempotency,
    Approval,
    Execute,
    Budget,
    ValidateOutput,
    Postconditions,
    ValidationRules,
}

/// How one step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    Passed,
    Failed,
    /// Nothing to do for this skill (no rate limit, no approval needed, ...).
    Skipped,
    /// Idempotency: an earlier job's result was returned.
    Replayed,
}

impl Step {
    /// Every step, in the order they run.
    pub const ALL: [Step; 12] = [
        Step::Resolve,
        Step::Authorize,
        Step::RateLimit,
        Step::ValidateInput,
        Step::Preconditions,
        Step::Idempotency,
        Step::Approval,
        Step::Execute,
        Step::Budget,
        Step::ValidateOutput,
        Step::Postconditions,
        Step::ValidationRules,
    ];
}

/// One step of a job, as [`Steps`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StepRecord<'a> {
    pub step: Step,
    pub outcome: StepOutcome,
    pub duration_us: u64,
    /// Why it failed or who approved, for the steps that say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'a str>,
}

/// The steps a job went through, in the order they ran; serialized as a list of
/// [`StepRecord`]s.
///
/// A job runs each step at most once and in [`Step`]'s order, so the steps are
/// a table with a slot per step, inside the record, rather than a list on the
/// heap: making a record fills slots instead of growing a vector, and a record
/// dropped from memory long after it was made frees one heap block fewer (most
/// records are dropped cold, so each block is a cache miss).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Steps {
    outcome: [Option<StepOutcome>; Step::ALL.len()],
    duration_us: [u64; Step::ALL.len()],
    /// The few steps that carry a detail; usually none, which allocates nothing.
    details: Vec<(Step, String)>,
}

impl Steps {
    /// The steps that ran, in order.
    pub fn iter(&self) -> impl Iterator<Item = StepRecord<'_>> + '_ {
        Step::ALL.into_iter().filter_map(|step| self.get(step))
    }

    /// How `step` went, when the job reached it.
    pub fn get(&self, step: Step) -> Option<StepRecord<'_>> {
        let i = step as usize;
        Some(StepRecord {
            step,
            outcome: self.outcome[i]?,
            duration_us: self.duration_us[i],
            detail: self
                .details
                .iter()
                .find(|(s, _)| *s == step)
                .map(|(_, d)| d.as_str()),
        })
    }

    /// How many steps ran.
    pub fn len(&self) -> usize {
        self.outcome.iter().flatten().count()
    }

    pub fn is_empty(&self) -> bool {
        self.outcome.iter().all(Option::is_none)
    }

    /// Record `step`. Steps come in order, each once (checked in debug builds).
    pub(crate) fn set(
        &mut self,
        step: Step,
        outcome: StepOutcome,
        duration_us: u64,
        detail: Option<String>,
    ) {
        let i = step as usize;
        debug_assert!(
            self.outcome[i..].iter().all(Option::is_none),
            "step {step:?} recorded out of order or twice"
        );
        self.outcome[i] = Some(outcome);
        self.duration_us[i] = duration_us;
        if let Some(detail) = detail {
            self.details.push((step, detail));
        }
    }

    /// Rewrite every detail (to scrub redacted values out of them).
    pub(crate) fn map_details(&mut self, mut f: impl FnMut(String) -> String) {
        for (_, detail) in &mut self.details {
            *detail = f(std::mem::take(detail));
        }
    }
}

impl fmt::Debug for Steps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Steps {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// One run of the handler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AttemptRecord {
    pub attempt: u32,
    pub outcome: AttemptOutcome,
    pub duration_us: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wait before the next attempt, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<u64>,
}

/// The handler's runs, in order; serialized as a list of [`AttemptRecord`]s.
///
/// Most jobs make one attempt, so the first is kept inside the record and only
/// retries go to the heap: like [`Steps`], one block fewer to make per job and
/// to free when the record is dropped.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Attempts {
    first: Option<AttemptRecord>,
    retries: Vec<AttemptRecord>,
}

impl Attempts {
    pub fn iter(&self) -> impl Iterator<Item = &AttemptRecord> + '_ {
        self.first.iter().chain(&self.retries)
    }

    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.retries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    pub fn get(&self, i: usize) -> Option<&AttemptRecord> {
        match i {
            0 => self.first.as_ref(),
            i => self.retries.get(i - 1),
        }
    }

    pub(crate) fn push(&mut self, attempt: AttemptRecord) {
        if self.first.is_none() {
            self.first = Some(attempt);
        } else {
            self.retries.push(attempt);
        }
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut AttemptRecord> + '_ {
        self.first.iter_mut().chain(&mut self.retries)
    }
}

impl std::ops::Index<usize> for Attempts {
    type Output = AttemptRecord;

    fn index(&self, i: usize) -> &AttemptRecord {
        self.get(i)
            .unwrap_or_else(|| panic!("attempt {i} of {}", self.len()))
    }
}

impl fmt::Debug for Attempts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Attempts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    Succeeded,
    Failed,
    TimedOut,
    Panicked,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorRecord {
    pub code: String,
    pub message: String,
}

/// Where run records go. Called once per invocation, after it completed; keep it
/// quick (buffer, do not block on the network).
pub trait RecordSink: Send + Sync + 'static {
    fn record(&self, record: Arc<RunRecord>);
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
    /// A record holds its params and output as JSON trees, and `serde_json`
    /// puts even a three-field object in a 600-byte map node: a small skill's
    /// record takes about 2 KB. Ten thousand of them (20 MB) outgrow the
    /// processor's cache, and a full sink frees its oldest record on every
    /// call, so each call then paid about 400 ns of cache misses, a quarter of
    /// a JSON call (`cargo bench --bench invoke`). A thousand stay in cache.
    pub const DEFAULT_CAPACITY: usize = 1_000;

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
        // The oldest record is freed outside the lock.
        drop(oldest);
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
}

/// Sends every record to each of several sinks.
pub struct FanOut(pub Vec<Arc<dyn RecordSink>>);

impl RecordSink for FanOut {
    fn record(&self, record: Arc<RunRecord>) {
        for sink in &self.0 {
            sink.record(record.clone());
        }
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A sink or counter is left consistent before anything that could panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Per-skill counts and latency, updated without locks.
///
/// Latency goes into a log-linear histogram (16 buckets per power of two, so a
/// percentile is exact to within 1/16 of its value) in constant memory, however
/// many calls are counted. The histogram counts the runs too: a run costs two
/// atomic additions (its bucket, the total time), not a separate run counter
/// and a compare-and-swap loop for the maximum on every call.
pub(crate) struct StatsCell {
    failures: AtomicU64,
    total_us: AtomicU64,
    max_us: AtomicU64,
    histogram: OnceLock<Box<[AtomicU64; BUCKETS]>>,
}

const SUB: u32 = 16;
const MAX_EXP: u32 = 40;
const BUCKETS: usize = (SUB + (MAX_EXP - 3) * SUB) as usize;

fn bucket_of(us: u64) -> usize {
    if us < u64::from(SUB) {
        return us as usize;
    }
    let us = us.min((1 << MAX_EXP) - 1);
    let exp = 63 - us.leading_zeros(); // >= 4
    let mantissa = (us >> (exp - 4)) as u32 - SUB; // 0..16
    (SUB + (exp - 4) * SUB + mantissa) as usize
}

/// The largest value that falls in bucket `b`.
fn bucket_high(b: usize) -> u64 {
    let b = b as u64;
    let sub = u64::from(SUB);
    if b < sub {
        return b;
    }
    let exp = (b - sub) / sub + 4;
    let mantissa = (b - sub) % sub + sub;
    ((mantissa + 1) << (exp - 4)) - 1
}

impl StatsCell {
    pub(crate) fn new() -> StatsCell {
        StatsCell {
            failures: AtomicU64::new(0),
            total_us: AtomicU64::new(0),
            max_us: AtomicU64::new(0),
            histogram: OnceLock::new(),
        }
    }

    pub(crate) fn add(&self, duration: Duration, failed: bool) {
        let us = u64::try_from(duration.as_micros()).unwrap_or(u64::MAX);
        if failed {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
        self.total_us.fetch_add(us, Ordering::Relaxed);
        // A read first: the maximum rarely moves once a skill has warmed up.
        if us > self.max_us.load(Ordering::Relaxed) {
            self.max_us.fetch_max(us, Ordering::Relaxed);
        }
        let h = self
            .histogram
            .get_or_init(|| Box::new(std::array::from_fn(|_| AtomicU64::new(0))));
        h[bucket_of(us)].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, skill: &str) -> SkillStats {
        let counts: Vec<u64> = match self.histogram.get() {
            Some(h) => h.iter().map(|c| c.load(Ordering::Relaxed)).collect(),
            None => Vec::new(),
        };
        let max_us = self.max_us.load(Ordering::Relaxed);
        let runs: u64 = counts.iter().sum();
        let percentile = |q: f64| -> u64 {
            if runs == 0 {
                return 0;
            }
            let rank = ((q * runs as f64).ceil() as u64).clamp(1, runs);
            let mut acc = 0;
            for (b, c) in counts.iter().enumerate() {
                acc += c;
                if acc >= rank {
                    return bucket_high(b).min(max_us);
                }
            }
            max_us
        };
        SkillStats {
            skill: skill.to_owned(),
            runs,
            failures: self.failures.load(Ordering::Relaxed),
            mean_us: self
                .total_us
                .load(Ordering::Relaxed)
                .checked_div(runs)
                .unwrap_or(0),
            p50_us: percentile(0.50),
            p90_us: percentile(0.90),
            p99_us: percentile(0.99),
            max_us,
        }
    }
}

/// Counts and latency of one skill (the seed's `SkillStats`, with percentiles).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SkillStats {
    /// `name@version`.
    pub skill: String,
    pub runs: u64,
    pub failures: u64,
    pub mean_us: u64,
    /// Percentiles are bucket upper bounds, within 1/16 of the true value.
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

/// Statistics computed from run records, for example a JSON-lines file written by
/// [`JsonLinesSink`]: per skill, in name order.
pub fn stats_from_records<'a>(
    records: impl IntoIterator<Item = (&'a str, u64, bool)>,
) -> Vec<SkillStats> {
    let mut cells: BTreeMap<&str, StatsCell> = BTreeMap::new();
    for (skill, duration_us, failed) in records {
        cells
            .entry(skill)
            .or_insert_with(StatsCell::new)
            .add(Duration::from_micros(duration_us), failed);
    }
    cells
        .iter()
        .map(|(skill, cell)| cell.snapshot(skill))
        .collect()
}

/// RFC 3339 in UTC with milliseconds, for example `2026-11-22T20:41:29.123Z`.
pub fn format_time(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub(crate) fn serialize_time<S: serde::Serializer>(
    t: &SystemTime,
    ser: S,
) -> Result<S::Ok, S::Error> {
    ser.serialize_str(&format_time(*t))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table reads and serializes as the list of steps that ran, in order,
    /// each with its detail when it has one.
    #[test]
    fn steps_read_as_the_list_they_ran_in() {
        // A step's slot is its position in the enum, which is the order they run in.
        for (i, step) in Step::ALL.into_iter().enumerate() {
            assert_eq!(step as usize, i);
        }
        let mut steps = Steps::default();
        assert!(steps.is_empty());
        steps.set(Step::Resolve, StepOutcome::Passed, 0, None);
        steps.set(
            Step::Approval,
            StepOutcome::Failed,
            12,
            Some("denied".into()),
        );
        assert_eq!(steps.len(), 2);
        assert_eq!(steps.get(Step::Execute), None);
        assert_eq!(steps.get(Step::Approval).unwrap().detail, Some("denied"));
        assert_eq!(
            serde_json::to_value(&steps).unwrap(),
            serde_json::json!([
                {"step": "resolve", "outcome": "passed", "duration_us": 0},
                {"step": "approval", "outcome": "failed", "duration_us": 12, "detail": "denied"},
            ])
        );
        steps.map_details(|d| d.replace("denied", "[redacted]"));
        assert_eq!(
            steps.get(Step::Approval).unwrap().detail,
            Some("[redacted]")
        );
    }

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(format_time(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_379_689_123);
        assert_eq!(format_time(t), "2026-11-22T20:34:49.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(format_time(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn every_value_falls_in_a_bucket_whose_bound_covers_it() {
        let mut last = 0;
        for us in (0..5000).chain([1 << 20, (1 << 40) - 1]) {
            let b = bucket_of(us);
            assert!(b < BUCKETS);
            assert!(b >= last || us > 5000, "buckets grow with the value");
            last = b;
            let high = bucket_high(b);
            assert!(high >= us, "{us} in bucket {b} with high {high}");
            assert!(high - us <= us / 16 + 1, "{us}: bucket too wide ({high})");
        }
    }

    #[test]
    fn percentiles_are_exact_to_a_sixteenth() {
        let cell = StatsCell::new();
        for us in 1..=1000u64 {
            cell.add(Duration::from_micros(us), us % 10 == 0);
        }
        let s = cell.snapshot("x");
        assert_eq!((s.runs, s.failures, s.max_us), (1000, 100, 1000));
        assert_eq!(s.mean_us, 500);
        for (p, want) in [(s.p50_us, 500), (s.p90_us, 900), (s.p99_us, 990)] {
            assert!(p >= want && p <= want + want / 16, "{p} vs {want}");
        }
    }
}
