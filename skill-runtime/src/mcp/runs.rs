//! The caller's own runs as MCP resources: `skill://runs/{job_id}`, a job
//! this server ran for the caller (listed by `resources/list`; a tool
//! result's `_meta` also names its `job_id` when the server gives ids).
//! While the job runs, the resource is its progress; once it ended, its run
//! record (redacted as records are). Listed newest first, completed by job
//! id, and its subscribers are told as it progresses and when it ends. A run
//! of another principal is "not found", exactly as an unknown one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::{Value, json};

use crate::contract::watch::Watch;
use crate::exec::sink::MemorySink;
use crate::mcp::published::Subscribers;
use crate::model::caller::Caller;
use crate::model::id::Id;
use crate::model::record::{Progress, RunRecord};
use crate::model::time::format_time;
use crate::sync::lock;

/// A run of the caller's, by job id.
pub(crate) const RUN_TEMPLATE: &str = "skill://runs/{job_id}";
const RUN_PREFIX: &str = "skill://runs/";
const JSON: &str = "application/json";
/// How many ended runs a server keeps the records of, all callers together,
/// when its runtime keeps none in memory.
/// A record keeps at most `Limits::max_record_value_bytes` of params and of
/// output: a few megabytes at most, whatever clients send.
const KEPT: usize = 256;
/// How many of the caller's ended runs `resources/list` shows.
const LISTED: usize = 20;

/// The URI of job `job_id`'s run.
pub(crate) fn uri_of(job_id: &str) -> String {
    format!("{RUN_PREFIX}{job_id}")
}

