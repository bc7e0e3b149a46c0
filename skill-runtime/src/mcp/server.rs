//! The server: the registry's exposed skills (and agents) as tools, each
//! with the MCP permissions a caller needs; `tools/list` and `tools/call`
//! for the request's caller.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ServerCapabilities, ServerConfig, TASKS_EXTENSION_ID, Tool,
};
use rmcp::service::RequestContext;

use crate::contract::watch::Watch;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::agent::runner::AgentRunner;
use crate::contract::watch::LogLevel;
use crate::exec::policy::authorize::permission_list;
use crate::exec::redact::redact_in_place;
use crate::exec::runtime::{Runtime, approval_reason};
use crate::mcp::agents;
use crate::mcp::approval::{self, Asked};
#[cfg(feature = "mcp-http")]
use crate::mcp::auth::authenticator::Authenticator;
use crate::mcp::error::ToolError;
use crate::mcp::limits::HttpLimits;
use crate::mcp::listed::{Listed, Route, headed, lacking};
use crate::mcp::options::McpOptions;
use crate::mcp::published::Published;
use crate::mcp::results::{error_result, tool_result};
use crate::mcp::runs::{self, Runs};
use crate::mcp::seal::Seals;
use crate::mcp::subscribers::Subscribers;
use crate::mcp::tasks::{self, Tasks};
use crate::mcp::watched::{Logs, log_level, watched};
use crate::model::caller::{Caller, Source};
use crate::model::content::CONTENT_MARKER;
use crate::model::envelope::JobEnvelope;
use crate::queue::api::Queue;
use crate::registry::views;

/// An MCP server over a [`Runtime`]. Cheap to clone; clones share everything.
///
/// ```no_run
/// # use std::sync::Arc;
/// # use skill_runtime::{Registry, Runtime};
/// # async fn serve() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// # let runtime = Runtime::builder(Arc::new(Registry::from_inventory()?)).build()?;
/// use skill_runtime::mcp::{McpOptions, McpServer};
///
/// let options = McpOptions::new().grant("seo:read").server_info("my-app", "1.0.0");
/// let server = McpServer::new(runtime, options)?;
/// server.serve_stdio().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpServer {
    runtime: Runtime,
    /// The caller of a request that brings none of its own (every request
    /// over stdio, and over HTTP without an authenticator).
    caller: Arc<Caller>,
    /// By tool name, sorted: a binary search, no hashing, per call.
    pub(crate) tools: Arc<[Listed]>,
    pub(crate) info: Arc<ServerConfig>,
    pub(crate) result_ids: bool,
    /// Whether the server asks its clients' users for approvals
    /// (`McpOptions::ask_approvals`), and how long they have to answer.
    asks: Option<std::time::Duration>,
    /// What seals task ids and approval states.
    seals: Arc<Seals>,
    /// Where long calls of clients that declared the tasks extension go.
    pub(crate) tasks: Option<Arc<Tasks>>,
    #[cfg_attr(
        not(feature = "mcp-http"),
        expect(dead_code, reason = "read by serve_http, with feature mcp-http")
    )]
    pub(crate) http: Arc<HttpLimits>,
    /// Who each HTTP request is from, and where clients learn how to ask.
    #[cfg(feature = "mcp-http")]
    pub(crate) front: Front,
    pub(crate) agents: Option<AgentRunner>,
    /// The least level of log lines its session's client asked for with
    /// `logging/setLevel` (0: none asked; else the level's index + 1). Each
    /// session has its own ([`McpServer::for_session`]).
    log_level: Arc<AtomicU8>,
    /// Resources, templates and prompts the app publishes.
    pub(crate) published: Arc<Published>,
    /// Every session's subscriptions, and this session's own URIs.
    pub(crate) subscribers: Arc<Subscribers>,
    pub(crate) subscribed: Arc<Mutex<BTreeSet<String>>>,
    /// The runs of its callers, as resources (`skill://runs/{job_id}`),
    /// across its sessions.
    pub(crate) runs: Arc<Runs>,
    /// Its HTTP session's clock, for `mcp.server.session.duration`: a
    /// session's server only ([`McpServer::for_session`]).
    #[cfg(feature = "otel")]
    session: Option<Arc<crate::mcp::spans::SessionClock>>,
}

