//! Per-skill statistics: runs, failures and latency percentiles, kept without
//! locks while jobs run, or computed from run records afterwards.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;

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
    /// Runs counted.
    pub runs: u64,
    /// Runs that failed.
    pub failures: u64,
    /// Mean duration.
    pub mean_us: u64,
    /// Percentiles are bucket upper bounds, within 1/16 of the true value.
    pub p50_us: u64,
    /// 90th percentile duration.
    pub p90_us: u64,
    /// 99th percentile duration.
    pub p99_us: u64,
    /// Longest duration.
    pub max_us: u64,
}

/// Statistics computed from run records, for example a JSON-lines file written by
/// [`JsonLinesSink`](crate::exec::sink::JsonLinesSink): per skill, in name order.
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

#[cfg(test)]
mod tests {
    use super::*;

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
