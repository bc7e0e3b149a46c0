//! Escalation: which triggers of a run hold, and the hand-over they call
//! for. In process, the target runs at once (after the runtime's approver,
//! when a person is required, who has `timeout_hours` to decide). With a
//! queue (`AgentRunner::with_queue`), the target is enqueued as a job of
//! its own, carrying the hand-over (`escalatedFrom`), for a worker that
//! serves agents: a person's decision then waits on the queue's approvals.

use std::borrow::Cow;

use serde_json::Value;
use skill_core::manifest::Severity;

use std::sync::Arc;
use std::time::Duration;

use crate::agent::contract::{AgentContract, Trigger};
use crate::agent::registry::AgentRegistry;
use crate::agent::run::{EscalationDecision, Finished};
use crate::exec::policy::BoxFuture;
use crate::exec::policy::approval::{Approval, ApprovalRequest};
use crate::exec::runtime::Runtime;
use crate::model::approval::Decision;
use crate::model::caller::Caller;
use crate::model::envelope::JobEnvelope;
use crate::model::handover::Handover;
use crate::model::id::Id;
use crate::model::record::RuleNote;

/// Where a hand-over goes when it does not run in process: a queue of the
/// fleet (every [`Queue`](crate::queue::api::Queue) is one).
pub trait Enqueue: Send + Sync {
    /// Put `job` on the queue; its id, or why not.
    fn enqueue_job(&self, job: JobEnvelope) -> BoxFuture<'_, Result<Id, String>>;
}

/// What a hand-over did, and what is left to do.
#[derive(Default)]
pub(super) struct HandedOver {
    /// The target to run in process now, on this input, linked to the run.
    pub run: Option<(&'static str, Value, Handover)>,
    /// The target's job, when it was enqueued.
    pub enqueued: Option<Id>,
    /// What the run's record says of it.
    pub notes: Vec<RuleNote>,
}

/// What a hand-over needs of the runner.
pub(super) struct Escalator<'a> {
    pub runtime: &'a Runtime,
    pub agents: &'a AgentRegistry,
    /// How long one of `timeout_hours` lasts.
    pub hour: Duration,
    /// Where hand-overs go, when not run in process.
    pub queue: Option<&'a Arc<dyn Enqueue>>,
}

/// The run that calls for a hand-over.
pub(super) struct Origin<'a> {
    pub contract: &'static AgentContract,
    pub job_id: &'a Id,
    pub trace_id: &'a Id,
    pub params: &'a Value,
    pub caller: &'a Caller,
    pub dry_run: bool,
    /// The hand-over this run came from, if any.
    pub from: Option<&'a Handover>,
}

/// An escalation note of the run's record.
pub(super) fn note(severity: Severity, message: String) -> RuleNote {
    RuleNote {
        rule_id: Cow::Borrowed("escalation"),
        severity,
        message: Cow::Owned(message),
    }
}

