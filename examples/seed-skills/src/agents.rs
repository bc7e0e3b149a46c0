//! The agent model's example (seed 002): `agent.seo.vlevel`, the V-Level
//! Generator Agent, with the three skills its contract lists, and
//! `agent.seo.architect`, the agent it escalates to.

use skill_runtime::prelude::*;

use crate::aicos::{
    AuditInput, CanonicalInput, CanonicalProblem, PageData, VLevel, VLevelInput, canonical_check,
    seo_role_audit, vlevel_calculator,
};

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct VLevelAgentInput {
    /// URLs to analyze for V-level scoring.
    #[schemars(length(max = 1000), inner(url))]
    pub urls: Vec<String>,
    /// Optional configuration.
    #[serde(default)]
    pub options: VLevelOptions,
}

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct VLevelOptions {
    /// Also inspect page content for expert material in the role audit.
    #[serde(default)]
    pub check_content: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct VLevelAgentOutput {
    /// V-level scores V1-V5 for each URL, in input order.
    pub scores: Vec<VLevelScore>,
    /// Improvement recommendations.
    pub recommendations: Vec<String>,
    /// The share of URLs the page table knows with a sound canonical link,
    /// 0 to 1: how far the scores can be trusted.
    pub confidence: f64,
    /// A page breaks the router/expert-content rule: a human decides.
    pub human_required: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct VLevelScore {
    pub url: String,
    pub vlevel: VLevel,
    pub score: u8,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum VLevelAgentError {
    /// A skill the agent needs could not run.
    #[error("skill failed: {0}")]
    #[failure(retryable)]
    SkillFailed(String),
}

/// The page data a URL spells, by the shop's convention
/// `/{gamme}/{marque}/{modele}/{type}/{ktypnr}`; missing segments stay empty.
pub fn page_data_of(url: &str) -> PageData {
    let path = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split_once('/')
        .map_or("", |(_, p)| p);
    let mut seg = path.split('/').filter(|s| !s.is_empty()).map(str::to_owned);
    let mut next = || seg.next().unwrap_or_default();
    PageData {
        url: url.to_owned(),
        gamme: next(),
        marque: next(),
        modele: next(),
        r#type: next(),
        ktypnr: next(),
    }
}

/// Score pages V1-V5 by vehicle specificity, after auditing their role and
/// canonical links; escalates to the SEO architect when the scores are
/// uncertain or a page needs a human.
#[agent(
    id = "agent.seo.vlevel",
    name = "V-Level Generator Agent",
    role = "executor",
    domain = "seo",
    version = "1.0.0",
    owner = "seo-team",
    tools(
        tool(id = "mcp__supabase__execute_sql", permission = "read", rate_limit = 100),
        tool(id = "mcp__chrome-devtools__take_snapshot", permission = "execute", rate_limit = 30),
    ),
    skills(seo_role_audit, canonical_check, vlevel_calculator),
    memory(
        short_term(max_tokens = 50000),
        long_term(storage = "supabase"),
        shared(namespaces("seo:scores", "seo:audit")),
    ),
    pre_condition(code = "INVALID_URL_COUNT", check = |i: &VLevelAgentInput| !i.urls.is_empty() && i.urls.len() <= 1000),
    post_condition(code = "SCORE_MISMATCH", check = |i: &VLevelAgentInput, o: &VLevelAgentOutput| o.scores.len() == i.urls.len()),
    invariants("No URL modification without feature flag", "Router pages must not contain expert content"),
    escalation(
        triggers(
            confidence_below(field = "/confidence", value = 0.7),
            error_count_above = 3,
            human_required(field = "/human_required"),
        ),
        target_agent = "agent.seo.architect",
        human_required = false,
        timeout_hours = 24,
    ),
    kpi(metric_id = "task_success_rate", target = 0.95, warning = 0.85, critical = 0.70, unit = "percentage", direction = "higher"),
    kpi(metric_id = "avg_processing_time", target = 5000, warning = 10000, critical = 30000, unit = "milliseconds", direction = "lower"),
    kpi(metric_id = "avg_confidence", field = "/confidence", target = 0.9, warning = 0.7, critical = 0.5, unit = "ratio", direction = "higher"),
)]
pub async fn vlevel_agent(
    ctx: AgentCtx,
    input: VLevelAgentInput,
) -> Result<VLevelAgentOutput, VLevelAgentError> {
    // A skill call that fails is counted (the `error_count` trigger) and the
    // run goes on with what the others give: one unscorable page does not
    // hide the scores of the rest.
    let audit = ctx
        .run::<seo_role_audit>(AuditInput {
            urls: input.urls.clone(),
            check_content: input.options.check_content,
        })
        .await;
    let canonical = ctx
        .run::<canonical_check>(CanonicalInput {
            urls: input.urls.clone(),
        })
        .await;
    let mut scores = Vec::with_capacity(input.urls.len());
    let mut recommendations = Vec::new();
    for url in &input.urls {
        let out = match ctx
            .run::<vlevel_calculator>(VLevelInput {
                page_data: page_data_of(url),
            })
            .await
        {
            Ok(out) => out,
            Err(e) => {
                recommendations.push(format!("{url}: not scored ({})", e.code()));
                continue;
            }
        };
        recommendations.extend(
            out.recommendations
                .into_iter()
                .map(|r| format!("{url}: {r}")),
        );
        scores.push(VLevelScore {
            url: url.clone(),
            vlevel: out.vlevel,
            score: out.score,
        });
    }
    // Without the canonical check nothing says the scores can be trusted.
    let confidence = match &canonical {
        Ok(canonical) => {
            for issue in &canonical.issues {
                let what = match issue.issue {
                    CanonicalProblem::Missing => "add a canonical link".to_owned(),
                    CanonicalProblem::PointsElsewhere => format!(
                        "duplicate of {}: score that page instead",
                        issue.canonical.as_deref().unwrap_or("?")
                    ),
                    CanonicalProblem::NotFound => "not in the page table".to_owned(),
                };
                recommendations.push(format!("{}: {what}", issue.url));
            }
            let sound = input.urls.len() - canonical.issues.len().min(input.urls.len());
            sound as f64 / input.urls.len().max(1) as f64
        }
        Err(e) => {
            recommendations.push(format!("canonical links not checked ({})", e.code()));
            0.0
        }
    };
    // An audit that broke the router/expert-content rule, or could not
    // run, leaves the decision to a person.
    let human_required = match &audit {
        Ok(audit) => audit.violations.iter().any(|v| {
            v.violations
                .iter()
                .any(|f| f == "router_with_expert_content")
        }),
        Err(_) => true,
    };
    if scores.is_empty() && !input.urls.is_empty() {
        return Err(VLevelAgentError::SkillFailed(format!(
            "no URL could be scored; {} skill call(s) failed",
            ctx.error_count()
        )));
    }
    Ok(VLevelAgentOutput {
        scores,
        recommendations,
        confidence,
        human_required,
    })
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ArchitectInput {
    /// URLs an executor could not score with confidence.
    #[schemars(length(min = 1, max = 1000), inner(url))]
    pub urls: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ArchitectOutput {
    /// One decision per page whose canonical link needs one.
    pub decisions: Vec<String>,
}

/// Decide what to do with pages an executor could not score with confidence:
/// which duplicates to merge and which canonical links to add.
#[agent(
    id = "agent.seo.architect",
    name = "SEO Architect Agent",
    role = "architect",
    domain = "seo",
    version = "1.0.0",
    owner = "seo-team",
    skills(canonical_check),
    pre_condition(code = "EMPTY_INPUT", check = |i: &ArchitectInput| !i.urls.is_empty()),
    kpi(metric_id = "task_success_rate", target = 0.99, warning = 0.9, critical = 0.8, unit = "percentage", direction = "higher"),
)]
pub async fn seo_architect_agent(
    ctx: AgentCtx,
    input: ArchitectInput,
) -> Result<ArchitectOutput, VLevelAgentError> {
    let canonical = ctx
        .run::<canonical_check>(CanonicalInput { urls: input.urls })
        .await
        .map_err(|e| VLevelAgentError::SkillFailed(e.to_string()))?;
    let decisions = canonical
        .issues
        .iter()
        .map(|i| match (&i.issue, &i.canonical) {
            (CanonicalProblem::PointsElsewhere, Some(c)) => {
                format!("merge {} into {c} (301)", i.url)
            }
            (CanonicalProblem::Missing, _) => format!("add a self-canonical link to {}", i.url),
            _ => format!("create {} in the page table, or drop it", i.url),
        })
        .collect();
    Ok(ArchitectOutput { decisions })
}
