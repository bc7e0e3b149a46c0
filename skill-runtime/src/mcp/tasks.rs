//! MCP tasks (the `io.modelcontextprotocol/tasks` extension of 2026-07-28,
//! SEP-2663) backed by a job queue: a call to a long tool from a client that
//! declared the extension is queued as a job, and answered at once with a
//! task; `tasks/get` reads the job's state (working with its last progress,
//! or its outcome as the tool's result), `tasks/cancel` cancels the job. On
//! the Redis queue a task is the fleet's job: it outlives the server that
//! created it and any server of the fleet answers for it.
//!
//! Which tools: those whose skill may run past [`TASK_AFTER`] (its
//! `timeout_ms`), the silence after which clients give up on a call; shorter
//! tools answer inline. Which clients: those on 2026-07-28 or later that
//! declared the extension; any other gets every answer inline. Whose tasks: a task id is the job id, the creation
//! time and a seal of both with the caller's identity
//! ([`Caller::principal`]), made with the queue's secret (shared by the
//! fleet, known to no client), so a caller reaches its own tasks only, no
//! one can make a task id offline, and no state is kept by the server.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, GetTaskResult, Task, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use crate::mcp::seal::Seals;
use crate::model::approval::Decision;
use crate::model::caller::Caller;
use crate::model::envelope::JobEnvelope;
use crate::model::record::RunStatus;
use crate::model::time::format_time;
use crate::queue::api::{Cancelled, Outcome, Queue};

/// A tool whose skill may run longer than this runs as a task for a client
/// that declared the extension.
pub const TASK_AFTER: Duration = Duration::from_secs(60);

/// How a request's client asked for a task, in the form its protocol
/// revision defines: on 2026-07-28, by declaring the extension; on
/// 2025-11-25, by the call's own `params.task` ([`TaskAsked`], read by the
/// transport; `tasks_2025.rs` answers in that revision's form). A
/// client on 2025-11-25 that lists the 2026-07-28 extension anyway (the MCP
/// Inspector) reads results without `resultType`, so a task handle would
/// look to it like a result with no content; it is answered inline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Asked {
    /// 2026-07-28's extension.
    Extension,
    /// 2025-11-25's `params.task`.
    Params,
}

/// How the client of `context`'s request asked for a task, if it did.
pub(crate) fn asked(context: &RequestContext<RoleServer>) -> Option<Asked> {
    if asked_in_params(context) {
        return Some(Asked::Params);
    }
    let extension = context
        .protocol_version()
        .is_some_and(|v| !v.has_initialize())
        && context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
    extension.then_some(Asked::Extension)
}

/// Whether `context`'s request is a 2025-11-25 call that asks to run as a
/// task ([`TaskAsked`]).
pub(crate) fn asked_in_params(context: &RequestContext<RoleServer>) -> bool {
    // Over stdio the mark is the request's; over HTTP, its HTTP request's.
    if context.extensions.get::<TaskAsked>().is_some() {
        return true;
    }
    #[cfg(feature = "mcp-http")]
    if context
        .extensions
        .get::<hyper::http::request::Parts>()
        .is_some_and(|p| p.extensions.get::<TaskAsked>().is_some())
    {
        return true;
    }
    false
}

/// The `_meta` key of a result that carries a task's creation from the
/// handler to the transport: rmcp lets a task handle through only to a
/// client that declared the 2026-07-28 extension, and a 2025-11-25 client
/// that asked for a task ([`Asked::Params`]) gets it in its revision's form
/// (`tasks_2025::created`), written by the transport in place of this result.
pub(crate) const CARRIED: &str = "io.skill-runtime/task-created";

/// `created`'s task, carried in a result (see [`CARRIED`]).
pub(crate) fn carried(created: &CreateTaskResult) -> CallToolResult {
    let mut carrier = CallToolResult::success(Vec::new());
    let mut meta = serde_json::Map::new();
    meta.insert(
        CARRIED.to_owned(),
        serde_json::to_value(&created.task).unwrap_or_default(),
    );
    carrier.meta = Some(rmcp::model::MetaObject(meta));
    carrier
}

