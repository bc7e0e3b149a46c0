//! What a server is told: the permissions it grants, the caller its jobs
//! carry, its name, the HTTP limits, and who its HTTP requests are from.

use std::collections::BTreeSet;
#[cfg(feature = "mcp-http")]
use std::sync::Arc;

#[cfg(feature = "mcp-http")]
use crate::mcp::auth::authenticator::Authenticator;
use crate::mcp::limits::HttpLimits;
use crate::mcp::published::{McpPrompt, McpResource, McpTemplate, Published};
use crate::model::caller::Caller;

/// Who the server acts for: the permissions it grants to its clients and the
/// caller identity its jobs carry.
///
/// Built from [`McpOptions::new`] with its builder methods (new options can
/// then be added without breaking anyone):
///
/// ```
/// use skill_runtime::Caller;
/// use skill_runtime::manifest::{AgentRole, PermissionLevel};
/// use skill_runtime::mcp::{HttpLimits, McpOptions};
///
/// let options = McpOptions::new()
///     .grant("seo:read")
///     .caller(Caller::agent(AgentRole::Executor, PermissionLevel::Execute))
///     .server_info("my-app", "1.0.0")
///     .http(HttpLimits::default().allow_origin("https://app.example.com:443"));
/// assert!(options.grants.contains("seo:read"));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct McpOptions {
    /// MCP permissions granted (e.g. `seo:read`); a tool is served only when all
    /// its permissions are granted.
    pub grants: BTreeSet<String>,
    /// The caller every job runs as (role and level for `reusable_by`). Its
    /// permissions are replaced by `grants`.
    pub caller: Caller,
    /// Name and version the server reports in its handshake.
    pub server_name: String,
    /// The version the server reports in `initialize`.
    pub server_version: String,
    /// Put each successful result's job and trace ids in its `_meta`, to find its
    /// run record. Off by default: the ids are worth their bytes only where the
    /// records can be read (the app turns this on with `--record FILE`), and they
    /// cost a stdio round trip more than a tenth of its time.
    pub result_ids: bool,
    /// Ask the client's user, by elicitation, before a tool whose skill
    /// needs approval (`requires_hitl`, destructive) runs; on by default.
    /// Off, or with a client that cannot ask, the runtime's approver decides
    /// (the example app turns this off with `--approve`: the operator
    /// approved everything).
    pub ask_approvals: bool,
    /// How long a person has to answer an approval question (10 minutes by
    /// default): past it, unanswered, the call is denied; a 2026-07-28
    /// answer that comes later is denied too.
    pub approval_timeout: std::time::Duration,
    /// Limits of the Streamable HTTP transport.
    pub http: HttpLimits,
    /// Who each HTTP request is from; `None`: every request is the server's
    /// own caller (which the example app allows on loopback only).
    #[cfg(feature = "mcp-http")]
    pub authenticator: Option<Arc<dyn Authenticator>>,
    /// The URL clients reach the MCP endpoint at (`https://mcp.example.com/mcp`):
    /// the `resource` of the protected resource metadata (RFC 9728) and the
    /// base of the metadata URL a 401 names. Without it, both are made from
    /// the request's `Host`, over `http`.
    #[cfg(feature = "mcp-http")]
    pub resource_url: Option<String>,
    /// Resources, resource templates and prompts the app publishes.
    pub(crate) published: Published,
}

impl std::fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("McpOptions");
        d.field("grants", &self.grants)
            .field("caller", &self.caller)
            .field("server_name", &self.server_name)
            .field("server_version", &self.server_version)
            .field("result_ids", &self.result_ids)
            .field("ask_approvals", &self.ask_approvals)
            .field("approval_timeout", &self.approval_timeout)
            .field("http", &self.http)
            .field("published", &self.published);
        #[cfg(feature = "mcp-http")]
        d.field("authenticated", &self.authenticator.is_some())
            .field("resource_url", &self.resource_url);
        d.finish()
    }
}

impl Default for McpOptions {
    fn default() -> McpOptions {
        McpOptions {
            grants: BTreeSet::new(),
            caller: Caller::default(),
            server_name: "skill-runtime".to_owned(),
            server_version: env!("CARGO_PKG_VERSION").to_owned(),
            result_ids: false,
            ask_approvals: true,
            approval_timeout: std::time::Duration::from_secs(600),
            http: HttpLimits::default(),
            #[cfg(feature = "mcp-http")]
            authenticator: None,
            #[cfg(feature = "mcp-http")]
            resource_url: None,
            published: Published::default(),
        }
    }
}

impl McpOptions {
    /// No permission granted, the default caller, `skill-runtime` and its
    /// version as the server's name, no ids in results, the default HTTP
    /// limits.
    pub fn new() -> McpOptions {
        McpOptions::default()
    }

    /// Grant the MCP permission `permission` (e.g. `seo:read`).
    pub fn grant(mut self, permission: impl Into<String>) -> Self {
        self.grants.insert(permission.into());
        self
    }

    /// Grant every permission of `permissions`.
    pub fn grants<I, P>(mut self, permissions: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<String>,
    {
        self.grants.extend(permissions.into_iter().map(Into::into));
        self
    }

    /// Run every job as `caller` (its permissions are replaced by the grants).
    pub fn caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }

    /// The name and version the server reports in its handshake.
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.server_name = name.into();
        self.server_version = version.into();
        self
    }

    /// Publish `resource` to every caller (`resources/list`, `resources/read`,
    /// `resources/subscribe`).
    pub fn resource(mut self, resource: McpResource) -> Self {
        self.published.resources.push(resource);
        self
    }

    /// Publish the resources of `template` to every caller.
    pub fn resource_template(mut self, template: McpTemplate) -> Self {
        self.published.templates.push(template);
        self
    }

    /// Publish `prompt` to every caller (`prompts/list`, `prompts/get`).
    pub fn prompt(mut self, prompt: McpPrompt) -> Self {
        self.published.prompts.push(prompt);
        self
    }

    /// Put each result's job and trace ids in its `_meta`.
    pub fn result_ids(mut self, on: bool) -> Self {
        self.result_ids = on;
        self
    }

    /// Whether to ask the client's user before a tool that needs approval
    /// runs (see [`McpOptions::ask_approvals`]).
    pub fn ask_approvals(mut self, on: bool) -> Self {
        self.ask_approvals = on;
        self
    }

    /// How long a person has to answer an approval question (see
    /// [`McpOptions::approval_timeout`]).
    pub fn approval_timeout(mut self, within: std::time::Duration) -> Self {
        self.approval_timeout = within;
        self
    }

    /// The Streamable HTTP transport's limits.
    pub fn http(mut self, limits: HttpLimits) -> Self {
        self.http = limits;
        self
    }

    /// Authenticate each HTTP request with `authenticator`: its caller is
    /// the one the credentials say (see [`crate::mcp::auth`]).
    #[cfg(feature = "mcp-http")]
    pub fn authenticate(mut self, authenticator: impl Authenticator) -> Self {
        self.authenticator = Some(Arc::new(authenticator));
        self
    }

    /// The URL clients reach the MCP endpoint at (see
    /// [`McpOptions::resource_url`]).
    #[cfg(feature = "mcp-http")]
    pub fn resource_url(mut self, url: impl Into<String>) -> Self {
        self.resource_url = Some(url.into());
        self
    }
}
