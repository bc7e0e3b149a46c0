//! Agents' R3 files on Redis, shared by the fleet: a run on any worker
//! keeps its `audit.md`, `backlog.json` and `graph.json` where every other
//! process reads them. One key per file (`{ns}:artifact:{name}`, text, kept
//! [`RedisArtifacts::KEPT_FOR`]); the run's result names the keys.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::artifacts::ArtifactStore;
use crate::exec::policy::BoxFuture;
use crate::model::result::Artifact;
use crate::queue::api::QueueError;
use crate::queue::redis::backend::RedisBackend;

impl RedisBackend {
    /// Agents' R3 files, shared by every process on this Redis.
    pub fn artifact_store(&self) -> Arc<RedisArtifacts> {
        Arc::new(RedisArtifacts {
            backend: self.clone(),
        })
    }

    /// The R3 file kept as `key` (as a run's result names it), when it is
    /// still kept.
    pub async fn artifact(&self, key: &str) -> Result<Option<String>, QueueError> {
        let prefix = format!("{}:artifact:", self.inner.keys.ns);
        if !key.starts_with(&prefix) {
            return Err(QueueError::Invalid(format!(
                "`{key}` is not an artifact's key here; they start with `{prefix}`"
            )));
        }
        self.inner.query(redis::cmd("GET").arg(key)).await
    }
}

/// An [`ArtifactStore`] on the fleet's Redis.
pub struct RedisArtifacts {
    backend: RedisBackend,
}

impl RedisArtifacts {
    /// How long a file is kept.
    pub const KEPT_FOR: Duration = Duration::from_secs(30 * 24 * 3600);
}

impl ArtifactStore for RedisArtifacts {
    fn put<'a>(&'a self, name: &'a str, text: String) -> BoxFuture<'a, Result<Artifact, String>> {
        Box::pin(async move {
            let key = format!("{}:artifact:{name}", self.backend.inner.keys.ns);
            self.backend
                .inner
                .query::<()>(
                    redis::cmd("SET")
                        .arg(&key)
                        .arg(text)
                        .arg("EX")
                        .arg(Self::KEPT_FOR.as_secs()),
                )
                .await
                .map_err(|e| e.to_string())?;
            Ok(Artifact::file(name, key))
        })
    }

    fn get<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move { self.backend.artifact(uri).await.map_err(|e| e.to_string()) })
    }
}
