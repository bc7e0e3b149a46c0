//! `rag_reindex` and `rag_cache_purge`: the RAG corpus indexed into the vector
//! store, and the rollback that puts the previous index back.

use std::hash::{DefaultHasher, Hash, Hasher};

use skill_runtime::prelude::*;
use skill_runtime::{OverBudget, policy::RollbackError, policy::RollbackRequest};

use crate::caps::*;
use crate::stores::{IndexVersion, VectorStore, VersionCache, lock};

// ---------------------------------------------------------------- rag_reindex

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum Namespace {
    #[serde(rename = "knowledge:faq")]
    Faq,
    #[serde(rename = "knowledge:diagnostic")]
    Diagnostic,
    #[serde(rename = "knowledge:reference")]
    Reference,
}

impl Namespace {
    pub fn as_str(self) -> &'static str {
        match self {
            Namespace::Faq => "knowledge:faq",
            Namespace::Diagnostic => "knowledge:diagnostic",
            Namespace::Reference => "knowledge:reference",
        }
    }
}

/// Namespaces that may be reindexed in production.
pub const ALLOWED_NAMESPACES: &[Namespace] =
    &[Namespace::Faq, Namespace::Diagnostic, Namespace::Reference];

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReindexInput {
    pub namespace: Namespace,
    /// Documents to reindex; all of the namespace when empty.
    #[serde(default)]
    pub document_ids: Vec<String>,
    /// Rebuild the index from nothing instead of updating it.
    #[serde(default)]
    pub full_rebuild: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReindexOutput {
    pub indexed: u32,
    pub skipped: u32,
    pub errors: Vec<String>,
    pub duration_ms: u64,
    /// The version published, or on a dry run the one that would be.
    pub version: String,
    /// Whether the index and the version cache were written (not on a dry
    /// run, where `indexed` and `skipped` say what would change).
    pub published: bool,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum ReindexError {
    /// The document corpus could not be read.
    #[error("corpus unavailable: {0}")]
    #[failure(retryable)]
    CorpusUnavailable(String),
    /// The job's document or token budget ran out before anything was
    /// published.
    #[error("{0}")]
    #[failure(code = "budget_exceeded")]
    OverBudget(#[from] OverBudget),
}

/// Reindex documents in RAG vector store with safe atomic swap.
#[skill(
    title = "RAG Reindex",
    version = "1.0.0",
    domain = "rag",
    owners("data-team"),
    autonomy = "L2",
    capabilities(RagIngest, VectorUpsert, CacheWrite),
    side_effects(
        VectorUpsert(target = "weaviate::{namespace}", reversible = true, description = "Upsert vectors to Weaviate"),
        CacheWrite(target = "redis::rag_version", reversible = true, description = "Update version cache"),
    ),
    precondition(code = "INVALID_NAMESPACE", message = "Namespace not allowed in production",
                 check = |i: &ReindexInput| ALLOWED_NAMESPACES.contains(&i.namespace)),
    postcondition(check = |i: &ReindexInput, o: &ReindexOutput| (o.indexed + o.skipped) as usize >= i.document_ids.len(),
                  rollback = "rollback_to_previous_version"),
    validation_rule(id = "min_documents", severity = "error", message = "At least 95% of documents must be indexed",
                    check = |i: &ReindexInput, o: &ReindexOutput| f64::from(o.indexed) >= i.document_ids.len() as f64 * 0.95),
    reusable_by(executor = "execute", orchestrator = "admin"),
    timeout_ms = 300_000, retries = 2, backoff = "exponential", idempotent,
    mcp(tool_name = "ai_cos_rag_reindex", permissions("rag:ingest", "database:read")),
)]
pub async fn rag_reindex(ctx: Ctx, input: ReindexInput) -> Result<ReindexOutput, ReindexError> {
    use crate::stores::{NOTE_KINDS, read_inside};
    let ns = input.namespace.as_str();
    let dir = ctx.resource::<RagIngest>().namespace_dir(ns);
    let unavailable =
        |e: std::io::Error| ReindexError::CorpusUnavailable(format!("{}: {e}", dir.display()));
    let ids: Vec<String> = if input.document_ids.is_empty() {
        // Off the async threads, like every read of the corpus.
        let listed = dir.clone();
        let names =
            tokio::task::spawn_blocking(move || crate::confined::list(&listed, NOTE_KINDS, false))
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())))
                .map_err(unavailable)?;
        names
            .iter()
            .filter_map(|n| n.strip_suffix(".md").map(str::to_owned))
            .collect()
    } else {
        input.document_ids.clone()
    };

    let store = ctx.resource::<VectorUpsert>();
    // Build the next version beside the live one, then swap it in one step.
    let live = lock(&store.namespaces).get(ns).cloned();
    let current = live.clone().unwrap_or_default();
    let mut next = if input.full_rebuild {
        IndexVersion::default()
    } else {
        current.clone()
    };
    next.version = current.version + 1;
    let (mut indexed, mut skipped, mut errors) = (0u32, 0u32, Vec::new());
    for id in &ids {
        ctx.report_items(1);
        let (root, name) = (dir.clone(), format!("{id}.md"));
        let read = tokio::task::spawn_blocking(move || read_inside(&root, &name, NOTE_KINDS))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
        let text = match read {
            Ok(text) => text,
            Err(e) => {
                errors.push(format!("{id}: {e}"));
                continue;
            }
        };
        // Each document read is retrieved, and embedding it spends a token
        // a word: both within the job's budgets, checked before anything
        // is published.
        ctx.report_docs(1)?;
        ctx.report_tokens(text.split_whitespace().count() as u64)?;
        let hash = content_hash(&text);
        if next.vectors.get(id).is_some_and(|(h, _)| *h == hash) {
            skipped += 1;
        } else {
            next.vectors.insert(id.clone(), (hash, embed(&text)));
            indexed += 1;
        }
    }
    let version = format!("{ns}@{}", next.version);
    let published = !ctx.dry_run();
    if published {
        store.previous.save(ctx.job_id(), (ns.to_owned(), live));
        lock(&store.namespaces).insert(ns.to_owned(), next);
        lock(&ctx.resource::<CacheWrite>().entries)
            .insert(format!("rag_version:{ns}"), version.clone());
        // The index version this job published.
        ctx.add_artifact(Artifact {
            name: "rag index version".into(),
            kind: "application/vnd.weaviate.index".into(),
            uri: Some(format!("weaviate://{version}")),
        });
    }
    let duration_ms = ctx
        .started_at()
        .elapsed()
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    Ok(ReindexOutput {
        indexed,
        skipped,
        errors,
        duration_ms,
        version,
        published,
    })
}

