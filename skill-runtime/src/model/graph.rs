//! The state of one multi-step run (seed 002's `GraphState`), as the
//! runtime keeps it for every pipeline run: where the run is
//! (`currentNode`), what it has done (`visitedNodes`, each node's output in
//! `intermediate`), what it has spent (`budget`), what went wrong
//! (`errors`), and what it is to produce (`output`). The runtime saves it
//! after each node ([`crate::policy::RunStore`]); a run taken over after
//! its worker died resumes at the first node not completed. Field names are
//! the seed's (camelCase).

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::envelope::JobEnvelope;
use crate::model::error::InvokeError;
use crate::model::id::Id;
use crate::model::result::{Artifact, NextAction, SkillResult};
use crate::model::time::format_time;

/// One run's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphState {
    /// The job the run is (its id is the run's id): its whole envelope, as
    /// seed 002's GraphState keeps it.
    #[serde(deserialize_with = "job_of_any_version")]
    pub job: JobEnvelope,
    /// The node running now, or about to; `None` once the run ended.
    pub current_node: Option<String>,
    /// The nodes completed, in the order they completed.
    pub visited_nodes: Vec<String>,
    /// How many times the run was taken up again after it stopped part way
    /// (its worker died, or it was retried).
    pub retry_count: u32,
    /// The run's input (the envelope's payload, as the run was started
    /// with it).
    pub input: Value,
    /// Each completed node's output, by node id.
    pub intermediate: Map<String, Value>,
    /// The run's output, once it completed.
    pub output: Option<Value>,
    /// What retrieval found for the run, when the caller sent it.
    pub rag_context: Option<Value>,
    /// What the run has spent of the job's constraints.
    pub budget: GraphBudget,
    /// What failed, node by node.
    pub errors: Vec<GraphError>,
    /// What the nodes produced besides their outputs (seed 002's
    /// `artifacts`: name, kind, where).
    #[serde(deserialize_with = "artifacts_of_any_version")]
    pub artifacts: Vec<Artifact>,
    /// `running`, `succeeded` or `failed`.
    pub status: GraphStatus,
    /// Each node's runs: when, as which job, and whether its result was
    /// replayed (an addition to the seed: the timings of the walk).
    pub nodes: Vec<NodeRun>,
}

/// What states saved before runs kept their whole envelope held: the ids,
/// `name@version` and the intent. Read as an envelope of those, so a run
/// saved by an earlier version still resumes.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JobBefore {
    job_id: Id,
    trace_id: Id,
    skill: String,
    intent: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum AnyJob {
    Envelope(Box<JobEnvelope>),
    Before(JobBefore),
}

/// Artifacts as states saved before they kept whole artifacts wrote them
/// (each its URI or name, a string) or as they are now.
fn artifacts_of_any_version<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<Artifact>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum AnyArtifact {
        Now(Artifact),
        Before(String),
    }
    Ok(Vec::<AnyArtifact>::deserialize(d)?
        .into_iter()
        .map(|a| match a {
            AnyArtifact::Now(a) => a,
            AnyArtifact::Before(at) => {
                let name = at.rsplit(['/', ':']).next().unwrap_or(&at).to_owned();
                Artifact::file(name, at)
            }
        })
        .collect())
}

fn job_of_any_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<JobEnvelope, D::Error> {
    Ok(match AnyJob::deserialize(d)? {
        AnyJob::Envelope(job) => *job,
        AnyJob::Before(b) => {
            let (name, version) = crate::model::envelope::split_reference(&b.skill);
            let mut job = JobEnvelope::of(
                name.to_owned().into(),
                version.map(|v| v.to_owned().into()),
                Value::Object(Map::new()),
                crate::model::caller::Caller::default(),
            );
            job.job_id = b.job_id;
            job.trace_id = b.trace_id;
            job.intent = b.intent;
            job.minted = false;
            job
        }
    })
}

/// What a run has spent (the seed's `budget`): `tokensRemaining` counts down
/// from the job's `maxTokens`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphBudget {
    /// Tokens the nodes reported.
    pub tokens_used: u64,
    /// What is left of the job's `maxTokens`: each node runs with it as its
    /// own budget, so the node that crosses the run's budget fails.
    pub tokens_remaining: u64,
    /// Documents the nodes reported retrieving.
    pub docs_retrieved: u64,
    /// Skill and op jobs the run started.
    pub api_calls: u64,
}