/// How often a client is told to poll.
const POLL_MS: u64 = 500;

/// The queue tasks run on, and what seals their ids.
pub(crate) struct Tasks {
    pub(crate) queue: std::sync::Arc<dyn Queue>,
    pub(crate) seals: std::sync::Arc<Seals>,
}

/// A task as it stands ([`Tasks::look`]).
pub(crate) struct Looked {
    pub(crate) task: Task,
    /// Its job's outcome, once the job ended.
    pub(crate) outcome: Option<Outcome>,
}

/// Put in a request's extensions (over HTTP, its HTTP request's) by the
/// transport when a client on 2025-11-25 asked for its `tools/call` to run
/// as a task (`params.task`, which rmcp does not read): the form of asking
/// that revision defines.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskAsked;

impl Tasks {
    /// Queue `job` for `caller` (with the decision a person gave already, if
    /// any); the task that stands for it.
    pub(crate) async fn create(
        &self,
        job: JobEnvelope,
        caller: &Caller,
        decision: Option<Decision>,
    ) -> Result<CreateTaskResult, ErrorData> {
        let created = SystemTime::now();
        let id =
            self.queue.enqueue(job).await.map_err(|e| {
                ErrorData::internal_error(format!("cannot queue the task: {e}"), None)
            })?;
        if let Some(d) = decision {
            // Given before any worker parks the job: it runs on it.
            self.queue
                .decide(id.as_str(), d)
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        }
        let task_id = seal(&self.seals, id.as_str(), created, caller).await?;
        let at = format_time(created);
        Ok(CreateTaskResult::new(self.kept(Task::new(
            task_id,
            TaskStatus::Working,
            at.clone(),
            at,
        ))))
    }

    /// Task `task_id` of `caller` as it stands, once its job ended or `wait`
    /// passed: its state in 2026-07-28's words (a job that ended any way but
    /// cancelled is `completed`, its result saying how), and the job's
    /// outcome once it ended.
    pub(crate) async fn look(
        &self,
        task_id: &str,
        caller: &Caller,
        wait: Duration,
    ) -> Result<Looked, ErrorData> {
        let (job_id, created) = open(&self.seals, task_id, caller).await?;
        let outcome = self
            .queue
            .outcome(job_id, wait)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let created = format_time(created);
        let task = |status, updated: SystemTime| {
            self.kept(Task::new(
                task_id,
                status,
                created.clone(),
                format_time(updated),
            ))
        };
        let task = match &outcome {
            None => {
                let progress = self.queue.progress(job_id).await.ok().flatten();
                let mut t = task(TaskStatus::Working, SystemTime::now());
                if let Some(p) = progress {
                    t = t.with_status_message(p.progress.to_string());
                }
                t
            }
            Some(o) if o.status == RunStatus::Cancelled => {
                task(TaskStatus::Cancelled, o.completed_at)
            }
            Some(o) => task(TaskStatus::Completed, o.completed_at),
        };
        Ok(Looked { task, outcome })
    }

