//! `agent.team.digest`: an agent of this crate whose skill comes from
//! another crate (`seed_skills::summarize_text`).

use seed_skills::{SummarizeInput, summarize_text};
use skill_runtime::prelude::*;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DigestInput {
    /// The texts to digest, one summary each.
    #[schemars(length(min = 1, max = 100))]
    pub texts: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DigestOutput {
    /// One summary per text, in order.
    pub summaries: Vec<String>,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum DigestError {
    /// The summarizer could not run.
    #[error("summarizer failed: {0}")]
    SummarizerFailed(String),
}

/// Digest a batch of texts into one short summary each.
#[agent(
    id = "agent.team.digest",
    name = "Team Digest Agent",
    role = "analyzer",
    domain = "core",
    version = "1.0.0",
    owner = "team",
    skills(summarize_text),
    pre_condition(code = "EMPTY_INPUT", check = |i: &DigestInput| !i.texts.is_empty()),
    post_condition(code = "SUMMARY_MISMATCH", check = |i: &DigestInput, o: &DigestOutput| o.summaries.len() == i.texts.len()),
    kpi(metric_id = "task_success_rate", target = 0.99, warning = 0.95, critical = 0.9, unit = "percentage", direction = "higher"),
    kpi(metric_id = "avg_processing_time", target = 50, warning = 200, critical = 1000, unit = "milliseconds", direction = "lower"),
)]
pub async fn digest_agent(ctx: AgentCtx, input: DigestInput) -> Result<DigestOutput, DigestError> {
    let mut summaries = Vec::with_capacity(input.texts.len());
    for text in input.texts {
        let out = ctx
            .run::<summarize_text>(SummarizeInput {
                text,
                max_sentences: 1,
            })
            .await
            .map_err(|e| DigestError::SummarizerFailed(e.to_string()))?;
        summaries.push(out.summary);
    }
    Ok(DigestOutput { summaries })
}
