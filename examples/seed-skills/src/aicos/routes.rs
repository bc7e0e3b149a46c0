//! `routes_sync`: the Remix routes folder synchronized into the SEO page
//! table, and the rollback that restores the table.

use std::collections::{BTreeMap, BTreeSet};

use skill_runtime::manifest::PermissionLevel;
use skill_runtime::prelude::*;
use skill_runtime::{policy::RollbackError, policy::RollbackRequest};

use crate::caps::*;
use crate::defaults::yes;
use crate::stores::{RouteRow, SeoDb, lock};

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

/// Each route module's URL path and declared `pageRole`, under `dir`.
fn read_routes(
    dir: &std::path::Path,
    include_admin: bool,
) -> Result<BTreeMap<String, Option<String>>, RoutesSyncError> {
    use crate::stores::{ROUTE_KINDS, read_inside};
    let unavailable =
        |e: std::io::Error| RoutesSyncError::RoutesUnavailable(format!("{}: {e}", dir.display()));
    let mut files = BTreeMap::new();
    for name in crate::confined::list(dir, ROUTE_KINDS, false).map_err(unavailable)? {
        let Some(route) = route_path(&name) else {
            continue;
        };
        if !include_admin && (route == "/admin" || route.starts_with("/admin/")) {
            continue;
        }
        let source = read_inside(dir, &name, ROUTE_KINDS).map_err(unavailable)?;
        files.insert(route, page_role(&source));
    }
    Ok(files)
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
pub async fn routes_sync(
    ctx: Ctx,
    input: RoutesSyncInput,
) -> Result<RoutesSyncOutput, RoutesSyncError> {
    let dir = ctx.resource::<FilesystemRead>().root.clone();
    let include_admin = input.include_admin;
    // Off the async threads: a listing and reads of route modules only,
    // none through a link, none of a FIFO or a device (see `confined`).
    let read = tokio::task::spawn_blocking(move || read_routes(&dir, include_admin))
        .await
        .unwrap_or_else(|e| Err(RoutesSyncError::RoutesUnavailable(e.to_string())));
    let files = read?;
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
    ctx.report_items(files.len() as u64);
    // The input's own flag (the seed's), or the job's dry run.
    if !input.dry_run && !ctx.dry_run() {
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

/// `revert_route_changes` (routes_sync): restore the routes table as it was
/// before the job wrote it.
pub fn revert_route_changes(r: RollbackRequest<'_>) -> Result<(), RollbackError> {
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
