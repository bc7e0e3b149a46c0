//! Idempotency: the default key of a job, and the store that runs each key
//! once and answers later jobs with the stored result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use crate::model::error::InvokeError;
use crate::model::result::SkillResult;
use crate::sync::lock;

/// The default idempotency key of a job: SHA-256 over the canonical JSON (sorted
/// keys, no whitespace) of the skill name, the params and the dry-run flag. Stable
/// across processes and runs; never derived from the time.
pub fn idempotency_key(skill: &str, params: &Value, dry_run: bool) -> String {
    let mut h = HashWriter(Sha256::new());
    // {"dry_run":..,"params":..,"skill":..}: the keys in sorted order, written
    // around the params so they are not copied.
    h.0.update(if dry_run {
        &b"{\"dry_run\":true,\"params\":"[..]
    } else {
        &b"{\"dry_run\":false,\"params\":"[..]
    });
    canonical(params, &mut h);
    h.0.update(b",\"skill\":");
    let _ = serde_json::to_writer(&mut h, skill);
    h.0.update(b"}");
    let digest = h.0.finalize();
    let mut key = String::with_capacity(5 + 64);
    key.push_str("idem_");
    for b in digest {
        key.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        key.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    key
}

struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Write `v` as canonical JSON: object keys sorted, no whitespace.
fn canonical(v: &Value, out: &mut HashWriter) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.0.update(b"{");
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.0.update(b",");
                }
                let _ = serde_json::to_writer(&mut *out, k);
                out.0.update(b":");
                canonical(&map[k], out);
            }
            out.0.update(b"}");
        }
        Value::Array(items) => {
            out.0.update(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.0.update(b",");
                }
                canonical(item, out);
            }
            out.0.update(b"]");
        }
        other => {
            let _ = serde_json::to_writer(&mut *out, other);
        }
    }
}

/// Results by idempotency key: the first job with a key runs, concurrent jobs
/// with the same key wait for it, later ones get its stored result until it
/// expires. Failures are not stored, so a failed job can be tried again.
pub(crate) struct IdempotencyStore {
    ttl: Duration,
    slots: Mutex<HashMap<(usize, String), Slot>>,
    inserts: std::sync::atomic::AtomicU64,
}

type Shared = Arc<Result<SkillResult, InvokeError>>;

enum Slot {
    Running(watch::Receiver<Option<Shared>>),
    Done { result: Shared, at: Instant },
}

/// What a job gets from the store.
pub(crate) enum Claim {
    /// Run the job, then [`Claimed::finish`].
    Run(Claimed),
    /// An earlier or concurrent job with the same key produced this.
    Replay(Shared),
}

/// The right to run a key, held by the job that runs it. Dropping it without
/// finishing (the job was cancelled) releases the waiters with an error.
pub(crate) struct Claimed {
    store: Arc<IdempotencyStore>,
    key: (usize, String),
    tx: watch::Sender<Option<Shared>>,
    done: bool,
}

impl IdempotencyStore {
    pub(crate) fn new(ttl: Duration) -> IdempotencyStore {
        IdempotencyStore {
            ttl,
            slots: Mutex::new(HashMap::new()),
            inserts: std::sync::atomic::AtomicU64::new(0),
        }
    }

    pub(crate) async fn claim(
        self: &Arc<Self>,
        skill: usize,
        key: &str,
        skill_name: &str,
    ) -> Claim {
        let k = (skill, key.to_owned());
        let mut rx = {
            let mut slots = lock(&self.slots);
            let now = Instant::now();
            match slots.get(&k) {
                Some(Slot::Done { result, at }) if now.duration_since(*at) < self.ttl => {
                    return Claim::Replay(result.clone());
                }
                Some(Slot::Running(rx)) => rx.clone(),
                _ => {
                    let (tx, rx) = watch::channel(None);
                    slots.insert(k.clone(), Slot::Running(rx));
                    self.sweep(&mut slots, now);
                    return Claim::Run(Claimed {
                        store: self.clone(),
                        key: k,
                        tx,
                        done: false,
                    });
                }
            }
        };
        match rx.wait_for(Option::is_some).await {
            Ok(v) => match &*v {
                Some(result) => Claim::Replay(result.clone()),
                None => Claim::Replay(Arc::new(Err(InvokeError::Abandoned {
                    skill: skill_name.to_owned(),
                }))),
            },
            Err(_) => Claim::Replay(Arc::new(Err(InvokeError::Abandoned {
                skill: skill_name.to_owned(),
            }))),
        }
    }

    /// Drop expired results now and then, so the map stays bounded by the
    /// traffic of one TTL.
    fn sweep(&self, slots: &mut HashMap<(usize, String), Slot>, now: Instant) {
        let n = self
            .inserts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n % 1024 == 1023 {
            slots.retain(|_, s| match s {
                Slot::Done { at, .. } => now.duration_since(*at) < self.ttl,
                Slot::Running(_) => true,
            });
        }
    }
}

impl Claimed {
    /// Publish the job's result to the waiters, and store it when it succeeded.
    pub(crate) fn finish(mut self, result: Shared) {
        self.done = true;
        let mut slots = lock(&self.store.slots);
        if result.is_ok() {
            slots.insert(
                self.key.clone(),
                Slot::Done {
                    result: result.clone(),
                    at: Instant::now(),
                },
            );
        } else {
            slots.remove(&self.key);
        }
        drop(slots);
        self.tx.send_replace(Some(result));
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        if !self.done {
            lock(&self.store.slots).remove(&self.key);
            // Dropping `tx` wakes the waiters with an error: they report
            // `Abandoned` instead of waiting forever.
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn default_keys_are_stable_and_canonical() {
        let a = idempotency_key("s", &json!({"x": 1, "y": [1, {"b": 2, "a": 1}]}), false);
        let b = idempotency_key("s", &json!({"y": [1, {"a": 1, "b": 2}], "x": 1}), false);
        assert_eq!(a, b);
        assert_ne!(
            a,
            idempotency_key("s", &json!({"x": 1, "y": [1, {"b": 2, "a": 1}]}), true)
        );
        assert_ne!(
            a,
            idempotency_key("t", &json!({"x": 1, "y": [1, {"b": 2, "a": 1}]}), false)
        );
        // SHA-256 of {"dry_run":false,"params":{},"skill":"s"}.
        assert_eq!(
            idempotency_key("s", &json!({}), false),
            "idem_693158301122187ce81d265d897ceda74d1d678313e9a0d47b0414f0cdefd44c"
        );
    }
}
