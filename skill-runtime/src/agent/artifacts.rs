//! What an agent run leaves behind (seed 002's rule R3): its state as a
//! `GraphState` (its skill calls are the nodes), saved in the runtime's run
//! store, and, when the runner is given a directory, three files named
//! `{agent_id}.{timestamp}`:
//! - `.audit.md`: what ran, what was decided, the escalation, the budget;
//! - `.backlog.json`: what remains (failed calls, an escalation pending);
//! - `.graph.json`: the nodes walked with their timings, and the edges
//!   between them (the agent to each call, in order).

use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::agent::contract::AgentContract;
use crate::agent::run::{AgentFailure, EscalationDecision};
use crate::exec::policy::BoxFuture;
use crate::model::graph::{GraphError, GraphState, GraphStatus};
use crate::model::id::Id;
use crate::model::result::Artifact;
use crate::model::time::format_time;

/// One finished agent run, as the artifacts describe it.
pub(crate) struct RunSummary<'a> {
    pub contract: &'a AgentContract,
    pub job_id: &'a Id,
    pub trace_id: &'a Id,
    pub output: &'a Result<Value, AgentFailure>,
    pub escalation: Option<&'a EscalationDecision>,
    /// The run the escalation started, when it ran: its job id and whether
    /// it succeeded.
    pub escalated_to: Option<(&'a Id, bool)>,
    /// The run this one was escalated from.
    pub escalated_from: Option<&'a Id>,
    pub started_at: SystemTime,
    pub completed_at: SystemTime,
}

/// The run's `GraphState` as it ended: its skill calls were noted as they
/// ended; its own failure, output and status are added.
pub(crate) fn finished(s: &RunSummary<'_>, mut state: GraphState) -> GraphState {
    if let Err(f) = s.output {
        state.errors.push(GraphError {
            node: s.contract.id.to_owned(),
            message: f.message.clone(),
            timestamp: format_time(s.completed_at),
            recoverable: f.retryable,
        });
    }
    state.output = s.output.as_ref().ok().cloned();
    state.status = if s.output.is_ok() {
        GraphStatus::Succeeded
    } else {
        GraphStatus::Failed
    };
    state
}

/// Where a run's R3 files are kept: a directory ([`DirArtifacts`]), or a
/// store the fleet shares (the Redis backend's `artifact_store`).
pub trait ArtifactStore: Send + Sync {
    /// Keep `text` as the file `name`: the artifact it is now, named
    /// `name`, its `uri` where it is (a path, a key).
    fn put<'a>(&'a self, name: &'a str, text: String) -> BoxFuture<'a, Result<Artifact, String>>;

    /// The text of the file kept at `uri` (as [`ArtifactStore::put`] gave
    /// it), when it is still kept: what serves a run's R3 files to its
    /// caller as MCP resources. A store that cannot read its files back
    /// keeps the default, which finds none.
    fn get<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        let _ = uri;
        Box::pin(std::future::ready(Ok(None)))
    }
}

/// R3 files as files of a directory, created when missing.
#[derive(Clone, Debug)]
pub struct DirArtifacts {
    dir: PathBuf,
}

impl DirArtifacts {
    /// Files in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> DirArtifacts {
        DirArtifacts { dir: dir.into() }
    }
}

impl ArtifactStore for DirArtifacts {
    fn put<'a>(&'a self, name: &'a str, text: String) -> BoxFuture<'a, Result<Artifact, String>> {
        let written = std::fs::create_dir_all(&self.dir)
            .and_then(|()| {
                let path = self.dir.join(name);
                std::fs::write(&path, text).map(|()| path)
            })
            .map(|p| Artifact::file(name, p.display().to_string()))
            .map_err(|e| format!("{}: {e}", self.dir.display()));
        Box::pin(std::future::ready(written))
    }

    fn get<'a>(&'a self, uri: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        // Only a file of this directory: `uri` is a path `put` gave.
        let path = std::path::Path::new(uri);
        let read = if path.parent() != Some(self.dir.as_path()) {
            Ok(None)
        } else {
            match std::fs::read_to_string(path) {
                Ok(text) => Ok(Some(text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("{uri}: {e}")),
            }
        };
        Box::pin(std::future::ready(read))
    }
}

