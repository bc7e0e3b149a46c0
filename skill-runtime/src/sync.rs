//! Locking that survives a panic elsewhere, and the one boxed-future type
//! every layer returns where a trait object needs a future.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A boxed future borrowing for `'a`: what approvers, rollback actions,
/// stores, queues and tool clients return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Lock `m`, taking the value over from a thread that panicked while holding
/// it: every value kept under these locks (sinks, counters, reports) is left
/// consistent before anything that could panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Read `l`, as [`lock`] does.
#[cfg_attr(
    not(feature = "mcp-jwt"),
    expect(dead_code, reason = "the key set of mcp-jwt is the one reader")
)]
pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

/// Write `l`, as [`lock`] does.
#[cfg_attr(
    not(feature = "mcp-jwt"),
    expect(dead_code, reason = "the key set of mcp-jwt is the one writer")
)]
pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}