/// The job a run URI names, by its shape.
pub(crate) fn job_of(uri: &str) -> Option<&str> {
    uri.strip_prefix(RUN_PREFIX)
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

/// A job running for a caller.
struct Running {
    job_id: Id,
    caller: Caller,
    skill: &'static str,
    started_at: SystemTime,
    progress: Option<Progress>,
}

/// The runs of a server's callers: those in flight (a handful: a list, no
/// hashing), and the records of those that ended: the runtime's own, when
/// it keeps them in memory, else the last [`KEPT`] the jobs' watchers
/// handed over.
pub(crate) struct Runs {
    in_flight: Mutex<Vec<Running>>,
    memory: Option<Arc<MemorySink>>,
    ended: Mutex<VecDeque<Arc<RunRecord>>>,
}

/// A job in flight, taken out of [`Runs`] when dropped (ended, or its call
/// dropped).
pub(crate) struct Started {
    runs: Arc<Runs>,
    job_id: Id,
}

impl Started {
    /// The job's id.
    pub(crate) fn job_id(&self) -> &str {
        self.job_id.as_str()
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let mut in_flight = lock(&self.runs.in_flight);
        if let Some(i) = in_flight.iter().position(|r| r.job_id == self.job_id) {
            in_flight.swap_remove(i);
        }
    }
}

impl Runs {
    /// The runs of a server whose runtime keeps `memory`'s records.
    pub(crate) fn new(memory: Option<Arc<MemorySink>>) -> Runs {
        Runs {
            in_flight: Mutex::default(),
            memory,
            ended: Mutex::default(),
        }
    }

    /// Job `job_id` of `skill` starts for `caller`, watched by `watch`:
    /// its progress noted and told to the run's subscribers, and its record
    /// kept when it ends (unless the runtime keeps records in memory).
    pub(crate) fn start(
        self: &Arc<Self>,
        subscribers: &Arc<Subscribers>,
        job_id: &Id,
        skill: &'static str,
        caller: &Caller,
        mut watch: Watch,
    ) -> (Started, Watch) {
        lock(&self.in_flight).push(Running {
            job_id: job_id.clone(),
            caller: caller.clone(),
            skill,
            started_at: SystemTime::now(),
            progress: None,
        });
        let told = watch.progress.take();
        let (runs, subscribers, id) = (self.clone(), subscribers.clone(), job_id.clone());
        watch = watch.on_progress(move |p| {
            if let Some(told) = &told {
                told(p);
            }
            if let Some(run) = lock(&runs.in_flight).iter_mut().find(|r| r.job_id == id) {
                run.progress = Some(p.clone());
            }
            if subscribers.any() {
                let uri = uri_of(id.as_str());
                if subscribers.wanted(&uri) {
                    let subscribers = subscribers.clone();
                    tokio::spawn(async move { subscribers.updated(&uri).await });
                }
            }
        });
        if self.memory.is_none() {
            let runs = self.clone();
            watch = watch.on_record(move |record| {
                let mut ended = lock(&runs.ended);
                if ended.len() == KEPT {
                    ended.pop_front();
                }
                ended.push_back(record.clone());
            });
        }
        let started = Started {
            runs: self.clone(),
            job_id: job_id.clone(),
        };
        (started, watch)
    }

    /// The records of ended runs, oldest first.
    fn records(&self) -> Vec<Arc<RunRecord>> {
        match &self.memory {
            Some(memory) => memory.records(),
            None => lock(&self.ended).iter().cloned().collect(),
        }
    }

    /// The run `job_id` as its resource shows it, if `owner`'s: its
    /// progress while it runs, then its record.
    fn shown(&self, job_id: &str, owner: &str) -> Option<Value> {
        if let Some(run) = lock(&self.in_flight)
            .iter()
            .find(|r| r.job_id.as_str() == job_id)
        {
            return (run.caller.principal() == owner).then(|| {
                json!({
                    "job_id": job_id,
                    "skill": run.skill,
                    "status": "running",
                    "started_at": format_time(run.started_at),
                    "progress": run.progress,
                })
            });
        }
        let record = self
            .records()
            .into_iter()
            .rev()
            .find(|r| r.job_id.as_str() == job_id)?;
        (record.caller.principal() == owner)
            .then(|| serde_json::to_value(&*record).ok())
            .flatten()
    }

    /// Whether run `job_id` is known here and belongs to another principal
    /// than `caller` (a run not started yet is nobody's).
    pub(crate) fn foreign(&self, job_id: &str, caller: &Caller) -> bool {
        let owner = caller.principal();
        if let Some(run) = lock(&self.in_flight)
            .iter()
            .find(|r| r.job_id.as_str() == job_id)
        {
            return run.caller.principal() != owner;
        }
        self.records()
            .iter()
            .rev()
            .find(|r| r.job_id.as_str() == job_id)
            .is_some_and(|r| r.caller.principal() != owner)
    }

    /// `resources/read` of a run URI: `None` when `uri` names no run.
    pub(crate) fn read(
        &self,
        uri: &str,
        caller: &Caller,
    ) -> Option<Result<ReadResourceResult, ErrorData>> {
        let job_id = job_of(uri)?;
        Some(match self.shown(job_id, &caller.principal()) {
            Some(value) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(value.to_string(), uri).with_mime_type(JSON),
            ])),
            None => Err(not_found(uri, job_id)),
        })
    }

    /// The caller's runs, newest first: those in flight, then its last
    /// ended ones. Each with the job id and what it is.
    fn of(&self, caller: &Caller) -> Vec<(String, String)> {
        let owner = caller.principal();
        let mut runs: Vec<(String, String)> = lock(&self.in_flight)
            .iter()
            .rev()
            .filter(|r| r.caller.principal() == owner)
            .map(|r| {
                (
                    r.job_id.as_str().to_owned(),
                    format!("{}: running", r.skill),
                )
            })
            .collect();
        runs.extend(
            self.records()
                .iter()
                .rev()
                .filter(|r| r.caller.principal() == owner)
                .map(|r| {
                    let status = serde_json::to_value(r.status).unwrap_or_default();
                    let status = status.as_str().unwrap_or_default();
                    (
                        r.job_id.as_str().to_owned(),
                        format!("{}: {status}", r.skill),
                    )
                }),
        );
        runs
    }

    /// `resources/list`'s runs of `caller`: those in flight and its last
    /// [`LISTED`] ended ones.
    pub(crate) fn listed(&self, caller: &Caller) -> Vec<Resource> {
        self.of(caller)
            .into_iter()
            .take(LISTED)
            .map(|(id, what)| {
                Resource::new(uri_of(&id), format!("run {id}"))
                    .with_title(what)
                    .with_mime_type(JSON)
            })
            .collect()
    }

    /// The job ids of `caller`'s runs, newest first, for completion.
    pub(crate) fn job_ids(&self, caller: &Caller) -> Vec<String> {
        self.of(caller).into_iter().map(|(id, _)| id).collect()
    }
}

/// The answer for a run the caller has no run of: the same whether it does
/// not exist or is another principal's.
pub(crate) fn not_found(uri: &str, job_id: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!(
            "no run `{job_id}` of yours on this server: `{RUN_TEMPLATE}` names a job \
             this server ran for you, while it runs and for its last {KEPT} runs"
        ),
        Some(json!({ "uri": uri })),
    )
}

/// The run template, for `resources/templates/list`.
pub(crate) fn template() -> ResourceTemplate {
    ResourceTemplate::new(RUN_TEMPLATE, "run")
        .with_title("A run of yours")
        .with_description(
            "A job this server ran for you, by job id (resources/list names your runs; \
             a tool result's _meta gives its job_id when the server gives ids): its \
             progress while it runs, then its run record (stages, outcome, output, \
             redacted as records are). Subscribe to hear it progress and end.",
        )
        .with_mime_type(JSON)
}
