//! `canonical_check`: each page's canonical link, read from the page table.

use skill_runtime::prelude::*;

use crate::caps::*;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CanonicalInput {
    /// Pages to check.
    #[schemars(length(min = 1, max = 1000), inner(url))]
    pub urls: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CanonicalOutput {
    pub checked: u32,
    /// Pages whose canonical link is missing, points elsewhere, or that the
    /// page table does not have.
    pub issues: Vec<CanonicalIssue>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CanonicalIssue {
    pub url: String,
    pub issue: CanonicalProblem,
    /// The canonical target, when the page has one.
    pub canonical: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CanonicalProblem {
    /// The page has no canonical link.
    Missing,
    /// The canonical link names another URL: this page is a duplicate.
    PointsElsewhere,
    /// The page table does not have the page.
    NotFound,
}

/// Check each page's canonical link: present, and pointing at the page itself.
#[skill(
    title = "Canonical Check",
    version = "1.0.0",
    domain = "seo",
    owners("seo-team"),
    autonomy = "L3",
    capabilities(DatabaseRead, SeoRead),
    precondition(code = "EMPTY_INPUT", message = "At least one URL is required", check = |i: &CanonicalInput| !i.urls.is_empty()),
    postcondition(check = |i: &CanonicalInput, o: &CanonicalOutput| o.checked as usize == i.urls.len()),
    reusable_by(executor = "execute", architect = "execute", validator = "read"),
    timeout_ms = 10_000, retries = 1, backoff = "none", idempotent,
    mcp(tool_name = "ai_cos_canonical_check", permissions("database:read", "seo:read")),
)]
pub async fn canonical_check(ctx: Ctx, input: CanonicalInput) -> CanonicalOutput {
    ctx.report_items(input.urls.len() as u64);
    let db = ctx.resource::<DatabaseRead>();
    let issues = input
        .urls
        .iter()
        .filter_map(|url| {
            let (issue, canonical) = match db.pages.get(url) {
                None => (CanonicalProblem::NotFound, None),
                Some(page) => match &page.canonical {
                    None => (CanonicalProblem::Missing, None),
                    Some(c) if c == url => return None,
                    Some(c) => (CanonicalProblem::PointsElsewhere, Some(c.clone())),
                },
            };
            Some(CanonicalIssue {
                url: url.clone(),
                issue,
                canonical,
            })
        })
        .collect();
    CanonicalOutput {
        checked: u32::try_from(input.urls.len()).unwrap_or(u32::MAX),
        issues,
    }
}
