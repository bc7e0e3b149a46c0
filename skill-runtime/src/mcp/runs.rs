//! The caller's own runs as MCP resources: `skill://runs/{job_id}`, a job
//! this server ran for the caller (listed by `resources/list`; a tool
//! result's `_meta` also names its `job_id` when the server gives ids).
//! While the job runs, the resource is its progress; once it ended, its run
//! record (redacted as records are). Listed newest first, completed by job
//! id, and its subscribers are told as it progresses and when it ends. An
//! agent's run is shown once it ended, as its result (outcome, metrics,
//! next action, hand-over, notes), with its R3 files as resources of their
//! own: `skill://runs/{job_id}/artifacts/{name}`. A run of another principal
//! is "not found", exactly as an unknown one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::{Value, json};

use crate::agent::outcome::AgentResult;
use crate::contract::watch::Watch;
use crate::exec::sink::MemorySink;
use crate::mcp::subscribers::Subscribers;
use crate::model::caller::Caller;
use crate::model::id::Id;
use crate::model::record::{Progress, RunRecord};
use crate::model::time::format_time;
use crate::sync::lock;

/// A run of the caller's, by job id.
pub(crate) const RUN_TEMPLATE: &str = "skill://runs/{job_id}";
/// An R3 file of an agent's run of the caller's.
pub(crate) const ARTIFACT_TEMPLATE: &str = "skill://runs/{job_id}/artifacts/{name}";
const RUN_PREFIX: &str = "skill://runs/";
const ARTIFACTS: &str = "/artifacts/";
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

/// Run `job_id`'s R3 file `name`, by the shape of `uri`.
pub(crate) fn artifact_of(uri: &str) -> Option<(&str, &str)> {
    let (job_id, name) = uri.strip_prefix(RUN_PREFIX)?.split_once(ARTIFACTS)?;
    (!job_id.is_empty() && !job_id.contains('/') && !name.is_empty() && !name.contains('/'))
        .then_some((job_id, name))
}

/// The URI of run `job_id`'s R3 file `name`.
fn artifact_uri(job_id: &str, name: &str) -> String {
    format!("{RUN_PREFIX}{job_id}{ARTIFACTS}{name}")
}

