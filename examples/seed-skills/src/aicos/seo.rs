//! `seo_role_audit` and `vlevel_calculator`: the SEO page table, audited and scored.

use std::collections::BTreeMap;

use skill_runtime::prelude::*;

use crate::caps::*;
use crate::defaults::yes;
use crate::stores::{AuditLogEntry, SeoDb, lock};
use skill_runtime::policy::{RollbackError, RollbackRequest};

// ---------------------------------------------------------------- seo_role_audit

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AuditInput {
    /// Pages to audit.
    #[schemars(length(max = 1000), inner(url))]
    pub urls: Vec<String>,
    /// Also inspect page content for expert material.
    #[serde(default = "yes")]
    pub check_content: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AuditOutput {
    pub audited: u32,
    pub violations: Vec<RoleViolation>,
    pub summary: AuditSummary,
    /// Whether the audit was written to the audit log (not on a dry run).
    pub logged: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RoleViolation {
    pub url: String,
    pub current_role: String,
    pub suggested_role: String,
    pub violations: Vec<String>,
    pub severity: ViolationSeverity,
    pub has_expert_content: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ViolationSeverity {
    Info,
    Warning,
    Error,
    Critical,
}

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
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
    intents("seo_audit"),
    capabilities(DatabaseRead, SeoAudit, DatabaseWrite),
    side_effects(DatabaseWrite(target = "__seo_audit_log", reversible = true, description = "Log audit results")),
    precondition(code = "EMPTY_INPUT", message = "At least one URL is required", check = |i: &AuditInput| !i.urls.is_empty()),
    precondition(code = "TOO_MANY_URLS", message = "Maximum 1000 URLs per audit", check = |i: &AuditInput| i.urls.len() <= 1000),
    postcondition(check = |i: &AuditInput, o: &AuditOutput| o.audited as usize == i.urls.len(),
                  rollback = "remove_audit_entry"),
    validation_rule(
        id = "no_r1_expert_content",
        severity = "error",
        message = "Router pages must not contain expert content",
        check = |o: &AuditOutput| !o.violations.iter().any(|v| v.current_role == "R1" && v.has_expert_content)
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
    ctx.report_items(input.urls.len() as u64);
    let logged = !ctx.dry_run();
    if logged {
        let mut log = lock(&ctx.resource::<DatabaseWrite>().audit_log);
        log.push(AuditLogEntry {
            job_id: ctx.job_id().to_owned(),
            trace_id: ctx.trace_id().to_owned(),
            audited: input.urls.len(),
            violations: violations.len(),
        });
        // The entry this job wrote, as an artifact the caller can find.
        ctx.add_artifact(Artifact {
            name: "seo audit log entry".into(),
            kind: "application/json".into(),
            uri: Some(format!("db://__seo_audit_log/{}", log.len() - 1)),
        });
    }
    let audited =
        u32::try_from(input.urls.len()).map_err(|e| AuditError::PagesUnavailable(e.to_string()))?;
    Ok(AuditOutput {
        audited,
        violations,
        summary,
        logged,
    })
}

/// `remove_audit_entry` (seo_role_audit): take the audit log's entry the
/// job wrote back out, when its output was rejected.
pub fn remove_audit_entry(r: RollbackRequest<'_>) -> Result<(), RollbackError> {
    let db = r
        .resources
        .get::<SeoDb>()
        .ok_or("no SEO database is registered")?;
    lock(&db.audit_log).retain(|e| e.job_id != r.job_id);
    Ok(())
}

// ---------------------------------------------------------------- vlevel_calculator

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct VLevelInput {
    pub page_data: PageData,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum VLevel {
    V1,
    V2,
    V3,
    V4,
    V5,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct VLevelOutput {
    pub vlevel: VLevel,
    #[schemars(range(min = 0, max = 100))]
    pub score: u8,
    pub breakdown: Breakdown,
    pub recommendations: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
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
    postcondition(check = |o: &VLevelOutput| matches!(o.vlevel, VLevel::V1 | VLevel::V2 | VLevel::V3 | VLevel::V4 | VLevel::V5)),
    validation_rule(id = "score_consistency", severity = "warning", message = "V5 pages should have score >= 80",
                    check = |o: &VLevelOutput| (o.vlevel == VLevel::V5 && o.score >= 80) || o.vlevel != VLevel::V5),
    reusable_by(executor = "execute", analyzer = "read"),
    timeout_ms = 5_000, retries = 1, backoff = "none", idempotent,
    mcp(tool_name = "ai_cos_vlevel_calc", permissions("seo:read")),
)]
pub async fn vlevel_calculator(ctx: Ctx, input: VLevelInput) -> VLevelOutput {
    ctx.report_items(1);
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