    /// The state of task `task_id`, for `caller`; `result` turns an outcome's
    /// result into the tool's.
    pub(crate) async fn get(
        &self,
        task_id: &str,
        caller: &Caller,
        result: impl Fn(&Outcome) -> CallToolResult,
    ) -> Result<GetTaskResult, ErrorData> {
        let Looked { task, outcome } = self.look(task_id, caller, Duration::ZERO).await?;
        let payload = match outcome {
            None => TaskPayload::Working,
            Some(o) if o.status == RunStatus::Cancelled => TaskPayload::Cancelled,
            Some(o) => {
                let r = serde_json::to_value(result(&o)).unwrap_or_default();
                let Value::Object(r) = r else {
                    return Err(ErrorData::internal_error(
                        "a result that is not an object",
                        None,
                    ));
                };
                TaskPayload::Completed { result: r }
            }
        };
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    /// `task` with the poll interval, and how long it is kept: as long as
    /// the queue keeps outcomes after the job ends.
    fn kept(&self, task: Task) -> Task {
        let ttl = u64::try_from(self.queue.outcomes_kept().as_millis()).unwrap_or(u64::MAX);
        task.with_poll_interval_ms(POLL_MS).with_ttl_ms(ttl)
    }

    /// Cancel task `task_id` for `caller`.
    pub(crate) async fn cancel(&self, task_id: &str, caller: &Caller) -> Result<(), ErrorData> {
        let (job_id, _) = open(&self.seals, task_id, caller).await?;
        match self.queue.cancel(job_id).await {
            Ok(Cancelled::Requested | Cancelled::AlreadyDone) => Ok(()),
            Ok(Cancelled::Unknown) => Err(unknown(task_id)),
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }
}

/// `{job id}.{created, Unix ms}.{seal}`: the seal binds both to the
/// caller's identity.
async fn seal(
    seals: &Seals,
    job_id: &str,
    created: SystemTime,
    caller: &Caller,
) -> Result<String, ErrorData> {
    let ms = created
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis()
        .to_string();
    let sealed = seals.seal(&parts(job_id, &ms, caller), 16).await?;
    Ok(format!("{job_id}.{ms}.{sealed}"))
}

fn parts(job_id: &str, ms: &str, caller: &Caller) -> [Vec<u8>; 4] {
    [
        b"task".to_vec(),
        job_id.as_bytes().to_vec(),
        ms.as_bytes().to_vec(),
        caller.principal().into_bytes(),
    ]
}

/// The job id and creation time of `task_id`, when it is `caller`'s.
async fn open<'a>(
    seals: &Seals,
    task_id: &'a str,
    caller: &Caller,
) -> Result<(&'a str, SystemTime), ErrorData> {
    let mut fields = task_id.splitn(3, '.');
    let (Some(job_id), Some(ms), Some(sealed)) = (fields.next(), fields.next(), fields.next())
    else {
        return Err(unknown(task_id));
    };
    let Ok(at) = ms.parse::<u64>() else {
        return Err(unknown(task_id));
    };
    if !seals.opens(sealed, &parts(job_id, ms, caller), 16).await? {
        return Err(unknown(task_id));
    }
    Ok((job_id, UNIX_EPOCH + Duration::from_millis(at)))
}

/// The same answer for a task that does not exist and for another caller's.
fn unknown(task_id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("no task `{task_id}` of yours is known here"),
        Some(serde_json::json!({ "taskId": task_id })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_id_opens_for_its_own_caller_and_secret_only() {
        let ann = Caller {
            user_id: Some("ann".into()),
            ..Caller::default()
        };
        let bob = Caller {
            user_id: Some("bob".into()),
            ..Caller::default()
        };
        let seals = Seals::own();
        let at = UNIX_EPOCH + Duration::from_millis(1_764_108_600_123);
        let id = seal(&seals, "0b4f8a62-2f1e-4b7e-9a43-5d8c1e0f7a21", at, &ann)
            .await
            .unwrap();
        let (job, created) = open(&seals, &id, &ann).await.unwrap();
        assert_eq!(job, "0b4f8a62-2f1e-4b7e-9a43-5d8c1e0f7a21");
        assert_eq!(created, at);
        assert!(
            open(&seals, &id, &bob).await.is_err(),
            "another caller's task is unknown"
        );
        assert!(open(&seals, &id, &Caller::default()).await.is_err());
        assert!(open(&seals, "not-a-task", &ann).await.is_err());
        let moved = id.replacen(".1764108600123.", ".1764108600124.", 1);
        assert!(
            open(&seals, &moved, &ann).await.is_err(),
            "the time is sealed too"
        );
        // Without the secret, no id can be made: another server's secret
        // opens nothing.
        assert!(open(&Seals::own(), &id, &ann).await.is_err());
    }
}
