//! What each caller sees of the server's tools: the tools it may list and
//! call, their registry entries, and the permissions they need.

use rmcp::model::{CallToolResult, Tool};

use crate::mcp::listed::{Listed, Route, lacking};
use crate::mcp::resources;
use crate::mcp::results::outcome_result;
use crate::mcp::server::McpServer;
use crate::model::caller::Caller;
use crate::queue::api::Outcome;

impl McpServer {
    /// The tools `caller` sees: those whose MCP permissions it holds.
    pub fn tools_for(&self, caller: &Caller) -> Vec<Tool> {
        self.tools
            .iter()
            .filter(|t| lacking(caller, &t.needs).is_empty())
            .map(|t| t.tool.clone())
            .collect()
    }

    /// The registry entries of the skills `caller` may call, in
    /// `tools/list` order.
    pub(crate) fn entries_for<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> impl Iterator<Item = resources::Entry<'a>> {
        self.tools
            .iter()
            .filter(move |t| lacking(caller, &t.needs).is_empty())
            .filter_map(|t| {
                Some(resources::Entry {
                    tool: &t.tool.name,
                    description: t.tool.description.as_deref(),
                    json: t.entry.as_deref()?,
                })
            })
    }

    /// Every MCP permission some tool needs.
    pub fn all_permissions(&self) -> std::collections::BTreeSet<&'static str> {
        self.tools
            .iter()
            .flat_map(|t| t.needs.iter().copied())
            .collect()
    }

    /// The MCP permissions a caller needs for tool `name`, when there is one.
    pub fn permissions_of(&self, name: &str) -> Option<&[&'static str]> {
        self.listed(name).map(|t| &*t.needs)
    }

    /// Whether the skill named `skill` answers content blocks (a task's
    /// result names its skill, not its tool).
    pub(crate) fn answers_blocks(&self, skill: &str) -> bool {
        self.tools
            .iter()
            .any(|t| t.blocks && matches!(t.route, Route::Serve { name, .. } if name == skill))
    }

    /// The tool result a task's ended job stands for, by its `outcome`.
    pub(crate) fn outcome_answer(&self, outcome: &Outcome) -> CallToolResult {
        let blocks = outcome
            .result
            .as_ref()
            .is_some_and(|r| self.answers_blocks(&r.skill));
        outcome_result(outcome, self.result_ids, blocks)
    }

    pub(crate) fn listed(&self, name: &str) -> Option<&Listed> {
        self.tools
            .binary_search_by(|t| t.tool.name.as_ref().cmp(name))
            .ok()
            .map(|i| &self.tools[i])
    }
}
