//! Idempotency: the default key of a job, and the store that runs each key
//! once and answers later jobs with the stored result.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use skill_core::manifest::Backoff;
use tokio::sync::watch;

use crate::exec::policy::BoxFuture;
use crate::exec::policy::limits::recorded_size;
use crate::model::error::InvokeError;
use crate::model::result::SkillResult;
use crate::sync::lock;

/// Where idempotency keys and their results live: in this process
/// ([`MemoryIdempotency`], the default), or shared by a fleet of workers (the
/// Redis store of `skill_runtime::queue`, feature `redis`). The first job with
/// a key runs; jobs with the same key that come while it runs wait for it;
/// later ones get its stored result until it expires. Failures are not stored,
/// so a failed job can be tried again.
pub trait IdempotencyStore: Send + Sync + 'static {
    /// The right to run `key` of skill `skill` (`name@version`), or the
    /// outcome of the job that holds or held it.
    fn claim<'a>(&'a self, skill: &'a str, key: &'a str) -> BoxFuture<'a, Claim>;
}

/// A job's outcome as an idempotency store shares it.
pub type Shared = Arc<Result<SkillResult, InvokeError>>;

/// What a job gets from the store.
pub enum Claim {
    /// Run the job, then [`Claimed::finish`] with its outcome.
    Run(Box<dyn Claimed>),
    /// An earlier or concurrent job with the same key produced this.
    Replay(Shared),
}

/// The right to run a key, held by the job that runs it. Dropped without
/// finishing (the job was cancelled), it releases the key: waiters are told
/// the job was abandoned, or try the key themselves.
pub trait Claimed: Send {
    /// The fencing token of this hold on the key: higher than any earlier
    /// holder's (see [`Fence`](crate::contract::invocation::Fence)).
    fn token(&self) -> u64;

    /// Publish the job's outcome to the jobs waiting on its key, and store it
    /// when it succeeded and the key is still this job's.
    fn finish(self: Box<Self>, outcome: Shared) -> BoxFuture<'static, ()>;
}

/// How idempotency works, after the seed's `IdempotencyConfig`: a key is
/// locked while its job runs (`lock_ttl`, so a dead holder does not block it
/// forever), jobs that find it locked poll for the result (`lock_retry`
/// polls per lock period with `lock_backoff` between them), and a success is
/// kept `result_ttl`. The in-process store needs only `result_ttl`: waiters
/// there are woken, not polled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdempotencyConfig {
    /// How long a claim holds before another worker may take the key over.
    pub lock_ttl: Duration,
    /// How many times a job waits for a held key.
    pub lock_retry: u32,
    /// The wait between those tries.
    pub lock_backoff: Backoff,
    /// How long a result is replayed.
    pub result_ttl: Duration,
}

impl Default for IdempotencyConfig {
    /// The seed's `defaultIdempotency`: lock 5 minutes, 3 retries with
    /// exponential backoff, results kept 1 hour.
    fn default() -> Self {
        IdempotencyConfig {
            lock_ttl: Duration::from_secs(300),
            lock_retry: 3,
            lock_backoff: Backoff::Exponential,
            result_ttl: Duration::from_secs(3600),
        }
    }
}

/// The in-process store: a map of keys, waiters woken by a watch channel.
/// Stored results are bounded by time (`ttl`), count and size: past
/// [`MemoryIdempotency::DEFAULT_MAX_RESULTS`] results or
/// [`MemoryIdempotency::DEFAULT_MAX_BYTES`] of their JSON, the oldest are
/// dropped first (a later duplicate of a dropped key runs again).
pub struct MemoryIdempotency {
    ttl: Duration,
    slots: Arc<Mutex<Slots>>,
    inserts: AtomicU64,
    /// The last fencing token handed out.
    fences: AtomicU64,
}

type Key = (String, String);

enum Slot {
    Running(watch::Receiver<Option<Shared>>),
    Done {
        result: Shared,
        at: Instant,
        bytes: usize,
    },
}

/// The keys, and the stored results in the order they were stored (`stored`
/// may also name results replaced since; `results` and `bytes` count only the
/// ones in `map`).
struct Slots {
    map: HashMap<Key, Slot>,
    stored: VecDeque<(Key, Instant)>,
    results: usize,
    bytes: usize,
    max_results: usize,
    max_bytes: usize,
}

impl Slots {
    /// Put `slot` under `key`, the totals following.
    fn put(&mut self, key: Key, slot: Slot) {
        if let Slot::Done { bytes, .. } = &slot {
            self.results += 1;
            self.bytes += bytes;
        }
        if let Some(old) = self.map.insert(key, slot) {
            self.left(&old);
        }
    }

    /// Remove whatever is under `key`, the totals following.
    fn take(&mut self, key: &Key) {
        if let Some(old) = self.map.remove(key) {
            self.left(&old);
        }
    }

    fn left(&mut self, old: &Slot) {
        if let Slot::Done { bytes, .. } = old {
            self.results -= 1;
            self.bytes -= bytes;
        }
    }

