//! What a session on 2025-11-25 says of tasks that rmcp cannot read
//! (`tasks_2025::said`): a `tools/call` asking to run as a task, marked on
//! the request for the handler ([`TaskAsked`]), and the `tasks/get`,
//! `tasks/result` and `tasks/cancel` requests, answered here from the tasks
//! as one JSON body. Read only for a session that has tasks in that form,
//! and only for a request the endpoint does not answer directly.

use hyper::body::Bytes;
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};

use super::reply::Body;
use crate::mcp::server::McpServer;
use crate::mcp::tasks::TaskAsked;
use crate::mcp::tasks_2025::{self, Said};

/// A message of a session that has tasks in 2025-11-25's form: `Some` answer
/// to a task request; `None` otherwise, for rmcp, the request marked
/// [`TaskAsked`] when it is a call that asks to run as a task.
pub(super) async fn read(
    server: &McpServer,
    parts: &mut Parts,
    body: &Bytes,
) -> Option<Response<Body>> {
    match tasks_2025::said(body)? {
        Said::CallAsksTask => {
            parts.extensions.insert(TaskAsked);
            None
        }
        Said::Request {
            method,
            id,
            task_id,
        } => {
            #[cfg(feature = "otel")]
            let via = crate::mcp::spans::via(parts);
            #[cfg(not(feature = "otel"))]
            let via = std::marker::PhantomData;
            let caller = server.caller_in(parts);
            let answer = server
                .task_answer_2025(method, id, task_id.as_deref(), caller, via)
                .await;
            Some(
                Response::builder()
                    .status(StatusCode::OK)
                    .header(hyper::header::CONTENT_TYPE, "application/json")
                    .body(super::reply::full(answer.to_string()))
                    .expect("a status, a header and a body make a response"),
            )
        }
    }
}
