//! A tool as the server holds it: its definition, who may see and call it,
//! what a call runs, and what of its skill the other methods serve.

use std::sync::Arc;

use rmcp::model::Tool;

use crate::exec::policy::authorize::missing_permissions;
use crate::model::caller::Caller;

/// Why `tools/call` names no tool this server serves.
#[derive(Clone)]
pub(crate) enum Route {
    /// The manifest's own name and version: a call copies neither.
    Serve {
        /// The skill's name.
        name: &'static str,
        /// Its version.
        version: &'static str,
    },
    /// An agent of the server's [`AgentRunner`], by id.
    Agent {
        /// The agent's id.
        id: &'static str,
    },
}

/// A tool, the MCP permissions a caller needs to see and call it, and what
/// a call runs.
#[derive(Clone)]
pub(crate) struct Listed {
    pub(crate) tool: Tool,
    pub(crate) needs: Arc<[&'static str]>,
    pub(crate) route: Route,
    /// Why its skill needs a person's approval, if it does.
    pub(crate) approval: Option<&'static str>,
    /// Whether it runs as a task for a client that declared the extension
    /// (its skill may run past `tasks::TASK_AFTER`).
    pub(crate) task: bool,
    /// Whether its input schema asks for `Mcp-Param-*` headers
    /// (`x-mcp-header` annotations), which rmcp checks against the body.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) headed: bool,
    /// Its skill's `skill-registry.json` entry, as JSON text (an agent's
    /// tool has none): what `resources.rs` serves.
    pub(crate) entry: Option<Arc<str>>,
    /// Its skill's redacted inputs, whose values log lines never carry.
    pub(crate) redacted: &'static [&'static str],
    /// Whether its skill answers content blocks
    /// ([`Content`](crate::model::content::Content)), not structured data.
    pub(crate) blocks: bool,
}

/// Whether `tool`'s input schema has an `x-mcp-header` annotation anywhere.
pub(crate) fn headed(tool: &Tool) -> bool {
    serde_json::to_string(&*tool.input_schema).is_ok_and(|s| s.contains("\"x-mcp-header\""))
}

/// What `caller` lacks of `needs` (nothing when its permissions are not
/// restricted).
pub(crate) fn lacking(caller: &Caller, needs: &[&'static str]) -> Vec<&'static str> {
    match &caller.permissions {
        Some(granted) => missing_permissions(granted, needs),
        None => Vec::new(),
    }
}
