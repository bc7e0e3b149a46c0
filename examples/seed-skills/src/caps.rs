//! The capability catalog of the seed skills.

use skill_runtime::capability;

use crate::stores::{RagCorpus, RoutesDir, SeoDb, Vault, VectorStore, VersionCache};

/// Read SEO tables (pages, routes).
#[capability(
    id = "database.read", effect = "database", operation = "read",
    resource = SeoDb,
    ambient(file_read = "the example's database is loaded from its JSON files when the app starts")
)]
pub struct DatabaseRead;

/// Write rows to SEO tables, such as the audit log.
#[capability(
    id = "database.write", effect = "database", operation = "write",
    resource = SeoDb,
    ambient(file_read = "the example's database is loaded from its JSON files when the app starts")
)]
pub struct DatabaseWrite;

/// Insert or update rows of SEO tables, such as the routes table.
#[capability(
    id = "database.upsert", effect = "database", operation = "upsert",
    resource = SeoDb,
    ambient(file_read = "the example's database is loaded from its JSON files when the app starts")
)]
pub struct DatabaseUpsert;

/// Run SEO audits.
#[capability(id = "seo.audit", effect = "none", operation = "read")]
pub struct SeoAudit;

/// Read SEO data and scores.
#[capability(id = "seo.read", effect = "none", operation = "read")]
pub struct SeoRead;

/// Read the application's route files.
#[capability(id = "filesystem.read", effect = "file", operation = "read", resource = RoutesDir)]
pub struct FilesystemRead;

/// Read source documents for RAG ingestion.
#[capability(id = "rag.ingest", effect = "file", operation = "read", resource = RagCorpus)]
pub struct RagIngest;

/// Upsert vectors into the vector store.
#[capability(id = "vector.upsert", effect = "database", operation = "upsert", resource = VectorStore)]
pub struct VectorUpsert;

/// Write the version cache.
#[capability(id = "cache.write", effect = "cache", operation = "write", resource = VersionCache)]
pub struct CacheWrite;

/// Delete entries of the version cache.
#[capability(id = "cache.delete", effect = "cache", operation = "delete", resource = VersionCache)]
pub struct CacheDelete;

/// Read notes of the Obsidian vault.
#[capability(id = "obsidian.read", effect = "file", operation = "read", resource = Vault)]
pub struct ObsidianRead;

/// Search the Obsidian vault.
#[capability(id = "vault.search", effect = "file", operation = "read", resource = Vault)]
pub struct VaultSearch;

/// Run a script of the ops directory: a child process, JSON on its stdin and
/// stdout.
#[capability(id = "process.script", effect = "process", operation = "execute")]
pub struct ScriptRun;

/// Call a tool on the runtime's MCP client.
#[capability(id = "mcp.call", effect = "api", operation = "execute")]
pub struct McpCall;
