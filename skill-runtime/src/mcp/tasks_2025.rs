//! Tasks in the form 2025-11-25 defines them (experimental in that revision),
//! for its clients (the TypeScript SDK's `experimental.tasks`): the server
//! declares `tasks.requests.tools.call` and `tasks.cancel`, and each long
//! tool `execution.taskSupport: "optional"`; a `tools/call` whose
//! `params.task` asks for one ([`TaskAsked`](crate::mcp::tasks::TaskAsked))
//! is answered `{task}`; `tasks/get` answers the task, `tasks/result` the
//! tool's result once the job ended (waiting for it), `tasks/cancel` the task
//! after asking its job to stop. The same tasks as 2026-07-28's
//! ([`Tasks`](crate::mcp::tasks::Tasks): a job of the queue, its id sealed
//! to its caller), in that revision's words: `ttl` and `pollInterval`, no
//! `resultType`, and a job that ended in error is `failed`, its message the
//! task's `statusMessage`.
//!
//! rmcp 3.11 knows tasks only as 2026-07-28 has them (and lets a task
//! handle through only to a client that declared that extension), so what
//! differs is written here as JSON, and each transport puts it on the wire
//! for a client on that revision (an HTTP session, `http/task_wire.rs` and
//! `http/sessions.rs`; the stdio client, `stdio.rs`): what a message says of
//! tasks read from its text ([`said`]), the `tasks/*` requests answered here,
//! and rmcp's answers to `initialize`, `tools/list` and a task's creation
//! (carried to it in a result's `_meta`) reshaped ([`McpServer::reshaped_2025`]).
//! `tasks/list` is not offered: a task is its caller's by a seal on its id,
//! not by a list the server keeps.

use std::borrow::Cow;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, CustomResult, InitializeResult, JsonRpcResponse, ListToolsResult,
    ServerJsonRpcMessage, ServerResult, Task,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::mcp::server::McpServer;
use crate::mcp::tasks::{CARRIED, Looked};
use crate::model::caller::Caller;
use crate::model::record::RunStatus;

/// The revision whose sessions get tasks in this form.
pub(crate) const VERSION: &str = "2025-11-25";

/// How long a `tasks/result` waits on the queue at a time, until its job ends.
const RESULT_WAIT: Duration = Duration::from_secs(30);

/// How long a `tasks/cancel` waits for its job to stop before it answers.
const CANCEL_WAIT: Duration = Duration::from_secs(2);

/// The key of `_meta` that ties a message to its task.
const RELATED: &str = "io.modelcontextprotocol/related-task";

/// The requests of this form answered from the tasks themselves.
pub(crate) fn answered(method: &str) -> Option<&'static str> {
    match method {
        "tasks/get" => Some("tasks/get"),
        "tasks/result" => Some("tasks/result"),
        "tasks/cancel" => Some("tasks/cancel"),
        _ => None,
    }
}

/// What a message of a client on this revision says of tasks.
pub(crate) enum Said<'a> {
    /// A `tools/call` that asks to run as a task.
    CallAsksTask,
    /// A task request ([`answered`] here): its id, and the task it names.
    Request {
        method: &'static str,
        id: Value,
        task_id: Option<Cow<'a, str>>,
    },
}

/// The members of a message read here; the rest (a call's arguments) is
/// skipped, not built.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Value,
    #[serde(borrow)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(default)]
    task: Option<serde::de::IgnoredAny>,
    #[serde(borrow, rename = "taskId")]
    task_id: Option<Cow<'a, str>>,
}

