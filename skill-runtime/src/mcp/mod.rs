//! A front door, public API: the registry served as MCP tools, on the
//! official Rust SDK (`rmcp`).
//!
//! Tools are the [`views::mcp_tools`] of the registry (the same definitions that
//! `export --format mcp` prints), minus those whose MCP permissions the server
//! does not grant. Every `tools/call` goes through every stage of a job
//! with the server's caller; what a stage refuses comes back as a tool
//! result with `isError: true`, so that a model can read it and correct itself.
//! Only requests that name no callable tool are protocol errors.

mod agents;
mod approval;
#[cfg(feature = "mcp-http")]
pub mod auth;
mod error;
mod handler;
#[cfg(feature = "mcp-http")]
pub(crate) mod http;
mod limits;
mod listed;
mod options;
mod published;
mod resources;
mod results;
mod runs;
pub(crate) mod seal;
mod server;
#[cfg(feature = "otel")]
mod spans;
mod stdio;
mod subscribers;
pub mod tasks;
mod tasks_2025;
mod tools;
mod watched;

pub use self::error::ToolError;
#[cfg(feature = "mcp-http")]
pub use self::http::{McpService, serve_app};
pub use self::limits::{HttpLimits, LOOPBACK_HOSTS, LOOPBACK_ORIGINS};
pub use self::options::McpOptions;
pub use self::published::{Args, McpPrompt, McpResource, McpTemplate, PromptLine, Speaker};
pub use self::server::McpServer;
