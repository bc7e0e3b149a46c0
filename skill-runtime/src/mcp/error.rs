//! Why a server cannot be built.

/// The tool definitions of a registry value could not be read as MCP tools.
#[derive(Debug, thiserror::Error)]
#[error("tool `{tool}` is not a valid MCP tool definition: {message}")]
pub struct ToolError {
    /// The tool.
    pub tool: String,
    /// What went wrong.
    pub message: String,
}