/// What message `text` says of tasks, if anything (rmcp does not keep a
/// call's `params.task`, and knows no `tasks/result`). A notification, or a
/// request without a usable id, is rmcp's to answer.
pub(crate) fn said(text: &[u8]) -> Option<Said<'_>> {
    // Most messages name no task at all: no parse for them (`"task`
    // begins both `"task"` and `"taskId"`).
    memchr::memmem::find(text, b"\"task")?;
    let message: Message<'_> = serde_json::from_slice(text).ok()?;
    let method = message.method?;
    if method == "tools/call" {
        return message
            .params
            .is_some_and(|p| p.task.is_some())
            .then_some(Said::CallAsksTask);
    }
    let method = answered(&method)?;
    let id = match message.id {
        id @ (Value::String(_) | Value::Number(_)) => id,
        _ => return None,
    };
    Some(Said::Request {
        method,
        id,
        task_id: message.params.and_then(|p| p.task_id),
    })
}

/// Where a request came from, for its span.
#[cfg(feature = "otel")]
pub(crate) type Via<'a> = crate::mcp::spans::Via<'a>;
/// Where a request came from (spans are made with feature `otel` only).
#[cfg(not(feature = "otel"))]
pub(crate) type Via<'a> = std::marker::PhantomData<&'a ()>;

impl McpServer {
    /// The JSON-RPC response to task request `method` (`id`) about
    /// `task_id`, for `caller`, answered in its span.
    pub(crate) async fn task_answer_2025(
        &self,
        method: &'static str,
        id: Value,
        task_id: Option<&str>,
        caller: &Caller,
        via: Via<'_>,
    ) -> Value {
        let Some(task_id) = task_id else {
            let message =
                format!("`{method}` needs `params.taskId`: the task's id, as its creation gave it");
            return json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32602, "message": message } });
        };
        let answer = self.task_request_2025(method, task_id, caller);
        #[cfg(feature = "otel")]
        let answer = {
            use tracing::Instrument;
            let (span, started) = crate::mcp::spans::span_of(&crate::mcp::spans::Call {
                method,
                name: None,
                id: &id,
                version: VERSION,
                via,
                meta: None,
            });
            let answer = answer.instrument(span.clone()).await;
            let error = answer.as_ref().err().map(crate::mcp::spans::protocol_error);
            crate::mcp::spans::ended(&span, started, method, None, error.as_deref());
            answer
        };
        #[cfg(not(feature = "otel"))]
        let answer = {
            let _ = via;
            answer.await
        };
        match answer {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(e) => {
                let mut error = json!({ "code": e.code.0, "message": e.message });
                if let Some(data) = e.data {
                    error["data"] = data;
                }
                json!({ "jsonrpc": "2.0", "id": id, "error": error })
            }
        }
    }

    /// `message`, an answer rmcp gives a client on this revision, in this
    /// revision's form where that differs (`initialize`, `tools/list`, a
    /// task's creation); `None` where it does not.
    pub(crate) fn reshaped_2025(
        &self,
        message: &ServerJsonRpcMessage,
    ) -> Option<ServerJsonRpcMessage> {
        let ServerJsonRpcMessage::Response(r) = message else {
            return None;
        };
        let result = match &r.result {
            ServerResult::InitializeResult(i) => self.initialized_2025(i)?,
            ServerResult::ListToolsResult(list) => self.tools_2025(list)?,
            ServerResult::CallToolResult(result) => created(result)?,
            _ => return None,
        };
        Some(ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: r.jsonrpc,
            id: r.id.clone(),
            result: ServerResult::CustomResult(CustomResult(result)),
        }))
    }

    /// Whether this server offers tasks in this form.
    pub(crate) fn offers_tasks_2025(&self) -> bool {
        self.tasks.is_some()
    }

    /// The answer to `method` (one [`answered`] names) about task `task_id`,
    /// for `caller`.
    pub(crate) async fn task_request_2025(
        &self,
        method: &str,
        task_id: &str,
        caller: &Caller,
    ) -> Result<Value, ErrorData> {
        let Some(tasks) = &self.tasks else {
            return Err(ErrorData::method_not_found::<rmcp::model::GetTaskMethod>());
        };
        match method {
            "tasks/get" => Ok(task(&tasks.look(task_id, caller, Duration::ZERO).await?)),
            "tasks/result" => loop {
                let looked = tasks.look(task_id, caller, RESULT_WAIT).await?;
                let Some(outcome) = &looked.outcome else {
                    continue;
                };
                let mut result = serde_json::to_value(self.outcome_answer(outcome))
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                if let Some(result) = result.as_object_mut() {
                    let meta = result.entry("_meta").or_insert_with(|| json!({}));
                    if let Some(meta) = meta.as_object_mut() {
                        meta.insert(RELATED.to_owned(), json!({ "taskId": task_id }));
                    }
                }
                break Ok(result);
            },
            "tasks/cancel" => {
                let looked = tasks.look(task_id, caller, Duration::ZERO).await?;
                if let Some(o) = &looked.outcome {
                    return Err(ErrorData::invalid_params(
                        format!(
                            "task `{task_id}` already ended ({}): a task that ended cannot \
                             be cancelled",
                            o.status
                        ),
                        Some(json!({ "taskId": task_id })),
                    ));
                }
                tasks.cancel(task_id, caller).await?;
                // The job stops at its next await point; what it ended as
                // is what is answered (still `working` if it has not yet).
                Ok(task(&tasks.look(task_id, caller, CANCEL_WAIT).await?))
            }
            _ => Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("`{method}` is not a task request"),
                None,
            )),
        }
    }

    /// rmcp's answer to `initialize`, with the tasks capability when it
    /// negotiated this revision.
    pub(crate) fn initialized_2025(&self, answer: &InitializeResult) -> Option<Value> {
        if answer.protocol_version.as_str() != VERSION {
            return None;
        }
        let mut answer = serde_json::to_value(answer).ok()?;
        let capabilities = answer.get_mut("capabilities")?.as_object_mut()?;
        capabilities.insert(
            "tasks".to_owned(),
            json!({ "cancel": {}, "requests": { "tools": { "call": {} } } }),
        );
        Some(answer)
    }

    /// rmcp's answer to `tools/list` on this revision, each long tool saying
    /// it may run as a task.
    pub(crate) fn tools_2025(&self, answer: &ListToolsResult) -> Option<Value> {
        let mut answer = serde_json::to_value(answer).ok()?;
        for tool in answer.get_mut("tools")?.as_array_mut()? {
            let long = tool
                .get("name")
                .and_then(Value::as_str)
                .and_then(|name| self.listed(name))
                .is_some_and(|l| l.task);
            if long && let Some(tool) = tool.as_object_mut() {
                tool.insert("execution".to_owned(), json!({ "taskSupport": "optional" }));
            }
        }
        Some(answer)
    }
}

