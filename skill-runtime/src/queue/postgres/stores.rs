//! The other stores on PostgreSQL: pipeline runs' states (`runs`), agents'
//! R3 files (`artifacts`), and the schedules workers registered
//! (`schedules`).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::types::Type;

use crate::agent::artifacts::ArtifactStore;
use crate::exec::policy::BoxFuture;
use crate::exec::policy::runs::RunStore;
use crate::model::graph::GraphState;
use crate::model::result::Artifact;
use crate::queue::api::QueueError;
use crate::queue::postgres::backend::PostgresBackend;
use crate::queue::postgres::conn::Conn;
use crate::queue::schedule::{self, Board, ScheduleState, Schedules};

impl PostgresBackend {
    /// Pipeline runs' states shared by every process on this database.
    pub fn run_store(&self) -> Arc<PostgresRuns> {
        Arc::new(PostgresRuns {
            backend: self.clone(),
        })
    }

    /// Agents' R3 files, shared by every process on this database.
    pub fn artifact_store(&self) -> Arc<PostgresArtifacts> {
        Arc::new(PostgresArtifacts {
            backend: self.clone(),
        })
    }

    /// The messages of parked jobs `ids`, in order (`None` for one not
    /// parked): one statement, on the jobs' `(queue, job_id)` index.
    pub(crate) async fn parked_messages(
        &self,
        ids: &[&str],
    ) -> Result<Vec<Option<String>>, QueueError> {
        let c = &self.inner;
        let rows = c
            .call(
                &c.sql(
                    "SELECT job_id, message FROM @.jobs WHERE queue = $1 AND job_id = ANY($2) AND state = 3",
                ),
                &[(&c.config.queue, Type::TEXT), (&ids, Type::TEXT_ARRAY)],
            )
            .await?;
        Ok(ids
            .iter()
            .map(|id| {
                rows.iter()
                    .find(|r| r.get::<_, &str>(0) == *id)
                    .map(|r| r.get::<_, String>(1))
            })
            .collect())
    }

    /// The R3 file kept as `key` (as a run's result names it), when it is
    /// still kept.
    pub async fn artifact(&self, key: &str) -> Result<Option<String>, QueueError> {
        let prefix = artifact_prefix(&self.inner);
        let Some(name) = key.strip_prefix(&prefix) else {
            return Err(QueueError::Invalid(format!(
                "`{key}` is not an artifact's key here; they start with `{prefix}`"
            )));
        };
        let c = &self.inner;
        let rows = c
            .call(
                &c.sql(
                    "SELECT body FROM @.artifacts WHERE name = $1 AND until >= clock_timestamp()",
                ),
                &[(&name, Type::TEXT)],
            )
            .await?;
        Ok(rows.first().map(|r| r.get::<_, String>(0)))
    }

    /// The schedules workers registered on this queue, with their last and
    /// next runs.
    pub async fn schedules(&self) -> Result<Vec<ScheduleState>, QueueError> {
        schedule::states(self).await
    }

    /// Queue the ticks of `schedules` until `stop` completes (see
    /// [`queue::schedule`](crate::queue::schedule)). Every worker of a fleet
    /// may run this.
    pub async fn run_schedules(&self, schedules: &Schedules, stop: impl Future<Output = ()>) {
        schedule::run(self, schedules, stop).await
    }
}

/// What an artifact's key starts with: `{schema}:artifact:`.
fn artifact_prefix(c: &Conn) -> String {
    format!("{}:artifact:", c.config.schema)
}

/// A [`RunStore`] on the fleet's PostgreSQL: a row per run (`runs`), its
/// state as JSON, kept [`PostgresRuns::KEPT_FOR`] after its last save.
pub struct PostgresRuns {
    backend: PostgresBackend,
}

impl PostgresRuns {
    /// How long a run's state is kept after its last save.
    pub const KEPT_FOR: Duration = Duration::from_secs(7 * 24 * 3600);
}