/// An agent's run that ended: what its resource shows, and where its R3
/// files are kept (name, media type, the store's own URI).
struct AgentRun {
    caller: Caller,
    job_id: Id,
    agent: String,
    success: bool,
    ended_at: SystemTime,
    shown: Value,
    files: Vec<(String, String, String)>,
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
    agents: Mutex<VecDeque<AgentRun>>,
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
            agents: Mutex::default(),
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
            // Its owner, named only when someone follows the run (a call
            // nobody follows pays nothing for it).
            let mut owner = None;
            if let Some(run) = lock(&runs.in_flight).iter_mut().find(|r| r.job_id == id) {
                run.progress = Some(p.clone());
                if subscribers.any() {
                    owner = Some(run.caller.principal());
                }
            }
            if let Some(owner) = owner {
                let uri = uri_of(id.as_str());
                if subscribers.wanted(&uri) {
                    let subscribers = subscribers.clone();
                    tokio::spawn(async move { subscribers.updated(&uri, Some(&owner)).await });
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

    /// Agent run `result` ended for `caller`: kept (the last [`KEPT`]) to
    /// be read and listed, its output shown up to `max_bytes` of JSON (past
    /// it, its size), its R3 files named by their resources' URIs.
    pub(crate) fn agent_ended(&self, caller: &Caller, result: &AgentResult, max_bytes: usize) {
        let job_id = result.job_id.as_str();
        let size = serde_json::to_string(&result.data).map_or(0, |t| t.len());
        let output = if size <= max_bytes {
            result.data.clone()
        } else {
            json!({ "truncated": true, "bytes": size })
        };
        let files: Vec<(String, String, String)> = result
            .artifacts
            .iter()
            .filter_map(|a| Some((a.name.clone(), a.kind.clone(), a.uri.clone()?)))
            .collect();
        let shown = json!({
            "job_id": job_id,
            "trace_id": result.trace_id.as_str(),
            "agent": result.agent,
            "status": if result.success { "succeeded" } else { "failed" },
            "output": output,
            "error": result.error,
            "metrics": result.metrics,
            "next_action": result.next_action,
            "escalation": result.escalation,
            "escalation_job": result.escalation_job.as_ref().map(Id::as_str),
            "escalated_job": result.escalated.as_ref().map(|r| r.job_id.as_str()),
            "notes": result.notes,
            "artifacts": files.iter().map(|(name, kind, _)| json!({
                "name": name,
                "kind": kind,
                "uri": artifact_uri(job_id, name),
            })).collect::<Vec<_>>(),
        });
        let mut agents = lock(&self.agents);
        if agents.len() == KEPT {
            agents.pop_front();
        }
        agents.push_back(AgentRun {
            caller: caller.clone(),
            job_id: result.job_id.clone(),
            agent: result.agent.clone(),
            success: result.success,
            ended_at: SystemTime::now(),
            shown,
            files,
        });
    }

    /// Where R3 file `name` of run `job_id` is kept (the store's URI) and
    /// its media type, if the run is an agent's of `caller` that wrote it.
    pub(crate) fn artifact(
        &self,
        job_id: &str,
        name: &str,
        caller: &Caller,
    ) -> Option<(String, String)> {
        let owner = caller.principal();
        lock(&self.agents)
            .iter()
            .rev()
            .find(|r| r.job_id.as_str() == job_id && r.caller.principal() == owner)?
            .files
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, kind, at)| (at.clone(), kind.clone()))
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
        if let Some(run) = lock(&self.agents)
            .iter()
            .rev()
            .find(|r| r.job_id.as_str() == job_id)
        {
            return (run.caller.principal() == owner).then(|| run.shown.clone());
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
        if let Some(run) = lock(&self.agents)
            .iter()
            .rev()
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
        // Ended: skills' records and agents' runs, newest first (an agent's
        // run shown once, as the agent's, though the runtime recorded it too).
        let agents = lock(&self.agents);
        let mut ended: Vec<(SystemTime, String, String)> = agents
            .iter()
            .filter(|r| r.caller.principal() == owner)
            .map(|r| {
                let status = if r.success { "succeeded" } else { "failed" };
                (
                    r.ended_at,
                    r.job_id.as_str().to_owned(),
                    format!("{}: {status}", r.agent),
                )
            })
            .collect();
        ended.extend(
            self.records()
                .iter()
                .filter(|r| r.caller.principal() == owner)
                .filter(|r| !agents.iter().any(|a| a.job_id == r.job_id))
                .map(|r| {
                    let status = serde_json::to_value(r.status).unwrap_or_default();
                    let status = status.as_str().unwrap_or_default();
                    (
                        r.completed_at,
                        r.job_id.as_str().to_owned(),
                        format!("{}: {status}", r.skill),
                    )
                }),
        );
        ended.sort_by_key(|(at, _, _)| std::cmp::Reverse(*at));
        runs.extend(ended.into_iter().map(|(_, id, what)| (id, what)));
        runs
    }

    /// `resources/list`'s runs of `caller`: those in flight and its last
    /// [`LISTED`] ended ones.
    /// (An agent's run is followed by its R3 files.)
    pub(crate) fn listed(&self, caller: &Caller) -> Vec<Resource> {
        let mut listed = Vec::new();
        for (id, what) in self.of(caller).into_iter().take(LISTED) {
            listed.push(
                Resource::new(uri_of(&id), format!("run {id}"))
                    .with_title(what)
                    .with_mime_type(JSON),
            );
            let agents = lock(&self.agents);
            let Some(run) = agents.iter().rev().find(|r| r.job_id.as_str() == id) else {
                continue;
            };
            listed.extend(run.files.iter().map(|(name, kind, _)| {
                Resource::new(artifact_uri(&id, name), name.clone())
                    .with_title(format!("{}: {name}", run.agent))
                    .with_mime_type(kind.clone())
            }));
        }
        listed
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

/// The answer for an R3 file the caller has no run with: the same whether
/// the run or the file does not exist, or the run is another principal's.
pub(crate) fn no_artifact(uri: &str, job_id: &str, name: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!(
            "no file `{name}` of a run `{job_id}` of yours on this server: \
             `{ARTIFACT_TEMPLATE}` names an R3 file an agent's run wrote for you \
             (the run's resource lists them), while its store keeps it"
        ),
        Some(json!({ "uri": uri })),
    )
}

/// The R3 file template, for `resources/templates/list`.
pub(crate) fn artifact_template() -> ResourceTemplate {
    ResourceTemplate::new(ARTIFACT_TEMPLATE, "run artifact")
        .with_title("An R3 file of a run of yours")
        .with_description(
            "A file an agent's run wrote for you (its audit, backlog or graph), by the \
             run's job id and the file's name, as the run's resource lists them.",
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
