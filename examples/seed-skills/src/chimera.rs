//! The Chimera workflow examples: `echo` (a checkpoint) and `normalize_handle`;
//! `count_slowly`, long-running work in miniature (progress, cancellation).

use skill_runtime::prelude::*;

use crate::caps::{McpCall, ScriptRun};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EchoInput {
    pub message: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct EchoOutput {
    pub message: String,
}

/// Return the message unchanged; a checkpoint in workflows.
#[skill(
    version = "1.0.0",
    autonomy = "L3",
    owners("chimera"),
    idempotent,
    retries = 0,
    mcp
)]
pub async fn echo(input: EchoInput) -> EchoOutput {
    EchoOutput {
        message: input.message,
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CountSlowlyInput {
    /// Count from 1 to this.
    #[schemars(range(min = 1, max = 500))]
    pub to: u32,
    /// Milliseconds between two numbers.
    #[schemars(range(max = 1000))]
    pub step_ms: u32,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CountSlowlyOutput {
    /// The last number counted.
    pub counted: u32,
}

/// Count to `to`, one number every `step_ms`: long-running work in
/// miniature. Reports progress at each number and stops when cancelled.
#[skill(
    version = "1.0.0",
    autonomy = "L3",
    owners("chimera"),
    idempotent,
    retries = 0,
    timeout_ms = 600_000,
    mcp
)]
pub async fn count_slowly(ctx: Ctx, input: CountSlowlyInput) -> CountSlowlyOutput {
    let step = std::time::Duration::from_millis(u64::from(input.step_ms));
    let mut counted = 0;
    for n in 1..=input.to {
        // The runtime drops the handler at this await once the job is
        // cancelled; a loop without awaits would check `ctx.is_cancelled()`.
        tokio::time::sleep(step).await;
        counted = n;
        ctx.report_items(1);
        ctx.report_progress(
            u64::from(n),
            Some(u64::from(input.to)),
            Some(&format!("counted {n} of {}", input.to)),
        );
    }
    ctx.log(LogLevel::Info, format!("counted to {counted}"));
    CountSlowlyOutput { counted }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Twitter,
    Instagram,
    Tiktok,
    Youtube,
    Github,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NormalizeHandleInput {
    /// A handle as typed or pasted: `@Name`, ` name `, or a profile URL.
    #[schemars(length(min = 1, max = 256))]
    pub handle: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct NormalizeHandleOutput {
    /// Canonical form: `@` and the lowercase name.
    pub handle: String,
    /// The platform, when the input was a profile URL.
    pub platform: Option<Platform>,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum HandleError {
    /// Nothing that looks like a handle is left after normalization.
    #[error("`{0}` is not a social handle: {1}")]
    InvalidHandle(String, &'static str),
}

const HOSTS: &[(&str, Platform)] = &[
    ("twitter.com/", Platform::Twitter),
    ("x.com/", Platform::Twitter),
    ("instagram.com/", Platform::Instagram),
    ("tiktok.com/", Platform::Tiktok),
    ("youtube.com/", Platform::Youtube),
    ("github.com/", Platform::Github),
];

/// Canonicalize a social handle: trim, strip profile URLs and `@`, lowercase.
#[skill(
    version = "1.0.0",
    autonomy = "L3",
    owners("chimera"),
    idempotent,
    retries = 0,
    postcondition(check = |o: &NormalizeHandleOutput| o.handle.starts_with('@') && o.handle.len() > 1),
    mcp,
)]
pub async fn normalize_handle(
    input: NormalizeHandleInput,
) -> Result<NormalizeHandleOutput, HandleError> {
    let raw = input.handle.trim();
    let mut rest = raw;
    for prefix in ["https://", "http://", "www."] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let mut platform = None;
    for (host, p) in HOSTS {
        if let Some(r) = rest.strip_prefix(host) {
            platform = Some(*p);
            rest = r;
        }
    }
    let name = rest.split(['/', '?', '#']).next().unwrap_or("");
    let name = name.trim_start_matches('@').to_lowercase();
    if name.is_empty() {
        return Err(HandleError::InvalidHandle(raw.to_owned(), "it is empty"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    {
        return Err(HandleError::InvalidHandle(
            raw.to_owned(),
            "only letters, digits, `_`, `.` and `-` are allowed",
        ));
    }
    Ok(NormalizeHandleOutput {
        handle: format!("@{name}"),
        platform,
    })
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct HandleWorkflowInput {
    /// A handle as typed or pasted.
    pub handle: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct HandleWorkflowOutput {
    /// The input as the checkpoint saw it.
    pub checkpoint: String,
    /// Canonical form: `@` and the lowercase name.
    pub handle: String,
    /// The platform, when the input was a profile URL.
    pub platform: Option<Platform>,
}

/// Chimera's handle normalization workflow: an `echo` checkpoint, then
/// `normalize_handle`.
#[pipeline(
    version = "1.0.0",
    autonomy = "L3",
    owners("chimera"),
    mcp,
    step(
        id = "checkpoint",
        skill = "echo",
        inputs(message = "$inputs.handle"),
        outputs(message = "$outputs.checkpoint")
    ),
    step(
        id = "normalize",
        skill = "normalize_handle",
        inputs(handle = "$step.checkpoint.message"),
        outputs(handle = "$outputs.handle", platform = "$outputs.platform")
    )
)]
pub async fn handle_normalization(input: HandleWorkflowInput) -> HandleWorkflowOutput;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ToolTextInput {
    pub text: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ToolSummary {
    pub summary: String,
}

/// Summarize a text with the `summarize_text` tool of the configured MCP server.
#[op(
    version = "1.0.0",
    autonomy = "L2",
    owners("chimera"),
    runtime = "mcp",
    tool = "summarize_text",
    capabilities(McpCall),
    timeout_ms = 30_000,
    retries = 0
)]
pub async fn mcp_summarize(input: ToolTextInput) -> ToolSummary;

/// Chimera's MCP tool workflow: one `mcp_tool` step, an MCP tool call.
#[pipeline(
    version = "1.0.0",
    autonomy = "L2",
    owners("chimera"),
    step(
        id = "mcp_tool",
        op = "mcp_summarize",
        inputs(text = "$inputs.text"),
        outputs(summary = "$outputs.summary")
    )
)]
pub async fn mcp_tool_workflow(input: ToolTextInput) -> ToolSummary;

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WordCount {
    pub words: u64,
    pub lines: u64,
}

/// Count the words and lines of a text with a script (Python, JSON over stdio).
#[op(
    version = "1.0.0",
    autonomy = "L3",
    owners("chimera"),
    runtime = "script",
    command = "python3 word_count.py",
    capabilities(ScriptRun),
    side_effects(ScriptRun(
        target = "word_count.py",
        reversible = true,
        description = "Runs the script, which reads its stdin and writes its stdout"
    )),
    timeout_ms = 10_000,
    retries = 0,
    idempotent
)]
pub async fn word_count(input: ToolTextInput) -> WordCount;