    /// Store `result` under `key`, then drop the oldest results past the
    /// bounds.
    fn store(&mut self, key: Key, result: Shared, at: Instant) {
        let bytes = match &*result {
            Ok(r) => recorded_size(&r.data, 64).unwrap_or(usize::MAX / 2),
            Err(_) => 0,
        };
        self.put(key.clone(), Slot::Done { result, at, bytes });
        self.stored.push_back((key, at));
        while self.results > self.max_results || self.bytes > self.max_bytes {
            let Some(oldest) = self.stored.pop_front() else {
                break;
            };
            self.forget(&oldest);
        }
    }

    /// Remove the stored result `(key, at)` names, if it is still that one.
    fn forget(&mut self, (key, at): &(Key, Instant)) {
        if matches!(self.map.get(key), Some(Slot::Done { at: stored_at, .. }) if stored_at == at) {
            self.take(key);
        }
    }
}

/// [`MemoryIdempotency`]'s claim.
struct MemoryClaim {
    slots: Arc<Mutex<Slots>>,
    key: Key,
    tx: watch::Sender<Option<Shared>>,
    token: u64,
    done: bool,
}

impl MemoryIdempotency {
    /// Results kept at most this many at once, by default.
    pub const DEFAULT_MAX_RESULTS: usize = 10_000;
    /// Results kept at most this much JSON at once, by default.
    pub const DEFAULT_MAX_BYTES: usize = 256 << 20;

    /// Results kept `ttl`, within the default bounds.
    pub fn new(ttl: Duration) -> MemoryIdempotency {
        Self::bounded(ttl, Self::DEFAULT_MAX_RESULTS, Self::DEFAULT_MAX_BYTES)
    }

    /// Results kept `ttl`, at most `max_results` of them and `max_bytes` of
    /// their JSON at once.
    pub fn bounded(ttl: Duration, max_results: usize, max_bytes: usize) -> MemoryIdempotency {
        MemoryIdempotency {
            ttl,
            slots: Arc::new(Mutex::new(Slots {
                map: HashMap::new(),
                stored: VecDeque::new(),
                results: 0,
                bytes: 0,
                max_results,
                max_bytes,
            })),
            inserts: AtomicU64::new(0),
            fences: AtomicU64::new(0),
        }
    }

    async fn claim_key(&self, skill: &str, key: &str) -> Claim {
        let k = (skill.to_owned(), key.to_owned());
        let mut rx = {
            let mut slots = lock(&self.slots);
            let now = Instant::now();
            match slots.map.get(&k) {
                Some(Slot::Done { result, at, .. }) if now.duration_since(*at) < self.ttl => {
                    return Claim::Replay(result.clone());
                }
                Some(Slot::Running(rx)) => rx.clone(),
                _ => {
                    let (tx, rx) = watch::channel(None);
                    slots.put(k.clone(), Slot::Running(rx));
                    self.sweep(&mut slots, now);
                    return Claim::Run(Box::new(MemoryClaim {
                        slots: self.slots.clone(),
                        key: k,
                        tx,
                        token: self.fences.fetch_add(1, Ordering::Relaxed) + 1,
                        done: false,
                    }));
                }
            }
        };
        let abandoned = || {
            Claim::Replay(Arc::new(Err(InvokeError::Abandoned {
                skill: skill.to_owned(),
            })))
        };
        // Waiting holds no worker's slot.
        let waited = crate::exec::lend::idle(async {
            rx.wait_for(Option::is_some)
                .await
                .ok()
                .and_then(|v| (*v).clone())
        });
        match waited.await {
            Some(result) => Claim::Replay(result),
            None => abandoned(),
        }
    }

    /// Drop expired results now and then (the oldest first), so the map stays
    /// bounded by the traffic of one TTL as well as by its bounds.
    fn sweep(&self, slots: &mut Slots, now: Instant) {
        let n = self.inserts.fetch_add(1, Ordering::Relaxed);
        if n % 1024 == 1023 {
            while let Some(oldest) = slots.stored.front()
                && now.duration_since(oldest.1) >= self.ttl
            {
                let oldest = slots.stored.pop_front().expect("a front element");
                slots.forget(&oldest);
            }
        }
    }
}

impl IdempotencyStore for MemoryIdempotency {
    fn claim<'a>(&'a self, skill: &'a str, key: &'a str) -> BoxFuture<'a, Claim> {
        Box::pin(self.claim_key(skill, key))
    }
}

impl Claimed for MemoryClaim {
    fn token(&self) -> u64 {
        self.token
    }

    fn finish(mut self: Box<Self>, result: Shared) -> BoxFuture<'static, ()> {
        self.done = true;
        let mut slots = lock(&self.slots);
        if result.is_ok() {
            slots.store(self.key.clone(), result.clone(), Instant::now());
        } else {
            slots.take(&self.key);
        }
        drop(slots);
        self.tx.send_replace(Some(result));
        Box::pin(std::future::ready(()))
    }
}

impl Drop for MemoryClaim {
    fn drop(&mut self) {
        if !self.done {
            lock(&self.slots).take(&self.key);
            // Dropping `tx` wakes the waiters with an error: they report
            // `Abandoned` instead of waiting forever.
        }
    }
}
