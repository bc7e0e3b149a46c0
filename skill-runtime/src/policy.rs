//! The policies a manifest declares and the runtime enforces: who may call
//! (`reusable_by`, MCP permissions), how often (`rate_limit`), once per key
//! (idempotency), with whose approval (`requires_hitl`, destructive), and what
//! undoes a broken postcondition (rollback actions).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use crate::ctx::Resources;
use crate::envelope::{Caller, SkillResult};
use crate::error::InvokeError;
use crate::manifest::{Manifest, PermissionLevel};
use crate::record::lock;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why `caller` may not run the skill of manifest `m`, if it may not.
///
/// - A caller presenting an agent role must match a `reusable_by` entry for that
///   role and hold at least the entry's permission level (read < execute <
///   admin). A skill with no `reusable_by` entries is open to every role.
/// - A caller with a set of granted permissions must hold every MCP permission of
///   the skill.
pub(crate) fn authorize(m: &Manifest, caller: &Caller) -> Result<(), String> {
    if let Some(role) = caller.agent_role
        && !m.reusable_by.is_empty()
    {
        let held = caller.permission_level.unwrap_or(PermissionLevel::Read);
        let entry = m.reusable_by.iter().find(|r| r.agent_role == role);
        match entry {
            None => {
                let roles: Vec<&str> = m
                    .reusable_by
                    .iter()
                    .map(|r| r.agent_role.as_str())
                    .collect();
                return Err(format!(
                    "agent role `{}` is not in reusable_by ({})",
                    role.as_str(),
                    roles.join(", ")
                ));
            }
            Some(r) if held < r.permission_level => {
                return Err(format!(
                    "agent role `{}` needs permission level `{}`, the caller holds `{}`",
                    role.as_str(),
                    r.permission_level.as_str(),
                    held.as_str()
                ));
            }
            Some(_) => {}
        }
    }
    if let Some(granted) = &caller.permissions {
        let missing = missing_permissions(granted, m.mcp.permissions);
        if !missing.is_empty() {
            return Err(format!("missing {}", permission_list(&missing)));
        }
    }
    Ok(())
}

/// The permissions of `required` that `granted` lacks, in manifest order.
pub(crate) fn missing_permissions<'a>(
    granted: &BTreeSet<String>,
    required: &[&'a str],
) -> Vec<&'a str> {
    required
        .iter()
        .copied()
        .filter(|p| !granted.contains(*p))
        .collect()
}

/// "permission `a`" or "permissions `a`, `b`".
pub(crate) fn permission_list(permissions: &[&str]) -> String {
    format!(
        "permission{} {}",
        if permissions.len() == 1 { "" } else { "s" },
        permissions
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// An exact sliding-window limit: at most `max` admissions in any 60 seconds.
pub(crate) struct RateLimiter {
    max: u32,
    admitted: Mutex<VecDeque<Instant>>,
}

const WINDOW: Duration = Duration::from_secs(60);

impl RateLimiter {
    pub(crate) fn new(max_per_minute: u32) -> RateLimiter {
        RateLimiter {
            max: max_per_minute,
            admitted: Mutex::new(VecDeque::with_capacity(max_per_minute.min(4096) as usize)),
        }
    }

    /// Admit one call now, or say how long until one would be admitted.
    pub(crate) fn admit(&self, now: Instant) -> Result<(), Duration> {
        let mut admitted = lock(&self.admitted);
        while let Some(first) = admitted.front() {
            if now.duration_since(*first) >= WINDOW {
                admitted.pop_front();
            } else {
                break;
            }
        }
        if (admitted.len() as u64) < u64::from(self.max) {
            admitted.push_back(now);
            return Ok(());
        }
        let wait = match admitted.front() {
            Some(first) => WINDOW.saturating_sub(now.duration_since(*first)),
            None => WINDOW,
        };
        Err(wait)
    }
}

/// What asks a human before a skill that `requires_hitl` or is destructive runs.
///
/// The runtime's default, [`DenyApprovals`], refuses with a clear error; a server
/// that can reach a human plugs in its own. [`ApproveAll`] exists for operators
/// who approve by starting the run themselves (the CLI's `--approve`).
pub trait Approver: Send + Sync + 'static {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval>;
}

/// What the approver is asked.
#[derive(Clone, Debug)]
pub struct ApprovalRequest {
    /// `name@version`.
    pub skill: String,
    pub job_id: crate::envelope::Id,
    /// `requires_hitl`, `destructive`, or both joined by `, `.
    pub reason: String,
    /// The input, redacted.
    pub params: Value,
    pub dry_run: bool,
    pub caller: Caller,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Approval {
    Approved { by: String },
    Denied { reason: String },
}

/// Refuses every approval: the default.
#[derive(Clone, Copy, Debug, Default)]
pub struct DenyApprovals;

impl Approver for DenyApprovals {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(std::future::ready(Approval::Denied {
            reason: "no approver is configured; start the runtime with one (RuntimeBuilder::approver), or approve explicitly (the CLI's --approve)".to_owned(),
        }))
    }
}

/// Grants every approval, in the name of `by`.
#[derive(Clone, Debug)]
pub struct ApproveAll {
    pub by: String,
}

impl Approver for ApproveAll {
    fn approve<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(std::future::ready(Approval::Approved {
            by: self.by.clone(),
        }))
    }
}

