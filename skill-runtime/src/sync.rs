//! Locking that survives a panic elsewhere.

use std::sync::{Mutex, MutexGuard};

/// Lock `m`, taking the value over from a thread that panicked while holding
/// it: every value kept under these locks (sinks, counters, reports) is left
/// consistent before anything that could panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