/// What the HTTP front needs beyond the limits: the authenticator and the
/// public URL of the endpoint.
#[cfg(feature = "mcp-http")]
#[derive(Clone, Default)]
pub(crate) struct Front {
    pub(crate) authenticator: Option<Arc<dyn Authenticator>>,
    pub(crate) resource_url: Option<Arc<str>>,
}

impl McpServer {
    /// A server for every exposed skill of `runtime`'s registry.
    pub fn new(runtime: Runtime, options: McpOptions) -> Result<McpServer, ToolError> {
        let registry = runtime.registry().to_json();
        let catalog = runtime.registry().capabilities_json();
        let mut tools = Vec::new();
        for skill in views::exposed_skills(&registry) {
            let name = views::tool_name(skill).to_owned();
            let reference: Arc<str> = format!(
                "{}@{}",
                skill["name"].as_str().unwrap_or_default(),
                skill["version"].as_str().unwrap_or_default()
            )
            .into();
            // Exported from this very registry: always found.
            let Some(manifest) = runtime.registry().get(&reference).map(|s| s.entry.manifest)
            else {
                continue;
            };
            let definition = views::mcp_tool(skill, Some(&catalog));
            let tool: Tool = serde_json::from_value(definition).map_err(|e| ToolError {
                tool: name.clone(),
                message: e.to_string(),
            })?;
            tools.push(Listed {
                headed: headed(&tool),
                tool,
                needs: manifest.mcp.permissions.into(),
                approval: approval_reason(manifest),
                task: u128::from(manifest.execution.timeout_ms) > tasks::TASK_AFTER.as_millis(),
                route: Route::Serve {
                    name: manifest.name,
                    version: manifest.version,
                },
                entry: Some(skill.to_string().into()),
                redacted: manifest.redaction.inputs,
                blocks: skill["outputs_schema"][CONTENT_MARKER] == true,
            });
        }
        tools.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
        let caller = Caller {
            source: Source::Webhook,
            ..options.caller
        }
        .with_permissions(options.grants);
        #[expect(
            deprecated,
            reason = "logging is deprecated by SEP-2577, yet both revisions served still carry it"
        )]
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_completions()
            .enable_logging()
            .build();
        if !options.published.prompts.is_empty() {
            capabilities.prompts = Some(Default::default());
        }
        let info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                options.server_name,
                options.server_version,
            ))
            .with_instructions(
                "Each tool is a skill with a checked manifest; its capabilities, side \
                 effects and execution policy are under the tool's `_meta` key `"
                    .to_owned()
                    + views::META_KEY
                    + "`. Invalid arguments come back as a tool error listing each \
                       schema violation with its JSON path.",
            );
        let runs = Arc::new(Runs::new(runtime.memory_records().cloned()));
        Ok(McpServer {
            runtime,
            caller: Arc::new(caller),
            tools: tools.into(),
            info: Arc::new(info),
            http: Arc::new(options.http),
            #[cfg(feature = "mcp-http")]
            front: Front {
                authenticator: options.authenticator,
                resource_url: options.resource_url.map(Into::into),
            },
            result_ids: options.result_ids,
            asks: options.ask_approvals.then_some(options.approval_timeout),
            seals: Arc::new(Seals::own()),
            agents: None,
            tasks: None,
            log_level: Arc::default(),
            published: Arc::new(options.published),
            subscribers: Arc::default(),
            subscribed: Arc::default(),
            runs,
            #[cfg(feature = "otel")]
            session: None,
        })
    }

    /// Run long calls as MCP tasks on `queue` (see [`tasks`](crate::mcp::tasks)):
    /// a client that declared the `io.modelcontextprotocol/tasks` extension
    /// (2026-07-28), or a 2025-11-25 client's call with a `task`
    /// parameter, gets a task for a tool whose skill may run past
    /// [`TASK_AFTER`](crate::mcp::tasks::TASK_AFTER), and reads it with
    /// `tasks/get`; on a Redis queue, from any server of the fleet.
    pub fn with_tasks(mut self, queue: Arc<dyn Queue>) -> McpServer {
        let mut info = (*self.info).clone();
        info.capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        self.info = Arc::new(info);
        // Sealed with the queue's secret: any server on it opens them.
        self.seals = Arc::new(Seals::shared(queue.clone()));
        self.tasks = Some(Arc::new(Tasks {
            queue,
            seals: self.seals.clone(),
        }));
        self
    }

    /// Serve the agents of `runner` too, one tool per agent named by its id
    /// (see [`crate::agents`]): a call runs the agent with the agent as the
    /// caller of its skills; a failed run is a tool error whose `_meta` has
    /// the contract's `error_code`, an escalation is in the result's `_meta`.
    /// An agent is served only when the server grants every MCP permission
    /// of every skill it lists (else it is refused like such a skill); an
    /// agent id that is also a skill's tool name is an error.
    pub fn with_agents(mut self, runner: AgentRunner) -> Result<McpServer, ToolError> {
        let mut tools = self.tools.to_vec();
        for a in runner.agents().agents() {
            let id = a.contract().id;
            if tools.iter().any(|t| t.tool.name == id) {
                return Err(ToolError {
                    tool: id.to_owned(),
                    message: "an agent id that is also a skill's tool name".to_owned(),
                });
            }
            // An agent reaches what its skills reach: a caller sees it only
            // with every MCP permission of every skill it lists.
            let mut needs: Vec<&'static str> = Vec::new();
            for s in a.contract().skills {
                for p in s.manifest.mcp.permissions {
                    if !needs.contains(p) {
                        needs.push(p);
                    }
                }
            }
            let tool = agents::agent_tool(a)?;
            tools.push(Listed {
                headed: headed(&tool),
                tool,
                needs: needs.into(),
                route: Route::Agent { id },
                // An agent's skills ask as they run, through its runner.
                approval: None,
                task: false,
                entry: None,
                redacted: &[],
                blocks: false,
            });
        }
        tools.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
        self.tools = tools.into();
        self.agents = Some(runner);
        Ok(self)
    }

    /// The tools this server lists to a request without a caller of its own
    /// (over stdio, or over HTTP without an authenticator), in `tools/list`
    /// order.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools_for(&self.caller)
    }

    /// Whether a `tools/call` of `name` needs nothing of rmcp's request
    /// machinery beyond what `http/direct.rs` does: a skill's tool, no person
    /// asked, not run as a task, no `Mcp-Param-*` headers to check.
    #[cfg(feature = "mcp-http")]
    pub(crate) fn answers_directly(&self, name: &str) -> bool {
        self.listed(name).is_some_and(|t| {
            matches!(t.route, Route::Serve { .. })
                && (t.approval.is_none() || self.asks.is_none())
                && !(t.task && self.tasks.is_some())
                && !t.headed
        })
    }

    /// The caller of requests that bring none of their own.
    pub(crate) fn own_caller(&self) -> &Caller {
        &self.caller
    }

    /// Tell the sessions subscribed to the resource `uri` that it changed
    /// (`notifications/resources/updated`); the number of sessions told.
    pub async fn resource_updated(&self, uri: &str) -> usize {
        self.subscribers.updated(uri, None).await
    }

    /// Run one `tools/call` as the server's own caller (see
    /// [`McpServer::call_as`]).
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call_as(&self.caller, name, arguments).await
    }

    /// Run one `tools/call` as `caller`: a protocol error only when no tool
    /// has that name, or the caller lacks its MCP permissions; everything the
    /// pipeline says, success or refusal, as a tool result.
    pub async fn call_as(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        self.call_watched(caller, name, arguments, Watch::new())
            .await
    }

    /// [`McpServer::call_as`], the job watched by `watch` (its progress
    /// reports, its cancellation); an agent's run is not watched.
    pub async fn call_watched(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Option<JsonObject>,
        watch: Watch,
    ) -> Result<CallToolResult, ErrorData> {
        let listed = self.admit(caller, name)?;
        let (skill, version) = match &listed.route {
            Route::Serve { name, version } => (*name, *version),
            Route::Agent { id } => {
                let params = Value::Object(arguments.unwrap_or_default());
                let Some(runner) = &self.agents else {
                    return Err(ErrorData::internal_error("no agent runner", None));
                };
                return match runner.run(id, params, caller.clone(), false).await {
                    Ok(r) => {
                        // The run, and the hand-over it ran in process:
                        // both the caller's to read.
                        let limit = self.runtime.limits().max_record_value_bytes;
                        let mut run = Some(&r);
                        while let Some(ended) = run {
                            self.runs.agent_ended(caller, ended, limit);
                            run = ended.escalated.as_deref();
                        }
                        Ok(agents::agent_result(r, self.result_ids))
                    }
                    Err(e) => Err(ErrorData::invalid_params(e.to_string(), None)),
                };
            }
        };
        let params = Value::Object(arguments.unwrap_or_default());
        let job = traced(JobEnvelope::of(
            skill.into(),
            Some(version.into()),
            params,
            caller.clone(),
        ));
        let (running, watch) =
            self.runs
                .start(&self.subscribers, &job.job_id, skill, caller, watch);
        let answer = match self.runtime.invoke_watched(job, watch).await {
            Ok(result) => tool_result(&result, self.result_ids, listed.blocks),
            Err(e) => error_result(&e),
        };
        let uri = self
            .subscribers
            .any()
            .then(|| runs::uri_of(running.job_id()));
        drop(running);
        if let Some(uri) = uri.filter(|uri| self.subscribers.wanted(uri)) {
            self.subscribers
                .updated(&uri, Some(&caller.principal()))
                .await;
        }
        Ok(answer)
    }
}

