//! The AI-COS skill model's examples: `seo_role_audit`, `rag_reindex`,
//! `vlevel_calculator` and `routes_sync`.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use skill_runtime::RollbackRequest;
use skill_runtime::manifest::PermissionLevel;
use skill_runtime::prelude::*;

use crate::caps::*;
use crate::stores::{
    AuditLogEntry, IndexVersion, RouteRow, SeoDb, VectorStore, VersionCache, lock,
};

fn yes() -> bool {
    true
}

// ---------------------------------------------------------------- seo_role_audit

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AuditInput {
    /// Pages to audit.
    #[schemars(length(max = 1000), inner(url))]
    pub urls: Vec<String>,
    /// Also inspect page content for expert material.
    #[serde(default = "yes")]
    pub check_content: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AuditOutput {
    pub audited: u32,
    pub violations: Vec<RoleViolation>,
    pub summary: AuditSummary,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RoleViolation {
    pub url: String,
    pub current_role: String,
    pub suggested_role: String,
    pub violations: Vec<String>,
    pub severity: ViolationSeverity,
    pub has_expert_content: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ViolationSeverity {
    Info,
    Warning,
    Error,
    Critical,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct AuditSummary {
    /// Pages per current role.
    pub by_role: BTreeMap<String, u32>,
    pub unknown_pages: u32,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum AuditError {
    /// The page table could not be read.
    #[error("page table unavailable: {0}")]
    #[failure(retryable)]
    PagesUnavailable(String),
}

/// Audit PageRole assignments and detect R1/R4 confusion.
#[skill(
    title = "SEO Role Audit",
    version = "1.0.0",
    domain = "seo",
    owners("seo-team"),
    autonomy = "L2",
    capabilities(DatabaseRead, SeoAudit, DatabaseWrite),
    side_effects(DatabaseWrite(target = "__seo_audit_log", reversible = true, description = "Log audit results")),
    precondition(code = "EMPTY_INPUT", message = "At least one URL is required", check = |i: &AuditInput| !i.urls.is_empty()),
    precondition(code = "TOO_MANY_URLS", message = "Maximum 1000 URLs per audit", check = |i: &AuditInput| i.urls.len() <= 1000),
    postcondition(check = |i: &AuditInput, o: &AuditOutput| o.audited as usize == i.urls.len()),
    validation_rule(
        id = "no_r1_expert_content",
        severity = "error",
        message = "Router pages must not contain expert content",
        check = |o: &AuditOutput| !o.violations.iter().any(|v| v.suggested_role == "R1" && v.has_expert_content)
    ),
    reusable_by(executor = "execute", validator = "execute"),
    timeout_ms = 120_000, retries = 2, backoff = "exponential", idempotent,
    mcp(tool_name = "ai_cos_seo_role_audit", permissions("database:read", "seo:audit")),
)]
pub async fn seo_role_audit(ctx: Ctx, input: AuditInput) -> Result<AuditOutput, AuditError> {
    let db = ctx.resource::<DatabaseRead>();
    let mut summary = AuditSummary::default();
    let mut violations = Vec::new();
    for url in &input.urls {
        let Some(page) = db.pages.get(url) else {
            summary.unknown_pages += 1;
            violations.push(RoleViolation {
                url: url.clone(),
                current_role: "none".into(),
                suggested_role: "none".into(),
                violations: vec!["page_not_found".into()],
                severity: ViolationSeverity::Warning,
                has_expert_content: false,
            });
            continue;
        };
        *summary.by_role.entry(page.role.clone()).or_default() += 1;
        let expert = input.check_content && page.has_expert_content;
        // A page that lists products routes (R1); a page of expert content without
        // products is R4; a page doing both must be split.
        let (suggested, mut found, severity) = match (page.product_count > 0, expert) {
            (true, true) => (
                "R4",
                vec!["router_with_expert_content".to_owned()],
                ViolationSeverity::Error,
            ),
            (true, false) => ("R1", vec![], ViolationSeverity::Warning),
            (false, true) => ("R4", vec![], ViolationSeverity::Warning),
            (false, false) => (page.role.as_str(), vec![], ViolationSeverity::Info),
        };
        if page.role != suggested {
            found.push(format!(
                "role_{}_should_be_{}",
                page.role.to_lowercase(),
                suggested.to_lowercase()
            ));
        }
        if !found.is_empty() {
            violations.push(RoleViolation {
                url: url.clone(),
                current_role: page.role.clone(),
                suggested_role: suggested.to_owned(),
                violations: found,
                severity,
                has_expert_content: expert,
            });
        }
    }
    lock(&ctx.resource::<DatabaseWrite>().audit_log).push(AuditLogEntry {
        trace_id: ctx.trace_id().to_owned(),
        audited: input.urls.len(),
        violations: violations.len(),
    });
    let audited =
        u32::try_from(input.urls.len()).map_err(|e| AuditError::PagesUnavailable(e.to_string()))?;
    Ok(AuditOutput {
        audited,
        violations,
        summary,
    })
}

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
    pub version: String,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum ReindexError {
    /// The document corpus could not be read.
    #[error("corpus unavailable: {0}")]
    #[failure(retryable)]
    CorpusUnavailable(String),
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
#[expect(
    clippy::disallowed_methods,
    reason = "reads the corpus under the declared capability RagIngest (rag.ingest, file read)"
)]
pub async fn rag_reindex(ctx: Ctx, input: ReindexInput) -> Result<ReindexOutput, ReindexError> {
    let ns = input.namespace.as_str();
    let dir = ctx.resource::<RagIngest>().namespace_dir(ns);
    let unavailable =
        |e: std::io::Error| ReindexError::CorpusUnavailable(format!("{}: {e}", dir.display()));
    let ids: Vec<String> = if input.document_ids.is_empty() {
        let mut ids = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(unavailable)? {
            let path = entry.map_err(unavailable)?.path();
            if let (Some(stem), Some("md")) =
                (path.file_stem(), path.extension().and_then(|e| e.to_str()))
            {
                ids.push(stem.to_string_lossy().into_owned());
            }
        }
        ids.sort();
        ids
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
        let text =
            match crate::stores::inside(&dir, &format!("{id}.md")).map(std::fs::read_to_string) {
                Some(Ok(text)) => text,
                Some(Err(e)) => {
                    errors.push(format!("{id}: {e}"));
                    continue;
                }
                None => {
                    errors.push(format!("{id}: not a document id"));
                    continue;
                }
            };
        let hash = content_hash(&text);
        if next.vectors.get(id).is_some_and(|(h, _)| *h == hash) {
            skipped += 1;
        } else {
            next.vectors.insert(id.clone(), (hash, embed(&text)));
            indexed += 1;
        }
    }
    let version = format!("{ns}@{}", next.version);
    store.previous.save(ctx.job_id(), (ns.to_owned(), live));
    lock(&store.namespaces).insert(ns.to_owned(), next);
    lock(&ctx.resource::<CacheWrite>().entries)
        .insert(format!("rag_version:{ns}"), version.clone());
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
    let purged = lock(&ctx.resource::<CacheDelete>().entries)
        .remove(&key)
        .is_some();
    PurgeOutput { purged }
}

// ---------------------------------------------------------------- vlevel_calculator

#[derive(Debug, Deserialize, JsonSchema)]
pub struct VLevelInput {
    pub page_data: PageData,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PageData {
    pub url: String,
    /// Product range, e.g. "plaquettes-de-frein".
    pub gamme: String,
    #[serde(default)]
    pub marque: String,
    #[serde(default)]
    pub modele: String,
    #[serde(default)]
    pub r#type: String,
    /// TecDoc vehicle type number.
    #[serde(default)]
    pub ktypnr: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub enum VLevel {
    V1,
    V2,
    V3,
    V4,
    V5,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct VLevelOutput {
    pub vlevel: VLevel,
    #[schemars(range(min = 0, max = 100))]
    pub score: u8,
    pub breakdown: Breakdown,
    pub recommendations: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Breakdown {
    pub gamme_score: u8,
    pub vehicle_score: u8,
    pub specificity_score: u8,
}

/// Whether `s` is an absolute http(s) URL with a host.
pub fn is_valid_url(s: &str) -> bool {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|r| {
        let host = r.split(['/', '?', '#']).next().unwrap_or("");
        !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
    })
}

/// Calculate V1-V5 levels for SEO pages based on vehicle specificity.
#[skill(
    title = "V-Level Calculator",
    version = "1.0.0",
    domain = "seo",
    owners("seo-team"),
    autonomy = "L3",
    capabilities(SeoRead),
    precondition(code = "INVALID_URL", message = "URL must be valid", check = |i: &VLevelInput| is_valid_url(&i.page_data.url)),
    postcondition(check = |o: &VLevelOutput| o.score <= 100),
    validation_rule(id = "score_consistency", severity = "warning", message = "V5 pages should have score >= 80",
                    check = |o: &VLevelOutput| (o.vlevel == VLevel::V5 && o.score >= 80) || o.vlevel != VLevel::V5),
    reusable_by(executor = "execute", analyzer = "read"),
    timeout_ms = 5_000, retries = 1, backoff = "none", idempotent,
    mcp(tool_name = "ai_cos_vlevel_calc", permissions("seo:read")),
)]
pub async fn vlevel_calculator(input: VLevelInput) -> VLevelOutput {
    let p = &input.page_data;
    let has = |s: &str| !s.trim().is_empty();
    let gamme_score = if has(&p.gamme) { 20 } else { 0 };
    let vehicle_score = [(&p.marque, 15), (&p.modele, 15), (&p.r#type, 10)]
        .iter()
        .filter(|(f, _)| has(f))
        .map(|(_, s)| s)
        .sum::<u8>();
    let specificity_score = if has(&p.ktypnr) { 40 } else { 0 };
    let vlevel = match (
        has(&p.ktypnr),
        has(&p.r#type),
        has(&p.modele),
        has(&p.marque),
    ) {
        (true, ..) => VLevel::V5,
        (false, true, ..) => VLevel::V4,
        (false, false, true, _) => VLevel::V3,
        (false, false, false, true) => VLevel::V2,
        _ => VLevel::V1,
    };
    let recommendations = [
        (&p.marque, "add the vehicle make (marque)"),
        (&p.modele, "add the vehicle model (modele)"),
        (&p.r#type, "add the engine type (type)"),
        (
            &p.ktypnr,
            "add the TecDoc type number (ktypnr) for V5 specificity",
        ),
    ]
    .iter()
    .filter(|(f, _)| !has(f))
    .map(|(_, r)| (*r).to_owned())
    .collect();
    VLevelOutput {
        vlevel,
        score: gamme_score + vehicle_score + specificity_score,
        breakdown: Breakdown {
            gamme_score,
            vehicle_score,
            specificity_score,
        },
        recommendations,
    }
}

// ---------------------------------------------------------------- routes_sync

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoutesSyncInput {
    /// Report changes without writing them.
    #[serde(default = "yes")]
    pub dry_run: bool,
    /// Include `/admin` routes.
    #[serde(default)]
    pub include_admin: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoutesSyncOutput {
    pub routes: u32,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub updated: Vec<String>,
    pub missing_role: Vec<String>,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum RoutesSyncError {
    /// The routes folder could not be read.
    #[error("routes folder unavailable: {0}")]
    #[failure(retryable)]
    RoutesUnavailable(String),
}

/// The URL path of a Remix flat-routes file name, e.g. `guide.$slug.tsx` → `/guide/:slug`.
pub fn route_path(file_name: &str) -> Option<String> {
    let stem = ["tsx", "ts", "jsx", "js"]
        .iter()
        .find_map(|ext| file_name.strip_suffix(&format!(".{ext}")))?;
    let segments: Vec<String> = stem
        .split('.')
        .filter(|s| *s != "_index" && !s.starts_with('_'))
        .map(|s| {
            let s = s.trim_end_matches('_');
            match s.strip_prefix('$') {
                Some(param) => format!(":{param}"),
                None => s.to_owned(),
            }
        })
        .collect();
    Some(format!("/{}", segments.join("/")))
}

/// The `pageRole` a route module declares in its `handle` export.
fn page_role(source: &str) -> Option<String> {
    let rest = &source[source.find("pageRole")? + "pageRole".len()..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let rest = &rest[1..];
    Some(rest[..rest.find(quote)?].to_owned())
}

/// Sync Remix routes with SEO database.
#[skill(
    title = "Routes Sync",
    version = "1.0.0",
    domain = "seo",
    owners("platform-team"),
    autonomy = "L1",
    capabilities(FilesystemRead, DatabaseRead, DatabaseUpsert),
    side_effects(DatabaseUpsert(target = "__seo_routes", reversible = true, description = "Sync routes to SEO database")),
    precondition(code = "PERMISSION_DENIED", message = "Only admins can sync routes without dry run",
                 check = |i: &RoutesSyncInput, caller: &Caller| caller.permission_level == Some(PermissionLevel::Admin) || i.dry_run),
    postcondition(check = |i: &RoutesSyncInput, o: &RoutesSyncOutput| o.missing_role.is_empty() || i.dry_run,
                  rollback = "revert_route_changes"),
    validation_rule(id = "no_orphan_routes", severity = "error", message = "All routes must have a PageRole assigned",
                    check = |o: &RoutesSyncOutput| o.missing_role.is_empty()),
    reusable_by(executor = "execute", orchestrator = "admin"),
    timeout_ms = 60_000, retries = 2, backoff = "linear", idempotent,
    mcp(tool_name = "ai_cos_routes_sync", permissions("seo:write", "filesystem:read")),
)]
#[expect(
    clippy::disallowed_methods,
    reason = "reads route files under the declared capability FilesystemRead (filesystem.read)"
)]
pub async fn routes_sync(
    ctx: Ctx,
    input: RoutesSyncInput,
) -> Result<RoutesSyncOutput, RoutesSyncError> {
    let dir = &ctx.resource::<FilesystemRead>().root;
    let unavailable =
        |e: std::io::Error| RoutesSyncError::RoutesUnavailable(format!("{}: {e}", dir.display()));
    let mut files: BTreeMap<String, Option<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(unavailable)? {
        let path = entry.map_err(unavailable)?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(route) = route_path(&name) else {
            continue;
        };
        if !input.include_admin && (route == "/admin" || route.starts_with("/admin/")) {
            continue;
        }
        let source = std::fs::read_to_string(&path).map_err(unavailable)?;
        files.insert(route, page_role(&source));
    }
    let db = ctx.resource::<DatabaseRead>();
    let table = lock(&db.routes).clone();
    let known: BTreeSet<&String> = table.keys().collect();
    let added: Vec<String> = files
        .keys()
        .filter(|r| !known.contains(r))
        .cloned()
        .collect();
    // Removed routes are reported, never deleted: deleting needs `database.delete`.
    let removed: Vec<String> = table
        .keys()
        .filter(|r| !files.contains_key(*r))
        .cloned()
        .collect();
    let updated: Vec<String> = files
        .iter()
        .filter(|(r, role)| table.get(*r).is_some_and(|row| &row.role != *role))
        .map(|(r, _)| r.clone())
        .collect();
    let missing_role: Vec<String> = files
        .iter()
        .filter(|(_, role)| role.is_none())
        .map(|(r, _)| r.clone())
        .collect();
    if !input.dry_run {
        let db = ctx.resource::<DatabaseUpsert>();
        let mut rows = lock(&db.routes);
        db.routes_before.save(ctx.job_id(), rows.clone());
        for route in added.iter().chain(&updated) {
            rows.insert(
                route.clone(),
                RouteRow {
                    role: files[route].clone(),
                },
            );
        }
    }
    Ok(RoutesSyncOutput {
        routes: files.len() as u32,
        added,
        removed,
        updated,
        missing_role,
    })
}

// ---------------------------------------------------------------- rollback actions

/// `rollback_to_previous_version` (rag_reindex): put back the index the job
/// replaced, and the cached version with it.
pub fn rollback_to_previous_version(r: RollbackRequest<'_>) -> Result<(), String> {
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

/// `revert_route_changes` (routes_sync): restore the routes table as it was
/// before the job wrote it.
pub fn revert_route_changes(r: RollbackRequest<'_>) -> Result<(), String> {
    let db = r
        .resources
        .get::<SeoDb>()
        .ok_or("no SEO database is registered")?;
    match db.routes_before.take(r.job_id) {
        Some(before) => {
            *lock(&db.routes) = before;
            Ok(())
        }
        // A dry run writes nothing, so there is nothing to revert.
        None => Ok(()),
    }
}
