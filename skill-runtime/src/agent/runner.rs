//! Running an agent by id: its input checked against its schema, its typed
//! run, then the escalation triggers; one run record, in the runtime's sink,
//! like any job's.

use std::borrow::Cow;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use serde_json::Value;
use skill_core::manifest::Severity;

use crate::agent::artifacts::{RunSummary, finished as graph_finished, write};
use crate::agent::contract::{AgentContract, Trigger};
use crate::agent::kpi::{KpiRun, KpiValue};
use crate::agent::registry::AgentRegistry;
pub use crate::agent::run::EscalationDecision;
use crate::agent::run::{AgentFailure, Finished, Started, failed, refused};
use crate::exec::policy::approval::{Approval, ApprovalRequest};
use crate::exec::policy::limits::{kept_in_record, measure, truncated};
use crate::exec::runtime::Runtime;
use crate::model::caller::Caller;
use crate::model::envelope::{JobConstraints, new_id};
use crate::model::graph::{GraphJob, GraphState};
use crate::model::id::Id;
use crate::model::record::{ErrorRecord, RuleNote, RunRecord, RunStatus};
use crate::model::result::NextAction;
use crate::sync::lock;

/// What running an agent gives.
#[derive(Clone, Debug, Serialize)]
pub struct AgentResult {
    /// Whether the run produced an output that passed every check.
    pub success: bool,
    /// The run's id.
    pub job_id: Id,
    /// The run's trace.
    pub trace_id: Id,
    /// `id@version` of the agent that ran.
    pub agent: String,
    /// The output; `null` when the run failed.
    pub data: Value,
    /// Why the run failed, with the contract's error code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<AgentFailure>,
    /// Duration and error count.
    pub metrics: AgentMetrics,
    /// What the caller should do next.
    pub next_action: NextAction,
    /// The hand-over, when a trigger fired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation: Option<EscalationDecision>,
    /// The target's run, when the escalation ran it (one that needs no
    /// person, to an agent of the registry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalated: Option<Box<AgentResult>>,
    /// The R3 files the run wrote (`audit.md`, `backlog.json`,
    /// `graph.json`), when the runner has a directory for them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
}

/// The run an escalation comes from.
struct Handover {
    job_id: Id,
    agent: &'static str,
    reasons: Vec<String>,
    /// Every agent of the chain so far: none is escalated to twice.
    chain: Vec<&'static str>,
}

/// How many hand-overs one run may start, one after the other.
const MAX_CHAIN: usize = 4;

/// What a run cost.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AgentMetrics {
    /// How long the run took.
    pub duration_ms: u64,
    /// Skill calls the run made, and how many failed.
    pub skill_calls: u32,
    /// How many skill jobs of the run failed.
    pub errors: u32,
}

/// Why no agent ran.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("unknown agent `{id}`{}", if .known.is_empty() { String::new() } else { format!("; agents: {}", .known.join(", ")) })]
    /// No agent has this id.
    UnknownAgent {
        /// The id asked for.
        id: String,
        /// The registered ids.
        known: Vec<String>,
    },
}

/// Runs the agents of a registry on a runtime.
#[derive(Clone)]
pub struct AgentRunner {
    runtime: Runtime,
    agents: Arc<AgentRegistry>,
    artifacts: Option<PathBuf>,
    /// How long one of an escalation's `timeout_hours` lasts.
    hour: Duration,
}

impl AgentRunner {
    /// A runner for `agents`, running their skills on `runtime`.
    pub fn new(runtime: Runtime, agents: Arc<AgentRegistry>) -> AgentRunner {
        AgentRunner {
            runtime,
            agents,
            artifacts: None,
            hour: Duration::from_secs(3600),
        }
    }

    /// Write each run's R3 files (`{agent_id}.{timestamp}.audit.md`,
    /// `.backlog.json`, `.graph.json`) into `dir`, created when missing.
    pub fn with_artifacts(mut self, dir: impl Into<PathBuf>) -> AgentRunner {
        self.artifacts = Some(dir.into());
        self
    }

    /// Make one of an escalation's `timeout_hours` last `hour` instead of an
    /// hour: for tests and demos of a hand-over nobody decides on.
    pub fn with_hour_length(mut self, hour: Duration) -> AgentRunner {
        self.hour = hour;
        self
    }

    /// The agents it runs.
    pub fn agents(&self) -> &AgentRegistry {
        &self.agents
    }

