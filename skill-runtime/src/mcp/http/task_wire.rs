//! What a session on 2025-11-25 says of tasks that rmcp cannot read: a
//! `tools/call` asking to run as a task (`params.task`, marked on the
//! request for the handler: [`TaskAsked`]), and the `tasks/get`,
//! `tasks/result` and `tasks/cancel` requests, answered here from the tasks
//! (`tasks_2025.rs`) as one JSON body. Read only for a session that has
//! tasks in that form, and only for a request the endpoint does not answer
//! directly.

use std::borrow::Cow;

use hyper::body::Bytes;
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::reply::{Body, rpc_error};
use crate::mcp::server::McpServer;
use crate::mcp::tasks::TaskAsked;
use crate::mcp::tasks_2025;

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

/// A message of a session that has tasks in 2025-11-25's form: `Some` answer
/// to a task request; `None` otherwise, for rmcp, the request marked
/// [`TaskAsked`] when it is a call that asks to run as a task.
pub(super) async fn read(
    server: &McpServer,
    parts: &mut Parts,
    body: &Bytes,
) -> Option<Response<Body>> {
    // Most messages name no task at all: no parse for them.
    if !contains(body, b"task") {
        return None;
    }
    let message: Message<'_> = serde_json::from_slice(body).ok()?;
    let method = message.method?;
    if method == "tools/call" {
        if message.params.is_some_and(|p| p.task.is_some()) {
            parts.extensions.insert(TaskAsked);
        }
        return None;
    }
    let method = tasks_2025::answered(&method)?;
    let id = match message.id {
        id @ (Value::String(_) | Value::Number(_)) => id,
        // A notification, or a request without a usable id: rmcp's to refuse.
        _ => return None,
    };
    let Some(task_id) = message.params.and_then(|p| p.task_id) else {
        return Some(rpc_error(
            StatusCode::OK,
            id,
            -32602,
            format!("`{method}` needs `params.taskId`: the task's id, as its creation gave it"),
        ));
    };
    Some(answer(server, parts, method, id, &task_id).await)
}

/// The answer to task request `method` (`id`) about `task_id`.
async fn answer(
    server: &McpServer,
    parts: &Parts,
    method: &'static str,
    id: Value,
    task_id: &str,
) -> Response<Body> {
    let caller = server.caller_in(parts);
    let answer = server.task_request_2025(method, task_id, caller);
    #[cfg(feature = "otel")]
    let answer = {
        use tracing::Instrument;
        let (span, started) = crate::mcp::spans::span_of(&crate::mcp::spans::Call {
            method,
            name: None,
            id: &id,
            version: tasks_2025::VERSION,
            via: crate::mcp::spans::via(parts),
            meta: None,
        });
        let answer = answer.instrument(span.clone()).await;
        let error = answer.as_ref().err().map(crate::mcp::spans::protocol_error);
        crate::mcp::spans::ended(&span, started, method, None, error.as_deref());
        answer
    };
    #[cfg(not(feature = "otel"))]
    let answer = answer.await;
    let body = match answer {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(e) => {
            let mut error = json!({ "code": e.code.0, "message": e.message });
            if let Some(data) = e.data {
                error["data"] = data;
            }
            json!({ "jsonrpc": "2.0", "id": id, "error": error })
        }
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(super::reply::full(body.to_string()))
        .expect("a status, a header and a body make a response")
}

/// Whether `needle` occurs in `hay`.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}
