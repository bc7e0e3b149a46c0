//! Agents as MCP tools: one tool per agent of an [`AgentRunner`], named by
//! its id. A call runs the agent (its skills as the agent, its checks, its
//! escalation); a failed run is a tool error whose `_meta` carries the
//! contract's `error_code`, and an escalation rides in the result's `_meta`.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};

use crate::agent::outcome::AgentResult;
use crate::agent::registry::RegisteredAgent;
use crate::mcp::error::ToolError;
use crate::registry::views;

/// The tool of agent `a`.
pub(super) fn agent_tool(a: &RegisteredAgent) -> Result<Tool, ToolError> {
    let c = a.contract();
    let skills: Vec<&str> = c.skills.iter().map(|s| s.manifest.name).collect();
    let definition = json!({
        "name": c.id,
        "title": c.name,
        "description": c.description,
        "inputSchema": views::portable(&a.input_schema),
        "outputSchema": views::portable(&a.output_schema),
        // An agent runs skills that may write; nothing here says otherwise.
        "annotations": {"title": c.name, "readOnlyHint": false},
        "_meta": {views::META_KEY: {
            "agent": {
                "id": c.id,
                "version": c.version,
                "role": c.role.as_str(),
                "skills": skills,
                "escalation_target": c.escalation.map(|e| e.target_agent),
            }
        }},
    });
    serde_json::from_value(definition).map_err(|e| ToolError {
        tool: c.id.to_owned(),
        message: e.to_string(),
    })
}

/// An agent's result as a tool result: the output as structured content on
/// success; a tool error with the code otherwise. The next action, an
/// escalation and the metrics are in `_meta` either way.
pub(super) fn agent_result(r: AgentResult, ids: bool) -> CallToolResult {
    let mut ours = JsonObject::new();
    ours.insert("next_action".into(), json!(r.next_action));
    if let Some(e) = &r.escalation {
        ours.insert("escalation".into(), json!(e));
    }
    ours.insert("metrics".into(), json!(r.metrics));
    if ids {
        ours.insert("job_id".into(), json!(r.job_id.as_str()));
        ours.insert("trace_id".into(), json!(r.trace_id.as_str()));
    }
    let mut out = match &r.error {
        Some(f) => {
            ours.insert("code".into(), json!(f.code));
            CallToolResult::error(vec![ContentBlock::text(format!(
                "{}\n(code: {})",
                f.message, f.code
            ))])
        }
        None => {
            let text = serde_json::to_string(&r.data).unwrap_or_default();
            let mut ok = CallToolResult::success(vec![ContentBlock::text(text)]);
            ok.structured_content = Some(r.data);
            ok
        }
    };
    let mut meta = JsonObject::new();
    meta.insert(views::META_KEY.into(), Value::Object(ours));
    out.meta = Some(meta.into());
    out
}
