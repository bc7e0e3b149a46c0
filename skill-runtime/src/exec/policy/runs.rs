//! Where multi-step runs keep their state ([`GraphState`]) between nodes: in
//! this process ([`MemoryRuns`], the default), or shared by a fleet (the
//! Redis store of `skill_runtime::queue`, feature `redis`), so a run whose
//! worker died resumes on another at the first node not completed.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::exec::policy::BoxFuture;
use crate::model::graph::GraphState;
use crate::sync::lock;

/// A store of run states, keyed by the run's job id.
pub trait RunStore: Send + Sync + 'static {
    /// The state of run `run`, when one was saved.
    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<GraphState>, String>>;

    /// Save `state` as its run's (`state.job.job_id`), replacing the last.
    fn save<'a>(&'a self, state: &'a GraphState) -> BoxFuture<'a, Result<(), String>>;

    /// The most recent runs' states, newest first, at most `limit`.
    fn recent(&self, limit: usize) -> BoxFuture<'_, Result<Vec<GraphState>, String>>;
}

/// Run states in this process: the last [`MemoryRuns::KEPT`] runs.
#[derive(Default)]
pub struct MemoryRuns {
    inner: Mutex<(HashMap<String, GraphState>, VecDeque<String>)>,
}

impl MemoryRuns {
    /// How many runs the store keeps; the oldest is dropped for a new one.
    pub const KEPT: usize = 1_000;
}

impl RunStore for MemoryRuns {
    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<GraphState>, String>> {
        let state = lock(&self.inner).0.get(run).cloned();
        Box::pin(async move { Ok(state) })
    }

    fn save<'a>(&'a self, state: &'a GraphState) -> BoxFuture<'a, Result<(), String>> {
        let mut inner = lock(&self.inner);
        let (states, order) = &mut *inner;
        let id = state.job.job_id.to_string();
        if states.insert(id.clone(), state.clone()).is_none() {
            order.push_back(id);
            if order.len() > Self::KEPT
                && let Some(old) = order.pop_front()
            {
                states.remove(&old);
            }
        }
        Box::pin(async { Ok(()) })
    }

    fn recent(&self, limit: usize) -> BoxFuture<'_, Result<Vec<GraphState>, String>> {
        let inner = lock(&self.inner);
        let states = inner
            .1
            .iter()
            .rev()
            .take(limit)
            .filter_map(|id| inner.0.get(id).cloned())
            .collect();
        Box::pin(async move { Ok(states) })
    }
}