/// The creation a result carries ([`carried`](crate::mcp::tasks::carried)),
/// in this revision's form.
pub(crate) fn created(result: &CallToolResult) -> Option<Value> {
    let task = result.meta.as_ref()?.0.get(CARRIED)?;
    let task: Task = serde_json::from_value(task.clone()).ok()?;
    Some(json!({ "task": fields(&task, "working", None) }))
}

/// `looked` in this revision's form.
fn task(looked: &Looked) -> Value {
    let t = &looked.task;
    let (status, message) = match &looked.outcome {
        None => ("working", t.status_message.clone()),
        Some(o) => match o.status {
            RunStatus::Succeeded => ("completed", None),
            RunStatus::Cancelled => ("cancelled", None),
            RunStatus::Failed | RunStatus::Expired | RunStatus::Skipped => (
                "failed",
                Some(match &o.error {
                    Some(e) => format!("{} (code: {})", e.message, e.code),
                    None => format!("the job ended {}", o.status),
                }),
            ),
        },
    };
    fields(t, status, message)
}

fn fields(t: &Task, status: &str, message: Option<String>) -> Value {
    let mut task = json!({
        "taskId": t.task_id,
        "status": status,
        "createdAt": t.created_at,
        "lastUpdatedAt": t.last_updated_at,
        "ttl": t.ttl_ms,
    });
    if let Some(ms) = t.poll_interval_ms {
        task["pollInterval"] = json!(ms);
    }
    if let Some(m) = message {
        task["statusMessage"] = json!(m);
    }
    task
}
