//! Running an agent by id: its input checked against its schema, its typed
//! run, then the escalation triggers; one run record, in the runtime's sink,
//! like any job's.

use std::borrow::Cow;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use skill_core::manifest::Severity;

use crate::agent::artifacts::{
    ArtifactStore, DirArtifacts, RunSummary, files, finished as graph_finished,
};
use crate::agent::escalate::{Enqueue, Escalator, HandedOver, Origin, note, triggered};
use crate::agent::kpi::{KpiRun, KpiValue};
use crate::agent::outcome::{AgentError, AgentMetrics, AgentResult};
use crate::agent::registry::AgentRegistry;
use crate::agent::run::EscalationDecision;
use crate::agent::run::{Finished, Started, failed, refused};
use crate::contract::watch::{Cancel, Watch};
use crate::exec::policy::limits::{kept_in_record, measure, truncated};
use crate::exec::runtime::Runtime;
use crate::model::caller::Caller;
use crate::model::data::Data;
use crate::model::envelope::{JobConstraints, JobEnvelope};
use crate::model::graph::{GraphState, GraphStatus};
use crate::model::handover::Handover;
use crate::model::record::{ErrorRecord, RuleNote, RunRecord, RunStatus};
use crate::model::result::NextAction;
use crate::sync::lock;

/// One run to make: its input, caller, dry run; the hand-over it comes
/// from; the job's and trace's ids when a job brings them; and the decision
/// a person made on the hand-over, as the record notes it.
struct Call {
    params: Value,
    caller: Caller,
    dry_run: bool,
    from: Option<Handover>,
    /// The envelope the run came in (its payload moved to `params`), for a
    /// job a queue delivered: its ids are the run's, and its state is the
    /// job's saved one.
    job: Option<JobEnvelope>,
    decided: Option<RuleNote>,
    /// Stops the run: its body is dropped at its next await, and no skill
    /// call starts after it.
    cancel: Option<Cancel>,
}

/// Runs the agents of a registry on a runtime.
#[derive(Clone)]
pub struct AgentRunner {
    runtime: Runtime,
    agents: Arc<AgentRegistry>,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    /// How long one of an escalation's `timeout_hours` lasts.
    hour: Duration,
    /// Where hand-overs go, when not run in process.
    queue: Option<Arc<dyn Enqueue>>,
}

impl AgentRunner {
    /// A runner for `agents`, running their skills on `runtime`.
    pub fn new(runtime: Runtime, agents: Arc<AgentRegistry>) -> AgentRunner {
        AgentRunner {
            runtime,
            agents,
            artifacts: None,
            hour: Duration::from_secs(3600),
            queue: None,
        }
    }

    /// Write each run's R3 files (`{agent_id}.{timestamp}.{job_id}.audit.md`,
    /// `.backlog.json`, `.graph.json`) into `dir`, created when missing.
    pub fn with_artifacts(self, dir: impl Into<PathBuf>) -> AgentRunner {
        self.with_artifact_store(Arc::new(DirArtifacts::new(dir)))
    }

    /// Keep each run's R3 files in `store` (on a fleet, the Redis
    /// backend's `artifact_store`, which every worker shares).
    pub fn with_artifact_store(mut self, store: Arc<dyn ArtifactStore>) -> AgentRunner {
        self.artifacts = Some(store);
        self
    }

    /// Where its runs' R3 files are kept, if anywhere.
    #[cfg(feature = "mcp")]
    pub(crate) fn artifact_store(&self) -> Option<&Arc<dyn ArtifactStore>> {
        self.artifacts.as_ref()
    }

    /// Make one of an escalation's `timeout_hours` last `hour` instead of an
    /// hour: for tests and demos of a hand-over nobody decides on.
    pub fn with_hour_length(mut self, hour: Duration) -> AgentRunner {
        self.hour = hour;
        self
    }

    /// Enqueue hand-overs on `queue` instead of running them in process:
    /// the target agent runs on a worker that serves agents
    /// ([`Worker::with_agents`](crate::queue::worker::Worker::with_agents)),
    /// and a hand-over that needs a person waits on the queue's approvals.
    pub fn with_queue(mut self, queue: Arc<dyn Enqueue>) -> AgentRunner {
        self.queue = Some(queue);
        self
    }

