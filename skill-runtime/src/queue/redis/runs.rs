//! Pipeline runs' states on Redis, shared by the fleet: a worker that takes
//! over a run whose worker died reads where it stopped. One key per run
//! (`{ns}:run:{job}`, JSON, kept [`RedisRuns::KEPT_FOR`]), and an index of
//! the latest runs by start (`{ns}:runs`, the last [`RedisRuns::INDEXED`]).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::exec::policy::BoxFuture;
use crate::exec::policy::runs::RunStore;
use crate::model::graph::GraphState;
use crate::queue::redis::backend::RedisBackend;

impl RedisBackend {
    /// Pipeline runs' states shared by every process on this Redis.
    pub fn run_store(&self) -> Arc<RedisRuns> {
        Arc::new(RedisRuns {
            backend: self.clone(),
        })
    }
}

/// A [`RunStore`] on the fleet's Redis.
pub struct RedisRuns {
    backend: RedisBackend,
}

impl RedisRuns {
    /// How long a run's state is kept after its last save.
    pub const KEPT_FOR: Duration = Duration::from_secs(7 * 24 * 3600);
    /// How many of the latest runs `recent` can list.
    pub const INDEXED: isize = 10_000;

    fn key(&self, run: &str) -> String {
        format!("{}:run:{run}", self.backend.inner.keys.ns)
    }

    fn index(&self) -> String {
        format!("{}:runs", self.backend.inner.keys.ns)
    }
}

impl RunStore for RedisRuns {
    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<GraphState>, String>> {
        Box::pin(async move {
            let text: Option<String> = self
                .backend
                .inner
                .query(redis::cmd("GET").arg(self.key(run)))
                .await
                .map_err(|e| e.to_string())?;
            text.map(|t| {
                serde_json::from_str(&t)
                    .map_err(|e| format!("run {run}'s state does not read back: {e}"))
            })
            .transpose()
        })
    }

    fn save<'a>(&'a self, state: &'a GraphState) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let run = state.job.job_id.to_string();
            let text = serde_json::to_string(state).map_err(|e| e.to_string())?;
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis() as u64;
            // One round trip, applied whole (MULTI/EXEC): the state, with
            // the node's outcome in it (its run in `nodes`, its output in
            // `intermediate`, its failure in `errors`), and the run's place
            // in the index (by its first save: NX keeps a resumed run where
            // it started). No reader sees one without the other.
            let mut set = redis::cmd("SET");
            set.arg(self.key(&run))
                .arg(text)
                .arg("EX")
                .arg(Self::KEPT_FOR.as_secs());
            let mut index = redis::pipe();
            index
                .cmd("ZADD")
                .arg(self.index())
                .arg("NX")
                .arg(now)
                .arg(&run)
                .ignore()
                .cmd("ZREMRANGEBYRANK")
                .arg(self.index())
                .arg(0)
                .arg(-Self::INDEXED - 1)
                .ignore();
            let inner = &self.backend.inner;
            let saved = if inner.keys.clustered_layout() {
                // The state and the index are in different slots: the state
                // first, so that an indexed run always has one.
                match inner.durable(&set).await {
                    Ok(_) => inner.pipe::<()>(&index).await,
                    Err(e) => Err(e),
                }
            } else {
                let mut pipe = redis::pipe();
                pipe.atomic().add_command(set).ignore();
                for cmd in index.cmd_iter() {
                    pipe.add_command(cmd.clone()).ignore();
                }
                inner.pipe::<()>(&pipe).await
            };
            saved.map_err(|e| e.to_string())
        })
    }

    fn recent(&self, limit: usize) -> BoxFuture<'_, Result<Vec<GraphState>, String>> {
        Box::pin(async move {
            if limit == 0 {
                return Ok(Vec::new());
            }
            let ids: Vec<String> = self
                .backend
                .inner
                .query(
                    redis::cmd("ZREVRANGE")
                        .arg(self.index())
                        .arg(0)
                        .arg(limit as isize - 1),
                )
                .await
                .map_err(|e| e.to_string())?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let mut mget = redis::cmd("MGET");
            for id in &ids {
                mget.arg(self.key(id));
            }
            let texts: Vec<Option<String>> = self
                .backend
                .inner
                .query(&mget)
                .await
                .map_err(|e| e.to_string())?;
            // A run whose state expired is left out.
            Ok(texts
                .into_iter()
                .flatten()
                .filter_map(|t| serde_json::from_str(&t).ok())
                .collect())
        })
    }
}