impl RunStore for PostgresRuns {
    fn load<'a>(&'a self, run: &'a str) -> BoxFuture<'a, Result<Option<GraphState>, String>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let rows = c
                .call(
                    &c.sql("SELECT state FROM @.runs WHERE job_id = $1"),
                    &[(&run, Type::TEXT)],
                )
                .await
                .map_err(|e| e.to_string())?;
            rows.first()
                .map(|r| {
                    serde_json::from_str(r.get::<_, &str>(0))
                        .map_err(|e| format!("run {run}'s state does not read back: {e}"))
                })
                .transpose()
        })
    }

    fn save<'a>(&'a self, state: &'a GraphState) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let run = state.job.job_id.to_string();
            let text = serde_json::to_string(state).map_err(|e| e.to_string())?;
            // One statement: the state, with the node's outcome in it; a
            // resumed run keeps its start.
            c.call(
                &c.sql(
                    "INSERT INTO @.runs (job_id, state) VALUES ($1, $2)
                     ON CONFLICT (job_id) DO UPDATE SET state = excluded.state, saved_at = clock_timestamp()",
                ),
                &[(&run, Type::TEXT), (&text, Type::TEXT)],
            )
            .await
            .map(drop)
            .map_err(|e| e.to_string())
        })
    }

    fn recent(&self, limit: usize) -> BoxFuture<'_, Result<Vec<GraphState>, String>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let limit = limit.min(i64::MAX as usize) as i64;
            let rows = c
                .call(
                    &c.sql("SELECT state FROM @.runs ORDER BY started_at DESC, job_id LIMIT $1"),
                    &[(&limit, Type::INT8)],
                )
                .await
                .map_err(|e| e.to_string())?;
            Ok(rows
                .iter()
                .filter_map(|r| serde_json::from_str(r.get::<_, &str>(0)).ok())
                .collect())
        })
    }
}

/// An [`ArtifactStore`] on the fleet's PostgreSQL: a row per file, kept
/// [`PostgresArtifacts::KEPT_FOR`].
pub struct PostgresArtifacts {
    backend: PostgresBackend,
}

impl PostgresArtifacts {
    /// How long a file is kept.
    pub const KEPT_FOR: Duration = Duration::from_secs(30 * 24 * 3600);
}

impl ArtifactStore for PostgresArtifacts {
    fn put<'a>(&'a self, name: &'a str, text: String) -> BoxFuture<'a, Result<Artifact, String>> {
        Box::pin(async move {
            let c = &self.backend.inner;
            let kept = Self::KEPT_FOR.as_millis() as i64;
            c.call(
                &c.sql(
                    "INSERT INTO @.artifacts VALUES ($1, $2, clock_timestamp() + @.ms($3))
                     ON CONFLICT (name) DO UPDATE SET body = excluded.body, until = excluded.until",
                ),
                &[
                    (&name, Type::TEXT),
                    (&text, Type::TEXT),
                    (&kept, Type::INT8),
                ],
            )
            .await
            .map_err(|e| e.to_string())?;
            Ok(Artifact::file(
                name,
                format!("{}{name}", artifact_prefix(c)),
            ))
        })
    }

    fn get<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move { self.backend.artifact(uri).await.map_err(|e| e.to_string()) })
    }
}

impl Board for PostgresBackend {
    fn queue_name(&self) -> &str {
        &self.inner.config.queue
    }

    fn register<'a>(&'a self, id: &'a str, state: String) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            c.call(
                &c.sql(
                    "INSERT INTO @.schedules (queue, id, state) VALUES ($1, $2, $3)
                     ON CONFLICT (queue, id) DO UPDATE SET state = excluded.state",
                ),
                &[
                    (&c.config.queue, Type::TEXT),
                    (&id, Type::TEXT),
                    (&state, Type::TEXT),
                ],
            )
            .await
            .map(drop)
        })
    }

    fn fired<'a>(
        &'a self,
        id: &'a str,
        tick: &'a str,
        job: &'a str,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            c.call(
                &c.sql(
                    "UPDATE @.schedules SET last_tick = $3, last_job = $4 WHERE queue = $1 AND id = $2",
                ),
                &[
                    (&c.config.queue, Type::TEXT),
                    (&id, Type::TEXT),
                    (&tick, Type::TEXT),
                    (&job, Type::TEXT),
                ],
            )
            .await
            .map(drop)
        })
    }

    fn registered(
        &self,
    ) -> BoxFuture<'_, Result<Vec<(String, Option<(String, String)>)>, QueueError>> {
        Box::pin(async move {
            let c = &self.inner;
            let rows = c
                .call(
                    &c.sql("SELECT state, last_tick, last_job FROM @.schedules WHERE queue = $1"),
                    &[(&c.config.queue, Type::TEXT)],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|r| {
                    let tick: Option<String> = r.get(1);
                    let job: Option<String> = r.get(2);
                    (r.get::<_, String>(0), tick.zip(job))
                })
                .collect())
        })
    }
}