/// Undoes what a skill did when its postcondition fails (the AI-COS
/// `rollback_action`). Registered by action name with
/// [`crate::RuntimeBuilder::rollback`].
pub trait Rollback: Send + Sync + 'static {
    fn rollback<'a>(&'a self, request: RollbackRequest<'a>) -> BoxFuture<'a, Result<(), String>>;
}

/// What a rollback action is given.
pub struct RollbackRequest<'a> {
    /// `name@version` of the skill whose postcondition failed.
    pub skill: &'a str,
    pub action: &'a str,
    pub job_id: &'a str,
    pub input: &'a Value,
    pub output: &'a Value,
    pub resources: &'a Resources,
}

impl<F> Rollback for F
where
    F: for<'a> Fn(RollbackRequest<'a>) -> Result<(), String> + Send + Sync + 'static,
{
    fn rollback<'a>(&'a self, request: RollbackRequest<'a>) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(std::future::ready(self(request)))
    }
}

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

/// The nesting depth and size of `v` in one walk: `None` when it nests deeper
/// than `max_depth` (a flat object or array is 1), else an estimate of the length
/// of its JSON text (exact but for string escapes and number digits, which are
/// counted as written by the shortest form). The walk stops descending at the
/// limit, so a hostile value cannot exhaust the stack here.
pub(crate) fn measure(v: &Value, max_depth: usize) -> Option<usize> {
    fn walk(v: &Value, depth: usize, max: usize) -> Option<usize> {
        Some(match v {
            Value::Null => 4,
            Value::Bool(b) => 4 + usize::from(!*b),
            Value::Number(n) => number_len(n),
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                if depth == max {
                    return None;
                }
                let mut n = 1 + items.len().max(1);
                for i in items {
                    n += walk(i, depth + 1, max)?;
                }
                n
            }
            Value::Object(map) => {
                if depth == max {
                    return None;
                }
                let mut n = 1 + map.len().max(1);
                for (k, v) in map {
                    n += k.len() + 3 + walk(v, depth + 1, max)?;
                }
                n
            }
        })
    }
    walk(v, 0, max_depth)
}

fn number_len(n: &serde_json::Number) -> usize {
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u.checked_ilog10().unwrap_or(0) as usize + 1,
        (None, Some(i)) => i.unsigned_abs().checked_ilog10().unwrap_or(0) as usize + 2,
        // Floats: serde_json writes at most 24 characters.
        _ => 24,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn measure_estimates_the_text_and_bounds_the_depth() {
        for v in [
            json!({"a": 1, "bb": [true, false, null], "c": {"d": "text", "e": -42}}),
            json!([]),
            json!({}),
            json!("x"),
            json!(12345),
        ] {
            let text = serde_json::to_string(&v).unwrap();
            assert_eq!(measure(&v, 10), Some(text.len()), "{text}");
        }
        let deep = json!({"a": [[{"b": 1}]]});
        assert!(measure(&deep, 4).is_some());
        assert_eq!(measure(&deep, 3), None);
    }

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
