//! `tally_route`: a pipeline that is not a straight line. It branches on a
//! step's boolean output (`when` / `unless`), retries a step that fails now
//! and then (`retries`), and names an error handler (`on_error`) that
//! leaves a note when that step fails for good (docs/pipelines.md).

use skill_runtime::prelude::*;

use crate::durable::TallyError;
use crate::outbox::OutboxWrite;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ThresholdInput {
    pub value: u32,
    pub at_least: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ThresholdOutput {
    /// `value` is at least `at_least`.
    pub reached: bool,
}

/// Say whether a value reaches a threshold.
#[skill(version = "1.0.0", domain = "core", owners("growth-team"))]
pub async fn threshold(input: ThresholdInput) -> ThresholdOutput {
    ThresholdOutput {
        reached: input.value >= input.at_least,
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WobblyInput {
    /// The channel: a lowercase word, which names the outbox file.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,31}$"))]
    pub channel: String,
    /// The mark this step leaves.
    pub mark: u32,
    /// How many of its tries fail before one succeeds (each try leaves a
    /// `try` line in the channel, so the tries are counted).
    #[serde(default)]
    pub fail_first: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WobblyOutput {
    pub mark: u32,
    /// This try's number, from 1.
    pub tries: u32,
}

/// Leave a mark, failing (retryably) the first tries: a step that needs
/// its `retries`.
#[skill(
    version = "1.0.0",
    domain = "core",
    owners("growth-team"),
    autonomy = "L3",
    capabilities(OutboxWrite),
    side_effects(OutboxWrite(
        target = "outbox",
        reversible = false,
        description = "Appends one line per try"
    )),
    retries = 0
)]
pub async fn wobbly_tally(ctx: Ctx, input: WobblyInput) -> Result<WobblyOutput, TallyError> {
    let outbox = ctx.resource::<OutboxWrite>();
    let unavailable = |e: std::io::Error| TallyError::OutboxUnavailable(e.to_string());
    let earlier = outbox
        .delivered(&input.channel)
        .map_err(unavailable)?
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["try"] == input.mark)
        .count();
    let tries = u32::try_from(earlier).unwrap_or(u32::MAX).saturating_add(1);
    let line = serde_json::json!({"try": input.mark, "job_id": ctx.job_id()});
    outbox
        .append(&input.channel, line, None)
        .map_err(unavailable)?;
    if tries <= input.fail_first {
        return Err(TallyError::OutboxUnavailable(format!(
            "try {tries} of mark {} fails, as asked",
            input.mark
        )));
    }
    Ok(WobblyOutput {
        mark: input.mark,
        tries,
    })
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FailureNoteInput {
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,31}$"))]
    pub channel: String,
    /// The step that failed.
    pub step: String,
    /// Its error's code and message.
    pub code: String,
    pub message: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FailureNoteOutput {
    pub noted: bool,
}

/// Note in a channel's outbox that a step failed: an error handler's skill.
#[skill(
    version = "1.0.0",
    domain = "core",
    owners("growth-team"),
    autonomy = "L3",
    capabilities(OutboxWrite),
    side_effects(OutboxWrite(
        target = "outbox",
        reversible = false,
        description = "Appends one line per failure noted"
    ))
)]
pub async fn note_failure(
    ctx: Ctx,
    input: FailureNoteInput,
) -> Result<FailureNoteOutput, TallyError> {
    let line = serde_json::json!({
        "failed": input.step,
        "code": input.code,
        "message": input.message,
    });
    let noted = ctx
        .resource::<OutboxWrite>()
        .append(&input.channel, line, ctx.fence())
        .map_err(|e| TallyError::OutboxUnavailable(e.to_string()))?;
    Ok(FailureNoteOutput { noted })
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TallyRouteInput {
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,31}$"))]
    pub channel: String,
    pub first: u32,
    /// The branch `high` runs when the first step's next mark reaches this;
    /// `low` runs otherwise.
    pub at_least: u32,
    /// How many tries of the last step fail (it may retry twice).
    #[serde(default)]
    pub fail_first: u32,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TallyRouteOutput {
    /// The branch's mark: `high`'s or `low`'s, whichever ran.
    pub branch_mark: u32,
    /// The tries the last step took.
    pub tries: u32,
}

/// Mark, check a threshold, mark on one branch or the other, then a last
/// mark that may take three tries; a failure of that last step leaves a
/// note.
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
        id = "check",
        skill = "threshold",
        inputs(value = "$step.start.next", at_least = "$inputs.at_least")
    ),
    step(
        id = "high",
        skill = "tally",
        after("start", "check"),
        when = "$step.check.reached",
        inputs(channel = "$step.start.channel", mark = "$step.start.next"),
        outputs(mark = "$outputs.branch_mark")
    ),
    step(
        id = "low",
        skill = "tally",
        after("start", "check"),
        unless = "$step.check.reached",
        inputs(channel = "$step.start.channel", mark = "$inputs.first"),
        outputs(mark = "$outputs.branch_mark")
    ),
    step(
        id = "last",
        skill = "wobbly_tally",
        after("start", "high", "low"),
        retries = 2,
        inputs(
            channel = "$step.start.channel",
            mark = "$step.start.next",
            fail_first = "$inputs.fail_first"
        ),
        outputs(tries = "$outputs.tries")
    ),
    step(
        id = "note",
        skill = "note_failure",
        on_error("last"),
        inputs(
            channel = "$inputs.channel",
            step = "$error.step",
            code = "$error.code",
            message = "$error.message"
        )
    )
)]
pub async fn tally_route(input: TallyRouteInput) -> TallyRouteOutput;
