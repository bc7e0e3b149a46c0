//! The seals of what the MCP server hands a client and takes back (task ids,
//! the state of a 2026-07-28 approval round trip): made with a secret no
//! client knows, the queue's when the server has one (shared by the fleet,
//! so any server opens what another sealed), else this server's own; and
//! marks used once, so an answer counts for one call.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use sha2::{Digest, Sha256};

use crate::queue::api::{OnceMarks, Queue};

/// The secret and the once-marks of one server (see the module).
pub(crate) struct Seals {
    own: [u8; 32],
    marks: OnceMarks,
    queue: Option<Arc<dyn Queue>>,
    shared: tokio::sync::OnceCell<[u8; 32]>,
}

impl Seals {
    /// Seals of this server alone: a secret made now, marks kept here.
    pub(crate) fn own() -> Seals {
        Seals {
            own: rand::random(),
            marks: OnceMarks::default(),
            queue: None,
            shared: tokio::sync::OnceCell::new(),
        }
    }

    /// Seals of every server on `queue`: its secret, its marks.
    pub(crate) fn shared(queue: Arc<dyn Queue>) -> Seals {
        Seals {
            queue: Some(queue),
            ..Seals::own()
        }
    }

    /// The secret (the queue's, read once).
    async fn key(&self) -> Result<[u8; 32], ErrorData> {
        let Some(queue) = &self.queue else {
            return Ok(self.own);
        };
        self.shared
            .get_or_try_init(|| queue.secret())
            .await
            .copied()
            .map_err(|e| ErrorData::internal_error(format!("the seal's secret: {e}"), None))
    }

    /// The seal of `parts` (each written with its length, so no two lists
    /// of parts write the same bytes): the hex of SHA-256 of the secret and
    /// them, cut to `bytes`.
    pub(crate) async fn seal(
        &self,
        parts: &[impl AsRef<[u8]>],
        bytes: usize,
    ) -> Result<String, ErrorData> {
        let key = self.key().await?;
        let mut h = Sha256::new();
        h.update(key);
        for p in parts {
            let p = p.as_ref();
            h.update((p.len() as u64).to_le_bytes());
            h.update(p);
        }
        Ok(h.finalize()[..bytes.min(32)]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect())
    }

    /// Whether `seal` is the seal of `parts`, compared in a time that does
    /// not depend on where they differ.
    pub(crate) async fn opens(
        &self,
        seal: &str,
        parts: &[impl AsRef<[u8]>],
        bytes: usize,
    ) -> Result<bool, ErrorData> {
        let made = self.seal(parts, bytes).await?;
        Ok(same_seal(&made, seal))
    }

    /// Mark `mark` used for `ttl`: whether it was not used already (on the
    /// queue: across the fleet).
    pub(crate) async fn use_once(&self, mark: &str, ttl: Duration) -> Result<bool, ErrorData> {
        match &self.queue {
            Some(queue) => queue
                .use_once(mark, ttl)
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None)),
            None => Ok(self.marks.use_once(mark, ttl)),
        }
    }
}

/// Whether `made` and `given` are the same text, compared in a time that
/// does not depend on where they differ (a seal is never guessed a byte at
/// a time).
pub(crate) fn same_seal(made: &str, given: &str) -> bool {
    made.len() == given.len()
        && made
            .bytes()
            .zip(given.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}
