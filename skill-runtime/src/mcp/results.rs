//! A job's answer as an MCP tool result: its output (structured, and as
//! text), a refusal or failure as a tool error with its code and next
//! action, a queued job's outcome likewise.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{Value, json};

use crate::model::error::InvokeError;
use crate::model::result::SkillResult;
use crate::queue::api::Outcome;
use crate::registry::views;

/// A job's result as the tool's: its output as JSON (text and structured),
/// or, for a skill whose output is [`Content`](crate::model::content::Content)
/// (`blocks`), those blocks.
pub(crate) fn tool_result(result: &SkillResult, result_ids: bool, blocks: bool) -> CallToolResult {
    let mut r = if blocks {
        let content = result.data.get("content").cloned().unwrap_or_default();
        match serde_json::from_value::<Vec<ContentBlock>>(content) {
            Ok(blocks) => CallToolResult::success(blocks),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "the skill's content blocks are not MCP's: {e}"
            ))]),
        }
    } else {
        let text = result.data.text().to_owned();
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        // The record may share the output; the result needs its own (parsed
        // from the text, when that is how it is held).
        r.structured_content = Some(result.data.to_value());
        r
    };
    // Our extras, only when there are any: the ids when asked for,
    // a replay, rule notes.
    let mut ours = JsonObject::new();
    if result_ids {
        ours.insert(
            "job_id".into(),
            Value::String(result.job_id.as_str().to_owned()),
        );
        ours.insert(
            "trace_id".into(),
            Value::String(result.trace_id.as_str().to_owned()),
        );
    }
    if result.replayed {
        ours.insert("replayed".into(), Value::Bool(true));
    }
    if !result.notes.is_empty() {
        ours.insert(
            "notes".into(),
            serde_json::to_value(&result.notes).unwrap_or_default(),
        );
    }
    if !ours.is_empty() {
        let mut meta = JsonObject::new();
        meta.insert(views::META_KEY.into(), Value::Object(ours));
        r.meta = Some(meta.into());
    }
    r
}

/// A queued job's outcome as the tool's result.
pub(crate) fn outcome_result(outcome: &Outcome, result_ids: bool, blocks: bool) -> CallToolResult {
    match (&outcome.result, &outcome.error) {
        (Some(result), _) => tool_result(result, result_ids, blocks),
        (None, Some(e)) => {
            let text = format!("{}\n(code: {})", e.message, e.code);
            let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
            let meta = json!({
                "code": e.code,
                "input_error": e.input_error,
                "next_action": e.next_action,
            });
            r.meta = serde_json::from_value(json!({ views::META_KEY: meta })).ok();
            r
        }
        (None, None) => CallToolResult::error(vec![ContentBlock::text(format!(
            "the job ended {} without a result",
            outcome.status
        ))]),
    }
}

/// A refusal or failure as a tool error: the message (schema violations one per
/// line, each with its instance path), the stable code, and what to do next.
pub(crate) fn error_result(e: &InvokeError) -> CallToolResult {
    let text = format!("{e}\n(code: {})", e.code());
    let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
    let mut meta = json!({
        "code": e.code(),
        "input_error": e.is_input_error(),
        "next_action": e.next_action(),
    });
    // What a run produced before its checks rejected it: the client sees it.
    if let Some(output) = e.rejected_output() {
        meta["rejected_output"] = output.clone();
    }
    r.meta = serde_json::from_value(json!({ views::META_KEY: meta })).ok();
    r
}