fn content_hash(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// A hashed bag-of-words embedding (64 dimensions, L2-normalized): deterministic
/// and good enough for lexical similarity on local data.
pub fn embed(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 64];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
    {
        let mut h = DefaultHasher::new();
        word.to_lowercase().hash(&mut h);
        v[(h.finish() % 64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

// ---------------------------------------------------------------- rag_cache_purge
// Not a seed example: the destructive, human-approved companion of rag_reindex,
// which shows (and the MCP tests check) what approval policy does.

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PurgeInput {
    pub namespace: Namespace,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PurgeOutput {
    /// Whether a cached version pointer was there to drop.
    pub purged: bool,
    /// Whether it was dropped (not on a dry run).
    pub applied: bool,
}

/// Drop the cached RAG version pointer of a namespace, so readers go back to the store.
#[skill(
    title = "RAG Cache Purge",
    version = "1.0.0",
    domain = "rag",
    owners("data-team"),
    autonomy = "L1",
    capabilities(CacheDelete),
    side_effects(CacheDelete(
        target = "redis::rag_version",
        reversible = false,
        description = "Delete the cached version pointer"
    )),
    destructive,
    requires_hitl,
    reusable_by(orchestrator = "admin"),
    timeout_ms = 5_000,
    retries = 0,
    backoff = "none",
    idempotent,
    mcp(tool_name = "ai_cos_rag_cache_purge", permissions("rag:admin"))
)]
pub async fn rag_cache_purge(ctx: Ctx, input: PurgeInput) -> PurgeOutput {
    let key = format!("rag_version:{}", input.namespace.as_str());
    let mut entries = lock(&ctx.resource::<CacheDelete>().entries);
    let applied = !ctx.dry_run();
    let purged = if applied {
        entries.remove(&key).is_some()
    } else {
        entries.contains_key(&key)
    };
    PurgeOutput { purged, applied }
}

/// `rollback_to_previous_version` (rag_reindex): put back the index the job
/// replaced, and the cached version with it.
pub fn rollback_to_previous_version(r: RollbackRequest<'_>) -> Result<(), RollbackError> {
    let store = r
        .resources
        .get::<VectorStore>()
        .ok_or("no vector store is registered")?;
    let (ns, previous) = store
        .previous
        .take(r.job_id)
        .ok_or_else(|| format!("job {} left no previous index version", r.job_id))?;
    let cache = r.resources.get::<VersionCache>();
    let key = format!("rag_version:{ns}");
    match previous {
        Some(index) => {
            if let Some(cache) = cache {
                lock(&cache.entries).insert(key, format!("{ns}@{}", index.version));
            }
            lock(&store.namespaces).insert(ns, index);
        }
        None => {
            if let Some(cache) = cache {
                lock(&cache.entries).remove(&key);
            }
            lock(&store.namespaces).remove(&ns);
        }
    }
    Ok(())
}
