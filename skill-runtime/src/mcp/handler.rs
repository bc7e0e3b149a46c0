//! The MCP methods the server answers: tools (`server.rs` says who may see
//! and call which), tasks (`tasks.rs`), the registry as resources with
//! completion of their template (`resources.rs`), the caller's runs
//! (`runs.rs`), and the level of the log
//! lines a session's calls send (`watched.rs`). With feature `otel`, each
//! answer is made in a server span of its own (`spans.rs`).

use std::future::Future;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskMethod, CancelTaskParams,
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetTaskMethod, GetTaskParams, GetTaskResult, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::mcp::published::Args;
use crate::mcp::resources;
use crate::mcp::runs::{self, ARTIFACT_TEMPLATE, RUN_TEMPLATE};
use crate::mcp::server::McpServer;
#[cfg(feature = "otel")]
use crate::mcp::spans;
use crate::mcp::watched::log_level;
use crate::model::caller::Caller;
use crate::sync::lock;
use serde_json::json;

/// `answer`, a request of `method` (about `name`), in its span when spans
/// are made.
async fn traced<T>(
    method: &'static str,
    name: Option<&str>,
    context: &RequestContext<RoleServer>,
    answer: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    #[cfg(feature = "otel")]
    return spans::traced(method, name, context, answer).await;
    #[cfg(not(feature = "otel"))]
    {
        let _ = (method, name, context);
        answer.await
    }
}

impl McpServer {
    /// `Ok` when `uri` is a resource the caller of `context` may read.
    fn known_resource(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.published.knows(uri) {
            return Ok(());
        }
        // A run not started yet may be subscribed to (its id is not
        // guessable); another caller's is unknown, as on `resources/read`.
        if let Some(job_id) = runs::job_of(uri) {
            return match self.runs.foreign(job_id, self.caller_of(context)) {
                true => Err(runs::not_found(uri, job_id)),
                false => Ok(()),
            };
        }
        resources::read(uri, self.entries_for(self.caller_of(context))).map(|_| ())
    }
}

