//! `durable_tally`: five steps in a row, each leaving a mark in an outbox
//! channel every time it runs, the fourth slower than the others. It shows
//! what a pipeline run keeps between its steps: kill the worker during the
//! fourth step, and another worker finishes the run from the fourth step;
//! the channel then holds each mark once (docs/durable-runs.md).

use std::time::Duration;

use skill_runtime::OverBudget;
use skill_runtime::prelude::*;

use crate::outbox::OutboxWrite;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TallyInput {
    /// The channel: a lowercase word, which names the outbox file.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,31}$"))]
    pub channel: String,
    /// The mark this run leaves.
    pub mark: u32,
    /// How long the step works before it leaves its mark, in milliseconds
    /// (at most a minute).
    #[serde(default)]
    #[schemars(range(max = 60_000))]
    pub work_ms: u32,
    /// The tokens the step spends, reported against the job's budget.
    #[serde(default)]
    pub tokens: u64,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum TallyError {
    /// The outbox could not be written; trying again may work.
    #[error("the outbox cannot be written: {0}")]
    #[failure(retryable)]
    OutboxUnavailable(String),
    /// The step's tokens cross what is left of the job's budget.
    #[error("{0}")]
    #[failure(code = "budget_exceeded")]
    OverBudget(#[from] OverBudget),
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TallyOutput {
    pub channel: String,
    /// The mark left.
    pub mark: u32,
    /// The mark the next step leaves.
    pub next: u32,
}

/// Leave a mark in a channel's outbox, once per run of the step: its runs
/// are counted, not deduplicated.
#[skill(
    version = "1.0.0",
    domain = "core",
    owners("growth-team"),
    autonomy = "L3",
    capabilities(OutboxWrite),
    side_effects(OutboxWrite(
        target = "outbox",
        reversible = false,
        description = "Appends one line per run of the step"
    )),
    timeout_ms = 90_000,
    retries = 0,
    reusable_by(executor = "execute")
)]
pub async fn tally(ctx: Ctx, input: TallyInput) -> Result<TallyOutput, TallyError> {
    tokio::time::sleep(Duration::from_millis(u64::from(input.work_ms))).await;
    ctx.report_tokens(input.tokens)?;
    let line = serde_json::json!({"mark": input.mark, "job_id": ctx.job_id()});
    ctx.resource::<OutboxWrite>()
        .append(&input.channel, line, None)
        .map_err(|e| TallyError::OutboxUnavailable(e.to_string()))?;
    Ok(TallyOutput {
        channel: input.channel,
        mark: input.mark,
        next: input.mark + 1,
    })
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DurableTallyInput {
    /// The outbox channel the marks go to.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,31}$"))]
    pub channel: String,
    /// The first step's mark; each next step's is one more.
    pub first: u32,
    /// How long the fourth step works, in milliseconds (at most a minute).
    #[serde(default)]
    #[schemars(range(max = 60_000))]
    pub slow_ms: u32,
    /// The tokens each step spends: the run's budget is the job's.
    #[serde(default)]
    pub tokens: u64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DurableTallyOutput {
    /// The last step's mark.
    pub last: u32,
}

/// Five marks in a row, the fourth step slow: a run to kill a worker in.
#[pipeline(
    version = "1.0.0",
    autonomy = "L3",
    owners("growth-team"),
    step(
        id = "n1",
        skill = "tally",
        inputs(
            channel = "$inputs.channel",
            mark = "$inputs.first",
            tokens = "$inputs.tokens"
        )
    ),
    step(
        id = "n2",
        skill = "tally",
        inputs(
            channel = "$step.n1.channel",
            mark = "$step.n1.next",
            tokens = "$inputs.tokens"
        )
    ),
    step(
        id = "n3",
        skill = "tally",
        inputs(
            channel = "$step.n2.channel",
            mark = "$step.n2.next",
            tokens = "$inputs.tokens"
        )
    ),
    step(
        id = "n4",
        skill = "tally",
        inputs(
            channel = "$step.n3.channel",
            mark = "$step.n3.next",
            work_ms = "$inputs.slow_ms",
            tokens = "$inputs.tokens"
        )
    ),
    step(
        id = "n5",
        skill = "tally",
        inputs(
            channel = "$step.n4.channel",
            mark = "$step.n4.next",
            tokens = "$inputs.tokens"
        ),
        outputs(mark = "$outputs.last")
    )
)]
pub async fn durable_tally(input: DurableTallyInput) -> DurableTallyOutput;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TallyFanoutInput {
    /// The outbox channel the marks go to.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,31}$"))]
    pub channel: String,
    /// The first step's mark.
    pub first: u32,
    /// How long each of the two middle steps works, in milliseconds (at
    /// most a minute).
    #[serde(default)]
    #[schemars(range(max = 60_000))]
    pub work_ms: u32,
}

/// One mark, then two at the same time, then one after both: steps that
/// wait for what they read (`after`), and no more.
#[pipeline(
    version = "1.0.0",
    autonomy = "L3",
    owners("growth-team"),
    step(
        id = "start",
        skill = "tally",
        inputs(channel = "$inputs.channel", mark = "$inputs.first")
    ),
    step(
        id = "left",
        skill = "tally",
        after("start"),
        inputs(
            channel = "$step.start.channel",
            mark = "$step.start.next",
            work_ms = "$inputs.work_ms"
        )
    ),
    step(
        id = "right",
        skill = "tally",
        after("start"),
        inputs(
            channel = "$step.start.channel",
            mark = "$step.start.next",
            work_ms = "$inputs.work_ms"
        )
    ),
    step(
        id = "join",
        skill = "tally",
        after("left", "right"),
        inputs(channel = "$step.left.channel", mark = "$step.right.next"),
        outputs(mark = "$outputs.last")
    )
)]
pub async fn tally_fanout(input: TallyFanoutInput) -> DurableTallyOutput;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TallyAgentInput {
    /// The outbox channel the marks go to.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,31}$"))]
    pub channel: String,
    /// How many marks, from 1 (at most 20).
    #[schemars(range(min = 1, max = 20))]
    pub count: u32,
    /// Which mark's call is slow (from 1), and how slow, in milliseconds.
    #[serde(default)]
    pub slow: u32,
    #[serde(default)]
    #[schemars(range(max = 60_000))]
    pub slow_ms: u32,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TallyAgentOutput {
    /// The last mark left.
    pub last: u32,
}

/// Leave `count` marks, one `tally` call each: an agent run to kill a
/// worker in, which another worker resumes after the calls it completed.
#[agent(
    id = "agent.team.tally",
    name = "Team Tally Agent",
    role = "executor",
    domain = "core",
    version = "1.0.0",
    owner = "growth-team",
    skills(tally)
)]
pub async fn tally_agent(
    ctx: AgentCtx,
    input: TallyAgentInput,
) -> Result<TallyAgentOutput, TallyError> {
    let mut last = 0;
    for mark in 1..=input.count {
        let out = ctx
            .run::<tally>(TallyInput {
                channel: input.channel.clone(),
                mark,
                work_ms: if mark == input.slow { input.slow_ms } else { 0 },
                tokens: 0,
            })
            .await
            .map_err(|e| TallyError::OutboxUnavailable(e.to_string()))?;
        last = out.mark;
    }
    Ok(TallyAgentOutput { last })
}