impl McpServer {
    /// A `tools/call`: asked for approval first when it needs it, run as a
    /// task when the client and the tool call for one, else run now.
    pub(crate) async fn answer(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller_of(&context);
        // Refused before anyone is asked: a caller that may not call the
        // tool never puts a question to a person.
        let listed = self.admit(caller, &request.name)?;
        let runs_as_task =
            self.tasks.is_some() && listed.task && matches!(listed.route, Route::Serve { .. });
        if !runs_as_task && tasks::asked_in_params(&context) {
            // 2025-11-25: a tool that does not say it may run as a task
            // (`execution.taskSupport` absent, so "forbidden") is refused
            // to a call that asks for one, with the code that revision names.
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "tool `{}` does not run as a task (its `execution.taskSupport` is absent): call it without `params.task`",
                    request.name
                ),
                Some(json!({ "tool": request.name })),
            ));
        }
        let mut decision = None;
        if let (Some(reason), Some(within)) = (listed.approval, self.asks) {
            let how = approval::Asking {
                seals: &self.seals,
                within,
            };
            // Boxed: asking a person is rare, and its future (2.5 KB) would
            // widen every call's, which the transport copies into its task.
            match Box::pin(approval::ask(&request, &context, caller, reason, &how)).await? {
                Asked::Decided(d) => decision = Some(d),
                Asked::InputRequired(r) => return Ok(CallToolResponse::InputRequired(r)),
                Asked::CannotAsk => {}
            }
        }
        if let Some(tasks) = &self.tasks
            && let Listed {
                task: true,
                route: Route::Serve { name, version },
                ..
            } = listed
            && let Some(asked) = tasks::asked(&context)
        {
            let params = Value::Object(request.arguments.unwrap_or_default());
            let job = traced(JobEnvelope::of(
                (*name).into(),
                Some((*version).into()),
                params,
                caller.clone(),
            ));
            let created = tasks.create(job, caller, decision).await?;
            return Ok(match asked {
                tasks::Asked::Extension => CallToolResponse::Task(created),
                // rmcp lets a task through only to a client that declared
                // the extension: carried in a result the HTTP transport
                // turns into 2025-11-25's answer.
                tasks::Asked::Params => CallToolResponse::Complete(tasks::carried(&created)),
            });
        }
        let logs = self.logs_for(&context, listed, request.arguments.as_ref());
        watched(&context, logs, |watch| {
            let watch = match decision {
                Some(d) => watch.decided(d),
                None => watch,
            };
            self.call_watched(caller, &request.name, request.arguments, watch)
        })
        .await
        .map(CallToolResponse::from)
    }

    /// The listed tool `name`, when `caller` may call it; else the protocol
    /// error that says why not.
    fn admit(&self, caller: &Caller, name: &str) -> Result<&Listed, ErrorData> {
        let Some(listed) = self.listed(name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`"),
                Some(json!({ "tool": name })),
            ));
        };
        let missing = lacking(caller, &listed.needs);
        if !missing.is_empty() {
            return Err(ErrorData::invalid_params(
                format!(
                    "tool `{name}` is not available: it needs MCP {} that this caller is not granted",
                    permission_list(&missing)
                ),
                Some(json!({ "tool": name, "missing_permissions": missing })),
            ));
        }
        Ok(listed)
    }

    /// The server for a new session: the same, with a log level of its own.
    #[cfg_attr(
        not(feature = "mcp-http"),
        expect(dead_code, reason = "sessions are HTTP's")
    )]
    pub(crate) fn for_session(&self) -> McpServer {
        McpServer {
            log_level: Arc::default(),
            subscribed: Arc::default(),
            #[cfg(feature = "otel")]
            session: Some(Arc::default()),
            ..self.clone()
        }
    }

    /// Its session's `initialize` was answered on protocol `version`.
    pub(crate) fn session_opened(&self, version: &str) {
        #[cfg(feature = "otel")]
        if let Some(clock) = &self.session {
            clock.opened(version);
        }
        let _ = version;
    }

    /// Its session's client asked for log lines at `level` and above.
    pub(crate) fn set_log_level(&self, level: LogLevel) {
        let index = LogLevel::ALL.iter().position(|l| *l == level).unwrap_or(0);
        self.log_level.store(index as u8 + 1, Ordering::Relaxed);
    }

    /// The log lines a request to `listed` asked for: at the level of its
    /// `_meta` (2026-07-28), else of its session (`logging/setLevel`),
    /// scrubbed of the values of the skill's redacted inputs.
    fn logs_for(
        &self,
        context: &RequestContext<RoleServer>,
        listed: &Listed,
        arguments: Option<&JsonObject>,
    ) -> Option<Logs> {
        let session = match self.log_level.load(Ordering::Relaxed) {
            0 => None,
            n => LogLevel::ALL.get(usize::from(n) - 1).copied(),
        };
        let min = context.meta.log_level().map(log_level).or(session)?;
        let mut secrets = Vec::new();
        if let Some(arguments) = arguments
            && !listed.redacted.is_empty()
        {
            let mut params = Value::Object(arguments.clone());
            redact_in_place(&mut params, listed.redacted, &mut secrets);
        }
        Some(Logs {
            min,
            logger: listed.tool.name.to_string(),
            secrets,
        })
    }

    /// The caller of a request: the one its transport authenticated (an
    /// HTTP request's, put in its extensions), else the server's own.
    pub(crate) fn caller_of<'a>(&'a self, context: &'a RequestContext<RoleServer>) -> &'a Caller {
        #[cfg(feature = "mcp-http")]
        if let Some(caller) = context
            .extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|p| p.extensions.get::<Caller>())
        {
            return caller;
        }
        let _ = context;
        &self.caller
    }

    /// The caller of an HTTP request: the one its transport authenticated,
    /// else the server's own (as [`McpServer::caller_of`]).
    #[cfg(feature = "mcp-http")]
    pub(crate) fn caller_in<'a>(&'a self, parts: &'a hyper::http::request::Parts) -> &'a Caller {
        parts.extensions.get::<Caller>().unwrap_or(&self.caller)
    }
}

/// `job` in the trace of the span now entered (the request's), when there is
/// one.
fn traced(job: JobEnvelope) -> JobEnvelope {
    match crate::exec::trace::current_traceparent() {
        Some(tp) => job.with_traceparent(tp),
        None => job,
    }
}