impl McpServer {
    /// `resources/read` of R3 file `name` of run `job_id`: read from the
    /// agents' store, if the run is the caller's and wrote that file.
    async fn read_artifact(
        &self,
        uri: &str,
        job_id: &str,
        name: &str,
        caller: &Caller,
    ) -> Result<ReadResourceResult, ErrorData> {
        let missing = || runs::no_artifact(uri, job_id, name);
        let (at, kind) = self
            .runs
            .artifact(job_id, name, caller)
            .ok_or_else(missing)?;
        let store = self
            .agents
            .as_ref()
            .and_then(|a| a.artifact_store())
            .ok_or_else(missing)?;
        match store.get(&at).await {
            Ok(Some(text)) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text, uri).with_mime_type(kind),
            ])),
            Ok(None) => Err(missing()),
            Err(e) => Err(ErrorData::internal_error(
                format!("the store of R3 files did not answer: {e}"),
                Some(json!({ "uri": uri })),
            )),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        traced("initialize", None, &context, async {
            context.peer.set_peer_info(request.clone());
            let answer = self.negotiate_initialize(&request)?;
            self.session_opened(&answer.protocol_version.to_string());
            Ok(answer)
        })
        .await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        traced("tools/list", None, &context, async {
            let caller = self.caller_of(&context);
            Ok(ListToolsResult::with_all_items(self.tools_for(caller)))
        })
        .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        traced("resources/list", None, &context, async {
            let caller = self.caller_of(&context);
            let mut listed = resources::list(self.entries_for(caller));
            listed.resources.extend(self.published.listed());
            listed.resources.extend(self.runs.listed(caller));
            Ok(listed)
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        traced("resources/templates/list", None, &context, async {
            let mut listed = resources::templates();
            listed.resource_templates.push(runs::template());
            if self.agents.is_some() {
                listed.resource_templates.push(runs::artifact_template());
            }
            listed.resource_templates.extend(self.published.templates());
            Ok(listed)
        })
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        traced("resources/read", Some(&request.uri), &context, async {
            if let Some((job_id, name)) = runs::artifact_of(&request.uri) {
                return self
                    .read_artifact(&request.uri, job_id, name, self.caller_of(&context))
                    .await
                    .map(Into::into);
            }
            if let Some(run) = self.runs.read(&request.uri, self.caller_of(&context)) {
                return run.map(Into::into);
            }
            match self.published.read(&request.uri) {
                Some(Ok(contents)) => Ok(ReadResourceResult::new(vec![contents]).into()),
                Some(Err(why)) => Err(ErrorData::resource_not_found(
                    why,
                    Some(json!({ "uri": request.uri })),
                )),
                None => {
                    let entries = self.entries_for(self.caller_of(&context));
                    resources::read(&request.uri, entries).map(Into::into)
                }
            }
        })
        .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        traced("resources/subscribe", Some(&request.uri), &context, async {
            self.known_resource(&request.uri, &context)?;
            let principal = self.caller_of(&context).principal();
            self.subscribers
                .subscribe(&self.subscribed, &context.peer, principal, &request.uri);
            Ok(())
        })
        .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        traced(
            "resources/unsubscribe",
            Some(&request.uri),
            &context,
            async {
                lock(&self.subscribed).remove(&request.uri);
                Ok(())
            },
        )
        .await
    }

    /// 2026-07-28: a `subscriptions/listen` stream may follow the
    /// resources a caller could subscribe to on a session: the app's, and
    /// the registry's (its skills' entries are checked per caller when
    /// read; the registry does not change while a server runs).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let uris: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| {
                self.published.knows(uri)
                    || resources::names_registry(uri)
                    || runs::job_of(uri).is_some()
            })
            .cloned()
            .collect();
        let mut accepted = SubscriptionFilter::new();
        accepted.resource_subscriptions = Some(uris);
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let principal = self.caller_of(context.request_context()).principal();
        let id = self
            .subscribers
            .listen(uris, context.sink().clone(), principal);
        context.cancelled().await;
        self.subscribers.unlisten(id);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        traced("prompts/list", None, &context, async {
            Ok(ListPromptsResult::with_all_items(self.published.prompts()))
        })
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        traced("prompts/get", Some(&request.name), &context, async {
            let args: Args = request
                .arguments
                .iter()
                .flatten()
                .map(|(k, v)| {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    (k.clone(), v)
                })
                .collect();
            match self.published.prompt(&request.name, &args) {
                Some(Ok(result)) => Ok(result.into()),
                Some(Err(why)) => Err(ErrorData::invalid_params(why, None)),
                None => Err(ErrorData::invalid_params(
                    format!("no prompt `{}`", request.name),
                    Some(json!({ "prompt": request.name })),
                )),
            }
        })
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        traced("completion/complete", None, &context, async {
            let r = &request.r#ref;
            let argument = &request.argument;
            let known =
                self.published
                    .known(r.as_prompt_name(), r.as_resource_uri(), &argument.name);
            match known {
                // What the app said its prompt's argument or its template's
                // variable may be.
                Some(values) => {
                    resources::completed(values.iter().map(String::as_str), &argument.value)
                }
                None if matches!(r.as_resource_uri(), Some(RUN_TEMPLATE | ARTIFACT_TEMPLATE))
                    && argument.name == "job_id" =>
                {
                    let ids = self.runs.job_ids(self.caller_of(&context));
                    resources::completed(ids.iter().map(String::as_str), &argument.value)
                }
                None => resources::complete(&request, self.entries_for(self.caller_of(&context))),
            }
        })
        .await
    }

    #[expect(
        deprecated,
        reason = "logging is deprecated by SEP-2577, yet both revisions served still carry it"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        traced("logging/setLevel", None, &context, async {
            self.set_log_level(log_level(request.level));
            Ok(())
        })
        .await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        traced("tasks/get", None, &context, async {
            let Some(tasks) = &self.tasks else {
                return Err(ErrorData::method_not_found::<GetTaskMethod>());
            };
            let caller = self.caller_of(&context);
            tasks
                .get(&request.task_id, caller, |o| self.outcome_answer(o))
                .await
        })
        .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        traced("tasks/cancel", None, &context, async {
            let Some(tasks) = &self.tasks else {
                return Err(ErrorData::method_not_found::<CancelTaskMethod>());
            };
            tasks
                .cancel(&request.task_id, self.caller_of(&context))
                .await
        })
        .await
    }

    /// What rmcp asks of a tool on every 2026-07-28 HTTP request: its input
    /// schema, to check the `Mcp-Param-*` headers against. Only the name and
    /// that schema (shared, not copied): the whole definition, its `_meta`
    /// and output schema cloned and dropped per call, cost more than the
    /// rest of the header check.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.listed(name)
            .map(|t| Tool::new(t.tool.name.clone(), "", t.tool.input_schema.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        #[cfg(feature = "otel")]
        {
            use tracing::Instrument;
            let (span, started) = spans::call_span(&request, &context);
            let name = request.name.clone();
            let answer = self.answer(request, context).instrument(span.clone()).await;
            let error = spans::error_type(&answer);
            spans::ended(&span, started, "tools/call", Some(&name), error.as_deref());
            answer
        }
        #[cfg(not(feature = "otel"))]
        self.answer(request, context).await
    }
}