    /// Each agent's KPIs over the records the runtime keeps in memory (its
    /// default sink, the last [`MemorySink::DEFAULT_CAPACITY`] jobs); empty
    /// with another sink, whose records `kpis` reads where they are kept
    /// (`skill-examples stats FILE` does for a record file).
    ///
    /// [`MemorySink::DEFAULT_CAPACITY`]: crate::exec::sink::MemorySink::DEFAULT_CAPACITY
    pub fn kpis(&self) -> Vec<(&'static str, Vec<KpiValue>)> {
        let Some(memory) = self.runtime.memory_records() else {
            return Vec::new();
        };
        let records = memory.records();
        let runs: Vec<(&str, KpiRun<'_>)> = records
            .iter()
            .map(|r| {
                let run = KpiRun {
                    succeeded: r.status == RunStatus::Succeeded,
                    duration_us: r.duration_us,
                    output: r.output.as_deref(),
                };
                (&*r.skill, run)
            })
            .collect();
        self.agents.kpis(&runs)
    }

    /// Run agent `id` on `params` for `caller`. A run that fails (bad input,
    /// a pre- or post-condition, the body's error) is a result with
    /// `success: false` and the error's code, like a successful one it has a
    /// run record; only an unknown id is an error.
    ///
    /// An escalation whose trigger held runs its target at once, on the
    /// run's input (the fields the target's input declares), unless it needs
    /// a person (`human_required`): then it is pending, in the result and
    /// the run's backlog. The target's record names this run as its parent.
    pub async fn run(
        &self,
        id: &str,
        params: Value,
        caller: Caller,
        dry_run: bool,
    ) -> Result<AgentResult, AgentError> {
        self.run_linked(id, params, caller, dry_run, None).await
    }

    fn run_linked<'a>(
        &'a self,
        id: &'a str,
        params: Value,
        caller: Caller,
        dry_run: bool,
        from: Option<Handover>,
    ) -> Pin<Box<dyn Future<Output = Result<AgentResult, AgentError>> + Send + 'a>> {
        Box::pin(self.run_once(id, params, caller, dry_run, from))
    }

    async fn run_once(
        &self,
        id: &str,
        params: Value,
        caller: Caller,
        dry_run: bool,
        from: Option<Handover>,
    ) -> Result<AgentResult, AgentError> {
        let Some(agent) = self.agents.get(id) else {
            return Err(AgentError::UnknownAgent {
                id: id.to_owned(),
                known: self
                    .agents
                    .agents()
                    .iter()
                    .map(|a| a.contract().id.to_owned())
                    .collect(),
            });
        };
        let c = agent.contract();
        let (job_id, trace_id) = (new_id(), new_id());
        let started_at = SystemTime::now();
        let clock = Instant::now();
        // Params come from outside (a CLI, an MCP client): the runtime's
        // limits apply as to a skill's, before the schema walks them.
        let limits = self.runtime.params_limits();
        let size = measure(&params, limits.max_depth);
        let too_big = match size {
            None => Some(format!("nests deeper than {} levels", limits.max_depth)),
            Some(n) if n > limits.max_input_bytes => Some(format!(
                "is {n} bytes; the limit is {}",
                limits.max_input_bytes
            )),
            Some(_) => None,
        };
        let violations = match too_big {
            Some(_) => Vec::new(),
            None => agent.validator.violations(&params),
        };
        // The run's state: the body notes each skill call in it.
        let job = GraphJob {
            job_id: job_id.clone(),
            trace_id: trace_id.clone(),
            skill: format!("{}@{}", c.id, c.version),
            intent: None,
        };
        let max_tokens = JobConstraints::default().max_tokens;
        let graph = Arc::new(Mutex::new(GraphState::new(job, params.clone(), max_tokens)));
        let finished = if let Some(why) = too_big {
            Finished {
                output: refused("invalid_input", format!("input for agent `{}` {why}", c.id)),
                errors: 0,
                calls: 0,
            }
        } else if violations.is_empty() {
            let started = Started {
                params: params.clone(),
                job_id: job_id.clone(),
                trace_id: trace_id.clone(),
                dry_run,
                graph: graph.clone(),
            };
            (agent.entry.run)(&self.runtime, started).await
        } else {
            let list: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
            Finished {
                output: refused(
                    "invalid_input",
                    format!("invalid input for agent `{}`: {}", c.id, list.join("; ")),
                ),
                errors: 0,
                calls: 0,
            }
        };
        // Every output is checked against its schema too (the seed's R2):
        // what the type allows may still break a declared range or length.
        let finished = match &finished.output {
            Ok(out) => {
                let broken: Vec<String> = agent
                    .output_validator
                    .violations(out)
                    .iter()
                    .map(|v| v.to_string())
                    .collect();
                if broken.is_empty() {
                    finished
                } else {
                    Finished {
                        output: failed(
                            "invalid_output",
                            format!(
                                "agent `{}` returned output that breaks its own schema: {}",
                                c.id,
                                broken.join("; ")
                            ),
                        ),
                        ..finished
                    }
                }
            }
            Err(_) => finished,
        };
        let duration = clock.elapsed();
        let mut reasons = triggered(c, &finished);
        // A body that failed for good is handed over like a trigger that held;
        // refused input goes back to the caller, a retryable failure is tried
        // again.
        if let Err(f) = &finished.output
            && !f.input_error
            && !f.retryable
            && reasons.is_empty()
        {
            reasons.push(format!("the run failed with `{}`", f.code));
        }
        let escalation = c
            .escalation
            .filter(|_| !reasons.is_empty())
            .map(|e| EscalationDecision {
                target_agent: e.target_agent,
                human_required: e.human_required,
                timeout_hours: e.timeout_hours,
                reasons,
            });
        let next_action = match &finished.output {
            _ if escalation.is_some() => NextAction::Escalate,
            Ok(_) => NextAction::Complete,
            Err(f) if f.retryable => NextAction::Retry,
            Err(_) => NextAction::Escalate,
        };
        // The hand-over, when it needs no person and its target is here and
        // not already in the chain.
        let chain: Vec<&'static str> = from
            .as_ref()
            .map_or_else(Vec::new, |f| f.chain.clone())
            .into_iter()
            .chain([c.id])
            .collect();
        // A hand-over that needs a person asks the runtime's approver first
        // (the CLI's --approve, or the application's); denied, it stays
        // pending, with the reason.
        let mut approval: Option<Approval> = None;
        let mut unanswered: Option<u32> = None;
        let escalated = match (
            &escalation,
            &escalation
                .as_ref()
                .and_then(|e| self.agents.get(e.target_agent)),
        ) {
            (Some(e), Some(target))
                if chain.len() < MAX_CHAIN && !chain.contains(&e.target_agent) =>
            {
                let input = fitted(&params, &target.input_schema);
                let go = if e.human_required {
                    let request = ApprovalRequest {
                        skill: format!("{}@{}", e.target_agent, target.contract().version),
                        job_id: job_id.clone(),
                        reason: format!(
                            "human_required: `{}` escalates to `{}`: {}",
                            c.id,
                            e.target_agent,
                            e.reasons.join("; ")
                        ),
                        params: input.clone(),
                        dry_run,
                        caller: caller.clone(),
                    };
                    // Nobody deciding within `timeout_hours` lets the hand-over
                    // go on by itself.
                    let wait = self.hour.saturating_mul(e.timeout_hours);
                    match tokio::time::timeout(wait, self.runtime.approver().approve(&request))
                        .await
                    {
                        Ok(decision) => {
                            let go = matches!(decision, Approval::Approved { .. });
                            approval = Some(decision);
                            go
                        }
                        Err(_) => {
                            unanswered = Some(e.timeout_hours);
                            true
                        }
                    }
                } else {
                    true
                };
                if go {
                    let link = Handover {
                        job_id: job_id.clone(),
                        agent: c.id,
                        reasons: e.reasons.clone(),
                        chain: chain.clone(),
                    };
                    self.run_linked(e.target_agent, input, caller.clone(), dry_run, Some(link))
                        .await
                        .ok()
                        .map(Box::new)
                } else {
                    None
                }
            }
            _ => None,
        };
        let (data, error) = match &finished.output {
            Ok(v) => (v.clone(), None),
            Err(f) => (Value::Null, Some(f.clone())),
        };
        let mut notes: Vec<RuleNote> = escalation
            .iter()
            .map(|e| RuleNote {
                rule_id: Cow::Borrowed("escalation"),
                severity: Severity::Warning,
                message: Cow::Owned(format!(
                    "escalate to `{}`{}: {}",
                    e.target_agent,
                    if e.human_required {
                        " (a human is required)"
                    } else {
                        ""
                    },
                    e.reasons.join("; ")
                )),
            })
            .collect();
        match &approval {
            Some(Approval::Approved { by }) => notes.push(RuleNote {
                rule_id: Cow::Borrowed("escalation"),
                severity: Severity::Info,
                message: Cow::Owned(format!("the hand-over was approved by {by}")),
            }),
            Some(Approval::Denied { reason }) => notes.push(RuleNote {
                rule_id: Cow::Borrowed("escalation"),
                severity: Severity::Warning,
                message: Cow::Owned(format!("the hand-over waits for a person: {reason}")),
            }),
            None => {}
        }
        if let Some(hours) = unanswered {
            notes.push(RuleNote {
                rule_id: Cow::Borrowed("escalation"),
                severity: Severity::Warning,
                message: Cow::Owned(format!(
                    "nobody decided on the hand-over within {hours} h (timeout_hours): it went on by itself"
                )),
            });
        }
        if let Some(t) = &escalated {
            notes.push(RuleNote {
                rule_id: Cow::Borrowed("escalation"),
                severity: Severity::Info,
                message: Cow::Owned(format!("escalated: `{}` ran as job {}", t.agent, t.job_id)),
            });
        }
        if let Some(f) = &from {
            notes.push(RuleNote {
                rule_id: Cow::Borrowed("escalation"),
                severity: Severity::Info,
                message: Cow::Owned(format!(
                    "escalated from `{}` (job {}): {}",
                    f.agent,
                    f.job_id,
                    f.reasons.join("; ")
                )),
            });
        }
        // R3: the run's state in the run store, and its three files.
        let completed_at = started_at + duration;
        let summary = RunSummary {
            contract: c,
            job_id: &job_id,
            trace_id: &trace_id,
            output: &finished.output,
            escalation: escalation.as_ref(),
            escalated_to: escalated.as_ref().map(|t| (&t.job_id, t.success)),
            escalated_from: from.as_ref().map(|f| &f.job_id),
            started_at,
            completed_at,
        };
        let mut state = graph_finished(&summary, lock(&graph).clone());
        let mut artifacts = Vec::new();
        if let Some(dir) = &self.artifacts {
            match write(dir, &summary, &state) {
                Ok(paths) => artifacts = paths.iter().map(|p| p.display().to_string()).collect(),
                Err(e) => {
                    tracing::warn!(agent = c.id, error = %e, "the run's R3 files were not written")
                }
            }
        }
        state.artifacts.extend(artifacts.iter().cloned());
        if let Err(e) = self.runtime.save_run(&state).await {
            tracing::warn!(agent = c.id, error = %e, "the run's state was not saved");
        }
        let record = RunRecord {
            job_id: job_id.clone(),
            trace_id: trace_id.clone(),
            parent_job_id: from.as_ref().map(|f| f.job_id.clone()),
            skill: Cow::Borrowed(c.id),
            version: Some(c.version),
            intent: None,
            scope: None,
            created_at: None,
            caller,
            // Records are kept (in memory, by default): a value past the
            // budget is kept as its size.
            params: match size {
                Some(n) if n <= limits.max_record_value_bytes => params,
                _ => truncated(size),
            },
            constraints: JobConstraints {
                dry_run,
                ..JobConstraints::default()
            },
            idempotency_key: None,
            replayed: false,
            started_at,
            completed_at,
            duration_us: u64::try_from(duration.as_micros()).unwrap_or(u64::MAX),
            status: if error.is_none() {
                RunStatus::Succeeded
            } else {
                RunStatus::Failed
            },
            steps: Default::default(),
            attempts: Default::default(),
            output: error.is_none().then(|| {
                kept_in_record(
                    Arc::new(data.clone()),
                    measure(&data, limits.max_depth),
                    limits.max_record_value_bytes,
                )
            }),
            error: error.as_ref().map(|f| ErrorRecord {
                code: f.code.clone(),
                message: f.message.clone(),
            }),
            notes,
            pipeline_steps: Vec::new(),
            progress: None,
        };
        self.runtime.record(record);
        Ok(AgentResult {
            success: error.is_none(),
            job_id,
            trace_id,
            agent: format!("{}@{}", c.id, c.version),
            data,
            error,
            metrics: AgentMetrics {
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                skill_calls: finished.calls,
                errors: finished.errors,
            },
            next_action,
            escalation,
            escalated,
            artifacts,
        })
    }
}

/// The fields of `params` the target's input schema declares (all of them
/// when it declares none): what a hand-over passes on.
fn fitted(params: &Value, schema: &Value) -> Value {
    match (params, schema.get("properties").and_then(Value::as_object)) {
        (Value::Object(p), Some(props)) => Value::Object(
            p.iter()
                .filter(|(k, _)| props.contains_key(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        _ => params.clone(),
    }
}

/// The triggers of `c` that hold for a run, each as text.
fn triggered(c: &AgentContract, run: &Finished) -> Vec<String> {
    let Some(esc) = &c.escalation else {
        return Vec::new();
    };
    let output = run.output.as_ref().ok();
    esc.triggers
        .iter()
        .filter_map(|t| match *t {
            Trigger::ErrorCountAbove { count } => {
                (run.errors > count).then(|| format!("error_count {} > {count}", run.errors))
            }
            Trigger::ConfidenceBelow { field, value } => {
                let seen = output?.pointer(field)?.as_f64()?;
                (seen < value).then(|| format!("confidence {seen} < {value} (at {field})"))
            }
            Trigger::HumanRequired { field } => (output?.pointer(field)? == &Value::Bool(true))
                .then(|| format!("human_required == true (at {field})")),
        })
        .collect()
}
