//! The fixture tools of the MCP conformance suite
//! (`@modelcontextprotocol/conformance`) that a skill can be: each scenario
//! names a tool and what it must answer. A skill's answer is its output as
//! JSON (one text block, and `structuredContent`), so the fixtures that
//! need image, audio or embedded-resource content, or that ask the client
//! to sample or elicit, are not here; `tests/mcp/conformance-baseline.yml`
//! lists their scenarios and docs/mcp.md says why.

use std::time::Duration;

use skill_runtime::prelude::*;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoInput {}

/// A line of text.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Text {
    pub text: String,
}

/// Answers a fixed line of text (scenario `tools-call-simple-text`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_simple_text(_input: NoInput) -> Text {
    Text {
        text: "This is a simple text response for testing.".to_owned(),
    }
}

/// Why `test_error_handling` fails: always, on purpose.
#[derive(Debug, thiserror::Error, FailureModes)]
pub enum Fails {
    /// The tool's only answer.
    #[error("This tool intentionally returns an error for testing")]
    #[failure(code = "intentional_error", retryable = false)]
    Intentional,
}

/// Always fails (scenario `tools-call-error`): a tool error, `isError: true`.
#[skill(version = "1.0.0", retries = 0, mcp)]
pub async fn test_error_handling(_input: NoInput) -> Result<Text, Fails> {
    Err(Fails::Intentional)
}

/// Logs three lines while it runs (scenario `tools-call-with-logging`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_tool_with_logging(ctx: Ctx, _input: NoInput) -> Text {
    for (n, level) in [LogLevel::Info, LogLevel::Notice, LogLevel::Warning]
        .into_iter()
        .enumerate()
    {
        ctx.log(level, format!("log line {} of 3", n + 1));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Text {
        text: "Logged three lines.".to_owned(),
    }
}

/// Reports 0, 50 and 100 of 100, a little apart (scenario
/// `tools-call-with-progress`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_tool_with_progress(ctx: Ctx, _input: NoInput) -> Text {
    for done in [0, 50, 100] {
        ctx.report_progress(done, Some(100), None);
        if done < 100 {
            // Past PROGRESS_EVERY, so that no report is coalesced away.
            tokio::time::sleep(Duration::from_millis(60)).await;
        }
    }
    Text {
        text: "Reported progress to 100 of 100.".to_owned(),
    }
}