impl Escalator<'_> {
    /// Hand the run over as `e` says: to its target, when the target is an
    /// agent here and not already in the chain, which stops at
    /// [`Handover::MAX_CHAIN`] agents: enqueued, or (after a person, when
    /// one is required) left for the runner to run in process.
    pub(super) async fn hand_over(&self, o: Origin<'_>, e: &EscalationDecision) -> HandedOver {
        let mut out = HandedOver::default();
        let c = o.contract;
        let mut chain: Vec<String> = o.from.map(|f| f.chain.clone()).unwrap_or_default();
        chain.push(c.id.to_owned());
        let Some(target) = self.agents.get(e.target_agent) else {
            return out;
        };
        if chain.len() >= Handover::MAX_CHAIN || chain.iter().any(|a| a == e.target_agent) {
            return out;
        }
        let input = fitted(o.params, &target.input_schema);
        let link = Handover {
            agent: c.id.to_owned(),
            job_id: o.job_id.clone(),
            reasons: e.reasons.clone(),
            chain,
            human_required: e.human_required,
            timeout_hours: e.timeout_hours,
        };
        if let Some(queue) = self.queue {
            let mut job = JobEnvelope::new(e.target_agent, input).with_caller(o.caller.clone());
            job.parent_job_id = Some(o.job_id.clone());
            job.trace_id = o.trace_id.clone();
            job.constraints.dry_run = o.dry_run;
            job.escalated_from = Some(Box::new(link));
            match queue.enqueue_job(job).await {
                Ok(id) => {
                    out.notes.push(note(
                        Severity::Info,
                        format!("escalated: `{}` enqueued as job {id}", e.target_agent),
                    ));
                    out.enqueued = Some(id);
                }
                Err(why) => out.notes.push(note(
                    Severity::Warning,
                    format!(
                        "the hand-over to `{}` could not be enqueued: {why}",
                        e.target_agent
                    ),
                )),
            }
            return out;
        }
        if e.human_required {
            let skill = format!("{}@{}", e.target_agent, target.contract().version);
            let request = request(
                &link,
                e.target_agent,
                skill,
                o.job_id,
                &input,
                o.dry_run,
                o.caller,
            );
            let (go, said) = self.ask(&request, e.timeout_hours).await;
            out.notes.push(said);
            if !go {
                return out;
            }
        }
        out.run = Some((e.target_agent, input, link));
        out
    }

    /// Whether the hand-over job `job` (from `f`, which needs a person) goes
    /// on, and the note that says why: as `decision` says (the queue's
    /// approvals: nobody deciding in time lets it go on), or without one as
    /// the runtime's approver says.
    pub(super) async fn decide(
        &self,
        job: &JobEnvelope,
        f: &Handover,
        decision: Option<Decision>,
    ) -> (bool, RuleNote) {
        match decision {
            Some(Decision::Approved { by, .. }) => (
                true,
                note(
                    Severity::Info,
                    format!("the hand-over was approved by {by}"),
                ),
            ),
            Some(Decision::Denied { by, reason, .. }) => (
                false,
                note(
                    Severity::Warning,
                    format!("{by} denied the hand-over: {reason}"),
                ),
            ),
            Some(Decision::Expired { .. }) => (
                true,
                unanswered(skill_core::agent::timeout_hours(f.timeout_hours)),
            ),
            None => {
                let request = request(
                    f,
                    &job.skill,
                    job.skill.to_string(),
                    &job.job_id,
                    &job.params,
                    job.constraints.dry_run,
                    &job.caller,
                );
                self.ask(&request, f.timeout_hours).await
            }
        }
    }

    /// Ask the runtime's approver about a hand-over, giving it `hours` (of
    /// the runner's hour length) to decide: whether it goes on, and the
    /// note that says why. Nobody deciding in time lets it go on by itself.
    pub(super) async fn ask(&self, request: &ApprovalRequest, hours: u32) -> (bool, RuleNote) {
        let hours = skill_core::agent::timeout_hours(hours);
        let wait = self.hour.saturating_mul(hours);
        match tokio::time::timeout(wait, self.runtime.approver().approve(request)).await {
            Ok(Approval::Approved { by }) => (
                true,
                note(
                    Severity::Info,
                    format!("the hand-over was approved by {by}"),
                ),
            ),
            Ok(Approval::Denied { reason }) => (
                false,
                note(
                    Severity::Warning,
                    format!("the hand-over waits for a person: {reason}"),
                ),
            ),
            Err(_) => (true, unanswered(hours)),
        }
    }
}

/// What the approver is asked about the hand-over `link` to agent `target`
/// (`skill`, its `id@version` as known), as job `job_id` on `params`.
fn request(
    link: &Handover,
    target: &str,
    skill: String,
    job_id: &Id,
    params: &Value,
    dry_run: bool,
    caller: &Caller,
) -> ApprovalRequest {
    ApprovalRequest {
        skill,
        job_id: job_id.clone(),
        reason: format!(
            "human_required: `{}` escalates to `{target}`: {}",
            link.agent,
            link.reasons.join("; ")
        ),
        params: params.clone(),
        dry_run,
        caller: caller.clone(),
    }
}

/// The note of a hand-over nobody decided on within `hours`.
pub(super) fn unanswered(hours: u32) -> RuleNote {
    note(
        Severity::Warning,
        format!(
            "nobody decided on the hand-over within {hours} h (timeout_hours): it went on by itself"
        ),
    )
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

/// The triggers of `c` that hold for a run, each as text, and whether one
/// of them is `human_required == true`: the run's own output asks for a
/// person, so the hand-over waits for one whatever the escalation's flag.
pub(super) fn triggered(c: &AgentContract, run: &Finished) -> (Vec<String>, bool) {
    let Some(esc) = &c.escalation else {
        return (Vec::new(), false);
    };
    let output = run.output.as_ref().ok();
    let person = esc.triggers.iter().any(|t| match *t {
        Trigger::HumanRequired { field } => {
            output.and_then(|o| o.pointer(field)) == Some(&Value::Bool(true))
        }
        _ => false,
    });
    let reasons = esc
        .triggers
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
        .collect();
    (reasons, person)
}
