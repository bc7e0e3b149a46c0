//! The connections a server holds, at most its cap: one idle (waiting for
//! or reading a request) gives its place to a new one; one running a call
//! keeps it until its answer is sent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The connections being served, at most `cap`, and what each is doing: one
/// waiting for a request or reading one can be closed to admit a new
/// connection; one running a call (until its response is sent) cannot.
pub(super) struct Conns {
    cap: usize,
    table: Mutex<Table>,
    /// A connection ended or went idle.
    changed: tokio::sync::Notify,
}

#[derive(Default)]
struct Table {
    next: u64,
    live: HashMap<u64, Live>,
}

struct Live {
    /// Calls running on it.
    busy: u32,
    /// Since when it has run none.
    idle_since: std::time::Instant,
    /// Told when it is closed to admit another.
    evict: Arc<tokio::sync::Notify>,
}

impl Conns {
    pub(super) fn new(cap: usize) -> Arc<Conns> {
        Arc::new(Conns {
            cap: cap.max(1),
            table: Mutex::default(),
            changed: tokio::sync::Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // The table holds plain counters: a panic elsewhere leaves it consistent.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for a new connection: a free one, or the one of the idle
    /// connection idle longest (closed); when every connection is running a
    /// call, the first to end or go idle.
    pub(super) async fn admit(self: &Arc<Conns>) -> Admitted {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut t = self.lock();
                if t.live.len() >= self.cap {
                    let oldest = t
                        .live
                        .iter()
                        .filter(|(_, c)| c.busy == 0)
                        .min_by_key(|(_, c)| c.idle_since)
                        .map(|(id, _)| *id);
                    if let Some(id) = oldest
                        && let Some(gone) = t.live.remove(&id)
                    {
                        gone.evict.notify_one();
                    }
                }
                if t.live.len() < self.cap {
                    let id = t.next;
                    t.next += 1;
                    let evict = Arc::new(tokio::sync::Notify::new());
                    t.live.insert(
                        id,
                        Live {
                            busy: 0,
                            idle_since: std::time::Instant::now(),
                            evict: evict.clone(),
                        },
                    );
                    return Admitted {
                        conns: self.clone(),
                        id,
                        evict,
                    };
                }
            }
            changed.await;
        }
    }
}

/// A connection's place among those served; given back when dropped.
pub(super) struct Admitted {
    conns: Arc<Conns>,
    id: u64,
    evict: Arc<tokio::sync::Notify>,
}

impl Admitted {
    /// Completes when the connection is closed to admit another.
    pub(super) async fn evicted(&self) {
        self.evict.notified().await;
    }

    pub(super) fn slot(&self) -> Slot {
        Slot {
            conns: self.conns.clone(),
            id: self.id,
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.conns.lock().live.remove(&self.id);
        self.conns.changed.notify_waiters();
    }
}

/// What a request's handler knows of its connection.
#[derive(Clone)]
pub(super) struct Slot {
    conns: Arc<Conns>,
    id: u64,
}

impl Slot {
    /// The connection runs a call until the guard is dropped (with the
    /// response's body, once it is sent).
    pub(super) fn busy(&self) -> Busy {
        if let Some(c) = self.conns.lock().live.get_mut(&self.id) {
            c.busy += 1;
        }
        Busy(self.clone())
    }
}

pub(super) struct Busy(Slot);

impl Drop for Busy {
    fn drop(&mut self) {
        let conns = &self.0.conns;
        let idle = match conns.lock().live.get_mut(&self.0.id) {
            Some(c) => {
                c.busy = c.busy.saturating_sub(1);
                if c.busy == 0 {
                    c.idle_since = std::time::Instant::now();
                }
                c.busy == 0
            }
            None => false,
        };
        if idle {
            conns.changed.notify_waiters();
        }
    }
}