    fn escalator(&self) -> Escalator<'_> {
        Escalator {
            runtime: &self.runtime,
            agents: &self.agents,
            hour: self.hour,
            queue: self.queue.as_ref(),
        }
    }

    /// How long one of an escalation's `timeout_hours` lasts here.
    pub fn hour_length(&self) -> Duration {
        self.hour
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

    /// Run the agent job `job` names (in `skill`) as its envelope says: its
    /// ids, caller, dry run and, for a job another agent escalated to, the
    /// hand-over (`escalatedFrom`), which its record points back to. A
    /// hand-over that needs a person runs once `decision` approves it, or
    /// its deadline passed with nobody deciding; without a decision the
    /// runtime's approver is asked, with `timeout_hours` to answer. `watch`
    /// carries the decision, if one was made, and the job's [`Cancel`]: a
    /// cancelled run stops at its body's next await, starts no skill call
    /// after it, and ends `cancelled` (never handed over). What a worker that
    /// serves agents calls.
    pub async fn run_job(&self, job: JobEnvelope, watch: Watch) -> Result<AgentResult, AgentError> {
        let Watch {
            decision, cancel, ..
        } = watch;
        let mut job = job;
        let from = job.escalated_from.take().map(|b| *b);
        let mut decided = None;
        if let Some(f) = from.as_ref().filter(|f| f.human_required) {
            let (go, said) = self.escalator().decide(&job, f, decision).await;
            if !go {
                return Err(AgentError::NotApproved {
                    id: job.skill.into_owned(),
                    detail: said.message.into_owned(),
                });
            }
            decided = Some(said);
        }
        let id = job.skill.clone();
        let call = Call {
            params: std::mem::take(&mut job.params),
            caller: job.caller.clone(),
            dry_run: job.constraints.dry_run,
            from,
            job: Some(job),
            decided,
            cancel,
        };
        self.run_once(&id, call).await
    }

    fn run_linked<'a>(
        &'a self,
        id: &'a str,
        params: Value,
        caller: Caller,
        dry_run: bool,
        from: Option<Handover>,
    ) -> Pin<Box<dyn Future<Output = Result<AgentResult, AgentError>> + Send + 'a>> {
        let call = Call {
            params,
            caller,
            dry_run,
            from,
            job: None,
            decided: None,
            cancel: None,
        };
        Box::pin(self.run_once(id, call))
    }

    async fn run_once(&self, id: &str, call: Call) -> Result<AgentResult, AgentError> {
        // A run started from inside a handler would run skills with no
        // `calls(...)` checked (the runner is the one reached, not a
        // context): refused. Polled inside a handler here means it was
        // called from one; the runner's own runs are polled by a worker or
        // a front door.
        if crate::contract::invocation::in_handler() {
            return Err(AgentError::InsideHandler { id: id.to_owned() });
        }
        let Call {
            params,
            caller,
            dry_run,
            from,
            job: delivered,
            decided,
            cancel,
        } = call;
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
        let resumable = delivered.is_some();
        // The run's job: the envelope it came in, or one made for it.
        let mut job = delivered.unwrap_or_else(|| {
            let mut j = JobEnvelope::new(c.id, Value::Null).with_caller(caller.clone());
            j.constraints.dry_run = dry_run;
            j
        });
        job.skill = c.id.into();
        job.version = Some(c.version.into());
        job.params = params.clone();
        let (job_id, trace_id) = (job.job_id.clone(), job.trace_id.clone());
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
        let max_tokens = JobConstraints::default().max_tokens;
        // A job's run taken up again (its worker died, the queue delivered
        // it once more) resumes from its saved state: the calls it made are
        // replayed from there, not run again.
        let saved = match (resumable, self.runtime.run_state(job_id.as_str()).await) {
            (true, Ok(Some(mut s)))
                if s.job.reference() == job.reference() && s.status == GraphStatus::Running =>
            {
                s.retry_count += 1;
                Some(s)
            }
            _ => None,
        };
        let state = saved.unwrap_or_else(|| GraphState::new(job, params.clone(), max_tokens));
        let graph = Arc::new(Mutex::new(state));
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
                durable: resumable,
                cancel: cancel.clone(),
            };
            // Its skill calls' jobs are the children of the run's span.
            let span = crate::exec::trace::agent_span(c.id, &job_id, &trace_id);
            let body =
                tracing::Instrument::instrument((agent.entry.run)(&self.runtime, started), span);
            match &cancel {
                None => body.await,
                Some(stop) => tokio::select! {
                    finished = body => finished,
                    () = stop.cancelled() => Finished {
                        output: failed("cancelled", format!("agent `{}` was cancelled", c.id)),
                        errors: 0,
                        calls: 0,
                    },
                },
            }
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
        // Every output is checked against its schema too (the agent model's rule R2,
        // every input and output validated):
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
        // A cancelled run is over by its caller's will: it failed `cancelled`
        // (whatever its body made of a call refused as cancelled), and there
        // is nothing to hand over.
        let cancelled = cancel.as_ref().is_some_and(Cancel::is_cancelled);
        let finished = match finished.output {
            // A body that went on past a refused call and returned is still
            // a cancelled run.
            _ if cancelled => Finished {
                output: failed("cancelled", format!("agent `{}` was cancelled", c.id)),
                ..finished
            },
            _ => finished,
        };
        let (mut reasons, person) = if cancelled {
            (Vec::new(), false)
        } else {
            triggered(c, &finished)
        };
        // A body that failed for good is handed over like a trigger that held;
        // refused input goes back to the caller, a retryable failure is tried
        // again.
        if let Err(f) = &finished.output
            && !f.input_error
            && !f.retryable
            && !cancelled
            && reasons.is_empty()
        {
            reasons.push(format!("the run failed with `{}`", f.code));
        }
        let escalation = c
            .escalation
            .filter(|_| !reasons.is_empty())
            .map(|e| EscalationDecision {
                target_agent: e.target_agent,
                human_required: e.human_required || person,
                timeout_hours: e.timeout_hours,
                reasons,
            });
        let next_action = match &finished.output {
            _ if escalation.is_some() => NextAction::Escalate,
            Ok(_) => NextAction::Complete,
            Err(_) if cancelled => NextAction::Continue,
            Err(f) if f.retryable => NextAction::Retry,
            Err(_) => NextAction::Escalate,
        };
        let (data, error) = match &finished.output {
            Ok(v) => (v.clone(), None),
            Err(f) => (Value::Null, Some(f.clone())),
        };
        let mut notes: Vec<RuleNote> = escalation
            .iter()
            .map(|e| {
                let person = if e.human_required {
                    " (a human is required)"
                } else {
                    ""
                };
                note(
                    Severity::Warning,
                    format!(
                        "escalate to `{}`{person}: {}",
                        e.target_agent,
                        e.reasons.join("; ")
                    ),
                )
            })
            .collect();
        let handed = match &escalation {
            Some(e) => {
                let origin = Origin {
                    contract: c,
                    job_id: &job_id,
                    trace_id: &trace_id,
                    params: &params,
                    caller: &caller,
                    dry_run,
                    from: from.as_ref(),
                };
                self.escalator().hand_over(origin, e).await
            }
            None => HandedOver::default(),
        };
        notes.extend(handed.notes);
        let mut escalated = None;
        if let Some((target, input, link)) = handed.run {
            let run = self.run_linked(target, input, caller.clone(), dry_run, Some(link));
            if let Ok(t) = run.await {
                notes.push(note(
                    Severity::Info,
                    format!("escalated: `{}` ran as job {}", t.agent, t.job_id),
                ));
                escalated = Some(Box::new(t));
            }
        }
        notes.extend(decided);
        if let Some(f) = &from {
            notes.push(note(
                Severity::Info,
                format!(
                    "escalated from `{}` (job {}): {}",
                    f.agent,
                    f.job_id,
                    f.reasons.join("; ")
                ),
            ));
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
        if let Some(store) = &self.artifacts {
            for (name, text) in files(&summary, &state) {
                match store.put(&name, text).await {
                    Ok(at) => artifacts.push(at),
                    Err(e) => {
                        tracing::warn!(agent = c.id, file = name, error = %e, "an R3 file of the run was not kept")
                    }
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
            }
            .into(),
            constraints: JobConstraints {
                dry_run,
                ..JobConstraints::default()
            },
            idempotency_key: None,
            replayed: false,
            started_at,
            completed_at,
            duration_us: u64::try_from(duration.as_micros()).unwrap_or(u64::MAX),
            status: match &error {
                None => RunStatus::Succeeded,
                Some(_) if cancelled => RunStatus::Cancelled,
                Some(_) => RunStatus::Failed,
            },
            steps: Default::default(),
            attempts: Default::default(),
            output: error.is_none().then(|| {
                kept_in_record(
                    Data::from(data.clone()),
                    measure(&data, limits.max_depth),
                    limits.max_record_value_bytes,
                )
            }),
            error: error.as_ref().map(|f| ErrorRecord {
                code: f.code.clone(),
                message: f.message.clone(),
            }),
            notes: notes.clone(),
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
            escalation_job: handed.enqueued,
            notes,
            artifacts,
        })
    }
}