/// The three R3 files of `state`'s run: names
/// (`{agent_id}.{time}.{job_id}.audit.md`, `.backlog.json`, `.graph.json`)
/// and contents. The job id makes each run's names its own: two runs of one
/// agent started in the same millisecond (on two workers of a fleet, for
/// two callers) never write over each other's files.
pub(crate) fn files(s: &RunSummary<'_>, state: &GraphState) -> [(String, String); 3] {
    // A file name's time: RFC 3339 without the colons some systems refuse.
    let stamp = format_time(s.started_at).replace(':', "-");
    let base = format!("{}.{stamp}.{}", s.contract.id, s.job_id);
    [
        (format!("{base}.audit.md"), audit_md(s, state)),
        (format!("{base}.backlog.json"), pretty(&backlog(s, state))),
        (format!("{base}.graph.json"), pretty(&graph(s, state))),
    ]
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

fn audit_md(s: &RunSummary<'_>, state: &GraphState) -> String {
    let c = s.contract;
    let mut md = format!(
        "# Audit: {} {} ({})\n\n- run: `{}`\n- trace: `{}`\n- started: {}\n- ended: {}\n- outcome: {}\n",
        c.id,
        c.version,
        c.name,
        s.job_id,
        s.trace_id,
        format_time(s.started_at),
        format_time(s.completed_at),
        match s.output {
            Ok(_) => "succeeded".to_owned(),
            Err(f) => format!("failed: `{}`: {}", f.code, f.message),
        }
    );
    if let Some(from) = s.escalated_from {
        md.push_str(&format!("- escalated from run `{from}`\n"));
    }
    md.push_str("\n## What ran\n\n");
    if state.nodes.is_empty() {
        md.push_str("No skill call.\n");
    }
    for n in &state.nodes {
        md.push_str(&format!(
            "- `{}` ({}{}), job `{}`, {} to {}\n",
            n.node,
            if n.status == GraphStatus::Succeeded {
                "succeeded"
            } else {
                "failed"
            },
            if n.replayed { ", replayed" } else { "" },
            n.job_id,
            n.started_at,
            n.completed_at
        ));
    }
    md.push_str("\n## Decisions\n\n");
    match s.escalation {
        Some(e) => {
            md.push_str(&format!(
                "- escalate to `{}` ({}; {} hours to answer): {}\n",
                e.target_agent,
                if e.human_required {
                    "a person must take it up"
                } else {
                    "run at once"
                },
                e.timeout_hours,
                e.reasons.join("; ")
            ));
            match s.escalated_to {
                Some((id, ok)) => md.push_str(&format!(
                    "- `{}` ran as run `{id}`: {}\n",
                    e.target_agent,
                    if ok { "succeeded" } else { "failed" }
                )),
                None => md.push_str("- the escalation is pending (see the backlog)\n"),
            }
        }
        None if s.output.is_ok() => md.push_str("- complete: no escalation trigger held\n"),
        None => md.push_str("- no escalation: the caller decides what to do with the failure\n"),
    }
    let b = &state.budget;
    md.push_str(&format!(
        "\n## Budget\n\n- skill calls: {}\n- tokens used: {} (remaining {})\n- documents retrieved: {}\n- failed calls: {}\n",
        b.api_calls,
        b.tokens_used,
        b.tokens_remaining,
        b.docs_retrieved,
        state.errors.len()
    ));
    md
}

fn backlog(s: &RunSummary<'_>, state: &GraphState) -> Value {
    let pending = s.escalation.filter(|_| s.escalated_to.is_none()).map(|e| {
        json!({
            "target_agent": e.target_agent,
            "human_required": e.human_required,
            "timeout_hours": e.timeout_hours,
            "reasons": e.reasons,
        })
    });
    json!({
        "agent": s.contract.id,
        "run": s.job_id,
        "failed": state.errors,
        "escalations_pending": pending.into_iter().collect::<Vec<_>>(),
    })
}

fn graph(s: &RunSummary<'_>, state: &GraphState) -> Value {
    let root = s.contract.id;
    let mut edges: Vec<Value> = Vec::new();
    let mut previous = root.to_owned();
    for n in &state.nodes {
        edges.push(json!({"from": previous, "to": n.node}));
        previous = n.node.clone();
    }
    if let (Some(e), Some((id, _))) = (s.escalation, s.escalated_to) {
        edges.push(json!({"from": root, "to": e.target_agent, "run": id, "kind": "escalation"}));
    }
    json!({
        "agent": root,
        "run": s.job_id,
        "nodes": state.nodes,
        "edges": edges,
    })
}
