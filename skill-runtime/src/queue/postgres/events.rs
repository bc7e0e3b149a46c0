//! What the listening connections hear (`{schema}.jobs`, `{schema}.done`),
//! handed to those waiting: idle workers, and callers waiting on an outcome.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{Notify, watch};

use crate::sync::lock;

/// The channels the backend notifies on (`{schema}.jobs`, `{schema}.done`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Channel {
    /// A job may be waiting: what idle workers listen for.
    Jobs,
    /// A job's outcome is stored (the payload: its id, then a newline and the
    /// outcome itself when it is small): what callers waiting on one listen
    /// for.
    Done,
}

impl Channel {
    pub(super) fn name(self, schema: &str) -> String {
        match self {
            Channel::Jobs => format!("{schema}.jobs"),
            Channel::Done => format!("{schema}.done"),
        }
    }
}

/// What the listening connections hear, handed to those waiting.
#[derive(Default)]
pub(super) struct Events {
    /// Bumped when a job may be waiting (queued, handed back, released, or
    /// the listener reconnected and may have missed some).
    jobs: OnceLock<watch::Sender<u64>>,
    /// Waiters for an outcome, by job id, with how many wait.
    done: Mutex<HashMap<String, (Arc<Slot>, usize)>>,
}

/// Where one job's outcome is announced to its waiters.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) notify: Notify,
    /// The outcome as the notification carried it, when it did.
    outcome: Mutex<Option<String>>,
}

impl Slot {
    /// The outcome a notification carried, if one came.
    pub(super) fn outcome(&self) -> Option<String> {
        lock(&self.outcome).clone()
    }
}

impl Events {
    fn jobs(&self) -> &watch::Sender<u64> {
        self.jobs.get_or_init(|| watch::channel(0).0)
    }

    /// A receiver that changes when a job may be waiting.
    pub(super) fn jobs_changed(&self) -> watch::Receiver<u64> {
        self.jobs().subscribe()
    }

    pub(super) fn job_queued(&self) {
        self.jobs().send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Wake the waiters of the job `payload` names, handing them the outcome
    /// it carries.
    pub(super) fn done(&self, payload: &str) {
        let (job_id, outcome) = match payload.split_once('\n') {
            Some((id, outcome)) => (id, Some(outcome)),
            None => (payload, None),
        };
        if let Some((slot, _)) = lock(&self.done).get(job_id) {
            if let Some(o) = outcome {
                *lock(&slot.outcome) = Some(o.to_owned());
            }
            slot.notify.notify_waiters();
        }
    }

    /// Wake every waiter: notifications may have been missed.
    pub(super) fn all(&self) {
        self.job_queued();
        for (slot, _) in lock(&self.done).values() {
            slot.notify.notify_waiters();
        }
    }

    /// Wait for `job_id`'s outcome to be announced: the handle, held while
    /// waiting.
    pub(super) fn waiter(self: &Arc<Events>, job_id: &str) -> Waiter {
        let mut done = lock(&self.done);
        let slot = done
            .entry(job_id.to_owned())
            .or_insert_with(|| (Arc::default(), 0));
        slot.1 += 1;
        Waiter {
            events: self.clone(),
            job_id: job_id.to_owned(),
            slot: slot.0.clone(),
        }
    }
}

/// One waiter for an outcome; dropped, it is forgotten.
pub(super) struct Waiter {
    events: Arc<Events>,
    job_id: String,
    pub(super) slot: Arc<Slot>,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let mut done = lock(&self.events.done);
        if let Some(slot) = done.get_mut(&self.job_id) {
            slot.1 -= 1;
            if slot.1 == 0 {
                done.remove(&self.job_id);
            }
        }
    }
}