/// A node's failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphError {
    /// The node that failed.
    pub node: String,
    /// Its error, as the caller would read it.
    pub message: String,
    /// RFC 3339.
    pub timestamp: String,
    /// Whether trying the node again may work (its failure mode's
    /// `retryable`).
    pub recoverable: bool,
}

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GraphStatus {
    /// Started and not ended (or its worker died).
    Running,
    /// Every node completed.
    Succeeded,
    /// A node failed.
    Failed,
    /// A node whose guard did not hold: it did not run (nodes only).
    Skipped,
}

/// One run of one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRun {
    /// The node's id.
    pub node: String,
    /// The node's job.
    pub job_id: Id,
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339.
    pub completed_at: String,
    /// `succeeded` or `failed`.
    pub status: GraphStatus,
    /// Its result came from the idempotency store: an earlier run of the
    /// node (on a worker that died before saving the state) had finished.
    pub replayed: bool,
}

impl GraphState {
    /// A run's state before its first node: nothing done, the job's whole
    /// `maxTokens` left.
    pub(crate) fn new(job: JobEnvelope, input: Value, max_tokens: u64) -> GraphState {
        GraphState {
            job,
            current_node: None,
            visited_nodes: Vec::new(),
            retry_count: 0,
            input,
            intermediate: Map::new(),
            output: None,
            rag_context: None,
            budget: GraphBudget {
                tokens_remaining: max_tokens,
                ..GraphBudget::default()
            },
            errors: Vec::new(),
            artifacts: Vec::new(),
            status: GraphStatus::Running,
            nodes: Vec::new(),
        }
    }

    /// Note how node `node` (job `job_id`, from `started_at` to
    /// `completed_at`) ended: what it spent and produced, or its failure.
    /// Note that `node`'s guard did not hold: it did not run, and has no
    /// job of its own (its record names the run's).
    pub(crate) fn skip(&mut self, node: &str, at: SystemTime) {
        if self.nodes.iter().any(|n| n.node == node) {
            return;
        }
        self.nodes.push(NodeRun {
            node: node.to_owned(),
            job_id: self.job.job_id.clone(),
            started_at: format_time(at),
            completed_at: format_time(at),
            status: GraphStatus::Skipped,
            replayed: false,
        });
    }

    pub(crate) fn note(
        &mut self,
        node: &str,
        job_id: Id,
        started_at: SystemTime,
        completed_at: SystemTime,
        result: &Result<SkillResult, InvokeError>,
    ) {
        self.budget.api_calls += 1;
        let (status, replayed) = match result {
            Ok(r) => {
                let tokens = r.metrics.tokens_used.unwrap_or(0);
                self.budget.tokens_used += tokens;
                self.budget.tokens_remaining = self.budget.tokens_remaining.saturating_sub(tokens);
                self.budget.docs_retrieved += r.metrics.docs_retrieved.unwrap_or(0);
                self.artifacts.extend(r.artifacts.iter().cloned());
                // Parsed once and kept: a pipeline reads the same output next.
                self.intermediate
                    .insert(node.to_owned(), r.data.value().clone());
                self.visited_nodes.push(node.to_owned());
                (GraphStatus::Succeeded, r.replayed)
            }
            Err(e) => {
                self.errors.push(GraphError {
                    node: node.to_owned(),
                    message: e.to_string(),
                    timestamp: format_time(completed_at),
                    recoverable: e.next_action() == NextAction::Retry,
                });
                (GraphStatus::Failed, false)
            }
        };
        self.nodes.push(NodeRun {
            node: node.to_owned(),
            job_id,
            started_at: format_time(started_at),
            completed_at: format_time(completed_at),
            status,
            replayed,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::GraphState;

    #[test]
    fn a_state_saved_before_runs_kept_their_envelope_still_reads() {
        let before = r#"{"job": {"jobId": "0b4f8a62-2f1e-4b7e-9a43-5d8c1e0f7a21",
            "traceId": "1c5f8a62-2f1e-4b7e-9a43-5d8c1e0f7a21", "skill": "durable_tally@1.0.0",
            "intent": null}, "currentNode": "n2", "visitedNodes": ["n1"], "retryCount": 0,
            "input": {}, "intermediate": {}, "output": null, "ragContext": null,
            "budget": {"tokensUsed": 0, "tokensRemaining": 10, "docsRetrieved": 0, "apiCalls": 1},
            "errors": [], "artifacts": [], "status": "running", "nodes": []}"#;
        let state: GraphState = serde_json::from_str(before).unwrap();
        assert_eq!(state.job.reference(), "durable_tally@1.0.0");
        assert_eq!(
            state.job.job_id.as_str(),
            "0b4f8a62-2f1e-4b7e-9a43-5d8c1e0f7a21"
        );
        let again: GraphState =
            serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
        assert_eq!(again, state, "written whole, read back the same");
    }
}
